"""Weinstein, Teran & Fedkiw 2008 §V-VI: global post-stabilisation as one impulse solve.

Pure numpy/scipy, no simulator. Velocities are the maximal-coordinate vector ``v`` ``(6B,)``
(per body ``[v (3) m/s, ω (3) rad/s]``, world frame) and ``Minv`` its ``(6B, 6B)`` inverse
mass. Each constraint, actuation or contact is a row of ``J`` ``(R, 6B)`` (a relative velocity
along one direction) with a target value ``u`` ``(R,)``. Impulses ``j`` act along the same rows,
``v⁺ = v + Minv Jᵀ j``, so the system is the paper's ``A j = Δu`` with ``A = J Minv Jᵀ``
(its blocks are the paper's ``Σ_b K_b(i, k)``) and ``Δu = u − J v``.

``A`` may be singular (a block resting on four corners has 12 contact rows and 6 DOFs;
closed loops), so :func:`pivoted_solve` is the paper's QR with column pivoting, keeping the
minimal-norm impulse and the least-squares residual on the dependent rows. Contacts in the
same solve are unilateral: :func:`impulse_solve` drops contacts whose normal impulse comes
out negative and solves again (an active set). :func:`muscle_solve` is §VI: muscles act only
along their lines, with impulses in ``[0, j_max]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr

#: Relative tolerance on ``|R_ii| / |R_00|`` below which a pivot counts as zero (the paper's ε).
RANK_RTOL = 1e-10


def pivoted_solve(a: np.ndarray, b: np.ndarray, rtol: float = RANK_RTOL) -> np.ndarray:
    """Solve ``a x = b`` (``a`` square ``(n, n)``, possibly singular) as in the paper's §V.

    ``a P = Q R`` with column pivoting, ``R = [[B, S], [0, ε]]``; ``x_S`` minimises
    ``‖Z x_S + b̂‖² + ‖ε x_S − b_ε‖²`` with ``Z = [−B⁻¹S; I]``, ``b̂ = [B⁻¹ b_B; 0]``
    (normal equations ``(ZᵀZ + εᵀε) x_S = −Zᵀb̂ + εᵀb_ε``), then ``x_B = B⁻¹(b_B − S x_S)``.
    For a consistent singular system this is the minimal-norm solution; for an inconsistent
    one the dependent rows are met in the least-squares sense.

    Returns:
        ``x`` ``(n,)``.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = a.shape[1]
    if n == 0:
        return np.zeros(0)
    q, r, piv = qr(a, pivoting=True)
    d = np.abs(np.diag(r))
    rank = int(np.sum(d > rtol * max(d[0], 1e-300))) if d.size else 0
    bq = q.T @ b
    bb, sm, eps = r[:rank, :rank], r[:rank, rank:], r[rank:, rank:]
    b_b, b_e = bq[:rank], bq[rank:]
    binv_s = np.linalg.solve(bb, sm) if rank else np.zeros((0, n))
    binv_b = np.linalg.solve(bb, b_b) if rank else np.zeros(0)
    if rank < n:
        z = np.vstack([-binv_s, np.eye(n - rank)])
        bhat = np.concatenate([binv_b, np.zeros(n - rank)])
        lhs = z.T @ z + eps.T @ eps
        xs = np.linalg.solve(lhs, -z.T @ bhat + eps.T @ b_e)
    else:
        xs = np.zeros(0)
    xb = binv_b - binv_s @ xs
    x = np.empty(n)
    x[piv] = np.concatenate([xb, xs])
    return x


@dataclass(frozen=True)
class Solve:
    """One post-stabilisation: impulses ``j`` ``(R,)`` (N·s; 0 on dropped rows), the new velocity
    ``v`` ``(6B,)``, which rows stayed active ``(R,)`` bool, and active-set passes."""

    j: np.ndarray
    v: np.ndarray
    active: np.ndarray
    passes: int


