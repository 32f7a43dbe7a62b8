"""Rigid bodies in maximal coordinates, stepped by impulses (Weinstein, Teran & Fedkiw 2008 §IV-VI).

A small numpy engine for the paper's own setting: every body has its own position ``x`` (m),
rotation ``R`` (3×3, body to world) and velocity ``[v, ω]`` (m/s, rad/s, world frame); joints,
PD actuation, contacts and muscles are rows of one impulse solve
(:mod:`tracker.control.poststab`). Z is up, gravity −9.81 m/s² along Z.

A step of length ``h`` (the paper's order, simplified; the choices are ours):

1. gravity: ``v += h g``;
2. the **global post-stabilisation**: joint constraint rows (target ``−C/h``: the joint's
   position error is removed over the step, standing in for the paper's pre-stabilisation),
   each actuated hinge's axis row (target: the PD secant velocity ``ω̃``, given by the caller)
   and the rows of the contacts that are *in the solve* (normal and two tangents: sticking,
   unilateral through an active set), all in one system;
3. contacts *not in the solve* (foreign objects): a second solve with the joint constraint rows
   and those contacts only, so they push the structure and PD has to fight them;
4. positions: ``x += h v``, ``R ← exp(h ω̂) R``.

Gyroscopic torques are left out (zero for the planar scenes here, which rotate about a principal
axis). Contacts: box corners inside a box, and spheres against boxes (frictionless).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tracker.control.poststab import Solve, impulse_solve, muscle_solve

G = np.array([0.0, 0.0, -9.81])


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues: the 3×3 rotation by ``angle`` rad about the unit ``axis``."""
    axis = np.asarray(axis, dtype=float)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


@dataclass
class Body:
    """A box (``half`` extents, m) or a sphere (``radius``, m); ``mass`` 0: fixed (immovable)."""

    name: str
    mass: float
    inertia: np.ndarray  # (3,) principal moments, kg·m², body frame
    x: np.ndarray
    R: np.ndarray = field(default_factory=lambda: np.eye(3))
    v: np.ndarray = field(default_factory=lambda: np.zeros(3))
    w: np.ndarray = field(default_factory=lambda: np.zeros(3))
    half: np.ndarray | None = None
    radius: float | None = None
    enabled: bool = True

    @staticmethod
    def box(name: str, mass: float, size: tuple[float, float, float], x, R=None) -> "Body":
        sx, sy, sz = size
        inertia = mass / 12.0 * np.array([sy * sy + sz * sz, sx * sx + sz * sz, sx * sx + sy * sy])
        return Body(name, mass, inertia, np.array(x, dtype=float), np.eye(3) if R is None else np.array(R),
                    half=np.array(size) / 2.0)

    @staticmethod
    def sphere(name: str, mass: float, radius: float, x) -> "Body":
        return Body(name, mass, np.full(3, 0.4 * mass * radius * radius), np.array(x, dtype=float),
                    radius=radius)

    def point(self, local: np.ndarray) -> np.ndarray:
        return self.x + self.R @ local


@dataclass(frozen=True)
class Joint:
    """A joint from ``parent`` (body index, −1: the world) to ``child``: at ``anchor_p``/``anchor_c``
    (m, in each body's frame; the world's frame is the world). ``kind`` ``"hinge"`` (about the
    frames' Y axis, angle of the child from the parent, positive turning +X down) or ``"point"``
    (three free rotations). ``actuated``: a hinge whose axis row gets a PD target."""

    parent: int
    child: int
    anchor_p: np.ndarray
    anchor_c: np.ndarray
    kind: str = "hinge"
    actuated: bool = True


@dataclass(frozen=True)
class Contact:
    """Body ``b`` touches body ``a`` (−1 or a fixed body: immovable) at ``point`` (world, m) with
    ``normal`` from ``a`` to ``b``; ``depth`` > 0 is penetration (m); ``friction``: sticking rows."""

    a: int
    b: int
    point: np.ndarray
    normal: np.ndarray
    depth: float
    friction: bool


