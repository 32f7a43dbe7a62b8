"""Glitch detection and repair on real clips with injected flips; contact labels with hysteresis."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.retarget.conftest import MOCAP_DIR
from tracker.motion.bvh import read_bvh
from tracker.motion.motion import Motion
from tracker.retarget.contacts import ContactParams, clean_runs, detect_contacts, hysteresis
from tracker.retarget.glitches import find_glitches, glitch_report, repair_glitches

CLIPS = ["cmu_02_01_walk", "bandai_kick_normal_001", "cmu_06_01_walk_ccbase", "cmu_23_22_catch_keys"]


def _inject(motion: Motion, joint: str, start: int, length: int, angle_deg: float, axis=(0.3, 1.0, 0.2)) -> Motion:
    rot = np.array(motion.rotations)
    j = motion.skeleton.names.index(joint)
    ax = np.asarray(axis, float) / np.linalg.norm(axis)
    flip = Rotation.from_rotvec(ax * np.radians(angle_deg))
    rot[start:start + length, j] = (Rotation.from_quat(rot[start:start + length, j]) * flip).as_quat()
    return Motion(motion.skeleton, motion.fps, motion.translations, rot, source=motion.source)


def _hand(motion: Motion) -> str:
    return next(n for n in motion.skeleton.names if n in ("LeftHand", "Hand_L", "CC_Base_L_Hand", "lHand"))


@pytest.mark.parametrize("name", CLIPS)
def test_every_injected_flip_is_found_at_its_frames_and_repaired(name):
    motion = read_bvh(MOCAP_DIR / f"{name}.bvh")
    base = {(g.joint, g.start) for g in find_glitches(motion)}
    hand = _hand(motion)
    knee = next(n for n in motion.skeleton.names if n in ("LeftLeg", "LowerLeg_L", "CC_Base_L_Calf", "lShin"))
    injected = [(hand, 40, 1, 174.0), (knee, 90, 2, 120.0), (hand, 120, 3, 60.0)]
    bad = motion
    for joint, start, length, angle in injected:
        bad = _inject(bad, joint, start, length, angle)
    found = [g for g in find_glitches(bad) if (g.joint, g.start) not in base]
    spans = {(g.joint, g.start, g.stop) for g in found}
    for joint, start, length, _ in injected:
        assert (joint, start, start + length - 1) in spans, (joint, start, spans)
    assert len(found) == len(injected)  # nothing else is flagged
    fixed = repair_glitches(bad, found)
    j = motion.skeleton.names.index(hand)
    err = np.degrees((Rotation.from_quat(fixed.rotations[:, j]).inv()
                      * Rotation.from_quat(motion.rotations[:, j])).magnitude())
    assert err.max() < 15.0  # the 174-degree flip is gone; the slerp is close to the true motion


def test_a_real_fast_kick_is_not_a_glitch():
    motion = read_bvh(MOCAP_DIR / "cmu_10_05_soccer_kick.bvh")
    legs = {"LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot"}
    assert not [g for g in find_glitches(motion) if g.joint in legs]


def test_glitches_are_reported_in_file_frames_and_clip_time():
    from tracker.retarget.glitches import Glitch

    (rep,) = glitch_report([Glitch("LeftHand", 10, 11, 174.0)], first_file_frame=4, fps=120.0)
    assert rep["joint"] == "LeftHand" and rep["file_frames"] == [14, 15] and rep["jump_deg"] == 174.0
    assert rep["clip_times_s"] == pytest.approx([10 / 120, 11 / 120], abs=1e-6)


def test_retarget_reports_and_repairs_a_flip_and_no_repair_keeps_it():
    from tracker.character.model import load_model
    from tracker.retarget.retarget import RetargetOptions, retarget

    motion = read_bvh(MOCAP_DIR / "cmu_02_01_walk.bvh")
    bad = _inject(motion, "LeftHand", 100, 1, 174.0)
    mdl = load_model("humanoid")
    kin = mdl.kinematics()
    lim = mdl.spherical_limits()
    fixed = retarget(bad, kin, None, RetargetOptions(), spherical_limits=lim)
    kept = retarget(bad, kin, None, RetargetOptions(repair_glitches=False), spherical_limits=lim)
    g = fixed.quality["glitches"]
    assert [(x["joint"], x["file_frames"]) for x in g] == [("LeftHand", [100])]
    assert kept.quality["glitches"] == g and not kept.quality["glitches_repaired"]
    wrist = fixed.layout["left_wrist"].q

    def jump(ref):
        r = Rotation.from_quat(ref.q[:, wrist])
        return np.degrees((r[:-1].inv() * r[1:]).magnitude())[95:105].max()

    assert jump(kept) > 40.0 and jump(fixed) < 10.0


def test_hysteresis_enters_low_and_slow_and_leaves_high_or_fast():
    p = ContactParams(height_on=0.03, height_off=0.06, speed_on=0.3, speed_off=0.6)
    h = np.array([0.10, 0.02, 0.045, 0.05, 0.07, 0.045, 0.02, 0.02])
    v = np.array([0.00, 0.10, 0.50, 0.10, 0.10, 0.10, 0.10, 0.70])
    assert hysteresis(h, v, p).tolist() == [False, True, True, True, False, False, True, False]


def test_short_runs_are_dropped_and_short_gaps_filled():
    m = np.array([1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0], bool)
    assert clean_runs(m, min_len=2, max_gap=2).astype(int).tolist() == [1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]


def test_a_synthetic_gait_gives_stance_flat_and_toe_only_phases():
    fps = 100.0
    t = np.arange(200) / fps
    heel = np.zeros((200, 2, 3))
    toe = np.zeros((200, 2, 3))
    heel[:, :, 2] = 0.08
    toe[:, :, 2] = 0.03
    # left foot: stance to 0.8 s, then the heel rises (toe still down) to 1.0 s, then swing
    swing = t >= 1.0
    heel[:, 0, 2] += np.where(t >= 0.8, 0.7 * (t - 0.8), 0.0) + np.where(swing, 0.1, 0.0)
    toe[swing, 0, 2] += 0.1
    heel[swing, 0, 0] = toe[swing, 0, 0] = 1.2 * (t[swing] - 1.0)
    c = detect_contacts(heel, toe, fps)
    assert c.contact[:80, 0].all() and c.flat[:75, 0].all()
    assert c.toe[85:97, 0].all() and not c.heel[85:97, 0].any()
    assert not c.contact[105:, 0].any()
    assert c.contact[:, 1].all()