def impulse_solve(minv: np.ndarray, jac: np.ndarray, target: np.ndarray, v: np.ndarray,
                  normal_of: np.ndarray | None = None, max_passes: int = 20) -> Solve:
    """Impulses along the rows of ``jac`` ``(R, 6B)`` that bring ``jac v⁺`` to ``target`` ``(R,)``.

    Args:
        minv: ``(6B, 6B)`` inverse mass.
        jac: constraint, actuation and contact rows.
        target: desired relative velocities, m/s or rad/s.
        v: ``(6B,)`` velocity before the impulses.
        normal_of: ``(R,)`` int: for a contact row, the index of its contact's normal row (the
            normal row points to itself); ``-1`` for bilateral rows. A contact whose normal
            impulse is negative is dropped (all its rows) and the system solved again.
    """
    r = jac.shape[0]
    active = np.ones(r, dtype=bool)
    normal_of = np.full(r, -1) if normal_of is None else np.asarray(normal_of)
    for passes in range(1, max_passes + 1):
        jj = jac[active]
        a = jj @ minv @ jj.T
        x = pivoted_solve(a, target[active] - jj @ v)
        j = np.zeros(r)
        j[active] = x
        normals = np.flatnonzero(active & (normal_of == np.arange(r)) & (j < -1e-12))
        if normals.size == 0:
            break
        worst = normals[np.argmin(j[normals])]  # drop the most negative contact, then re-solve
        active &= normal_of != worst
    return Solve(j, v + minv @ jac.T @ j, active, passes)


@dataclass(frozen=True)
class MuscleSolve:
    """§VI's solve: constraint impulses ``j`` ``(C,)``, muscle impulses ``jm`` ``(K,)`` (N·s, in
    ``[0, j_max]``), the new velocity ``(6B,)`` and the residual of the reduced system ``Â jm = b̂``
    (0 when the target motion is achievable)."""

    j: np.ndarray
    jm: np.ndarray
    v: np.ndarray
    residual: float


def muscle_solve(minv: np.ndarray, j_eq: np.ndarray, j_con: np.ndarray, g: np.ndarray, target: np.ndarray,
                 v: np.ndarray, jm_max: np.ndarray) -> MuscleSolve:
    """Muscle impulses (paper eqs. 2-3) that reach ``target`` on the rows ``j_eq`` ``(E, 6B)``.

    ``[A1 A2] (j, jm) = Δu`` with ``A1 = J_eq Minv J_conᵀ`` (tall: the constraint rows ``j_con``
    ``(C, 6B)`` carry impulses, the actuated rows of ``j_eq`` only targets) and ``A2 = J_eq Minv G``
    (``g`` ``(6B, K)``: column k is muscle k's generalised impulse per N·s along its line).
    Multiplying by ``Z`` (rows spanning the left null space of ``A1``) leaves ``Â jm = b̂``.
    Phase 1 finds the achievable motion closest to the target within the bounds
    (``scipy.optimize.lsq_linear``); phase 2 the smallest impulses that achieve it (SLSQP with
    the equality and the bounds, then a projection onto the equality on the free muscles).
    """
    from scipy.optimize import lsq_linear, minimize

    du = target - j_eq @ v
    a1 = j_eq @ minv @ j_con.T
    a2 = j_eq @ minv @ g
    q, r, _ = qr(a1, pivoting=True)
    d = np.abs(np.diag(r))
    rank = int(np.sum(d > RANK_RTOL * max(d[0], 1e-300))) if d.size else 0
    z = q[:, rank:].T
    ahat, bhat = z @ a2, z @ du
    lo, hi = np.zeros(len(jm_max)), np.asarray(jm_max, dtype=float)
    first = lsq_linear(ahat, bhat, bounds=(lo, hi), method="bvls", tol=1e-14)
    reach = ahat @ first.x  # the achievable motion closest to the target
    scale = max(float(np.max(hi)), 1e-12)
    res = minimize(lambda x: 0.5 * x @ x, first.x / scale, jac=lambda x: x, method="SLSQP",
                   bounds=list(zip(lo / scale, hi / scale)),
                   constraints=[{"type": "eq", "fun": lambda x: ahat @ x - reach / scale, "jac": lambda x: ahat}],
                   options={"ftol": 1e-14, "maxiter": 200})
    jm = np.clip(res.x * scale if res.success else first.x, lo, hi)
    free = (jm > lo + 1e-12 * scale) & (jm < hi - 1e-12 * scale)
    if free.any():  # polish: meet the equality to round-off on the muscles not at a bound
        step = np.linalg.lstsq(ahat[:, free], reach - ahat @ jm, rcond=None)[0]
        trial = jm.copy()
        trial[free] += step
        if np.all(trial >= lo) and np.all(trial <= hi):
            jm = trial
    j = pivoted_solve(a1.T @ a1, a1.T @ (du - a2 @ jm)) if j_con.shape[0] else np.zeros(0)
    v_new = v + minv @ (j_con.T @ j + g @ jm)
    return MuscleSolve(j, jm, v_new, float(np.linalg.norm(ahat @ jm - bhat)))
