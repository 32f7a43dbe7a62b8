"""The ball scenarios on real mocap (configs/mocap/*.yaml): CMU soccer kicks and CMU catches.

Each config's impact time comes from its clip (the kicking foot's fastest frame; a
moment when the hands are together in front), and the ball must meet an intended
link within ±50 ms of it, without divergence, at dt = 1/60 and 1/30 s. The runs are
shortened to the impact (plus a few frames) to keep the file fast.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tracker.experiments.config import load_config
from tracker.experiments.runner import build, simulate
from tracker.scenarios.launch import heading

from .conftest import MOCAP_DIR, humanoid

pytestmark = pytest.mark.skipif(not MOCAP_DIR.is_dir(), reason="needs ../shared/mocap beside the checkout")

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "mocap"
KICKS = ["cmu_10_01_soccer_light", "cmu_10_05_soccer_heavy"]
CATCHES = ["cmu_23_22_basketball_slow", "cmu_22_25_basketball_fast"]
INTENDED = {"soccer": {"right_foot"},
            "basketball": {"left_hand", "right_hand", "left_forearm", "right_forearm", "chest"}}
DTS = {"60": 1 / 60, "30": 1 / 30}
TOLERANCE_S = 0.050


def config(name: str, *overrides):
    return load_config(CONFIGS / f"{name}.yaml", list(overrides))


@cache
def reference(name: str):
    return build(config(name)).reference


@cache
def link_positions(name: str) -> dict[str, np.ndarray]:
    """World positions ``(F, 3)`` m of every link's frame over the retargeted clip."""
    return humanoid().kinematics().forward(reference(name).q)[0]


def palm_centres(name: str, t: float) -> dict[str, np.ndarray]:
    """Centre ``(3,)`` m of each hand's box (the middle of the palm) in the reference at clip time ``t``."""
    kin = humanoid().kinematics()
    pos, rot = kin.forward(reference(name).sample(t)[0][None])
    return {side: pos[f"{side}_hand"][0] + rot[f"{side}_hand"][0].apply(kin.shapes[f"{side}_hand"][0].origin)
            for side in ("left", "right")}


@cache
def run(name: str, dt: str):
    """``(config, recording, ball outcome)`` of a short run around the impact."""
    full = config(name)
    t_i = full.balls[0].impact_time
    start = max(full.clip.start, t_i - 0.5)
    cfg = config(name, ("sim.dt", DTS[dt]), ("clip.start", start), ("sim.duration", t_i - start + 0.15))
    rec, outcome = simulate(build(cfg), balls=True)
    return cfg, rec, outcome["balls"][0]


def test_there_is_a_config_per_real_kick_and_catch_clip():
    names = sorted(p.stem for p in CONFIGS.glob("*.yaml"))
    assert names == sorted(KICKS + CATCHES)
    for name in names:
        path = Path(config(name).clip.path).resolve()
        assert path.parent == MOCAP_DIR.resolve() and path.is_file()


@pytest.mark.parametrize("name", KICKS)
def test_kick_impact_is_the_right_foots_fastest_frame(name):
    """The right foot kicks (it is much faster than the left), and the ball is met at its peak."""
    fps = reference(name).fps
    speed = {foot: np.linalg.norm(np.gradient(link_positions(name)[foot], 1 / fps, axis=0), axis=1)
             for foot in ("left_foot", "right_foot")}
    assert speed["right_foot"].max() > 1.3 * speed["left_foot"].max()
    assert speed["right_foot"].max() > 8.0  # m/s: a kick, not a step
    ball = config(name).balls[0]
    assert ball.target_link == "right_foot" and ball.speed == 0.0
    assert abs(ball.impact_time - np.argmax(speed["right_foot"]) / fps) <= 1 / fps


@pytest.mark.parametrize("name", CATCHES)
def test_catch_impact_is_when_the_hands_are_together_in_front(name):
    """A ball thrown at the hands while they are together in front, launched within the clip."""
    ball = config(name).balls[0]
    t = ball.impact_time
    palms = palm_centres(name, t)
    assert np.linalg.norm(palms["left"] - palms["right"]) <= 0.12  # m, centre to centre: together
    pelvis = link_positions(name)["pelvis"][round(t * reference(name).fps)]
    mid = 0.5 * (palms["left"] + palms["right"])
    assert np.dot(mid - pelvis, heading(reference(name), t)) >= 0.2  # in front of the body
    assert mid[2] - pelvis[2] >= 0.1  # above the waist
    assert ball.target_link == "left_hand" and ball.speed > 0
    assert t - ball.flight_time >= 0.0  # launched after the clip starts (its T-pose frames dropped)
    heading_now = heading(reference(name), t)
    assert np.dot(np.asarray(ball.direction), heading_now) < -0.9  # thrown from in front


@pytest.mark.parametrize("dt", DTS)
@pytest.mark.parametrize("name", KICKS + CATCHES)
def test_ball_meets_an_intended_link_on_time_without_divergence(name, dt):
    cfg, rec, ball = run(name, dt)
    assert not rec.diverged, rec.message
    assert ball["first_contact_link"] in INTENDED[name.split("_")[-2]], ball
    assert abs(ball["first_contact_time"] - cfg.balls[0].impact_time) <= TOLERANCE_S, ball
