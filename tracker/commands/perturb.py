"""``tracker perturb CONFIG``: throw balls and push a free-root track it never saw, and count who stays up.

Runs :func:`tracker.sampling.perturb.standard_trials` (issue 33's set: 20 balls of 0.45 kg at 8 m/s
at the chest or a leg at random times, and 150 N x 0.1 s on the pelvis from each of the four sides at
2 random times) on a config with a free root and an offset track (``configs/free/<clip>.yaml``), each
trial from the clip's start to its end, and prints which fell and when. Falls are the data: the exit
status is 0 (2 for bad input). ``--react`` runs every trial with look-ahead feedback
(:mod:`tracker.sampling.react`) and once more open loop, and gives both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tracker.commands._args import MAX_SEED, MAX_WORKERS, bounded_int


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "perturb",
        help="throw balls at and push a free-root track, and count the trials it stays up",
        description="Run a free-root config with an offset track (configs/free/<clip>.yaml) under disturbances "
                    "its search never saw: balls of 0.45 kg at 8 m/s at the chest, a thigh or a shin, and "
                    "150 N x 0.1 s on the pelvis from the front, left, back and right, at random clip times "
                    "(a seed), one per trial from the clip's start to its end. Prints which trials fell and "
                    "when; falls are the data (exit status 0).",
    )
    p.add_argument("config", help="experiment config with root.mode: free and controller.offsets")
    p.add_argument("--seed", type=bounded_int(0, MAX_SEED, "seed"), default=0, help="the trials' random seed, 0 to 4294967295 (default 0)")
    p.add_argument("--balls", type=bounded_int(0, 1000, "balls"), default=20, help="ball trials, 0 to 1000 (default 20)")
    p.add_argument("--push-times", type=bounded_int(0, 1000, "push times"), default=2,
                   help="push trials per side, 0 to 1000 (default 2)")
    p.add_argument("--react", action="store_true",
                   help="with feedback: once the body is off its undisturbed run, correct the legs' next PD-target "
                        "offsets every 0.1 s by simulating corrections ahead (tracker.sampling.react); the open-loop "
                        "track's outcome of every trial is given beside it")
    p.add_argument("--workers", type=bounded_int(1, MAX_WORKERS, "workers"), default=1,
                   help=f"trials run in parallel processes (1 to {MAX_WORKERS}; default 1; the outcomes do not depend on it)")
    p.add_argument("--json", action="store_true", help="print the trials and the counts as JSON")
    p.add_argument("--out", default=None, help="folder for perturb.json")
    from tracker.commands.run import add_force_option

    add_force_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.errors import ConfigError
    from tracker.experiments.build import build
    from tracker.experiments.config import load_config
    from tracker.outdir import check_out, check_path
    from tracker.sampling.perturb import run_trials, standard_trials, summary

    check_path(args.config, "CONFIG")
    if args.out:
        check_out(args.out, args.force_out)
    cfg = load_config(args.config)
    if cfg.root.mode != "free" or cfg.controller.offsets is None:
        raise ConfigError(f"{args.config}: perturbation trials need root.mode: free and controller.offsets "
                          "(a shipped track's config, configs/free/<clip>.yaml)")
    if cfg.balls:
        raise ConfigError(f"{args.config}: balls: the trials throw their own; give a config without balls")
    prep = build(cfg)
    end = cfg.clip.start + cfg.duration if cfg.duration is not None else prep.reference.duration
    trials = standard_trials(end - cfg.clip.start, args.seed, args.balls, args.push_times, start=cfg.clip.start)
    react = None
    if args.react:
        from tracker.sampling.react import ReactOptions

        react = ReactOptions(seed=args.seed)
    undisturbed, outcomes, open_loop = run_trials(prep, trials, react, args.workers, None if args.json else _show)
    result = summary(args.config, args.seed, undisturbed, outcomes)
    if react is not None:
        import dataclasses

        result["react"] = dataclasses.asdict(react)
        result["open_loop"] = summary(args.config, args.seed, undisturbed, open_loop)
    if args.out:
        from tracker.atomic import write_json_atomic
        from tracker.outdir import prepare_out

        folder = prepare_out(Path(args.out), args.force_out)
        write_json_atomic(folder / "perturb.json", result)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        counts = lambda r: (f"{r['survived']} of {r['trials']} trials (balls {r['balls_survived']} of "  # noqa: E731
                            f"{r['balls']}, pushes {r['pushes_survived']} of {r['pushes']})")
        print(f"{args.config}: stayed up in {counts(result)}" + (" with --react" if react else "")
              + f"; undisturbed: {'FELL' if undisturbed.fell else 'stayed up'}")
        if react is not None:
            print(f"  open loop (the track alone): stayed up in {counts(result['open_loop'])}")
    return 0


def _show(k: int, n: int, outcome, open_loop) -> None:
    state = lambda o: f"FELL at {o.fell_at:.2f} s" if o.fell else "stayed up"  # noqa: E731
    line = f"{k + 1:2d}/{n} {outcome.trial.label()}: {state(outcome)}"
    if open_loop is not None:
        line += (f" ({len(outcome.reactions)} corrections from {outcome.reactions[0].t:.2f} s)" if outcome.reactions
                 else " (no correction)") + f"; open loop: {state(open_loop)}"
    print(line, flush=True)
