"""``tracker push CONFIG|stand``: push a free-standing character and see whether it stays up.

``stand`` (or a pose file, ``kind: pose``) is tracked by SPD on a free root with balance
feedback (GAMES105 lecture 10; ``--strategy none`` turns it off); an experiment config is
run as it says (its ``root.mode`` must be ``free``; ``controller.balance`` sets the
feedback). A fall is reported (``FELL at t = ...``, ``fell`` in the JSON, ``push.json`` written)
and exits 4, as every command does when a free-root character fell. ``--sweep FILE`` runs a grid
of pushes instead and writes the survival table and plot into ``--out``; there falls are the
data, and the exit status is 0.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from tracker.commands._args import MAX_DURATION, bounded_float


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "push",
        help="push a free-standing character (balance feedback) and report whether it fell",
        description="Track a standing pose (or an experiment config with a free root) with SPD and CoM balance "
                    "feedback, push it, and report whether it fell, when, and how far the CoM moved. A fall "
                    "exits 4 (a --sweep exits 0: its falls are its data).",
    )
    p.add_argument("config", metavar="CONFIG|stand", help="'stand' (the authored stance), a pose file or an "
                                                          "experiment config with root.mode: free")
    # The lower ends of --force, --duration, --start and --time are checked by run(), with its own message.
    p.add_argument("--force", type=bounded_float(-math.inf, 1e5, "force", "N"), default=0.0,
                   help="push size, N (>= 0 and <= 100000; default 0: just stand)")
    p.add_argument("--duration", type=bounded_float(-math.inf, MAX_DURATION, "duration", "s"), default=0.2,
                   help="push length, s (> 0 and <= 3600; default 0.2)")
    p.add_argument("--direction", type=_direction, default=0.0,
                   help="where the push comes from: front, left, back, right, or degrees about +Z from the "
                        "facing direction (0 front, 90 left, 180 back, 270 right; -360 to 360; default front)")
    p.add_argument("--link", default="chest", help="pushed link (default chest)")
    p.add_argument("--start", type=bounded_float(-math.inf, MAX_DURATION, "start", "s"), default=1.0,
                   help="push start, s after the run starts (>= 0 and <= 3600; default 1)")
    p.add_argument("--time", type=bounded_float(-math.inf, MAX_DURATION, "time", "s"), default=4.0,
                   help="simulated seconds (> 0 and <= 3600; default 4)")
    # --dt stays text (a config gets it as sim.dt=1/30); _number reads it with the shared parse_dt.
    p.add_argument("--dt", default=None, help="time step, 1e-5 to 0.1 s, e.g. 1/30 (default 1/60, or the config's)")
    p.add_argument("--strategy", default=None,
                   help="balance strategy: jacobian (default), ankle, hip, none (no feedback), or step: jacobian "
                        "and a recovery step when standing still would fall (a standing pose only; each decision "
                        "simulates the candidate steps ahead, so a run takes seconds)")
    p.add_argument("--kp", type=bounded_float(0, 1e7, "kp", "N/m"), default=None,
                   help="balance kp, N/m (>= 0 and <= 1e7; default 4000)")
    p.add_argument("--kd", type=bounded_float(0, 1e7, "kd", "N·s/m"), default=None,
                   help="balance kd, N·s/m (>= 0 and <= 1e7; default 400)")
    p.add_argument("--target", default=None, help="balance target: support_center (default) or initial")
    p.add_argument("--sweep", default=None, metavar="FILE", help="run the push grid of FILE (configs/sweeps/push.yaml)")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument("--out", default=None, help="folder for push.json and com.png (a sweep: its tables and plot)")
    from tracker.commands.run import add_force_option

    add_force_option(p, "--overwrite")  # --force is the push's size
    p.set_defaults(func=run)


def _direction(text: str) -> float:
    """``--direction``: a side's name (``front``, ``left``, ``back``, ``right``) or degrees (-360 to 360)."""
    from tracker.sim.push import DIRECTIONS

    name = text.strip().lower()
    if name in DIRECTIONS:
        return DIRECTIONS[name]
    try:
        return bounded_float(-360, 360, "direction", "deg")(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or one of: {', '.join(DIRECTIONS)})") from None


