"""Tinkertoy (Tan, Liu & Turk 2011 §4.3): SPD as a stable penalty method for constraints.

A small particle simulator, pure numpy. Particle A (green in Fig. 7) is held
on a polyline curve, particle B (purple) hangs from A by a massless rod of
length ``r0``; the only forces are gravity and the two constraint forces.

Particle on a curve (paper eq. 12-13): predict ``q̃ = qⁿ + h q̇ⁿ``, find the
nearest point ``q̄`` of the polyline to ``q̃``, ``d = (q̃ − q̄)/|q̃ − q̄|``::

    (M + k_d h d dᵀ [+ k_p h² d dᵀ]) q̈ = −k_p (q̃ − q̄) − k_d d dᵀ q̇ⁿ + M g

Distance constraint (eq. 14-16, re-derived with ``D̃ = [I, −I]``):
``p̃ = D̃ (qⁿ + h q̇ⁿ)``, ``d = p̃/|p̃|``, ``J = dᵀ D̃`` ``(1, 6)``::

    (M + k_d h Jᵀ J [+ k_p h² Jᵀ J]) q̈ = −k_p (|p̃| − r0) Jᵀ − k_d Jᵀ J q̇ⁿ + M g

Both constraints go into one ``6 x 6`` solve. The bracketed ``k_p h²`` terms
are the ``semi_implicit`` prediction (consistent with symplectic Euler, as in
:mod:`tracker.control.spd`); ``explicit`` is the paper's. ``penalty`` is the
plain penalty method the paper starts from: the same springs and dampers
evaluated at the current state, no prediction and no implicit term.

Integrators: ``explicit`` Euler (``q' = q + h q̇``, ``q̇' = q̇ + h q̈``) and
``symplectic`` Euler (``q̇'`` first, then ``q' = q + h q̇'``).

The paper gives no time step, masses, helix size or rod length; ours
(:func:`paper_helix`): radius 1 m, pitch 0.6 m per turn, 3 turns, 1 kg
particles, ``r0 = 0.5`` m, B hanging at rest below A at the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tracker.arrays import frozen

GRAVITY = np.array([0.0, 0.0, -9.81])
Method = Literal["explicit", "semi_implicit", "penalty"]
Integrator = Literal["explicit", "symplectic"]
METHODS: tuple[str, ...] = ("explicit", "semi_implicit", "penalty")
INTEGRATORS: tuple[str, ...] = ("explicit", "symplectic")
#: A run counts as diverged once a constraint error exceeds this, m.
DIVERGED_M = 10.0


@dataclass(frozen=True, eq=False)
class Polyline:
    """A piecewise-linear curve through ``points (N+1, 3)`` m (``N`` segments)."""

    points: np.ndarray

    def __post_init__(self) -> None:
        pts = np.asarray(self.points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) < 2:
            raise ValueError(f"a polyline needs (N+1, 3) points, got {pts.shape}")
        object.__setattr__(self, "points", frozen(pts))
        seg = pts[1:] - pts[:-1]
        object.__setattr__(self, "_a", frozen(pts[:-1]))
        object.__setattr__(self, "_seg", frozen(seg))
        object.__setattr__(self, "_len2", frozen(np.einsum("ij,ij->i", seg, seg)))

    @property
    def n_segments(self) -> int:
        return len(self.points) - 1

    def nearest(self, x: np.ndarray) -> np.ndarray:
        """The point of the curve nearest to ``x (3,)``, ``(3,)``."""
        s = np.clip(np.einsum("ij,ij->i", x - self._a, self._seg) / self._len2, 0.0, 1.0)
        c = self._a + s[:, None] * self._seg
        return c[np.argmin(((c - x) ** 2).sum(axis=1))]

    def distance(self, x: np.ndarray) -> float:
        """Distance from ``x (3,)`` to the curve, m."""
        return float(np.linalg.norm(x - self.nearest(x)))


def helix(segments: int, radius: float = 1.0, pitch: float = 0.6, turns: float = 3.0,
          top: float = 2.0) -> Polyline:
    """A helix about Z descending from ``(radius, 0, top)``, as ``segments`` straight pieces."""
    th = np.linspace(0.0, 2 * np.pi * turns, segments + 1)
    return Polyline(np.stack([radius * np.cos(th), radius * np.sin(th), top - pitch * th / (2 * np.pi)], axis=1))


def helical_valley(segments: int, radius: float = 1.0, turns: float = 3.0, depth: float = 1.8,
                   top: float = 2.0) -> Polyline:
    """The same 3 turns, but with a height that is a parabola of the turn angle (lowest at the middle
    turn, ``depth`` m below the ends): a bead released near one end swings back and forth through the
    turns for ever, so long runs keep the constraints under load (the paper's helix is slid down in
    about 6 s)."""
    th = np.linspace(0.0, 2 * np.pi * turns, segments + 1)
    u = th / th[-1] * 2.0 - 1.0
    return Polyline(np.stack([radius * np.cos(th), radius * np.sin(th), top - depth + depth * u * u], axis=1))


@dataclass(frozen=True)
class Tinkertoy:
    """The scene: a curve, the rod length and the masses.

    Attributes:
        curve: the polyline A is held on.
        r0: rod length between A and B, m.
        mass_a, mass_b: kg.
    """

    curve: Polyline
    r0: float = 0.5
    mass_a: float = 1.0
    mass_b: float = 1.0

    def start(self, s: float = 0.02) -> tuple[np.ndarray, np.ndarray]:
        """A at fraction ``s`` along the curve's points, B hanging ``r0`` below it, both at rest:
        ``(q (6,), v (6,))``."""
        a = self.curve.points[int(round(s * self.curve.n_segments))]
        return np.concatenate([a, a - [0.0, 0.0, self.r0]]), np.zeros(6)


@dataclass(frozen=True, eq=False)
class Run:
    """A simulated run.

    Attributes:
        t: time after each step ``(N,)`` s.
        q: positions ``(N, 6)``: A then B, m.
        curve_error: distance of A to the curve after each step ``(N,)`` m.
        rod_error: ``| |A − B| − r0 |`` after each step ``(N,)`` m.
        diverged: whether the run stopped early (non-finite state or an error above 10 m).
    """

    t: np.ndarray
    q: np.ndarray
    curve_error: np.ndarray
    rod_error: np.ndarray
    diverged: bool

    def window_max(self, t0: float, t1: float) -> float:
        """Largest of both errors for steps with ``t0 < t <= t1``, m."""
        sel = (self.t > t0) & (self.t <= t1)
        if not sel.any():
            return float("nan")
        return float(max(self.curve_error[sel].max(), self.rod_error[sel].max()))


def accelerations(scene: Tinkertoy, q: np.ndarray, v: np.ndarray, h: float, kp: float, kd: float,
                  method: Method) -> np.ndarray:
    """``q̈ (6,)`` with both constraint forces (see the module docstring)."""
    m = np.repeat([scene.mass_a, scene.mass_b], 3)
    pred = q + h * v if method != "penalty" else q
    # Particle on the curve.
    qa = pred[0:3]
    gap = qa - scene.curve.nearest(qa)
    e_c = float(np.linalg.norm(gap))
    jc = np.zeros(6)
    if e_c > 0:
        jc[0:3] = gap / e_c
    # Rod.
    p = pred[0:3] - pred[3:6]
    length = float(np.linalg.norm(p))
    jd = np.zeros(6)
    if length > 0:
        jd[0:3] = p / length
        jd[3:6] = -p / length
    e_d = length - scene.r0
    rhs = m * np.tile(GRAVITY, 2) - kp * (e_c * jc + e_d * jd) - kd * (jc * (jc @ v) + jd * (jd @ v))
    if method == "penalty":
        return rhs / m
    implicit = kd * h + (kp * h * h if method == "semi_implicit" else 0.0)
    a_mat = np.diag(m) + implicit * (np.outer(jc, jc) + np.outer(jd, jd))
    return np.linalg.solve(a_mat, rhs)


def simulate(scene: Tinkertoy, dt: float, duration: float, *, kp: float = 1e6, kd_ratio: float = 1.5,
             method: Method = "explicit", integrator: Integrator = "explicit",
             start: tuple[np.ndarray, np.ndarray] | None = None) -> Run:
    """Simulate ``duration`` s at time step ``dt`` with ``k_d = kd_ratio · k_p · dt`` (paper: 1.5)."""
    if method not in METHODS:
        raise ValueError(f"method {method!r} is not one of: {', '.join(METHODS)}")
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator {integrator!r} is not one of: {', '.join(INTEGRATORS)}")
    q, v = start if start is not None else scene.start()
    q, v = q.astype(float).copy(), v.astype(float).copy()
    kd = kd_ratio * kp * dt
    n = int(round(duration / dt))
    ts, qs, ec, ed = [], [], [], []
    diverged = False
    for k in range(n):
        a = accelerations(scene, q, v, dt, kp, kd, method)
        if integrator == "explicit":
            q, v = q + dt * v, v + dt * a
        else:
            v = v + dt * a
            q = q + dt * v
        e_c = scene.curve.distance(q[0:3]) if np.isfinite(q).all() else np.inf
        e_d = abs(float(np.linalg.norm(q[0:3] - q[3:6])) - scene.r0) if np.isfinite(q).all() else np.inf
        if not (e_c < DIVERGED_M and e_d < DIVERGED_M):
            diverged = True
            break
        ts.append((k + 1) * dt)
        qs.append(q.copy())
        ec.append(e_c)
        ed.append(e_d)
    return Run(frozen(np.array(ts)), frozen(np.array(qs).reshape(-1, 6)), frozen(np.array(ec)),
               frozen(np.array(ed)), diverged)


def paper_helix(segments: int = 2400) -> Tinkertoy:
    """The paper's scene with our sizes: the helix of ``segments`` pieces, 1 kg particles, 0.5 m rod."""
    return Tinkertoy(helix(segments))


def valley(segments: int = 2400) -> Tinkertoy:
    """The long-run scene: :func:`helical_valley`, same particles and rod."""
    return Tinkertoy(helical_valley(segments))
