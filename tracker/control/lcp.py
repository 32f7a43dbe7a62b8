"""A mixed linear complementarity problem (MLCP) and its projected Gauss–Seidel solve.

The virtual-trajectory paper (``virtual_trajectory_lcp`` eqs. 11–15, 24–25) solves the joint
rows of a step together with the contacts as one LCP on constraint forces ``x`` (N, N·m)::

    w = A x + b,        lo_i <= x_i <= hi_i,
    x_i = lo_i  ->  w_i >= 0,    x_i = hi_i  ->  w_i <= 0,    lo_i < x_i < hi_i  ->  w_i = 0

A free row (``lo = −inf``, ``hi = inf``) is an equality ``w_i = 0``; a contact normal row
(``lo = 0``, ``hi = inf``) is the complementarity ``w >= 0, x >= 0, w·x = 0`` of eq. 15; a
friction row has ``|x_i| <= mu_i · x_{n(i)}``, bounds that follow the normal force of row
``n(i)`` (``normal_of[i] >= 0``). With fixed bounds and a symmetric positive semi-definite
``A`` the problem is the optimality condition of the bound-constrained QP
``min ½ xᵀA x + bᵀx, lo <= x <= hi`` (checked against scipy's in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


#: Polish a Gauss–Seidel answer whose :func:`complementarity_error` exceeds this (m/s, rad/s). Where
#: friction makes the solution not unique, Gauss–Seidel warm-started from the last step picks the
#: one that continues it (as the engine's own solver does); the polish is for its slow cases.
POLISH_ABOVE = 1e-6
#: Gauss–Seidel sweeps before the first polish.
QUICK_SWEEPS = 20


@dataclass(frozen=True)
class MLCPSolution:
    """What :func:`solve_mlcp` found.

    Attributes:
        x: the forces ``(r,)``.
        w: ``A x + b`` ``(r,)``.
        iterations: Gauss–Seidel sweeps taken.
        error: :func:`complementarity_error` of ``x`` (bounds from the final normal forces).
        problem: ``(A, b, lo, hi, normal_of, mu)`` as solved (for checks against other solvers).
    """

    x: np.ndarray
    w: np.ndarray
    iterations: int
    error: float
    problem: tuple = ()


def bounds(lo: np.ndarray, hi: np.ndarray, x: np.ndarray, normal_of: np.ndarray | None,
           mu: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The bounds ``(lo, hi)`` ``(r,)`` with each friction row's set to ``∓ mu · x_normal``."""
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    if normal_of is not None:
        fr = np.flatnonzero(np.asarray(normal_of) >= 0)
        lim = np.asarray(mu, dtype=float)[fr] * np.maximum(x[np.asarray(normal_of)[fr]], 0.0)
        lo[fr], hi[fr] = -lim, lim
    return lo, hi


def complementarity_error(a: np.ndarray, b: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                          normal_of: np.ndarray | None = None, mu: np.ndarray | None = None) -> float:
    """The largest violation of the MLCP's conditions by ``x``, in the units of ``w`` (m/s, rad/s).

    Per row: a bound violated (scaled by ``A_ii`` into ``w``'s units), or ``w`` of the wrong sign
    for where ``x`` sits (``min(w, 0)`` at the lower bound, ``max(w, 0)`` at the upper, ``|w|``
    between them), whichever is the larger.
    """
    lo, hi = bounds(lo, hi, x, normal_of, mu)
    w = a @ x + b
    d = np.maximum(np.diag(a), 1e-300)
    out = np.maximum(np.maximum(lo - x, x - hi), 0.0) * d  # outside the bounds
    tol = 1e-12 * (1.0 + np.abs(x))
    at_lo = np.isfinite(lo) & (x <= lo + tol)
    at_hi = np.isfinite(hi) & (x >= hi - tol) & ~at_lo
    inner = ~at_lo & ~at_hi
    res = np.where(at_lo, np.maximum(-w, 0.0), 0.0)
    res = np.where(at_hi, np.maximum(w, 0.0), res)
    res = np.where(inner, np.abs(w), res)
    both = at_lo & np.isfinite(hi) & (hi - lo <= tol)  # a zero-width box (no normal force): any w
    res = np.where(both, 0.0, res)
    return float(np.max(np.maximum(out, res), initial=0.0))


