"""The adapter's dynamics against PyBullet's own routines and against the simulator.

Forward-dynamics checks: Bullet's step is semi-implicit Euler, so one step of
``dt`` from ``(q, v)`` gives ``v1 = v + a(q, v) dt`` exactly (no contacts, no
active limits); ``(v1 - v) / dt`` is compared with ``M⁻¹ (tau - c)``. Any
frame or ordering error in the base DOFs, the spherical joints or the Y-up
conversion shows up as an O(1) mismatch.
"""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.character import Character
from tracker.character.layout import Layout

from .conftest import random_state

DT_FD = 1e-5  # s; small so that one step cannot hit PyBullet's 100 rad/s joint-speed clamp
# Relative tolerance of the simulator checks (our own dynamics read the inertias PyBullet simulates,
# DeepMimic's 0.1 g base link included, so both models meet the same bound).
TOL_FD = {"humanoid": 1e-6, "deepmimic": 1e-6}


def _padded_index(layout: Layout) -> np.ndarray:
    """Where each of our v entries sits in PyBullet's padded flags=1 vectors (humanoid: same joint order)."""
    idx, k = list(range(6)), 7
    for s in layout.joints:
        n = 3 if s.kind == "spherical" else 1
        idx += list(range(k, k + n))
        k += n + (1 if s.kind == "spherical" else 0)
    return np.array(idx)


def _raw_inverse_dynamics(char: Character, q, v, a) -> np.ndarray:
    """PyBullet's calculateInverseDynamics(flags=1) at our (q, v, a), back in our layout (no corrections)."""
    idx = _padded_index(char.layout)
    n = idx[-1] + 1
    vb, ab = np.zeros(n), np.zeros(n)
    vb[idx], ab[idx] = v, a
    tau = p.calculateInverseDynamics(char.body_id, list(q), vb.tolist(), ab.tolist(), flags=1,
                                     physicsClientId=char.client_id)
    return np.array(tau)[idx]


def _simulated_acceleration(char: Character, tau: np.ndarray, v0: np.ndarray) -> np.ndarray:
    """Apply ``tau`` for one DT_FD step of the simulator and return ``(v1 - v0) / DT_FD``."""
    char.apply_torques(tau)
    p.stepSimulation(physicsClientId=char.client_id)
    return (char.get_state()[1] - v0) / DT_FD


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_mass_matrix_is_symmetric_positive_definite_at_random_states(client, name):
    char = Character.load(client, name)
    rng = np.random.default_rng(0)
    for _ in range(10):
        q, _ = random_state(char, rng)
        m = char.mass_matrix(q)
        assert m.shape == (char.layout.nv, char.layout.nv)
        assert np.abs(m - m.T).max() <= 1e-12 * np.abs(m).max()
        assert np.linalg.eigvalsh(m).min() > 1e-6
        # translating the base moves every kg
        assert m[0, 0] == pytest.approx(char.total_mass, rel=1e-12)


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_own_dynamics_equal_pybullets_where_pybullet_simulates_what_it_assumes(client, name):
    """Our compiled CRBA / RNEA against calculateMassMatrix / calculateInverseDynamics (flags=1 plus the
    documented root term) at random states, spinning base included. DeepMimic is loaded with
    match_dynamics_inertia so that PyBullet's routine assumes the simulated inertias; they then differ only
    by the base link's 0.1 g, which PyBullet's routine drops (1e-4 kg in M, 1e-4 * 9.81 N in c)."""
    char = Character.load(client, name, match_dynamics_inertia=True)
    rng = np.random.default_rng(11)
    tol_m, tol_c = (1e-10, 1e-9) if name == "humanoid" else (1.1e-4, 1.1e-3)
    for _ in range(5):
        q, v = random_state(char, rng)
        m, m_pb = char.mass_matrix(q), char.mass_matrix_pybullet(q)
        assert np.abs(m - m_pb).max() <= tol_m
        c, c_pb = char.bias_forces(q, v), char.bias_forces_pybullet(q, v)
        assert np.abs(c - c_pb).max() <= tol_c


