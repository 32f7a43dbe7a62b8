"""Per-link rotation offsets between a source skeleton and the character.

The character's link ``L`` takes the world rotation ``R_c(t) = R_s(t) · O_L``
of its mapped source joint, with a constant offset ``O_L``. ``O_L`` is found
from positions alone, so it does not depend on the source's rest pose or on
how its joint frames are oriented (Bandai and CC_Base frames are not world
aligned): at each frame an anatomical frame is built from the link's bone
direction plus a twist cue (the left-right hip or shoulder axis, or the normal
of the knee/elbow plane, whose sign matches the character's hinge axis); the
rotation taking the character's zero-pose frame onto it, expressed in the
source joint's frame, is averaged over frames (weighted by how well the cue
is defined).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def frame(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Orthonormal frames ``(F, 3, 3)`` whose columns are (primary, secondary⊥, cross).

    Args:
        primary: ``(F, 3)`` or ``(3,)``.
        secondary: same shape; only its component orthogonal to ``primary`` is used.
    """
    p = np.atleast_2d(primary).astype(float)
    s = np.atleast_2d(secondary).astype(float)
    p, s = np.broadcast_arrays(p, s)
    e1 = p / np.linalg.norm(p, axis=-1, keepdims=True).clip(min=1e-12)
    s = s - np.sum(s * e1, axis=-1, keepdims=True) * e1
    e2 = s / np.linalg.norm(s, axis=-1, keepdims=True).clip(min=1e-12)
    e3 = np.cross(e1, e2)
    return np.stack([e1, e2, e3], axis=-1)


def average_rotation(rot: Rotation, weights: np.ndarray) -> Rotation:
    """Weighted chordal mean of rotations (principal eigenvector of ``Σ w q qᵀ``)."""
    q = rot.as_quat()
    w = np.asarray(weights, float)
    m = (q * w[:, None]).T @ q
    _, vecs = np.linalg.eigh(m)
    return Rotation.from_quat(vecs[:, -1])


def hinge_normal(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normal of the plane through ``a → b → c`` and its weight ``sin²`` of the bend.

    The normal ``(b−a) × (c−b)`` is the axis about which a positive hinge
    rotation takes the first segment's direction to the second's.

    Returns:
        ``(normal (F, 3), weight (F,))``.
    """
    d1 = b - a
    d2 = c - b
    n = np.cross(d1, d2)
    denom = (np.linalg.norm(d1, axis=-1) * np.linalg.norm(d2, axis=-1)).clip(min=1e-12)
    return n, (np.linalg.norm(n, axis=-1) / denom) ** 2


def link_offset(
    source_rot: Rotation,
    source_frames: np.ndarray,
    char_frame: np.ndarray,
    weights: np.ndarray,
) -> Rotation:
    """The constant offset ``O`` with ``R_s(t)·O ≈ F_s(t)·F_c⁻¹`` in the weighted mean.

    Args:
        source_rot: world rotation of the source joint, length ``F``.
        source_frames: anatomical frames from source positions ``(F, 3, 3)``.
        char_frame: the same frame built on the character's zero pose ``(3, 3)``.
        weights: ``(F,)`` non-negative.
    """
    w = np.asarray(weights, float)
    usable = (w > 1e-6) & (np.linalg.det(source_frames) > 0.5)  # skip degenerate frames
    if not usable.any():
        raise ValueError("no frame defines the link's twist")
    target = Rotation.from_matrix(source_frames[usable] @ char_frame.T)
    return average_rotation(source_rot[usable].inv() * target, w[usable])


def cue_weight(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """``sin²`` of the angle between the bone and the twist cue ``(F,)``: 0 when they are parallel."""
    n = np.cross(primary, secondary)
    denom = (np.linalg.norm(primary, axis=-1) * np.linalg.norm(secondary, axis=-1)) ** 2
    return np.sum(n * n, axis=-1) / np.clip(denom, 1e-24, None)
