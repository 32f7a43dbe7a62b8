"""Balance feedback: the floating-base J̃, its virtual power and sign, the SPD hook, bad options."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

from tests.control.conftest import FixedDynamics, random_q, random_spd
from tracker.control.balance import (
    STRATEGIES,
    BalanceFeedback,
    BalanceOptions,
    leg_chains,
    solve_constrained,
    tilde_jacobian,
)
from tracker.control.base import Gains, State, Target
from tracker.control.spd import SPDController
from tracker.errors import ConfigError, TrackerError


@pytest.fixture()
def humanoid():
    from tracker.character.character import Character

    cid = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=cid)
    yield Character.load(cid, "humanoid")
    p.disconnect(cid)


def _stance_q(char, rng):
    lay = char.layout
    q = random_q(lay, rng)
    q[0:3] = (0.0, 0.0, 1.0)
    return q


def _foot_fixed_velocity(char, q, foot, rng):
    """A random joint velocity with the root velocity that keeps ``foot`` still (v_r = −J_f,r⁻¹ J_f,a v_a)."""
    v = np.zeros(char.layout.nv)
    v[6:] = rng.normal(size=char.layout.nv - 6)
    _, jl, ja = char.point_jacobian(foot, q=q)
    jf = np.vstack([jl, ja])
    v[:6] = -np.linalg.solve(jf[:, :6], jf[:, 6:] @ v[6:])
    return v


def test_leg_chains_run_from_the_foot_to_the_root(humanoid):
    assert leg_chains(humanoid) == {"left_foot": ("left_ankle", "left_knee", "left_hip"),
                                    "right_foot": ("right_ankle", "right_knee", "right_hip")}


def test_tilde_jacobian_gives_the_com_velocity_while_the_foot_stays_put(humanoid):
    rng = np.random.default_rng(0)
    cols = np.arange(6, humanoid.layout.nv)
    for _ in range(3):
        q = _stance_q(humanoid, rng)
        v = _foot_fixed_velocity(humanoid, q, "left_foot", rng)
        _, jl, ja = humanoid.point_jacobian("left_foot", q=q)
        assert np.abs(jl @ v).max() < 1e-12 and np.abs(ja @ v).max() < 1e-12
        jt = tilde_jacobian(humanoid, q, "left_foot", cols)
        assert np.abs(jt @ v[6:] - humanoid.com_jacobian(q)[1] @ v).max() < 1e-12


def test_virtual_power_identity_f_dot_cdot_equals_tau_dot_v(humanoid):
    """fᵀ J̃ v = τᵀ v for τ = J̃ᵀ f, over all joints, for motions that keep the stance foot in place."""
    rng = np.random.default_rng(1)
    cols = np.arange(6, humanoid.layout.nv)
    for foot in humanoid.model.feet:
        q = _stance_q(humanoid, rng)
        f = rng.normal(size=3) * 100.0
        tau = tilde_jacobian(humanoid, q, foot, cols).T @ f
        for _ in range(3):
            v = _foot_fixed_velocity(humanoid, q, foot, rng)
            cdot = humanoid.com_jacobian(q)[1] @ v
            assert f @ cdot == pytest.approx(tau @ v[6:], rel=1e-10, abs=1e-9)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_feedback_pushes_the_com_toward_the_target_for_every_strategy(humanoid, strategy):
    """Standing on the left foot: the virtual force points at the target and the strategy's torques do
    the same work as that force on every motion of the strategy's joints that keeps the foot still."""
    from tracker.sim.support import polygon_of

    rng = np.random.default_rng(2)
    q = humanoid.standing_q()
    q[0:3] = (0.0, 0.0, 1.0)
    fb = BalanceFeedback(humanoid, BalanceOptions(kp=1000.0, kd=0.0, strategy=strategy))
    c = humanoid.com_jacobian(q)[0]
    for direction in ([1, 0], [0, 1], [-1, 0], [0, -1]):
        target = c[:2] + 0.05 * np.array(direction, float)
        # a sole flat on the ground: its four corners around the target
        corners = np.array([[*(target + (dx, dy)), 0.0] for dx in (-0.13, 0.13) for dy in (-0.0475, 0.0475)])
        support = polygon_of(corners, ("left_foot",), np.zeros(4, dtype=int))
        term = fb.term(q, np.zeros(humanoid.layout.nv), support)
        assert term.force[:2] == pytest.approx(1000.0 * 0.05 * np.array(direction))
        assert term.constraints.jac.shape[1] == humanoid.layout.nv and term.constraints.unilateral.sum() == 4
        # the torques are the virtual force's: equal power on every motion that keeps the foot still
        v = _foot_fixed_velocity(humanoid, q, "left_foot", rng)
        cols = fb.columns["left_foot"]
        v[6:] = 0.0
        v[cols] = rng.normal(size=len(cols))
        _, jl, ja = humanoid.point_jacobian("left_foot", q=q)
        jf = np.vstack([jl, ja])
        v[:6] = -np.linalg.solve(jf[:, :6], jf[:, 6:] @ v[6:])
        assert term.force @ (humanoid.com_jacobian(q)[1] @ v) == pytest.approx(term.tau @ v, rel=1e-10)
        assert np.abs(term.tau[:6]).max() == 0.0  # nothing on the unactuated root