def test_own_dynamics_match_the_simulator_where_pybullets_routine_does_not(client):
    """The DeepMimic humanoid as PyBullet's example loads it simulates Bullet's collision-shape inertias,
    which calculateMassMatrix(flags=1) does not assume: PyBullet's M predicts the simulator's response
    to torques off by over 1 %, ours to TOL_FD."""
    p.setPhysicsEngineParameter(fixedTimeStep=DT_FD, physicsClientId=client)
    char = Character.load(client, "deepmimic", self_collision="off")
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v = random_state(char, rng)
        char.reset_state(q, v)
        q0, v0 = char.get_state()
        tau = rng.normal(size=char.layout.nv) * 2.0
        a_own = np.linalg.solve(char.mass_matrix(q0), tau - char.bias_forces(q0, v0))
        a_pb = np.linalg.solve(char.mass_matrix_pybullet(q0), tau - char.bias_forces_pybullet(q0, v0))
        a_sim = _simulated_acceleration(char, tau, v0)
        scale = np.abs(a_sim).max()
        assert np.abs(a_sim - a_own).max() <= TOL_FD["deepmimic"] * scale
        assert np.abs(a_sim - a_pb).max() > 1e-2 * scale


def test_pybullets_inverse_dynamics_ignore_the_acceleration(client):
    """PyBullet's calculateInverseDynamics(flags=1) returns c(q, v) whatever a is: it cannot check M."""
    char = Character.load(client, "humanoid")
    rng = np.random.default_rng(1)
    q, v = random_state(char, rng)
    c0 = _raw_inverse_dynamics(char, q, v, np.zeros(char.layout.nv))
    c1 = _raw_inverse_dynamics(char, q, v, rng.normal(size=char.layout.nv) * 100)
    assert np.array_equal(c0, c1)


def test_bias_forces_are_pybullets_inverse_dynamics_plus_the_documented_root_term(client):
    """c = ID_pybullet(q, v) + M[:, :3] ((R w) x v - w x v) + D v; the root term vanishes when the base
    does not spin (D: passive joint damping)."""
    char = Character.load(client, "humanoid")
    rng = np.random.default_rng(2)
    for spin in (False, True):
        for _ in range(5):
            q, v = random_state(char, rng)
            if not spin:
                v[3:6] = 0.0
            m, c = char.mass_matrix_pybullet(q), char.bias_forces_pybullet(q, v)
            raw = _raw_inverse_dynamics(char, q, v, np.zeros(char.layout.nv))
            w, lin = v[3:6], v[0:3]
            rot = Rotation.from_quat(q[3:7]).as_matrix()
            term = m[:, 0:3] @ (np.cross(rot @ w, lin) - np.cross(w, lin))
            damping = char.damping_vector() * v
            assert np.abs(c - (raw + term + damping)).max() <= 1e-9 * np.abs(raw).max()
            if spin:
                assert np.abs(term).max() > 1e-3 * np.abs(raw).max()  # not negligible
            else:
                assert np.abs(c - (raw + damping)).max() <= 1e-9 * np.abs(raw).max()


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_inverse_dynamics_torques_give_the_requested_acceleration_in_pybullet(client, name):
    """PyBullet's inverse dynamics, measured on its simulator: tau = M a + c for random (q, v, a)
    produces the acceleration a in one 10 µs step (TOL_FD)."""
    p.setPhysicsEngineParameter(fixedTimeStep=DT_FD, physicsClientId=client)
    char = Character.load(client, name, self_collision="off", match_dynamics_inertia=True)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q, v = random_state(char, rng)
        char.reset_state(q, v)
        q0, v0 = char.get_state()
        a = rng.normal(size=char.layout.nv) * 20.0
        tau = char.mass_matrix(q0) @ a + char.bias_forces(q0, v0)
        assert np.allclose(char.inverse_dynamics(a, q0, v0), tau, rtol=1e-12, atol=1e-9)
        a_sim = _simulated_acceleration(char, tau, v0)
        assert np.abs(a_sim - a).max() <= TOL_FD[name] * np.abs(a).max()


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_forward_dynamics_of_a_floating_base_match_the_simulator(client, name):
    """Random joint torques and base wrench for one 10 µs step: (v1 - v0)/dt == M⁻¹(tau - c) (TOL_FD).

    The DeepMimic model is loaded with ``match_dynamics_inertia`` (see the
    next test for why); this pins its Y-up conversion of quaternions,
    angular velocities and torques.
    """
    p.setPhysicsEngineParameter(fixedTimeStep=DT_FD, physicsClientId=client)
    char = Character.load(client, name, self_collision="off", match_dynamics_inertia=True)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, v = random_state(char, rng)
        char.reset_state(q, v)
        q0, v0 = char.get_state()
        tau = rng.normal(size=char.layout.nv) * 2.0
        tau[0:6] *= 20.0  # a base wrench of tens of N
        a_pred = np.linalg.solve(char.mass_matrix(q0), tau - char.bias_forces(q0, v0))
        a_sim = _simulated_acceleration(char, tau, v0)
        assert np.abs(a_sim - a_pred).max() <= TOL_FD[name] * np.abs(a_pred).max()


