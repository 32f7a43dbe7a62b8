"""The ball scenario with the humanoid tracking the CMU soccer kick: timing, events, records, outcomes."""

from __future__ import annotations

import json

import numpy as np
import pybullet as p
import pytest

from tracker.errors import ConfigError
from tracker.scenarios.ball_scenario import BallScenario, is_held, trailing_run
from tracker.scenarios.base import Launch
from tracker.sim.simulation import SimOptions, Simulation

TOLERANCE = 0.05  # s: the ball meets the intended link within ±50 ms of the planned time
FOOT_POINT = (0.12, 0.0, -0.04)  # instep, in the foot frame (ankle origin; the foot box spans x -0.07..0.19)
CHEST_FRONT = (0.105, 0.0, 0.12)  # middle of the chest box's front face, in the chest frame


def run(kick, launches, dt: float, start: float, duration: float, **kw):
    ref, model, _ = kick
    scenario = BallScenario(launches, **kw)
    sim = Simulation(model, ref, SimOptions(dt=dt, start=start), scenario=scenario)
    try:
        rec = sim.run(duration)
    finally:
        sim.close()
    assert not rec.diverged, rec.message
    return scenario, rec


@pytest.mark.parametrize("dt", [1 / 60, 1 / 30])
def test_kicked_ball_meets_the_kicking_foot_at_the_kick(kick, dt):
    _, model, t_kick = kick
    launch = Launch("soccer", "right_foot", t_kick, 0.0, offset=FOOT_POINT, flight_time=0.3)
    scenario, rec = run(kick, [launch], dt, start=t_kick - 0.5, duration=1.0)
    plan = scenario.plans[0]

    foot = [e for e in rec.events if e["link"] == "right_foot"]
    assert foot, "the foot missed the ball"
    assert abs(foot[0]["t"] - t_kick) <= TOLERANCE
    assert abs(foot[0]["t_touch"] - t_kick) <= TOLERANCE
    assert rec.events[0]["link"] == "right_foot"  # nothing touched it before the foot
    links = set(model.links)
    assert all(e["link"] in links and e["impulse"] > 0 for e in rec.events)
    json.dumps(rec.events)

    # positions: one row per recorded step, NaN before the spawn, the ball at rest until the kick
    balls = rec.balls
    assert balls.shape == (rec.n_steps, 1, 3)
    np.testing.assert_array_equal(balls, scenario.ball_positions())
    spawned = rec.t > plan.spawn_time + 1e-9
    assert np.isnan(balls[~spawned]).all() and np.isfinite(balls[spawned]).all()
    before = spawned & (rec.t < foot[0]["t"] - 1e-9)
    assert before.any()
    np.testing.assert_allclose(balls[before, 0], np.tile(plan.position, (before.sum(), 1)), atol=1e-3)

    out = scenario.outcomes()[0]
    assert out.first_contact_link == "right_foot" and out.first_target_contact_time == foot[0]["t"]
    assert out.planned_impact_time == pytest.approx(t_kick)
    assert out.impulse > 1.0  # N·s: a 0.43 kg ball sent off at several m/s
    assert out.exit_speed > 3.0
    assert out.exit_direction[0] > 0.6  # forward, like the kick
    assert not out.caught
    json.dumps(scenario.to_dict())


@pytest.mark.parametrize("dt", [1 / 60, 1 / 30])
def test_flying_balls_hit_the_link_they_were_aimed_at_on_time(kick, dt):
    """A fast volleyball from the side at the right forearm (CCD at 15 m/s) and a basketball at the chest."""
    launches = [
        Launch("volleyball", "right_forearm", 1.2, 15.0, direction=(0.0, 1.0, -0.3), offset=(0, 0, -0.12),
               flight_time=0.4),
        Launch("basketball", "chest", 2.0, 5.0, offset=CHEST_FRONT, flight_time=0.6),
    ]
    scenario, rec = run(kick, launches, dt, start=0.5, duration=2.5)
    for k, launch in enumerate(launches):
        events = [e for e in rec.events if e["ball"] == k]
        assert events, f"ball {k} missed"
        assert events[0]["link"] == launch.target_link
        assert abs(events[0]["t"] - launch.impact_time) <= TOLERANCE
    # the volleyball did not pass through the arm: it leaves towards where it came from (or drops)
    out = scenario.outcomes()[0]
    assert out.exit_velocity[1] < 5.0
    chest = scenario.outcomes()[1]
    assert chest.first_contact_link == "chest" and not chest.caught
    assert chest.ground_time > chest.first_contact_time
    assert chest.outcome in ("deflected", "dropped") and chest.dropped == (chest.outcome == "dropped")


