"""Fakes for the controller tests: small layouts and a fixed-matrix dynamics model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.character.layout import Layout


class FixedDynamics:
    """``M`` and ``c`` that do not depend on the state (enough to test the algebra)."""

    def __init__(self, mass: np.ndarray, bias: np.ndarray) -> None:
        self.mass = np.array(mass, dtype=float)
        self.bias = np.array(bias, dtype=float)
        self.mass.setflags(write=False)  # a controller must not modify what it is given
        self.bias.setflags(write=False)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return self.mass

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.bias


def random_spd(n: int, rng: np.random.Generator, cond: float = 50.0) -> np.ndarray:
    """A random symmetric positive-definite ``(n, n)`` matrix with condition ``cond``."""
    u, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (u * np.geomspace(0.05, 0.05 * cond, n)) @ u.T


def random_q(layout: Layout, rng: np.random.Generator) -> np.ndarray:
    """A random configuration: unit quaternions, angles in [-2, 2] rad, base within 1 m."""
    q = rng.uniform(-2.0, 2.0, layout.nq)
    if layout.has_base:
        q[0:3] = rng.uniform(-1.0, 1.0, 3)
        q[3:7] = Rotation.random(None, rng).as_quat()
    if len(layout.sph_q):
        q[layout.sph_q] = Rotation.random(len(layout.sph_q), rng).as_quat()
    return q


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20110807)


@pytest.fixture
def humanoid_like_layout() -> Layout:
    """A free base, two spherical joints and two hinges (nq 7+8+2, nv 6+6+2)."""
    return Layout.build(
        [
            ("chest", "spherical"),
            ("knee", "revolute"),
            ("shoulder", "spherical"),
            ("elbow", "revolute"),
        ],
        has_base=True,
    )