def _number(text: str | None, what: str, default: float) -> float:
    """A time step flag's text as :func:`tracker.commands._args.parse_dt` reads it (1e-5 to 0.1 s)."""
    from tracker.commands._args import parse_dt
    from tracker.errors import ConfigError

    if text is None:
        return default
    try:
        return parse_dt(text)
    except argparse.ArgumentTypeError as exc:
        raise ConfigError(f"--{what}: {exc}") from None


def _balance(args: argparse.Namespace, base=None):
    """The balance options of the command line (over ``base``), or None for ``--strategy none``."""
    import dataclasses

    from tracker.control.balance import BalanceOptions

    from tracker.control.balance import STRATEGIES
    from tracker.errors import ConfigError

    if args.strategy is not None and args.strategy not in STRATEGIES + ("none", "step"):
        raise ConfigError(f"--strategy: {args.strategy!r} is not one of: {', '.join(STRATEGIES + ('none', 'step'))}")
    if args.strategy == "none":
        return None
    opt = base if base is not None else BalanceOptions()
    strategy = args.strategy
    if strategy == "step":  # the Jacobian feedback and recovery steps (tracker.control.stepping)
        from tracker.control.stepping import StepOptions

        strategy, opt = "jacobian", dataclasses.replace(opt, step=StepOptions())
    changes = {k: v for k, v in (("strategy", strategy), ("kp", args.kp), ("kd", args.kd),
                                 ("target", args.target)) if v is not None}
    return dataclasses.replace(opt, enabled=True, **changes)


def _simulation(args: argparse.Namespace):
    """The simulation to push: the stance, a pose file or an experiment config."""
    from tracker.errors import ConfigError
    from tracker.sim.stance import is_pose_file, resolve_pose, stand_simulation

    from tracker.experiments.config import MAX_CONFIG_BYTES
    from tracker.readfile import check_regular_file

    spec = args.config
    path = resolve_pose(spec)
    if spec != "stand":
        try:  # a FIFO, a device or a folder is refused by its type, unopened (a FIFO's open blocks)
            check_regular_file(spec, "config", MAX_CONFIG_BYTES, ConfigError)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (give 'stand', a pose file or an experiment config)") from None
    if spec == "stand" or is_pose_file(path):
        return stand_simulation(path, dt=_number(args.dt, "dt", 1.0 / 60.0), balance=_balance(args))
    import dataclasses

    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, make_simulation

    if args.strategy == "step":
        raise ConfigError(f"--strategy step: recovery steps are for a standing pose ('stand' or a pose file), "
                          f"not a clip ({spec})")
    overrides = [f"sim.dt={args.dt}"] if args.dt else []
    cfg = load_config(spec, overrides)
    if cfg.root.mode != "free":
        raise ConfigError(f"{spec}: root.mode: a push needs a free root, got {cfg.root.mode!r}")
    prep = build(cfg)
    bal = _balance(args, prep.options.balance)
    prep.options = dataclasses.replace(prep.options, balance=bal)
    return make_simulation(prep)


