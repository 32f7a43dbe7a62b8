"""The numpy-free reader behind ``tracker inspect`` (bvh_facts) agrees with the numpy reader.

Both run the same grammar (bvh_grammar); these tests hold the rest together: the frame-0 pose,
unit, floor, height, arm pose, dropped T-pose frames and convention that ``inspect`` prints
from plain Python equal what the numpy/scipy reader and the retargeter compute, on every shared
clip, the authored clips, and seeded hostile mutations from ``scripts/fuzz.py`` (the same
accept/reject decision and, word for word, the same message).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.commands.inspect import summarize
from tracker.errors import BVHError
from tracker.motion import bvh_grammar as grammar
from tracker.motion import summary
from tracker.motion.bvh import read_bvh, read_bvh_bytes
from tracker.motion.bvh_facts import read_clip, read_clip_bytes
from tracker.retarget import conventions
from tracker.retarget.joint_map import INDEX_FILE, builtin_maps, index_data, load_joint_map, select_joint_map
from tracker.retarget.retarget import _drop_added_tpose

from .conftest import FIXTURES, MOCAP_FILES, REPO

CLIPS = [*MOCAP_FILES, *sorted((REPO / "data" / "motions").glob("*.bvh")), FIXTURES / "tiny.bvh"]


def _numpy_points(motion, root_offset: bool) -> np.ndarray:
    """Frame 0's joints then End Sites ``(J + E, 3)`` by the Motion's scipy forward kinematics."""
    sk = motion.skeleton
    trans = np.array(motion.translations[:1])
    if root_offset:
        trans[0, 0] += sk.offsets[0]
    one = type(motion)(sk, motion.fps, trans, motion.rotations[:1])
    pos, quats = one.global_transforms()
    ends = [pos[0, j] + Rotation.from_quat(quats[0, j]).apply(np.array(off))
            for j, off in zip(sk.end_site_parents, sk.end_site_offsets)]
    return np.concatenate([pos[0], np.reshape(ends, (-1, 3))])


def _yaml_maps():
    return {m.name: m for m in (load_joint_map(p) for p in sorted(INDEX_FILE.parent.glob("*.yaml")))}


def _agree(clip, motion, where: str) -> None:
    """The facts reader's clip and frame 0 equal the numpy reader's Motion."""
    src = motion.source
    assert (clip.unit, clip.scale, clip.up_axis, clip.unit_detected) == (
        src.unit, src.scale, src.up_axis, src.unit_detected), where
    assert clip.n_frames == motion.n_frames and clip.fps == motion.fps and clip.duration == motion.duration
    pose = clip.pose(0)
    assert pose.names == list(motion.skeleton.names)
    for root_offset in (False, True):
        lean = np.array(summary.frame_points(pose, root_offset=root_offset))
        ref = _numpy_points(motion, root_offset)
        scale = max(1.0, float(np.abs(ref).max()))
        np.testing.assert_allclose(lean, ref, rtol=0, atol=1e-9 * scale, err_msg=where)
    if motion.n_frames > 1:
        lean1 = np.array(summary.frame_points(clip.pose(1)))
        np.testing.assert_allclose(lean1, summary.frame_points(motion, 1), rtol=0,
                                   atol=1e-9 * max(1.0, float(np.abs(lean1).max())), err_msg=where)
    assert clip.added_tpose_frames() == _drop_added_tpose(motion)[1], where


@pytest.mark.parametrize("path", CLIPS, ids=[p.stem for p in CLIPS])
def test_facts_reader_agrees_with_the_numpy_reader_on_every_clip(path: Path) -> None:
    clip, motion = read_clip(path), read_bvh(path)
    _agree(clip, motion, path.name)
    info = summarize(str(path))
    # Each fact inspect prints, against the numpy reader and the retargeter's own functions.
    points = _numpy_points(motion, info["root_offset_added"])
    assert info["floor_z_m"] == pytest.approx(points[:, 2].min(), abs=1e-9)
    assert info["height_m"] == pytest.approx(np.ptp(points[:, 2]), abs=1e-9)
    assert info["extent_m"] == pytest.approx(np.ptp(_numpy_points(motion, False)[:, 2]), abs=1e-9)
    assert info["height_from_legs_m"] == pytest.approx(summary.height(motion), abs=1e-9)
    pose = summary.arm_pose(motion)
    assert info["frame0_pose"] == pose.kind
    for side, ref in zip(("left", "right"), (pose.left_elevation_deg, pose.right_elevation_deg)):
        got = info["upper_arm_elevation_deg"][side]
        assert (got is None) == (ref is None) and (ref is None or got == pytest.approx(ref, abs=1e-9))
    assert info["clip_start_file_frame"] == _drop_added_tpose(motion)[1]
    maps = _yaml_maps()
    try:
        expected = select_joint_map(motion.skeleton).name
    except Exception:  # noqa: BLE001  (RetargetError: no map fits)
        expected = "unknown"
    assert info["convention"] == expected
    assert conventions.detect(motion.skeleton.names) == (None if expected == "unknown" else expected)
    assert expected == "unknown" or max(maps.values(), key=lambda m: (m.score(motion.skeleton), m.name)).name == expected


def test_shared_clips_cover_an_added_tpose_and_clips_without_one() -> None:
    """The T-pose rule is exercised both ways (most clips stop after frames 0 and 1)."""
    drops = {p.stem: read_clip(p).added_tpose_frames() for p in MOCAP_FILES}
    if not drops:
        pytest.skip("no shared mocap")
    assert any(drops.values()) and not all(drops.values())


@pytest.mark.parametrize("numpy_from", [0, 10**12], ids=["numpy", "python"])
def test_tpose_rule_gives_the_same_frames_in_python_and_with_numpy(
    numpy_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracker.motion import bvh_facts

    monkeypatch.setattr(bvh_facts, "NUMPY_FROM", numpy_from)
    for path in CLIPS:
        assert read_clip(path).added_tpose_frames() == _drop_added_tpose(read_bvh(path))[1], path.name


def _fuzz_module():
    spec = importlib.util.spec_from_file_location("tracker_fuzz_script", REPO / "scripts" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOSTILE_FRAMES = [
    "nan", "inf", "-inf", "1e999", "1e-400", "-0", "1_000", "\u0661\u0662", "0x1F", "--1", "5.", ".5", "-.5",
    "+.5", "1e5", "1E-5", "1e-5e-5", "1.5.5", ".", "-", "+", "e-5", "1234567890", "-999999999.5", "1000000000",
    "0000000001", "1e+3", "\u00a0", "\t", "\x0b", "#", "1#",
]


def _read_both(data: bytes, name: str):
    out = []
    for read in (read_bvh_bytes, read_clip_bytes):
        try:
            out.append(read(data, name))
        except BVHError as exc:
            out.append(str(exc))
    return out


def _check_pair(data: bytes, name: str) -> str:
    motion, clip = _read_both(data, name)
    if isinstance(motion, str) or isinstance(clip, str):
        assert motion == clip, name  # both reject, with the same message
        return "rejected"
    _agree(clip, motion, name)
    return "accepted"


def test_facts_reader_and_numpy_reader_decide_alike_on_fuzzed_files() -> None:
    fuzz = _fuzz_module()
    rng = random.Random(13)
    bases = fuzz.bvh_bases()
    outcomes = {"accepted": 0, "rejected": 0}
    for i in range(400):
        name, base = bases[i % len(bases)]
        outcomes[_check_pair(fuzz.mutate_bvh(base, rng), f"{name}-{i}.bvh")] += 1
    assert outcomes["accepted"] >= 20 and outcomes["rejected"] >= 100, outcomes


@pytest.mark.parametrize("token", HOSTILE_FRAMES)
def test_facts_reader_and_numpy_reader_decide_alike_on_odd_frame_values(token: str) -> None:
    text = (FIXTURES / "tiny.bvh").read_text()
    head, frames = text.split("Frame Time:", 1)
    time_line, *rows = frames.split("\n")
    for k in range(len([r for r in rows if r.strip()])):
        values = rows[k].split()
        for where in (0, len(values) - 1):
            edited = list(values)
            edited[where] = token if token.strip() else edited[where] + token + "0"
            new_rows = rows[:k] + [" ".join(edited)] + rows[k + 1:]
            data = (head + "Frame Time:" + "\n".join([time_line, *new_rows])).encode()
            _check_pair(data, f"tiny-{token!r}-{k}-{where}.bvh")


def _valid_tokens(line: str) -> bool:
    for token in line.split():
        try:
            value = float(token)
        except ValueError:
            return False
        if not (math.isfinite(value) and abs(value) <= grammar.MAX_VALUE):
            return False
    return True


def test_plain_decimals_only_passes_what_float_accepts_within_range() -> None:
    """The fast check is sound: whatever it passes, float() reads as a finite value within range."""
    for k in range(1, 6):
        for chars in itertools.product("01.-+eE \t", repeat=k):
            line = "".join(chars)
            if grammar.plain_decimals(line):
                assert _valid_tokens(line), repr(line)
    rng = random.Random(5)
    alphabet = "0123456789" * 3 + ".-+eE \t\n"
    passed = 0
    for _ in range(20000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        if grammar.plain_decimals(line):
            passed += 1
            assert _valid_tokens(line), repr(line)
    assert passed > 1000
    # ... and passes what exporters write.
    for token in ("-12.345678", "0.000000", "5", "-0", "1.5e-05", "-3.2E-07", ".5", "-.5", "+1.25", "123456789.5"):
        assert grammar.plain_decimals(f"{token} {token}\n{token}\t{token}"), token


def test_token_counts_equal_split_on_any_white_space() -> None:
    rng = random.Random(2)
    pieces = ["1", "-2.5", " ", "  ", "\t", "\x0b", "\u00a0", "\u2003", "x"]
    for _ in range(3000):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(rng.randint(1, 4))]
        texts = [t for t in texts if t.strip()] or ["1"]
        assert grammar._token_counts(texts, "\n".join(texts)) == [len(t.split()) for t in texts], texts


def test_joint_map_index_is_current_and_equals_the_yaml_maps() -> None:
    on_disk = json.loads(INDEX_FILE.read_text())
    assert on_disk == json.loads(json.dumps(index_data())), (
        "joint_maps/index.json is stale: run python -m tracker.retarget.joint_map")
    assert builtin_maps() == _yaml_maps()


def test_a_stale_joint_map_index_falls_back_to_the_yaml_files(monkeypatch: pytest.MonkeyPatch) -> None:
    real = conventions.sources()
    monkeypatch.setattr(conventions, "sources", lambda: {**real, "cmu_mb.yaml": real["cmu_mb.yaml"] + 1})
    assert conventions.load_index() is None
    with pytest.raises(LookupError):
        conventions.detect(["Hips"])
    assert builtin_maps() == _yaml_maps()
    soccer = next((p for p in MOCAP_FILES if p.stem == "cmu_10_01_soccer_kick"), None)
    if soccer is not None:
        assert summarize(str(soccer))["convention"] == "cmu_mb"


def test_inspect_imports_neither_numpy_scipy_nor_yaml() -> None:
    clip = next(iter(MOCAP_FILES), CLIPS[-1])
    code = ("import sys, io, contextlib\nfrom tracker.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['inspect', {str(clip)!r}, '--json']) == 0\n"
            "heavy = sorted(m for m in ('numpy', 'scipy', 'yaml', 'pybullet', 'numba') if m in sys.modules)\n"
            "print(' '.join(heavy))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert proc.stdout.strip() == ""


def test_the_inspect_parser_is_the_same_built_alone_or_with_every_command() -> None:
    from tracker.cli import build_parser

    def inspect_help(parser) -> str:
        sub = next(a for a in parser._actions if a.dest == "command")
        return sub.choices["inspect"].format_help()

    assert inspect_help(build_parser("inspect")) == inspect_help(build_parser())
