"""Round trips of the layout's Lie-group integrate/difference, as the servos use them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.layout import Layout
from tracker.control.lie import StepError

from .conftest import random_q


def _same_configuration(layout, a, b, atol):
    """Equal up to the sign of each quaternion."""
    np.testing.assert_allclose(
        np.delete(a, _quat_index(layout)), np.delete(b, _quat_index(layout)), atol=atol
    )
    for rows in _quats(layout):
        qa, qb = a[rows], b[rows]
        assert min(np.abs(qa - qb).max(), np.abs(qa + qb).max()) < atol


def _quats(layout):
    out = [np.arange(3, 7)] if layout.has_base else []
    return out + list(layout.sph_q)


def _quat_index(layout):
    q = _quats(layout)
    return np.concatenate(q) if q else np.zeros(0, dtype=int)


def test_integrate_of_difference_returns_the_target(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    for _ in range(50):
        q, qt = random_q(lay, rng), random_q(lay, rng)
        _same_configuration(lay, lay.integrate(q, lay.difference(qt, q), 1.0), qt, 1e-9)


@pytest.mark.parametrize("dt", [1e-3, 1.0 / 60.0, 0.25])
def test_difference_of_integrate_returns_the_displacement(humanoid_like_layout, rng, dt):
    lay = humanoid_like_layout
    for _ in range(50):
        q = random_q(lay, rng)
        v = rng.normal(size=lay.nv) * 2.0  # |v·dt| < π for every rotation
        np.testing.assert_allclose(lay.difference(lay.integrate(q, v, dt), q), v * dt, atol=1e-9)


def test_difference_ignores_the_quaternion_sign_and_is_zero_at_the_same_pose(
    humanoid_like_layout, rng
):
    lay = humanoid_like_layout
    q = random_q(lay, rng)
    qt = q.copy()
    s = lay["chest"]
    # 3 rad about x, then the same rotation with the quaternion's sign flipped.
    qt[s.q] = (Rotation.from_quat(q[s.q]) * Rotation.from_rotvec([3.0, 0.0, 0.0])).as_quat()
    d1 = lay.difference(qt, q)
    qt[s.q] *= -1.0
    d2 = lay.difference(qt, q)
    np.testing.assert_allclose(d1[s.v], [3.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(d2, d1, atol=1e-9)
    assert np.all(lay.difference(q, q) == 0.0)


# -- the servos' fused error q̄ ⊖ (q ⊕ v·dt) ----------------------------------------

LAYOUTS = {
    "free base + joints": [("chest", "spherical"), ("knee", "revolute"), ("hip", "spherical")],
    "joints only": [("a", "spherical"), ("b", "revolute")],
}


@pytest.mark.parametrize("has_base", [True, False])
@pytest.mark.parametrize("dt", [0.0, 1.0 / 60.0, 0.3])
def test_step_error_equals_layout_difference_of_integrate(rng, has_base, dt):
    lay = Layout.build(LAYOUTS["free base + joints" if has_base else "joints only"], has_base)
    err = StepError(lay)
    for _ in range(100):
        q, qt = random_q(lay, rng), random_q(lay, rng)
        v = rng.normal(size=lay.nv) * 3.0
        expected = lay.difference(qt, lay.integrate(q, v, dt))
        np.testing.assert_allclose(err(qt, q, v, dt), expected, rtol=0, atol=1e-12)


def test_step_error_edge_cases(humanoid_like_layout, rng):
    lay = humanoid_like_layout
    err = StepError(lay)
    q = random_q(lay, rng)
    v = np.zeros(lay.nv)
    s = lay["shoulder"]
    for angle in (1e-13, 1e-7, 1.0, np.pi - 1e-9):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        qt = q.copy()
        qt[s.q] = (Rotation.from_quat(q[s.q]) * Rotation.from_rotvec(angle * axis)).as_quat()
        np.testing.assert_allclose(err(qt, q, v, 0.0)[s.v], angle * axis, rtol=1e-9, atol=1e-15)
        # Quaternion sign and (reference-interpolation) scale do not matter.
        qt[s.q] *= -1.3
        np.testing.assert_allclose(err(qt, q, v, 0.0)[s.v], angle * axis, rtol=1e-9, atol=1e-15)
    # A base spun by ω for dt lands exactly on the target: zero error.
    w = np.array([0.0, 0.0, 0.0, 0.3, -0.2, 0.5] + [0.0] * (lay.nv - 6))
    q_next = lay.integrate(q, w, 0.1)
    np.testing.assert_allclose(err(q_next, q, w, 0.1), 0.0, atol=1e-15)
