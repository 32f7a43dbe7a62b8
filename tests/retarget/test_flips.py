"""Lasting flips on real clips: found, reported in file frames and clip time, repaired by continuity;
Euler branch changes and real fast motion left alone; motion too fast to follow reported."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.retarget.conftest import MOCAP_DIR, MOCAP_FILES
from tracker.motion.bvh import read_bvh, read_bvh_string
from tracker.motion.motion import Motion
from tracker.retarget.flips import (Fast, Flip, bone_axes, fast_report, find_fast, find_flips, flip_report,
                                    repair_flips)
from tracker.retarget.glitches import Glitch, find_glitches, glitch_report

HANDS = [("cmu_02_01_walk", "LeftHand"), ("cmu_02_01_walk", "RightHand"), ("bandai_walk_normal_001", "Hand_L"),
         ("cmu_06_01_walk_ccbase", "CC_Base_L_Hand"), ("cmu_23_22_catch_keys", "lHand")]
#: The only lasting flips in the shared clips: a thumb that turns over for seven frames, twice.
REAL_FLIPS = {
    "cmu_06_14_basketball_crossover_dribble_shoot_ccbase": [("CC_Base_L_Thumb1", 31, "flip"),
                                                           ("CC_Base_L_Thumb1", 38, "flip")],
    "cmu_10_05_soccer_kick": [("LThumb", 397, "flip"), ("LThumb", 404, "flip")],
}
TOL_DEG = 1.5  # what a repair may leave: the predicted step's error, about one step's change of speed


def _read(name: str) -> Motion:
    return read_bvh(MOCAP_DIR / f"{name}.bvh")


def _with(motion: Motion, rot: np.ndarray, start: int = 0) -> Motion:
    return Motion(motion.skeleton, motion.fps, motion.translations[start:], rot[start:], source=motion.source)


def _turn(motion: Motion, joint: str, frame: int, angle_deg: float, axis=None, stop: int | None = None,
          undo_in: tuple[str, ...] = ()) -> Motion:
    """``joint`` turned by ``angle_deg`` about ``axis`` (its bone axis if None) in its own frame, from
    ``frame`` to ``stop`` (the end if None); each child in ``undo_in`` turned back so that its world
    rotation stays."""
    sk = motion.skeleton
    j = sk.index(joint)
    ax = bone_axes(sk)[j] if axis is None else np.asarray(axis, float) / np.linalg.norm(axis)
    turn = Rotation.from_rotvec(ax * np.radians(angle_deg))
    rot = np.array(motion.rotations)
    span = slice(frame, stop)
    rot[span, j] = (Rotation.from_quat(rot[span, j]) * turn).as_quat()
    for child in undo_in:
        c = sk.index(child)
        rot[span, c] = (turn.inv() * Rotation.from_quat(rot[span, c])).as_quat()
    return _with(motion, rot)


def _deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angles between xyzw quaternions ``(..., 4)``, degrees (``(...)``)."""
    a, b = np.asarray(a), np.asarray(b)
    rel = Rotation.from_quat(a.reshape(-1, 4)).inv() * Rotation.from_quat(b.reshape(-1, 4))
    return np.degrees(rel.magnitude()).reshape(a.shape[:-1])


def _world(motion: Motion) -> np.ndarray:
    return motion.global_transforms()[1]


@pytest.mark.parametrize("name, hand, axis", [("cmu_02_01_walk", "LeftHand", (0, 1, 0)),  # to LeftHandIndex1
                                              ("cmu_06_01_walk_ccbase", "CC_Base_L_Hand", (0, 0, 1)),  # Ring1
                                              ("bandai_walk_normal_001", "Hand_L", (0, 1, 0))])  # its own offset
def test_a_hands_bone_axis_runs_to_the_finger_that_continues_the_forearm(name, hand, axis):
    # CMU's LeftFingerBase and LThumb are at the wrist (zero offsets); Bandai's End Site is too.
    sk = _read(name).skeleton
    np.testing.assert_allclose(bone_axes(sk)[sk.index(hand)], axis, atol=1e-5)


