"""The authored ball clips (kick, forearm pass, catch): scripted, retargetable, believable.

Each clip is retargeted onto our humanoid once; the tests measure the
reference (the character's own links, metres, Z up, facing +X) against what
``data/motions/README.md`` and ``events.yaml`` promise.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from tracker.motion.bvh import read_bvh
from tracker.motion.motion import Motion
from tracker.retarget import load_clip_reference

from .conftest import REPO

MOTIONS = REPO / "data" / "motions"
CLIP_NAMES = ("kick", "forearm_pass", "catch")
EVENTS = yaml.safe_load((MOTIONS / "events.yaml").read_text())


@functools.cache
def _author_clips_module():
    spec = importlib.util.spec_from_file_location(
        "author_clips", REPO / "scripts" / "author_clips.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("author_clips", module)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Clip:
    """One retargeted clip and the world poses of the character's links."""

    name: str
    motion: Motion
    ref: object
    kin: object
    pos: dict  # link -> (F, 3) m
    rot: dict  # link -> Rotation (F,)

    @property
    def fps(self) -> float:
        return self.ref.fps

    def frame(self, t: float) -> int:
        return round(t * self.fps)

    def lowest(self, link: str) -> np.ndarray:
        """Height (F,) m of the lowest point of ``link``'s collision shapes."""
        return self.kin.lowest_point(self.ref.q, [link])

    def speed(self, link: str) -> np.ndarray:
        return np.linalg.norm(np.gradient(self.pos[link], axis=0), axis=1) * self.fps

    def palm(self, side: str) -> np.ndarray:
        """Centre (F, 3) of the ``side`` hand's box: the middle of the palm."""
        centre = self.kin.shapes[f"{side}_hand"][0].origin
        return self.pos[f"{side}_hand"] + self.rot[f"{side}_hand"].apply(centre)

    def joint(self, name: str) -> np.ndarray:
        return self.ref.q[:, self.ref.layout[name].q]


@pytest.fixture(scope="module")
def clips() -> dict[str, Clip]:
    out = {}
    for name in CLIP_NAMES:
        ref, motion, kin = load_clip_reference(MOTIONS / f"{name}.bvh", return_parts=True)
        pos, rot = kin.forward(ref.q)
        out[name] = Clip(name, motion, ref, kin, pos, rot)
    return out


# --- made by the script, labelled as authored -----------------------------------------------


def test_the_clips_and_events_in_the_repo_are_what_author_clips_writes(tmp_path: Path) -> None:
    module = _author_clips_module()
    assert module.main(["--out", str(tmp_path)]) == 0
    for name in CLIP_NAMES:
        written = (tmp_path / f"{name}.bvh").read_text().splitlines()
        shipped = (MOTIONS / f"{name}.bvh").read_text().splitlines()
        start = shipped.index("MOTION")
        assert written[: start + 3] == shipped[: start + 3], name  # hierarchy, comment, frames
        # 6-decimal values; another scipy may round a last digit differently
        a, b = (
            np.array([row.split() for row in lines[start + 3 :]], dtype=float)
            for lines in (written, shipped)
        )
        np.testing.assert_allclose(a, b, rtol=0, atol=1.5e-6, err_msg=name)
    assert yaml.safe_load((tmp_path / "events.yaml").read_text()) == EVENTS


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_header_says_authored_not_captured_and_names_the_event(name: str) -> None:
    head = (MOTIONS / f"{name}.bvh").read_text().splitlines()[:6]
    assert head[0] == "HIERARCHY"
    assert "authored by scripts/author_clips.py" in head[1] and "not motion capture" in head[1]
    event = EVENTS[name]
    assert any(f"{event['event']} at t = {event['time_s']:g} s" in line for line in head)
    readme = (MOTIONS / "README.md").read_text()
    assert f"`{name}.bvh`" in readme and f"{event['time_s']:.2f} s" in readme


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_clip_is_two_to_four_seconds_at_60_fps(name: str) -> None:
    m = read_bvh(MOTIONS / f"{name}.bvh")
    assert m.fps == 60.0
    assert 2.0 <= m.duration <= 4.0


def test_events_yaml_names_each_clip_a_time_on_the_frame_grid_and_character_links(clips) -> None:
    assert set(EVENTS) == set(CLIP_NAMES)
    expected_links = {"kick": ["right_foot"], "forearm_pass": ["left_forearm", "right_forearm"],
                      "catch": ["left_hand", "right_hand"]}  # fmt: skip
    for name, event in EVENTS.items():
        clip = clips[name]
        assert event["links"] == expected_links[name]
        assert all(link in clip.kin.links for link in event["links"])
        t = event["time_s"]
        assert abs(t * 60 - round(t * 60)) < 1e-9 and 0.5 <= t <= clip.ref.duration - 0.5


