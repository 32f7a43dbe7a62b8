"""Hostile BVH files (issue 14): every class the fuzzing campaign found, with its exact message,
and properties over the numbers a file may hold (frame counts, digit strings, frame times,
denormal and huge offsets)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.cli import main
from tracker.errors import BVHError
from tracker.motion import bvh
from tracker.motion.bvh import read_bvh_bytes

from .test_bvh_errors import GOOD  # the two-joint file both suites mutate

NO_CHANNELS = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: {n}\nFrame Time: 0.01\n"

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


def _error(text: str) -> str:
    with pytest.raises(BVHError) as info:
        read_bvh_bytes(text.encode(), "clip.bvh")
    return str(info.value)


CLASSES = {
    # A 78-byte file with no CHANNELS asking for 10^10 frames (224 GiB before the fix).
    "ten billion frames of nothing": (
        NO_CHANNELS.replace("{n}", "10000000000"),
        "clip.bvh:7: Frames '10000000000' is more than the reader's limit of 100,000,000"),
    # 10^7 frames of nothing took 4.7 s and 1.44 GB; the file must hold a line per frame.
    "ten million frames of nothing": (
        NO_CHANNELS.replace("{n}", "10000000"),
        "clip.bvh:8: file ends after 0 of the 10000000 frames declared on line 7 (truncated?)"),
    "a 21-digit frame count": (
        GOOD.replace("Frames: 2", "Frames: " + "9" * 21),
        "clip.bvh:17: Frames '999999999999999999999' is more than the reader's limit of 100,000,000"),
    "a 5000-digit frame count": (
        GOOD.replace("Frames: 2", "Frames: " + "2" * 5000),
        "clip.bvh:17: Frames '2222222222222222222222222222222222222...' is more than the reader's limit of "
        "100,000,000"),
    "a 5000-digit channel count": (
        GOOD.replace("CHANNELS 3", "CHANNELS " + "3" * 5000),
        "clip.bvh:9: CHANNELS of joint 'Leg' says 3333333333333333333333333333333333333... but lists 3 names"),
    "a frame time of 1e308": (
        GOOD.replace("Frame Time: 0.01", "Frame Time: 1e308"),
        "clip.bvh:18: Frame Time '1e308' s is outside 1e-06 to 60 s (1 MHz to one frame a minute)"),
    "a frame time of 1e-308": (
        GOOD.replace("Frame Time: 0.01", "Frame Time: 1e-308"),
        "clip.bvh:18: Frame Time '1e-308' s is outside 1e-06 to 60 s (1 MHz to one frame a minute)"),
    "an offset of 1e300": (
        GOOD.replace("OFFSET 0 -90 0", "OFFSET 0 -1e300 0"),
        "clip.bvh:8: OFFSET of joint 'Leg': '-1e300' is out of range (magnitude over 1e+09)"),
    "a frame value of 1e300": (
        GOOD.replace("1 95 0 0 0 0 10 0 0", "1 95 0 0 0 0 1e300 0 0"),
        "clip.bvh:20: value 7 '1e300' is out of range (magnitude over 1e+09)"),
    "a 5000-character joint name": (
        GOOD.replace("JOINT Leg", "JOINT " + "L" * 5000).replace("Xrotation Yrotation\n", "Xrot Yrotation\n"),
        "clip.bvh:9: unknown channel name 'Xrot' in joint 'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL...'; valid: "
        "Xposition Yposition Zposition Xrotation Yrotation Zrotation"),
    "a skeleton of 501 joints": (
        "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Zrotation\n"
        + "".join(f"JOINT j{i}\n{{\nOFFSET 0 1 0\n" for i in range(500)) + "}\n" * 501
        + "MOTION\nFrames: 1\nFrame Time: 0.01\n0\n",
        "clip.bvh:1503: more than 500 joints: not a character skeleton"),
}


@pytest.mark.parametrize("text, message", CLASSES.values(), ids=CLASSES.keys())
def test_each_hostile_class_is_one_exact_line(text: str, message: str) -> None:
    assert _error(text) == message


def test_a_denormal_skeleton_height_is_read_not_a_math_domain_error() -> None:
    """An End Site offset of 5e-324: the height times a unit scale underflows to 0 (log(0) before)."""
    text = ("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Zrotation Yrotation Xrotation\n  End Site\n"
            "  {\n    OFFSET 0 5e-324 0\n  }\n}\nMOTION\nFrames: 1\nFrame Time: 0.01\n0 0 0\n")
    motion = read_bvh_bytes(text.encode(), "clip.bvh")
    assert motion.source.unit == "m" and motion.n_frames == 1


def test_inspect_json_is_strict_json_or_a_one_line_error(tmp_path, capsys) -> None:
    """`Frame Time: 1e308` printed "duration_s": Infinity (not JSON) before the fix."""
    path = tmp_path / "slow.bvh"
    path.write_text(GOOD.replace("Frame Time: 0.01", "Frame Time: 1e308"))
    assert main(["inspect", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {path}:18: Frame Time '1e308' s is outside 1e-06 to 60 s (1 MHz to one frame a "
                   "minute)\n")
    path.write_text(GOOD.replace("Frame Time: 0.01", "Frame Time: 60"))
    assert main(["inspect", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert info["duration_s"] == 60.0


def test_retargeting_errors_name_the_bvh_file(tmp_path, capsys) -> None:
    """A joint-map error ("link bone from ... every end point ... is missing") names the clip."""
    from tracker.motion.bvh import read_bvh
    from tracker.motion.bvh_write import write_bvh
    from tracker.motion.motion import Motion
    from tracker.motion.skeleton import Skeleton
    from tracker.paths import MOTIONS_DIR

    m = read_bvh(MOTIONS_DIR / "demo_wave.bvh")
    sk = m.skeleton
    j = sk.index("LeftLeg")
    offsets, trans = np.array(sk.offsets), np.array(m.translations)
    offsets[j] = 0.0  # the knee on the hip: the thigh has no length
    trans[:, j] = 0.0
    bent = Skeleton(sk.names, sk.parents, offsets, sk.channels, sk.end_site_parents, sk.end_site_offsets)
    path = tmp_path / "kneeless.bvh"
    write_bvh(Motion(bent, m.fps, trans, m.rotations), path)
    assert main(["retarget", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: link bone from 'LeftUpLeg': every end point (LeftLeg) is missing or at the start; "
        "give another 'end' in the joint map\n")


# -- properties ------------------------------------------------------------------------------------


@SETTINGS
@given(st.one_of(st.integers(min_value=0, max_value=10**30).map(str),
                 st.text(alphabet="0123456789", min_size=1, max_size=6000)))
def test_any_frame_count_without_data_is_refused_before_allocating(count: str) -> None:
    text = NO_CHANNELS.replace("{n}", count) + "\n" * 3  # room for three empty frames
    n = int(count[-40:]) if len(count.lstrip("0")) <= 40 else math.inf
    if 1 <= n <= 3:
        assert read_bvh_bytes(text.encode(), "clip.bvh").n_frames == n
        return
    message = _error(text)
    if n == 0:
        assert message == f"clip.bvh:7: Frames must be a whole number >= 1, found {bvh._token(count)}"
    elif n > bvh.MAX_FRAMES:
        assert message == (f"clip.bvh:7: Frames {bvh._token(count)} is more than the reader's limit of "
                           f"{bvh.MAX_FRAMES:,}")
    else:
        assert message == f"clip.bvh:11: file ends after 3 of the {n} frames declared on line 7 (truncated?)"


@SETTINGS
@given(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True))
def test_any_frame_time_gives_a_finite_clip_or_one_exact_line(dt: float) -> None:
    token = repr(dt)
    text = GOOD.replace("Frame Time: 0.01", f"Frame Time: {token}")
    if 1e-6 <= dt <= 60:
        m = read_bvh_bytes(text.encode(), "clip.bvh")
        assert math.isfinite(m.fps) and math.isfinite(m.duration) and m.fps > 0
        return
    message = _error(text)
    if not math.isfinite(dt):
        assert message == f"clip.bvh:18: Frame Time: {token!r} is not a finite number"
    elif dt <= 0:
        assert message == f"clip.bvh:18: Frame Time must be positive, found {token!r}"
    else:
        assert message == (f"clip.bvh:18: Frame Time {token!r} s is outside 1e-06 to 60 s (1 MHz to one frame a "
                           "minute)")


@SETTINGS
@given(st.floats(min_value=-1e9, max_value=1e9, allow_subnormal=True), st.integers(min_value=0, max_value=2))
def test_any_end_site_offset_reads_with_a_known_unit(value: float, axis: int) -> None:
    offset = ["0", "0", "0"]
    offset[axis] = repr(value)
    text = GOOD.replace("OFFSET 0 -80 0", "OFFSET " + " ".join(offset))
    m = read_bvh_bytes(text.encode(), "clip.bvh")
    assert m.source.unit in ("m", "cm", "mm", "inch", "asf")
    assert np.isfinite(m.skeleton.end_site_offsets).all()


@SETTINGS
@given(st.text(alphabet="0123456789", min_size=1, max_size=5000))
def test_any_channel_count_is_checked_without_converting_huge_digit_strings(count: str) -> None:
    text = GOOD.replace("CHANNELS 3", f"CHANNELS {count}")
    if len(count) <= 3 and int(count) == 3:
        read_bvh_bytes(text.encode(), "clip.bvh")
        return
    shown = bvh._token(count)[1:-1]
    assert _error(text) == f"clip.bvh:9: CHANNELS of joint 'Leg' says {shown} but lists 3 names"