@pytest.mark.parametrize("name, hand", HANDS)
def test_a_hand_turned_155_degrees_about_its_bone_is_found_reported_and_repaired(name, hand):
    motion = _read(name)
    j = motion.skeleton.index(hand)
    bad = _turn(motion, hand, 100, 155.0)
    (flip,) = find_flips(bad)
    assert (flip.joint, flip.frame, flip.kind, flip.compensated) == (hand, 100, "twist", ())
    assert flip.jump_deg == pytest.approx(155.0, abs=3.0)  # plus or minus the clip's own step
    glitches = {(g.joint, g.start) for g in find_glitches(motion)}
    assert {(g.joint, g.start) for g in find_glitches(bad)} == glitches  # lasting: not a glitch
    (rep,) = flip_report([flip], first_file_frame=0, fps=motion.fps)
    assert (rep["joint"], rep["file_frame"], rep["kind"]) == (hand, 100, "twist")
    assert rep["clip_time_s"] == pytest.approx(100 / motion.fps, abs=1e-6)

    fixed = repair_flips(bad, [flip])
    np.testing.assert_array_equal(fixed.rotations[:100], motion.rotations[:100])
    residual = Rotation.from_quat(motion.rotations[100:, j]).inv() * Rotation.from_quat(fixed.rotations[100:, j])
    along = residual.as_rotvec() @ bone_axes(motion.skeleton)[j]
    # A constant turn about the bone: the bone exactly where the clip has it, the twist continuous.
    assert np.abs(np.linalg.norm(residual.as_rotvec(), axis=1) - np.abs(along)).max() < 1e-9
    assert np.ptp(along) < 1e-9 and np.degrees(np.abs(along).max()) < TOL_DEG
    others = [k for k in range(motion.skeleton.n_joints) if k != j]
    np.testing.assert_array_equal(fixed.rotations[:, others], motion.rotations[:, others])


def test_a_hand_turned_about_another_axis_is_a_flip_and_is_repaired_too():
    motion = _read("cmu_02_01_walk")
    j = motion.skeleton.index("LeftHand")
    bone = bone_axes(motion.skeleton)[j]
    side = np.cross(bone, [0.3, 0.1, 0.9])
    for deg, off in ((155.0, 10.0), (120.0, 90.0)):
        axis = np.cos(np.radians(off)) * bone + np.sin(np.radians(off)) * side / np.linalg.norm(side)
        bad = _turn(motion, "LeftHand", 100, deg, axis=axis)
        flips = find_flips(bad)
        assert [(f.joint, f.frame, f.kind) for f in flips] == [("LeftHand", 100, "flip")]
        fixed = repair_flips(bad, flips)
        assert _deg(fixed.rotations[:, j], motion.rotations[:, j]).max() < TOL_DEG
    # Below ``flip_deg`` (90) a jump that moves the bone may be real motion: left alone.
    assert find_flips(_turn(motion, "LeftHand", 100, 80.0, axis=side)) == []


@pytest.mark.parametrize("name, parent, child", [("cmu_02_01_walk", "LeftForeArm", "LeftHand"),
                                                 ("cmu_02_01_walk", "RightUpLeg", "RightLeg"),
                                                 ("bandai_walk_normal_001", "LowerArm_L", "Hand_L")])
def test_a_parent_flip_that_its_child_undoes_is_repaired_jointly_keeping_the_childs_world_rotation(
        name, parent, child):
    motion = _read(name)
    sk = motion.skeleton
    bad = _turn(motion, parent, 120, 180.0, undo_in=(child,))
    assert np.abs(_deg(_world(bad)[:, sk.index(child)], _world(motion)[:, sk.index(child)])).max() < 1e-6
    (flip,) = find_flips(bad)  # one flip: the child's local jump is its compensation, not a flip
    assert (flip.joint, flip.frame, flip.kind, flip.compensated) == (parent, 120, "twist", (child,))
    fixed = repair_flips(bad, [flip])
    err = _deg(_world(fixed), _world(motion)).max(axis=0)  # (J,) degrees
    p = sk.index(parent)
    assert err[p] < TOL_DEG
    assert np.delete(err, p).max() < 1e-6  # every other joint's world rotation is the clip's


@pytest.mark.parametrize("name, joints", [("cmu_02_01_walk", ("LeftHand", "LeftArm", "RightUpLeg")),
                                          ("bandai_walk_normal_001", ("Hand_L", "UpperArm_L", "Hips"))])
