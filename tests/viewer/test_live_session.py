"""The live session behind 'tracker play', in a headless client, driven through the window's controls.

Keys and sliders go through :meth:`Controls.handle_keys` / :meth:`Controls.apply_inputs`, the very
calls the window makes with PyBullet's keyboard events and slider readings.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from tracker.control.gains import supported_masses
from tracker.errors import ConfigError, TrackerError
from tracker.experiments import runner
from tracker.viewer.controls import KEY_WAS_TRIGGERED, live_controls
from tracker.viewer.playback import LiveSession, _diverged, build_session, live_config

REPO = Path(__file__).resolve().parents[2]
CLIP = REPO / "data" / "motions" / "demo_wave.bvh"


@pytest.fixture
def session():
    s = build_session(live_config(CLIP))
    yield s
    s.sim.close()


def controls_of(s: LiveSession):
    return live_controls(s, s.gain_params(), k_unit=s.k_unit())


def n_bodies(s: LiveSession) -> int:
    return p.getNumBodies(physicsClientId=s.sim.world.client)


def test_the_launch_key_puts_a_ball_in_the_world_that_flies_at_the_character(session):
    c = controls_of(session)
    for _ in range(30):
        session.step()
    before = n_bodies(session)
    assert c.handle_keys({ord("b"): KEY_WAS_TRIGGERED}) == ["launch"]
    assert n_bodies(session) == before + 1
    assert session.n_balls() == 1 and "ball 1 (basketball) launched at the chest" == c.state.message
    pos = []
    for _ in range(20):
        session.step()
        pos.append(session.sim.scenario.ball_positions()[-1, 0])
    chest = np.array(session.sim.character.link_pose("chest")[0])
    d = [np.linalg.norm(x - chest) for x in pos]
    assert d[-1] < d[0] - 0.5  # closing in on the chest (flight time 0.5 s)
    assert c.apply_inputs({"launch": 1.0}) == ["launch"]  # the button does the same
    assert session.n_balls() == 2 and n_bodies(session) == before + 2


def test_the_k_t_slider_changes_the_gains_of_the_next_step(session):
    """The clip's default config uses the model's gains, so k_t is a multiple of them (start 1)."""
    c = controls_of(session)
    kp0 = session.step()["kp"].copy()
    assert c.apply_inputs({"k_t": np.log10(2.0)}) == ["set k_t"]  # k_t and k_r sliders are log10
    kp1 = session.step()["kp"]
    np.testing.assert_allclose(kp1[6:], 2.0 * kp0[6:], rtol=1e-12)
    np.testing.assert_array_equal(kp1[:6], kp0[:6])  # the root's gains are not the joints'
    c.apply_inputs({"gain_scale": 0.5})
    np.testing.assert_allclose(session.step()["kp"][6:], kp0[6:], rtol=1e-12)


def test_k_t_in_mass_scaled_units_and_the_reaction_sliders(tmp_path):
    cfg = live_config(CLIP, overrides=["controller.gains.k_t=300", "schedule.k_r=30", "schedule.scope=all"])
    s = build_session(cfg)
    try:
        c = controls_of(s)
        m_sup = s.sim.layout.per_dof(supported_masses(s.sim.model.kinematics()))[6:]
        np.testing.assert_allclose(s.step()["kp"][6:], 300.0 * m_sup, rtol=1e-12)
        c.apply_inputs({"k_t": np.log10(450.0)})
        np.testing.assert_allclose(s.step()["kp"][6:], 450.0 * m_sup, rtol=1e-12)
        # an impact now: every joint (scope all) drops to the k_r slider's value for t_e
        c.apply_inputs({"k_r": np.log10(45.0), "t_e": 0.5})
        s.sim.scenario.events.append({"t": s.t, "link": "chest", "impulse": 1.0, "ball": 0})
        np.testing.assert_allclose(s.step()["kp"][6:], 45.0 * m_sup, rtol=1e-12)
        assert s.schedule_state() == "reacting"
        assert c.handle_keys({ord("s"): KEY_WAS_TRIGGERED}) == ["schedule"]  # schedule off: k_t again
        np.testing.assert_allclose(s.step()["kp"][6:], 450.0 * m_sup, rtol=1e-12)
        c.apply_inputs({"t_f": -1.0})  # refused by the schedule, reported, nothing changed
        assert "t_f" in c.state.message
        assert s.gain_params()["t_f"] == 0.5
    finally:
        s.sim.close()


def test_a_disabled_schedule_gives_the_configs_constant_gains(session):
    cfg = live_config(CLIP)
    cfg = cfg.replace(schedule=dataclasses.replace(cfg.schedule, enabled=False))
    s = build_session(cfg)
    try:
        prep = runner.build(cfg)
        g = s.sim.gains_fn(0.0, s.sim.base_gains)
        np.testing.assert_allclose(g.kp, prep.gains.kp, rtol=1e-12)
        np.testing.assert_allclose(g.kd, prep.gains.kd, rtol=1e-12)
        assert s.schedule_state() == "tracking (schedule off)"
    finally:
        s.sim.close()


def test_the_clip_loops_and_restart_removes_the_balls(session):
    c = controls_of(session)
    steps = round(session.end / session.dt)
    for _ in range(steps):
        assert session.step() is not None
    assert session.t == pytest.approx(session.end, abs=1e-9)
    assert session.step() is None and session.t == 0.0 and session.loops == 1  # looped
    before = n_bodies(session)
    c.handle_keys({ord("b"): KEY_WAS_TRIGGERED})
    assert n_bodies(session) == before + 1
    session.step()
    c.handle_keys({ord("r"): KEY_WAS_TRIGGERED})
    assert session.t == 0.0 and n_bodies(session) == before and session.row is None


def test_divergence_restarts_and_says_why(session):
    row = session.step()
    limit = session.sim.opt.max_speed
    assert _diverged(row, limit) == ""
    spin = limit + 10.0
    bad = dict(row, v=np.r_[row["v"][:6], np.full(len(row["v"]) - 6, spin)])
    assert _diverged(bad, limit) == f"a joint spins at {spin:.0f} rad/s"
    assert _diverged(dict(row, q=row["q"] * np.nan), limit) == "NaN in the state"
    for _ in range(10):
        session.step()
    real_step = session.sim.step

    def blow_up():
        real_step()
        return bad

    session.sim.step = blow_up
    assert session.step() is None
    assert session.t == 0.0 and session.loops == 1
    assert session.message == f"diverged at clip time 0.20 s (a joint spins at {spin:.0f} rad/s); started again"


def test_a_live_run_refuses_what_it_cannot_do(session):
    with pytest.raises(TrackerError, match="cannot jump in time"):
        session.seek(1.0)
    with pytest.raises(TrackerError, match="unknown gain parameter"):
        session.set_gain("k_q", 1.0)
    with pytest.raises(ConfigError, match="no such config or clip"):
        live_config(REPO / "nope.bvh")
