"""Contact constraints in SPD's prediction: the rows (:class:`Contacts`) and the solve that holds them.

:func:`solve_constrained` solves ``A a = rhs`` with the contact rows held (``J a = target``), the
unilateral ones only while they push (an active set over compiled Cholesky solves);
:mod:`tracker.control.balance` builds the rows from the ground contacts, :mod:`tracker.control.spd`
uses the solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracker.arrays import frozen
from tracker.character.rigid_body import _jit


@dataclass(frozen=True)
class Contacts:
    """Contact constraints for SPD's prediction (:func:`solve_constrained`): the stance feet's, and
    the other links' that touch the ground (:func:`contact_rows`).

    Attributes:
        jac: ``(k, nv)`` rows: each contact point's velocity along the contact normal (the stance
            soles': vertical; they may slide or spin in the prediction: holding that too closes the
            loop between the two legs, whose stiff servos then fight through it; measured, it halves
            the survived push).
        unilateral: ``(k,)`` True on the contact-normal rows (the ground only pushes).
        group: ``(k,)`` the foot (index into the support's feet, ``>= 0``) of a stance row; a
            negative number of its own for each other contact point.
        target: ``(k,)`` m/s², the acceleration ``J a`` a held row must have, or None for 0 (a
            resting contact: the stance feet). Another link's contact is held at the velocity level
            (:func:`contact_rows`): an approaching hand is stopped within the step.
    """

    jac: np.ndarray
    unilateral: np.ndarray
    group: np.ndarray
    target: np.ndarray | None = None

    def equalities(self) -> "Contacts":
        """The same rows held as equalities (none dropped: a fixed contact set)."""
        return Contacts(self.jac, frozen(np.zeros(len(self.jac)), np.bool_), self.group, self.target)

    def rows(self, keep: np.ndarray) -> "Contacts":
        """The rows where ``keep`` ``(k,)`` bool is True (a new object)."""
        return Contacts(np.ascontiguousarray(self.jac[keep]), frozen(self.unilateral[keep], np.bool_),
                        frozen(self.group[keep], np.int64), None if self.target is None else frozen(self.target[keep]))

    def __add__(self, other: "Contacts | None") -> "Contacts":
        """These rows and ``other``'s, in one set (``other`` None: these)."""
        if other is None:
            return self
        if self.target is None and other.target is None:
            target = None
        else:
            target = frozen(np.concatenate([_zeros(len(self.jac)) if self.target is None else self.target,
                                            _zeros(len(other.jac)) if other.target is None else other.target]))
        return Contacts(np.ascontiguousarray(np.vstack([self.jac, other.jac])),
                        frozen(np.concatenate([self.unilateral, other.unilateral]), np.bool_),
                        frozen(np.concatenate([self.group, other.group]), np.int64), target)


_ONES = np.ones(64, dtype=bool)
_ONES.setflags(write=False)
_ZEROS = np.zeros(64)
_ZEROS.setflags(write=False)


def _zeros(n: int) -> np.ndarray:
    """A read-only float ``(n,)`` of zeros (resting contacts' targets)."""
    return _ZEROS[:n] if n <= len(_ZEROS) else frozen(np.zeros(n), float)


def _ones(n: int) -> np.ndarray:
    """A read-only boolean ``(n,)`` of True (contact-normal rows are all unilateral)."""
    return _ONES[:n] if n <= len(_ONES) else np.ones(n, dtype=bool)


def solve_constrained(a_mat: np.ndarray, rhs: np.ndarray, jac: "np.ndarray | Contacts", unilateral=None,
                      group: np.ndarray | None = None, max_iter: int = 8, held: bool = False):
    """``a`` with ``A a = rhs + Jᵀ λ`` and ``J a = t`` on the active rows (``A`` SPD ``(n, n)``, ``J`` ``(k, n)``,
    ``t`` the rows' ``target``, 0 unless a :class:`Contacts` says otherwise).

    The Schur complement with one Cholesky factorisation: ``λ = (J A⁻¹ Jᵀ)⁻¹ (t − J A⁻¹ rhs)`` (with a
    tiny ridge, so dependent rows, e.g. four coplanar contact normals, are fine). Rows marked
    ``unilateral`` (contact normals) may only push, ``λ >= 0``: the most negative is dropped and
    the solve repeated (an active set); when a group (a foot) has no unilateral row left, its
    other rows are dropped too. A foot left on an edge or a corner stays held there: it pivots
    about it (the rule of :data:`PLANTED_AREA` is about the engine's contacts, not these: letting such
    a foot go threw the free-root forearm pass over). Compiled
    (it runs every step).

    Returns:
        ``(a, info)``; ``info != 0``: ``A`` is not positive definite. With ``held``: ``(a, info, rows)``,
        ``rows`` ``(k,)`` bool the rows the solution holds (:func:`held_contacts`).
    """
    if isinstance(jac, Contacts):  # built by BalanceFeedback or contact_rows: already the kernel's types
        goal = _zeros(len(jac.jac)) if jac.target is None else jac.target
        jac, uni, grp = jac.jac, jac.unilateral, jac.group
    else:
        k = jac.shape[0]
        jac = np.ascontiguousarray(jac, dtype=float)
        # read-only, as BalanceFeedback's (numba compiles one signature per array mutability)
        uni = frozen(np.zeros(k) if unilateral is None else unilateral, np.bool_)
        grp = frozen(np.zeros(k) if group is None else group, np.int64)
        goal = _zeros(k)
    try:
        a, rows = _solve_constrained(np.ascontiguousarray(a_mat, dtype=float), np.ascontiguousarray(rhs, dtype=float),
                                     jac, uni, grp, goal, int(max_iter))
        info = 0
    except np.linalg.LinAlgError:  # A is not positive definite
        a, rows, info = np.asarray(rhs, dtype=float), np.zeros(len(uni), dtype=np.bool_), 1
    return (a, info, rows) if held else (a, info)


def held_contacts(contacts: Contacts, rows: np.ndarray) -> Contacts | None:
    """The rows ``rows`` ``(k,)`` bool of ``contacts`` (those a solve held), or None when there are none."""
    if not rows.any():
        return None
    if rows.all():
        return contacts
    return contacts.rows(rows)


@_jit
def _cholesky(a):
    """Lower Cholesky factor of SPD ``a`` (None-free: returns ``(l, ok)``)."""
    n = a.shape[0]
    l = np.zeros((n, n))
    for j in range(n):
        s = a[j, j]
        for p in range(j):
            s -= l[j, p] * l[j, p]
        if not s > 0.0:
            return l, False
        d = np.sqrt(s)
        l[j, j] = d
        for i in range(j + 1, n):
            t = a[i, j]
            for p in range(j):
                t -= l[i, p] * l[j, p]
            l[i, j] = t / d
    return l, True


@_jit
def _chol_solve(l, b):
    """``(L Lᵀ)⁻¹ b`` for ``b`` ``(n, m)``."""
    n, m = b.shape
    y = b.copy()
    for c in range(m):
        for i in range(n):
            t = y[i, c]
            for p in range(i):
                t -= l[i, p] * y[p, c]
            y[i, c] = t / l[i, i]
        for i in range(n - 1, -1, -1):
            t = y[i, c]
            for p in range(i + 1, n):
                t -= l[p, i] * y[p, c]
            y[i, c] = t / l[i, i]
    return y


@_jit
def _solve_constrained(a_mat, rhs, jac, uni, group, goal, max_iter):
    """The kernel of :func:`solve_constrained`. With ``A = L Lᵀ`` (LAPACK's Cholesky) and
    ``W = L⁻¹ [rhs | Jᵀ]`` (one forward substitution for all ``k + 1`` columns), the Schur
    complement is ``J A⁻¹ Jᵀ = W_Jᵀ W_J`` and ``J A⁻¹ rhs = W_Jᵀ w_0``; then one backward
    substitution gives ``a = L⁻ᵀ (w_0 + W_J λ)``: one factorisation, as SPD's own solve.
    ``goal`` ``(k,)``: the rows' targets ``t`` (``J a = t``)."""
    n, k = a_mat.shape[0], jac.shape[0]
    l = np.linalg.cholesky(a_mat)  # raises LinAlgError when A is not positive definite
    w = np.empty((n, k + 1))
    for i in range(n):
        w[i, 0] = rhs[i]
        for j in range(k):
            w[i, 1 + j] = jac[j, i]
    for i in range(n):  # forward substitution, row by row (W's rows are contiguous)
        for p in range(i):
            lip = l[i, p]
            for c in range(k + 1):
                w[i, c] -= lip * w[p, c]
        d = l[i, i]
        for c in range(k + 1):
            w[i, c] /= d
    full = np.zeros((k, k))  # J A⁻¹ Jᵀ
    target = goal.copy()  # t − J A⁻¹ rhs
    for r in range(n):
        for i in range(k):
            wi = w[r, 1 + i]
            target[i] -= wi * w[r, 0]
            for j in range(k):
                full[i, j] += wi * w[r, 1 + j]
    lam, ok, active = _active_set(full, target, uni, group, max_iter)
    z = np.empty(n)
    for r in range(n):
        t = w[r, 0]
        if ok:
            for j in range(k):
                t += w[r, 1 + j] * lam[j]
        z[r] = t
    for i in range(n - 1, -1, -1):  # backward substitution with Lᵀ
        t = z[i]
        for p in range(i + 1, n):
            t -= l[p, i] * z[p]
        z[i] = t / l[i, i]
    if not ok:
        active[:] = False
    return z, active


@_jit
def _active_set(full, target, uni, group, max_iter):
    """``(λ (k,), ok, active (k,))`` with ``(J A⁻¹ Jᵀ) λ = −J A⁻¹ rhs`` on the active rows and ``λ >= 0`` on the
    unilateral ones (see :func:`solve_constrained`); ``ok`` False: degenerate contacts (predict
    without them)."""
    k = full.shape[0]
    active = np.ones(k, dtype=np.bool_)
    lam = np.zeros(k)
    for _ in range(max(max_iter, k + 1)):  # each pass drops a row or ends
        idx = np.flatnonzero(active)
        m = idx.shape[0]
        lam[:] = 0.0
        if m == 0:
            break
        s = np.empty((m, m))
        tr = 0.0
        for i in range(m):
            for j in range(m):
                s[i, j] = full[idx[i], idx[j]]
            tr += s[i, i]
        ridge = 1e-10 * max(tr / m, 1e-300)
        for i in range(m):
            s[i, i] += ridge
        ls, ok2 = _cholesky(s)
        if not ok2:
            return lam, False, active
        rb = np.empty((m, 1))
        for i in range(m):
            rb[i, 0] = target[idx[i]]
        x = _chol_solve(ls, rb)
        worst, wval = -1, 0.0
        for i in range(m):
            lam[idx[i]] = x[i, 0]
            if uni[idx[i]] and x[i, 0] < wval:
                worst, wval = idx[i], x[i, 0]
        if worst < 0:
            break
        active[worst] = False
        g = group[worst]
        left = False
        for i in range(k):
            if active[i] and uni[i] and group[i] == g:
                left = True
        if not left:
            for i in range(k):
                if group[i] == g:
                    active[i] = False
    else:
        for i in range(k):
            if not active[i]:
                lam[i] = 0.0
    return lam, True, active
