"""Round trips of the layout's Lie-group integrate/difference, as the servos use them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

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
