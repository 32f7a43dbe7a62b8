"""Closed-form solution of the 1-DOF PD error equation ``Ë + k_v Ė + k_p E = 0``.

``k_p`` (1/s²) and ``k_v`` (1/s) are *acceleration* gains (Weinstein, Teran &
Fedkiw 2008 §III: ``k_p = k1/m``, ``k_v = k2/m`` with ``m`` a generalized
moment of inertia). The solution is linear in the initial error, so it is the
2×2 transition ``[E(t), Ė(t)] = Φ(t) [E(0), Ė(0)]``. With ``α = k_v/2`` and
``σ² = α² − k_p`` (the discriminant over four), one formula covers the three
damping regimes::

    E(t) = e^{−αt} [E₀ C(t) + (Ė₀ + α E₀) S(t)]
    Ė(t) = e^{−αt} [Ė₀ (C(t) − α S(t)) − k_p E₀ S(t)]

    over-damped  (σ² > 0, σ = √σ²):  C = cosh σt,  S = sinh(σt)/σ
    critical     (σ² = 0):           C = 1,        S = t
    under-damped (σ² < 0, ω = √−σ²): C = cos ωt,   S = sin(ωt)/ω

This is the paper's pair of formulas (critical: ``E = (c₁ + c₂t) e^{−√k_p t}``
with ``c₁ = E₀``, ``c₂ = Ė₀ + √k_p E₀``; over-damped: ``E = c₁e^{r₁t} +
c₂e^{r₂t}`` with ``c₁ = (r₂E₀ − Ė₀)/(r₂ − r₁)``, ``c₂ = (Ė₀ − r₁E₀)/(r₂ −
r₁)``) written so that it stays accurate as ``σ → 0`` (a series for ``C`` and
``S`` when ``|σ²| t² < 1e-6``), so there is no tolerance to choose for
"critical". :func:`paper_form` keeps the paper's formulas as a test oracle.

All functions broadcast over numpy arrays (one entry per DOF), and also accept
complex ``t`` (the tests check the ODE by complex-step differentiation).
"""

from __future__ import annotations

import numpy as np

#: Time from rest to 10 % error under critical damping, in units of ``1/√k_p``:
#: the root of ``(1 + x) e^{−x} = 0.1``.
T10_CRITICAL = 3.889720169867429


def critical_kv(kp: np.ndarray | float, zeta: float = 1.0) -> np.ndarray:
    """Velocity gain ``k_v = 2ζ√k_p`` (``ζ = 1``: critical damping)."""
    return 2.0 * zeta * np.sqrt(np.asarray(kp, dtype=float))


def _c_s(kp, kv, t):
    """``(α, C(t), S(t))`` of the unified form, broadcast over ``kp``, ``kv``, ``t``."""
    kp = np.asarray(kp, dtype=float)
    alpha = 0.5 * np.asarray(kv, dtype=float)
    sig2 = alpha * alpha - kp
    t = np.asarray(t)
    x2 = sig2 * t * t  # σ²t², signed; the regime is its sign
    ax = np.sqrt(np.abs(x2.real) if np.iscomplexobj(x2) else np.abs(x2))
    small = ax < 1e-3  # |σ²t²| < 1e-6: the series below is exact to ~1e-19
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        s_abs = np.sqrt(np.abs(sig2))
        st = s_abs * t
        over_c, over_s = np.cosh(st), np.sinh(st) / np.where(s_abs > 0, s_abs, 1.0)
        under_c, under_s = np.cos(st), np.sin(st) / np.where(s_abs > 0, s_abs, 1.0)
    series_c = 1.0 + x2 / 2.0 + x2 * x2 / 24.0
    series_s = t * (1.0 + x2 / 6.0 + x2 * x2 / 120.0)
    c = np.where(small, series_c, np.where(sig2 > 0, over_c, under_c))
    s = np.where(small, series_s, np.where(sig2 > 0, over_s, under_s))
    return alpha, c, s


