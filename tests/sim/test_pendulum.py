"""The analytic two-link pendulum: against Lagrange's equations and against PyBullet."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.control.base import Dynamics
from tracker.sim.pendulum import PendulumParams, TwoLinkPendulum, pendulum_urdf

RODS = PendulumParams.uniform_rods(m1=0.7, m2=0.3, l1=1.1, l2=0.8)
STATES = [
    (np.array([0.4, -1.1]), np.array([1.5, -0.7])),
    (np.array([-2.5, 3.0]), np.array([-4.0, 6.0])),
    (np.array([1.0, 2.0]), np.array([0.0, 0.0])),
]


def test_layout_has_two_hinges_and_no_base():
    pend = TwoLinkPendulum(RODS)
    assert isinstance(pend, Dynamics)
    assert pend.layout.has_base is False
    assert (pend.layout.nq, pend.layout.nv) == (2, 2)
    assert pend.layout.names == ("hinge1", "hinge2")


@pytest.mark.parametrize("params", [RODS, PendulumParams.point_masses(0.68, 0.22, 1.0, 1.0)])
def test_bias_forces_follow_from_the_lagrangian(params):
    # c_i = Σ_jk (∂M_ij/∂q_k − ½ ∂M_jk/∂q_i) v_j v_k + ∂V/∂q_i, by central differences.
    pend = TwoLinkPendulum(params)
    h = 1e-6

    def potential(q):
        return pend.energy(q, np.zeros(2))

    for q, v in STATES:
        dM = np.zeros((2, 2, 2))  # dM[k] = ∂M/∂q_k
        dV = np.zeros(2)
        for k in range(2):
            e = np.zeros(2)
            e[k] = h
            dM[k] = (pend.mass_matrix(q + e) - pend.mass_matrix(q - e)) / (2 * h)
            dV[k] = (potential(q + e) - potential(q - e)) / (2 * h)
        c = (
            np.array(
                [
                    sum(
                        dM[k][i, j] * v[j] * v[k] - 0.5 * dM[i][j, k] * v[j] * v[k]
                        for j in range(2)
                        for k in range(2)
                    )
                    for i in range(2)
                ]
            )
            + dV
        )
        np.testing.assert_allclose(pend.bias_forces(q, v), c, rtol=1e-7, atol=1e-7)
        m = pend.mass_matrix(q)
        np.testing.assert_allclose(m, m.T, atol=0)
        assert np.linalg.eigvalsh(m).min() > 0


def test_point_masses_match_the_textbook_double_pendulum():
    # m1 = m2 = m, l1 = l2 = l: M = m l² [[3 + 2 cos q2, 1 + cos q2], [1 + cos q2, 1]].
    pend = TwoLinkPendulum(PendulumParams.point_masses(2.0, 2.0, 0.5, 0.5))
    q2 = 0.7
    expected = 2.0 * 0.25 * np.array([[3 + 2 * np.cos(q2), 1 + np.cos(q2)], [1 + np.cos(q2), 1.0]])
    np.testing.assert_allclose(pend.mass_matrix(np.array([0.3, q2])), expected, rtol=1e-14)
    # Hanging straight down at rest: no torque needed; horizontal link 1: (m1 + m2)·g·l1 + m2·g·l2.
    np.testing.assert_allclose(pend.bias_forces(np.zeros(2), np.zeros(2)), [0.0, 0.0], atol=1e-15)
    c = pend.bias_forces(np.array([np.pi / 2, 0.0]), np.zeros(2))
    np.testing.assert_allclose(c, [9.81 * (4.0 * 0.5 + 2.0 * 0.5), 9.81 * 2.0 * 0.5], rtol=1e-12)


def test_free_swing_conserves_energy_with_symplectic_euler():
    pend = TwoLinkPendulum(RODS)
    q, v = np.array([1.2, -0.5]), np.array([0.0, 2.0])
    e0 = pend.energy(q, v)
    dt = 1e-4
    worst = 0.0
    for _ in range(20000):  # 2 s
        q, v = pend.step(q, v, np.zeros(2), dt, "semi_implicit")
        worst = max(worst, abs(pend.energy(q, v) - e0))
    assert worst < 2e-3 * abs(e0)


def test_step_does_not_modify_its_inputs_and_rejects_unknown_integrators():
    pend = TwoLinkPendulum(RODS)
    q, v, tau = np.array([0.1, 0.2]), np.array([0.3, 0.4]), np.array([1.0, -1.0])
    for a in (q, v, tau):
        a.setflags(write=False)
    q2, v2 = pend.step(q, v, tau, 0.01, "explicit")
    np.testing.assert_array_equal(q2, q + v * 0.01)  # forward Euler moves q with the OLD v
    np.testing.assert_allclose(v2, v + pend.acceleration(q, v, tau) * 0.01)
    with pytest.raises(ValueError, match="integrator 'rk4' is not one of: explicit, semi_implicit"):
        pend.step(q, v, tau, 0.01, "rk4")


# -- cross-check against PyBullet's Featherstone implementation ----------------------


@pytest.fixture(scope="module")
def bullet_pendulum(tmp_path_factory):
    p = pytest.importorskip("pybullet")
    urdf = pendulum_urdf(RODS)
    path = tmp_path_factory.mktemp("pendulum") / "pendulum.urdf"
    path.write_text(urdf)
    cid = p.connect(p.DIRECT)
    p.setGravity(0, 0, -RODS.g, physicsClientId=cid)
    body = p.loadURDF(
        str(path), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=cid
    )
    for j in range(2):
        p.changeDynamics(
            body,
            j,
            linearDamping=0,
            angularDamping=0,
            jointDamping=0,
            maxJointVelocity=1e3,
            physicsClientId=cid,
        )
    p.setJointMotorControlArray(
        body, [0, 1], p.VELOCITY_CONTROL, forces=[0, 0], physicsClientId=cid
    )
    yield p, cid, body
    p.disconnect(cid)


def test_mass_matrix_and_bias_forces_match_pybullet(bullet_pendulum):
    p, cid, body = bullet_pendulum
    pend = TwoLinkPendulum(RODS)
    for q, v in STATES:
        m_pb = np.array(p.calculateMassMatrix(body, q.tolist(), physicsClientId=cid))
        c_pb = np.array(
            p.calculateInverseDynamics(
                body, q.tolist(), v.tolist(), [0.0, 0.0], physicsClientId=cid
            )
        )
        np.testing.assert_allclose(pend.mass_matrix(q), m_pb, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(pend.bias_forces(q, v), c_pb, rtol=1e-12, atol=1e-12)


def test_semi_implicit_step_is_pybullets_integrator(bullet_pendulum):
    p, cid, body = bullet_pendulum
    pend = TwoLinkPendulum(RODS)
    dt = 1.0 / 60.0
    p.setPhysicsEngineParameter(fixedTimeStep=dt, numSubSteps=0, physicsClientId=cid)
    for (q, v), tau in zip(STATES, ([3.0, -1.0], [0.0, 0.0], [-20.0, 5.0]), strict=True):
        for j in range(2):
            p.resetJointState(body, j, q[j], v[j], physicsClientId=cid)
        p.setJointMotorControlArray(body, [0, 1], p.TORQUE_CONTROL, forces=tau, physicsClientId=cid)
        p.stepSimulation(physicsClientId=cid)
        states = p.getJointStates(body, [0, 1], physicsClientId=cid)
        q_pb, v_pb = np.array([s[0] for s in states]), np.array([s[1] for s in states])
        q_si, v_si = pend.step(q, v, np.array(tau), dt, "semi_implicit")
        np.testing.assert_allclose(q_si, q_pb, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(v_si, v_pb, rtol=1e-10, atol=1e-10)
        q_ex, _ = pend.step(q, v, np.array(tau), dt, "explicit")
        assert np.abs(q_ex - q_pb).max() > 1e-4  # forward Euler is a different integrator
