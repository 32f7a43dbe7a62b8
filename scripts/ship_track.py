"""Ship a finished ``tracker optimize`` result into the library of solved tracks (``tracker.sampling.tracks``).

Usage::

    python scripts/ship_track.py RESULT_DIR NAME --command "tracker optimize ../shared/mocap/CLIP.bvh --workers 2"

writes ``data/tracks/NAME/`` and ``configs/free/NAME.yaml``; ``data/tracks/README.md``'s table and the folder's
line in ``pyproject.toml``'s ``[tool.setuptools.data-files]`` (``tests/test_packaging.py`` asks for it) are kept by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracker.sampling.tracks import ship  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result", type=Path, help="the result folder of tracker optimize")
    p.add_argument("name", help="the track's name (data/tracks/NAME, configs/free/NAME.yaml)")
    p.add_argument("--command", required=True, help="the one command that found it (written beside it)")
    args = p.parse_args()
    track, cfg = ship(args.result, args.name, REPO, args.command)
    print(f"wrote {track.relative_to(REPO)}/ and {cfg.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
