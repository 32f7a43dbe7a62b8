"""``tracker optimize CLIP|CONFIG``: search PD-target offsets that keep a free-root character on the clip."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path

from tracker.commands._args import (MAX_DURATION, MAX_SEED, MAX_WORKERS, bounded_float, bounded_int, clip_or_file_time,
                                   parse_dt)


#: The flags of one search: any of them given runs that search instead of the schedule.
SINGLE_FLAGS = ("--method", "--iterations", "--samples", "--keep", "--segment", "--selection", "--lookahead",
                "--width-scale", "--decay", "--init")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "optimize",
        help="search PD-target offsets (SAMCON or CMA-ES) so a free-root character follows a clip, then replay them",
        description="Sampling-based control (Liu et al. 2010, 2015; GAMES105 lecture 10): cut the clip into "
                    "segments, simulate many offset samples per segment from saved states, keep the best, backtrack "
                    "the best chain, iterate. With no search flags it runs its own schedule: SAMCON over windows "
                    "slid along the clip, then narrow passes that weigh the pose more, until the goal (standing, "
                    "mean joint error <= 0.10 rad, mean root error <= 0.15 m) or --budget (docs/samcon.md, \"One "
                    "command\"); --single or any search flag runs one search as the flags say. Writes offsets.npz (for controller.offsets), optimize.json and plots "
                    "of the cost, optimize.md, and the replay as tracker run writes it (metrics.json, "
                    "recording.npz, report.md). A clip (BVH...) is tracked on a free root with stance-held SPD, the "
                    "weight fed forward, 3x the model's gains, 1/120 s in 4 physics substeps (override with "
                    "--set / --dt); a config as it says (its balls fly in the search and in the replay). "
                    "A first frame a few mm above the floor is settled onto it; a clip whose start cannot stand "
                    "starts at its first planted frame (said in one line). The search shows a progress bar on a "
                    "terminal, else one log line per window (best cost, joint and root error against the goal "
                    "0.10 rad / 0.15 m, elapsed and estimated time left). "
                    "Exit status: 0 ok, 2 bad input, 3 the replay diverged, 4 the replay fell.",
    )
    p.add_argument("source", help="clip (BVH, reference .npz, DeepMimic .txt) or experiment config (YAML)")
    p.add_argument("--single", action="store_true",
                   help="run one search with the settings below instead of the schedule (implied by any of "
                        f"{', '.join(SINGLE_FLAGS)})")
    p.add_argument("--budget", type=bounded_float(0, 525_600, "budget", "min", lo_open=True), default=None,
                   metavar="MINUTES", help="the schedule: stop before a stage that would end past this many minutes "
                                           "of search (> 0 and at most 525600, a year; default: no limit, the "
                                           "schedule ends when the goal is met or its stages are done)")
    p.add_argument("--max-stages", type=bounded_int(1, 1000, "max stages"), default=None, metavar="N",
                   help="the schedule: stop after N stages, 1 to 1000 (reproduces a run the budget cut, as optimize.md "
                        "says)")
    p.add_argument("--method", default=None, choices=("samcon", "cma"),
                   help="samcon (default) or cma (CMA-ES on each segment in turn)")
    p.add_argument("--iterations", type=bounded_int(1, 1000, "iterations"), default=None,
                   help="passes over the clip (samcon) or CMA-ES generations per segment (cma); 1 to 1000, "
                        "default 3")
    p.add_argument("--samples", type=bounded_int(1, 100_000, "samples"), default=None,
                   help="rollouts per segment and iteration, for both methods (samcon: per pass, shared by "
                        "the kept states; cma: the population of each generation, at least 2): samples x "
                        "iterations x segments in all, samcon adding one per segment from its second iteration "
                        "for the best chain it carries (1 to 100000; default 2000)")
    p.add_argument("--keep", type=bounded_int(1, 10_000, "keep"), default=None,
                   help="start states kept per segment (samcon; 1 to 10000 and at most --samples; default 200)")
    p.add_argument("--segment", type=bounded_float(0, 60, "segment", "s", lo_open=True), default=None,
                   help="segment length, s (> 0 and <= 60; default 0.1)")
    p.add_argument("--selection", default=None, choices=("elite", "spread"),
                   help="samcon's kept start states: the cheapest (elite, default) or spread over the cheaper 60%% "
                        "of the costs (spread)")
    p.add_argument("--lookahead", type=bounded_int(0, 20, "lookahead"), default=None, metavar="N",
                   help="samcon: rank each sample by its segment's cost plus that of the next N segments simulated "
                        "on the previous iteration's track (costs N+1 times the simulation; 0 to 20, default 0: the "
                        "segment alone)")
    p.add_argument("--width-scale", type=bounded_float(0, 10, "width scale", lo_open=True), default=None, metavar="S",
                   help="scale the sampling half-widths (legs 0.4, trunk 0.1, others 0.05 rad; samcon's first "
                        "iteration's box, cma's coordinate scale) by S, e.g. 0.35 to refine an --init track as "
                        "narrowly as a fourth iteration would (> 0 and <= 10, and the legs' 0.4 rad times S at most "
                        "pi; default 1)")
    p.add_argument("--decay", type=bounded_float(0, 1, "decay", lo_open=True), default=None, metavar="F",
                   help="samcon: the half-widths' factor per iteration (> 0 and <= 1; default 0.7)")
    p.add_argument("--init", default=None, metavar="OFFSETS",
                   help="start from this offset track (a previous optimize's offsets.npz; samcon): the first "
                        "iteration samples around it and keeps it as the best chain so far, so the result is "
                        "never costlier than it; with --duration, a longer window starts from a shorter one's. "
                        "'plain': start from the plain servo (no offsets), so the result is never costlier than it")
    p.add_argument("--workers", type=bounded_int(1, MAX_WORKERS, "workers"), default=1,
                   help=f"parallel rollout workers (1 to {MAX_WORKERS}; default 1)")
    p.add_argument("--backend", default="local", choices=("local", "ray"), help="worker backend (as tracker sweep)")
    p.add_argument("--address", default=None, metavar="HOST:PORT",
                   help="with --backend ray: a running Ray cluster to use (started with 'ray start --head' on "
                        "one machine, 'ray start --address HOST:PORT' on the others); default RAY_ADDRESS, else "
                        "a local Ray is started")
    p.add_argument("--seed", type=bounded_int(0, MAX_SEED, "seed"), default=0,
                   help="random seed (0 to 2^32 - 1; the result depends on it alone)")
    p.add_argument("--start", type=clip_or_file_time, default=None, metavar="TIME",
                   help="where to start: clip time in s, or file:SECONDS / file_frame:N in the file's own time "
                        "(at most 86400 s or frame 2^31)")
    p.add_argument("--duration", type=bounded_float(0, MAX_DURATION, "duration", "s", lo_open=True), default=None,
                   help="seconds to optimise (> 0 and <= 3600; default: to the end)")
    p.add_argument("--dt", type=parse_dt, default=None, help="control time step, 1e-5 to 0.1 s, e.g. 1/60")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (as tracker run --set)")
    p.add_argument("--weights", type=cost_weights, default=None, metavar="TERM=W,...",
                   help="the cost's weights, e.g. velocity=0,root=20 (terms: pose, root, end_effector, balance, "
                        "velocity, contact, ball, fall; defaults 10, 10, 4, 10, 1, 0, 10, 100)")
    p.add_argument("--out", default=None, help="result folder (default: results/<name>-optimize-<timestamp>); a "
                                               "killed search's folder goes on from its checkpoint")
    from tracker.commands.run import add_force_option

    add_force_option(p)
    p.set_defaults(func=run)


#: Largest weight of a cost term (the defaults are 0.1-65; a weight past this swamps every other term).
MAX_WEIGHT = 1e6


def cost_weights(text: str):
    """``TERM=W,...`` -> :class:`~tracker.sampling.cost.CostWeights` (the others at their defaults)."""
    import dataclasses
    import math

    from tracker.numbers import number_from_text
    from tracker.sampling.cost import CostWeights

    names = [f.name for f in dataclasses.fields(CostWeights)]
    values = {}
    for part in text.split(","):
        name, eq, value = part.strip().partition("=")
        if not eq or name not in names:
            raise argparse.ArgumentTypeError(f"{part.strip()!r}: expected TERM=W with TERM one of {', '.join(names)}")
        try:
            w = number_from_text(value)
        except ValueError:
            w = math.nan
        if not (math.isfinite(w) and 0 <= w <= MAX_WEIGHT):
            raise argparse.ArgumentTypeError(f"{name}: a weight must be a number from 0 to {MAX_WEIGHT:g}, "
                                             f"got {value[:40]!r}")
        values[name] = w
    return CostWeights(**values)


def cfg_overrides(args: argparse.Namespace) -> list[str]:
    """The config overrides the command line asks for (``--set``, ``--start``, ``--duration``, ``--dt``)."""
    sets = list(args.overrides)
    if args.start is not None:
        base, value = args.start
        sets.append(f"clip.start={value!r}" if base == "clip" else f"clip.start={base}:{value}")
    if args.duration is not None:
        sets.append(f"sim.duration={args.duration!r}")
    if args.dt is not None:
        sets.append(f"sim.dt={args.dt!r}")
    return sets


def config_of(args: argparse.Namespace):
    """The experiment config to optimise: the given config, or a free-root config of the given clip."""
    from pathlib import Path

    from tracker.errors import ConfigError
    from tracker.experiments.config import config_from_data, load_config
    from tracker.sampling.optimize import clip_config

    source = Path(args.source)
    if not source.is_file():
        raise ConfigError(f"{source}: no such clip or config")
    sets = cfg_overrides(args)
    if source.suffix.lower() in (".yaml", ".yml") and not _is_clip_yaml(source):
        return load_config(source, sets)
    return config_from_data(clip_config(source), source.with_suffix(".yaml"), sets, origin="option")


def _is_clip_yaml(path) -> bool:
    from tracker.keyframes.file import is_keyframe_file
    from tracker.sim.stance import is_pose_file

    return is_keyframe_file(str(path)) or is_pose_file(str(path))


def run(args: argparse.Namespace) -> int:
    from tracker.errors import ConfigError
    from tracker.experiments.runner import default_out_dir
    from tracker.outdir import check_out, check_path, clear_run_files
    from tracker.sampling.optimize import PLAIN, optimize  # --init plain: start from the plain servo
    from tracker.sampling.watch import SearchLog
    from tracker.sampling.samcon import DEFAULT_WIDTHS, SamconOptions

    check_path(args.source, "the clip or config")
    # A folder with a checkpoint is a killed search that this command goes on from (the checkpoint
    # itself is ignored if it was made for another config or other settings).
    resume = ("checkpoint.pkl.key", "stages/stages.json")
    if args.out:
        check_out(args.out, args.force_out, resume_files=resume)  # refused before anything runs
    if args.init is not None and args.init != PLAIN:
        check_path(args.init, "--init")
        if args.out and args.force_out and Path(args.init).resolve().parent == Path(args.out).resolve():
            raise ConfigError(f"--init {args.init} is in --out {args.out}, whose files --force removes; copy it "
                              "elsewhere first")
    single = args.single or any(getattr(args, f[2:].replace("-", "_")) is not None for f in SINGLE_FLAGS)
    if not single:
        return _run_schedule(args)
    if args.budget is not None or args.max_stages is not None:
        raise ConfigError("--budget and --max-stages limit the schedule; a single search (--single or a search "
                          "flag) runs its iterations")
    _single_defaults(args)
    cfg = config_of(args)
    decay = SamconOptions.decay if args.decay is None else args.decay
    if not decay <= 1:  # > 0 by its type; nan fails here too
        raise ConfigError(f"--decay {args.decay!r}: must be in (0, 1]")
    widest = max(w for _, w in DEFAULT_WIDTHS) * args.width_scale
    if not widest <= math.pi:
        raise ConfigError(f"--width-scale {args.width_scale!r}: the legs' half-width would be {widest:.3g} rad, over π")
    opt = SamconOptions(segment=args.segment, samples=args.samples, keep=min(args.keep, args.samples)
                        if args.method == "cma" else args.keep, iterations=args.iterations, seed=args.seed,
                        selection=args.selection, lookahead=args.lookahead, decay=decay,
                        widths=tuple((pattern, w * args.width_scale) for pattern, w in DEFAULT_WIDTHS))
    opt.check()
    if args.method != "samcon" and args.lookahead:
        raise ConfigError("--lookahead: only --method samcon looks ahead")
    if args.method != "samcon" and args.decay is not None:
        raise ConfigError(f"--decay {args.decay!r}: only --method samcon shrinks its widths per iteration")
    if args.method != "samcon" and args.init is not None:
        raise ConfigError(f"--init {args.init}: only --method samcon starts from an offset track")
    if args.init is not None and args.init != PLAIN:
        from tracker.sim.offsets import load_offsets

        made_for = load_offsets(args.init).clip
        if made_for and Path(made_for).name != Path(cfg.clip.path).name:
            print(f"warning: --init {args.init} was made for clip {Path(made_for).name}, not "
                  f"{Path(cfg.clip.path).name}", file=sys.stderr)
    out = args.out or default_out_dir(cfg.replace(name=f"{cfg.name}-optimize"))
    if args.force_out and Path(out).is_dir():
        clear_run_files(out)  # optimize() creates the folder once the clip passes its checks
    settings = [args.source, f"--method={args.method}", f"--iterations={args.iterations}", f"--samples={args.samples}",
                f"--keep={args.keep}", f"--segment={args.segment!r}", f"--seed={args.seed}"]
    if args.selection != "elite":
        settings.append(f"--selection={args.selection}")
    if args.lookahead:
        settings.append(f"--lookahead={args.lookahead}")
    if args.width_scale != 1.0:
        settings.append(f"--width-scale={args.width_scale!r}")
    if args.decay is not None:
        settings.append(f"--decay={args.decay!r}")
    if args.init is not None:
        settings.append(f"--init={args.init if args.init == PLAIN else Path(args.init).resolve()}")
    settings += [f"--set={o}" for o in cfg_overrides(args)]
    header = _replay_header(args, settings)
    res = optimize(cfg, out, method=args.method, options=opt, workers=args.workers, backend=args.backend,
                   header=header, weights=args.weights, init=args.init, log=SearchLog(sys.stderr),
                   address=args.address)
    costs = ", ".join(f"{c:.4g}" for c in res.result.cost_per_iteration)
    print(f"{args.method}: {res.result.rollouts} rollouts in {res.timing['solve_s']:.1f} s; cost per iteration {costs}")
    return _summary(res, "")


def _single_defaults(args: argparse.Namespace) -> None:
    """Fill in one search's settings the command line left out (its defaults: samcon, 3 iterations of 2000
    samples per 0.1 s segment, 200 kept, elite, no look-ahead, the default widths)."""
    defaults = {"method": "samcon", "iterations": 3, "samples": 2000, "keep": 200, "segment": 0.1,
                "selection": "elite", "lookahead": 0, "width_scale": 1.0}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


def _run_schedule(args: argparse.Namespace) -> int:
    """``tracker optimize SOURCE`` without search flags: the schedule (:mod:`tracker.sampling.schedule`)."""
    from tracker.experiments.runner import default_out_dir
    from tracker.outdir import clear_run_files
    from tracker.sampling.optimize import optimize
    from tracker.sampling.schedule import ScheduleOptions
    from tracker.sampling.watch import SearchLog

    cfg = config_of(args)
    sched = ScheduleOptions(seed=args.seed, budget_s=None if args.budget is None else 60.0 * args.budget,
                            max_stages=args.max_stages)
    out = args.out or default_out_dir(cfg.replace(name=f"{cfg.name}-optimize"))
    if args.force_out and Path(out).is_dir():
        clear_run_files(out)
        _clear_stages(Path(out) / "stages")  # --force starts over: no stage is read back
    settings = [args.source, f"--seed={args.seed}"] + [f"--set={o}" for o in cfg_overrides(args)]
    if args.max_stages is not None:
        settings.append(f"--max-stages={args.max_stages}")
    header = _replay_header(args, settings)
    res = optimize(cfg, out, workers=args.workers, backend=args.backend, header=header, weights=args.weights,
                   log=SearchLog(sys.stderr), address=args.address, schedule=sched)
    info = res.result
    print(f"schedule: {len(info.fell)} stages, {info.rollouts} rollouts in {res.timing['solve_s']:.1f} s")
    return _summary(res, ", stages/")


def _clear_stages(folder: Path) -> None:
    """Remove a schedule's stage files (``NN.npz``, ``replay.npz``, ``stages.json``) from ``folder``, if any."""
    import re

    if not folder.is_dir():
        return
    for f in folder.iterdir():
        if f.is_file() and (re.fullmatch(r"\d+\.npz|replay\.npz|stages\.json", f.name)):
            f.unlink()


