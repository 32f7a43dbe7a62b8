"""Every kind of broken BVH file gives a BVHError naming the file, the line and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker.errors import BVHError
from tracker.motion.bvh import read_bvh, read_bvh_bytes

GOOD = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT Leg
  {
    OFFSET 0 -90 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -80 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.01
0 95 0 0 0 0 0 0 0
1 95 0 0 0 0 10 0 0
"""


def _edit(line: int, new: str | None) -> str:
    """GOOD with 1-based ``line`` replaced by ``new`` (or deleted when ``None``)."""
    lines = GOOD.splitlines()
    if new is None:
        del lines[line - 1]
    else:
        lines[line - 1] = new
    return "\n".join(lines) + "\n"


CASES = {
    # name: (file contents, expected line, text expected in the message)
    "empty file": ("", 1, "file is empty"),
    "only whitespace": ("\n  \n\t\n", 1, "file is empty"),
    "missing HIERARCHY": (_edit(1, None), 1, "expected HIERARCHY"),
    "missing ROOT": (_edit(2, "JOINT Hips"), 2, "expected ROOT"),
    "missing MOTION": (_edit(16, None), 16, "expected MOTION"),
    "hierarchy only": ("".join(GOOD.splitlines(True)[:15]), 15, "file ends before MOTION"),
    "unknown channel name": (
        _edit(9, "    CHANNELS 3 Zrotation Xrot Yrotation"),
        9,
        "unknown channel name 'Xrot'",
    ),
    "channel count mismatch": (
        _edit(9, "    CHANNELS 2 Zrotation Xrotation Yrotation"),
        9,
        "says 2 but lists 3",
    ),
    "channel listed twice": (
        _edit(9, "    CHANNELS 3 Zrotation Xrotation Zrotation"),
        9,
        "listed twice",
    ),
    "OFFSET with two numbers": (_edit(8, "    OFFSET 0 -90"), 8, "needs 3 numbers"),
    "OFFSET not a number": (_edit(8, "    OFFSET 0 x 0"), 8, "'x' is not a number"),
    "missing brace": (_edit(7, None), 7, "expected '{'"),
    "duplicate joint name": (_edit(6, "  JOINT Hips"), 6, "duplicate joint name 'Hips'"),
    "garbage in hierarchy": (_edit(10, "    Foo Bar"), 10, "expected JOINT, End Site or '}'"),
    "frame line with too few values": (_edit(19, "0 95 0 0 0 0 0 0"), 19, "has 8 values"),
    "frame line with too many values": (_edit(20, "1 95 0 0 0 0 10 0 0 7"), 20, "has 10 values"),
    "non-numeric value": (_edit(20, "1 95 0 0 zero 0 10 0 0"), 20, "value 5 'zero'"),
    "NaN value": (_edit(20, "1 95 0 0 nan 0 10 0 0"), 20, "not a finite number"),
    "fewer frames than Frames": (_edit(17, "Frames: 3"), 20, "after 2 of the 3 frames"),
    "more frames than Frames": (_edit(17, "Frames: 1"), 20, "more frame lines than the 1"),
    "Frames not a number": (_edit(17, "Frames: two"), 17, "whole number"),
    "Frames zero": (_edit(17, "Frames: 0"), 17, "whole number >= 1"),
    "missing Frames": (_edit(17, None), 17, "expected 'Frames: N'"),
    "zero frame time": (_edit(18, "Frame Time: 0"), 18, "must be positive"),
    "negative frame time": (_edit(18, "Frame Time: -0.01"), 18, "must be positive"),
    "frame time not a number": (_edit(18, "Frame Time: fast"), 18, "'fast' is not a number"),
    "truncated inside a frame line": (GOOD[: GOOD.rindex("10")], 20, "file ends inside frame 2"),
    "truncated inside the hierarchy": (GOOD[: GOOD.index("End Site")], 10, "file ends inside"),
    "a second ROOT": (_edit(16, "ROOT Other"), 16, "only one skeleton per file"),
}


@pytest.mark.parametrize("text, line, message", CASES.values(), ids=CASES.keys())
def test_broken_file_raises_bvherror_with_line(text: str, line: int, message: str) -> None:
    with pytest.raises(BVHError) as info:
        read_bvh_bytes(text.encode(), "clip.bvh")
    err = info.value
    assert message in err.reason
    assert err.line == line
    assert str(err) == f"clip.bvh:{line}: {err.reason}"


def test_the_unbroken_text_reads() -> None:
    m = read_bvh_bytes(GOOD.encode(), "clip.bvh")
    assert m.n_frames == 2


def test_binary_garbage_is_reported_with_its_line() -> None:
    data = GOOD.encode()
    cut = data.index(b"MOTION")
    with pytest.raises(BVHError, match=r"clip.bvh:16: binary data"):
        read_bvh_bytes(data[:cut] + b"\x00\x01\x02\xff" + data[cut:], "clip.bvh")
    with pytest.raises(BVHError, match=r"clip.bvh:1: bytes that are not UTF-8"):
        read_bvh_bytes(bytes(range(128, 256)), "clip.bvh")


def test_missing_file_is_a_bvherror(tmp_path: Path) -> None:
    with pytest.raises(BVHError, match="cannot read file") as info:
        read_bvh(tmp_path / "nope.bvh")
    assert info.value.line is None
    with pytest.raises(BVHError, match="a folder, not a BVH file"):
        read_bvh(tmp_path)  # refused by its type, before any open
