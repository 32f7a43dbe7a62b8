"""``tracker run CONFIG.yaml``: run one experiment config and write its result folder."""

from __future__ import annotations

import argparse
import json
import shlex
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run an experiment config (YAML) and write a result folder with metrics, plots and a report",
        description="Run one experiment config: clip, model, controller and gains, gain schedule, balls. Writes "
                    "config.yaml (resolved), metrics.json, recording.npz, plots, report.md and optionally video.mp4. "
                    "Exit status: 0 ok, 2 bad config or input, 3 the simulation diverged, 4 a free-root character fell "
                    "(files still written for 3 and 4).",
    )
    p.add_argument("config", nargs="?", help="experiment config (YAML)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. --set sim.dt=1/30 --set balls.0.speed=8 (repeatable)")
    p.add_argument("--out", default=None, help="result folder (default: results/<name>-<timestamp>)")
    add_force_option(p)
    p.add_argument("--video", action="store_true", help="also render video.mp4 (needs the 'video' extra)")
    p.add_argument("--gui", action="store_true", help="show the run in PyBullet's GUI window")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON instead of the summary")
    p.add_argument("--keys", action="store_true", help="list every config key with its default and unit, and exit")
    p.set_defaults(func=run)


def add_force_option(p: argparse.ArgumentParser, flag: str = "--force") -> None:
    """``--force``: write into an --out folder that holds another run, removing that run's files first."""
    p.add_argument(flag, dest="force_out", action="store_true",
                   help="--out may hold another run: remove that run's files first (only the files tracker writes "
                        "there; without it such a folder is refused)")


def run(args: argparse.Namespace) -> int:
    from tracker.errors import ConfigError
    from tracker.experiments.config import keys_table, load_config

    if args.keys:
        print(keys_table())
        return 0
    if not args.config:
        raise ConfigError("tracker run: give a config file (see configs/), or --keys to list the config keys")
    cfg = load_config(args.config, args.overrides)
    if args.gui:
        check_display()

    from tracker.experiments.runner import default_out_dir, run_experiment
    from tracker.outdir import check_out

    force = getattr(args, "force_out", False)
    out = check_out(args.out, force) if args.out else default_out_dir(cfg)  # refused before anything runs
    cmd = "tracker run " + " ".join(shlex.quote(a) for a in [args.config] + [f"--set={o}" for o in args.overrides])
    header = f"Resolved config of: {cmd}\nRun it again with: tracker run <this file>"
    other = getattr(args, "compare_config", None)
    other = load_config(other, args.overrides) if other is not None else None  # the same --set on both
    result = run_experiment(cfg, out, video=True if args.video else None, gui=args.gui,
                            progress=not args.json and sys.stderr.isatty() or _force_progress(), header=header,
                            clear=force, keep_interrupted=True, compare_root=getattr(args, "compare_root", None),
                            compare_config=other)
    for problem in result.problems:  # the run's files are written; an output that is not says so
        print(f"warning: {problem}", file=sys.stderr)
    m = result.metrics
    status = exit_status(result)
    if result.interrupted:
        print(f"{m.get('message') or 'interrupted'}; wrote what ran to {result.folder}/ "
              f"({', '.join(sorted(result.files.values()))})", file=sys.stderr)
    if args.json:
        from tracker.analysis.impact import headline

        top = {"folder": str(result.folder), "exit_status": status}
        if cfg.balls:
            top.update(headline(m))
        json.dump({**top, **{k: v for k, v in m.items() if not k.endswith("_by_joint")
                             and not k.endswith("_by_link")}},
                  sys.stdout, indent=2, default=str)
        print()
    else:
        print(summary_text(result))
    return status


def exit_status(result) -> int:
    """130 interrupted, 3 diverged, 4 a free root fell, else 0 (:mod:`tracker.cli`)."""
    from tracker.cli import EXIT_DIVERGED, EXIT_FELL, EXIT_OK

    if getattr(result, "interrupted", False):
        return 130  # SIGINT/SIGTERM, as tracker.cli for a KeyboardInterrupt
    if result.diverged:
        return EXIT_DIVERGED
    if result.recording.meta.get("fell_at") is not None:
        return EXIT_FELL
    return EXIT_OK


def check_display() -> None:
    """PyBullet's GUI ends the whole process (silently) when there is no display; say so first."""
    import os

    from tracker.errors import TrackerError

    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise TrackerError("--gui needs a display and DISPLAY is not set; run without --gui (the result folder "
                           "and --video work headless), or under xvfb-run")


def _force_progress() -> bool:
    import os

    return os.environ.get("TRACKER_PROGRESS") == "1"


def summary_text(result) -> str:
    """A few lines: what ran, tracking error, impact response, where the files are."""
    from tracker.analysis.report import ground_text

    cfg, m, t = result.config, result.metrics, result.timing
    rec = result.recording
    sim_time = rec.n_steps * rec.dt
    lines = [f"{cfg.name}: {cfg.controller.name}, dt = {cfg.sim.dt:.5g} s, root {cfg.root.mode}, "
             f"{rec.n_steps} steps ({sim_time:.2f} s simulated from clip time {cfg.clip.start:.3f} s in "
             f"{t.get('sim_s', 0):.2f} s)"]
    lines.append(f"  joint error  mean {m.get('joint_error_mean_rad', float('nan')):.4f} rad  "
                 f"max {m.get('joint_error_max_rad', float('nan')):.4f} rad;  end effectors "
                 f"{m.get('ee_error_mean_m', float('nan')) * 100:.2f} cm")
    imp = m.get("impact")
    if imp:
        peak = imp.get("peak_deviation_rad")
        rt = imp.get("time_to_recover_s")
        lines.append(f"  impact       {imp.get('impacts', 0)} contact events; peak deviation "
                     f"{'n/a' if peak is None else f'{peak:.4f} rad'}; "
                     f"{'recovered after ' + f'{rt:.2f} s' if rt is not None else 'not recovered'}")
    for k, ball in enumerate((imp or {}).get("balls", [])):
        planned = cfg.balls[k].impact_time if k < len(cfg.balls) else None
        first = ball.get("first_contact_time")
        given = cfg.file_times.get(f"balls.{k}.impact_time")
        plan = "" if planned is None else f" (planned {planned:.3f} s" + (f", given as {given['given']})" if given else ")")
        where = (f"first contact {ball.get('first_contact_link')} at clip time {first:.3f} s{plan}"
                 if first is not None else "no contact")
        fate = ball.get("outcome") or ("caught" if ball.get("caught") else "")
        fate += f"; at the end: {ground_text(ball)}"
        exit_speed = ball.get("exit_speed")
        lines.append(f"  ball {k}       {cfg.balls[k].preset if k < len(cfg.balls) else ''}: {where}; "
                     + (f"exit {exit_speed:.2f} m/s; " if exit_speed is not None else "") + fate)
    if result.recording.diverged:
        lines.append(f"  DIVERGED: {rec.message} (the result folder holds what ran before)")
    fell = rec.meta.get("fell_at")
    if fell is not None:
        lines.append(f"  FELL at t = {fell:.3f} s clip time ({rec.meta.get('fall_reason') or 'the free root fell'})")
    if result.baseline is not None and result.baseline.diverged:
        lines.append(f"  the ball-free baseline DIVERGED: {result.baseline.message}")
    lines.append(f"wrote {result.folder}/ ({', '.join(sorted(result.files.values()))})")
    return "\n".join(lines)
