"""One degree of freedom, in numpy: the 1-DOF experiments of Weinstein, Teran & Fedkiw 2008.

Everything uses the integrator PyBullet uses (and the paper's method of its
ref. [20]): ``ω^{n+1} = ω^n + h α^n``, ``θ^{n+1} = θ^n + h ω^{n+1}``.

* :func:`analytic_pd_run`: the paper's secant method on a unit inertia with a
  target at rest at 0: ``θ^{n+1} = E(h)`` from the closed form, ``ω^{n+1} =
  (E(h) − θ^n)/h``, with plain or doubled gains (§III, Figs. 2-4).
* :func:`pd_run`: explicit PD, ``α = −k_p θ − k_v ω``, in the same integrator
  (or forward Euler).
* :func:`gravity_joint_run`: a joint holding a 1 kg point mass on a 1 m
  massless rod (``I = 1 kg·m²``) horizontal under gravity (Figs. 5-6): PD with
  torque gains ``k1``, ``k2 = 2√(k1 I)`` sags to ``k1 e = m g l cos e``;
  analytic PD (``k_p = k1/I``) with ``τ = I(ω̃ − ω)/h + m g l cos θ`` reaches
  the target.
"""

from __future__ import annotations

import numpy as np

from tracker.control import closed_form as cf

G = 9.81


def analytic_pd_run(kp: float, kv: float, h: float, duration: float, *, doubled: bool = True, e0: float = 1.0,
                    de0: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Secant analytic PD toward 0 on a unit inertia: ``(t, θ, ω)`` at ``t_n = n h`` (``n = 0..N``)."""
    n = int(round(duration / h))
    s = 2.0 if doubled else 1.0
    a, b, _, _ = cf.transition(s * kp, s * kv, h)
    th, om = np.empty(n + 1), np.empty(n + 1)
    th[0], om[0] = e0, de0
    for k in range(n):
        e_h = a * th[k] + b * om[k]
        om[k + 1] = (e_h - th[k]) / h
        th[k + 1] = th[k] + h * om[k + 1]
    return np.arange(n + 1) * h, th, om


def pd_run(kp: float, kv: float, h: float, duration: float, *, e0: float = 1.0, de0: float = 0.0,
           integrator: str = "symplectic") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Explicit PD toward 0 on a unit inertia: ``(t, θ, ω)``; ``integrator`` symplectic or forward Euler."""
    n = int(round(duration / h))
    th, om = np.empty(n + 1), np.empty(n + 1)
    th[0], om[0] = e0, de0
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(n):
            acc = -kp * th[k] - kv * om[k]
            om[k + 1] = om[k] + h * acc
            th[k + 1] = th[k] + h * (om[k + 1] if integrator == "symplectic" else om[k])
    return np.arange(n + 1) * h, th, om


def convergence(kp: float, kv: float, steps: list[float], duration: float, *, doubled: bool) -> list[float]:
    """Max error of :func:`analytic_pd_run` against the exact PD solution it converges to.

    Plain gains converge to PD with ``(k_p/2, k_v/2)``, doubled ones to ``(k_p, k_v)``
    (the paper's Fig. 3); one max-norm error per step size.
    """
    s = 1.0 if doubled else 0.5
    out = []
    for h in steps:
        t, th, _ = analytic_pd_run(kp, kv, h, duration, doubled=doubled)
        exact, _ = cf.solve(1.0, 0.0, s * kp, s * kv, t)
        out.append(float(np.max(np.abs(th - exact))))
    return out


def gravity_joint_run(method: str, k1: float, h: float, duration: float, *, mass: float = 1.0,
                      length: float = 1.0, theta0: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A joint holding ``mass`` at ``length`` (point mass, ``I = m l²``) toward θ = 0 (horizontal).

    Args:
        method: ``"pd"`` (torque PD, ``k2 = 2√(k1 I)``) or ``"analytic"`` (analytic PD, doubled gains,
            ``k_p = k1/I``, inverse dynamics with gravity).
        k1: stiffness, N·m/rad.
        h: time step, s.
        duration: s.
        theta0: initial angle, rad (0: start at the target).

    Returns:
        ``(t, θ)``; θ < 0 is below the horizontal.
    """
    inertia = mass * length * length
    n = int(round(duration / h))
    th, om = np.empty(n + 1), 0.0
    th[0] = theta0
    kp = k1 / inertia
    kv = float(cf.critical_kv(kp))
    a, b, _, _ = cf.transition(2 * kp, 2 * kv, h)
    for k in range(n):
        grav = mass * G * length * np.cos(th[k])  # torque needed to hold the mass: c(θ)
        if method == "pd":
            tau = -k1 * th[k] - kv * inertia * om
        elif method == "analytic":
            e_h = a * th[k] + b * om
            w = (e_h - th[k]) / h
            tau = inertia * (w - om) / h + grav
        else:
            raise ValueError(f"method {method!r} is not pd or analytic")
        om = om + h * (tau - grav) / inertia
        th[k + 1] = th[k] + h * om
    return np.arange(n + 1) * h, th


def pd_sag(k1: float, mass: float = 1.0, length: float = 1.0) -> float:
    """PD's equilibrium sag ``e`` (rad, > 0 below the target): ``k1 e = m g l cos e``."""
    e = 0.0
    for _ in range(60):
        e = mass * G * length * np.cos(e) / k1
    return float(e)