def test_an_euler_branch_change_in_the_file_is_the_same_rotation_and_not_reported(name, joints):
    motion = _read(name)
    sk = motion.skeleton
    cols, c = {}, 0
    for joint, channels in zip(sk.names, sk.channels):
        cols[joint] = [c + i for i, ch in enumerate(channels) if ch.endswith("rotation")]
        c += len(channels)
    head, sep, rest = (MOCAP_DIR / f"{name}.bvh").read_text().partition("Frame Time:")
    frame_time, _, block = rest.partition("\n")
    rows = []
    for f, row in enumerate(block.split("\n")):
        v = row.split()
        if f >= 100 and v:  # (a, b, c) -> (a + 180, 180 - b, c - 180) from frame 100 on
            for joint in joints:
                i, k, m = cols[joint]
                v[i], v[k], v[m] = (f"{float(v[i]) + 180:.6f}", f"{180 - float(v[k]):.6f}",
                                    f"{float(v[m]) - 180:.6f}")
        rows.append(" ".join(v))
    branch = read_bvh_string(head + sep + frame_time + "\n" + "\n".join(rows), name=name)
    dots = np.abs(np.sum(np.asarray(branch.rotations) * motion.rotations, axis=-1))
    assert dots.min() > 1 - 1e-12  # the same rotations
    assert find_flips(branch) == []
    assert [(g.joint, g.start, g.stop) for g in find_glitches(branch)] == [
        (g.joint, g.start, g.stop) for g in find_glitches(motion)]


@pytest.mark.parametrize("name", [p.stem for p in MOCAP_FILES])
def test_the_shared_clips_have_no_lasting_flips_but_two_thumbs_that_turn_over_for_seven_frames(name):
    motion = _read(name)
    flips = find_flips(motion)
    assert [(f.joint, f.frame, f.kind) for f in flips] == REAL_FLIPS.get(name, [])
    fixed = repair_flips(motion, flips)
    for f in flips:  # each flip's step becomes one like the thumb's others (5-10 degrees at 120 fps)
        j = motion.skeleton.index(f.joint)
        assert _deg(fixed.rotations[f.frame - 1, j], fixed.rotations[f.frame, j]) < 15.0
    if flips:  # the second flip turns the thumb back: from there on it is the clip's own
        j, back = motion.skeleton.index(flips[-1].joint), flips[-1].frame
        assert _deg(fixed.rotations[back:, j], motion.rotations[back:, j]).max() < 1e-6


def test_a_real_kick_is_not_repaired_and_its_ball_impact_is_reported_as_fast():
    legs = ("RightUpLeg", "RightLeg", "RightFoot", "RightToeBase", "LeftUpLeg", "LeftLeg", "LeftFoot")
    motion = _read("cmu_10_01_soccer_kick")
    flips = find_flips(motion)
    assert not [f for f in flips if f.joint in legs]
    fixed = repair_flips(motion, flips)
    idx = [motion.skeleton.index(n) for n in legs]
    np.testing.assert_array_equal(fixed.rotations[:, idx], motion.rotations[:, idx])

    kick = _read("cmu_10_05_soccer_kick")
    kick = _with(kick, np.asarray(kick.rotations), start=1)  # without the added T-pose
    assert not [f for f in find_flips(kick) if f.joint in legs]
    fast = find_fast(repair_flips(kick, find_flips(kick)))
    # The kicking foot turns 42 degrees in one 120 fps step as it strikes the ball (file frame 303).
    (hit,) = [x for x in fast if x.joint == "RightFoot" and x.start <= 302 <= x.stop]
    assert hit.peak_speed > 40.0
    assert not [x for x in fast if x.joint in ("RightUpLeg", "RightLeg")]


def test_a_flip_is_reported_in_file_frames_and_clip_time_after_a_dropped_first_frame():
    raw = _read("cmu_10_01_soccer_kick")  # file frame 0 is the added T-pose
    bad = _turn(raw, "LeftHand", 300, 155.0)
    clip = _with(bad, np.asarray(bad.rotations), start=1)
    flips = [f for f in find_flips(clip) if f.joint == "LeftHand"]
    assert [(f.frame, f.kind) for f in flips] == [(299, "twist")]
    (rep,) = flip_report(flips, first_file_frame=1, fps=clip.fps)
    assert rep["file_frame"] == 300
    assert rep["clip_time_s"] == pytest.approx(299 / clip.fps, abs=1e-6)
    same = glitch_report([Glitch("LeftHand", 299, 299, 155.0)], first_file_frame=1, fps=clip.fps)[0]
    assert (same["file_frames"], same["clip_times_s"]) == ([rep["file_frame"]], [rep["clip_time_s"]])
    (rep,) = flip_report([Flip("LeftHand", 10, 155.04, "flip", ("LeftFingerBase",))], first_file_frame=4, fps=120.0)
    assert rep == {"joint": "LeftHand", "file_frame": 14, "clip_time_s": round(10 / 120, 6), "jump_deg": 155.0,
                   "kind": "flip", "compensated": ["LeftFingerBase"]}


