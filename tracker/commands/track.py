"""``tracker track CLIP``: track a clip with SPD (or a baseline) and print metrics."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tracker.commands._args import MAX_DURATION, bounded_float, clip_or_file_time, parse_dt

__all__ = ["add_parser", "parse_dt", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "track",
        help="track a BVH clip or saved reference with SPD/PD servos and print metrics",
        description="Retarget a BVH clip (or load a saved reference) and track it in PyBullet.",
    )
    p.add_argument("clip", help="BVH file or reference .npz (from 'tracker retarget')")
    p.add_argument("--model", default="humanoid", help="character model (default: humanoid)")
    p.add_argument("--controller", default="spd", choices=("spd", "pd", "native", "analytic_pd", "timed_pd", "vt"),
                   help="servo (default: spd); analytic_pd: Weinstein et al. 2008's analytic PD; "
                        "timed_pd: Allen et al. 2007's timed PD; vt: virtual trajectory (feed-forward plus soft SPD)")
    p.add_argument("--f0", default=None, metavar="MODE",
                   help="vt's feed-forward: id (default), peek (one saved and restored engine step) or none")
    p.add_argument("--w0", default=None, metavar="MODE",
                   help="vt's desired velocity: step ((q(t+dt) - q(t)) / dt, default) or sample (the reference's)")
    p.add_argument("--dt", type=parse_dt, default=1 / 60,
                   help="physics/control time step, 1e-5 to 0.1 s, e.g. 1/60 (default)")
    p.add_argument("--root", default="anchored", choices=("anchored", "kinematic", "free"),
                   help="root handling (default: anchored)")
    p.add_argument("--target-velocity", default="ref", choices=("ref", "zero"),
                   help="servo toward the reference velocity or zero (default: ref)")
    p.add_argument("--gain-scale", type=bounded_float(0, 1000, "gain scale", lo_open=True), default=1.0,
                   help="multiply all joint gains (> 0 and <= 1000; default: 1)")
    p.add_argument("--prediction", default=None,
                   help="spd: semi_implicit (default) | explicit; analytic_pd: doubled (default) | single")
    p.add_argument("--partition", action="store_true",
                   help="analytic_pd with --root free: the free-root partition (approximate under contact)")
    p.add_argument("--lookahead", type=bounded_float(0, 10, "lookahead", "s", lo_open=True), default=None,
                   help="timed_pd: how far ahead on the clip the key is sampled, s (> 0 and <= 10; default 0.02)")
    p.add_argument("--inertia", default=None, choices=("full", "composite", "single"),
                   help="timed_pd: the inertia its gains are computed from (default full)")
    p.add_argument("--duration", type=bounded_float(0, MAX_DURATION, "duration", "s", lo_open=True), default=None,
                   help="seconds to simulate (> 0 and <= 3600, within the clip; default: to the clip's end)")
    p.add_argument("--start", type=clip_or_file_time, default=("clip", 0.0), metavar="TIME",
                   help="where to start (before the clip's end): clip time in s (default 0), or file:SECONDS / "
                        "file_frame:N in the clip file (before a dropped T-pose is refused); at most 86400 s or "
                        "frame 2^31")
    p.add_argument("--out", default=None, help="write metrics.json and recording.npz to this folder")
    from tracker.commands.run import add_force_option

    add_force_option(p)
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(func=run)


def _start(start: tuple[str, float], ref, name: str) -> float:
    """``--start`` in clip time, through the reference's own file-to-clip map."""
    from tracker.errors import ConfigError

    base, value = start
    if base == "clip":
        return float(value)
    shown = f"{base}:{value:g}"
    timing = ref.timing
    if timing is None:
        raise ConfigError(f"--start {shown}: {name} does not record its source file's frames; give clip time")
    try:
        return timing.resolve(base, value, name, "")
    except ValueError as exc:
        raise ConfigError(f"--start {shown}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from tracker.analysis.metrics import tracking_metrics
    from tracker.character.model import load_model
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation

    from tracker.errors import ConfigError

    options: list[tuple[str, object]] = []
    if args.prediction is not None:
        if args.controller not in ("spd", "analytic_pd"):
            raise ConfigError(f"--prediction applies to spd and analytic_pd, not {args.controller}")
        options.append(("prediction", args.prediction))
    if args.partition:
        if args.controller != "analytic_pd":
            raise ConfigError(f"--partition applies to analytic_pd, not {args.controller}")
        options.append(("partition", True))
    for flag, value in (("lookahead", args.lookahead), ("inertia", args.inertia)):
        if value is not None:
            if args.controller != "timed_pd":
                raise ConfigError(f"--{flag} applies to timed_pd, not {args.controller}")
            options.append((flag, value))
    for flag in ("f0", "w0"):
        value = getattr(args, flag)
        if value is not None:
            if args.controller != "vt":
                raise ConfigError(f"--{flag} is an option of controller vt, not {args.controller}")
            options.append((flag, value))
    from tracker.retarget.fit import resolve_model
    from tracker.outdir import check_out, check_path

    check_path(args.clip, "the clip")
    if args.out:
        check_out(args.out, args.force_out)  # refused before anything runs
    spec = resolve_model(args.model, args.clip)  # 'fit': the humanoid fitted to the clip (cached)
    model = load_model(spec)
    ref = load_clip_reference(args.clip, model=spec)
    name = Path(args.clip).name
    args.start = _start(args.start, ref, name)
    if args.start + args.dt > ref.duration + 1e-9:
        raise ConfigError(f"--start {args.start:g}: the clip {name} ends at {ref.duration:.3f} s; start at least "
                          f"one step (dt = {args.dt:.4g} s) before that")
    if args.duration is not None:
        if args.start + args.duration > ref.duration + 1e-6:
            raise ConfigError(f"--duration {args.duration:g} from --start {args.start:g} runs past the end of "
                              f"{name} ({ref.duration:.3f} s); at most {ref.duration - args.start:.3f} s")
        if round(args.duration / args.dt) < 1:
            raise ConfigError(f"--duration {args.duration:g} is shorter than one step (dt = {args.dt:.4g} s)")
    opt = SimOptions(controller=args.controller, dt=args.dt, root=args.root,
                     target_velocity=args.target_velocity, gain_scale=args.gain_scale, start=args.start,
                     controller_options=tuple(options))
    from tracker.experiments.runner import interrupt_on_sigterm, run_simulation

    if args.out:
        from tracker.outdir import prepare_out

        prepare_out(args.out, args.force_out)  # a folder that cannot be made fails before the simulation
    sim = Simulation(model, ref, opt)
    try:
        with interrupt_on_sigterm():  # SIGINT/SIGTERM: keep the steps that ran (written below), exit 130
            rec = run_simulation(sim, args.duration, progress=args.progress and not args.json, keep_interrupted=True)
    finally:
        sim.close()
    interrupted = rec.status == "interrupted"
    metrics = tracking_metrics(rec, model.kinematics(), end_effectors=dict(model.end_effectors),
                               feet=model.feet)
    wall = rec.meta["wall_s"]
    metrics.update(wall_s=wall, realtime_factor=(rec.n_steps * rec.dt / wall) if wall > 0 else float("inf"),
                   message=rec.message, controller=args.controller, dt=args.dt, root=args.root)
    fell = rec.meta.get("fell_at")
    metrics["fell_at_s"] = fell
    if interrupted:
        metrics.update(interrupted=True, status="interrupted")
    if args.out:
        from tracker.atomic import write_json_atomic

        out = Path(args.out)
        rec.save(out / "recording.npz")
        write_json_atomic(out / "metrics.json", metrics)
    if args.json:
        json.dump({k: v for k, v in metrics.items() if k not in ("joint_error_by_joint",)}, sys.stdout, indent=2)
        print()
    else:
        print(f"{name}: {args.controller}, dt = {args.dt:.5f} s, root {args.root}, {rec.n_steps} steps "
              f"({rec.n_steps * rec.dt:.2f} s simulated from clip time {args.start:.3f} s in {wall:.2f} s, {metrics['realtime_factor']:.1f}x real time)")
        print(f"  joint error  mean {metrics['joint_error_mean_rad']:.4f} rad  max {metrics['joint_error_max_rad']:.4f} rad")
        print(f"  root error   mean {metrics['root_error_mean_m'] * 100:.2f} cm;  end effectors "
              f"{metrics.get('ee_error_mean_m', float('nan')) * 100:.2f} cm")
        print(f"  torque saturation {metrics.get('torque_saturation', 0.0) * 100:.1f}%  "
              f"effort {metrics.get('effort_mean_nm', 0.0):.1f} N·m")
        if rec.meta.get("analytic_pd_clipped_steps"):
            print(f"  analytic_pd: torque limits clipped {rec.meta['analytic_pd_clipped_steps']} of "
                  f"{rec.meta['analytic_pd_steps']} steps (those steps miss the exact prediction)")
        if rec.diverged:
            print(f"  DIVERGED: {rec.message}")
        if fell is not None:
            print(f"  FELL at t = {fell:.3f} s clip time ({rec.meta.get('fall_reason') or 'the free root fell'})")
        if args.out:
            print(f"wrote {args.out}/metrics.json and recording.npz")
    from tracker.cli import EXIT_DIVERGED, EXIT_FELL, EXIT_OK

    if interrupted:
        print(rec.message + (f"; wrote what ran to {args.out}/" if args.out else ""), file=sys.stderr)
        return 130  # as tracker.cli for a KeyboardInterrupt
    if rec.diverged:
        return EXIT_DIVERGED
    return EXIT_FELL if fell is not None else EXIT_OK