def run(args: argparse.Namespace) -> int:
    from tracker.errors import ConfigError

    for name in ("force", "duration", "start", "time"):
        value = getattr(args, name)
        if not (value >= 0 if name in ("force", "start") else value > 0) or value != value:
            raise ConfigError(f"--{name}: must be {'>= 0' if name in ('force', 'start') else '> 0'}, got {value!r}")
    from tracker.outdir import check_out, check_path

    if args.config != "stand":
        check_path(args.config, "CONFIG")
    if args.sweep:
        check_path(args.sweep, "--sweep")
        check_out(args.out or "results/push_sweep", args.force_out, "--overwrite")  # refused before anything runs
        return _run_sweep(args)
    if args.out:
        check_out(args.out, args.force_out, "--overwrite")
    from tracker.sim.push import Push, run_push

    sim = _simulation(args)
    try:
        push = Push(force=args.force, duration=args.duration, direction=args.direction, link=args.link,
                    start=args.start)
        out = run_push(sim, push, args.time)
    finally:
        sim.close()
    result = out.to_json()
    result["config"] = args.config
    result["strategy"] = ("none" if sim.balance is None else
                          "step" if sim.stepper is not None else sim.balance.options.strategy)
    result["dt"] = sim.opt.dt
    if args.out:
        _write(Path(args.out), result, out, args.force_out)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        what = (f"{args.force:g} N for {args.duration:g} s from {args.direction:g} deg on {args.link}"
                if args.force > 0 else "no push")
        if out.fell:
            print(f"{args.config}: {what}: FELL at t = {out.fell_time_s:.3f} s ({out.fell_reason}); "
                  f"CoM moved up to {out.max_com_offset_m:.3f} m")
        else:
            print(f"{args.config}: {what}: stood {out.duration_s:.2f} s; CoM drift {out.com_drift_m:.4f} m, "
                  f"largest offset {out.max_com_offset_m:.4f} m")
        for s in out.steps:
            where = ("did not land" if s["landed_m"] is None else
                     f"landed at {s['land_s']:.2f} s at ({s['landed_m'][0]:+.2f}, {s['landed_m'][1]:+.2f}) m, "
                     f"{s['length_m']:.2f} m from where it stood")
            print(f"  step: {s['foot']} lifted at {s['start_s']:.2f} s, {where}")
    return 4 if out.fell else 0


def _write(folder: Path, result: dict, out, force: bool = False) -> None:
    from tracker.atomic import write_json_atomic
    from tracker.outdir import prepare_out

    prepare_out(folder, force, "--overwrite")
    write_json_atomic(folder / "push.json", result)
    try:
        _plot_com(folder, out)
    except Exception as exc:  # noqa: BLE001 - push.json is written; the plot is one warning line
        from tracker.experiments.runner import problem_line

        print(f"warning: {problem_line('com.png', exc)}", file=sys.stderr)


def _plot_com(folder: Path, out) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for i, name in enumerate("xyz"):
        ax.plot(out.t, out.com[:, i] - out.com[0, i], label=f"CoM {name} - start")
    p = out.push
    if p.force > 0:
        ax.axvspan(p.start, p.start + p.duration, color="0.85", label="push")
    for i, s in enumerate(out.steps):  # each recovery step: lift-off to touch-down
        end = s["land_s"] if s["land_s"] is not None else s["start_s"] + 0.05
        ax.axvspan(s["start_s"], end, color="tab:purple", alpha=0.2, label="step" if i == 0 else None)
        ax.annotate(s["foot"].split("_")[0], (s["start_s"], 0), fontsize=7, color="tab:purple")
    if out.fell:
        ax.axvline(out.fell_time_s, color="r", ls="--", label="fell")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("m")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(folder / "com.png", dpi=100)
    plt.close(fig)


def _run_sweep(args: argparse.Namespace) -> int:
    from tracker.analysis.push_plots import write_sweep
    from tracker.sim.push import load_sweep, run_sweep, survival_table

    settings = load_sweep(args.sweep)
    out = Path(args.out or "results/push_sweep")
    total = len(settings.strategies) * len(settings.links) * len(settings.directions) * len(settings.forces)
    done = [0]

    def progress(_row: dict) -> None:
        done[0] += 1
        if not args.json and sys.stderr.isatty():
            print(f"\r{done[0]}/{total} pushes", end="", file=sys.stderr, flush=True)

    rows = run_sweep(settings, progress)
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    table = survival_table(rows)
    from tracker.outdir import prepare_out

    prepare_out(out, args.force_out, "--overwrite")
    write_sweep(out, rows, table)
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        for r in table:
            v = r["largest_survived_n"]
            print(f"{r['strategy']:>8} {r['link']:>7} {r['direction']:>5}: "
                  + ("falls unpushed" if v != v else f"{v:g} N"))
        print(f"wrote {out}/survival.csv, {out}/largest.csv, {out}/survival.png")
    return 0
