"""Limb corrections on world rotations: hinge planes that contain the source's lower bone,
and wrist neutrals inside the wrist's range.

Hinges. Knees and elbows are one-DOF hinges, a person's are not quite (the
elbow's carrying angle, a knee's varus, marker noise). Taking the upper link's
rotation from the source and projecting the lower link's onto the hinge
leaves the lower bone (forearm, shin) off its source direction, and the hand
or foot below then has to make up the difference at the wrist or ankle. So
each upper link is turned about its own bone (its direction is kept) until the
hinge plane contains the source's lower bone, and the hinge angle is the
source's bend. When the limb is nearly straight the plane is undefined and the
turn fades out (:data:`STRAIGHT_RAD`).

Wrist neutral. A rig's hand bone need not be the anatomical hand axis (the
CC_Base export bends it 40-50 degrees against the forearm in every frame;
CMU's hand markers 20-30). Where the clip's wrist pose sits beyond the wrist's
range for most frames, the hand's neutral is shifted by the least rotation that
brings the clip's 0.5-99.5 percentile range inside the limits (where that range
is wider than the joint's, the shift that keeps the most frames inside), and the
report says by how much (``wrist_neutral_shift_deg``).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

#: Bends below this (rad) leave the hinge plane as it is; it is fully corrected above twice this.
STRAIGHT_RAD = 0.12
LIMBS = (("left_thigh", "left_shin"), ("right_thigh", "right_shin"),
         ("left_upper_arm", "left_forearm"), ("right_upper_arm", "right_forearm"))


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True).clip(min=1e-12)


def align_hinges(rots: dict[str, Rotation], directions: dict[str, np.ndarray], geo, kin) -> None:
    """Turn each upper limb link about its bone so the hinge plane holds the source lower bone. In place.

    Args:
        rots: character link world rotations (after heading alignment), length ``F`` each.
        directions: source bone directions ``(F, 3)`` per link, in the same world frame.
        geo: :class:`tracker.retarget.retarget.CharacterGeometry`.
        kin: the character's kinematics.
    """
    for upper, lower in LIMBS:
        j = kin.joint_by_child[lower]
        if j.kind != "revolute":
            continue
        b_u = _unit(geo.end(upper) - geo.start(upper))
        b_l = _unit(geo.end(lower) - geo.start(lower))
        d_u, d_l = _unit(directions[upper]), _unit(directions[lower])
        bend = np.arccos(np.clip(np.sum(d_u * d_l, axis=1), -1, 1))
        lo, hi = j.lower, j.upper
        sign = 1.0 if hi > 0 >= lo or lo >= 0 else -1.0
        theta = np.clip(sign * bend, lo, hi)
        r_u = rots[upper]
        hinge = Rotation.from_matrix(j.rotation) * Rotation.from_rotvec(theta[:, None] * j.axis)
        a = r_u.apply(b_u)
        w0 = (r_u * hinge).apply(b_l)
        w0p = w0 - np.sum(w0 * a, axis=1, keepdims=True) * a
        dp = d_l - np.sum(d_l * a, axis=1, keepdims=True) * a
        phi = np.arctan2(np.sum(a * np.cross(w0p, dp), axis=1), np.sum(w0p * dp, axis=1))
        weight = np.clip((bend - STRAIGHT_RAD) / STRAIGHT_RAD, 0.0, 1.0)
        turn = Rotation.from_rotvec(a * (phi * weight)[:, None])
        rots[upper] = turn * r_u
        rots[lower] = rots[upper] * hinge


def neutral_shift(local: Rotation, lower: np.ndarray, upper: np.ndarray, iterations: int = 3) -> Rotation:
    """The least constant rotation ``S`` such that ``local · S⁻¹`` keeps its 0.5-99.5 % range inside the limits.

    Args:
        local: the joint's local rotations over frames.
        lower, upper: rotation-vector bounds ``(3,)``, rad.

    Returns:
        ``S`` (identity when the range already fits).
    """
    shift = Rotation.identity()
    for _ in range(iterations):
        rv = (local * shift.inv()).as_rotvec()
        p_lo, p_hi = np.percentile(rv, 0.5, axis=0), np.percentile(rv, 99.5, axis=0)
        wide = (p_hi - p_lo) > (upper - lower)
        s = np.maximum(p_hi - upper, 0.0) + np.minimum(p_lo - lower, 0.0)
        for k in np.flatnonzero(wide):  # wider than the range: the window that holds the most frames
            v = np.sort(rv[:, k])
            inside = np.searchsorted(v, v + (upper[k] - lower[k]), side="right") - np.arange(len(v))
            s[k] = v[int(np.argmax(inside))] - lower[k]
        if np.abs(s).max() < 1e-6:
            break
        shift = Rotation.from_rotvec(s) * shift
    return shift