def test_solve_constrained_holds_the_constraint_and_the_dynamics():
    rng = np.random.default_rng(3)
    a_mat = random_spd(9, rng)
    rhs = rng.normal(size=9)
    jac = rng.normal(size=(3, 9))
    a, info = solve_constrained(a_mat.copy(), rhs, jac)
    assert info == 0
    assert np.abs(jac @ a).max() < 1e-7 * np.abs(rhs).max()  # up to the solve's 1e-10 ridge
    lam = np.linalg.lstsq(jac.T, a_mat @ a - rhs, rcond=None)[0]
    assert np.abs(a_mat @ a - rhs - jac.T @ lam).max() < 1e-10  # the residual is a constraint force


def test_spd_extra_force_enters_the_implicit_solve(humanoid_like_layout):
    """With ``extra`` in the right-hand side the servo sees the acceleration it causes: the simulated
    acceleration changes by (M + K)⁻¹ extra (K = Kd·dt + Kp·dt²), not by M⁻¹ extra."""
    lay = humanoid_like_layout
    rng = np.random.default_rng(4)
    m, c = random_spd(lay.nv, rng), rng.normal(size=lay.nv)
    ctrl = SPDController(lay, FixedDynamics(m, c))
    q, v = random_q(lay, rng), rng.normal(size=lay.nv)
    tgt = Target(random_q(lay, rng), rng.normal(size=lay.nv))
    gains, dt = Gains.critical_ratio(300.0, 1 / 60, nv=lay.nv), 1 / 60
    extra = rng.normal(size=lay.nv) * 10
    tau0 = ctrl.torques(State(q, v), tgt, gains, dt)
    tau1 = ctrl.torques(State(q, v), tgt, gains, dt, extra=extra)
    # the extra force is partly absorbed by the servo (it sees the acceleration extra causes)
    a0, a1 = np.linalg.solve(m, tau0 - c), np.linalg.solve(m, tau1 - c)
    k = gains.kd * dt + gains.kp * dt * dt
    assert np.abs((m + np.diag(k)) @ (a1 - a0) - extra).max() < 1e-8


def test_unknown_strategy_or_target_is_a_one_line_config_error():
    with pytest.raises(ConfigError, match="strategy 'knee' is not one of: jacobian, ankle, hip"):
        BalanceOptions(strategy="knee")
    with pytest.raises(ConfigError, match="target"):
        BalanceOptions(target="origin")
    with pytest.raises(TrackerError, match="kp"):
        BalanceOptions(kp=-1.0)


