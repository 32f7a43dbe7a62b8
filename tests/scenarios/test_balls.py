"""Ball presets: official sizes, the registry, and how the bodies behave in PyBullet."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from tracker.errors import ConfigError
from tracker.scenarios.balls import (
    BALLS,
    VARIANTS,
    ball_names,
    ball_state,
    get_ball,
    get_variant,
    hollow_sphere_inertia,
    register_ball,
    remove_ball,
    spawn_ball,
)
from tracker.scenarios.base import BallPreset
from tracker.sim.world import World, WorldSettings

DTS = [1 / 60, 1 / 30]


@pytest.fixture
def world():
    w = World(WorldSettings(dt=1 / 60))
    yield w
    w.close()


def drop(name: str, height: float, dt: float, seconds: float = 2.5) -> tuple[float, np.ndarray]:
    """Drop ball ``name`` with its bottom at ``height`` m; returns the rebound peak of its bottom (m) and z (N,)."""
    with World(WorldSettings(dt=dt)) as w:
        ball = get_ball(name)
        body = spawn_ball(w.client, ball, [0.0, 0.0, height + ball.radius])
        z = []
        for _ in range(int(seconds / dt)):
            p.stepSimulation(physicsClientId=w.client)
            z.append(ball_state(w.client, body)[0][2])
    z = np.array(z)
    fall_steps = int(math.sqrt(2 * height / 9.81) / dt) + 3
    bounce = int(np.argmin(z[:fall_steps]))
    return float(z[bounce:].max() - ball.radius), z


# -- presets and registry ---------------------------------------------------------------

@pytest.mark.parametrize("name, mass, radius, circumference", [
    ("soccer", 0.43, 0.11, (0.68, 0.70)),       # FIFA law 2: 68-70 cm, 410-450 g
    ("volleyball", 0.27, 0.105, (0.65, 0.67)),  # FIVB: 65-67 cm, 260-280 g
    ("basketball", 0.62, 0.12, (0.749, 0.78)),  # FIBA size 7: 74.9-78 cm, 567-650 g
])
def test_presets_have_the_official_mass_and_size(name, mass, radius, circumference):
    ball = get_ball(name)
    assert ball.mass == mass and ball.radius == radius
    assert circumference[0] <= 2 * math.pi * ball.radius <= circumference[1]
    assert 0 < ball.restitution < 1 and ball.lateral_friction > 0 and ball.rolling_friction > 0


def test_heavy_soccer_ball_is_a_medicine_ball_of_the_same_size():
    light, heavy = get_ball("soccer"), get_ball("soccer_heavy")
    assert heavy.radius == light.radius
    assert 3.0 <= heavy.mass <= 5.0
    assert heavy.restitution < light.restitution


def test_unknown_ball_lists_the_valid_names():
    with pytest.raises(ConfigError) as err:
        get_ball("rugby")
    assert "rugby" in str(err.value)
    for name in ("basketball", "soccer", "soccer_heavy", "volleyball"):
        assert name in str(err.value)
    assert ball_names() == tuple(sorted(BALLS))


def test_mass_override_returns_a_new_preset_and_rejects_nonsense():
    ball = get_ball("soccer", mass=1.0)
    assert ball.mass == 1.0 and get_ball("soccer").mass == 0.43
    for bad in (0.0, -1.0, float("nan"), "heavy"):
        with pytest.raises(ConfigError):
            get_ball("soccer", mass=bad)


def test_registry_refuses_a_different_preset_under_a_taken_name():
    with pytest.raises(ValueError, match="soccer"):
        register_ball(lambda: BallPreset("soccer", mass=1.0, radius=0.11, restitution=0.8))
    register_ball(lambda: BALLS["soccer"])  # the same preset again is harmless
    assert BALLS["soccer"].mass == 0.43


def test_the_six_paper_variants_use_registered_balls_and_order_their_speeds():
    assert set(VARIANTS) == {"soccer_light", "soccer_heavy", "volleyball_slow", "volleyball_fast",
                             "basketball_slow", "basketball_fast"}
    for v in VARIANTS.values():
        get_ball(v.ball)
    assert get_variant("soccer_light").speed == get_variant("soccer_heavy").speed == 0.0
    assert get_variant("volleyball_slow").speed < get_variant("volleyball_fast").speed
    assert get_variant("basketball_slow").speed < get_variant("basketball_fast").speed
    with pytest.raises(ConfigError, match="basketball_fast"):
        get_variant("tennis")


# -- bodies ------------------------------------------------------------------------------

def test_spawned_ball_has_the_preset_mass_and_a_hollow_sphere_inertia(world):
    ball = get_ball("basketball")
    body = spawn_ball(world.client, ball, [0, 0, 2.0])
    info = p.getDynamicsInfo(body, -1, physicsClientId=world.client)
    inertia = hollow_sphere_inertia(ball.mass, ball.radius)
    assert info[0] == pytest.approx(ball.mass, rel=1e-12)
    np.testing.assert_allclose(info[2], [inertia] * 3, rtol=1e-12)
    # (getDynamicsInfo reports 0 restitution/rolling friction for rigid bodies; the drop and
    # rolling tests below check that the preset's values act)
    # the dynamics use it: a torque impulse tau*dt spins the ball up by tau*dt/I (2/3, not 2/5 m r^2),
    # from the second step on (PyBullet refreshes a rigid body's world inertia at the end of a step)
    c = world.client
    p.stepSimulation(physicsClientId=c)
    w0 = p.getBaseVelocity(body, physicsClientId=c)[1][2]
    p.applyExternalTorque(body, -1, [0, 0, 0.5], p.WORLD_FRAME, physicsClientId=c)
    p.stepSimulation(physicsClientId=c)
    dw = p.getBaseVelocity(body, physicsClientId=c)[1][2] - w0
    assert dw == pytest.approx(0.5 * world.dt / inertia, rel=1e-9)


def test_spawn_sets_the_velocity_and_remove_deletes_the_body(world):
    c = world.client
    n = p.getNumBodies(physicsClientId=c)
    body = spawn_ball(c, get_ball("volleyball"), [1.0, 2.0, 3.0], [4.0, -1.0, 2.0])
    pos, vel = ball_state(c, body)
    np.testing.assert_allclose(pos, [1, 2, 3], atol=1e-12)
    np.testing.assert_allclose(vel, [4, -1, 2], atol=1e-12)
    remove_ball(c, body)
    assert p.getNumBodies(physicsClientId=c) == n
    with pytest.raises(ValueError):
        spawn_ball(c, get_ball("volleyball"), [0.0, float("nan"), 1.0])


@pytest.mark.parametrize("dt", DTS)
def test_basketball_passes_the_fiba_bounce_test(dt):
    """FIBA: dropped from 1.8 m (bottom of the ball), it rebounds to 1.2-1.4 m (top of the ball)."""
    bottom, z = drop("basketball", 1.8, dt)
    top = bottom + 2 * get_ball("basketball").radius
    assert 1.2 <= top <= 1.4, top
    # CCD stops the ball within 10 % of its radius of the ground
    assert z.min() >= 0.9 * get_ball("basketball").radius - 1e-3


@pytest.mark.parametrize("dt", DTS)
def test_soccer_ball_passes_the_fifa_rebound_test(dt):
    """FIFA Quality Pro: dropped from 2 m, it rebounds to 1.35-1.55 m (bottom of the ball)."""
    bottom, _ = drop("soccer", 2.0, dt)
    assert 1.35 <= bottom <= 1.55, bottom


def test_heavy_ball_bounces_much_less_than_the_light_one():
    light, _ = drop("soccer", 1.0, 1 / 60)
    heavy, _ = drop("soccer_heavy", 1.0, 1 / 60)
    assert heavy < 0.5 * light


@pytest.mark.parametrize("name", ["soccer", "basketball"])
@pytest.mark.parametrize("dt", DTS)
def test_rolling_ball_slows_down_as_rolling_friction_predicts(name, dt):
    """A rolling shell decelerates at ``c g / (r (1 + I / m r²))``, ``c = rolling · ground friction``."""
    ball = get_ball(name)
    r, v = ball.radius, 3.0
    with World(WorldSettings(dt=dt)) as w:
        body = spawn_ball(w.client, ball, [0.0, 0.0, r], [v, 0.0, 0.0], [0.0, v / r, 0.0])
        vx = []
        for _ in range(int(1.0 / dt)):
            p.stepSimulation(physicsClientId=w.client)
            vx.append(ball_state(w.client, body)[1][0])
        c = ball.rolling_friction * w.settings.ground_friction
    t = dt * (np.arange(len(vx)) + 1)
    decel = -np.polyfit(t[5:], vx[5:], 1)[0]
    k = hollow_sphere_inertia(ball.mass, r) / (ball.mass * r * r)
    assert decel == pytest.approx(c * 9.81 / (r * (1 + k)), rel=0.03)


@pytest.mark.parametrize("name", ["soccer", "basketball"])
@pytest.mark.parametrize("dt", DTS)
def test_a_ball_on_the_ground_stays_put_and_bounces_die_out(name, dt):
    """PyBullet's discrete contacts pump energy into small bounces; the world's restitution threshold stops it."""
    _, z_rest = drop(name, 0.0, dt, seconds=2.0)
    assert np.abs(z_rest - get_ball(name).radius).max() < 1e-3
    _, z = drop(name, 0.5, dt, seconds=5.0)
    assert np.abs(z[-int(1.5 / dt):] - get_ball(name).radius).max() < 2e-3
