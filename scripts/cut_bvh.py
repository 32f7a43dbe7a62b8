"""Cut an excerpt out of a BVH file without touching its data: the header is kept byte for byte except the
number on the ``Frames:`` line, and the kept motion lines are the file's own lines, unchanged.

Usage::

    python scripts/cut_bvh.py SOURCE.bvh OUT.bvh --first A --last B

keeps file frames ``A`` to ``B`` (both included, counted from 0 as ``tracker inspect`` counts them).
``data/mocap/README.md`` lists the excerpts made with it and the command for each.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def cut(text: str, first: int, last: int) -> str:
    """Return the BVH ``text`` with only frames ``first``..``last`` (inclusive) in its MOTION section."""
    head, sep, motion = text.partition("MOTION")
    if not sep:
        raise ValueError("no MOTION section")
    lines = motion.splitlines(keepends=True)
    i_frames = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Frames:"))
    i_time = next(i for i, line in enumerate(lines) if line.lstrip().startswith("Frame Time:"))
    frames = [line for line in lines[i_time + 1:] if line.strip()]
    if not 0 <= first <= last < len(frames):
        raise ValueError(f"frames {first}..{last} are not inside the file's 0..{len(frames) - 1}")
    keep = frames[first:last + 1]
    counted = re.sub(r"\d+", str(len(keep)), lines[i_frames], count=1)
    return head + sep + "".join(lines[:i_frames]) + counted + "".join(lines[i_frames + 1:i_time + 1]) + "".join(keep)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--first", type=int, required=True, help="first file frame kept (from 0)")
    p.add_argument("--last", type=int, required=True, help="last file frame kept (inclusive)")
    args = p.parse_args()
    with open(args.source, newline="") as f:
        text = f.read()
    try:
        out = cut(text, args.first, args.last)
    except (ValueError, StopIteration) as e:
        print(f"{args.source}: {e or 'no Frames: / Frame Time: line'}", file=sys.stderr)
        return 2
    with open(args.out, "w", newline="") as f:
        f.write(out)
    print(f"wrote {args.out}: frames {args.first}..{args.last} ({args.last - args.first + 1}) of {args.source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
