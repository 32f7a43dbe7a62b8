"""``tracker reproduce NAME [--out DIR] [--quick]``: rerun a paper's experiments.

Writes the reproduction's tables, figures and ``report.md`` into one folder
(:mod:`tracker.reproduce`); ``--list`` names the reproductions.
"""

from __future__ import annotations

import argparse
import sys
import time


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="rerun a paper's experiments and write its tables, figures and report",
        description="Rerun a paper reproduction and write its tables, figures and report.md into "
                    "one folder. 'tracker reproduce --list' names them; docs/NAME.md shows the "
                    "results beside the paper's.",
    )
    p.add_argument("name", nargs="?", help="reproduction name (see --list)")
    p.add_argument("--list", action="store_true", help="list the reproductions and exit")
    p.add_argument("--out", default=None, help="output folder (default: reproduce/NAME)")
    p.add_argument("--quick", action="store_true",
                   help="smaller settings (coarser grids, fewer samples): minutes become seconds")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker import reproduce
    from tracker.errors import ConfigError

    if args.list:
        for name in reproduce.names():
            print(f"{name:16s} {reproduce.load(name).TITLE}")
        return 0
    if not args.name:
        raise ConfigError("reproduce: name a reproduction (one of: "
                          + ", ".join(reproduce.names()) + "), or use --list")
    reproduce.load(args.name)  # unknown names fail before anything is written
    out = args.out or f"reproduce/{args.name}"
    t0 = time.perf_counter()
    report = reproduce.run(args.name, out, quick=args.quick)
    print(f"wrote {report} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if args.quick:
        print(f"{reproduce.quick_note(args.name)}.", file=sys.stderr)
    return 0
