"""The pelvis's pitch moves only as far as the hips and lower spine need (tracker/retarget/hidden.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.model import load_model
from tracker.retarget.hidden import MARGIN, fit_pitch

LATERAL = np.array([0.0, 1.0, 0.0])


@pytest.fixture(scope="module")
def model():
    return load_model("humanoid")


def _rots(pelvis_pitch_deg, thigh_pitch_deg, trunk_pitch_deg=0.0):
    """World rotations: pelvis, thighs and abdomen pitched about the lateral axis (+ leans forward)."""
    f = len(pelvis_pitch_deg)

    def pitch(deg):
        return Rotation.from_rotvec(np.outer(np.radians(np.broadcast_to(deg, (f,))), LATERAL))

    return {"pelvis": pitch(pelvis_pitch_deg), "left_thigh": pitch(thigh_pitch_deg),
            "right_thigh": pitch(thigh_pitch_deg), "abdomen": pitch(trunk_pitch_deg)}


def _hip_y(model, rots, pelvis):
    kin = model.kinematics()
    j = next(j for j in kin.joints if j.name == "left_hip")
    return ((pelvis * Rotation.from_matrix(j.rotation)).inv() * rots["left_thigh"]).as_rotvec()[:, 1]


def test_joints_in_range_keep_the_rigs_pelvis_exactly(model) -> None:
    rots = _rots(np.linspace(-10, 10, 7), np.linspace(-60, 10, 7))
    out, report = fit_pitch(model.kinematics(), rots, model.spherical_limits(), LATERAL)
    assert np.array_equal(out.as_quat(), rots["pelvis"].as_quat())
    assert report["frames"] == 0


def test_a_pelvis_leaning_back_past_the_hips_range_is_pitched_just_inside_it(model) -> None:
    """A rig's pelvis bone leaning 22 deg back under an upright trunk and thighs: 31 deg of hip
    extension, past the 28.6 deg range; the pelvis pitches by what the range needs, no more."""
    limits = model.spherical_limits()
    hi = limits["left_hip"][1][1]
    rots = _rots(np.full(5, -22.0), np.full(5, 9.0))  # thighs 9 deg back of vertical: 31 deg from the pelvis
    assert _hip_y(model, rots, rots["pelvis"]).min() > hi  # out of range as the rig has it
    out, report = fit_pitch(model.kinematics(), rots, limits, LATERAL)
    y = _hip_y(model, rots, out)
    assert np.all(y <= hi - MARGIN + 1e-6) and np.all(y >= hi - MARGIN - 1e-4)
    assert report["frames"] == 5 and 3.0 < report["max_deg"] < 4.0
    # the thighs and trunk keep their world rotations: only the pelvis turned, about its lateral axis
    turn = (rots["pelvis"].inv() * out).as_rotvec()
    assert np.allclose(turn[:, [0, 2]], 0, atol=1e-12) and np.all(turn[:, 1] > 0)


def test_a_pitch_larger_than_the_clamp_it_saves_is_not_taken(model) -> None:
    """Thighs and trunk both far past the ranges in the same direction: no pitch brings both in,
    and a pelvis turned further than the limbs would be clamped is worse: the rig's pelvis stays."""
    rots = _rots(np.zeros(3), np.full(3, 60.0), trunk_pitch_deg=np.full(3, -60.0))
    out, report = fit_pitch(model.kinematics(), rots, model.spherical_limits(), LATERAL)
    assert np.array_equal(out.as_quat(), rots["pelvis"].as_quat()) and report["frames"] == 0


def test_the_retarget_reports_the_pitch_and_keeps_the_wild_idle_in_range() -> None:
    from pathlib import Path

    from tracker.retarget import load_clip_reference

    path = Path(__file__).resolve().parents[1] / "data" / "bvh_wild" / "pybvh_zup_fingers_idle.bvh"
    q = load_clip_reference(path).quality
    assert q["pelvis_pitch"]["frames"] == q["frames"] and q["pelvis_pitch"]["max_deg"] < 5.0
    assert "left_hip" not in q["clamped_by_joint"] and "right_hip" not in q["clamped_by_joint"]


def test_the_abdomen_pitches_so_a_cc_base_dribble_keeps_its_spine_in_range() -> None:
    """CC_Base's spine puts its own bends between pelvis and chest: copied as they are, the upper
    spine sat at its extension limit in 55 % of the basketball clip's frames (a warning)."""
    from pathlib import Path

    from tracker.retarget import load_clip_reference

    path = Path(__file__).resolve().parents[3] / "shared" / "mocap" / "cmu_06_14_basketball_crossover_dribble_shoot_ccbase.bvh"
    q = load_clip_reference(path).quality
    assert q["abdomen_pitch"]["frames"] > 0.3 * q["frames"] and q["abdomen_pitch"]["max_deg"] < 15.0
    assert q["clamped_by_joint"].get("spine_upper", 0) == 0 and not q["warnings"]
