"""The pelvis's pitch: taken from the rig, and moved only as far as the joints around it need.

The pelvis is hidden inside the body: a rig's hips-to-spine bone says where the rig's pelvis
points, not where the anatomical pelvis does, and rigs differ by tens of degrees (a BEAT-style
rig's spine joint sits behind its hips: its pelvis bone leans 19 deg back from the trunk while
the person stands upright, and copied as it is the character's hips stand in 31 deg of
extension). What a capture does pin down is the thighs' and the trunk's directions; the
pelvis's pitch between them is free as long as the joints it carries (the hips and the lower
spine) stay in their ranges.

So per frame the pelvis keeps the rig's pitch when every joint it carries is within range (the
shared clips, almost every frame), and otherwise turns about its own lateral axis by the
smallest angle that brings them into range, or, where no angle does (legs split past the
range), by the angle that leaves the least excess. The thighs and the trunk keep their world
directions; only the joint angles between them change.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

#: Pitch corrections searched (rad): a rig's pelvis bone is off by at most this.
MAX_PITCH = np.radians(30.0)
GRID = np.radians(np.arange(-30.0, 30.5, 1.0))
#: The pitch brings the joints this far inside their range (rad), so the feet's grounding
#: (which turns the hips a little) does not push them back out.
MARGIN = np.radians(1.0)


def _carried(kin, limits):
    """The spherical joints the root link carries that have limits: ``(joint, frame rotation, lo, hi)``."""
    return [(j, Rotation.from_matrix(j.rotation), *limits[j.name]) for j in kin.joints
            if j.parent == kin.root and j.kind == "spherical" and j.name in limits]


def _excess(pelvis: Rotation, rots: dict, carried) -> np.ndarray:
    """Summed range excess (rad) of the carried joints, per frame."""
    total = np.zeros(len(pelvis))
    for j, frame, lo, hi in carried:
        rv = ((pelvis * frame).inv() * rots[j.child]).as_rotvec()
        total += (np.clip(lo - rv, 0, None) + np.clip(rv - hi, 0, None)).sum(axis=1)
    return total


def fit_pelvis_pitch(kin, rots: dict[str, Rotation], limits: dict | None, lateral: np.ndarray,
                     tol: float = 1e-9) -> tuple[Rotation, dict]:
    """The pelvis's world rotations, pitched where the joints it carries would leave their range.

    Args:
        kin: the character's kinematics (its root link is the pelvis).
        rots: world rotations per link (``(F,)`` each), the pelvis's from the rig.
        limits: spherical joint limits (rotation-vector bounds), or None (nothing to fit).
        lateral: the pelvis's lateral axis in its own frame ``(3,)``.
        tol: excess (rad) below which a frame is in range.

    Returns:
        ``(pelvis rotations, report)``; the report gives the frames moved and the largest and
        median pitch of those frames (degrees). A frame no pitch within ``MAX_PITCH`` brings
        into range keeps the rig's pitch (its joints are clamped as before).
    """
    pelvis = rots[kin.root]
    carried = _carried(kin, limits or {})
    report = {"frames": 0, "max_deg": 0.0, "median_deg": 0.0}
    if not carried:
        return pelvis, report
    axis = np.asarray(lateral, float) / np.linalg.norm(lateral)
    base = _excess(pelvis, rots, carried)
    bad = np.flatnonzero(base > tol)
    if not bad.size:
        return pelvis, report
    inner = [(j, frame, lo + MARGIN, hi - MARGIN) for j, frame, lo, hi in carried]
    sub = {j.child: rots[j.child][bad] for j, *_ in carried}
    p0 = pelvis[bad]

    def excess(angle: np.ndarray) -> np.ndarray:
        return _excess(p0 * Rotation.from_rotvec(angle[:, None] * axis), sub, inner)

    order = GRID[np.argsort(np.abs(GRID), kind="stable")]  # 0, -1, +1, -2, ... degrees
    ok = np.stack([excess(np.full(bad.size, a)) <= tol for a in order], axis=1)
    feasible = ok.any(axis=1)
    angle = np.where(feasible, order[ok.argmax(axis=1)], 0.0)
    lo, hi = np.sign(angle) * np.clip(np.abs(angle) - np.radians(1.0), 0, None), angle.copy()
    for _ in range(20):  # to the range's edge, between the grid's step before and its first angle in range
        mid = 0.5 * (lo + hi)
        inside = excess(mid) <= tol
        hi = np.where(feasible & inside, mid, hi)
        lo = np.where(feasible & ~inside, mid, lo)
    # the pelvis turns no further than the clamps would have turned the limbs it carries
    feasible &= np.abs(hi) <= base[bad] + 2 * MARGIN
    pitch = np.zeros(len(pelvis))
    pitch[bad] = np.where(feasible, hi, 0.0)
    moved = np.abs(pitch) > 0
    if moved.any():
        deg = np.degrees(np.abs(pitch[moved]))
        report = {"frames": int(moved.sum()), "max_deg": round(float(deg.max()), 2),
                  "median_deg": round(float(np.median(deg)), 2)}
    return pelvis * Rotation.from_rotvec(pitch[:, None] * axis), report
