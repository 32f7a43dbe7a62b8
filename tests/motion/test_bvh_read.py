"""The BVH reader: a hand-checked fixture, every shared real file, units, axes, continuity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.motion.bvh import read_bvh, read_bvh_string
from tracker.motion.units import UNITS

from .conftest import MOCAP_FILES, mocap_ids

# Y-up file coordinates -> Z-up: (x, y, z) -> (z, x, y).
C = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])

# World positions of tests/motion/fixtures/tiny.bvh worked out by hand, in the
# file's own coordinates (cm, Y up), for joints Hips, Chest, Arm, Leg then the
# End Sites of Arm and Leg. Ry(90) maps x -> -z, z -> x; Rx(90) maps y -> z,
# z -> -y; Rz(90) maps x -> y, y -> -x. Channel orders: Hips YXZ, Chest XYZ,
# Arm ZXY, Leg (6 channels) ZYX.
TINY_EXPECTED_CM = np.array(
    [
        # frame 0: rest pose; Leg's position channels (10, 0, 0) equal its OFFSET.
        [(0, 100, 0), (0, 150, 0), (20, 150, 0), (10, 100, 0), (50, 150, 0), (10, 10, 0)],
        # frame 1: root at (5, 100, -5) turned Ry(90); Chest Rz(90) swings the arm up;
        # Leg's position channels put it at (12, -2, 0), Rz(-90) turns its bone to -x.
        [(5, 100, -5), (5, 150, -5), (5, 170, -5), (5, 98, -17), (5, 200, -5), (5, 98, 73)],
        # frame 2: root Ry(90) Rx(90); Chest Rx(90) Ry(90); Arm Rz(90) Rx(90).
        [(0, 100, 0), (50, 100, 0), (70, 100, 0), (0, 100, -10), (70, 70, 0), (-90, 100, -10)],
    ],
    dtype=float,
)


def _world_points(motion) -> np.ndarray:
    pos, _ = motion.global_transforms()
    return np.concatenate([pos, motion.end_site_positions()], axis=1)


def test_tiny_fixture_positions_match_hand_computed_values_exactly(tiny_path: Path) -> None:
    m = read_bvh(tiny_path)
    assert m.source.unit == "cm" and m.source.unit_detected and m.source.up_axis == "Y"
    expected = TINY_EXPECTED_CM @ C.T * 0.01
    np.testing.assert_allclose(_world_points(m), expected, rtol=0, atol=1e-12)


def test_tiny_fixture_structure(tiny_path: Path) -> None:
    m = read_bvh(tiny_path)
    sk = m.skeleton
    assert sk.names == ("Hips", "Chest", "Arm", "Leg")
    assert sk.parents.tolist() == [-1, 0, 1, 0]
    assert sk.channels[2] == ("Zrotation", "Xrotation", "Yrotation")
    assert len(sk.channels[3]) == 6
    assert sk.end_site_parents.tolist() == [2, 3]
    np.testing.assert_allclose(sk.end_site_offsets, [[0, 0.3, 0], [0, 0, -0.9]], atol=1e-15)
    np.testing.assert_allclose(sk.offsets[1], [0, 0, 0.5], atol=1e-15)
    assert m.n_frames == 3 and m.fps == 1 / 0.04
    # A joint without position channels keeps its OFFSET as translation.
    np.testing.assert_allclose(m.translations[:, 1], np.tile([0, 0, 0.5], (3, 1)), atol=1e-15)


def test_arrays_are_read_only(tiny_path: Path) -> None:
    m = read_bvh(tiny_path)
    for a in (m.translations, m.rotations, m.skeleton.offsets, m.skeleton.end_site_offsets):
        with pytest.raises(ValueError):
            a[...] = 0


def test_unit_and_up_axis_overrides(tiny_path: Path) -> None:
    text = tiny_path.read_text()
    in_m = read_bvh_string(text, unit="m")
    assert in_m.source.unit == "m" and in_m.source.scale == 1.0 and not in_m.source.unit_detected
    np.testing.assert_allclose(_world_points(in_m), TINY_EXPECTED_CM @ C.T, atol=1e-10)
    z_up = read_bvh_string(text, unit="cm", up_axis="z")
    assert z_up.source.up_axis == "Z"
    np.testing.assert_allclose(_world_points(z_up), TINY_EXPECTED_CM * 0.01, atol=1e-12)
    with pytest.raises(ValueError, match="valid units"):
        read_bvh_string(text, unit="furlong")
    with pytest.raises(ValueError, match="up axis"):
        read_bvh_string(text, up_axis="W")
    x_up = read_bvh_string(text, unit="cm", up_axis="x")  # X up: (x, y, z) -> (y, z, x)
    assert x_up.source.up_axis == "X"
    np.testing.assert_allclose(_world_points(x_up), TINY_EXPECTED_CM[..., [1, 2, 0]] * 0.01, atol=1e-12)


def test_crlf_and_lf_give_the_same_motion(tiny_path: Path) -> None:
    text = tiny_path.read_text()
    lf = read_bvh_string(text)
    crlf = read_bvh_string(text.replace("\n", "\r\n"))
    np.testing.assert_array_equal(lf.rotations, crlf.rotations)
    np.testing.assert_array_equal(lf.translations, crlf.translations)


def test_comment_lines_and_blank_lines_are_ignored(tiny_path: Path) -> None:
    lines = tiny_path.read_text().splitlines()
    lines.insert(1, "# a comment")
    lines.insert(30, "")
    m = read_bvh_string("\n".join(lines) + "\n\n")
    np.testing.assert_allclose(_world_points(m), TINY_EXPECTED_CM @ C.T * 0.01, atol=1e-12)


def test_euler_angles_wrapping_at_180_give_sign_continuous_quaternions() -> None:
    # Yrotation steps 170, 179, -179, -170: the same physical rotation path through 180 deg.
    frames = "\n".join(f"0 0 0 {a} 0 0" for a in (170, 179, -179, -170))
    text = (
        "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\n"
        "CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation\n"
        "End Site\n{\nOFFSET 0 170 0\n}\n}\n"
        f"MOTION\nFrames: 4\nFrame Time: 0.01\n{frames}\n"
    )
    q = read_bvh_string(text).rotations[:, 0]
    assert np.all(np.sum(q[1:] * q[:-1], axis=1) > 0.99)
    assert q[0, 3] >= 0


@pytest.mark.parametrize("path", MOCAP_FILES, ids=mocap_ids())
def test_every_shared_file_loads_with_continuous_unit_quaternions(path: Path) -> None:
    m = read_bvh(path)
    assert m.n_frames > 1 and m.skeleton.n_joints > 1
    np.testing.assert_allclose(np.linalg.norm(m.rotations, axis=-1), 1.0, atol=1e-12)
    dots = np.sum(m.rotations[1:] * m.rotations[:-1], axis=-1)
    assert dots.min() > 0, "a quaternion flips sign between frames"
    assert np.all(np.isfinite(m.translations))


EXPECTED = {
    # stem prefix: (unit, joints, End Sites, frame time as written)
    "bandai": ("cm", 22, 5, 0.0333333),
    "cmu_02_01": ("asf", 31, 7, 0.008333),
    "cmu_10": ("asf", 31, 7, 0.0083333),
    "ccbase": ("cm", 100, 41, 0.016667),
    "cmu_2": ("cm", 43, 14, 0.00833333),  # cmu_22_25 / cmu_23_22: CMU-Daz
}


@pytest.mark.parametrize("path", MOCAP_FILES, ids=mocap_ids())
def test_shared_file_unit_structure_and_exact_fps(path: Path) -> None:
    key = next(k for k in EXPECTED if k in path.stem)
    unit, n_joints, n_ends, frame_time = EXPECTED[key]
    m = read_bvh(path)
    assert m.source.unit == unit and m.source.scale == UNITS[unit]
    assert m.skeleton.n_joints == n_joints
    assert len(m.skeleton.end_site_parents) == n_ends
    assert m.source.frame_time == frame_time
    assert m.fps == 1.0 / frame_time  # never rounded: 1/0.0083333 = 120.0005 stays


def test_fps_of_soccer_kick_is_not_rounded_to_120() -> None:
    m = read_bvh(next(p for p in MOCAP_FILES if p.stem == "cmu_10_01_soccer_kick"))
    assert m.fps == pytest.approx(120.00048000192, abs=1e-9)
    assert m.n_frames == 802


def test_bandai_six_channel_joints_take_their_position_channels() -> None:
    path = next(p for p in MOCAP_FILES if p.stem == "bandai_walk_normal_001")
    m = read_bvh(path)
    # Hips frame 0: channels (-1.71443, 90.2704, -407.123) cm replace OFFSET (0, 93.9241, -3).
    np.testing.assert_allclose(
        m.translations[0, 1], C @ np.array([-1.71443, 90.2704, -407.123]) * 0.01, atol=1e-12
    )


def test_different_rotation_orders_in_one_file_are_each_honoured() -> None:
    # cmu_22_25 (CMU-Daz): root ZYX, every other joint ZXY. Check one joint against scipy directly.
    path = next(p for p in MOCAP_FILES if p.stem == "cmu_22_25_catch_wallet")
    m = read_bvh(path)
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Frame Time")) + 1
    row = np.array(lines[start + 20].split(), dtype=float)
    abdomen = Rotation.from_euler("ZXY", row[6:9], degrees=True).as_matrix()
    expected = Rotation.from_matrix(C @ abdomen @ C.T)
    got = Rotation.from_quat(m.rotations[20, 1])
    assert (expected.inv() * got).magnitude() < 1e-12