def test_deepmimic_simulates_other_inertias_than_pybullets_dynamics_unless_matched(client):
    """As in PyBullet's DeepMimic example, the simulated DeepMimic humanoid's inertias are Bullet's
    collision-shape estimates while calculateMassMatrix assumes DeepMimic's formulas: they differ."""
    char = Character.load(client, "deepmimic")
    assumed = char.dynamics_inertia()
    simulated = {n: np.array(p.getDynamicsInfo(char.body_id, char.link_index(n), physicsClientId=client)[2])
                 for n in assumed}
    worst = max(np.abs(assumed[n] - simulated[n]).max() / assumed[n].max() for n in assumed)
    assert worst > 0.05
    char.remove()
    matched = Character.load(client, "deepmimic", match_dynamics_inertia=True)
    for n, inertia in matched.dynamics_inertia().items():
        got = p.getDynamicsInfo(matched.body_id, matched.link_index(n), physicsClientId=client)[2]
        assert np.allclose(got, inertia, rtol=1e-9)


def test_humanoid_urdf_inertia_is_what_pybullets_dynamics_assume(client):
    char = Character.load(client, "humanoid")
    for n, inertia in char.dynamics_inertia().items():
        got = p.getDynamicsInfo(char.body_id, char.link_index(n), physicsClientId=client)[2]
        assert np.allclose(got, inertia, rtol=1e-9), n


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_forward_dynamics_with_a_fixed_base_match_the_simulator(client, name):
    """Welded base: joint accelerations obey M_jj a_j = tau_j - c_j - M_jb a_b to 1e-6 (1e-4 for
    DeepMimic, see below), with a_b the base acceleration the weld's compliance lets through."""
    p.setPhysicsEngineParameter(fixedTimeStep=DT_FD, physicsClientId=client)
    char = Character.load(client, name, fixed_base=True, self_collision="off", match_dynamics_inertia=True)
    rng = np.random.default_rng(4)
    for _ in range(5):
        q, v = random_state(char, rng, fixed=True)
        char.reset_state(q, v)
        q0, v0 = char.get_state()
        assert np.abs(v0[0:6]).max() == 0.0
        tau = rng.normal(size=char.layout.nv) * 2.0
        tau[0:6] = 0.0
        m, c = char.mass_matrix(q0), char.bias_forces(q0, v0)
        char.apply_torques(tau)
        p.stepSimulation(physicsClientId=client)
        q1, v1 = char.get_state()
        a_sim = (v1 - v0) / DT_FD
        a_b = a_sim[0:6]
        a_j = np.linalg.solve(m[6:, 6:], (tau - c)[6:] - m[6:, 0:6] @ a_b)
        assert np.abs(a_sim[6:] - a_j).max() <= TOL_FD[name] * np.abs(a_j).max()
        assert np.abs(q1[0:3] - q0[0:3]).max() < 1e-9  # the weld holds the base in place