# --- retargeting quality, feet on the floor, calm ends --------------------------------------


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_clip_retargets_onto_the_humanoid_faithfully(clips, name: str) -> None:
    q = clips[name].ref.quality
    assert q["convention"] == "cmu_mb" and q["dropped_frames"] == 0
    assert q["bone_cos_mean"] >= 0.97
    assert q["clamped_frames"] == 0  # authored within the humanoid's joint limits


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_no_foot_goes_more_than_1_cm_into_the_floor(clips, name: str) -> None:
    clip = clips[name]
    for foot in ("left_foot", "right_foot"):
        assert clip.lowest(foot).min() >= -0.01


def _planted_intervals(name: str) -> list[tuple[str, float, float]]:
    """(foot link, start, end): spans between consecutive foot keys that hold the same place."""
    spec = _author_clips_module().CLIPS[name]()
    out = []
    for side, keys in spec.feet.items():
        for a, b in itertools.pairwise(keys):
            if a.ankle_m is not None and a.ankle_m == b.ankle_m and a.pitch_deg == b.pitch_deg == 0:
                out.append((f"{side.lower()}_foot", a.time_s, b.time_s))
    return out


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_planted_feet_stay_flat_on_the_floor_and_do_not_slide_more_than_2_cm(
    clips, name: str
) -> None:
    clip = clips[name]
    intervals = _planted_intervals(name)
    assert len(intervals) >= 2
    for foot, t0, t1 in intervals:
        sel = slice(clip.frame(t0), clip.frame(t1) + 1)
        low = clip.lowest(foot)[sel]
        assert np.all(np.abs(low) <= 0.01), (foot, t0, t1)
        ankle = clip.pos[foot][sel, :2]
        assert np.linalg.norm(ankle - ankle[0], axis=1).max() <= 0.02, (foot, t0, t1)


@pytest.mark.parametrize("name", CLIP_NAMES)
def test_clip_starts_and_ends_standing_at_rest(clips, name: str) -> None:
    clip = clips[name]
    r = clip.motion.rotations
    for a, b in ((0, 1), (-2, -1)):  # source joint rotation per frame, rad
        step = 2 * np.arccos(np.abs(np.sum(r[a] * r[b], axis=-1)).clip(max=1))
        assert step.max() * clip.fps < 0.2  # rad/s
    for f in (0, -1):
        for side in ("left", "right"):
            assert abs(clip.lowest(f"{side}_foot")[f]) <= 0.005
            assert clip.joint(f"{side}_knee")[f, 0] < np.radians(12)
        assert clip.rot["chest"][f].apply([0, 0, 1])[2] > np.cos(np.radians(8))  # upright
    for side in ("left", "right"):  # arms down at the start (the catch ends holding the ball)
        assert clip.pos[f"{side}_hand"][0, 2] < clip.pos["pelvis"][0, 2]


# --- the key events -------------------------------------------------------------------------


def test_kick_right_foot_is_fastest_at_the_stated_contact_time(clips) -> None:
    clip = clips["kick"]
    fe = clip.frame(EVENTS["kick"]["time_s"])
    speed = clip.speed("right_foot")
    assert abs(int(np.argmax(speed)) - fe) <= 1
    assert 8.0 <= speed[fe] <= 12.0  # m/s
    # at contact the toes skim the floor: the foot is at the bottom of its arc
    assert 0.0 < clip.lowest("right_foot")[fe] < 0.05


def test_kick_has_backswing_plant_beside_the_ball_and_follow_through(clips) -> None:
    clip = clips["kick"]
    fe = clip.frame(EVENTS["kick"]["time_s"])
    right, left, pelvis = clip.pos["right_foot"], clip.pos["left_foot"], clip.pos["pelvis"]
    before = slice(fe - 15, fe)  # the 0.25 s before contact
    assert (right[before, 0] - pelvis[before, 0]).min() < -0.3  # swung back behind the body
    assert right[before, 2].max() > 0.6  # heel up high behind
    gap = left[fe] - right[fe]
    assert 0.2 <= gap[1] <= 0.4 and abs(gap[0]) <= 0.15  # the left foot beside the ball's path
    after = slice(fe, fe + 18)  # 0.3 s after contact
    assert right[after, 2].max() > 0.5 and right[after, 0].max() - right[fe, 0] > 0.6
    # weight shift: the pelvis is over the planted left foot at contact
    assert pelvis[fe, 1] > pelvis[0, 1] + 0.08


