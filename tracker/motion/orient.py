"""A BVH file's up axis, handedness and length unit, read from the body it holds.

BVH carries none of the three. They are decided once, here, for both readers (the numpy one,
:mod:`tracker.motion.bvh`, and the numpy-free one behind ``tracker inspect``,
:mod:`tracker.motion.bvh_facts`), on the same sampled frames, and nothing after guesses again:

* **up** is where the head is and the feet are not: over frame 0 and up to
  :data:`SAMPLES` frames spread over the clip, the direction from the ankles' midpoint to the
  head (:mod:`tracker.motion.body` finds them in the tree), averaged, snapped to the nearest of
  ±X, ±Y, ±Z;
* **handedness**: a file whose joints are named by side is *mirrored* (a left-handed frame)
  when its left-named leg stands on the right of the direction the feet point to (toe minus
  ankle), seen from above the head, both in the rest pose and in the median sampled frame
  (:func:`handedness`, a triple product that needs no axes); a file whose names do not say
  left and right is taken as right-handed, and its sides are read from geometry
  (:func:`assign_sides`);
* **unit**: the stature (the head's top above the lowest foot point, the largest over the
  sampled frames) read in each unit of :data:`~tracker.motion.unit_names.UNITS`; the units that
  make it a human stature (:data:`STATURE_RANGE_M`) are candidates and the one nearest
  :data:`~tracker.motion.unit_names.TYPICAL_HEIGHT_M` on a log scale wins. A rig that fits
  none is *scaled* to that typical stature, and says so.

A tree that is not a humanoid keeps the old rules: Y up, right-handed, and the unit whose
frame-0 height is nearest the typical stature. The conversion to Z up is a proper rotation
(the Y-up one maps ``(x, y, z) -> (z, x, y)`` as before), times a reflection of the lateral
axis for a mirrored file; the heading is set later, by the retargeter.
"""

from __future__ import annotations

import math

from tracker.motion import summary
from tracker.motion.body import Body, NotHumanoid, find_body, sides_from_names
from tracker.motion.unit_names import DEFAULT_UNIT, TYPICAL_HEIGHT_M, UNITS, detect_unit

Mat = tuple[float, float, float, float, float, float, float, float, float]

#: Frames sampled over the clip besides frame 0.
SAMPLES = 15
#: Statures a unit must give to be a candidate, m.
STATURE_RANGE_M = (1.0, 2.3)
#: The unit name of a rig that fits none and was scaled to a typical stature.
SCALED = "scaled"
#: Statures (file units) a rig may have to be scaled; outside, the nearest unit is kept.
SCALED_RANGE = (1e-4, 1e7)

