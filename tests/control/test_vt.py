"""The virtual-trajectory controller: f0 modes, step 2 = SPD + f0, the exact engine restore, bad options."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

from tests.control.conftest import FixedDynamics, random_q, random_spd
from tracker.character.layout import Layout
from tracker.cli import main
from tracker.control.base import Gains, State, Target
from tracker.control.registry import create, names
from tracker.control.spd import SPDController
from tracker.control.vt import VTController
from tracker.errors import ConfigError


def _problem(layout: Layout, rng: np.random.Generator):
    nv = layout.nv
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(0, 5, nv))
    state = State(random_q(layout, rng), rng.normal(0, 1, nv))
    target = Target(random_q(layout, rng), rng.normal(0, 1, nv))
    gains = Gains(rng.uniform(50, 3000, nv), rng.uniform(1, 50, nv))
    return dyn, state, target, gains


def test_vt_is_registered():
    assert "vt" in names()


def test_id_feedforward_is_reduced_inverse_dynamics(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    dyn, state, target, gains = _problem(lay, rng)
    dt = 1 / 60
    vt = VTController(lay, dyn)
    vt.torques(state, target, gains, dt)
    expect = dyn.mass @ ((target.v - state.v) / dt) + dyn.bias
    np.testing.assert_allclose(vt.last_f0, expect, rtol=0, atol=1e-9)


def test_id_feedforward_with_a_free_root_moves_the_joints_at_w0(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    dyn, state, target, gains = _problem(lay, rng)
    dt = 1 / 30
    passive = np.zeros(lay.nv, bool)
    passive[:6] = True
    vt = VTController(lay, dyn, passive=passive)
    vt.torques(state, target, gains, dt)
    f0 = vt.last_f0
    assert np.all(f0[:6] == 0.0)
    acc = np.linalg.solve(dyn.mass, f0 - dyn.bias)  # the motion f0 alone produces, root free
    np.testing.assert_allclose(acc[6:], (target.v[6:] - state.v[6:]) / dt, rtol=0, atol=1e-8)


@pytest.mark.parametrize("passive", [False, True])
def test_step_two_is_semi_implicit_spd_plus_f0(humanoid_like_layout, rng, passive):
    """vt = SPD(extra=f0) to 1e-12, and both equal the formula written out with numpy."""
    lay = humanoid_like_layout
    dt = 1 / 60
    mask = np.zeros(lay.nv, bool)
    if passive:
        mask[:6] = True
    for _ in range(5):
        dyn, state, target, gains = _problem(lay, rng)
        vt = VTController(lay, dyn, passive=mask)
        tau = vt.torques(state, target, gains, dt)
        f0 = vt.last_f0
        spd = SPDController(lay, dyn, passive=mask)
        np.testing.assert_allclose(tau, spd.torques(state, target, gains, dt, extra=f0), rtol=0, atol=1e-12)
        # Written out: (M + Kd h + Kp h²) a = Kp e + Kd (v̄ − v) + f0 − c;  tau = f0 + Kp (e − a h²) + Kd (v̄ − v − a h)
        kp, kd = gains.kp * ~mask, gains.kd * ~mask
        e = lay.difference(target.q, lay.integrate(state.q, state.v, dt))
        dv = target.v - state.v
        a = np.linalg.solve(dyn.mass + np.diag(kd * dt + kp * dt * dt), kp * e + kd * dv + f0 - dyn.bias)
        expect = f0 + kp * (e - a * dt * dt) + kd * (dv - a * dt)
        np.testing.assert_allclose(tau, expect, rtol=0, atol=1e-9 * np.abs(expect).max())


def test_f0_none_is_plain_spd(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    dyn, state, target, gains = _problem(lay, rng)
    tau = VTController(lay, dyn, f0="none").torques(state, target, gains, 1 / 60)
    np.testing.assert_array_equal(tau, SPDController(lay, dyn).torques(state, target, gains, 1 / 60))


def test_bad_f0_mode_and_peek_without_a_simulated_root(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    dyn = FixedDynamics(np.eye(lay.nv), np.zeros(lay.nv))
    with pytest.raises(ConfigError, match="f0 mode 'fast' is not one of: id, peek, lcp, none"):
        create("vt", layout=lay, dynamics=dyn, f0="fast")
    with pytest.raises(ConfigError, match="kinematic"):
        create("vt", layout=lay, dynamics=dyn, f0="peek", engine=object(), root="kinematic")
    with pytest.raises(ConfigError, match="needs the simulated character"):
        create("vt", layout=lay, dynamics=dyn, f0="peek")


def test_restore_state_is_exact_with_contacts():
    """The peek's premise: stepping after saveState/step/restoreState is bit-identical to never peeking."""
    from tracker.character.character import Character
    from tracker.sim.world import World, WorldSettings

    rng = np.random.default_rng(7)
    taus = rng.normal(0, 3, (24, 43))
    taus[:, :6] = 0.0
    runs = []
    for peek in (False, True):
        with World(WorldSettings(dt=1 / 60)) as w:
            c = Character.load(w.client, "humanoid")
            q, v = c.get_state()
            q[2] -= 0.02  # feet in the ground: contacts from the first step
            c.reset_state(q, v)
            states, touching = [], 0
            for tau in taus:
                if peek:
                    sid = p.saveState(physicsClientId=w.client)
                    c.apply_torques(5 * tau)
                    w.step()
                    p.restoreState(sid, physicsClientId=w.client)
                    p.removeState(sid, physicsClientId=w.client)
                c.apply_torques(tau)
                w.step()
                states.append(np.concatenate(c.get_state()))
                touching += bool(p.getContactPoints(c.body_id, physicsClientId=w.client))
            assert touching >= 10  # the restore is exercised with contacts, not only in the air
        runs.append(np.array(states))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_track_cli_bad_options_are_one_line(capsys):
    clip = "data/motions/demo_wave.bvh"
    assert main(["track", clip, "--controller", "vt", "--f0", "fast", "--duration", "0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: controller vt: f0 mode 'fast' is not one of: id, peek, lcp, none"]
    assert main(["track", clip, "--controller", "vt", "--f0", "peek", "--root", "kinematic",
                 "--duration", "0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "kinematic" in err[0]
    assert main(["track", clip, "--f0", "id", "--duration", "0.1"]) == 2
    assert capsys.readouterr().err.strip() == "error: --f0 is an option of controller vt, not spd"


def test_the_peek_gate_sees_ground_limits_and_balls():
    """The gate peeks when the ground, a joint limit or a fast ball is within reach, not in free air."""
    from tracker.character.character import Character
    from tracker.sim.peek import EnginePeek
    from tracker.sim.world import World, WorldSettings

    with World(WorldSettings(dt=1 / 60)) as w:
        c = Character.load(w.client, "humanoid")
        lay = c.layout
        vt = VTController(lay, c, f0="peek", engine=EnginePeek(c))
        q, v = c.get_state()
        c.reset_state(q, v)
        assert vt._engine_may_act(1 / 60)  # standing: feet on the ground, knees at their 0 limit
        lay_q = q.copy()
        lay_q[2] += 2.0
        for name in ("left_knee", "right_knee", "left_elbow", "right_elbow"):
            lay_q[lay[name].q] = 1.0  # away from the 0 .. 2.6 rad limits
        c.reset_state(lay_q, v)
        assert not vt._engine_may_act(1 / 60)  # 2 m up, limbs clear of their limits: nothing can act
        ball = p.loadURDF("sphere_small.urdf", [1.5, 0.0, float(lay_q[2])], physicsClientId=w.client)
        assert not vt._engine_may_act(1 / 60)  # a ball at rest 1.5 m away
        p.resetBaseVelocity(ball, [-60.0, 0, 0], physicsClientId=w.client)
        assert vt._engine_may_act(1 / 60)  # the same ball at 60 m/s reaches it within two steps


def test_gated_peek_in_free_air_is_id_and_ungated_peek_agrees():
    from tracker.character.character import Character
    from tracker.sim.peek import EnginePeek
    from tracker.sim.world import World, WorldSettings

    runs = {}
    for label, f0, gate in (("id", "id", True), ("gated", "peek", True), ("every", "peek", False)):
        with World(WorldSettings(dt=1 / 60)) as w:
            c = Character.load(w.client, "humanoid")
            lay = c.layout
            q, v = c.get_state()
            q[2] += 2.0
            for name in ("left_knee", "right_knee", "left_elbow", "right_elbow"):
                q[lay[name].q] = 1.0
            c.reset_state(q, v)
            p.setGravity(0, 0, 0, physicsClientId=w.client)
            vt = VTController(lay, c, f0=f0, gate=gate, engine=EnginePeek(c))
            gains = Gains.critical_ratio(500.0, 1 / 60, nv=lay.nv)
            rng = np.random.default_rng(3)
            out = []
            for _ in range(20):
                qs, vs = c.get_state()
                w0 = np.r_[np.zeros(6), rng.normal(0, 0.3, lay.nv - 6)]
                c.apply_torques(vt.torques(State(qs, vs), Target(lay.integrate(qs, w0, 1 / 60), w0), gains, 1 / 60))
                w.step()
                out.append(np.concatenate(c.get_state()))
            runs[label] = (np.array(out), vt.peeks, vt.skips)
    assert runs["gated"][1:] == (0, 20)
    np.testing.assert_array_equal(runs["gated"][0], runs["id"][0])
    assert runs["every"][1] == 20
    np.testing.assert_allclose(runs["every"][0], runs["id"][0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("passive", [False, True])
def test_f0_over_a_torque_limit_scales_the_whole_demand(humanoid_like_layout, rng, passive):
    """A joint whose f0 would exceed its limit scales the demanded acceleration of all DOFs alike."""
    lay = humanoid_like_layout
    dyn, state, target, _ = _problem(lay, rng)
    mask = np.zeros(lay.nv, bool)
    mask[:6] = passive
    vt = VTController(lay, dyn, passive=mask)
    dt = 1 / 60
    w0 = target.v * 20.0  # a demand far beyond the limits
    full = vt.feedforward(state.q, state.v, w0, dt, dyn.mass, dyn.bias)
    still = vt.feedforward(state.q, state.v, state.v, dt, dyn.mass, dyn.bias)  # zero acceleration demanded
    tau_max = np.full(lay.nv, np.inf)
    tau_max[6:] = 0.5 * np.abs(full[6:]).max()
    tau_max[6:] = np.maximum(tau_max[6:], np.abs(still[6:]) + 1.0)
    got = vt.feedforward(state.q, state.v, w0, dt, dyn.mass, dyn.bias, tau_max)
    assert np.all(np.abs(got[6:]) <= tau_max[6:] + 1e-9)
    assert np.isclose(np.abs(got[6:]) / tau_max[6:], 1.0).any()  # the binding joint sits at its limit
    s = (got - still) / np.where(full - still == 0, 1, full - still)
    np.testing.assert_allclose(s[(full - still) != 0], s[(full - still) != 0][0], rtol=1e-9)  # one factor
    assert 0 < s[(full - still) != 0][0] < 1
    # Within the limits nothing changes.
    np.testing.assert_array_equal(vt.feedforward(state.q, state.v, w0, dt, dyn.mass, dyn.bias,
                                                 np.full(lay.nv, np.inf)), full)


def test_a_plain_q_v_pair_is_a_target_too(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    dyn, state, target, gains = _problem(lay, rng)
    vt = VTController(lay, dyn)
    np.testing.assert_array_equal(vt.torques((state.q, state.v), (target.q, target.v), gains, 1 / 60),
                                  vt.torques(state, Target(target.q, target.v), gains, 1 / 60))


@pytest.mark.parametrize("substeps", [1, 4])
def test_peek_takes_the_whole_control_step_with_substeps(substeps):
    """With sim.substeps the peek's trial is the control step's physics steps, as the real step will be
    (it was one physics step, its velocity change divided by the control step), the world is then as it
    was, and with no servo gains the peek's f0 lands the joints on w0 closer than id's, whose
    M and c are held over the substeps (with one substep the two agree to rounding)."""
    from tracker.character.character import Character
    from tracker.control.base import Gains
    from tracker.sim.peek import EnginePeek
    from tracker.sim.world import World, WorldSettings

    dt = 1 / 60
    with World(WorldSettings(dt=dt, substeps=substeps)) as w:
        c = Character.load(w.client, "humanoid")
        lay = c.layout
        q, v = c.get_state()
        q[2] += 2.0
        for name in ("left_knee", "right_knee", "left_elbow", "right_elbow"):
            q[lay[name].q] = 1.0  # clear of the joint limits
        rng = np.random.default_rng(5)
        v = np.r_[np.zeros(6), rng.normal(0, 2.0, lay.nv - 6)]
        c.reset_state(q, v)
        tau = np.r_[np.zeros(6), rng.normal(0, 5.0, lay.nv - 6)]
        sid = p.saveState(physicsClientId=w.client)
        v_peek = EnginePeek(c, substeps).velocity_after_step(tau)
        np.testing.assert_array_equal(np.concatenate(c.get_state()), np.concatenate((q, v)))  # put back
        for _ in range(substeps):
            c.apply_torques(tau)
            w.step()
        np.testing.assert_array_equal(v_peek, c.get_state()[1])  # the whole control step
        p.restoreState(sid, physicsClientId=w.client)

        passive = np.zeros(lay.nv, bool)
        passive[:6] = True  # a free root, falling
        zero = Gains(np.zeros(lay.nv), np.zeros(lay.nv), np.full(lay.nv, np.inf))
        w0 = np.r_[np.zeros(6), rng.normal(0, 2.0, lay.nv - 6)]
        target = Target(lay.integrate(q, w0, dt), w0)
        miss = {}
        for f0 in ("id", "peek"):
            p.restoreState(sid, physicsClientId=w.client)
            vt = VTController(lay, c, f0=f0, gate=False, engine=EnginePeek(c, substeps), passive=passive,
                               substeps=substeps)
            tau = vt.torques(State(*c.get_state()), target, zero, dt)
            tau[:6] = 0.0
            for _ in range(substeps):
                c.apply_torques(tau)
                w.step()
            miss[f0] = np.abs(c.get_state()[1][6:] - w0[6:]).max()
        if substeps == 1:
            assert miss["id"] < 1e-9 and miss["peek"] < 1e-9
        else:
            assert miss["id"] > 1e-3 and miss["peek"] < miss["id"] / 3
