"""Allen et al. 2007's paper law past the last key, and the tension experiment (pure numpy).

* :func:`held_past_key`: the paper's explicit law (``law="paper"``) on one hinge with its exact
  inertia or on the planar two-link arm, driven to a key and then held there: with ``t̂`` floored
  at one or two steps the error grows without bound; the ``"stable"`` hold of
  :mod:`tracker.control.timed_pd` stays bounded.
* :func:`tension_response`: the arm holds a pose given as a clip (keys ``lookahead`` ahead,
  §5.3), is hit (a joint-velocity jump, i.e. an angular impulse) and answers with tension ``d``
  (§5.3.1): aim at the clip at ``t_c + d``.
"""

from __future__ import annotations

import math

import numpy as np

from tracker.character.inertia import JointInertia
from tracker.character.layout import Layout
from tracker.control.base import Gains, State, Target
from tracker.control.timed_pd import Keyframes, TimedPDController
from tracker.sim.pendulum import PendulumParams, TwoLinkPendulum

#: The planar arm of CONTROLLERS.md §4: uniform rods 0.3 m / 2 kg and 0.3 m / 1.5 kg, no gravity.
ARM = PendulumParams.uniform_rods(2.0, 1.5, 0.3, 0.3, g=0.0)
ARM_KEY = (1.0, 1.0)  # rad
ARM_T = 0.5  # s
#: How long the key is held after its time in :func:`held_past_key`, s.
HOLD_FOR = 0.5
#: Past-the-key rules compared: label -> timed_pd options.
HOLD_RULES = (
    ("t̂ floored at 1 step (paper as written)", {"hold": "floor", "min_steps": 1}),
    ("t̂ floored at 2 steps (design note)", {"hold": "floor", "min_steps": 2}),
    ("t̂ floored at 3 steps", {"hold": "floor", "min_steps": 3}),
    ("stable hold (t̂ = 10 steps), min_steps 1", {"hold": "stable", "min_steps": 1}),
    ("stable hold (t̂ = 10 steps), min_steps 2", {"hold": "stable", "min_steps": 2}),
)


class UnitInertia:
    """One hinge with a constant moment of inertia ``m`` (kg·m²), no gravity: the 1-DOF test bed."""

    def __init__(self, m: float = 1.0) -> None:
        self.m = float(m)
        self.layout = Layout.build([("hinge", "revolute")], has_base=False)

    def joint_inertia(self, q: np.ndarray) -> JointInertia:
        m = np.array([self.m])
        return JointInertia(m, np.zeros((1, 3)), np.array([[0.0, 1.0, 0.0]]), m, np.zeros((1, 3)))

    def parent_compensation(self, tau: np.ndarray, inertia: JointInertia) -> np.ndarray:
        return np.array(tau, dtype=float)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return np.array([[self.m]])

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.zeros(1)

    def step(self, q, v, tau, dt):
        v = v + np.asarray(tau) / self.m * dt
        return q + v * dt, v


def system(name: str):
    """``"hinge"`` (:class:`UnitInertia`) or ``"arm"`` (the two-link arm)."""
    return UnitInertia() if name == "hinge" else TwoLinkPendulum(ARM)


def held_past_key(name: str, dt: float, hold_for: float = HOLD_FOR, **options) -> dict:
    """Drive ``system(name)`` from rest at 0 to its key (1 rad on each joint; 0.3 s for the hinge,
    0.5 s for the arm) with the paper's law and ``options``, then keep going ``hold_for`` s.

    Returns ``{"at_key", "max_after", "end"}``: the largest joint error (rad) at the key, over the
    hold and at its end (``inf`` once it overflowed).
    """
    sys_ = system(name)
    lay = sys_.layout
    key_q = np.ones(lay.nq)
    t_key = 0.3 if name == "hinge" else ARM_T
    keys = Keyframes(key_q[None, :], np.zeros((1, lay.nv)), np.array([t_key]))
    ctrl = TimedPDController(lay, sys_, keys=keys, law="paper", **options)
    q, v = np.zeros(lay.nq), np.zeros(lay.nv)
    gains = Gains(np.zeros(lay.nv), np.zeros(lay.nv))
    n_key, out = int(round(t_key / dt)), {"at_key": math.nan, "max_after": 0.0, "end": math.nan}
    with np.errstate(all="ignore"):
        for n in range(int(round((t_key + hold_for) / dt))):
            tau = ctrl.torques(State(q, v), Target(q, v, t=(n + 1) * dt), gains, dt)
            q, v = sys_.step(q, v, tau, dt)
            err = float(np.abs(q - key_q).max())
            if not math.isfinite(err) or err > 1e300:
                out["max_after"] = out["end"] = math.inf
                break
            if n + 1 == n_key:
                out["at_key"] = err
            elif n + 1 > n_key:
                out["max_after"], out["end"] = max(out["max_after"], err), err
    return out


