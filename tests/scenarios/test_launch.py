"""The launcher: exact discrete ballistics, aim points from the reference, planning and its errors."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pybullet as p
import pybullet_data
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.character import Character
from tracker.character.model import load_model
from tracker.errors import ConfigError, SimulationError
from tracker.scenarios.balls import ball_state, get_ball, spawn_ball
from tracker.scenarios.base import Launch
from tracker.scenarios.launch import (
    REST_OVERLAP,
    ballistic_launch,
    free_flight,
    heading,
    link_frames,
    plan_launch,
    solve_launch,
)
from tracker.sim.world import GRAVITY, World, WorldSettings

DTS = [1 / 60, 1 / 30]


def fly(x0, v0, dt: float, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Spawn a volleyball at (x0, v0) in an empty world; centres (steps+1, 3) and velocities after each step."""
    with World(WorldSettings(dt=dt)) as w:
        p.removeBody(w.ground, physicsClientId=w.client)  # free flight: nothing to hit
        body = spawn_ball(w.client, get_ball("volleyball"), x0, v0)
        xs, vs = [np.asarray(x0, float)], [np.asarray(v0, float)]
        for _ in range(steps):
            p.stepSimulation(physicsClientId=w.client)
            x, v = ball_state(w.client, body)
            xs.append(x)
            vs.append(v)
    return np.array(xs), np.array(vs)


@pytest.mark.parametrize("dt", DTS)
def test_launched_ball_meets_the_point_at_the_planned_time_in_free_flight(dt):
    """Off-grid flight times, arrival speeds 2-15 m/s from all sides: the miss is below 1 mm (in fact ~1e-12 m)."""
    rng = np.random.default_rng(6)
    for _ in range(8):
        centre = rng.uniform([-1, -1, 0.8], [1, 1, 1.8])
        d = rng.normal(size=3)
        d[2] = rng.uniform(-0.6, 0.2)
        vel = rng.uniform(2.0, 15.0) * d / np.linalg.norm(d)
        flight = rng.uniform(0.3, 1.0)
        x0, v0 = ballistic_launch(centre, vel, flight, dt)
        m = int(np.ceil(flight / dt))
        beta = flight / dt - (m - 1)
        xs, vs = fly(x0, v0, dt, m + 2)
        at_impact = xs[m - 1] + beta * (xs[m] - xs[m - 1])  # the ball moves straight within a step
        assert np.linalg.norm(at_impact - centre) < 1e-3
        np.testing.assert_allclose(vs[m], vel, atol=1e-9)  # the velocity PyBullet reports after the step
        # the model of PyBullet's integrator predicts every step
        np.testing.assert_allclose(free_flight(x0, v0, dt * np.arange(m + 3), dt), xs, atol=1e-9)


@pytest.mark.parametrize("dt", DTS)
def test_the_continuous_parabola_would_pass_g_dt_T_over_2_too_low(dt):
    """Why the launcher solves the discrete problem: symplectic Euler falls |g|·dt·T/2 more than the parabola."""
    centre, vel, n = np.array([0.0, 0.0, 1.2]), np.array([-5.0, 0.0, -1.0]), 36
    x0, v0 = ballistic_launch(centre, vel, n * dt)  # continuous
    xs, _ = fly(x0, v0, dt, n)
    miss = xs[n] - centre
    np.testing.assert_allclose(miss, [0.0, 0.0, GRAVITY[2] * dt * (n * dt) / 2], atol=1e-9)


def test_free_flight_without_dt_is_the_parabola():
    x = free_flight([0, 0, 1], [2, 0, 3], [0.0, 0.5])
    np.testing.assert_allclose(x, [[0, 0, 1], [1.0, 0, 1 + 1.5 - 9.81 / 8]], atol=1e-12)


@pytest.mark.parametrize("model_name, clip", [
    ("humanoid", None),
    ("deepmimic", os.path.join(pybullet_data.getDataPath(), "data", "motions", "humanoid3d_spinkick.txt")),
])
def test_reference_link_frames_match_pybullet(kick, model_name, clip):
    """Forward kinematics on the reference pose equals the adapter's link pose (Z-up and Y-up models)."""
    from tracker.retarget import load_clip_reference

    model = load_model(model_name)
    ref = kick[0] if clip is None else load_clip_reference(clip, model=model_name)
    links = ["right_foot", "left_forearm", "chest"] if model_name == "humanoid" else ["right_ankle", "left_elbow"]
    times = np.linspace(0.1, ref.duration - 0.1, 4)
    with World() as w:
        char = Character.load(w.client, model)
        for link in links:
            pos, rot = link_frames(model, ref, link, times)
            for k, t in enumerate(times):
                char.reset_state(*ref.sample(t))
                x, quat = char.link_pose(link)
                np.testing.assert_allclose(pos[k], x, atol=1e-6)
                assert (rot[k].inv() * Rotation.from_quat(quat)).magnitude() < 1e-6


