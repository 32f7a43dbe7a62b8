"""Contacts hold in a walk's double support, every clip that starts on its feet starts on the floor,
and a jump stays in the air (:mod:`tracker.retarget.contacts`)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from tests.retarget.conftest import MOCAP_DIR, MOCAP_FILES, retarget_parts
from tracker.motion.bvh import read_bvh
from tracker.motion.motion import Motion
from tracker.retarget.contacts import detect_contacts

#: The shared clips that walk (the catch clips walk while they catch).
WALKS = ["cmu_02_01_walk", "cmu_06_01_walk_ccbase", "bandai_walk_normal_001", "cmu_23_22_catch_keys",
         "cmu_22_25_catch_wallet"]
FEET = ["left_foot", "right_foot"]


def hand_overs(contact: np.ndarray) -> list[tuple[int, int, bool]]:
    """Each change of the one foot that carries the body: ``(last frame on the old foot alone, first
    frame on the new one alone, both feet down in between)``."""
    state = contact[:, 0] + 2 * contact[:, 1].astype(int)  # 0 none, 1 left, 2 right, 3 both
    out, alone, since, both = [], None, None, False
    for t, s in enumerate(state):
        if s in (1, 2):
            if alone is not None and s != alone:
                out.append((since, t, both))
            alone, since, both = s, t, False
        elif s == 3:
            both = True
    return out


def test_hand_overs_are_counted_from_single_support_to_single_support():
    c = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [1, 0], [1, 0], [0, 1]], bool)
    assert hand_overs(c) == [(0, 2, True), (2, 4, False), (5, 6, False)]


@lru_cache(maxsize=None)
def _retarget(name: str, step: int = 1, lift: tuple[int, float] | None = None, start: int = 0):
    """A shared clip retargeted with every ``step``-th frame, its root optionally thrown up on a ballistic
    arc ``lift = (first frame, peak height m)``, cut to begin at frame ``start``."""
    from tracker.character.model import load_model
    from tracker.retarget.retarget import RetargetOptions, retarget

    motion = read_bvh(MOCAP_DIR / f"{name}.bvh")
    trans = np.array(motion.translations[::step])
    fps = motion.fps / step
    if lift is not None:
        first, peak = lift
        v0 = np.sqrt(2 * 9.81 * peak)
        t = (np.arange(len(trans)) - first) / fps
        trans[:, 0, 2] += np.clip(v0 * t - 0.5 * 9.81 * t**2, 0.0, None) * (t >= 0)
    rot = np.array(motion.rotations[::step])
    clip = Motion(motion.skeleton, fps, trans[start:], rot[start:], source=motion.source)
    mdl = load_model("humanoid")
    kin = mdl.kinematics()
    return retarget(clip, kin, None, RetargetOptions(), spherical_limits=mdl.spherical_limits()), kin


@pytest.mark.parametrize("name", WALKS)
def test_every_hand_over_of_a_shared_walk_has_both_feet_down(name):
    ref = retarget_parts(name)[0]
    steps = hand_overs(ref.contacts)
    assert len(steps) >= 2, steps  # each clip takes steps
    assert all(both for *_, both in steps), [s for s in steps if not s[2]]


@pytest.mark.parametrize("name, step", [("cmu_02_01_walk", 4), ("cmu_02_01_walk", 5), ("cmu_06_01_walk_ccbase", 2),
                                        ("cmu_22_25_catch_wallet", 3)])
def test_double_support_is_found_at_24_to_40_fps_too(name, step):
    ref, kin = _retarget(name, step)
    assert 23.9 <= ref.fps <= 40.1
    steps = hand_overs(ref.contacts)
    assert len(steps) >= 2 and all(both for *_, both in steps), steps
    assert ref.contacts[0].any()
    assert abs(kin.lowest_point(ref.q[:1], FEET)[0]) <= 0.01


@pytest.mark.parametrize("name", [p.stem for p in MOCAP_FILES])
def test_every_shared_clip_starts_with_a_foot_on_the_floor(name):
    ref, _, kin = retarget_parts(name)
    assert ref.contacts[0].any()  # all twelve start standing or walking
    assert abs(kin.lowest_point(ref.q[:1], FEET)[0]) <= 0.01  # the lower sole, m


def test_a_walk_on_a_tilted_floor_keeps_its_late_steps():
    # the CMU walk's floor rises about 5 cm over its 3.5 m: its last steps stand 3-5 cm above the
    # first ones, and a floor taken at the clip's lowest points lost them (67 frames with no foot down)
    ref = retarget_parts("cmu_02_01_walk")[0]
    assert ref.contacts.any(axis=1).all()
    assert ref.contacts[-60:, 0].all()  # the last step of the left foot


def test_a_thrown_root_flies_and_lands():
    # a standing clip thrown up by 20 cm on a ballistic arc from frame 20 (0.40 s in the air at 30 fps)
    ref, kin = _retarget("bandai_raise_up_both_hands_normal_070", lift=(20, 0.20))
    low = kin.lowest_point(ref.q, FEET)
    flight = np.arange(21, 32)  # frames strictly inside the arc
    assert not ref.contacts[flight].any()
    assert low[flight].min() > 0.04 and low[26] > 0.15  # the feet leave the floor, up to the peak
    assert ref.contacts[:20].any(axis=1).all() and ref.contacts[34:].any(axis=1).all()


def test_a_clip_that_starts_in_the_air_keeps_no_contact_at_frame_0():
    # the same throw, cut at its peak: frame 0 is 20 cm up, falling
    ref, kin = _retarget("bandai_raise_up_both_hands_normal_070", lift=(20, 0.20), start=26)
    assert not ref.contacts[0].any()
    assert kin.lowest_point(ref.q[:1], FEET)[0] > 0.15
    assert ref.contacts[-20:].any(axis=1).all()  # it lands and stands


def _standing_feet(frames: int, height: float) -> tuple[np.ndarray, np.ndarray]:
    """Heel and toe ``(F, 2, 3)`` of two still feet ``height`` m above where they rest for most of the clip."""
    heel = np.zeros((frames, 2, 3))
    heel[:, 1, 1] = -0.2
    heel[:, :, 2] = 0.08
    toe = heel + [0.15, 0.0, -0.05]
    lift = np.r_[np.full(10, height), np.zeros(frames - 10)]
    heel[..., 2] += lift[:, None]
    toe[..., 2] += lift[:, None]
    return heel, toe


def _landing(height: float) -> tuple[np.ndarray, np.ndarray]:
    """Heel and toe ``(F, 2, 3)`` at 100 fps of two feet that come down from ``height`` m onto their
    resting place over the first 10 frames while moving forward at 1 m/s, then stand."""
    heel, toe = _standing_feet(60, 0.0)
    t = np.arange(60) / 100.0
    for pts in (heel, toe):
        pts[..., 2] += (height * np.clip(1 - t / 0.1, 0.0, None))[:, None]
        pts[..., 0] += np.minimum(t, 0.1)[:, None]
    return heel, toe


def test_a_root_in_free_fall_at_frame_0_is_a_jump_and_a_still_one_stands():
    t = np.arange(60) / 100.0
    still = np.full(60, 0.9)
    falling = 0.95 - 0.5 * 9.81 * np.minimum(t, 0.2) ** 2  # ballistic over the first 0.2 s
    heel, toe = _landing(0.03)  # the feet 3 cm up at frame 0 and too fast for the labels
    assert detect_contacts(heel, toe, 100.0, root_z=still).contact[0].any()
    assert detect_contacts(heel, toe, 100.0).contact[0].any()  # without the root: it stands
    assert not detect_contacts(heel, toe, 100.0, root_z=falling).contact[0].any()
    heel, toe = _landing(0.10)  # 10 cm up: in the air whatever the root does
    assert not detect_contacts(heel, toe, 100.0, root_z=still).contact[0].any()
    assert detect_contacts(heel, toe, 100.0, root_z=still).contact[20:].all()


def _hand_over(skim: bool) -> np.ndarray:
    """Contacts of a synthetic hand-over at 100 fps: the left foot stands until frame 40, then leaves
    fast (1.2 m/s, beyond the labels' speeds), its toe rolling off (rising 0.5 cm a frame) or, with
    ``skim``, skimming the floor (3 cm up, coming down 0.4 cm a frame); the right foot comes down
    from 8 cm over frames 30-44 and stands."""
    frames = np.arange(100)
    heel, toe = _standing_feet(100, 0.0)
    after = np.clip(frames - 39, 0, None)
    rise = np.where(after > 0, 0.03 - 0.004 * after, 0.0).clip(0.0) if skim else 0.005 * after
    for pts in (heel, toe):
        pts[:, 0, 0] += 0.012 * after
        pts[:, 0, 2] += rise + 0.1 * (frames >= 50)  # well up from frame 50 on
        pts[:, 1, 2] += 0.08 * np.clip((44 - frames) / 14, 0.0, 1.0)
    return detect_contacts(heel, toe, 100.0).contact


@pytest.mark.parametrize("skim", [False, True])
def test_a_hand_over_is_held_only_while_the_leaving_foot_lifts(skim):
    c = _hand_over(skim)
    assert c[:39, 0].all() and c[48:, 1].all() and not c[:30, 1].any() and not c[50:, 0].any()
    # both feet down around the landing when the left toe rolls off; a skimming swing is a flight
    assert c[38:48].all(axis=1).any() != skim, c[36:50].astype(int).tolist()
