"""Explicit PD: the formula on a Lie-group layout, target-velocity modes, passive DOFs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.control.base import Gains, State, Target
from tracker.control.pd import PDController

from .conftest import random_q


def test_pd_is_kp_times_rotation_vector_error_plus_kd_times_velocity_error(
    humanoid_like_layout, rng
):
    lay = humanoid_like_layout
    nv = lay.nv
    gains = Gains(rng.uniform(10.0, 100.0, nv), rng.uniform(1.0, 5.0, nv))
    q, qb, v, vb = random_q(lay, rng), random_q(lay, rng), rng.normal(size=nv), rng.normal(size=nv)
    tau = PDController(lay).torques(State(q, v), Target(qb, vb), gains, 1.0 / 60.0)

    # Independent error terms, written out per joint kind.
    err = np.zeros(nv)
    err[0:3] = qb[0:3] - q[0:3]
    err[3:6] = (Rotation.from_quat(qb[3:7]) * Rotation.from_quat(q[3:7]).inv()).as_rotvec()
    for s in lay.joints:
        if s.kind == "spherical":
            err[s.v] = (Rotation.from_quat(q[s.q]).inv() * Rotation.from_quat(qb[s.q])).as_rotvec()
        else:
            err[s.v] = qb[s.q] - q[s.q]
    np.testing.assert_allclose(tau, gains.kp * err + gains.kd * (vb - v), rtol=1e-12, atol=1e-12)


def test_pd_error_for_a_known_spherical_offset():
    from tracker.character.layout import Layout

    lay = Layout.build([("hip", "spherical")], has_base=False)
    q = Rotation.from_euler("z", 0.3).as_quat()
    qb = Rotation.from_euler("z", 0.3 + 0.5).as_quat()
    tau = PDController(lay).torques(
        State(q, np.zeros(3)), Target(qb, np.zeros(3)), Gains([100.0] * 3, [0.0] * 3), 0.01
    )
    np.testing.assert_allclose(tau, [0.0, 0.0, 50.0], atol=1e-12)


def test_zero_target_velocity_and_passive_dofs(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    nv = lay.nv
    gains = Gains(np.full(nv, 50.0), np.full(nv, 3.0))
    q, qb, v = random_q(lay, rng), random_q(lay, rng), rng.normal(size=nv)
    passive = np.arange(6)
    ctrl = PDController(lay, target_velocity="zero", passive=passive)
    tau = ctrl.torques(State(q, v), Target(qb, rng.normal(size=nv)), gains, 0.01)
    assert np.all(tau[:6] == 0.0)
    expected = 50.0 * lay.difference(qb, q) - 3.0 * v
    np.testing.assert_allclose(tau[6:], expected[6:], rtol=1e-12)


def test_passive_mask_shape_is_checked(humanoid_like_layout):
    with pytest.raises(ValueError, match=r"passive mask must have shape \(14,\)"):
        PDController(humanoid_like_layout, passive=np.zeros(3, dtype=bool))
