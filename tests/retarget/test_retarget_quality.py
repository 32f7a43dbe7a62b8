"""Retargeting every shared clip (four skeleton conventions) meets the quality bar."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.retarget.conftest import MOCAP_FILES, retarget_parts

CONVENTIONS = {"cmu_mb", "cmu_daz", "cc_base", "bandai"}
# On the de Leva humanoid the end effectors are within 0.10 m of the scaled source on every
# clip. CMU subject 10 (cgspeed skeleton) is the worst: after scaling by leg length its trunk
# is 10 cm and its forearms 8 cm shorter than the humanoid's, so faithful rotations leave
# the hands and neck 11-16 cm off (mean 0.09 m); the fitted model removes that.
EE_LIMIT = 0.10


def test_the_shared_clips_cover_four_conventions():
    seen = {retarget_parts(p.stem)[0].quality["convention"] for p in MOCAP_FILES}
    assert seen == CONVENTIONS


def test_bone_directions_agree_on_average(clip_name):
    q = retarget_parts(clip_name)[0].quality
    # 0.965, not 0.97: where a rig's hand bone sits beyond the wrist's range for the whole clip
    # (CC_Base punch: 54 degrees), the hand's neutral is shifted into the range, and its bone
    # then deliberately differs from the source's by that much
    assert q["bone_cos_mean"] >= 0.965


def test_no_limb_flips_hands_included_and_the_worst_frame_is_named(clip_name):
    q = retarget_parts(clip_name)[0].quality
    worst = min(q["bones"].items(), key=lambda kv: kv[1]["cos_min"])
    assert worst[1]["cos_min"] >= 0.5, worst
    assert q["bone_cos_min"] >= 0.5 and q["bone_cos_min_link"] == worst[0]
    assert 0 <= q["bone_cos_min_frame"] < q["frames"]


def test_stance_feet_touch_the_floor_in_every_contact_frame(clip_name):
    ref, _, kin = retarget_parts(clip_name)
    q = ref.quality
    assert q["foot_penetration_max_m"] <= 0.01
    assert abs(q["foot_float_median_m"]) <= 0.01
    assert q["contact_height_p95_m"] <= 0.01  # each stance foot, not only the lower one
    assert q["contact_frames"] >= 0.5 * q["frames"]  # every shared clip stands or walks
    # independently of the report: the sole of each foot in its contact frames
    for k, foot in enumerate(("left_foot", "right_foot")):
        low = kin.lowest_point(ref.q[ref.contacts[:, k]], [foot])
        assert np.abs(low).max() <= 0.012, (foot, np.abs(low).max())
        # and never sinks into it: a stance foot whose ankle is at its limit needs the sole-height
        # refinement run to convergence (three passes left CMU 10_01's left sole 5 mm under)
        assert low.min() >= -0.002, (foot, low.min())


def test_feet_slide_no_more_than_the_source_in_contact_frames(clip_name):
    q = retarget_parts(clip_name)[0].quality
    assert q["foot_skating_mps"] <= q["source_skating_mps"] + 0.05
    # the 95th percentile is looser: where only the toe is down (a kick's pivot) the character's
    # contact point is the front of its sole box, which is not where the source's toe joint is
    assert q["foot_skating_p95_mps"] <= q["source_skating_p95_mps"] + 0.2


def test_wrists_are_at_their_limits_in_at_most_5_percent_of_frames(clip_name):
    ref = retarget_parts(clip_name)[0]
    clamped = ref.quality["clamped_by_joint"]
    for wrist in ("left_wrist", "right_wrist"):
        assert clamped.get(wrist, 0) <= 0.05 * ref.n_frames, (wrist, clamped)


def test_end_effectors_follow_the_scaled_source(clip_name):
    q = retarget_parts(clip_name)[0].quality
    assert q["ee_error_mean_m"] <= EE_LIMIT, q["ee_error"]


def test_foot_ik_brings_the_feet_within_3_5_cm(clip_name):
    q = retarget_parts(clip_name, ik=True)[0].quality
    feet = np.mean([q["ee_error"]["left_foot"], q["ee_error"]["right_foot"]])
    # in contact frames the ankle's height is set by the floor and the character's foot, not by
    # the source ankle's height above its floor, hence a few mm more than the free IK's 3 cm
    assert feet <= 0.035
    assert q["foot_penetration_max_m"] <= 0.01


def test_the_clip_faces_plus_x_at_the_start(clip_name):
    ref = retarget_parts(clip_name)[0]
    fwd = Rotation.from_quat(ref.q[0, 3:7]).apply([1.0, 0, 0])
    assert abs(np.arctan2(fwd[1], fwd[0])) < 1e-6  # heading (yaw) zero; the trunk may lean


def test_velocities_have_no_spikes_at_quaternion_sign_changes(clip_name):
    ref = retarget_parts(clip_name)[0]
    lay = ref.layout
    # finite-difference speeds of every spherical joint; the smoothed v must stay close to them
    for s in lay.joints:
        if s.kind != "spherical":
            continue
        w = np.linalg.norm(ref.v[:, s.v], axis=1)
        r = Rotation.from_quat(ref.q[:, s.q])
        fd = np.linalg.norm((r[:-1].inv() * r[1:]).as_rotvec(), axis=1) * ref.fps
        assert w.max() <= 1.5 * fd.max() + 1.0, s.name


def test_joint_limits_hold_and_are_counted(clip_name):
    from tracker.character.model import load_model

    ref = retarget_parts(clip_name)[0]
    model = load_model("humanoid")
    lim = model.spherical_limits()
    lay = ref.layout
    for name, (lo, hi) in lim.items():
        rv = Rotation.from_quat(ref.q[:, lay[name].q]).as_rotvec()
        assert (rv >= lo - 1e-6).all() and (rv <= hi + 1e-6).all(), name
    counts = ref.quality["clamped_by_joint"]
    assert ref.quality["clamped_frames"] <= ref.n_frames
    assert all(0 < c <= ref.n_frames for c in counts.values())


def test_the_report_names_the_segment_ratios_that_put_cmu_subject_10s_hands_off():
    q = retarget_parts("cmu_10_01_soccer_kick")[0].quality
    r = q["segment_ratios"]
    assert set(r) == {"upper_arm", "forearm", "thigh", "shank", "trunk", "shoulder_width"}
    assert abs(r["thigh"] + r["shank"] - 2.0) < 0.05  # scaled by leg length
    assert r["trunk"] < 0.9 and r["forearm"] < 0.8  # a short trunk and forearms: hands and neck 11-16 cm off
    assert q["ee_error"]["head"] > 0.08 and q["ee_error"]["right_hand"] > 0.1
