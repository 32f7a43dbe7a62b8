"""SPD: the paper's toy example, the defining implicit equation, limits, stability."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.character.layout import Layout
from tracker.control.base import Gains, State, Target
from tracker.control.pd import PDController
from tracker.control.spd import SPDController
from tracker.errors import ConfigError, SimulationError
from tracker.sim import tan2011
from tracker.sim.pendulum import TwoLinkPendulum

from .conftest import FixedDynamics, random_q, random_spd

ONE_DOF = Layout.build([("slider", "revolute")], has_base=False)
UNIT_MASS = FixedDynamics(np.eye(1), np.zeros(1))


def _unit_mass_run(p0, pdot0, q_bar, dt, steps, prediction, integrator):
    """Unit mass, zero bias, kp·dt² = 1e9 (kp -> ∞), kd = kp·dt; returns (q, v) per step."""
    ctrl = SPDController(ONE_DOF, UNIT_MASS, target_velocity="zero", prediction=prediction)
    kp = 1e9 / dt**2
    gains = Gains.critical_ratio(kp, dt, nv=1)
    q, v = np.array([p0]), np.array([pdot0])
    out = [(q[0], v[0])]
    for _ in range(steps):
        tau = ctrl.torques(State(q, v), Target(np.array([q_bar]), np.zeros(1)), gains, dt)
        a = tau  # unit mass, no bias
        if integrator == "explicit":
            q, v = q + v * dt, v + a * dt
        else:
            v = v + a * dt
            q = q + v * dt
        out.append((q[0], v[0]))
    return out


@pytest.mark.parametrize("dt", [1e-3, 1.0 / 30.0, 0.5])
def test_toy_example_reaches_the_target_in_two_explicit_euler_steps(dt):
    # Tan et al. 2011 §3.2: from q0 = p, v0 = ṗ, with kp -> ∞ and kd = kp·dt,
    # forward Euler gives q1 = p + dt·ṗ, v1 = (q̄ − p − dt·ṗ)/dt, q2 = q̄,
    # whatever the time step; and it then stays there (v2 = 0).
    p, pdot, q_bar = 0.3, -2.0, 1.0
    traj = _unit_mass_run(p, pdot, q_bar, dt, 6, "explicit", "explicit")
    (q1, v1), (q2, v2) = traj[1], traj[2]
    assert q1 == pytest.approx(p + dt * pdot, abs=1e-12)
    assert v1 == pytest.approx((q_bar - p - dt * pdot) / dt, rel=1e-6)
    assert q2 == pytest.approx(q_bar, abs=1e-6)
    assert abs(v2) * dt < 1e-6
    for qn, _ in traj[3:]:
        assert qn == pytest.approx(q_bar, abs=1e-6)


@pytest.mark.parametrize("dt", [1e-3, 1.0 / 30.0, 0.5])
def test_semi_implicit_prediction_halves_the_distance_each_symplectic_step(dt):
    # With PyBullet's integrator (v' = v + a dt, q' = q + v' dt) and the Kp·dt²
    # term, kp -> ∞ and kd = kp·dt give (M + 2 kp dt²) a = ..., hence
    # q1 = (p + q̄)/2 regardless of ṗ and q_n = q̄ − (q̄ − p)/2^n.
    p, pdot, q_bar = 0.3, -2.0, 1.0
    traj = _unit_mass_run(p, pdot, q_bar, dt, 8, "semi_implicit", "semi_implicit")
    for n, (qn, _) in enumerate(traj[1:], start=1):
        assert qn == pytest.approx(q_bar - (q_bar - p) / 2**n, abs=1e-6)


@pytest.mark.parametrize("prediction", ["explicit", "semi_implicit"])
@pytest.mark.parametrize("target_velocity", ["ref", "zero"])
def test_torque_equals_pd_law_at_the_predicted_next_state(
    humanoid_like_layout, rng, prediction, target_velocity
):
    # The defining property: with a = M⁻¹(tau − c) the acceleration tau produces,
    # tau = Kp·(q̄ ⊖ q') + Kd·(v̄ − v') where v' = v + a dt and
    # q' = q ⊕ v dt (explicit) or ≈ (q ⊕ v dt) ⊕ a dt² (semi-implicit).
    lay = humanoid_like_layout
    nv, dt = lay.nv, 1.0 / 60.0
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(size=nv) * 5.0)
    ctrl = SPDController(lay, dyn, target_velocity=target_velocity, prediction=prediction)
    gains = Gains(rng.uniform(100.0, 3000.0, nv), rng.uniform(1.0, 50.0, nv))
    q, qb = random_q(lay, rng), random_q(lay, rng)
    v, vb = rng.normal(size=nv), rng.normal(size=nv)
    tau = ctrl.torques(State(q, v), Target(qb, vb), gains, dt)

    a = np.linalg.solve(dyn.mass, tau - dyn.bias)
    p_err = lay.difference(qb, lay.integrate(q, v, dt))
    if prediction == "semi_implicit":
        p_err = p_err - a * dt * dt
    v_goal = vb if target_velocity == "ref" else np.zeros(nv)
    expected = gains.kp * p_err + gains.kd * (v_goal - (v + a * dt))
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-8 * np.abs(expected).max())


def test_passive_dofs_get_no_force_but_their_inertia_couples(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    nv, dt = lay.nv, 1.0 / 30.0
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(size=nv))
    passive = np.zeros(nv, dtype=bool)
    passive[:6] = True  # a free root
    gains = Gains(np.full(nv, 500.0), np.full(nv, 500.0 * dt))
    q, qb, v, vb = random_q(lay, rng), random_q(lay, rng), rng.normal(size=nv), rng.normal(size=nv)

    ctrl = SPDController(lay, dyn, passive=passive, prediction="explicit")
    tau = ctrl.torques(State(q, v), Target(qb, vb), gains, dt)
    assert np.all(tau[:6] == 0.0)

    # The actuated forces still satisfy the implicit law with the FULL mass matrix ...
    a = np.linalg.solve(dyn.mass, tau - dyn.bias)
    p_err = lay.difference(qb, lay.integrate(q, v, dt))
    expected = gains.kp * p_err + gains.kd * (vb - v - a * dt)
    np.testing.assert_allclose(tau[6:], expected[6:], rtol=1e-9, atol=1e-9)
    # ... and differ from what a model without the root's inertia would give.
    dyn_joints = FixedDynamics(dyn.mass[6:, 6:], dyn.bias[6:])
    joints_only = Layout.build([(s.name, s.kind) for s in lay.joints], has_base=False)
    tau_no_root = SPDController(joints_only, dyn_joints, prediction="explicit").torques(
        State(q[7:], v[6:]), Target(qb[7:], vb[6:]), Gains(gains.kp[6:], gains.kd[6:]), dt
    )
    assert np.abs(tau_no_root - tau[6:]).max() > 1e-3


@pytest.mark.parametrize("prediction", ["explicit", "semi_implicit"])
def test_spd_tends_to_pd_as_dt_goes_to_zero(prediction):
    # Same state and target: SPD − PD = Kp·(prediction shift) − Kd·a·dt = O(dt).
    pend = TwoLinkPendulum()
    lay = pend.layout
    q, v = np.array([0.4, -1.1]), np.array([1.5, -0.7])
    target = Target(np.array([0.9, 0.2]), np.array([-0.3, 0.8]))
    gains = Gains(np.array([300.0, 200.0]), np.array([10.0, 8.0]))
    pd = PDController(lay).torques(State(q, v), target, gains, 0.0)
    spd = SPDController(lay, pend, prediction=prediction)
    diffs = {
        dt: np.abs(spd.torques(State(q, v), target, gains, dt) - pd).max()
        for dt in (1e-3, 1e-4, 1e-6)
    }
    # Linear convergence: 10x smaller dt, 10x closer (±15%), and the slope
    # diff/dt settles (within 2% between 100 µs and 1 µs).
    assert 8.5 < diffs[1e-3] / diffs[1e-4] < 11.5
    assert diffs[1e-6] / 1e-6 == pytest.approx(diffs[1e-4] / 1e-4, rel=0.02)
    # At dt = 1 µs the two agree to 1e-4 relative.
    assert diffs[1e-6] < 1e-4 * np.abs(pd).max()


def test_pd_torque_limits_clip_and_leave_other_dofs_alone(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    nv, dt = lay.nv, 1.0 / 60.0
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(size=nv) * 20.0)
    ctrl = PDController(lay, dyn)
    limit = np.linspace(5.0, 60.0, nv)
    limited = Gains(np.full(nv, 2000.0), np.full(nv, 2000.0 * dt), tau_max=limit)
    free = Gains(limited.kp, limited.kd)
    saturated = 0
    for _ in range(20):
        state = State(random_q(lay, rng), rng.normal(size=nv) * 3.0)
        target = Target(random_q(lay, rng), rng.normal(size=nv))
        tau = ctrl.torques(state, target, limited, dt)
        tau_free = ctrl.torques(state, target, free, dt)
        assert np.all(np.abs(tau) <= limit)
        inside = np.abs(tau_free) <= limit
        np.testing.assert_array_equal(tau[inside], tau_free[inside])
        np.testing.assert_array_equal(tau[~inside], np.sign(tau_free[~inside]) * limit[~inside])
        saturated += int((~inside).sum())
    assert saturated > 20  # the limits did bite


@pytest.mark.parametrize("prediction", ["explicit", "semi_implicit"])
def test_spd_torque_limits_keep_the_pd_law_at_the_predicted_state_clipped(humanoid_like_layout, rng, prediction):
    # With limits, each DOF's torque is its servo force at the predicted next state, clipped, where
    # the prediction uses the acceleration the *limited* torques produce: the unsaturated DOFs are
    # re-solved against what the saturated ones really do (not the unlimited solve, then clipped).
    lay = humanoid_like_layout
    nv, dt = lay.nv, 1.0 / 60.0
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(size=nv) * 20.0)
    ctrl = SPDController(lay, dyn, prediction=prediction)
    limit = np.linspace(5.0, 60.0, nv)
    limited = Gains(np.full(nv, 2000.0), np.full(nv, 2000.0 * dt), tau_max=limit)
    free = Gains(limited.kp, limited.kd)
    saturated = changed = 0
    for _ in range(20):
        q, qb = random_q(lay, rng), random_q(lay, rng)
        v, vb = rng.normal(size=nv) * 3.0, rng.normal(size=nv)
        tau = ctrl.torques(State(q, v), Target(qb, vb), limited, dt)
        assert np.all(np.abs(tau) <= limit + 1e-12)
        a = np.linalg.solve(dyn.mass, tau - dyn.bias)
        p_err = lay.difference(qb, lay.integrate(q, v, dt))
        if prediction == "semi_implicit":
            p_err = p_err - a * dt * dt
        servo = limited.kp * p_err + limited.kd * (vb - (v + a * dt))
        np.testing.assert_allclose(tau, np.clip(servo, -limit, limit), rtol=1e-9, atol=1e-9 * limit.max())
        at_limit = np.abs(tau) >= limit * (1 - 1e-12)
        np.testing.assert_array_equal(np.sort(ctrl.saturated), np.flatnonzero(at_limit))
        tau_free = ctrl.torques(State(q, v), Target(qb, vb), free, dt)
        saturated += int(at_limit.sum())
        changed += int((~at_limit & ~np.isclose(tau, tau_free)).sum())
    assert saturated > 20  # the limits did bite
    assert changed >= 5  # ... and the unsaturated DOFs answered to it


def test_spd_limits_that_never_bite_change_nothing(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    nv, dt = lay.nv, 1.0 / 60.0
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(size=nv))
    ctrl = SPDController(lay, dyn)
    free = Gains(np.full(nv, 200.0), np.full(nv, 200.0 * dt))
    state, target = State(random_q(lay, rng), rng.normal(size=nv)), Target(random_q(lay, rng), rng.normal(size=nv))
    tau_free = ctrl.torques(state, target, free, dt)
    tau = ctrl.torques(state, target, Gains(free.kp, free.kd, tau_max=np.abs(tau_free) * 1.01), dt)
    np.testing.assert_array_equal(tau, tau_free)
    assert ctrl.saturated.size == 0


def test_zero_target_velocity_ignores_the_reference_velocity(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    nv = lay.nv
    dyn = FixedDynamics(random_spd(nv, rng), np.zeros(nv))
    ctrl = SPDController(lay, dyn, target_velocity="zero")
    gains = Gains(np.full(nv, 100.0), np.full(nv, 5.0))
    state = State(random_q(lay, rng), rng.normal(size=nv))
    qb = random_q(lay, rng)
    t1 = ctrl.torques(state, Target(qb, rng.normal(size=nv)), gains, 0.01)
    t2 = ctrl.torques(state, Target(qb, np.zeros(nv)), gains, 0.01)
    np.testing.assert_array_equal(t1, t2)


def test_inputs_are_not_modified(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    nv = lay.nv
    dyn = FixedDynamics(random_spd(nv, rng), rng.normal(size=nv))
    arrays = [random_q(lay, rng), rng.normal(size=nv), random_q(lay, rng), rng.normal(size=nv)]
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.setflags(write=False)
    gains = Gains(np.full(nv, 300.0), np.full(nv, 5.0), tau_max=np.full(nv, 1.0))
    for prediction in ("explicit", "semi_implicit"):
        SPDController(lay, dyn, prediction=prediction).torques(
            State(arrays[0], arrays[1]), Target(arrays[2], arrays[3]), gains, 0.02
        )
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_bad_options_and_an_indefinite_mass_matrix_raise_project_errors():
    with pytest.raises(
        ConfigError, match="prediction 'implicit' is not one of: explicit, semi_implicit"
    ):
        SPDController(ONE_DOF, UNIT_MASS, prediction="implicit")
    with pytest.raises(ConfigError, match="target_velocity 'reference' is not one of: ref, zero"):
        SPDController(ONE_DOF, UNIT_MASS, target_velocity="reference")
    broken = FixedDynamics(-np.eye(1), np.zeros(1))
    with pytest.raises(SimulationError, match="not positive definite"):
        SPDController(ONE_DOF, broken).torques(
            State(np.zeros(1), np.zeros(1)),
            Target(np.ones(1), np.zeros(1)),
            Gains([1.0], [0.0]),
            0.01,
        )


# -- stability on the two-link pendulum ---------------------------------------------

BASE_KP = 300.0  # the paper's medium gain, at which plain PD still works at 1/60 s
HUGE = BASE_KP * 1e4  # the gains scaled by 10,000


@pytest.mark.parametrize(
    "integrator, prediction",
    [("explicit", "explicit"), ("semi_implicit", "semi_implicit"), ("explicit", "semi_implicit")],
)
def test_spd_with_gains_times_10000_is_stable_at_30_hz(integrator, prediction):
    for formulation in ("SPD", "SPD with ref. velocity"):
        res = tan2011.track(
            formulation, HUGE, 1.0 / 30.0, integrator=integrator, prediction=prediction
        )
        assert not res.diverged
        # It tracks: within 1.5 steps of lag of a reference moving at <= 1 rad/s.
        assert res.e_inf.max() < 1.5 / 30.0


def test_pd_and_mismatched_spd_diverge_with_those_gains():
    assert tan2011.track("PD", HUGE, 1.0 / 30.0).diverged
    # The paper's explicit prediction under PyBullet's symplectic Euler: unstable at
    # kd = kp·dt (1-DOF analysis: it needs kp·dt²/m < 4), hence the semi-implicit variant.
    assert tan2011.track(
        "SPD", HUGE, 1.0 / 30.0, integrator="semi_implicit", prediction="explicit"
    ).diverged


@pytest.mark.parametrize(
    "prediction, w, stable",
    [
        ("explicit", 3.9, True),
        ("explicit", 4.1, False),
        ("semi_implicit", 4.1, True),
        ("semi_implicit", 1e6, True),
    ],
)
def test_one_dof_stability_boundary_under_symplectic_euler(prediction, w, stable):
    # Unit mass, kd = kp·dt, w = kp·dt²: the explicit prediction's closed loop has
    # det = (1 − w)/(1 + w), trace = (2 − w)/(1 + w), so it is stable iff w < 4;
    # the semi-implicit prediction (implicit Euler on the spring) for every w.
    dt = 0.1
    ctrl = SPDController(ONE_DOF, UNIT_MASS, target_velocity="zero", prediction=prediction)
    gains = Gains.critical_ratio(w / dt**2, dt, nv=1)
    q, v = np.array([1.0]), np.zeros(1)
    target = Target(np.zeros(1), np.zeros(1))
    for _ in range(3000):  # near w = 4 the slowest mode decays/grows by ~1% a step
        v = v + ctrl.torques(State(q, v), target, gains, dt) * dt
        q = q + v * dt
        if abs(q[0]) > 1e3:
            break
    assert (abs(q[0]) < 1e-6) == stable, q


def test_spd_torque_limits_with_stance_contacts_settle_on_one_contact_set(humanoid_like_layout, rng):
    """With stance contacts (balance) and torque limits, the torques are the servo forces at the
    predicted state, clipped, where the prediction is the one the *limited* torques give with the
    contacts they need (the ground pushes, never pulls): the contact and the limit active sets agree.
    (Re-choosing the contacts inside every limit pass cycled between them on the free-root forearm
    pass and ended on a state that let a stiff ankle loose.)"""
    from tracker.arrays import frozen
    from tracker.control.balance import Contacts

    lay = humanoid_like_layout
    nv, dt = lay.nv, 1.0 / 60.0
    mass = random_spd(nv, rng)
    limit = np.linspace(5.0, 60.0, nv)
    limited = Gains(np.full(nv, 2000.0), np.full(nv, 2000.0 * dt), tau_max=limit)
    k_rows = 6
    group = frozen(np.array([0, 0, 0, 1, 1, 1]), np.int64)
    consistent = bit = 0
    for trial in range(30):
        dyn = FixedDynamics(mass, rng.normal(size=nv) * 20.0)
        ctrl = SPDController(lay, dyn)
        contacts = Contacts(rng.normal(size=(k_rows, nv)), frozen(np.ones(k_rows), np.bool_), group)
        q, qb = random_q(lay, rng), random_q(lay, rng)
        v, vb = rng.normal(size=nv) * 3.0, rng.normal(size=nv)
        tau = ctrl.torques(State(q, v), Target(qb, vb), limited, dt, constraints=contacts)
        assert np.all(np.abs(tau) <= limit + 1e-12)
        # the motion these torques make with the contacts the prediction held: those push (λ >= 0)
        held = ctrl.held
        if held is None:
            a, lam = np.linalg.solve(mass, tau - dyn.bias), np.zeros(0)
        else:
            j = held.jac
            kkt = np.block([[mass, -j.T], [j, np.zeros((len(j), len(j)))]])
            sol = np.linalg.solve(kkt, np.concatenate([tau - dyn.bias, np.zeros(len(j))]))
            a, lam = sol[:nv], sol[nv:]
        p_err = lay.difference(qb, lay.integrate(q, v, dt)) - a * dt * dt
        servo = limited.kp * p_err + limited.kd * (vb - (v + a * dt))
        bit += len(ctrl.saturated) > 0
        ok = np.allclose(tau, np.clip(servo, -limit, limit), rtol=1e-7, atol=1e-7 * limit.max())
        consistent += ok and bool((lam >= -1e-6 * max(1.0, np.abs(lam).max(initial=0.0))).all())
    assert bit >= 20  # the limits did bite
    assert consistent == 30