def test_spherical_joint_velocity_is_expressed_in_the_child_frame(client):
    """Finite differences of PyBullet's own joint quaternions, ``rotvec(q0⁻¹ q1) / dt``, equal the
    reported angular velocity (child frame); the parent-frame reading ``rotvec(q1 q0⁻¹) / dt`` does not.
    The base angular velocity is the world-frame one, ``rotvec(Q1 Q0⁻¹) / dt``."""
    dt = 1e-4
    p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=client)
    p.setGravity(0, 0, 0, physicsClientId=client)
    char = Character.load(client, "humanoid", self_collision="off")
    lay = char.layout
    rng = np.random.default_rng(5)
    q, v = random_state(char, rng, spread=1.0)
    v[lay.sph_v] *= 3.0  # turn fast enough that parent and child frames differ clearly
    char.reset_state(q, v)
    q0, _ = char.get_state()
    for s in lay.joints:
        if s.kind == "spherical":
            js = p.getJointStateMultiDof(char.body_id, char._pb_joint[lay.names.index(s.name)],
                                         physicsClientId=client)
            assert np.allclose(js[1], v[s.v], atol=1e-12)  # our v is PyBullet's joint velocity
    p.stepSimulation(physicsClientId=client)
    q1, v1 = char.get_state()
    r0, r1 = Rotation.from_quat(q0[lay.sph_q]), Rotation.from_quat(q1[lay.sph_q])
    child = (r0.inv() * r1).as_rotvec() / dt
    parent = (r1 * r0.inv()).as_rotvec() / dt
    w = v1[lay.sph_v]
    scale = np.abs(w).max()
    assert np.abs(child - w).max() < 1e-3 * scale
    assert np.abs(parent - w).max() > 0.1 * scale
    base_w = (Rotation.from_quat(q1[3:7]) * Rotation.from_quat(q0[3:7]).inv()).as_rotvec() / dt
    assert np.abs(base_w - v1[3:6]).max() < 1e-3 * np.abs(v1[3:6]).max()
    assert np.allclose((q1[0:3] - q0[0:3]) / dt, v1[0:3], rtol=1e-6)
    # Layout.difference reads the same convention: q1 = q0 ⊕ v1·dt to integration accuracy.
    step = lay.difference(q1, q0) / dt
    assert np.abs(step - v1).max() < 1e-3 * np.abs(v1).max()


@pytest.mark.parametrize("with_base", [True, False], ids=["full_bias", "joints_only"])
def test_gravity_compensation_holds_the_zero_pose_with_a_fixed_base_for_5_s(client, with_base):
    """tau = c(q, v) every step (dt = 1/60 s, 300 steps) keeps every joint within 1e-3 rad; also when only
    the joint entries are applied and the weld carries the weight (measured: 1e-13 and 5e-4 rad)."""
    dt = 1.0 / 60.0
    p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=client)
    char = Character.load(client, "humanoid", fixed_base=True)
    q_start, _ = char.get_state()
    worst = 0.0
    for _ in range(300):
        q, v = char.get_state()
        tau = char.bias_forces(q, v)
        if not with_base:
            tau[0:6] = 0.0
        char.apply_torques(tau)
        p.stepSimulation(physicsClientId=client)
        dq = char.layout.difference(char.get_state()[0], q_start)
        worst = max(worst, float(np.abs(dq[6:]).max()))
    assert worst < 1e-3


def test_without_compensation_the_welded_arms_do_fall(client):
    """The same set-up with zero torques moves the joints by far more than 1e-3 rad (the test above can fail)."""
    p.setPhysicsEngineParameter(fixedTimeStep=1.0 / 60.0, physicsClientId=client)
    char = Character.load(client, "humanoid", fixed_base=True, base_orientation=Rotation.from_euler(
        "y", 0.5).as_quat())
    q_start, _ = char.get_state()
    for _ in range(30):
        p.stepSimulation(physicsClientId=client)
    assert np.abs(char.layout.difference(char.get_state()[0], q_start)[6:]).max() > 0.05


def test_torques_and_wrenches_act_for_one_step_only(client):
    """After a step with tau, the next step without new torques follows M a = -c (to 1e-6)."""
    dt = 1e-4
    p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=client)
    char = Character.load(client, "humanoid")
    char.reset_state(*random_state(char, np.random.default_rng(8)))  # knees off their limits
    lay = char.layout
    tau = np.zeros(lay.nv)
    tau[lay["left_knee"].v] = 5.0
    tau[lay["neck"].v] = [1.0, 2.0, 3.0]
    tau[0:3] = [50.0, 0.0, 0.0]
    v0 = char.get_state()[1]
    char.apply_torques(tau)
    p.stepSimulation(physicsClientId=client)
    q1, v1 = char.get_state()
    assert abs(v1[lay["left_knee"].v][0] - v0[lay["left_knee"].v][0]) > 1e-3
    p.stepSimulation(physicsClientId=client)
    a2 = (char.get_state()[1] - v1) / dt
    a_free = np.linalg.solve(char.mass_matrix(q1), -char.bias_forces(q1, v1))
    assert np.abs(a2 - a_free).max() <= 1e-6 * np.abs(a_free).max()