def _replay_header(args: argparse.Namespace, settings: list[str]) -> str:
    """The replay config's header naming the command (with ``--weights``); refuses ``--address`` without Ray."""
    import dataclasses

    from tracker.errors import ConfigError

    if args.weights is not None:
        settings = settings + ["--weights=" + ",".join(f"{k}={v:g}" for k, v in dataclasses.asdict(args.weights).items())]
    if args.address and args.backend != "ray":
        raise ConfigError("optimize: --address names a Ray cluster; give --backend ray with it")
    cmd = "tracker optimize " + " ".join(shlex.quote(a) for a in settings)
    return f"Replay config of: {cmd}\nRun it again with: tracker run <this file>"


def _summary(res, more: str) -> int:
    """Print the replay beside the plain servo and what was written; the exit status of the replay."""
    from tracker.commands.run import exit_status
    from tracker.sampling.optimize import plain_outcome

    m, b = res.replay.metrics, res.replay.metrics.get("baseline", {})
    nan = float("nan")
    print(f"replay: fell {m.get('fell')}, joint error {m.get('joint_error_mean_rad', nan):.4f} rad, "
          f"root error {m.get('root_error_mean_m', nan):.3f} m, feet up to "
          f"{100 * m.get('foot_penetration_max_m', nan):.1f} cm below the ground; plain SPD "
          + plain_outcome(res.plain) + f" (joint error {b.get('joint_error_mean_rad', nan):.4f} rad, "
          f"root error {b.get('root_error_mean_m', nan):.3f} m)")
    print(f"wrote {res.folder}/ (offsets.npz, optimize.json, optimize.md, metrics.json, recording.npz{more})")
    return exit_status(res.replay)
