"""``tracker scenario NAME``: run one of the six ball scenarios of Tan 2011 §4.1 by name.

A scenario is the config ``configs/NAME.yaml``; this command is ``tracker run`` on it,
with switches to compare against the ball-free and the constant-gain runs. ``--root free`` runs
the scenario's shipped free-root variant ``configs/free/NAME.yaml`` (a SAMCON track searched with
the ball flying, :mod:`tracker.sampling.tracks`) and compares it with the anchored scenario; a
scenario without one is the anchored config with ``root.mode: free`` (the plain servo).
"""

from __future__ import annotations

import argparse

SCENARIOS = ("soccer_light", "soccer_heavy", "volleyball_slow", "volleyball_fast", "basketball_slow", "basketball_fast")


def _dt(text: str) -> str:
    """Checked like ``tracker track --dt``, passed on as written (``sim.dt=1/30``)."""
    from tracker.commands._args import parse_dt

    parse_dt(text)
    return text.strip()


def free_config(name: str):
    """The shipped free-root variant of scenario ``name`` (``configs/free/NAME.yaml``: the scenario on a free
    root with the track its search found with the ball flying), or None when there is none."""
    from tracker.paths import CONFIG_DIR

    path = CONFIG_DIR / "free" / f"{name}.yaml"
    return path if name in SCENARIOS and path.is_file() else None


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scenario",
        help="run one of the six ball scenarios (soccer/volleyball/basketball) by name",
        description="Run a ball scenario (configs/NAME.yaml): " + ", ".join(SCENARIOS) + ". "
                    "Writes the same result folder as 'tracker run'.",
    )
    p.add_argument("name", help="scenario name: " + ", ".join(SCENARIOS))
    p.add_argument("--no-ball", action="store_true", help="run without the ball (tracking only)")
    p.add_argument("--no-schedule", action="store_true", help="keep the tracking gain k_t throughout")
    p.add_argument("--dt", default=None, type=_dt, help="override the time step, 1e-5 to 0.1 s, e.g. 1/30")
    p.add_argument("--root", default=None, choices=("anchored", "free", "kinematic"),
                   help="root mode (default: the config's, anchored). free: nothing holds the pelvis: the "
                        "scenario's shipped free-root variant runs (configs/free/NAME.yaml: its SAMCON track, "
                        "searched with the ball flying), and the report and metrics.json put the anchored "
                        "scenario's fall, ball outcome, peak deviation and recovery time beside its own")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config key (repeatable)")
    p.add_argument("--out", default=None, help="result folder (default: results/<name>-<timestamp>)")
    from tracker.commands.run import add_force_option

    add_force_option(p)
    p.add_argument("--video", action="store_true", help="also render video.mp4 (needs the 'video' extra)")
    p.add_argument("--gui", action="store_true", help="show the run in PyBullet's GUI window")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.commands import run as run_command
    from tracker.errors import ConfigError
    from tracker.paths import CONFIG_DIR

    path = CONFIG_DIR / f"{args.name}.yaml"
    try:
        known = args.name in SCENARIOS or path.is_file()
    except (OSError, ValueError):  # a name too long to be a file name, a NUL byte
        known = False
    if not known:
        shown = args.name if len(args.name) <= 60 else args.name[:57] + "..."
        raise ConfigError(f"unknown scenario {shown!r}; valid: {', '.join(SCENARIOS)}")
    overrides = list(args.overrides)
    if args.no_ball:
        overrides.append("balls=[]")
    if args.no_schedule:
        overrides.append("schedule.enabled=false")
    if args.dt:
        overrides.append(f"sim.dt={args.dt}")
    compare = "anchored" if args.root not in (None, "anchored") and not args.no_ball else None
    other = None
    free = free_config(args.name) if args.root == "free" else None
    if free is not None:  # the shipped free-root variant (its own track, gains, step), beside the anchored scenario
        other, path = (str(path) if compare else None), free
    elif args.root:
        if args.root == "free":
            import sys

            print(f"note: no free-root track is shipped for {args.name} (configs/free/{args.name}.yaml): running "
                  "the anchored config with root.mode: free, the plain servo", file=sys.stderr)
        overrides.append(f"root.mode={args.root}")
    ns = argparse.Namespace(config=str(path), overrides=overrides, out=args.out, video=args.video, gui=args.gui,
                            json=args.json, keys=False, force_out=args.force_out, compare_root=compare,
                            compare_config=other)
    return run_command.run(ns)
