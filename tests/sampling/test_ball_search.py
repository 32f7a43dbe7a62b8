"""Balls in the search (issue 33, item 1): rollouts launch the config's balls, a state saved before a
launch restores in any worker, and a ball that asks for an outcome is part of the cost."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tracker.experiments.config import config_from_data
from tracker.experiments.runner import build
from tracker.sampling.ball_cost import GRACE
from tracker.sampling.pool import RolloutPool
from tracker.sampling.rollout import RolloutRequest, RolloutWorker
from tracker.sim.offsets import OffsetTrack

ROOT = Path(__file__).resolve().parents[2]
KICK = str((ROOT / "data" / "motions" / "kick.bvh").resolve())
IMPACT = 1.4  # the kick's foot meets the ball (configs/soccer_light.yaml)


def config(exit_speed: float | None = 8.0):
    ball = {"preset": "soccer", "target_link": "right_foot", "impact_time": IMPACT, "speed": 0.0,
            "offset": [0.12, 0.0, -0.04]}
    if exit_speed is not None:
        ball["exit_speed"] = exit_speed
    return config_from_data({"clip": {"path": KICK, "start": 1.0}, "sim": {"dt": 1 / 60, "substeps": 7},
                             "schedule": {"enabled": True}, "balls": [ball], "outputs": {"plots": False}},
                            ROOT / "kick_ball.yaml")


@lru_cache(maxsize=None)
def worker(exit_speed: float | None = 8.0) -> RolloutWorker:
    return RolloutWorker(build(config(exit_speed)), balls=True)


def test_rollouts_launch_the_ball_and_score_its_outcome():
    w = worker()
    start = w.initial_state()
    before = w.rollout(RolloutRequest(start, None, IMPACT - 0.2))
    assert before.terms["ball"] == 0.0  # the window ends before the impact: nothing to score yet
    kicked = w.rollout(RolloutRequest(start, None, IMPACT + 0.3))
    events = w.sim.scenario.events
    assert events and events[0]["link"] == "right_foot"  # the foot meets the ball in the rollout
    speed = float(np.linalg.norm(w.sim.scenario.ball_velocities()[-1, 0]))
    assert kicked.terms["ball"] == pytest.approx(abs(speed - 8.0) / 8.0)
    assert 0.0 < kicked.terms["ball"] < 1.0
    # the same rollout asked for the speed the ball leaves with scores 0, and costs that much less
    exact = RolloutWorker(build(config(speed)), balls=True)
    try:
        again = exact.rollout(RolloutRequest(exact.initial_state(), None, IMPACT + 0.3))
    finally:
        exact.close()
    assert again.terms["ball"] == pytest.approx(0.0, abs=1e-4)
    assert kicked.cost - again.cost == pytest.approx(10.0 * (kicked.terms["ball"] - again.terms["ball"]))  # weight 10


class _Launch:
    offset = (0.1, 0.0, 0.0)


class _Preset:
    radius = 0.1


class _Plan:
    link, impact_time, launch, preset = "right_foot", 1.0, _Launch(), _Preset()


class _FakeBall:
    plan, body = _Plan(), 7


class _FakeCharacter:
    @staticmethod
    def link_pose(name):
        return np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])  # the aim point is at (0.1, 0, 0)


class _FakeSim:
    character = _FakeCharacter()


class _FakeScenario:
    """What ball_term reads of a BallScenario: its balls, events, simulation and engine client."""

    def __init__(self, links):
        self._balls, self._client, self._sim = [_FakeBall()], None, _FakeSim()
        self.events = [{"ball": 0, "link": k} for k in links]


def test_the_ball_term_rules(monkeypatch):
    import tracker.scenarios.balls as balls

    from tracker.sampling.ball_cost import LEAD, REACH, ball_term

    # the ball's centre 0.4 m from the aim point, moving at 2 m/s
    monkeypatch.setattr(balls, "ball_state", lambda client, body: (np.array([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 2.0])))
    specs = ((0, 4.0),)
    assert ball_term(_FakeScenario([]), specs, 1.0 - LEAD - 0.01) == 0.0  # long before the impact
    # near the impact, untouched: the aim point's gap to the ball's surface (0.4 - 0.1 m) over REACH
    assert ball_term(_FakeScenario([]), specs, 1.0 + GRACE - 0.01) == pytest.approx(0.3 / REACH)
    assert ball_term(_FakeScenario([]), specs, 1.0 + GRACE + 0.01) == 1.0  # missed
    assert ball_term(_FakeScenario(["chest", "right_foot"]), specs, 1.2) == 1.0  # met another link first
    assert ball_term(_FakeScenario(["right_foot"]), specs, 1.2) == pytest.approx(0.5)  # 2 m/s of the 4 wanted
    assert ball_term(_FakeScenario(["right_foot"]), ((0, 0.5),), 1.2) == 1.0  # capped at 1
    assert ball_term(_FakeScenario(["right_foot"]), (), 1.2) == 0.0  # no ball asks for an outcome


def test_a_ball_without_an_exit_speed_is_launched_but_not_scored():
    w = worker(None)
    res = w.rollout(RolloutRequest(w.initial_state(), None, IMPACT + 0.3))
    assert w.sim.scenario.events and res.terms["ball"] == 0.0


def test_states_saved_before_a_launch_restore_in_other_workers_as_in_this_one():
    """The path that crashed PyBullet ("Remove body failed") when balls were made at their launch: states
    saved before the ball exists, restored by forked workers after it flew."""
    w = worker()
    start = w.initial_state()
    mid = w.rollout(RolloutRequest(start, None, 1.2, keep_end=True)).end  # before the launch
    lay = w.sim.layout

    def hip(amount: float) -> OffsetTrack:
        track = OffsetTrack.zeros(lay, np.array([1.0, 1.3, 1.6]), model="humanoid")
        values = track.values.copy()
        values[1, lay["right_hip"].v.start] = amount
        return track.with_values(values)

    reqs = [RolloutRequest(s, hip(a), IMPACT + 0.2, tag=i)
            for i, (s, a) in enumerate([(start, 0.0), (mid, 0.0), (start, 0.5), (mid, -0.3), (start, 0.8), (mid, 0.2)])]
    serial = RolloutPool(config(), workers=1, balls=True).run(reqs)
    pool = RolloutPool(config(), workers=2, balls=True)
    try:
        parallel = pool.run(reqs)
    finally:
        pool.close()
    assert [r.tag for r in parallel] == list(range(6))
    for a, b in zip(serial, parallel):
        assert a.cost == b.cost and a.terms == b.terms
        np.testing.assert_array_equal(a.q_end, b.q_end)


def test_grace_is_short_of_a_segment():
    assert 0 < GRACE <= 0.2  # a miss is known within about a SAMCON segment of the planned impact


def test_exit_speed_is_checked_by_the_config_reader():
    from tracker.errors import ConfigError

    with pytest.raises(ConfigError, match="exit_speed"):
        config(-1.0)


def test_a_forked_worker_launches_the_ball_in_its_own_world():
    """A snapshot carries the scenario's plain attributes; a client id kept as one came back from the
    world that saved it, and a forked worker launched its balls into its parent's copy (the search's
    rollouts then ran without the ball: the ball term stayed 0 where one worker scored the contact)."""
    w = worker()
    start = w.rollout(RolloutRequest(w.initial_state(), None, 1.0, keep_end=True)).end
    reqs = [RolloutRequest(start, None, IMPACT + 0.2, tag=i) for i in range(4)]
    pool = RolloutPool(config(), workers=2, balls=True)
    try:
        results = pool.run(reqs)
    finally:
        pool.close()
    serial = w.rollout(reqs[0])
    assert w.sim.scenario.events and 0.0 < serial.terms["ball"] < 1.0  # kicked, scored by its speed
    for r in results:
        assert r.terms == serial.terms and r.cost == serial.cost