#: File axes -> Z up, for each up axis (row-major, proper rotations). +Y and +Z are the
#: package's historical conversions.
_TO_Z_UP: dict[str, Mat] = {
    "+Y": (0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0),
    "+Z": (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
    "+X": (0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0),
}
_FLIP_UP: Mat = (1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -1.0)  # 180 deg about X: -up -> +up
_MIRROR: Mat = (1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0)  # reflect the lateral (Y) axis


def up_matrix(up: str, mirrored: bool = False) -> Mat:
    """Rotation (times a reflection when ``mirrored``) from a file with ``up`` (``"+Y"``, ``"-Z"``...) to Z up."""
    sign, axis = (up[0], up[1:]) if up[0] in "+-" else ("+", up)
    m = _TO_Z_UP["+" + axis.upper()]
    if sign == "-":
        m = summary._mul(_FLIP_UP, m)
    return summary._mul(_MIRROR, m) if mirrored else m


def normal_up(up: str) -> str:
    """The name of an up axis in :data:`~tracker.motion.unit_names.UP_AXES`: ``"Y"`` for ``"+Y"``, ``"-Z"``..."""
    up = up.upper()
    return up[1:] if up.startswith("+") else up


class Orientation:
    """How a file becomes metres and Z up, and how each part was decided.

    Attributes:
        up: the file's up axis (``"Y"``, ``"Z"``, ``"X"``, ``"-Y"`` ...).
        mirrored: the file is left-handed (its left side was reflected to the left).
        matrix: file axes -> Z up, row-major 3x3 (det -1 when mirrored).
        unit: a key of :data:`UNITS`, or :data:`SCALED`; ``scale`` metres per file unit.
        stature_m: the standing height in metres (None when the tree is not a humanoid).
        how: ``{"up", "handedness", "unit"}``: one sentence each.
        body: the humanoid found, or None.
    """

    def __init__(self, up, mirrored, unit, scale, stature_m, how, body) -> None:
        self.up, self.mirrored, self.unit, self.scale = up, mirrored, unit, scale
        self.matrix = up_matrix(up, mirrored)
        self.stature_m, self.how, self.body = stature_m, how, body


def sample_frames(n_frames: int) -> list[int]:
    """Frame 0 and up to :data:`SAMPLES` more spread evenly over the clip."""
    if n_frames <= 1:
        return [0]
    k = min(SAMPLES, n_frames - 1)
    return sorted({0} | {round(i * (n_frames - 1) / k) for i in range(1, k + 1)})


def decide(poses: list[summary.Pose], channels, unit: str | None, up_axis: str | None) -> Orientation:
    """The orientation of a file from its sampled frames (file units and axes; frame 0 first).

    ``unit``/``up_axis`` given by the user are kept (``up_axis`` also fixes the handedness: not
    mirrored); the rest is decided from the body.
    """
    p0 = poses[0]
    how: dict[str, str] = {}
    try:
        body = find_body(p0.names, p0.parents, p0.offsets, p0.end_parents, p0.end_offsets, channels)
    except NotHumanoid as exc:
        body, why = None, str(exc)
    points = [summary.frame_points(p) for p in poses]
    if up_axis is not None:
        up = normal_up(up_axis)
        how["up"] = "given (--up)"
    elif body is None:
        up = "Y"
        how["up"] = f"assumed Y (BVH's usual): the skeleton is not a humanoid ({why})"
    else:
        up, how["up"] = _up_from_body(body, points)
    mirrored = False
    named = body is not None and sides_from_names(body, p0.names)
    if named and up_axis is None:
        rest = _rest_points(p0)
        mirrored, how["handedness"] = _mirrored(body, points, rest, len(p0.names), p0.end_parents)
    else:
        how["handedness"] = "right-handed (" + ("given with --up" if up_axis is not None else
                                                "assumed: the joint names do not say left and right") + ")"
    m = up_matrix(up, mirrored)
    if body is not None:
        how["sides"] = ("from the joint names" if named else
                        assign_sides(body, _turned(points, m), len(p0.names), p0.end_parents))
    stature = _stature(body, points, m, len(p0.names), p0.end_parents) if body is not None else None
    if unit is not None:
        how["unit"] = "given (--unit)"
        return Orientation(up, mirrored, unit, UNITS[unit], None if stature is None else stature * UNITS[unit],
                           how, body)
    if stature is None or not stature > 0 or not math.isfinite(stature):
        height = _extent(points[0], m)
        found = detect_unit(height)
        if found is None:
            raise ValueError("skeleton size is not finite (values too large)")
        how["unit"] = f"{found}: the frame-0 height nearest {TYPICAL_HEIGHT_M} m (no humanoid to measure)"
        return Orientation(up, mirrored, found, UNITS[found], None, how, body)
    fits = [u for u in UNITS if STATURE_RANGE_M[0] <= stature * UNITS[u] <= STATURE_RANGE_M[1]]
    if fits:
        log_h = math.log(stature)
        found = min(fits, key=lambda u: abs(log_h + math.log(UNITS[u] / TYPICAL_HEIGHT_M)))
        how["unit"] = (f"{found}: a stature of {stature:.4g} file units is {stature * UNITS[found]:.2f} m in {found}"
                       + (f" (also human in {', '.join(u for u in fits if u != found)}; {found} is nearer "
                          f"{TYPICAL_HEIGHT_M} m)" if len(fits) > 1 else ""))
        return Orientation(up, mirrored, found, UNITS[found], stature * UNITS[found], how, body)
    if not SCALED_RANGE[0] <= stature <= SCALED_RANGE[1]:  # a degenerate skeleton: the nearest unit, as before
        found = detect_unit(stature) or DEFAULT_UNIT
        how["unit"] = (f"{found}: a stature of {stature:.4g} file units fits no unit and is too far from any to "
                       f"scale; the nearest unit on a log scale")
        return Orientation(up, mirrored, found, UNITS[found], stature * UNITS[found], how, body)
    scale = TYPICAL_HEIGHT_M / stature
    how["unit"] = (f"{SCALED}: a stature of {stature:.4g} file units is human in no unit "
                   f"({', '.join(UNITS)}); scaled to {TYPICAL_HEIGHT_M} m")
    return Orientation(up, mirrored, SCALED, scale, TYPICAL_HEIGHT_M, how, body)


def _point(points, tip: int, joint: int, n: int, end_parents) -> tuple:
    """A limb's tip: a joint, its End Site, or (neither) the joint itself."""
    if tip >= 0:
        return points[tip]
    owner = -1 - tip
    for e, p in enumerate(end_parents):
        if p == owner:
            return points[n + e]
    return points[joint]


def _up_from_body(body: Body, frames) -> tuple[str, str]:
    total = [0.0, 0.0, 0.0]
    for pts in frames:
        feet = [pts[leg.end] for leg in body.legs]
        d = [pts[body.head][i] - 0.5 * (feet[0][i] + feet[1][i]) for i in range(3)]
        n = math.sqrt(sum(x * x for x in d)) or 1.0
        for i in range(3):
            total[i] += d[i] / n
    k = max(range(3), key=lambda i: abs(total[i]))
    mean = [x / len(frames) for x in total]
    sign = "+" if total[k] > 0 else "-"
    up = normal_up(sign + "XYZ"[k])
    return up, (f"{up}: the head is above the ankles along {sign}{'XYZ'[k]} (mean direction "
                f"{mean[k]:+.2f} of 1 over {len(frames)} sampled frames)")


def _turned(frames, m: Mat):
    return [[summary.apply(m, p) for p in pts] for pts in frames]


def facing(body: Body, frames, n: int, end_parents) -> list[tuple[float, float]]:
    """Per frame (Z up), the horizontal direction the body faces: toes minus ankles, else the knees' bend."""
    out = []
    for pts in frames:
        fx = fy = 0.0
        for leg in body.legs:
            tip = _point(pts, leg.tip, leg.end, n, end_parents)
            fx += tip[0] - pts[leg.end][0]
            fy += tip[1] - pts[leg.end][1]
        if math.hypot(fx, fy) < 1e-9:
            for leg in body.legs:  # the knee in front of the hip-ankle line
                h, k, a = pts[leg.upper], pts[leg.middle], pts[leg.end]
                fx += k[0] - 0.5 * (h[0] + a[0])
                fy += k[1] - 0.5 * (h[1] + a[1])
        out.append((fx, fy))
    return out


def assign_sides(body: Body, frames, n: int, end_parents) -> str:
    """Decide left and right from geometry (frames Z up): the leg and arm whose root is on the left of
    the facing direction in most frames are the left ones. Returns how sure, as a sentence."""
    out = []
    for pair, joint in ((body.legs, "upper"), (body.arms, "upper")):
        votes = 0
        for pts, (fx, fy) in zip(frames, facing(body, frames, n, end_parents)):
            a, b = pts[getattr(pair[0], joint)], pts[getattr(pair[1], joint)]
            s = (a[0] - b[0]) * -fy + (a[1] - b[1]) * fx
            votes += 1 if s > 0 else -1 if s < 0 else 0
        if votes < 0:
            pair.reverse()
        pair[0].side, pair[1].side = "left", "right"
        out.append(abs(votes))
    body.sides_from = "geometry"
    return (f"from geometry (no side in the names): legs agree in {out[0]} more of {len(frames)} sampled "
            f"frames than not, arms in {out[1]}")


def handedness(body: Body, pts, n: int, end_parents) -> float:
    """The body's handedness in one frame (any axes): ``(up x forward) . left`` over the norms, +1 for a
    right-handed person, -1 for a mirrored one. Up is ankles -> head, forward the toes (ankle -> foot
    tip), left the left-named hip minus the right; 0 when a direction is missing."""
    ankles = [pts[leg.end] for leg in body.legs]
    up = [pts[body.head][i] - 0.5 * (ankles[0][i] + ankles[1][i]) for i in range(3)]
    fwd = [0.0, 0.0, 0.0]
    for leg in body.legs:
        tip = _point(pts, leg.tip, leg.end, n, end_parents)
        for i in range(3):
            fwd[i] += tip[i] - pts[leg.end][i]
    left = [pts[body.legs[0].upper][i] - pts[body.legs[1].upper][i] for i in range(3)]
    cross = (up[1] * fwd[2] - up[2] * fwd[1], up[2] * fwd[0] - up[0] * fwd[2], up[0] * fwd[1] - up[1] * fwd[0])
    norm = math.sqrt(sum(x * x for x in up) * sum(x * x for x in fwd) * sum(x * x for x in left))
    return sum(c * l for c, l in zip(cross, left)) / norm if norm > 0 else 0.0


def _mirrored(body: Body, frames, rest, n: int, end_parents) -> tuple[bool, str]:
    """Mirrored when the rest pose and most sampled frames are both left-handed (:func:`handedness`):
    a capture whose feet point oddly in some frames is not reflected on their word alone."""
    at_rest = handedness(body, rest, n, end_parents)
    side = sorted(handedness(body, pts, n, end_parents) for pts in frames)
    median = side[len(side) // 2]
    if at_rest < 0 and median < 0:
        return True, (f"mirrored (a left-handed file): its left-named leg is on the right of where the feet "
                      f"point at rest ({at_rest:+.2f}) and in the median sampled frame ({median:+.2f}); reflected")
    return False, (f"right-handed: the left-named leg is on the left of where the feet point (rest pose "
                   f"{at_rest:+.2f}, median sampled frame {median:+.2f}; -1 would be mirrored)")


def _rest_points(pose: summary.Pose) -> list:
    """The skeleton's rest pose (every rotation zero, the root at its OFFSET): joints then End Sites."""
    pos: list = []
    for j, p in enumerate(pose.parents):
        o = pose.offsets[j]
        pos.append(tuple(o) if p < 0 else (pos[p][0] + o[0], pos[p][1] + o[1], pos[p][2] + o[2]))
    ends = [(pos[p][0] + o[0], pos[p][1] + o[1], pos[p][2] + o[2]) for p, o in zip(pose.end_parents, pose.end_offsets)]
    return pos + ends


def _stature(body: Body, frames, m: Mat, n: int, end_parents) -> float:
    head = _below(body.head, n, end_parents, body.parents)
    best = 0.0
    for pts in _turned(frames, m):
        top = max(pts[k][2] for k in head)
        low = min(min(pts[leg.end][2], _point(pts, leg.tip, leg.end, n, end_parents)[2]) for leg in body.legs)
        best = max(best, top - low)
    return best


def _below(head: int, n: int, end_parents, parents) -> list[int]:
    """Point indices (joints and End Sites) of the head's subtree."""
    inside = {head}
    for j in range(head + 1, n):
        if parents[j] in inside:
            inside.add(j)
    ends = [n + e for e, p in enumerate(end_parents) if p in inside]
    return sorted(inside) + ends


def _extent(points, m: Mat) -> float:
    z = [summary.apply(m, p)[2] for p in points]
    return max(z) - min(z)
