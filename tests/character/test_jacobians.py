"""Point and CoM Jacobians against PyBullet (link velocities, calculateJacobian) and finite differences."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pybullet_data
import pytest
from scipy.spatial.transform import Rotation

from tests.character.conftest import random_state
from tracker.character.character import Character
from tracker.character.jacobians import body_positions, point_jacobian
from tracker.character.rigid_body import RigidBodyTree

TOL = 1e-8


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_jacobians_times_v_are_pybullets_link_velocities_at_random_states(client, name):
    """J_lin v and J_ang v of every link's centre of mass equal what PyBullet reports for the same state."""
    char = Character.load(client, name)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = random_state(char, rng)
        char.reset_state(q, v)
        lin, ang = char.link_velocities()
        coms = char.link_com_positions()
        for k, link in enumerate(char.link_names):
            x, jl, ja = char.point_jacobian(link, q=q)
            assert np.abs(x - coms[k]).max() <= 1e-12
            assert np.abs(jl @ v - lin[k]).max() <= TOL
            assert np.abs(ja @ v - ang[k]).max() <= TOL


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_point_and_com_jacobians_are_finite_differences_of_the_positions(client, name):
    """Central differences of our positions along q ⊕ v·ε (ε = 1e-6) give J v to 1e-8."""
    char = Character.load(client, name)
    lay = char.layout
    rng = np.random.default_rng(4)
    eps = 1e-6
    for _ in range(2):
        q, v = random_state(char, rng)
        off = rng.normal(size=3) * 0.05
        for link in (char.model.feet[0], char.link_names[-1]):
            _, jl, _ = char.point_jacobian(link, off, q)
            xp = char.point_jacobian(link, off, lay.integrate(q, v, eps))[0]
            xm = char.point_jacobian(link, off, lay.integrate(q, v, -eps))[0]
            assert np.abs((xp - xm) / (2 * eps) - jl @ v).max() <= TOL
        c, jc = char.com_jacobian(q)
        cp, cm = char.com_jacobian(lay.integrate(q, v, eps))[0], char.com_jacobian(lay.integrate(q, v, -eps))[0]
        assert np.abs((cp - cm) / (2 * eps) - jc @ v).max() <= TOL


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_com_and_its_velocity_are_pybullets(client, name):
    char = Character.load(client, name)
    rng = np.random.default_rng(5)
    q, v = random_state(char, rng)
    char.reset_state(q, v)
    m = np.array([char.link_masses[n] for n in char.link_names])
    lin, _ = char.link_velocities()
    assert np.abs(char.com_jacobian()[0] - char.center_of_mass()).max() <= 1e-12
    assert np.abs(char.com_velocity() - m @ lin / m.sum()).max() <= TOL
    # the base's linear columns move the CoM one for one
    assert np.abs(char.com_jacobian(q)[1][:, 0:3] - np.eye(3)).max() <= 1e-12


@pytest.fixture()
def kuka(client):
    """KUKA's iiwa from pybullet_data on a floating base: revolute joints (which calculateJacobian
    supports, unlike spherical ones) in joint frames turned by 90 degrees."""
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    body = p.loadURDF("kuka_iiwa/model.urdf", [0, 0, 1], useFixedBase=False, physicsClientId=client)
    n = p.getNumJoints(body, physicsClientId=client)
    tree = RigidBodyTree.from_pybullet(p, body, client, {k: 7 + k for k in range(n)}, {k: 6 + k for k in range(n)})
    return body, n, tree


def _kuka_state(client, body, n, rng):
    p.resetBasePositionAndOrientation(body, rng.normal(size=3).tolist(), Rotation.random(
        random_state=int(rng.integers(1 << 30))).as_quat().tolist(), physicsClientId=client)
    jq = rng.uniform(-1.5, 1.5, n)
    for k in range(n):
        p.resetJointState(body, k, jq[k], physicsClientId=client)
    pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
    return np.concatenate([pos, orn, jq]), jq


def test_forward_kinematics_read_pybullets_joint_frames_right_when_they_are_turned(client, kuka):
    """getJointInfo reports parentFrameOrn inverted: read as given, the iiwa's links land up to 0.7 m off."""
    body, n, tree = kuka
    rng = np.random.default_rng(6)
    for _ in range(3):
        q, _ = _kuka_state(client, body, n, rng)
        ours = body_positions(tree, q)
        pb = np.array([p.getBasePositionAndOrientation(body, physicsClientId=client)[0]]
                      + [p.getLinkState(body, k, computeForwardKinematics=1, physicsClientId=client)[0]
                         for k in range(n)])
        assert np.abs(ours - pb).max() <= 1e-12


def test_point_jacobian_is_pybullets_calculate_jacobian(client, kuka):
    """calculateJacobian on a floating base gives the joint columns in the base frame, for a point given
    relative to the link frame; ours, rotated to the world and offset to the centre-of-mass frame, agree."""
    body, n, tree = kuka
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, jq = _kuka_state(client, body, n, rng)
        base = Rotation.from_quat(q[3:7]) * Rotation.from_quat(
            p.getDynamicsInfo(body, -1, physicsClientId=client)[4]).inv()
        for k in range(n):
            off = rng.normal(size=3) * 0.05
            di = p.getDynamicsInfo(body, k, physicsClientId=client)
            assert di[4] == pytest.approx((0, 0, 0, 1))  # inertial frame not turned: offsets add
            lin, ang = p.calculateJacobian(body, k, (off + np.array(di[3])).tolist(), jq.tolist(), [0.0] * n,
                                           [0.0] * n, physicsClientId=client)
            _, jl, ja = point_jacobian(tree, q, k + 1, off)
            assert np.abs(base.apply(np.array(lin).T).T - jl[:, 6:]).max() <= TOL
            assert np.abs(base.apply(np.array(ang).T).T - ja[:, 6:]).max() <= TOL


def test_one_pass_com_and_point_jacobians_equal_the_separate_ones(client):
    char = Character.load(client, "humanoid")
    q, _ = random_state(char, np.random.default_rng(12))
    c, jc, x, jl, ja = char.com_and_point_jacobians(["left_foot", "head"], q)
    c1, jc1 = char.com_jacobian(q)
    assert np.abs(c - c1).max() == 0.0 and np.abs(jc - jc1).max() == 0.0
    for k, link in enumerate(["left_foot", "head"]):
        x1, jl1, ja1 = char.point_jacobian(link, q=q)
        assert np.abs(x[k] - x1).max() == 0.0
        assert np.abs(jl[k] - jl1).max() == 0.0 and np.abs(ja[k] - ja1).max() == 0.0
