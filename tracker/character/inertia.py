"""The composite-inertia quantities a joint-space controller reads (no numba, no PyBullet)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class JointInertia(NamedTuple):
    """Composite inertia about every DOF's axis at one pose (PyBullet's axes).

    Attributes:
        moment: ``(nv,)`` moment of inertia about each DOF's axis, kg·m² (the
            base's linear DOFs: the total mass, kg). Equals ``diag(M(q))``.
        block: ``(nv, 3)``: for the DOFs of a ball joint (and the base's three
            angular DOFs), the row of their 3×3 composite tensor in the joint's
            velocity axes; zero elsewhere. ``block[v0:v0+3]`` is the tensor.
        axis: ``(nv, 3)`` each rotational DOF's world axis (zero on the base's
            linear DOFs).
        own: ``(nv,)`` the moment about each DOF's axis of the joint's child link
            alone, kg·m² (the "single-link" inertia of inertia-scaled PD).
        own_block: ``(nv, 3)`` the same for ball joints' tensors, as ``block``.
    """

    moment: np.ndarray
    block: np.ndarray
    axis: np.ndarray
    own: np.ndarray
    own_block: np.ndarray
