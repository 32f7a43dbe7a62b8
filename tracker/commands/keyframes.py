"""``tracker keyframes FILE.yaml``: interpolate keyframes physically with two cross-faded servos (Tan 2011 §4.2)."""

from __future__ import annotations

import argparse
import json
import math
import sys

from tracker.commands._args import bounded_float
from tracker.commands.track import parse_dt


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "keyframes",
        help="interpolate a keyframe file physically (two SPD servos with cross-faded gains) into a result folder",
        description="Simulate a keyframe file (format: tracker/keyframes/file.py, examples in data/keyframes/) "
                    "with two servos per DOF, toward the previous and the next key, whose gains cross-fade "
                    "(Tan, Liu & Turk 2011 §4.2): k_i = (1-a)^p k_p, k_i+1 = (a^p + 0.005) k_p, k_p = 130 m_sub, "
                    "k_d = 10 k_p dt. Writes recording.npz, gains/keys/joints plots, report.md and metrics.json "
                    "(pose error at each key). Exit status: 0 ok, 2 bad file or option, 3 diverged (files written).",
    )
    p.add_argument("file", help="keyframe file (YAML)")
    p.add_argument("--profile", choices=("poly", "linear"), default=None,
                   help="gain profile (default: the file's, else poly)")
    # The lower ends of --power and --kp-per-kg (> 0) are checked by run(), with its own message.
    p.add_argument("--power", type=bounded_float(-math.inf, 100, "power"), default=None, metavar="P",
                   help="exponent p of the poly profile (> 0 and <= 100; default: the file's, else 2)")
    p.add_argument("--dt", type=parse_dt, default=1.0 / 60.0, help="time step, 1e-5 to 0.1 s, e.g. 1/30 (default 1/60)")
    p.add_argument("--controller", choices=("spd", "pd", "timed"), default="spd",
                   help="two stable-PD servos (default), two explicit PD servos, or timed PD (Allen et al. "
                        "2007: gains from the inertia and the time left to each key, which is met on time)")
    p.add_argument("--kp-per-kg", type=bounded_float(-math.inf, 1e5, "k_p per kg"), default=None, metavar="K",
                   help="k_p per kg of supported mass (> 0 and <= 100000; default: the file's, else 130)")
    p.add_argument("--out", default=None, help="result folder (default: results/<file>-<timestamp>)")
    from tracker.commands.run import add_force_option

    add_force_option(p)
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(func=run)


def _out_dir(stem: str):
    import datetime as _dt
    from pathlib import Path

    base = Path("results") / f"{stem}-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tracker.errors import ConfigError
    from tracker.keyframes.file import load_keyframes
    from tracker.keyframes.results import write_results
    from tracker.keyframes.run import KeyframeOptions, build_simulation

    if args.power is not None and not args.power > 0:
        raise ConfigError(f"--power must be positive, got {args.power:g}")
    if args.kp_per_kg is not None and not args.kp_per_kg > 0:
        raise ConfigError(f"--kp-per-kg must be positive, got {args.kp_per_kg:g}")
    from tracker.experiments.runner import interrupt_on_sigterm, run_simulation
    from tracker.outdir import check_out, check_path, prepare_out

    check_path(args.file, "the keyframe file")
    if args.out:
        check_out(args.out, args.force_out)  # refused before anything runs
    kf = load_keyframes(args.file)
    opts = KeyframeOptions(controller=args.controller, dt=args.dt, profile=args.profile, power=args.power,
                           kp_per_kg=args.kp_per_kg).resolved(kf)
    out = prepare_out(args.out, args.force_out) if args.out else _out_dir(Path(args.file).stem)
    sim, track, _ = build_simulation(kf, opts)
    try:
        with interrupt_on_sigterm():  # SIGINT/SIGTERM: keep the steps that ran, exit 130
            rec = run_simulation(sim, track.duration, progress=not args.json and sys.stderr.isatty(),
                                 keep_interrupted=True)
    finally:
        sim.close()
    m, files = write_results(out, rec, track, opts, kf.model)
    if rec.status == "interrupted":
        from tracker.atomic import write_json_atomic

        m.update(interrupted=True, status="interrupted", message=rec.message)
        write_json_atomic(out / "metrics.json", m)
        print(f"{rec.message}; wrote what ran to {out}/", file=sys.stderr)
        return 130  # as tracker.cli for a KeyboardInterrupt
    if args.json:
        json.dump({"folder": str(out), **m}, sys.stdout, indent=2, default=str)
        print()
    else:
        print(summary_text(m, track, out))
    return 3 if rec.diverged else 0