def test_the_feedbacks_closed_form_is_the_solved_tilde_jacobian(humanoid):
    """The torque BalanceFeedback computes equals J̃ᵀ f with J̃ from the derivation's solve."""
    from tracker.sim.support import polygon_of

    rng = np.random.default_rng(9)
    q = _stance_q(humanoid, rng)
    fb = BalanceFeedback(humanoid, BalanceOptions(kp=700.0, kd=30.0))
    pts = np.array([[0.3, 0.2, 0.0], [0.5, -0.1, 0.0], [0.1, -0.3, 0.0], [0.25, 0.25, 0.0], [0.2, 0.1, 0.0],
                    [0.3, -0.3, 0.0]])
    support = polygon_of(pts, ("left_foot", "right_foot"), np.array([0, 1, 1, 0, 0, 1]))
    v = rng.normal(size=humanoid.layout.nv)
    term = fb.term(q, v, support)
    assert np.abs(term.force).max() > 1.0 and len(term.constraints.jac) == 6  # both feet are stance feet
    cols = fb.columns["left_foot"]
    want = np.zeros(humanoid.layout.nv)
    for foot in ("left_foot", "right_foot"):
        want[cols] += tilde_jacobian(humanoid, q, foot, cols).T @ (term.force / 2)
    assert np.abs(term.tau - want).max() < 1e-9 * max(1.0, np.abs(want).max())


def test_the_one_call_kernel_equals_the_generic_path(humanoid):
    """BalanceFeedback's compiled one-call path (kinematics, Jacobians and feedback at once) gives the
    same term as the generic one (the character's Jacobians, then the feedback), which Y-up models use;
    also with one foot on the ground."""
    from tracker.sim.support import polygon_of

    rng = np.random.default_rng(12)
    q = _stance_q(humanoid, rng)
    v = rng.normal(size=humanoid.layout.nv)
    pts = np.array([[0.3, 0.2, 0.0], [0.5, -0.1, 0.0], [0.1, -0.3, 0.0], [0.2, 0.3, 0.0], [0.4, 0.25, 0.0],
                    [0.2, -0.2, 0.0]])
    for feet, fop in ((("left_foot", "right_foot"), [0, 1, 1, 0, 0, 1]), (("right_foot",), [0] * 6)):
        support = polygon_of(pts, feet, np.array(fop))
        fast = BalanceFeedback(humanoid, BalanceOptions(kp=900.0, kd=50.0))
        slow = BalanceFeedback(humanoid, BalanceOptions(kp=900.0, kd=50.0))
        slow._direct = False
        a, b = fast.term(q, v, support), slow.term(q, v, support)
        for x, y in ((a.tau, b.tau), (a.force, b.force), (a.com, b.com), (a.com_velocity, b.com_velocity),
                     (a.constraints.jac, b.constraints.jac)):
            assert np.abs(x - y).max() <= 1e-12 * max(1.0, np.abs(y).max())
        assert np.abs(a.tau).max() > 0


@pytest.mark.parametrize("points", [
    [[0.05, 0.0, 0.0]],  # a corner
    [[0.05, -0.0475, 0.0], [0.05, 0.0475, 0.0]],  # the toe edge
    [[-0.08, 0.0475, 0.0], [0.05, 0.0475, 0.0], [0.18, 0.0475, 0.0]],  # the outer edge, three points on it
])
def test_a_foot_on_a_point_or_an_edge_is_not_a_stance_foot(humanoid, points):
    """The ground holds no moment about a point or an edge: a foot on one rolls about it, so it gets no
    feedback torque and SPD's prediction does not hold it (its ankle keeps the implicit damping); a
    sole flat on the ground (three points spanning an area) is a stance foot."""
    from tracker.control.balance import stance_mask
    from tracker.sim.support import polygon_of

    q = humanoid.standing_q()
    q[0:3] = (0.0, 0.0, 1.0)
    fb = BalanceFeedback(humanoid, BalanceOptions(kp=1000.0, kd=100.0))
    support = polygon_of(np.array(points), ("left_foot",), np.zeros(len(points), dtype=int))
    assert stance_mask(support) == 0
    term = fb.term(q, np.zeros(humanoid.layout.nv), support)
    assert term.constraints is None and not term.tau.any() and not term.force.any()
    assert np.isfinite(term.target).all()  # the support's centre is still the target, for the record
    # with the other foot flat on the ground, that one is the stance foot, alone
    flat = np.array([[0.4, -0.05, 0.0], [0.4, 0.05, 0.0], [0.66, 0.0, 0.0]])
    both = polygon_of(np.vstack([points, flat]), ("left_foot", "right_foot"),
                      np.array([0] * len(points) + [1, 1, 1]))
    assert stance_mask(both) == 0b10
    term = fb.term(q, np.zeros(humanoid.layout.nv), both)
    assert term.constraints is not None and len(term.constraints.jac) == 3
    assert (term.constraints.group == 0).all() and term.force.any()