def test_moving_ball_plan_puts_its_surface_on_the_aim_point(kick):
    ref, model, _ = kick
    launch = Launch("volleyball", "right_forearm", 1.0, 8.0, direction=(-1.0, 0.2, -0.3), offset=(0, 0, -0.12))
    plan = plan_launch(launch, ref, model, dt=1 / 60)
    d = np.array(launch.direction) / np.linalg.norm(launch.direction)
    np.testing.assert_allclose(plan.aim_point - plan.impact_centre, 0.105 * d, atol=1e-12)
    np.testing.assert_allclose(plan.impact_velocity, 8.0 * d, atol=1e-12)
    pos, rot = link_frames(model, ref, "right_forearm", [1.0])
    np.testing.assert_allclose(plan.aim_point, pos[0] + rot[0].apply([0, 0, -0.12]), atol=1e-12)
    np.testing.assert_allclose(plan.centre_at(1.0), plan.impact_centre, atol=1e-9)


@pytest.mark.parametrize("dt", [None, 1 / 60])
def test_default_approach_comes_from_the_front_released_at_1_5_m(kick, dt):
    ref, model, _ = kick
    for speed, release in ((4.0, 1.5), (15.0, 2.5)):
        plan = plan_launch(Launch("basketball", "chest", 1.0, speed), ref, model, dt=dt, release_height=release)
        horizontal = plan.impact_velocity[:2] / np.linalg.norm(plan.impact_velocity[:2])
        np.testing.assert_allclose(horizontal, -heading(ref, 1.0)[:2], atol=1e-12)
        assert np.linalg.norm(plan.impact_velocity) == pytest.approx(speed, rel=1e-12)
        assert plan.position[2] == pytest.approx(release, abs=1e-9)
        assert plan.impact_velocity[2] < 0  # it comes down to the chest
        np.testing.assert_allclose(plan.centre_at(1.0), plan.impact_centre, atol=1e-9)
    with pytest.raises(SimulationError, match="cannot fly"):  # too slow to cover the drop in 0.6 s
        plan_launch(Launch("basketball", "chest", 1.0, 1.0), ref, model, dt=1 / 60)


def test_ball_at_rest_lies_on_the_ground_in_the_kicking_foots_path(kick):
    ref, model, t_kick = kick
    plan = plan_launch(Launch("soccer", "right_foot", t_kick, 0.0, offset=(0.12, 0, -0.04)), ref, model, dt=1 / 60)
    r = 0.11
    assert plan.position[2] == pytest.approx(r)
    np.testing.assert_array_equal(plan.velocity, 0.0)
    # the impact is moved to the nearest step state, where the foot point is REST_OVERLAP inside the ball
    assert plan.impact_time == pytest.approx(round(t_kick * 60) / 60, abs=1e-9)
    assert r - REST_OVERLAP - 1e-12 <= np.linalg.norm(plan.aim_point - plan.position) < r
    at, rot = link_frames(model, ref, "right_foot", [plan.impact_time])
    np.testing.assert_allclose(plan.aim_point, at[0] + rot[0].apply([0.12, 0, -0.04]), atol=1e-12)
    pos, _ = link_frames(model, ref, "right_foot", [t_kick - 0.01, t_kick + 0.01])
    foot_dir = (pos[1] - pos[0])[:2]
    assert np.dot(plan.position[:2] - plan.aim_point[:2], foot_dir) > 0  # ahead of the foot


@pytest.mark.parametrize("speed", [0.0, 8.0])
def test_a_shift_moves_the_planned_ball_by_as_much_in_the_world(kick, speed):
    ref, model, t_kick = kick
    launch = Launch("soccer", "right_foot", t_kick, speed, offset=(0.12, 0, -0.04))
    plain = plan_launch(launch, ref, model, dt=1 / 60)
    shift = np.array([-0.2, 0.45, 0.0])
    moved = plan_launch(replace(launch, shift=tuple(shift)), ref, model, dt=1 / 60)
    np.testing.assert_allclose(moved.aim_point - plain.aim_point, shift, atol=1e-12)
    np.testing.assert_allclose(moved.position - plain.position, shift, atol=1e-9)  # spawn (or rest) point too
    np.testing.assert_allclose(moved.velocity, plain.velocity, atol=1e-9)
    with pytest.raises(ConfigError, match="shift must be 3 numbers"):
        plan_launch(replace(launch, shift=(0.0, float("nan"), 0.0)), ref, model, dt=1 / 60)


