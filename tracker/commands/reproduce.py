"""``tracker reproduce NAME|all [--out DIR] [--quick] [--check | --write-docs]``: rerun a paper's experiments.

Writes the reproduction's tables, figures and ``report.md`` into one folder
(:mod:`tracker.reproduce`); ``--list`` names the reproductions. ``--check`` compares the numbers
the run writes with the blocks of ``docs/NAME.md`` (:mod:`tracker.reproduce.blocks`) and exits 5
naming the page's line where they differ; ``--write-docs`` puts them into the page.
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
    p.add_argument("name", nargs="?", help="reproduction name (see --list), or 'all'")
    p.add_argument("--list", action="store_true", help="list the reproductions and exit")
    p.add_argument("--out", default=None, help="output folder (default: reproduce/NAME)")
    p.add_argument("--quick", action="store_true",
                   help="smaller settings (coarser grids, fewer samples): minutes become seconds")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true",
                      help="rerun (into a temporary folder unless --out) and compare the numbers with the "
                           "blocks of docs/NAME.md; exit 5 naming the page's line where they differ")
    what.add_argument("--write-docs", action="store_true",
                      help="rerun and put the numbers into the blocks of docs/NAME.md")
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
    names = reproduce.names() if args.name == "all" else (args.name,)
    for name in names:
        reproduce.load(name)  # unknown names fail before anything is written
    if (args.check or args.write_docs) and args.quick:
        raise ConfigError("reproduce: --check and --write-docs compare with the full run's numbers; "
                          "drop --quick")
    status = 0
    for name in names:
        out = (args.out if len(names) == 1 else f"{args.out}/{name}") if args.out else None
        status = max(status, _one(name, out, args))
    return status


def _one(name: str, out: str | None, args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from tracker import reproduce
    from tracker.errors import ConfigError
    from tracker.paths import REPO_DIR
    from tracker.reproduce import blocks

    page = REPO_DIR / "docs" / getattr(reproduce.load(name), "PAGE", f"{name}.md")
    if (args.check or args.write_docs) and not page.is_file():
        raise ConfigError(f"{page}: not found; --check and --write-docs need the repository's docs/")
    if args.check or args.write_docs:
        blocks.page_blocks(page, name)  # a malformed page fails before the run
    with tempfile.TemporaryDirectory(prefix=f"tracker-{name}-") as tmp:
        out = out or (tmp if args.check else f"reproduce/{name}")
        t0 = time.perf_counter()
        report = reproduce.run(name, out, quick=args.quick)
        print(f"wrote {report} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if args.quick:
            print(f"{reproduce.quick_note(name)}.", file=sys.stderr)
        if args.write_docs:
            missing = blocks.write_docs(page, name, out)
            print(f"wrote the numbers into {page}", file=sys.stderr)
            for block in missing:
                print(f"warning: {page} has no markers for block {block!r}; add "
                      f"<!-- reproduce {name} {block} --> ... <!-- /reproduce {name} {block} -->", file=sys.stderr)
            return 0
        if args.check:
            problems = blocks.check(page, name, Path(out))
            if not blocks.run_blocks(out) and not blocks.page_blocks(page, name):
                problems = [f"{page}: no block of numbers on the page nor from the run: nothing to check"]
            for line in problems:
                print(f"check: {line}", file=sys.stderr)
            if problems:
                return 5
            print(f"check: {page} matches the run ({len(blocks.run_blocks(out))} blocks)", file=sys.stderr)
    return 0