def transition(kp, kv, t) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The transition ``Φ(t)`` as four arrays ``(a, b, c, d)``.

    ``E(t) = a E₀ + b Ė₀`` and ``Ė(t) = c E₀ + d Ė₀``. Broadcasts over
    ``kp`` (1/s², ≥ 0), ``kv`` (1/s, ≥ 0) and ``t`` (s).
    """
    alpha, c_t, s_t = _c_s(kp, kv, t)
    decay = np.exp(-alpha * np.asarray(t))
    kp = np.asarray(kp, dtype=float)
    a = decay * (c_t + alpha * s_t)
    b = decay * s_t
    c = -kp * decay * s_t
    d = decay * (c_t - alpha * s_t)
    return a, b, c, d


def solve(e0, de0, kp, kv, t) -> tuple[np.ndarray, np.ndarray]:
    """``(E(t), Ė(t))`` from ``E(0) = e0``, ``Ė(0) = de0``; broadcasts."""
    a, b, c, d = transition(kp, kv, t)
    return a * e0 + b * de0, c * e0 + d * de0


def regime(kp: float, kv: float) -> str:
    """``"over"``, ``"critical"`` or ``"under"`` (exact comparison of ``k_v²`` with ``4k_p``)."""
    disc = kv * kv - 4.0 * kp
    return "over" if disc > 0 else ("critical" if disc == 0 else "under")


def paper_form(e0: float, de0: float, kp: float, kv: float, t):
    """The paper's formulas, regime by regime (a test oracle; scalar gains).

    Critical: ``E = (c₁ + c₂t)e^{−√k_p t}``; over-damped: two exponentials;
    under-damped: ``e^{−αt}(c₁ cos ωt + c₂ sin ωt)``. Returns ``(E(t), Ė(t))``.
    """
    t = np.asarray(t)
    kind = regime(kp, kv)
    if kind == "critical":
        r = -np.sqrt(kp)
        c1, c2 = e0, de0 - r * e0
        ex = np.exp(r * t)
        return (c1 + c2 * t) * ex, (r * (c1 + c2 * t) + c2) * ex
    if kind == "over":
        root = np.sqrt(kv * kv - 4.0 * kp)
        r1, r2 = (-kv + root) / 2.0, (-kv - root) / 2.0
        c1 = (r2 * e0 - de0) / (r2 - r1)
        c2 = (de0 - r1 * e0) / (r2 - r1)
        return c1 * np.exp(r1 * t) + c2 * np.exp(r2 * t), r1 * c1 * np.exp(r1 * t) + r2 * c2 * np.exp(r2 * t)
    alpha, w = kv / 2.0, np.sqrt(4.0 * kp - kv * kv) / 2.0
    c1, c2 = e0, (de0 + alpha * e0) / w
    ex = np.exp(-alpha * t)
    e = ex * (c1 * np.cos(w * t) + c2 * np.sin(w * t))
    de = -alpha * e + ex * w * (-c1 * np.sin(w * t) + c2 * np.cos(w * t))
    return e, de


def time_to_fraction(kp: float, kv: float, fraction: float = 0.1, *, e0: float = 1.0, de0: float = 0.0,
                     t_max: float | None = None) -> float:
    """First time ``|E(t)| <= fraction·|E₀|``, by bisection on a fine grid (s).

    Args:
        kp, kv: acceleration gains.
        fraction: the error fraction to reach (0.1: 10 %).
        e0, de0: initial error and rate (default: at rest).
        t_max: search horizon (default ``40/√k_p``).
    """
    t_max = 40.0 / np.sqrt(kp) if t_max is None else t_max
    grid = np.linspace(0.0, t_max, 20001)
    e, _ = solve(e0, de0, kp, kv, grid)
    hit = np.nonzero(np.abs(e) <= fraction * abs(e0))[0]
    if not hit.size:
        return float("inf")
    lo, hi = grid[max(hit[0] - 1, 0)], grid[hit[0]]
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if abs(solve(e0, de0, kp, kv, mid)[0]) <= fraction * abs(e0):
            hi = mid
        else:
            lo = mid
    return float(hi)
