"""Analytic two-bone IK (hip–knee–ankle, shoulder–elbow–wrist), vectorised over frames."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation


def _min_rotation(a: np.ndarray, b: np.ndarray) -> Rotation:
    """Shortest-arc rotations taking directions ``a`` to ``b`` (both ``(F, 3)``)."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True).clip(min=1e-12)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True).clip(min=1e-12)
    axis = np.cross(a, b)
    s = np.linalg.norm(axis, axis=-1)
    c = np.sum(a * b, axis=-1)
    angle = np.arctan2(s, c)
    axis = axis / s.clip(min=1e-12)[:, None]
    return Rotation.from_rotvec(axis * angle[:, None])


def two_bone_ik(
    root: np.ndarray,
    upper_rot: Rotation,
    mid_offset: np.ndarray,
    end_offset: np.ndarray,
    axis: np.ndarray,
    target: np.ndarray,
    angle_limits: tuple[float, float],
) -> tuple[Rotation, np.ndarray]:
    """Bend a hinge chain so its end reaches ``target``.

    Args:
        root: world position of the upper joint (hip/shoulder), ``(F, 3)``.
        upper_rot: world rotation of the upper link, length ``F``.
        mid_offset: hinge joint position in the upper link frame ``(3,)``.
        end_offset: end joint position in the lower link frame ``(3,)``.
        axis: hinge axis in the lower link's joint frame ``(3,)`` (frames aligned).
        target: desired world position of the end joint ``(F, 3)``.
        angle_limits: hinge angle range (rad).

    Returns:
        ``(new upper-link world rotation, hinge angle (F,))``. The hinge plane
        keeps its current orientation (the swing is the shortest arc).
    """
    l1 = np.linalg.norm(mid_offset)
    l2 = np.linalg.norm(end_offset)
    d = np.linalg.norm(target - root, axis=-1).clip(abs(l1 - l2) + 1e-6, l1 + l2 - 1e-6)
    # Hinge angle θ that gives the chain length d: |m + R(θ) e| = d, solved in the hinge plane.
    # Write e = e_par + e_perp (parallel/perpendicular to the axis); the length depends on θ only
    # through m·R(θ)e = m·e_par + |m_perp||e_perp| cos(θ + φ).
    ax = axis / np.linalg.norm(axis)
    m_perp = mid_offset - ax * (mid_offset @ ax)
    e_perp = end_offset - ax * (end_offset @ ax)
    base = l1**2 + l2**2 + 2 * (mid_offset @ ax) * (end_offset @ ax)
    amp = 2 * np.linalg.norm(m_perp) * np.linalg.norm(e_perp)
    phi = np.arctan2(np.cross(m_perp, e_perp) @ ax, m_perp @ e_perp)
    cos_val = ((d**2 - base) / max(amp, 1e-12)).clip(-1, 1)
    # two solutions θ = ±acos(.) − φ; take the one inside the limits closest to the middle
    cands = np.stack([np.arccos(cos_val) - phi, -np.arccos(cos_val) - phi], axis=1)
    cands = (cands + np.pi) % (2 * np.pi) - np.pi
    lo, hi = angle_limits
    inside = (cands >= lo - 1e-9) & (cands <= hi + 1e-9)
    mid = 0.5 * (lo + hi) if np.isfinite(lo + hi) else 0.0
    score = np.where(inside, np.abs(cands - mid), np.inf)
    theta = cands[np.arange(len(cands)), np.argmin(score, axis=1)].clip(lo, hi)
    # With θ fixed, swing the upper link so the end points at the target.
    end_local = mid_offset + Rotation.from_rotvec(theta[:, None] * ax).apply(end_offset)
    current = upper_rot.apply(end_local)
    swing = _min_rotation(current, target - root)
    return swing * upper_rot, theta