def summary_text(m: dict, track, out) -> str:
    import numpy as np

    timed = m["controller"] == "timed"
    lines = [f"{track.source}: {len(track.times)} keys, {_servo_label(m['controller'], track)}, "
             f"dt = {m['dt']:.5g} s, {m['steps']} steps"]
    if m["keys_reached"]:
        cm = m["key_root_position_error_max_m"] * 100
        lines.append(f"  at the keys: root within {cm:.2f} cm and "
                     f"{np.degrees(m['key_root_orientation_error_max_rad']):.1f} deg, joints within "
                     f"{np.degrees(m['key_joint_error_max_rad']):.2f} deg (mean "
                     f"{np.degrees(m['key_joint_error_mean_rad']):.2f})"
                     + ("" if timed else f"; mean gain between keys {m['compliance']:.3f} k_p"))
    sm = m.get("secondary_motion")
    if sm:
        lines.append(f"  unkeyed joints: largest deflection {np.degrees(sm['peak_rad']):.2f} deg (spline "
                     f"{np.degrees(sm['spline_peak_rad']):.2f}), {np.degrees(sm['end_rad']):.3f} deg at the end")
    if m["status"] != "ok":
        lines.append(f"  DIVERGED: {m['message']} (the result folder holds what ran before)")
    lines.append(f"wrote {out}/")
    return "\n".join(lines)


def play(args: argparse.Namespace) -> int:
    """``tracker play FILE.yaml`` for a keyframe file: the two-servo run live, the spline as the ghost."""
    from pathlib import Path

    from tracker.commands._window import presses_by_frame
    from tracker.errors import ConfigError
    from tracker.keyframes.file import load_keyframes
    from tracker.keyframes.run import KeyframeOptions, build_simulation
    from tracker.quiet import quiet_stdio
    from tracker.viewer.keyframes import KeyframeSession
    from tracker.viewer.playback import LivePlayer
    from tracker.viewer.stage import framing
    from tracker.viewer.window import open_window_world

    if args.overrides or args.model:
        raise ConfigError("--set and --model do not apply to a keyframe file (edit the file, or use "
                          "'tracker keyframes' for its options)")
    kf = load_keyframes(args.source)
    opts = KeyframeOptions(dt=args.dt or 1.0 / 60.0, controller=args.servo).resolved(kf)
    with quiet_stdio():
        window = open_window_world(opts.dt)
        try:
            sim, track, _ = build_simulation(kf, opts)
            try:
                session = KeyframeSession(sim, track)
                player = LivePlayer(session, ghost=args.ghost, speed=args.speed, world=window, shadows=args.shadows,
                                    title=f"tracker play {Path(args.source).name}  (keyframes, {sim.model.name}, "
                                          f"{_servo_label(opts.controller, track)}, dt {opts.dt:.4g} s; "
                                          f"ghost: {'the next key' if opts.controller == 'timed' else 'cubic spline'})",
                                    **framing(sim.model))
                stats = player.run(args.frames, presses_by_frame(args.press), args.screenshot, args.grab_screen)
            finally:
                sim.close()
        finally:
            window.close()
    if args.frames is not None:
        print(f"played {stats.frames} frames, {stats.steps} steps ({stats.steps * stats.dt:.2f} s of keyframes) "
              f"in {stats.wall_s:.2f} s: {stats.realtime_factor:.1f}x real time in the window "
              f"(stepping alone {stats.step_realtime_factor:.1f}x)")
        if args.screenshot and not stats.closed:
            print(f"wrote {args.screenshot}")
    return 0


def _servo_label(controller: str, track) -> str:
    if controller == "timed":
        return "timed PD (Allen et al. 2007)"
    return f"two {controller} servos, {track.profile.label()}"