def test_dynamics_at_the_current_state_by_default(client):
    char = Character.load(client, "humanoid")
    rng = np.random.default_rng(6)
    q, v = random_state(char, rng)
    char.reset_state(q, v)
    q0, v0 = char.get_state()
    assert np.array_equal(char.mass_matrix(), char.mass_matrix(q0))
    assert np.array_equal(char.bias_forces(), char.bias_forces(q0, v0))


def test_bias_forces_follow_the_worlds_gravity_when_it_changes(client):
    """At rest the base rows of c hold the whole weight, under whatever gravity the world has now."""
    char = Character.load(client, "humanoid")
    q, v = char.get_state()
    for g in (-9.81, -3.71, 0.0):
        p.setGravity(0, 0, g, physicsClientId=client)
        c = char.bias_forces(q, np.zeros_like(v))
        assert c[0:3] == pytest.approx([0.0, 0.0, -char.total_mass * g], abs=1e-9)
        assert np.allclose(c, char.bias_forces_pybullet(q, np.zeros_like(v)), atol=1e-9)


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_dynamics_refuse_inputs_of_the_wrong_size_or_a_zero_quaternion(client, name):
    """The compiled kernels do no bounds checks: wrong shapes must be stopped before them."""
    char = Character.load(client, name)
    q, v = char.get_state()
    with pytest.raises(ValueError, match="expected q"):
        char.mass_matrix(q[:-1])
    with pytest.raises(ValueError, match="expected v"):
        char.bias_forces(q, v[:12])
    bad = q.copy()
    bad[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        char.reset_state(bad)
    frozen = q.copy()
    frozen.setflags(write=False)  # e.g. a frame of a read-only reference
    assert np.array_equal(char.mass_matrix(frozen), char.mass_matrix(q))


def test_refresh_dynamics_follows_a_change_of_mass_and_inertia(client):
    """After changeDynamics, refresh_dynamics() brings M, c and the mass tables back to what PyBullet
    simulates (checked against the simulator's response to torques)."""
    p.setPhysicsEngineParameter(fixedTimeStep=DT_FD, physicsClientId=client)
    char = Character.load(client, "humanoid")
    thigh = char.link_index("left_thigh")
    mass = char.link_masses["left_thigh"]
    p.changeDynamics(char.body_id, thigh, mass=2 * mass, localInertiaDiagonal=[0.3, 0.3, 0.05],
                     physicsClientId=client)
    assert char.mass_matrix()[0, 0] == pytest.approx(70.0, abs=1e-9)  # stale until refreshed
    char.refresh_dynamics()
    assert char.total_mass == pytest.approx(70.0 + mass, abs=1e-9)
    assert char.supported_mass["left_hip"] == pytest.approx(char.link_masses["left_thigh"] + char.link_masses[
        "left_shin"] + char.link_masses["left_foot"], abs=1e-9)
    rng = np.random.default_rng(4)
    q, v = random_state(char, rng)
    char.reset_state(q, v)
    q0, v0 = char.get_state()
    tau = rng.normal(size=char.layout.nv) * 2.0
    a_pred = np.linalg.solve(char.mass_matrix(q0), tau - char.bias_forces(q0, v0))
    a_sim = _simulated_acceleration(char, tau, v0)
    assert np.abs(a_sim - a_pred).max() <= TOL_FD["humanoid"] * np.abs(a_pred).max()


def test_kernels_compile_in_memory_when_no_cache_folder_is_writable(monkeypatch):
    """numba refuses cache=True at decoration time when neither the package folder nor a user cache
    folder is writable (a read-only install run by a user without a home); we then compile in memory."""
    import numba

    import tracker.character.rigid_body as rb

    def njit(*args, **kwargs):
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'f': no locator available for file 'x.py'")
        return numba.njit(*args, **kwargs)

    monkeypatch.setattr(rb, "njit", njit)

    def twice(x):
        return 2.0 * x

    assert rb._jit(twice)(1.5) == 3.0
