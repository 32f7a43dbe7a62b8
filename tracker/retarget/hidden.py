"""The hidden links' pitch: taken from the rig, and moved only as far as the joints around them need.

The pelvis is hidden inside the body: a rig's hips-to-spine bone says where the rig's pelvis
points, not where the anatomical pelvis does, and rigs differ by tens of degrees (a BEAT-style
rig's spine joint sits behind its hips: its pelvis bone leans 19 deg back from the trunk while
the person stands upright, and copied as it is the character's hips stand in 31 deg of
extension). The abdomen is hidden the same way between the pelvis and the chest (a rig with
three or four spine joints puts its own bends there: Reallusion's CC_Base leaves the upper spine
20 deg in extension while its people walk upright). What a capture does pin down is the thighs',
the chest's and the head's directions; the pitch of the links between them is free as long as
the joints beside them (hips, lower and upper spine) stay in their ranges.

So per frame a hidden link keeps the rig's pitch when every joint beside it is within range
(almost every frame of the shared clips), and otherwise turns about its own lateral axis by the
smallest angle that brings them into range, when that angle is no larger than the clamps would
have turned the links beside it. The thighs, the chest and the head keep their world
directions; only the joint angles between them change.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

#: Pitch corrections searched (rad): a rig's hidden bone is off by at most this.
MAX_PITCH = np.radians(30.0)
GRID = np.radians(np.arange(-30.0, 30.5, 1.0))
#: The pitch brings the joints this far inside their range (rad), so the feet's grounding
#: (which turns the hips a little) does not push them back out.
MARGIN = np.radians(1.0)


def _carried(kin, link: str, limits):
    """The spherical joints with limits on either side of ``link``: ``(joint, frame, lo, hi, inward)``;
    ``inward`` is True for the joint that carries ``link`` (its parent side)."""
    return [(j, Rotation.from_matrix(j.rotation), *limits[j.name], j.child == link) for j in kin.joints
            if link in (j.parent, j.child) and j.kind == "spherical" and j.name in limits]


def _excess(turned: Rotation, rots: dict, carried) -> np.ndarray:
    """Summed range excess (rad) of the carried joints, per frame, with the link at ``turned``."""
    total = np.zeros(len(turned))
    for j, frame, lo, hi, inward in carried:
        local = (rots[j.parent] * frame).inv() * turned if inward else (turned * frame).inv() * rots[j.child]
        rv = local.as_rotvec()
        total += (np.clip(lo - rv, 0, None) + np.clip(rv - hi, 0, None)).sum(axis=1)
    return total


def fit_pitch(kin, rots: dict[str, Rotation], limits: dict | None, lateral: np.ndarray,
              link: str | None = None, tol: float = 1e-9) -> tuple[Rotation, dict]:
    """A hidden link's world rotations, pitched where the joints beside it would leave their range.

    Args:
        kin: the character's kinematics.
        rots: world rotations per link (``(F,)`` each), ``link``'s from the rig.
        limits: spherical joint limits (rotation-vector bounds), or None (nothing to fit).
        lateral: the link's lateral axis in its own frame ``(3,)``.
        link: the link (default: the root, the pelvis); the abdomen is the other hidden one.
        tol: excess (rad) below which a frame is in range.

    Returns:
        ``(the link's rotations, report)``; the report gives the frames moved and the largest and
        median pitch of those frames (degrees). A frame no pitch within ``MAX_PITCH`` brings
        into range keeps the rig's pitch (its joints are clamped as before).
    """
    link = link or kin.root
    current = rots[link]
    carried = _carried(kin, link, limits or {})
    report = {"frames": 0, "max_deg": 0.0, "median_deg": 0.0}
    if not carried:
        return current, report
    axis = np.asarray(lateral, float) / np.linalg.norm(lateral)
    base = _excess(current, rots, carried)
    bad = np.flatnonzero(base > tol)
    if not bad.size:
        return current, report
    inner = [(j, frame, lo + MARGIN, hi - MARGIN, inward) for j, frame, lo, hi, inward in carried]
    sub = {name: rots[name][bad] for j, *_ in carried for name in (j.parent, j.child) if name != link}
    p0 = current[bad]

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
    # the link turns no further than the clamps would have turned the links beside it
    feasible &= np.abs(hi) <= base[bad] + 2 * MARGIN
    pitch = np.zeros(len(current))
    pitch[bad] = np.where(feasible, hi, 0.0)
    moved = np.abs(pitch) > 0
    if moved.any():
        deg = np.degrees(np.abs(pitch[moved]))
        report = {"frames": int(moved.sum()), "max_deg": round(float(deg.max()), 2),
                  "median_deg": round(float(np.median(deg)), 2)}
    return current * Rotation.from_rotvec(pitch[:, None] * axis), report