def test_forearm_pass_presents_straight_arms_together_forward_down_at_waist_height(clips) -> None:
    clip = clips["forearm_pass"]
    fe = clip.frame(EVENTS["forearm_pass"]["time_s"])
    for side in ("left", "right"):
        assert clip.joint(f"{side}_elbow")[fe, 0] < np.radians(15)  # arms straight
        elbow, wrist = clip.pos[f"{side}_forearm"][fe], clip.pos[f"{side}_hand"][fe]
        d = (wrist - elbow) / np.linalg.norm(wrist - elbow)
        down = np.degrees(np.arcsin(-d[2]))
        assert d[0] > 0 and 20 <= down <= 60  # forward and down: the platform faces up-forward
        mid = 0.5 * (elbow + wrist)
        assert 0.85 <= mid[2] <= 1.15  # about waist height
        assert mid[0] - clip.pos["pelvis"][fe, 0] >= 0.3
    assert np.linalg.norm(clip.pos["left_hand"][fe] - clip.pos["right_hand"][fe]) <= 0.10


def test_forearm_pass_from_a_knees_bent_stance_legs_extending_as_the_ball_is_met(clips) -> None:
    clip = clips["forearm_pass"]
    fe = clip.frame(EVENTS["forearm_pass"]["time_s"])
    for side in ("left", "right"):
        assert clip.joint(f"{side}_knee")[fe - 30, 0] > np.radians(45)  # ready stance
    z = clip.pos["pelvis"][:, 2]
    assert z[fe + 15] - z[fe - 15] > 0.03  # legs extend through contact
    assert np.gradient(z)[fe] * clip.fps > 0.1  # m/s, rising at contact


def _grip(clip: Clip) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The ball the palms hold: its radius (F,) m (touching both palms at their centres), its
    centre (F, 3) and each palm's facing direction (F, 3), palm -> ball."""
    surface, face = {}, {}
    for side, sign in (("left", 1.0), ("right", -1.0)):
        box = clip.kin.shapes[f"{side}_hand"][0]
        face[side] = clip.rot[f"{side}_hand"].apply([0.0, -sign, 0.0])  # the palm is the inner side
        surface[side] = clip.palm(side) + box.size[1] / 2 * face[side]
    # on the midplane, as far from each palm along its normal (the clip is left-right symmetric)
    radius = (surface["left"][:, 1] - surface["right"][:, 1]) / (face["right"][:, 1] - face["left"][:, 1])
    centre = 0.5 * (surface["left"] + surface["right"] + radius[:, None] * (face["left"] + face["right"]))
    return radius, centre, face


def test_catch_palms_close_on_the_ball_in_front_of_the_chest_grip_it_and_draw_it_in(clips) -> None:
    clip = clips["catch"]
    fe = clip.frame(EVENTS["catch"]["time_s"])
    radius, centre, face = _grip(clip)
    ball_r = 0.12  # basketball size 7
    half_depth = clip.kin.shapes["chest"][0].size[0] / 2
    ahead = clip.rot["chest"].inv().apply(centre - clip.pos["chest"])[:, 0] - half_depth  # to the chest
    # the hands wait open, wider than the ball, then close onto it at the catch
    assert radius[clip.frame(0.95) : clip.frame(1.15) + 1].min() >= ball_r + 0.01
    # from the catch on, each palm is 1-3 cm inside the ball: a tracking servo presses on it
    assert np.all(np.abs(radius[fe:] - (ball_r - 0.015)) <= 0.01)
    # at the catch: 0.3-0.5 m before the chest, at chest height, the palms a pocket facing the
    # thrower (forward) and a little up
    assert 0.3 <= ahead[fe] <= 0.5
    shoulders = 0.5 * (clip.pos["left_upper_arm"][fe, 2] + clip.pos["right_upper_arm"][fe, 2])
    assert clip.pos["chest"][fe, 2] <= centre[fe, 2] <= shoulders
    for side in ("left", "right"):
        assert face[side][fe, 0] >= np.sin(np.radians(10)) and face[side][fe, 2] > 0.1
    # drawn in over 0.5 s (monotonically) to the chest, then held there (within 2 cm of it)
    drawn = fe + clip.frame(0.5)
    assert np.all(np.diff(ahead[fe : drawn + 1]) < 0)
    assert np.all(np.abs(ahead[drawn:] - ball_r) <= 0.02)
    # the trunk gives backward
    forward = clip.rot["chest"].apply([0, 0, 1])[:, 0]  # how far the chest's up axis leans forward
    assert forward[drawn] < forward[fe] - 0.05
