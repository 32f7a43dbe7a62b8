"""The virtual-trajectory steps solved with the contacts, as the paper does (one MLCP per step).

A :class:`ContactProblem` is the world one step ahead as seen by the engine adapter (the desk
scene's :class:`tracker.scenes.desk_contacts.DeskContacts`): generalized velocities of the
character (its ``nv`` DOFs first) and of the bodies it may push, their mass matrix, the forces
acting without the control, and the contact rows. With ``h`` the step, ``M`` the mass matrix and
``J`` all rows (eqs. 11–13, 21–23)::

    A = J M⁻¹ Jᵀ h,    b = J (v + M⁻¹ f h) − w_target

Step 1 (eq. 20): the actuated DOFs' rows ``S`` are equalities ``S v⁺ = w0``; their forces are the
feed-forward ``f0``; the velocities are not kept. Step 2 (eqs. 18–19, 24–25): the same rows
become the PD with offset ``f0``::

    λ_s = K (q̄ₙ₊₁ ⊖ qₙ − h·w_s) + D (w0 − w_s) + f0   <=>   w_s = (K h + D)⁻¹ (r − λ_s)

with ``r = K (q̄ₙ₊₁ ⊖ qₙ) + D w0 + f0``: a free row with ``(K h + D)⁻¹`` added to ``A``'s diagonal
and ``−(K h + D)⁻¹ r`` to ``b``. The torque applied is ``λ_s``, solved together with the
contacts. Without contact rows step 2 is the project's semi-implicit SPD plus ``f0`` (the same
linear system; ``tests/control/test_vt_lcp.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracker.control.lcp import MLCPSolution, solve_mlcp

#: :attr:`ContactProblem.kind` values.
CHARACTER, BETWEEN, SUPPORT = 0, 1, 2
#: Relative compliance added to each contact row's diagonal.
CFM = 1e-6


@dataclass(frozen=True)
class ContactProblem:
    """The world one step ahead, in the generalized velocities of the character and the bodies nearby.

    Attributes:
        mass: ``(n, n)`` mass matrix, the character's ``nv`` DOFs first (kg, kg m²).
        force: ``(n,)`` generalized force without the control (−bias on the character), N, N·m.
        v: ``(n,)`` velocities now.
        jac: ``(r, n)`` contact rows (normal, tangent, support friction).
        lo, hi: ``(r,)`` force bounds (friction rows: from ``normal_of`` and ``mu``).
        normal_of: ``(r,)`` the normal row bounding a friction row, ``-1`` for none.
        mu: ``(r,)`` friction coefficients.
        w_target: ``(r,)`` the rows' velocity offset (a gap to close, a penetration to push out), m/s.
        kind: ``(r,)`` int, what the row is between: :data:`CHARACTER` (the character and a body or
            the world), :data:`BETWEEN` (two bodies other than the character), :data:`SUPPORT` (one body
            and the static world, e.g. a box's friction with the desk).
        gap: ``(r,)`` a normal row's distance (m, negative: overlap), nan on other rows.
        nv: the character's DOFs.
    """

    mass: np.ndarray
    force: np.ndarray
    v: np.ndarray
    jac: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    normal_of: np.ndarray
    mu: np.ndarray
    w_target: np.ndarray
    kind: np.ndarray
    gap: np.ndarray
    nv: int

    def only_character(self) -> "ContactProblem":
        """The character's own contacts and the support of the bodies it touches; contacts between
        two other bodies (the small box against the large one) left out."""
        own = self.kind == CHARACTER
        touched = np.any(self.jac[own][:, self.nv:] != 0.0, axis=0)
        keep = own | ((self.kind == SUPPORT) & np.any((self.jac[:, self.nv:] != 0.0) & touched, axis=1))
        index = np.cumsum(keep) - 1
        nof = self.normal_of[keep]
        nof = np.where(nof >= 0, index[np.maximum(nof, 0)], -1)
        return ContactProblem(self.mass, self.force, self.v, self.jac[keep], self.lo[keep], self.hi[keep],
                              nof, self.mu[keep], self.w_target[keep], self.kind[keep], self.gap[keep],
                              self.nv)


@dataclass(frozen=True)
class VTStep:
    """One step's solves.

    Attributes:
        f0: step 1's feed-forward ``(nv,)``; tau: step 2's torque ``(nv,)``.
        step1, step2: the two MLCP solutions (joint rows first).
        v_next: step 2's predicted velocities ``(n,)``.
    """

    f0: np.ndarray
    tau: np.ndarray
    step1: MLCPSolution
    step2: MLCPSolution
    v_next: np.ndarray


def _system(p: ContactProblem, active: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``A``, ``b`` (without targets) and ``J`` for the joint rows ``active`` then the contact rows."""
    n = p.mass.shape[0]
    s = np.zeros((active.size, n))
    s[np.arange(active.size), active] = 1.0
    jac = np.vstack([s, p.jac])
    m_inv_jt = np.linalg.solve(p.mass, jac.T)
    a = jac @ m_inv_jt * h
    # Two points of one face between the same bodies make dependent rows; a compliance of
    # CFM (relative to the row's own diagonal) keeps the system regular.
    k = active.size
    idx = np.arange(k, a.shape[0])
    a[idx, idx] *= 1.0 + CFM
    v_free = p.v + np.linalg.solve(p.mass, p.force) * h
    return a, jac @ v_free, jac


def _limits(p: ContactProblem, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    lo = np.r_[np.full(k, -np.inf), p.lo]
    hi = np.r_[np.full(k, np.inf), p.hi]
    nof = np.r_[np.full(k, -1), np.where(p.normal_of >= 0, p.normal_of + k, -1)]
    mu = np.r_[np.zeros(k), p.mu]
    return lo, hi, nof, mu


def vt_step(p: ContactProblem, active: np.ndarray, w0: np.ndarray, e: np.ndarray, kp: np.ndarray,
            kd: np.ndarray, h: float, step1: ContactProblem | None = None,
            warm: tuple[np.ndarray | None, np.ndarray | None] = (None, None)) -> VTStep:
    """Step 1 and step 2 with the contacts.

    Args:
        p: the world (step 2 always sees all of it).
        active: indices of the actuated DOFs (the rows ``S``).
        w0: desired velocity ``(nv,)`` at ``t_{n+1}``.
        e: ``q̄ₙ₊₁ ⊖ qₙ`` ``(nv,)``.
        kp, kd: gains ``(nv,)``.
        h: the step, s.
        step1: the world step 1 sees (default ``p``; ``p.only_character()``: its own contacts).
        warm: previous forces of the two solves, for a warm start (used if the row counts agree).
    """
    q1 = step1 if step1 is not None else p
    k = active.size
    a, b, _ = _system(q1, active, h)
    b = b - np.r_[w0[active], q1.w_target]
    lo, hi, nof, mu = _limits(q1, k)
    x0 = warm[0] if warm[0] is not None and warm[0].shape == b.shape else None
    s1 = solve_mlcp(a, b, lo, hi, normal_of=nof, mu=mu, x0=x0)
    f0 = np.zeros(p.nv)
    f0[active] = s1.x[:k]

    a, b, jac = _system(p, active, h)
    c = 1.0 / (kp[active] * h + kd[active])
    r = kp[active] * e[active] + kd[active] * w0[active] + f0[active]
    a[np.arange(k), np.arange(k)] += c
    b = b - np.r_[c * r, p.w_target]
    lo, hi, nof, mu = _limits(p, k)
    x0 = warm[1] if warm[1] is not None and warm[1].shape == b.shape else None
    s2 = solve_mlcp(a, b, lo, hi, normal_of=nof, mu=mu, x0=x0)
    tau = np.zeros(p.nv)
    tau[active] = s2.x[:k]
    v_next = p.v + np.linalg.solve(p.mass, p.force + jac.T @ s2.x) * h
    return VTStep(f0=f0, tau=tau, step1=s1, step2=s2, v_next=v_next)


def contact_step(p: ContactProblem, tau: np.ndarray, h: float, warm: np.ndarray | None = None
                 ) -> tuple[np.ndarray, MLCPSolution]:
    """The world's next velocities ``(n,)`` under the character's torque ``tau`` ``(nv,)``, contacts solved
    (the simulation step of the other controllers, eqs. 11–15), and the contact solve."""
    force = p.force.copy()
    force[:p.nv] += tau
    q = ContactProblem(p.mass, force, p.v, p.jac, p.lo, p.hi, p.normal_of, p.mu, p.w_target, p.kind, p.gap, p.nv)
    none = np.zeros(0, dtype=int)
    a, b, jac = _system(q, none, h)
    b = b - q.w_target
    lo, hi, nof, mu = _limits(q, 0)
    x0 = warm if warm is not None and warm.shape == b.shape else None
    sol = solve_mlcp(a, b, lo, hi, normal_of=nof, mu=mu, x0=x0)
    return q.v + np.linalg.solve(q.mass, q.force + jac.T @ sol.x) * h, sol
