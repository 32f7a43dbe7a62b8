"""The support polygon from the engine's foot contacts, and where the centre of mass is over it.

PyBullet reports each contact between a foot and the ground as a point on the ground
(``positionOnB``); for a box foot flat on the floor these are its four sole corners. The
support polygon is the convex hull of the contact points of all feet (on their ground-plane
coordinates; a compiled monotone chain, checked against ``scipy.spatial.ConvexHull`` in the
tests, as qhull's call costs more than a physics step). With fewer than three points, or all on
a line (a foot on its edge), the "polygon" is that segment or point: it has no area and a
ground projection is inside only if it lies on it (within ``tol``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet with its banner silenced)
import pybullet as p  # noqa: E402

from tracker.arrays import frozen  # noqa: E402
from tracker.character.rigid_body import _jit  # noqa: E402

#: m: a foot's contact point supports the body while at most this far from the ground. The engine keeps
#: points up to several millimetres away (:data:`tracker.quiet.CONTACT_BREAKING_THRESHOLD`) as
#: speculative contacts; a heel lifting off keeps its points for a step or two, and a stance foot
#: held on them in SPD's prediction would be held in the air.
SUPPORT_GAP = 0.002


@dataclass(frozen=True)
class Support:
    """The support of a character at one instant.

    Attributes:
        feet: the foot links touching the ground (model order).
        points: ``(N, 3)`` world contact points on the ground, m.
        foot_of_point: ``(N,)`` index into ``feet`` of each point.
        polygon: ``(K, 2)`` hull vertices in the ground plane (x, y), counter-clockwise, m; the
            distinct points themselves when there are fewer than three or they are collinear.
        center: ``(2,)`` the polygon's area centroid (the mean of ``polygon`` without area), m;
            NaN without contacts.
        area: m².
        others: how many contact points other links (not feet) have with the ground: the body
            also rests on a hand, a knee, the pelvis (it fell), and the feet are not all its support.
        other_contacts: those points (:class:`GroundContacts`), or None without any.
    """

    feet: tuple[str, ...]
    points: np.ndarray
    foot_of_point: np.ndarray
    polygon: np.ndarray
    center: np.ndarray
    area: float
    others: int = 0
    other_contacts: "GroundContacts | None" = None

    @property
    def empty(self) -> bool:
        """No foot touches the ground."""
        return len(self.points) == 0

    def signed_distance(self, xy: np.ndarray) -> float:
        """Distance of the ground point ``xy`` ``(2,)`` to the polygon's boundary, m: negative inside.

        ``inf`` without contacts.
        """
        xy = np.asarray(xy, dtype=float)[:2]
        poly = self.polygon
        if len(poly) == 0:
            return float("inf")
        if len(poly) == 1:
            return float(np.linalg.norm(xy - poly[0]))
        d = min(_segment_distance(xy, poly[i], poly[(i + 1) % len(poly)]) for i in range(len(poly)))
        if self.area <= 0.0:
            return d
        inside = all(_cross2(poly[(i + 1) % len(poly)] - poly[i], xy - poly[i]) >= 0.0 for i in range(len(poly)))
        return -d if inside else d

    def contains(self, xy: np.ndarray, tol: float = 1e-9) -> bool:
        """Whether the ground point ``xy`` ``(2,)`` (e.g. the CoM's projection) is over the support."""
        return self.signed_distance(xy) <= tol


@dataclass(frozen=True)
class GroundContacts:
    """The engine's contact points of links other than the feet with the ground (m of them).

    Attributes:
        links: ``(m,)`` PyBullet link index of each point.
        points: ``(m, 3)`` world contact points on the ground, m.
        normals: ``(m, 3)`` contact normals, from the ground toward the link.
        gaps: ``(m,)`` signed distances, m (negative: the link is inside the ground).
    """

    links: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    gaps: np.ndarray

    @classmethod
    def of(cls, raw: list) -> "GroundContacts | None":
        """From PyBullet contact tuples (``getContactPoints``), or None when there are none."""
        if not raw:
            return None
        return cls(frozen([c[3] for c in raw], np.int64), frozen([c[6] for c in raw], float),
                   frozen([c[7] for c in raw], float), frozen([c[8] for c in raw], float))


def _cross2(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _segment_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    n2 = float(ab @ ab)
    t = 0.0 if n2 == 0.0 else min(max(float((x - a) @ ab) / n2, 0.0), 1.0)
    return float(np.linalg.norm(x - (a + t * ab)))


def polygon_of(points: np.ndarray, feet: tuple[str, ...] = (), foot_of_point: np.ndarray | None = None) -> Support:
    """The support of ground contact points ``(N, 3)`` (or ``(N, 2)``), m."""
    pts = np.asarray(points, dtype=float)
    if pts.size == 0:
        pts = np.zeros((0, 3))
    fop = np.zeros(len(pts), dtype=int) if foot_of_point is None else np.asarray(foot_of_point, dtype=int)
    poly, area, center = _hull(np.ascontiguousarray(pts[:, :2]))
    return Support(tuple(feet), _readonly(pts, float), _readonly(fop, np.int64), _frozen_own(poly),
                   _frozen_own(center), float(area))


def _readonly(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` itself when it is already a read-only ``dtype`` array (support_of's own), else a frozen copy."""
    if a.dtype == dtype and not a.flags.writeable:
        return a
    return frozen(a, dtype)


def _frozen_own(a: np.ndarray) -> np.ndarray:
    """``a`` (a fresh array nobody else holds) made read-only in place."""
    a.setflags(write=False)
    return a


@_jit
def _hull(xy):
    """``(polygon (K, 2), area, centre (2,))`` of ground points ``(N, 2)``: Andrew's monotone chain.

    Counter-clockwise from the lowest-x (then lowest-y) vertex; points on an edge are not
    vertices. Fewer than three distinct points, or all on a line (within 1e-12 of the points'
    extent, squared): the distinct point or the segment's two ends, area 0, centre their mean.
    Exact duplicates count once. Compiled (it runs every balanced step; qhull through scipy
    costs ~0.1-0.5 ms per call, more than the step's physics); ``tests/sim/test_support.py``
    checks it against ``scipy.spatial.ConvexHull``.
    """
    n = xy.shape[0]
    if n == 0:
        return np.zeros((0, 2)), 0.0, np.full(2, np.nan)
    # sort by (x, y): insertion sort (a few to a few tens of points)
    order = np.arange(n)
    for i in range(1, n):
        k = order[i]
        j = i - 1
        while j >= 0 and (xy[order[j], 0] > xy[k, 0] or (xy[order[j], 0] == xy[k, 0] and xy[order[j], 1] > xy[k, 1])):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
    pts = np.empty((n, 2))
    m = 0
    for i in range(n):
        x, y = xy[order[i], 0], xy[order[i], 1]
        if m == 0 or x != pts[m - 1, 0] or y != pts[m - 1, 1]:
            pts[m, 0], pts[m, 1] = x, y
            m += 1
    ext = 0.0
    for i in range(m):
        ext = max(ext, abs(pts[i, 0] - pts[0, 0]), abs(pts[i, 1] - pts[0, 1]))
    tol = 1e-12 * ext * ext  # a turn smaller than this is no turn (collinear within rounding)
    hull = np.empty((2 * m + 1, 2))
    h = 0
    for i in range(m):  # lower chain
        while h >= 2 and ((hull[h - 1, 0] - hull[h - 2, 0]) * (pts[i, 1] - hull[h - 2, 1])
                          - (hull[h - 1, 1] - hull[h - 2, 1]) * (pts[i, 0] - hull[h - 2, 0])) <= tol:
            h -= 1
        hull[h, 0], hull[h, 1] = pts[i, 0], pts[i, 1]
        h += 1
    low = h + 1
    for i in range(m - 2, -1, -1):  # upper chain
        while h >= low and ((hull[h - 1, 0] - hull[h - 2, 0]) * (pts[i, 1] - hull[h - 2, 1])
                            - (hull[h - 1, 1] - hull[h - 2, 1]) * (pts[i, 0] - hull[h - 2, 0])) <= tol:
            h -= 1
        hull[h, 0], hull[h, 1] = pts[i, 0], pts[i, 1]
        h += 1
    k = h - 1 if m > 1 else 1  # the last vertex repeats the first
    if k < 3:  # one point, or collinear: the distinct point or the segment's ends
        k = 1 if m == 1 else 2
        poly = np.empty((k, 2))
        poly[0, 0], poly[0, 1] = pts[0, 0], pts[0, 1]
        if k == 2:
            poly[1, 0], poly[1, 1] = pts[m - 1, 0], pts[m - 1, 1]
        center = np.empty(2)
        center[0] = (poly[0, 0] + poly[k - 1, 0]) / 2.0
        center[1] = (poly[0, 1] + poly[k - 1, 1]) / 2.0
        return poly, 0.0, center
    poly = hull[:k].copy()
    # area and area centroid (shoelace), about the first vertex for precision far from the origin
    ox, oy = poly[0, 0], poly[0, 1]
    a2, cx, cy = 0.0, 0.0, 0.0
    for i in range(k):
        x0, y0 = poly[i, 0] - ox, poly[i, 1] - oy
        x1, y1 = poly[(i + 1) % k, 0] - ox, poly[(i + 1) % k, 1] - oy
        cr = x0 * y1 - x1 * y0
        a2 += cr
        cx += (x0 + x1) * cr
        cy += (y0 + y1) * cr
    center = np.empty(2)
    center[0] = ox + cx / (3.0 * a2)
    center[1] = oy + cy / (3.0 * a2)
    return poly, a2 / 2.0, center


@_jit
def _group_by_foot(raw, n_feet):
    """Contact points (``raw``: ``(4 N,)`` flat ``x, y, z, foot``) grouped by foot (model order, each
    foot's points in the engine's order) ``(N, 3)``, their index into the feet present ``(N,)``, and
    which feet are present (bit ``f`` of an int)."""
    n = raw.shape[0] // 4
    pts = raw.reshape((n, 4))
    foot = np.empty(n, dtype=np.int64)
    for i in range(n):
        foot[i] = int(pts[i, 3])
    present = np.zeros(n_feet, dtype=np.bool_)
    for i in range(n):
        present[foot[i]] = True
    rank = np.full(n_feet, -1, dtype=np.int64)
    r = 0
    for f in range(n_feet):
        if present[f]:
            rank[f] = r
            r += 1
    out = np.empty((n, 3))
    fop = np.empty(n, dtype=np.int64)
    t = 0
    for f in range(n_feet):
        for i in range(n):
            if foot[i] == f:
                out[t, 0], out[t, 1], out[t, 2] = pts[i, 0], pts[i, 1], pts[i, 2]
                fop[t] = rank[f]
                t += 1
    mask = 0
    for f in range(n_feet):
        if present[f]:
            mask |= 1 << f
    return out, fop, mask


@_jit
def _support(raw, n_feet):
    """:func:`_group_by_foot` then :func:`_hull` of the grouped points, in one call."""
    pts, fop, mask = _group_by_foot(raw, n_feet)
    poly, area, center = _hull(np.ascontiguousarray(pts[:, :2]))
    return pts, fop, mask, poly, area, center


def _feet_index(character) -> dict[int, int]:
    """PyBullet link index -> position in ``character.model.feet`` (cached on the character)."""
    index = character.__dict__.get("_foot_rank_of_link")
    if index is None:  # per character, once (this runs every step)
        index = character.__dict__["_foot_rank_of_link"] = {
            character.link_index(f): i for i, f in enumerate(character.model.feet)}
    return index


def _raw_foot_contacts(character, ground: int) -> tuple[list[float], list]:
    """The engine's foot-ground contact points with a non-negative normal force, at most
    :data:`SUPPORT_GAP` from the ground, flat:
    ``[x, y, z, foot, x, y, z, foot, ...]`` (foot: index into ``model.feet``), and the contact tuples
    of other links with the ground; one ``getContactPoints`` call, filtered (one flat list converts
    to an array fastest)."""
    index = _feet_index(character)
    out: list[float] = []
    others = []
    for c in p.getContactPoints(bodyA=character.body_id, bodyB=ground, physicsClientId=character.client_id):
        f = index.get(c[3])
        if f is None:
            others.append(c)
        elif c[9] >= 0.0 and c[8] <= SUPPORT_GAP:
            out += c[6]
            out.append(f)
    return out, others


def other_contacts(character, ground: int, refresh: bool = True) -> GroundContacts | None:
    """The contacts of ``character``'s links other than its feet with ``ground`` at its current state
    (:class:`GroundContacts`), or None; ``refresh`` as :func:`support_of` (the points the next step will use)."""
    if refresh:
        p.performCollisionDetection(physicsClientId=character.client_id)
    return GroundContacts.of(_raw_foot_contacts(character, ground)[1])


def foot_contacts(character, ground: int) -> dict[str, np.ndarray]:
    """The engine's contact points of each foot with ``ground``: foot link -> ``(n, 3)`` m (after a step).

    Only feet with at least one point with non-negative normal force are listed.
    """
    raw = np.array(_raw_foot_contacts(character, ground)[0], dtype=float).reshape(-1, 4)
    feet = character.model.feet
    return {f: raw[raw[:, 3] == i, :3] for i, f in enumerate(feet) if (raw[:, 3] == i).any()}


_NO_POINTS = frozen(np.zeros((0, 3)))
_FEET: dict[tuple[tuple[str, ...], int], tuple[str, ...]] = {}  # (model's feet, bitmask) -> feet present


def support_of(character, ground: int, refresh: bool = True) -> Support:
    """The support polygon of ``character``'s feet on ``ground`` from the engine's contacts at the
    character's current state.

    ``refresh`` (default) runs the engine's collision detection first. PyBullet detects contacts at
    the *start* of a step, before it integrates, so after ``stepSimulation`` its contact points are
    where the feet touched one step ago: a foot rolling off a toe corner still lists that corner.
    Balance hands these points to SPD's prediction as held stance constraints (a held point that
    the engine has let go turns a stiff ankle servo loose on a 1 kg foot: the free-root CMU walk
    spun its ankle to PyBullet's 100 rad/s clamp in 3 steps at 1/60 s), so they must be the
    points the next step will use: detection is idempotent at a given state, and the step then
    works on the same manifold. ``refresh=False``: the points as the last step left them.
    """
    if refresh:
        p.performCollisionDetection(physicsClientId=character.client_id)
    raw, other = _raw_foot_contacts(character, ground)
    others, rest = len(other), GroundContacts.of(other)
    if not raw:
        return replace(polygon_of(_NO_POINTS), others=others, other_contacts=rest) if others else polygon_of(_NO_POINTS)
    feet_all = character.model.feet
    pts, fop, mask, poly, area, center = _support(np.array(raw, dtype=float), len(feet_all))
    feet = _FEET.get((feet_all, mask))
    if feet is None:
        feet = _FEET[(feet_all, mask)] = tuple(f for i, f in enumerate(feet_all) if mask >> i & 1)
    return Support(feet, _frozen_own(pts), _frozen_own(fop), _frozen_own(poly), _frozen_own(center), float(area),
                   others, rest)


def touching_links(character, ground: int) -> tuple[str, ...]:
    """Every link of ``character`` touching ``ground`` now (link names, sorted)."""
    cid, body = character.client_id, character.body_id
    links = {c[3] for c in p.getContactPoints(bodyA=body, bodyB=ground, physicsClientId=cid)}
    return tuple(sorted(character.link_name(k) for k in links))



def settled_support(sim) -> Support:
    """The support of ``sim``'s character (a :class:`~tracker.sim.simulation.Simulation`) as it is now
    (its start), its contact manifolds settled first (:meth:`~tracker.sim.world.World.settle_contacts`).

    Raises:
        ConfigError: no foot touches the ground (balance needs one), naming what touches instead.
    """
    from tracker.errors import ConfigError

    sim.world.settle_contacts(sim.character)
    support = support_of(sim.character, sim.world.ground)
    if support.empty:
        others = touching_links(sim.character, sim.world.ground)
        where = f"only {', '.join(others)} touch the ground" if others else "nothing touches the ground"
        raise ConfigError(f"{sim.reference.source or 'reference'}: balance needs a foot on the ground at "
                          f"t = {sim.opt.start:g} s (clip time), but {where} (feet: {', '.join(sim.model.feet)})")
    return support