class World:
    """Bodies, joints and the contact pairs to test; :meth:`step` advances by impulses."""

    def __init__(self, bodies: list[Body], joints: list[Joint]) -> None:
        self.bodies, self.joints = bodies, joints
        self.pairs: list[tuple[int, int, bool, bool]] = []  # (a, b, in the solve, friction)
        self.restitution = 0.0
        self.slop = 1e-4  # m of penetration left alone (no jitter at rest)
        self.last: dict = {}

    # -- geometry and rows ---------------------------------------------------------------------

    @property
    def ndof(self) -> int:
        return 6 * len(self.bodies)

    def _movable(self, i: int) -> bool:
        return i >= 0 and self.bodies[i].mass > 0 and self.bodies[i].enabled

    def velocity(self) -> np.ndarray:
        return np.concatenate([np.concatenate([b.v, b.w]) for b in self.bodies])

    def set_velocity(self, v: np.ndarray) -> None:
        for k, b in enumerate(self.bodies):
            if self._movable(k):
                b.v, b.w = v[6 * k:6 * k + 3].copy(), v[6 * k + 3:6 * k + 6].copy()

    def mass_inverse(self) -> np.ndarray:
        m = np.zeros((self.ndof, self.ndof))
        for k, b in enumerate(self.bodies):
            if self._movable(k):
                m[6 * k:6 * k + 3, 6 * k:6 * k + 3] = np.eye(3) / b.mass
                m[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = b.R @ np.diag(1.0 / b.inertia) @ b.R.T
        return m

    def _frame(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return (np.zeros(3), np.eye(3)) if i < 0 else (self.bodies[i].x, self.bodies[i].R)

    def point_row(self, i: int, p: np.ndarray, d: np.ndarray, sign: float = 1.0) -> np.ndarray:
        """Row giving ``sign · d · (velocity of body i's material point at p)``."""
        row = np.zeros(self.ndof)
        if i >= 0:
            r = p - self.bodies[i].x
            row[6 * i:6 * i + 3] = sign * d
            row[6 * i + 3:6 * i + 6] = sign * np.cross(r, d)
        return row

    def angular_row(self, i: int, d: np.ndarray, sign: float = 1.0) -> np.ndarray:
        row = np.zeros(self.ndof)
        if i >= 0:
            row[6 * i + 3:6 * i + 6] = sign * d
        return row

    def hinge_angle(self, jt: Joint) -> float:
        """The child's angle about the hinge's Y axis from the parent, rad."""
        rel = self._frame(jt.parent)[1].T @ self._frame(jt.child)[1]
        return float(np.arctan2(rel[0, 2], rel[0, 0]))

    def joint_rows(self, jt: Joint, h: float) -> tuple[list[np.ndarray], list[float], np.ndarray | None]:
        """Constraint rows (child minus parent) with targets ``−C/h``, and the hinge's axis row."""
        xp, rp = self._frame(jt.parent)
        xc, rc = self._frame(jt.child)
        ap, ac = xp + rp @ jt.anchor_p, xc + rc @ jt.anchor_c
        rows, targets = [], []
        for d in np.eye(3):  # the anchors stay together
            rows.append(self.point_row(jt.child, ac, d) - self.point_row(jt.parent, ap, d))
            targets.append(-float(d @ (ac - ap)) / h)
        if jt.kind == "point":
            return rows, targets, None
        axis_p, axis_c = rp[:, 1], rc[:, 1]
        mis = np.cross(axis_p, axis_c)  # axis misalignment (small-angle rotation vector)
        for d in (rp[:, 0], rp[:, 2]):
            rows.append(self.angular_row(jt.child, d) - self.angular_row(jt.parent, d))
            targets.append(-float(d @ mis) / h)
        axis = self.angular_row(jt.child, axis_p) - self.angular_row(jt.parent, axis_p)
        return rows, targets, axis

    def contacts(self, in_solve: bool) -> list[Contact]:
        out = []
        for a, b, flag, friction in self.pairs:
            if flag != in_solve or not self.bodies[b].enabled or (a >= 0 and not self.bodies[a].enabled):
                continue
            out += _detect(self.bodies[a], self.bodies[b], a, b, friction)
        return out

    def contact_rows(self, c: Contact, h: float, v: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
        """Normal (then two tangents if sticking) rows of the relative velocity ``b − a``."""
        t1 = np.cross(c.normal, [0.0, 1.0, 0.0])
        if np.linalg.norm(t1) < 1e-6:
            t1 = np.cross(c.normal, [1.0, 0.0, 0.0])
        t1 /= np.linalg.norm(t1)
        dirs = [c.normal] + ([t1, np.cross(c.normal, t1)] if c.friction else [])
        a = c.a if self._movable(c.a) else -1
        rows = [self.point_row(c.b, c.point, d) - self.point_row(a, c.point, d) for d in dirs]
        vn = float(rows[0] @ v)
        push = max(c.depth - self.slop, 0.0) / h
        targets = [max(push, -self.restitution * vn if vn < 0 else 0.0)] + [0.0] * (len(dirs) - 1)
        return rows, targets

    # -- the step ------------------------------------------------------------------------------

    def step(self, h: float, secant: dict[int, float] | None = None, muscles: "MuscleSet | None" = None,
             gravity: bool = True) -> None:
        """Advance by ``h`` s. ``secant``: joint index -> target hinge velocity ``ω̃`` (rad/s) for
        the actuated hinges; with ``muscles`` the hinges get no torque and the muscles reach it."""
        secant = secant or {}
        v = self.velocity()
        if gravity:
            for k, b in enumerate(self.bodies):
                if self._movable(k):
                    v[6 * k:6 * k + 3] += h * G
        minv = self.mass_inverse()
        con_rows, con_t, act_rows, act_t = [], [], [], []
        for k, jt in enumerate(self.joints):
            rows, targets, axis = self.joint_rows(jt, h)
            con_rows += rows
            con_t += targets
            if axis is not None and jt.actuated and k in secant:
                act_rows.append(axis)
                act_t.append(secant[k])
            elif axis is not None and not jt.actuated:
                pass  # a free hinge: its axis row is neither constrained nor actuated
        mine = self.contacts(in_solve=True)
        c_rows, c_t, c_norm = [], [], []
        base = len(con_rows) + len(act_rows)
        for c in mine:
            rows, targets = self.contact_rows(c, h, v)
            first = base + len(c_rows)
            c_rows += rows
            c_t += targets
            c_norm += [first] * len(rows)
        info: dict = {"contacts_in_solve": len(mine)}
        if muscles is not None:
            j_eq = np.array(con_rows + act_rows)
            ms = muscle_solve(minv, j_eq, np.array(con_rows), muscles.columns(self),
                              np.array(con_t + act_t), v, muscles.jm_max(h))
            v = ms.v
            info.update(activation=ms.jm / muscles.jm_max(h), muscle_residual=ms.residual)
        else:
            rows = con_rows + act_rows + c_rows
            if rows:
                normal_of = np.array([-1] * base + c_norm)
                s: Solve = impulse_solve(minv, np.array(rows), np.array(con_t + act_t + c_t), v, normal_of)
                v = s.v
                info.update(contact_impulse=s.j[base:], contact_active=s.active[base:],
                            normals=np.array(c_norm, dtype=int) - base if c_norm else np.zeros(0, int))
        foreign = self.contacts(in_solve=False)
        if foreign:
            rows, targets, norm = list(con_rows), list(con_t), [-1] * len(con_rows)
            for c in foreign:
                r, t = self.contact_rows(c, h, v)
                norm += [len(rows)] * len(r)
                rows += r
                targets += t
            v = impulse_solve(minv, np.array(rows), np.array(targets), v, np.array(norm)).v
        info["foreign_contacts"] = len(foreign)
        info["penetration"] = max([c.depth for c in mine + foreign], default=0.0)
        self.last = info
        self.set_velocity(v)
        for k, b in enumerate(self.bodies):
            if self._movable(k):
                b.x = b.x + h * b.v
                wn = float(np.linalg.norm(b.w))
                if wn > 0:
                    b.R = rotation(b.w / wn, h * wn) @ b.R


def _detect(body_a: Body, body_b: Body, a: int, b: int, friction: bool) -> list[Contact]:
    """Contacts of ``body_b`` on ``body_a``: ``b``'s corners inside box ``a`` (normal: the face of
    least penetration), or a sphere (either one) on a box."""
    margin = 2e-3
    if body_b.radius is not None or body_a.radius is not None:
        sph, box, flip = (body_b, body_a, False) if body_b.radius is not None else (body_a, body_b, True)
        local = box.R.T @ (sph.x - box.x)
        near = np.clip(local, -box.half, box.half)
        d = local - near
        dist = float(np.linalg.norm(d))
        if dist > sph.radius + margin or dist < 1e-9:
            return []
        n = box.R @ (d / dist)
        p = box.x + box.R @ near
        return [Contact(a, b, p, -n if flip else n, sph.radius - dist, False)]
    out = []
    hb, ha = body_b.half, body_a.half
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                corner = body_b.x + body_b.R @ (hb * [sx, sy, sz])
                local = body_a.R.T @ (corner - body_a.x)
                pen = ha + margin - np.abs(local)  # > 0 on every axis: the corner is in (or on) the box
                if np.all(pen[:2] >= -1e-9) and pen[2] >= 0 and np.min(pen) >= 0:
                    axis = int(np.argmin(pen))
                    n = np.sign(local[axis] if local[axis] != 0 else 1.0) * body_a.R[:, axis]
                    out.append(Contact(a, b, corner, n, float(pen[axis] - margin), friction))
    return out


@dataclass(frozen=True)
class Muscle:
    """A line-segment muscle pulling ``origin`` on body ``a`` (−1: world) and ``insertion`` on
    body ``b`` towards each other (points in each body's frame, m), at most ``f_max`` N."""

    name: str
    a: int
    origin: np.ndarray
    b: int
    insertion: np.ndarray
    f_max: float


class MuscleSet:
    """The muscles of a world: their generalised impulse columns and impulse bounds."""

    def __init__(self, muscles: list[Muscle]) -> None:
        self.muscles = muscles

    def jm_max(self, h: float) -> np.ndarray:
        """Impulse bounds ``(K,)``, N·s: activation 1 for the whole step."""
        return np.array([m.f_max * h for m in self.muscles])

    def columns(self, world: World) -> np.ndarray:
        """``(6B, K)``: per unit impulse, the generalised impulse of each muscle."""
        g = np.zeros((world.ndof, len(self.muscles)))
        for k, m in enumerate(self.muscles):
            pa, pb = world._frame(m.a), world._frame(m.b)
            oa, ib = pa[0] + pa[1] @ m.origin, pb[0] + pb[1] @ m.insertion
            line = (oa - ib) / np.linalg.norm(oa - ib)  # on b, towards a
            g[:, k] = world.point_row(m.b, ib, line) - world.point_row(m.a, oa, line)
        return g

    def lengths(self, world: World) -> np.ndarray:
        out = []
        for m in self.muscles:
            pa, pb = world._frame(m.a), world._frame(m.b)
            out.append(float(np.linalg.norm(pa[0] + pa[1] @ m.origin - pb[0] - pb[1] @ m.insertion)))
        return np.array(out)