def solve_mlcp(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, *,
               normal_of: np.ndarray | None = None, mu: np.ndarray | None = None,
               x0: np.ndarray | None = None, max_iterations: int = 300, tol: float = 1e-10,
               polish: bool = True) -> MLCPSolution:
    """Projected Gauss–Seidel on ``w = A x + b`` with the bounds above, then an active-set polish.

    Gauss–Seidel converges slowly where a light body sits between a velocity-constrained one and
    a heavy one (the small box between the hand and the large box: about ``m_L/(m_L + m_s)`` per
    sweep), so its answer is polished by a primal–dual active-set iteration
    (:func:`_active_set`): guess from it which rows sit at a bound, solve the linear system that
    guess makes, guess again, until the guess repeats; the polished ``x`` is kept if its
    :func:`complementarity_error` is smaller.

    Args:
        a: ``(r, r)``, positive diagonal (the rows' inverse effective masses, times h).
        b: ``(r,)``.
        lo, hi: the rows' bounds ``(r,)`` (``±inf`` allowed); ignored for friction rows.
        normal_of: per row the index of the normal row whose force bounds it (``-1``: none).
        mu: friction coefficients ``(r,)`` (used where ``normal_of >= 0``).
        x0: warm start ``(r,)``.
        max_iterations: sweeps at most.
        tol: stop when a sweep changes no ``x_i`` by more than ``tol · (1 + max |x|)``.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    lo_f, hi_f = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    r = b.shape[0]
    nof = np.full(r, -1) if normal_of is None else np.asarray(normal_of)
    muv = np.zeros(r) if mu is None else np.asarray(mu, dtype=float)
    x = np.zeros(r) if x0 is None else np.array(x0, dtype=float)
    done = 0
    err = np.inf
    # A few sweeps, then the polish; the full sweeps only where that did not settle it.
    for sweeps in (min(QUICK_SWEEPS, max_iterations), max_iterations - min(QUICK_SWEEPS, max_iterations)):
        if sweeps <= 0:
            break
        x, k = _gauss_seidel(a, b, x, lo_f, hi_f, nof, muv, sweeps, tol)
        done += k
        err = complementarity_error(a, b, x, lo_f, hi_f, nof, muv)
        if polish and err > POLISH_ABOVE:
            xp = _active_set(a, b, x, lo_f, hi_f, nof, muv)
            if xp is not None:
                err_p = complementarity_error(a, b, xp, lo_f, hi_f, nof, muv)
                if err_p < err:
                    x, err = xp, err_p
        if err <= POLISH_ABOVE or k < sweeps:
            break
    return MLCPSolution(x=x, w=a @ x + b, iterations=done, error=err, problem=(a, b, lo_f, hi_f, nof, muv))


def _gauss_seidel(a: np.ndarray, b: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, nof: np.ndarray,
                  mu: np.ndarray, sweeps: int, tol: float) -> tuple[np.ndarray, int]:
    """Up to ``sweeps`` projected Gauss–Seidel sweeps from ``x``; returns ``x`` and the sweeps taken."""
    r = b.shape[0]
    # Python lists: a sweep over a few dozen rows is faster as scalar arithmetic than as numpy calls.
    rows = a.tolist()
    inv_d = (1.0 / np.diag(a)).tolist()
    bl, lol, hil, nl, ml = b.tolist(), lo.tolist(), hi.tolist(), nof.tolist(), mu.tolist()
    xl = x.tolist()
    k = 0
    for k in range(1, sweeps + 1):
        change = 0.0
        for i in range(r):
            row = rows[i]
            w = bl[i]
            for j in range(r):
                w += row[j] * xl[j]
            new = xl[i] - w * inv_d[i]
            if nl[i] >= 0:
                lim = ml[i] * max(xl[nl[i]], 0.0)
                new = min(max(new, -lim), lim)
            else:
                new = min(max(new, lol[i]), hil[i])
            change = max(change, abs(new - xl[i]))
            xl[i] = new
        if change <= tol * (1.0 + max(map(abs, xl), default=0.0)):
            break
    return np.array(xl), k


def _active_set(a: np.ndarray, b: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                nof: np.ndarray, mu: np.ndarray, max_rounds: int = 30) -> np.ndarray | None:
    """Primal–dual active set from ``x``: each row is free (``w_i = 0``) or at a bound
    (``x_i = lo_i``, ``hi_i``, or ``±mu_i x_normal`` for friction); None if a system is singular."""
    r = b.shape[0]
    d = np.diag(a)
    fr = nof >= 0
    seen = set()
    for _ in range(max_rounds):
        w = a @ x + b
        y = x - w / d  # where a Gauss–Seidel update would put each row
        lo_i, hi_i = bounds(lo, hi, x, nof, mu)
        state = np.where(y <= lo_i, -1, np.where(y >= hi_i, 1, 0))
        state[fr & (hi_i - lo_i <= 0)] = 2  # friction without normal force: x_i = 0
        key = state.tobytes()
        if key in seen:
            break
        seen.add(key)
        m = np.zeros((r, r))
        rhs = np.zeros(r)
        for i in range(r):
            if state[i] == 0:
                m[i], rhs[i] = a[i], -b[i]
            elif state[i] == 2:
                m[i, i] = 1.0
            elif fr[i]:  # x_i = ±mu x_n
                m[i, i], m[i, nof[i]] = 1.0, -state[i] * mu[i]
            else:
                m[i, i], rhs[i] = 1.0, (lo[i] if state[i] < 0 else hi[i])
        try:
            x = np.linalg.solve(m, rhs)
        except np.linalg.LinAlgError:
            return None
    return x if np.all(np.isfinite(x)) else None
