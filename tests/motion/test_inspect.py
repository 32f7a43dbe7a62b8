"""``tracker inspect`` and the summary facts it reports (height, frame-0 arm pose)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.cli import main
from tracker.motion.bvh import read_bvh
from tracker.motion.motion import Motion
from tracker.motion.summary import LEG_FRACTION, arm_pose, extent, height, side, upper_arms

from .conftest import DEMO_WAVE, MOCAP_FILES, REPO, mocap_ids


def _inspect_json(capsys: pytest.CaptureFixture, *args: str) -> dict:
    assert main(["inspect", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("path", MOCAP_FILES, ids=mocap_ids())
def test_inspect_json_reports_a_human_height_for_every_shared_file(
    path: Path, capsys: pytest.CaptureFixture
) -> None:
    info = _inspect_json(capsys, str(path))
    # posed frame 0, floor to top point: Bandai's top point is the head joint (no head top)
    assert 1.3 <= info["height_m"] <= 2.0
    assert 1.4 <= info["height_from_legs_m"] <= 2.0
    assert abs(info["floor_z_m"]) <= 0.1  # CC_Base: -0.96 m without its root OFFSET
    assert info["convention"] in ("cmu_mb", "cmu_daz", "cc_base", "bandai")
    for key in ("joints", "parents", "frames", "fps", "duration_s", "unit", "up_axis", "height_m"):
        assert key in info
    assert info["parents"][0] == -1 and len(info["parents"]) == len(info["joints"])
    assert info["duration_s"] == pytest.approx((info["frames"] - 1) / info["fps"], rel=1e-12)
    assert info["up_axis"] == "Y"


def test_inspect_text_shows_tree_channels_timing_unit_height_and_pose(
    capsys: pytest.CaptureFixture,
) -> None:
    soccer = next(p for p in MOCAP_FILES if p.stem == "cmu_10_01_soccer_kick")
    assert main(["inspect", str(soccer)]) == 0
    out = capsys.readouterr().out
    assert "802 at 120.00048 fps" in out and "duration 6.675 s" in out
    assert "unit       asf" in out and "detected" in out
    assert "frame 0    T-pose" in out
    assert "height     1.516 m (posed skeleton at frame 0" in out and "stature of 1.743 m" in out
    assert "convention cmu_mb" in out
    assert "clip time  0 = file frame 1" in out
    assert "│       └── LeftLeg " in out and "│           └── LeftFoot " in out
    lines = out.splitlines()
    root = lines[lines.index("joint tree (channels in file order):") + 1]
    assert root.split() == ["Hips", "Xpos", "Ypos", "Zpos", "Zrot", "Yrot", "Xrot"]
    assert "floor      lowest point of frame 0 at z = +0.007 m" in out


def test_inspect_unit_and_up_flags(capsys: pytest.CaptureFixture, tiny_path: Path) -> None:
    detected = _inspect_json(capsys, str(tiny_path))
    metres = _inspect_json(capsys, str(tiny_path), "--unit", "m")
    assert detected["unit"] == "cm" and detected["unit_detected"]
    assert metres["unit"] == "m" and not metres["unit_detected"]
    assert metres["extent_m"] == pytest.approx(100 * detected["extent_m"], rel=1e-12)
    z_up = _inspect_json(capsys, str(tiny_path), "--up", "z")
    # With Z as up, the tiny skeleton (1.4 m along file Y) is flat in frame 0: no height to
    # detect a unit from, so the default (cm) applies.
    assert z_up["up_axis"] == "Z" and z_up["extent_m"] == 0.0 and z_up["unit"] == "cm"


def test_inspect_bad_file_prints_one_error_line_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT a\n{\n  OFFSET 0 0 0\n  CHANNELS 1 Xrot\n}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tracker", "inspect", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert (
        proc.stderr == f"error: {bad}:5: unknown channel name 'Xrot' in joint 'a'; valid: "
        "Xposition Yposition Zposition Xrotation Yrotation Zrotation\n"
    )


def test_inspect_demo_wave(capsys: pytest.CaptureFixture) -> None:
    info = _inspect_json(capsys, str(DEMO_WAVE))
    assert info["frame0_pose"] == "T-pose" and info["fps"] == 60.0
    assert info["height_from_legs_m"] == pytest.approx(0.86 / LEG_FRACTION, abs=1e-9)  # thigh + shank 0.86
    assert info["height_m"] == pytest.approx(1.73, abs=1e-9)
    assert info["extent_m"] == pytest.approx(1.73, abs=1e-9)  # toe bases 0.02 to head top 1.75


# --- summary ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("LeftArm", "L"),
        ("RightForeArm", "R"),
        ("lShldr", "L"),
        ("rShldr", "R"),
        ("UpperArm_L", "L"),
        ("CC_Base_R_Upperarm", "R"),
        ("mixamorig:LeftArm", "L"),
        ("Spine", None),
        ("Head", None),
    ],
)
def test_side_from_joint_name(name: str, expected: str | None) -> None:
    assert side(name) == expected


@pytest.mark.parametrize("path", MOCAP_FILES, ids=mocap_ids())
def test_upper_arms_are_found_in_every_convention(path: Path) -> None:
    m = read_bvh(path)
    arms = upper_arms(m.skeleton)
    assert arms is not None
    names = [m.skeleton.names[j] for j in arms]
    assert names[0] in ("LeftArm", "UpperArm_L", "CC_Base_L_Upperarm", "lShldr")
    assert names[1] in ("RightArm", "UpperArm_R", "CC_Base_R_Upperarm", "rShldr")


FRAME0 = {
    "cmu_10_01_soccer_kick": "T-pose",  # cgspeed's added T-pose frame
    "cmu_10_05_soccer_kick": "T-pose",
    "cmu_22_25_catch_wallet": "T-pose",
    "cmu_23_22_catch_keys": "T-pose",
    "cmu_02_01_walk": "neither",  # its T-pose frame was removed: arms down while walking
    "bandai_walk_normal_001": "neither",
}


@pytest.mark.parametrize("stem, kind", FRAME0.items())
def test_frame0_pose_of_shared_files(stem: str, kind: str) -> None:
    m = read_bvh(next(p for p in MOCAP_FILES if p.stem == stem))
    assert arm_pose(m).kind == kind


def _demo_with_arms_lowered(degrees: float) -> Motion:
    m = read_bvh(DEMO_WAVE)
    rots = np.array(m.rotations[:1])
    sk = m.skeleton
    # Left arm points +Y: turning it about X by -a lowers it by a; the right arm mirrors.
    rots[0, sk.index("LeftArm")] = Rotation.from_euler("x", -degrees, degrees=True).as_quat()
    rots[0, sk.index("RightArm")] = Rotation.from_euler("x", degrees, degrees=True).as_quat()
    return Motion(sk, m.fps, m.translations[:1], rots)


@pytest.mark.parametrize(
    "degrees, kind",
    [
        (0, "T-pose"),
        (15, "T-pose"),
        (45, "A-pose"),
        (60, "A-pose"),
        (85, "neither"),
        (-45, "neither"),
    ],
)
def test_arm_pose_thresholds(degrees: float, kind: str) -> None:
    pose = arm_pose(_demo_with_arms_lowered(degrees))
    assert pose.kind == kind
    assert pose.left_elevation_deg == pytest.approx(-degrees, abs=1e-9)
    assert pose.right_elevation_deg == pytest.approx(-degrees, abs=1e-9)


def test_arms_forward_are_not_a_t_pose() -> None:
    m = _demo_with_arms_lowered(0)
    rots = np.array(m.rotations)
    sk = m.skeleton
    rots[0, sk.index("LeftArm")] = Rotation.from_euler("z", -90, degrees=True).as_quat()
    rots[0, sk.index("RightArm")] = Rotation.from_euler("z", 90, degrees=True).as_quat()
    assert arm_pose(Motion(sk, m.fps, m.translations, rots)).kind == "neither"


def test_height_ignores_the_pose_but_extent_does_not() -> None:
    standing = _demo_with_arms_lowered(45)
    rots = np.array(standing.rotations)
    for knee in ("LeftLeg", "RightLeg"):  # shins swing back to horizontal
        rots[0, standing.skeleton.index(knee)] = Rotation.from_euler(
            "y", 90, degrees=True
        ).as_quat()
    kneeling = Motion(standing.skeleton, 60.0, standing.translations, rots)
    assert height(kneeling) == pytest.approx(height(standing), abs=1e-12)
    # Knees at 0.50 m; the ankles swing back to knee height, so the
    # toe base 0.13 m below the ankle, toe tip 0.06 m below that: 0.31 m; head top 1.75 m.
    assert extent(standing) == pytest.approx(1.73, abs=1e-12)
    assert extent(kneeling) == pytest.approx(1.75 - 0.31, abs=1e-12)


def test_inspect_events_give_the_kick_in_file_frames_and_clip_time(capsys: pytest.CaptureFixture) -> None:
    soccer = next(p for p in MOCAP_FILES if p.stem == "cmu_10_01_soccer_kick")
    info = _inspect_json(capsys, str(soccer), "--events")
    assert info["clip_start_file_frame"] == 1
    kicks = [e for e in info["events"] if e["effector"] == "right_foot" and e["kind"] == "peak_speed"]
    fastest = max(kicks, key=lambda e: e["speed_mps"])
    assert fastest["speed_mps"] > 5.0 and 560 <= fastest["file_frame"] <= 640  # the kick
    assert fastest["clip_time_s"] == pytest.approx((fastest["file_frame"] - 1) / info["fps"], abs=1e-9)
    assert fastest["file_time_s"] == pytest.approx(fastest["file_frame"] / info["fps"], abs=1e-9)
    assert all(e["file_frame"] >= 1 for e in info["events"])  # nothing from the added T-pose
    for ee in ("left_hand", "right_hand", "left_foot", "right_foot", "head"):
        assert {e["kind"] for e in info["events"] if e["effector"] == ee} == {"peak_speed", "lowest"}
    assert main(["inspect", str(soccer), "--events"]) == 0
    assert "clip t (s)" in capsys.readouterr().out


def test_inspect_names_an_unknown_convention_and_events_then_fail_in_one_line(tiny_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tracker", "inspect", str(tiny_path)],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert "convention unknown" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tracker", "inspect", str(tiny_path), "--events"],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("stem", ["cmu_23_22_catch_keys", "cmu_22_25_catch_wallet"])
def test_inspect_events_give_no_hand_peak_from_the_blend_out_of_the_added_t_pose(
        capsys: pytest.CaptureFixture, stem: str) -> None:
    """The Daz conversions blend out of the added T-pose over frames 1-7 (shared/mocap/README.md:
    frame 8 is the first real pose); the retargeter drops frames 0-3/0-4, and the hands' 4-5 m/s
    blend tail after that is no event."""
    path = next(p for p in MOCAP_FILES if p.stem == stem)
    info = _inspect_json(capsys, str(path), "--events")
    assert info["clip_start_file_frame"] in (4, 5)
    hands = [e for e in info["events"] if e["effector"] in ("left_hand", "right_hand") and e["kind"] == "peak_speed"]
    assert hands and all(e["file_frame"] >= 8 for e in hands), hands
    assert all(e["clip_time_s"] > 0 for e in info["events"] if e["kind"] == "peak_speed")


@pytest.mark.parametrize("stem", ["cmu_23_22_catch_keys", "cmu_22_25_catch_wallet"])
def test_inspect_events_find_the_hands_together_at_the_catch(capsys: pytest.CaptureFixture, stem: str) -> None:
    """Both catches: the hands close to 3-5 cm apart by frames 4-8 and hold the object until about frame 50."""
    path = next(p for p in MOCAP_FILES if p.stem == stem)
    info = _inspect_json(capsys, str(path), "--events")
    together = [e for e in info["events"] if e["kind"] == "hands_together"]
    assert together and all(e["effector"] == "hands" and e["distance_m"] <= 0.25 for e in together)
    catch = [e for e in together if 4 <= e["file_frame"] <= 50]
    assert len(catch) == 1 and catch[0]["distance_m"] < 0.05, together
    assert catch[0]["clip_time_s"] == pytest.approx((catch[0]["file_frame"] - info["clip_start_file_frame"])
                                                    / info["fps"], abs=1e-9)
    assert main(["inspect", str(path), "--events"]) == 0
    assert "hands_together" in capsys.readouterr().out
