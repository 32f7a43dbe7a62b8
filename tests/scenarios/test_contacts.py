"""Contact events: impulses, normals and touch times from PyBullet's contact points."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pybullet as p
import pytest

from tracker.scenarios.balls import ball_state, get_ball, spawn_ball
from tracker.scenarios.contacts import (
    episodes,
    first_contact,
    read_contacts,
    select,
    total_impulse,
    touching,
)
from tracker.sim.world import World, WorldSettings

HALF = 0.0325  # a forearm-thick box: 6.5 cm


def shoot_at_box(speed: float, dt: float, seconds: float = 0.5):
    """A volleyball flying along +x (no gravity) at a welded box; returns (contacts, analytic touch time, ball)."""
    with World(WorldSettings(dt=dt)) as w:
        c = w.client
        p.setGravity(0, 0, 0, physicsClientId=c)
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[HALF, HALF, 0.135], physicsClientId=c)
        box = p.createMultiBody(1.1, shape, -1, [0, 0, 1.0], physicsClientId=c)
        p.createConstraint(box, -1, -1, -1, p.JOINT_FIXED, [0, 0, 0], [0, 0, 0], [0, 0, 1.0], physicsClientId=c)
        fake = SimpleNamespace(body_id=box, link_name=lambda k: "box" if k == -1 else f"link{k}")
        ball = get_ball("volleyball")
        x0 = -0.8
        body = spawn_ball(c, ball, [x0, 0, 1.0], [speed, 0, 0])
        v_in, x_in, x_before = np.array([speed, 0.0, 0.0]), np.array([x0, 0, 1.0]), None
        out = []
        for k in range(int(seconds / dt)):
            p.stepSimulation(physicsClientId=c)
            x, v = ball_state(c, body)
            out += read_contacts(c, body, fake, (k + 1) * dt, dt, ball=3, speed=float(np.linalg.norm(v)),
                                 velocity_in=v_in, displacement_in=None if x_before is None else x_in - x_before)
            v_in, x_before, x_in = v, x_in, x
    return out, (-HALF - ball.radius - x0) / speed, ball


@pytest.mark.parametrize("dt", [1 / 60, 1 / 30])
@pytest.mark.parametrize("speed", [3.0, 6.0, 15.0])
def test_contacts_give_the_balls_momentum_change_and_the_touch_time(dt, speed):
    contacts, t_touch, ball = shoot_at_box(speed, dt)
    assert contacts, "the ball passed through the box"
    first = contacts[0]
    assert first.link == "box" and first.ball == 3 and all(c.impulse > 0 for c in contacts)
    # the box does not bounce (restitution 0): the normal impulses stop the ball, m v
    assert total_impulse(e.as_event() for e in contacts) == pytest.approx(ball.mass * speed, rel=0.03)
    np.testing.assert_allclose(first.normal, [-1, 0, 0], atol=1e-6)  # from the box towards the ball
    np.testing.assert_allclose(first.impulse_vector, first.impulse * np.array([-1, 0, 0]), atol=1e-9)
    # the event is stamped with the state in which it was found, at most a step after the touch
    assert t_touch - 1e-9 <= first.t <= t_touch + dt + 1e-9
    assert first.t_touch == pytest.approx(t_touch, abs=2e-3)
    assert first.speed_in == pytest.approx(speed, rel=1e-6) and first.speed < first.speed_in
    assert abs(first.position[0] - (-HALF)) < 0.02  # on the box's face


def test_events_are_json_able_dicts():
    contacts, _, _ = shoot_at_box(6.0, 1 / 60)
    events = [c.as_event() for c in contacts]
    back = json.loads(json.dumps(events))
    assert back[0]["link"] == "box" and back[0]["impulse"] == events[0]["impulse"]
    assert set(back[0]) == {"t", "t_touch", "ball", "link", "impulse", "impulse_vector", "speed", "speed_in",
                            "position", "normal", "depth", "points"}


def test_touching_the_ground():
    with World() as w:
        ball = get_ball("soccer")
        resting = spawn_ball(w.client, ball, [0, 0, ball.radius])
        flying = spawn_ball(w.client, ball, [1, 0, 1.0])
        p.stepSimulation(physicsClientId=w.client)
        assert touching(w.client, resting, w.ground)
        assert not touching(w.client, flying, w.ground)


def test_event_helpers_select_first_and_group():
    dt = 0.01
    ev = [{"t": t, "ball": b, "link": link, "impulse": 0.5}
          for t, b, link in [(0.10, 0, "a"), (0.11, 0, "b"), (0.12, 0, "a"), (0.30, 0, "a"), (0.05, 1, "c")]]
    assert [e["t"] for e in select(ev, ball=0, link="a")] == [0.10, 0.12, 0.30]
    assert first_contact(ev)["link"] == "c"
    assert first_contact(ev, ball=0)["link"] == "a"
    assert first_contact(ev, link="z") is None
    groups = episodes(select(ev, ball=0), dt)
    assert [len(g) for g in groups] == [3, 1]
    assert total_impulse(ev) == pytest.approx(2.5)