def test_a_short_glitch_is_not_also_a_lasting_flip_and_a_longer_one_is_two_flips_that_cancel():
    motion = _read("cmu_02_01_walk")
    j = motion.skeleton.index("LeftHand")
    bad = motion
    for start, length in ((40, 1), (90, 2), (150, 3), (220, 4)):
        bad = _turn(bad, "LeftHand", start, 174.0, stop=start + length)
    assert {(g.start, g.stop) for g in find_glitches(bad) if g.joint == "LeftHand"} >= {
        (40, 40), (90, 91), (150, 152), (220, 223)}
    assert find_flips(bad) == []

    bad = _turn(motion, "LeftHand", 100, 155.0, stop=108)
    flips = find_flips(bad)
    assert [(f.joint, f.frame) for f in flips] == [("LeftHand", 100), ("LeftHand", 108)]
    assert not [g for g in find_glitches(bad) if g.joint == "LeftHand"]
    fixed = repair_flips(bad, flips)
    assert _deg(fixed.rotations[:, j], motion.rotations[:, j]).max() < TOL_DEG


def test_a_joint_spun_faster_than_the_limit_is_reported_as_fast_and_a_slower_one_is_not():
    motion = _read("cmu_02_01_walk")
    j = motion.skeleton.index("LeftForeArm")
    assert find_fast(motion) == []
    t = np.arange(motion.n_frames)
    for speed, found in ((40.0, True), (15.0, False)):
        spin = Rotation.from_rotvec(np.outer(np.clip(t - 100, 0, 10) / motion.fps * speed, [0.0, 0.6, 0.8]))
        rot = np.array(motion.rotations)
        rot[:, j] = (Rotation.from_quat(rot[:, j]) * spin).as_quat()
        fast = find_fast(_with(motion, rot))
        if not found:
            assert fast == []
            continue
        (span,) = fast
        assert span.joint == "LeftForeArm" and 98 <= span.start <= 100 and 110 <= span.stop <= 112
        assert span.peak_speed == pytest.approx(speed, abs=6.0)  # plus or minus the forearm's own speed
    (rep,) = fast_report([Fast("RightFoot", 10, 12, 46.06)], first_file_frame=1, fps=120.0)
    assert rep == {"joint": "RightFoot", "file_frames": [11, 12, 13],
                   "clip_times_s": [round(k / 120, 6) for k in (10, 11, 12)], "peak_speed_rad_s": 46.1}


@pytest.mark.parametrize("name, hand, link", [("bandai_walk_normal_001", "Hand_L", "left_hand"),
                                              ("cmu_02_01_walk", "LeftHand", "left_hand")])
def test_the_retargeted_reference_of_a_repaired_flip_matches_the_unflipped_clip(name, hand, link):
    from tracker.character.model import load_model
    from tracker.retarget.retarget import RetargetOptions, retarget

    mdl = load_model("humanoid")
    kin, lim = mdl.kinematics(), mdl.spherical_limits()
    motion = _read(name)
    bad = _turn(motion, hand, 100, 155.0)
    # the retargeter repairs lasting flips itself; with repair off the flip passes into the reference
    refs = [retarget(m, kin, None, RetargetOptions(repair_glitches=repair), spherical_limits=lim)
            for m, repair in ((motion, True), (bad, False), (bad, True))]
    assert [f["joint"] for f in refs[2].quality["flips"]] == [hand] and refs[2].quality["flips"][0]["file_frame"] == 100
    wrist = refs[0].layout["left_wrist"].q

    def jump(ref) -> float:
        r = Rotation.from_quat(ref.q[95:105, wrist])
        return float(np.degrees((r[:-1].inv() * r[1:]).magnitude()).max())

    clean, flipped, fixed = refs
    assert jump(flipped) > 60.0 and jump(fixed) == pytest.approx(jump(clean), abs=1.0)
    assert fixed.quality["bone_cos_min"] == pytest.approx(clean.quality["bone_cos_min"], abs=0.02)
    assert fixed.quality["bones"][link]["cos_min"] == pytest.approx(clean.quality["bones"][link]["cos_min"], abs=0.02)
