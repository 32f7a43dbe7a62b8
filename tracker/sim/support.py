"""The support polygon from the engine's foot contacts, and where the centre of mass is over it.

PyBullet reports each contact between a foot and the ground as a point on the ground
(``positionOnB``); for a box foot flat on the floor these are its four sole corners. The
support polygon is the convex hull of the contact points of all feet (``scipy.spatial.
ConvexHull`` on their ground-plane coordinates). With fewer than three points, or all on
a line (a foot on its edge), the "polygon" is that segment or point: it has no area and a
ground projection is inside only if it lies on it (within ``tol``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import tracker.sim.quiet  # noqa: F401  (imports pybullet with its banner silenced)
import pybullet as p  # noqa: E402

from tracker.arrays import frozen  # noqa: E402


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
    """

    feet: tuple[str, ...]
    points: np.ndarray
    foot_of_point: np.ndarray
    polygon: np.ndarray
    center: np.ndarray
    area: float

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


def _cross2(a: np.ndarray, b: np.ndarray) -> float:
    return float(a[0] * b[1] - a[1] * b[0])


def _segment_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    n2 = float(ab @ ab)
    t = 0.0 if n2 == 0.0 else min(max(float((x - a) @ ab) / n2, 0.0), 1.0)
    return float(np.linalg.norm(x - (a + t * ab)))


_HULL_CACHE: dict[bytes, tuple[np.ndarray, float]] = {}


def polygon_of(points: np.ndarray, feet: tuple[str, ...] = (), foot_of_point: np.ndarray | None = None) -> Support:
    """The support of ground contact points ``(N, 3)`` (or ``(N, 2)``), m."""
    pts = np.asarray(points, dtype=float)
    if pts.size == 0:
        pts = np.zeros((0, 3))
    fop = np.zeros(len(pts), dtype=int) if foot_of_point is None else np.asarray(foot_of_point, dtype=int)
    # A standing character's contacts barely move from step to step: the hull (a qhull call and
    # most of this function's cost) is reused while the points agree to 0.1 mm.
    key = np.round(pts[:, :2], 4).tobytes()
    hit = _HULL_CACHE.get(key)
    if hit is None:
        hit = _hull(pts)
        if len(_HULL_CACHE) > 64:
            _HULL_CACHE.clear()
        _HULL_CACHE[key] = hit
    poly, area, center = hit
    return Support(tuple(feet), _readonly(pts, float), _readonly(fop, np.int64), poly, center, area)


def _readonly(a: np.ndarray, dtype) -> np.ndarray:
    """``a`` itself when it is already a read-only ``dtype`` array (support_of's own), else a frozen copy."""
    if a.dtype == dtype and not a.flags.writeable:
        return a
    return frozen(a, dtype)


def _hull(pts: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """``(polygon, area, centre)`` of ground points, read-only."""
    from scipy.spatial import ConvexHull, QhullError

    xy = pts[:, :2]
    poly, area = np.zeros((0, 2)), 0.0
    if len(xy):
        uniq = np.unique(np.round(xy, 12), axis=0)
        if len(uniq) >= 3:
            try:
                hull = ConvexHull(uniq)
                poly, area = uniq[hull.vertices], float(hull.volume)  # 2-D: volume is the area
            except QhullError:  # collinear
                poly = _segment_ends(uniq)
        else:
            poly = uniq if len(uniq) == 1 else _segment_ends(uniq)
    if area > 0.0:
        center = _centroid(poly, area)
    elif len(poly):
        center = poly.mean(axis=0)
    else:
        center = np.full(2, np.nan)
    return frozen(poly), area, frozen(center)


def _segment_ends(xy: np.ndarray) -> np.ndarray:
    """The two extreme points of collinear points ``(N, 2)``."""
    d = xy - xy.mean(axis=0)
    axis = np.linalg.svd(d, full_matrices=False)[2][0]
    s = d @ axis
    return xy[[int(np.argmin(s)), int(np.argmax(s))]]


def _centroid(poly: np.ndarray, area: float) -> np.ndarray:
    x, y = poly[:, 0], poly[:, 1]
    xn, yn = np.roll(x, -1), np.roll(y, -1)
    cr = x * yn - xn * y
    return np.array([((x + xn) * cr).sum(), ((y + yn) * cr).sum()]) / (6.0 * area)


def foot_contacts(character, ground: int) -> dict[str, np.ndarray]:
    """The engine's contact points of each foot with ``ground``: foot link -> ``(n, 3)`` m (after a step).

    Only feet with at least one point with non-negative normal force are listed.
    """
    cid, body = character.client_id, character.body_id
    out: dict[str, list] = {}
    index = character.__dict__.get("_foot_of_link")
    if index is None:  # per character, once (this runs every step)
        index = character.__dict__["_foot_of_link"] = {character.link_index(f): f for f in character.model.feet}
    for c in p.getContactPoints(bodyA=body, bodyB=ground, physicsClientId=cid):
        foot = index.get(c[3])
        if foot is not None and c[9] >= 0.0:
            out.setdefault(foot, []).append(c[6])
    return {f: np.array(out[f], dtype=float) for f in character.model.feet if f in out}


def support_of(character, ground: int) -> Support:
    """The support polygon of ``character``'s feet on ``ground`` from the engine's current contacts."""
    contacts = foot_contacts(character, ground)
    feet = tuple(contacts)
    if not feet:
        return polygon_of(np.zeros((0, 3)))
    pts = np.concatenate([contacts[f] for f in feet])
    fop = np.concatenate([np.full(len(contacts[f]), i, dtype=np.int64) for i, f in enumerate(feet)])
    pts.setflags(write=False)
    fop.setflags(write=False)
    return polygon_of(pts, feet, fop)


def touching_links(character, ground: int) -> tuple[str, ...]:
    """Every link of ``character`` touching ``ground`` now (link names, sorted)."""
    cid, body = character.client_id, character.body_id
    links = {c[3] for c in p.getContactPoints(bodyA=body, bodyB=ground, physicsClientId=cid)}
    return tuple(sorted(character.link_name(k) for k in links))

