"""``tracker sweep SWEEP.yaml``: run a grid of experiment configs in parallel, resumable."""

from __future__ import annotations

import argparse
import os
import sys

from tracker.commands._args import MAX_WORKERS, bounded_int


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a sweep (a base config and a grid of overrides) in worker processes; resumable",
        description="Run every combination of a sweep file's grid (and zipped lists; at most 10000 runs) as its own "
                    "run folder under the output folder, skipping runs that already finished (their metrics.json "
                    "holds their metrics; an empty, truncated or otherwise unreadable one is run again), then write "
                    "summary.csv and the summary plots. Exit status: 0 every run finished (diverged runs count as "
                    "finished), 2 bad sweep file or a run failed.",
    )
    p.add_argument("sweep", help="sweep file (YAML; see configs/sweeps/)")
    p.add_argument("--workers", type=bounded_int(1, MAX_WORKERS, "workers"),
                   default=min(os.cpu_count() or 1, MAX_WORKERS),
                   help=f"runs in parallel (1 to {MAX_WORKERS}; default: the number of CPUs)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local worker processes, or Ray (ray.init(); RAY_ADDRESS for a cluster; needs the 'ray' extra)")
    p.add_argument("--out", default=None, help="sweep folder (default: results/sweeps/<name>)")
    p.add_argument("--list", action="store_true", help="list the runs and their folders, and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.errors import ConfigError
    from tracker.experiments.sweep import load_sweep, print_summary, run_sweep, save_timing

    if args.workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {args.workers}")
    sweep = load_sweep(args.sweep)
    if args.list:
        for r in sweep.runs:
            print(r.key)
        return 0
    result = run_sweep(sweep, args.out, workers=args.workers, backend=args.backend,
                       progress=sys.stderr.isatty() or os.environ.get("TRACKER_PROGRESS") == "1",
                       log=lambda text: print(text, file=sys.stderr))
    save_timing(result)
    print_summary(result, sweep)
    return 2 if result.failed else 0