def test_launch_now_aims_at_the_links_current_position(kick):
    ref, model, _ = kick
    dt = 1 / 60
    scenario = BallScenario([], live_flight_time=0.5)
    sim = Simulation(model, ref, SimOptions(dt=dt, start=1.0), scenario=scenario)
    try:
        for _ in range(30):
            sim.step()
        index = scenario.launch_now(Launch("basketball", "chest", 0.0, 5.0, offset=CHEST_FRONT))
        plan = scenario.plans[index]
        assert index == 0 and plan.spawn_time == pytest.approx(sim.t)
        assert plan.impact_time == pytest.approx(sim.t + 0.5)
        rec = sim.run(1.0)
    finally:
        sim.close()
    chest = [e for e in rec.events if e["link"] == "chest"]
    assert chest and abs(chest[0]["t"] - plan.impact_time) <= TOLERANCE
    assert rec.balls.shape == (60, 1, 3)  # the 30 steps before this run are in the scenario, not the recording
    assert scenario.ball_positions().shape == (90, 1, 3)
    assert np.isnan(scenario.ball_positions()[:30]).all()


def test_reset_parks_the_balls_and_a_rerun_repeats_the_events(kick):
    ref, model, t_kick = kick
    scenario = BallScenario([Launch("soccer_heavy", "right_foot", t_kick, 0.0, offset=FOOT_POINT)])
    sim = Simulation(model, ref, SimOptions(dt=1 / 60, start=t_kick - 0.7), scenario=scenario)
    try:
        first = sim.run(1.0).events
        bodies = p.getNumBodies(physicsClientId=sim.world.client)
        sim.reset()  # the same ball body, parked again until its launch: a world keeps its bodies
        assert p.getNumBodies(physicsClientId=sim.world.client) == bodies and not scenario._balls[0].launched
        second = sim.run(1.0).events
    finally:
        sim.close()
    assert first and [e["t"] for e in first] == [e["t"] for e in second]
    np.testing.assert_allclose([e["impulse"] for e in first], [e["impulse"] for e in second], rtol=1e-9)


def test_scenario_rejects_bad_arguments():
    with pytest.raises(ConfigError, match="valid balls"):
        BallScenario([Launch("rugby", "chest", 1.0, 5.0)])
    with pytest.raises(ConfigError, match="Launch"):
        BallScenario([{"ball": "soccer"}])
    with pytest.raises(ConfigError, match="hold_radius"):
        BallScenario([], hold_radius=0.0)
    with pytest.raises(ConfigError, match="reset"):
        BallScenario([]).launch_now(Launch("soccer", "chest", 0.0, 5.0))


def test_held_means_near_both_hands_or_the_chest_and_moving_with_them():
    hands = np.array([[0.3, 0.15, 1.1], [0.3, -0.15, 1.1]])
    still = np.zeros((2, 3))
    chest, zero = np.array([0.0, 0.0, 1.2]), np.zeros(3)
    ball = np.array([0.35, 0.0, 1.1])
    assert is_held(ball, zero, hands, still, chest, zero, 0.3, 1.0)
    assert is_held(ball, np.array([0.5, 0, 0]), hands, np.tile([0.3, 0, 0], (2, 1)), chest, zero, 0.3, 1.0)
    assert not is_held(ball, np.array([3.0, 0, 0]), hands, still, chest, zero, 0.3, 1.0)  # flying past
    one_hand = hands + np.array([[0, 0.5, 0], [0, 0, 0]])
    assert not is_held(ball + [0.3, 0, 0], zero, one_hand, still, chest, zero, 0.3, 1.0)
    assert is_held(np.array([0.2, 0.0, 1.2]), zero, one_hand, still, chest, zero, 0.3, 1.0)  # against the chest
    assert not is_held(ball, zero, np.zeros((0, 3)), np.zeros((0, 3)), None, None, 0.3, 1.0)
    assert trailing_run([True, False, True, True]) == 2 and trailing_run([]) == 0 and trailing_run([False]) == 0