def test_spawn_is_on_the_simulation_step_grid(kick):
    ref, model, _ = kick
    dt, start = 1 / 60, 0.31
    plan = plan_launch(Launch("volleyball", "chest", 1.2345, 6.0, flight_time=0.5), ref, model, dt=dt, start=start)
    k = (plan.spawn_time - start) / dt
    assert k == pytest.approx(round(k), abs=1e-9)
    assert 0.5 <= plan.impact_time - plan.spawn_time < 0.5 + dt
    late = plan_launch(Launch("volleyball", "chest", 0.5, 6.0, flight_time=0.5), ref, model, dt=dt, start=start)
    assert late.spawn_time == start  # the flight is shortened to start with the run
    np.testing.assert_allclose(late.centre_at(0.5), late.impact_centre, atol=1e-9)


def test_impossible_launches_say_why(kick):
    ref, model, t_kick = kick
    with pytest.raises(SimulationError, match="appear"):
        plan_launch(Launch("soccer", "chest", 0.2, 5.0), ref, model, dt=1 / 60, start=0.5)
    with pytest.raises(SimulationError, match="after the clip"):
        plan_launch(Launch("soccer", "chest", ref.duration + 1, 5.0), ref, model, dt=1 / 60)
    with pytest.raises(SimulationError, match="below the ground"):  # arriving upwards after a long flight
        plan_launch(Launch("soccer", "chest", 2.0, 3.0, direction=(0, 0, 1), flight_time=1.5), ref, model, dt=1 / 60)
    with pytest.raises(SimulationError, match="out of reach"):  # a resting ball cannot meet a raised hand
        plan_launch(Launch("soccer", "right_hand", t_kick, 0.0, offset=(0, 0, 0.5)), ref, model, dt=1 / 60)
    with pytest.raises(ConfigError, match="left_foot"):  # the message lists the links
        plan_launch(Launch("soccer", "right_toe", 1.0, 5.0), ref, model, dt=1 / 60)
    with pytest.raises(ConfigError, match="direction"):
        plan_launch(Launch("soccer", "chest", 1.0, 5.0, direction=(0, 0, 0)), ref, model)
    with pytest.raises(ConfigError, match="speed"):
        plan_launch(Launch("soccer", "chest", 1.0, -5.0), ref, model)
    with pytest.raises(ConfigError, match="valid balls"):
        plan_launch(Launch("rugby", "chest", 1.0, 5.0), ref, model)


def test_solve_launch_applies_the_mass_override_and_keeps_arrays_read_only():
    launch = Launch("soccer", "chest", 1.0, 5.0, direction=(-1, 0, -0.5), flight_time=0.3, mass=2.5)
    plan = solve_launch(launch, np.array([0.0, 0.0, 1.2]), np.zeros(3), np.array([1.0, 0, 0]), 0.5, 1 / 60)
    assert plan.preset.mass == 2.5 and plan.preset.radius == get_ball("soccer").radius
    with pytest.raises(ValueError):
        plan.position[0] = 1.0
    d = plan.to_dict()
    assert d["mass"] == 2.5 and d["link"] == "chest" and len(d["position"]) == 3
    assert replace(launch, mass=None) != launch


def test_an_infeasible_launch_names_the_nearest_feasible_flight_time_and_speed_and_they_fly(kick):
    """3.5 m/s for 1.2 s from 1.5 m high cannot reach the chest; the error proposes both fixes, and each plans."""
    import re

    ref, model, _ = kick
    launch = Launch("basketball", "chest", 1.0, 3.5, flight_time=1.2)
    with pytest.raises(SimulationError, match="cannot fly") as err:
        plan_launch(launch, ref, model, dt=1 / 60)
    text = str(err.value)
    flight = re.search(r"nearest feasible: flight_time ([\d.]+) s at 3.5 m/s", text)
    speed = re.search(r"speed ([\d.]+) m/s with this flight time", text)
    assert flight and speed, text
    assert 0.01 <= float(flight.group(1)) < 1.2 and 3.5 < float(speed.group(1)) <= 100
    plan_launch(replace(launch, flight_time=float(flight.group(1))), ref, model, dt=1 / 60)
    plan_launch(replace(launch, speed=float(speed.group(1))), ref, model, dt=1 / 60)
    with pytest.raises(SimulationError, match="cannot fly"):  # the speed is the lowest at 0.1 m/s
        plan_launch(replace(launch, speed=float(speed.group(1)) - 0.1), ref, model, dt=1 / 60)
