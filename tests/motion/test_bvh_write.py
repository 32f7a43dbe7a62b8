"""The BVH writer: read -> write -> read reproduces rotations and positions to 1e-9."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.motion.bvh import read_bvh, read_bvh_string
from tracker.motion.bvh_write import format_bvh, write_bvh
from tracker.motion.motion import Motion
from tracker.motion.skeleton import Skeleton

from .conftest import DEMO_WAVE, MOCAP_FILES, REPO, mocap_ids

TOL = 1e-9  # rad for rotations, m for positions


def _angle_between(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    return (
        Rotation.from_quat(q1.reshape(-1, 4)).inv() * Rotation.from_quat(q2.reshape(-1, 4))
    ).magnitude()


def _assert_same_motion(a: Motion, b: Motion, tol: float = TOL) -> None:
    assert a.skeleton.names == b.skeleton.names
    assert a.skeleton.channels == b.skeleton.channels
    np.testing.assert_array_equal(a.skeleton.parents, b.skeleton.parents)
    np.testing.assert_array_equal(a.skeleton.end_site_parents, b.skeleton.end_site_parents)
    np.testing.assert_allclose(a.skeleton.offsets, b.skeleton.offsets, rtol=0, atol=tol)
    np.testing.assert_allclose(a.skeleton.end_site_offsets, b.skeleton.end_site_offsets, atol=tol)
    np.testing.assert_allclose(a.translations, b.translations, rtol=0, atol=tol)
    assert _angle_between(a.rotations, b.rotations).max() < tol
    assert a.fps == pytest.approx(b.fps, rel=1e-15)


@pytest.mark.parametrize("path", MOCAP_FILES, ids=mocap_ids())
def test_shared_file_round_trip(path: Path, tmp_path: Path) -> None:
    original = read_bvh(path)
    out = tmp_path / "again.bvh"
    write_bvh(original, out, unit=original.source.unit)
    again = read_bvh(out, unit=original.source.unit)
    _assert_same_motion(original, again)
    assert again.fps == original.fps  # the file's Frame Time is written back as read


def _random_motion(rng: np.random.Generator, n_joints: int = 7, n_frames: int = 40) -> Motion:
    orders = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, n_joints)]
    channels = []
    for j in range(n_joints):
        rot = tuple(f"{a}rotation" for a in orders[rng.integers(len(orders))])
        moves = j == 0 or rng.random() < 0.3  # some non-root joints get 6 channels
        channels.append(("Xposition", "Yposition", "Zposition") + rot if moves else rot)
    offsets = rng.normal(scale=0.2, size=(n_joints, 3))
    trans = np.repeat(offsets[None], n_frames, axis=0)
    for j, ch in enumerate(channels):
        if len(ch) == 6:
            trans[:, j] = offsets[j] + rng.normal(scale=0.5, size=(n_frames, 3))
    rots = Rotation.random(n_frames * n_joints, random_state=int(rng.integers(1 << 31)))
    sk = Skeleton(
        names=[f"j{j}" for j in range(n_joints)],
        parents=parents,
        offsets=offsets,
        channels=channels,
        end_site_parents=[n_joints - 1],
        end_site_offsets=[[0.0, 0.1, 0.0]],
    )
    return Motion(sk, 100.0, trans, rots.as_quat().reshape(n_frames, n_joints, 4))


@pytest.mark.parametrize("unit, up", [("cm", "Y"), ("inch", "Z"), ("m", "Y"), ("asf", "Z")])
def test_random_motion_round_trip_in_any_unit_and_up_axis(unit: str, up: str) -> None:
    rng = np.random.default_rng(7)
    motion = _random_motion(rng)
    again = read_bvh_string(format_bvh(motion, unit=unit, up_axis=up), unit=unit, up_axis=up)
    # Parents come first, but the file is written depth first: compare by name.
    order = [again.skeleton.index(n) for n in motion.skeleton.names]
    assert _angle_between(motion.rotations, again.rotations[:, order]).max() < TOL
    np.testing.assert_allclose(motion.translations, again.translations[:, order], atol=TOL)
    np.testing.assert_allclose(
        motion.global_transforms()[0], again.global_transforms()[0][:, order], atol=TOL
    )


def test_fixed_decimals_round_trip_to_their_precision() -> None:
    motion = read_bvh(next(p for p in MOCAP_FILES if p.stem == "cmu_10_05_soccer_kick"))
    text = format_bvh(motion, unit="asf", decimals=4)
    again = read_bvh_string(text, unit="asf")
    assert _angle_between(motion.rotations, again.rotations).max() < 1e-5
    assert np.abs(motion.translations - again.translations).max() < 1e-5


def test_channels_that_cannot_express_the_motion_are_refused() -> None:
    sk = Skeleton(
        ["r", "a"],
        [-1, 0],
        [[0, 0, 1], [0, 0, 0.5]],
        [("Xposition", "Yposition", "Zposition", "Zrotation"), ("Xrotation",)],
    )
    rots = np.tile([0.0, 0.0, 0.0, 1.0], (2, 2, 1))
    trans = np.tile([[0, 0, 1], [0, 0, 0.5]], (2, 1, 1)).astype(float)
    ok = Motion(sk, 30.0, trans, rots)
    read_bvh_string(format_bvh(ok), unit="cm")  # identity rotations fit any channels

    moved = trans.copy()
    moved[1, 1] += [0.1, 0, 0]
    with pytest.raises(ValueError, match="joint 'a' moves"):
        format_bvh(Motion(sk, 30.0, moved, rots))
    turned = rots.copy()
    turned[1, 0] = Rotation.from_euler("y", 10, degrees=True).as_quat()  # root has only Z (file)
    with pytest.raises(ValueError, match="joint 'r' rotates"):
        format_bvh(Motion(sk, 30.0, trans, turned))


def test_one_rotation_channel_joint_round_trips() -> None:
    sk = Skeleton(
        ["r", "a"],
        [-1, 0],
        [[0, 0, 1], [0, 0, 0.5]],
        [
            ("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"),
            ("Xrotation",),
        ],
    )
    rots = np.tile([0.0, 0.0, 0.0, 1.0], (3, 2, 1))
    # File X is our Y after the Y-up -> Z-up rotation, so a file Xrotation is our y rotation.
    rots[:, 1] = Rotation.from_euler("y", [[10], [20], [-170]], degrees=True).as_quat()
    trans = np.tile([[0, 0, 1], [0, 0, 0.5]], (3, 1, 1)).astype(float)
    motion = Motion(sk, 30.0, trans, rots)
    again = read_bvh_string(format_bvh(motion), unit="cm")
    assert _angle_between(motion.rotations, again.rotations).max() < TOL


def test_comment_is_written_after_hierarchy_and_ignored_on_reading(tiny_path: Path) -> None:
    motion = read_bvh(tiny_path)
    text = format_bvh(motion, comment="made by a test\nsecond line")
    assert text.splitlines()[:3] == ["HIERARCHY", "# made by a test", "# second line"]
    _assert_same_motion(motion, read_bvh_string(text))


def test_write_is_atomic_and_leaves_no_temporary_file(tiny_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.bvh"
    write_bvh(read_bvh(tiny_path), out)
    assert [p.name for p in tmp_path.iterdir()] == ["x.bvh"]


# --- the authored demo clip ------------------------------------------------------------------------


def _author_clips_module():
    spec = importlib.util.spec_from_file_location(
        "author_clips", REPO / "scripts" / "author_clips.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("author_clips", module)
    spec.loader.exec_module(module)
    return module


def test_demo_wave_in_the_repo_is_what_author_clips_writes(tmp_path: Path) -> None:
    author_clips = _author_clips_module()
    written = author_clips.author("demo_wave", tmp_path).read_text().splitlines()
    shipped = DEMO_WAVE.read_text().splitlines()
    start = shipped.index("MOTION")
    assert written[: start + 3] == shipped[: start + 3]  # hierarchy, comment, Frames, Frame Time
    # Frame values are printed to 6 decimals; another scipy may round a last digit differently.
    a, b = (
        np.array([row.split() for row in lines[start + 3 :]], dtype=float)
        for lines in (written, shipped)
    )
    np.testing.assert_allclose(a, b, rtol=0, atol=1.5e-6)


def test_demo_wave_is_a_t_pose_then_a_one_arm_wave() -> None:
    m = read_bvh(DEMO_WAVE)
    head = DEMO_WAVE.read_text().splitlines()[:4]
    assert head[0] == "HIERARCHY" and "authored by scripts/author_clips.py" in head[1]
    assert "not motion capture" in head[1]
    assert m.fps == 60.0 and 2.0 <= m.duration <= 4.0
    assert m.source.unit == "cm" and m.source.unit_detected
    expected_names = {
        "Hips",
        "LeftUpLeg",
        "LeftLeg",
        "LeftFoot",
        "LeftToeBase",
        "RightUpLeg",
        "LowerBack",
        "Spine",
        "Spine1",
        "Neck",
        "Head",
        "LeftShoulder",
        "LeftArm",
        "LeftForeArm",
        "LeftHand",
        "RightArm",
        "RightForeArm",
        "RightHand",
    }
    assert expected_names <= set(m.skeleton.names)
    np.testing.assert_allclose(m.rotations[0, :, 3], 1.0, atol=1e-12)  # frame 0: all at rest
    pos, _ = m.global_transforms()
    hand = pos[:, m.skeleton.index("RightHand")]
    elbow = pos[:, m.skeleton.index("RightForeArm")]
    shoulder = pos[:, m.skeleton.index("RightArm")]
    waving = (m.times > 0.6) & (m.times < 2.4)
    assert np.all(hand[waving, 2] > shoulder[waving, 2] + 0.1)  # hand held up while waving
    sway = hand[waving, 1] - elbow[waving, 1]  # forearm tilts out (-Y) and in (+Y)
    turns = np.count_nonzero(np.diff(np.sign(np.diff(sway))) != 0)
    assert sway.max() - sway.min() > 0.15 and turns == 5  # out, in, out, in, out
    left_hand = pos[-1, m.skeleton.index("LeftHand")]
    assert left_hand[2] < pos[-1, m.skeleton.index("LeftArm"), 2] - 0.4  # left arm hangs down
