"""``tracker report RESULT --html [-o FILE]``: one self-contained HTML page of a run or a sweep."""

from __future__ import annotations

import argparse
import sys
import time

from tracker.commands._args import bounded_float, bounded_int


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write one self-contained HTML page of a result or sweep folder: 3D replay, plots, metrics",
        description="Write one HTML page (no network needed to view it) for a result folder of 'tracker run', "
                    "'tracker scenario' or 'tracker track --out', or for a sweep folder: the character replayed "
                    "in 3D as the collision shapes the engine simulates, the reference as a translucent ghost, "
                    "balls, contacts; a time slider, play/pause, speed and an orbit camera (drag to turn, wheel "
                    "to zoom); the run's plots, report and metrics beside it. A sweep page has a table of its "
                    "runs: click one to show it. The page's address may end in #t=SECONDS (show that time, "
                    "paused), &run=NAME (a sweep's run), &ghost=overlay|beside|off, &follow=0.",
    )
    p.add_argument("result", help="result folder (or its recording.npz), or a sweep folder")
    p.add_argument("--html", action="store_true", help="write the HTML page (the one report format so far)")
    p.add_argument("-o", "--out", default=None, metavar="FILE",
                   help="the page to write (default: report.html in the folder); an existing file is replaced")
    p.add_argument("--fps", type=bounded_float(1.0, 60.0, "fps", "Hz"), default=60.0,
                   help="most frames per second of run time embedded (1 to 60; default 60): fewer make a smaller page")
    p.add_argument("--max-runs", type=bounded_int(1, 10_000, "runs"), default=100,
                   help="a sweep: embed the recordings of its first N runs (1 to 10000; default 100); "
                        "the table lists every run")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.analysis.html_report import write_page
    from tracker.errors import TrackerError

    if not args.html:
        raise TrackerError("tracker report: give --html (the one report format so far), e.g. "
                           f"tracker report {args.result} --html")
    start = time.perf_counter()
    path, page = write_page(args.result, args.out, max_fps=args.fps, max_runs=args.max_runs)
    for line in page.problems:
        print(f"warning: {line}", file=sys.stderr)
    what = f"sweep of {page.runs} runs" if page.kind == "sweep" else "run"
    print(f"wrote {path} ({what}, {len(page.html.encode()) / 2 ** 20:.1f} MiB, "
          f"{time.perf_counter() - start:.1f} s)")
    return 0