def arm_inertia_ratio(q2: float = 1.0) -> float:
    """Largest eigenvalue of ``D^½ M⁻¹ D^½`` (``D = diag M``) of the arm at elbow angle ``q2``: how far
    per-joint (composite) inertia can overestimate the inertia a coupled mode moves with."""
    m = TwoLinkPendulum(ARM).mass_matrix(np.array([0.0, q2]))
    d = np.sqrt(np.diag(m))
    return float(np.linalg.eigvalsh(d[:, None] * np.linalg.inv(m) * d[None, :]).max())


def hold_bound_steps(r: float, n: float = math.log(10.0)) -> float:
    """Least ``t̂`` (steps) for which the explicit critically damped law is stable when the inertia
    used is ``r`` times the true one: ``4 − k_s h²/m − 2 k_d h/m > 0`` with ``k_d h/m = 2nr/s``,
    ``k_s h²/m = n²r/s²``, i.e. ``s > (n r/2)(1 + √(1 + 1/r))``."""
    return n * r / 2.0 * (1.0 + math.sqrt(1.0 + 1.0 / r))


class Pose:
    """The arm's clip for the tension experiment: a held pose ``(0.5, 0.8)`` rad, at rest."""

    q = np.array([0.5, 0.8])

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        return self.q.copy(), np.zeros(2)


#: The hit: at ``HIT_T`` s the arm's joint velocities jump by ``HIT_DV`` rad/s.
HIT_T, HIT_DV = 1.0, (-4.0, 6.0)
TENSIONS = (0.1, 0.2, 0.4, 0.8)  # s
TENSION_DT, TENSION_LOOKAHEAD, TENSION_RUN = 1e-3, 0.05, 2.5  # s


def _swing_run(tension: float | None, hit: bool, dt: float = TENSION_DT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t (N,), q (N, 2), tau (N, 2))`` of the arm holding :class:`Pose` with the paper's law."""
    arm, ref = TwoLinkPendulum(ARM), Pose()
    ctrl = TimedPDController(arm.layout, arm, reference=ref, lookahead=TENSION_LOOKAHEAD, tension=tension,
                             law="paper")
    q, v = ref.sample(0.0)
    gains = Gains(np.zeros(2), np.zeros(2))
    ts, qs, taus = [], [], []
    for n in range(int(round(TENSION_RUN / dt))):
        t = n * dt
        if hit and abs(t - HIT_T) < dt / 2:
            v = v + np.array(HIT_DV)
            ctrl.on_impact(t)
        tau = ctrl.torques(State(q, v), Target(q, v, t=t + dt), gains, dt)
        q, v = arm.step(q, v, tau, dt)
        ts.append(t + dt)
        qs.append(q)
        taus.append(tau)
    return np.array(ts), np.array(qs), np.array(taus)


def tension_response(tensions=TENSIONS) -> dict:
    """The arm's answer to :data:`HIT_DV` at :data:`HIT_T` for each tension ``d`` (s).

    Per ``d`` (``None``: no tension, the clip's keys ``lookahead`` ahead throughout): ``peak`` the
    largest deviation from the pose after the hit (rad, max over joints), ``at_d`` that deviation
    at ``t_c + d``, ``settle`` when it last exceeds 1 % of the peak (s after the hit), ``impulse``
    the reaction's angular impulse ``∫ Σ|τ|`` over the first 0.05 s (N·m·s), ``tau_peak`` the
    largest torque after the hit (N·m), and ``t``/``dev`` for the figure.
    """
    out = {}
    for d in (None, *tensions):
        t, q, tau = _swing_run(d, hit=True)
        dev = np.abs(q - Pose.q).max(axis=1)
        after = t > HIT_T + 1e-9
        peak = float(dev[after].max())
        big = np.flatnonzero(after & (dev > 0.01 * peak))
        first = after & (t <= HIT_T + 0.05 + 1e-9)
        at_d = None if d is None else float(dev[int(np.argmin(np.abs(t - (HIT_T + d))))])
        out[d] = {"peak": peak, "at_d": at_d, "settle": float(t[big[-1]] - HIT_T),
                  "impulse": float(np.abs(tau[first]).sum() * TENSION_DT),
                  "tau_peak": float(np.abs(tau[after]).max()), "t": t, "dev": dev}
    return out


def monotone(values) -> bool:
    """Strictly increasing."""
    v = list(values)
    return all(b > a for a, b in zip(v, v[1:]))
