"""Allen et al. 2007's composite inertia about each joint axis (eq. 5-7) against ``M(q)``.

The moment about a DOF's axis of everything outboard of it is the diagonal entry
``M_kk`` of the joint-space mass matrix (and a ball joint's 3×3 tensor its diagonal
block), so the recursion is checked against our CRBA, itself checked against PyBullet.
"""

from __future__ import annotations

import numpy as np
import pytest

from tracker.character.character import Character
from tracker.character.composite import parent_compensation

from .conftest import random_state

TOL = 1e-10  # relative to the largest diagonal entry


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_composite_inertia_equals_the_mass_matrix_diagonal_at_random_poses(client, name):
    char = Character.load(client, name)
    rng = np.random.default_rng(7)
    for _ in range(20):
        q, _ = random_state(char, rng)
        m = char.mass_matrix(q)
        ji = char.joint_inertia(q)
        scale = np.abs(np.diag(m)).max()
        np.testing.assert_allclose(ji.moment, np.diag(m), rtol=0, atol=TOL * scale)
        for s in char.layout.joints:
            if s.kind == "spherical":
                np.testing.assert_allclose(ji.block[s.v], m[s.v, s.v], rtol=0, atol=TOL * scale)


def test_world_axes_are_unit_vectors_of_the_rotational_dofs(client):
    char = Character.load(client, "humanoid")
    q, _ = random_state(char, np.random.default_rng(3))
    axis = char.joint_inertia(q).axis
    np.testing.assert_allclose(np.linalg.norm(axis[3:], axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(axis[0:3], 0.0)


def test_shoulder_inertia_is_smaller_with_the_elbow_bent_than_straight(client):
    """Allen et al. Fig. 1: bending the elbow brings the forearm's mass closer to the shoulder axis."""
    char = Character.load(client, "humanoid")
    lay = char.layout
    q = lay.neutral_q()
    q[2] = 1.0
    straight = char.joint_inertia(q).moment[lay["right_shoulder"].v]
    q[lay["right_elbow"].q] = 1.5  # rad, near a right angle
    bent = char.joint_inertia(q).moment[lay["right_shoulder"].v]
    # The arm hangs along -z: about the two swing axes (x, y) the moment drops by over a third
    # (0.43 -> 0.20 and 0.28 kg·m²); about the arm's own axis (z) it grows, the forearm now off it.
    assert (bent[:2] < 0.67 * straight[:2]).all()
    assert bent[2] > straight[2]


def test_parent_compensation_adds_m_times_the_inboard_acceleration_along_each_axis(client):
    """A torque on the shoulder alone gives the elbow exactly m_elbow (a · s_elbow)."""
    char = Character.load(client, "humanoid")
    lay = char.layout
    q, _ = random_state(char, np.random.default_rng(5))
    ji = char.joint_inertia(q)
    tau = np.zeros(lay.nv)
    sh, el = lay["right_shoulder"].v, lay["right_elbow"].v
    tau[sh] = [3.0, -2.0, 1.0]
    out = parent_compensation(char._tree(), tau, ji)
    np.testing.assert_array_equal(out[sh], tau[sh])  # the shoulder's parents apply nothing
    a = sum(tau[k] / ji.moment[k] * ji.axis[k] for k in range(sh.start, sh.stop))
    np.testing.assert_allclose(out[el], ji.moment[el] * (ji.axis[el] @ a), rtol=1e-12)
    untouched = np.ones(lay.nv, bool)
    for name in ("right_shoulder", "right_elbow", "right_wrist"):
        untouched[lay[name].v] = False
    np.testing.assert_array_equal(out[untouched], 0.0)
    assert np.abs(out[lay["right_wrist"].v]).max() > 0


@pytest.mark.parametrize("name", ["humanoid", "deepmimic"])
def test_single_link_inertia_is_the_composite_at_leaf_joints_and_smaller_elsewhere(client, name):
    char = Character.load(client, name)
    q, _ = random_state(char, np.random.default_rng(11))
    ji = char.joint_inertia(q)
    assert (ji.own[6:] <= ji.moment[6:] + 1e-12).all()
    assert (ji.own[6:] > 0).all()
    leaf = "right_wrist" if name == "humanoid" else "right_elbow"  # DeepMimic welds the hand on
    sl = char.layout[leaf].v
    np.testing.assert_allclose(ji.own[sl], ji.moment[sl], rtol=1e-12)
    hip = char.layout["right_hip"].v
    assert (ji.own[hip] < 0.5 * ji.moment[hip]).all()