def test_the_active_set_reports_the_rows_it_held():
    """Two rows of one foot, one of which would have to pull: it is dropped and the other held (the foot
    pivots there); ``held=True`` reports which, and :func:`held_contacts` keeps just those."""
    from tracker.arrays import frozen
    from tracker.control.balance import Contacts, held_contacts

    a_mat = np.diag([2.0, 3.0, 4.0])
    jac = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    rhs = np.array([-1.0, 2.0, 0.5])  # row 0 pushes (λ > 0), row 1 would have to pull
    contacts = Contacts(jac, frozen(np.ones(2), np.bool_), frozen(np.zeros(2), np.int64))
    a, info, rows = solve_constrained(a_mat, rhs, contacts, held=True)
    assert info == 0 and rows.tolist() == [True, False]
    assert a == pytest.approx([0.0, 2.0 / 3.0, 0.125], abs=1e-9)
    kept = held_contacts(contacts, rows)
    assert kept.jac.shape == (1, 3) and kept.equalities().unilateral.tolist() == [False]
    assert held_contacts(contacts, np.zeros(2, dtype=bool)) is None
    a2, info2 = solve_constrained(a_mat, rhs, contacts)  # the plain call is unchanged
    assert info2 == 0 and a2 == pytest.approx(a)


def test_a_fallen_body_has_no_stance_feet(humanoid):
    """With another link on the ground too (a hand, the pelvis: it fell) the feet are not the body's
    whole support: no feedback, and SPD's prediction holds nothing."""
    from dataclasses import replace

    from tracker.sim.support import polygon_of

    q = humanoid.standing_q()
    q[0:3] = (0.0, 0.0, 1.0)
    fb = BalanceFeedback(humanoid, BalanceOptions(kp=1000.0, kd=100.0))
    sole = np.array([[x, y, 0.0] for x in (0.0, 0.26) for y in (0.0, 0.095)])
    support = polygon_of(sole, ("left_foot",), np.zeros(4, dtype=int))
    assert fb.term(q, np.zeros(humanoid.layout.nv), support).constraints is not None
    term = fb.term(q, np.zeros(humanoid.layout.nv), replace(support, others=2))
    assert term.constraints is None and not term.tau.any()


def test_gravity_feed_forward_holds_the_stance_without_sag():
    """controller.balance.gravity: the static torques that carry the weight on the stance feet, fed forward."""
    from tracker.control.balance import BalanceOptions, gravity_torques
    from tracker.sim.stance import stand_simulation

    drops = {}
    for gravity in (False, True):
        sim = stand_simulation(balance=BalanceOptions(kp=0.0, kd=0.0, gravity=gravity))
        try:
            z0 = sim.character.get_state()[0][2]
            for _ in range(30):  # 0.5 s at 1/60 s
                sim.step()
            q, v = sim.character.get_state()
            drops[gravity] = z0 - q[2]
            term = sim.balance_term
            assert term.constraints is not None and len(term.constraints.jac) >= 6  # both soles flat
            if gravity:
                jac = term.constraints.jac
                g = sim.character.bias_forces(q, np.zeros_like(v))
                tau = gravity_torques(g, jac)
                assert not tau[:6].any()
                lam = np.linalg.lstsq(jac[:, 6:].T, g[6:] - tau[6:], rcond=None)[0]
                # the contact forces it chose carry the weight and its moments: the root's rows balance
                np.testing.assert_allclose(jac[:, :6].T @ lam, g[:6], atol=1e-6 * abs(g[2]))
        finally:
            sim.close()
    # without it SPD holds the weight by position error alone (2.8 mm of sag after 0.5 s, and sinking:
    # this stance falls at 1.8 s); with it, none (< 0.1 mm; it stands 3 s at 1/30, 1/60 and 1/120 s)
    assert drops[False] > 0.002 and abs(drops[True]) < 1e-4, drops
