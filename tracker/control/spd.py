"""Stable PD (SPD) servo of Tan, Liu & Turk 2011 in generalized coordinates.

SPD evaluates the PD law at the *next* state, predicted to first order, and
solves for the acceleration that this force produces (paper eq. 2-5, 9-11).
With state ``(q, v)``, target ``(q̄, v̄)`` at ``t_{n+1}``, diagonal ``Kp``,
``Kd``, mass matrix ``M(q)`` and bias forces ``c(q, v)``:

``explicit`` prediction (the paper's, consistent with explicit Euler
``q' = q ⊕ v·dt``, ``v' = v + a·dt``)::

    p_err = q̄ ⊖ (q ⊕ v·dt)
    (M + Kd·dt) a = Kp·p_err + Kd·(v̄ − v) − c
    tau = Kp·p_err + Kd·(v̄ − v − a·dt)

``semi_implicit`` prediction (consistent with PyBullet's symplectic Euler
``v' = v + a·dt``, ``q' = q ⊕ v'·dt``, so ``q' ≈ (q ⊕ v·dt) ⊕ a·dt²``)::

    (M + Kd·dt + Kp·dt²) a = Kp·p_err + Kd·(v̄ − v) − c
    tau = Kp·(p_err − a·dt²) + Kd·(v̄ − v − a·dt)

Why the default is ``semi_implicit``: under symplectic Euler the explicit
prediction with ``kd = kp·dt`` is only stable while ``kp·dt²/m < 4`` (1-DOF
analysis; on the two-link pendulum it diverges from ``kp = 3000`` at 1/60 s),
whereas the semi-implicit one is implicit Euler on the servo spring and stays
stable at any gain (``tracker reproduce tan2011``, "SPD prediction vs
integrator"). Under explicit Euler both are stable.

Physics substeps. When PyBullet takes ``N`` steps of ``h = dt/N`` under one
control update (``sim.substeps``), constant forces give ``v' = v + a·dt`` and
``q' = (q ⊕ v·dt) ⊕ a·dt²·(N+1)/(2N)``, so the semi-implicit term is
``Kp·dt²·(N+1)/(2N)`` (``substeps`` argument; ``N = 1`` is the formula above).

Torque limits. Clipping ``tau`` after the solve is not enough: the solve
assumed every DOF gets its implicit damping ``D = Kd·dt [+ Kp·dt²]``, so the
acceleration it predicted for the *other* DOFs counts on the clipped DOF
following its servo. It does not, and with stiff gains (``k_t = 25000`` per kg
puts ``kp`` of the lower spine near 10⁶ N·m/rad, against a 300 N·m limit) the
unclipped DOFs then push on a body that moves otherwise than predicted: an
explicit coupling, which diverges at small time steps on real clips. So the
limited torques solve SPD's equation with the clip inside it: each DOF's torque
is its implicit servo force at the predicted next state, clipped,

    tau_i = clip(f_i − D_i·a_i, ±tau_max_i)     with  M a + c = tau

(``f = Kp·p_err + Kd·v_err``, ``D = Kd·dt [+ Kp·dt²]``). The map
``a -> M a + c − clip(f − D a)`` is the gradient of a strictly convex function,
so the solution is unique; it is found by an active set (semi-smooth Newton):
with ``S`` the saturated DOFs and ``F`` the others,

    (M + D_F) a = [f_F; tau_S] − c          D_F: D on F, 0 on S
    tau_F = f_F − D_F·a_F

then DOFs of ``F`` beyond their limit join ``S``, and DOFs of ``S`` whose servo
force is back within the limit leave it, until nothing changes (two or three
passes in practice). The unsaturated DOFs thus stay implicit and consistent
with what the clipped ones really do, and ``M a + c = tau`` holds exactly.
With contact ``constraints`` (balance's stance feet, other links on the ground) the
contact rows the unlimited solve held are kept as equalities while the limits are
solved; if the limited torques then need a held row to pull, the contacts are
chosen again among those rows and the limits solved again (the rows only ever get
fewer, so this ends): one contact set and one limit set that agree
(:attr:`SPDController.held`).

Passive DOFs (e.g. a free root) get ``Kp = Kd = 0`` and hence zero force, but
their inertia still takes part in the solve. ``M + diag(D)`` is symmetric
positive definite, so every solve is a Cholesky factorisation.

The right-hand side is built in one place (:meth:`SPDController.servo_force`
and :meth:`SPDController.torques`): a further term (e.g. balance feedback)
adds to ``f`` before the solve.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.linalg.lapack import dposv as _posv

from tracker.character.layout import Layout
from tracker.control.base import (
    Dynamics,
    Gains,
    State,
    Target,
    TargetVelocity,
    actuation_mask,
    check_target_velocity,
)
from tracker.control.lie import StepError
from tracker.control.registry import register
from tracker.errors import ConfigError, SimulationError

#: Which integrator the next-state prediction assumes.
Prediction = Literal["explicit", "semi_implicit"]
PREDICTIONS: tuple[str, ...] = ("explicit", "semi_implicit")


@register("spd")
class SPDController:
    """Stable PD with the full joint-space mass matrix (Tan et al. 2011, eq. 11).

    Args:
        layout: the q/v layout (Lie-group ``integrate``/``difference``).
        dynamics: any object with ``mass_matrix(q)`` and ``bias_forces(q, v)``
            in the layout's ``v`` order (:class:`tracker.control.base.Dynamics`).
        target_velocity: ``"ref"`` (paper's eq. 5) or ``"zero"`` (eq. 2).
        prediction: ``"semi_implicit"`` (default; adds the ``Kp·dt²`` term and
            matches PyBullet's integrator) or ``"explicit"`` (the paper's, for
            explicit Euler).
        passive: DOFs that get no servo force (bool ``(nv,)`` mask or indices).
        substeps: physics steps per control step (module docstring).
    """

    name = "spd"

    def __init__(
        self,
        layout: Layout,
        dynamics: Dynamics,
        *,
        target_velocity: TargetVelocity = "ref",
        prediction: Prediction = "semi_implicit",
        passive: np.ndarray | None = None,
        substeps: int = 1,
    ) -> None:
        if prediction not in PREDICTIONS:
            raise ConfigError(
                f"SPD prediction {prediction!r} is not one of: {', '.join(PREDICTIONS)}"
            )
        self.layout = layout
        self._step_error = StepError(layout)
        self.dynamics = dynamics
        self.target_velocity = check_target_velocity(target_velocity)
        self.prediction = prediction
        if isinstance(substeps, bool) or not isinstance(substeps, int) or substeps < 1:
            raise ConfigError(f"SPD substeps must be a whole number >= 1, got {substeps!r}")
        self.substeps = substeps
        self._position_factor = (substeps + 1) / (2 * substeps)  # q' = ... ⊕ a·dt²·factor
        self.mask = actuation_mask(layout.nv, passive)
        self._all_active = bool(self.mask.all())
        self._diag = np.arange(layout.nv) * (layout.nv + 1)  # flat indices of the diagonal
        #: DOF indices whose torque sat at its limit in the last :meth:`torques` call.
        self.saturated: np.ndarray = _NONE
        #: The constraint rows (:class:`tracker.control.contact_solve.Contacts`) the last call's prediction held
        #: (None: none, or no constraints given).
        self.held = None
        #: ``(nv,)`` the acceleration the last call predicted for the torques it returned (None before a call).
        self.acceleration: np.ndarray | None = None
        self._terms = _GainTerms()

    def torques(self, state: State, target: Target, gains: Gains, dt: float,
                extra: np.ndarray | None = None, constraints: np.ndarray | None = None) -> np.ndarray:
        """SPD generalized forces ``(nv,)`` for the step ``t_n -> t_n + dt``.

        ``extra`` ``(nv,)`` is a generalized force added to the servo's (e.g. balance feedback,
        :mod:`tracker.control.balance`): it enters the right-hand side of the implicit solve, so the
        predicted acceleration, and with it the damping and stiffness terms, account for it.
        ``constraints`` (:class:`tracker.control.contact_solve.Contacts`): contact rows the prediction holds,
        unilaterally (the stance feet's at zero acceleration: planted feet; other links' touching the
        ground at the velocity level: :func:`tracker.control.balance.contact_rows`), solved exactly by
        :func:`tracker.control.contact_solve.solve_constrained`; without them a free root's prediction
        is a body in free fall, whose light shins would seem to meet any knee target at once.

        Raises:
            SimulationError: ``M + Kd·dt`` is not positive definite (a diverged
                state or a broken mass matrix).
        """
        q, v = state
        kp, kd, implicit, limited = self._gain_terms(gains, dt)
        f = self.servo_force(state, target, kp, kd, dt)
        if extra is not None:
            # A force added to the servo's (vt's feed-forward, balance feedback): in the right-hand
            # side of the solve and in the output, so the implicit terms account for it; with torque
            # limits the active set treats it as part of each DOF's demand.
            f = f + extra
        mass = self.dynamics.mass_matrix(q)
        bias = self.dynamics.bias_forces(q, v)
        acc, held = self._solve(mass, implicit, f - bias, constraints)
        tau = f - implicit * acc
        self.saturated = _NONE
        if constraints is not None:
            from tracker.control.contact_solve import held_contacts

            self.held = held_contacts(constraints, held)
        if limited:
            tau = self._limit(tau, f, implicit, mass, bias, gains.tau_max, constraints, held)
        return tau

    def _gain_terms(self, gains: Gains, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """``(kp, kd, implicit, limited)`` of ``gains`` at ``dt``: the gains without the passive DOFs', the implicit
        diagonal ``Kd·dt [+ Kp·dt²·factor]`` and whether any torque is limited. The last ones are kept and
        reused while the same :class:`~tracker.control.base.Gains` (immutable, its arrays read-only) comes with
        the same ``dt``, as it does step after step without a gain schedule; the arrays are only read."""
        memo = self._terms
        if memo.gains is gains and memo.dt == dt and memo.prediction == self.prediction:
            return memo.terms
        kp, kd = gains.kp, gains.kd
        if not self._all_active:
            kp = kp * self.mask
            kd = kd * self.mask
        implicit = kd * dt
        if self.prediction == "semi_implicit":
            implicit += kp * (dt * dt * self._position_factor)
        for a in (kp, kd, implicit):
            a.setflags(write=False)  # shared from step to step
        memo.gains, memo.dt, memo.prediction = gains, dt, self.prediction
        memo.terms = (kp, kd, implicit, gains.limited)
        return memo.terms

    def servo_force(self, state: State, target: Target, kp: np.ndarray, kd: np.ndarray, dt: float) -> np.ndarray:
        """``f = Kp·p_err + Kd·v_err`` ``(nv,)``: the PD force before the implicit correction."""
        q, v = state
        q_bar, v_bar = target[0], target[1]  # a Target, or any (q, v) pair
        p_err = self._step_error(q_bar, q, v, dt)
        v_err = (v_bar - v) if self.target_velocity == "ref" else -np.asarray(v, dtype=float)
        f = kp * p_err
        f += kd * v_err
        return f

    def _solve(self, mass: np.ndarray, implicit: np.ndarray, rhs: np.ndarray,
               constraints=None) -> tuple[np.ndarray, np.ndarray | None]:
        """``(a, held)``: ``a`` from ``(M + diag(implicit)) a = rhs`` by Cholesky, with ``constraints``
        held if any (:class:`tracker.control.contact_solve.Contacts`); ``held`` ``(k,)`` bool the rows the
        active set kept (None without constraints)."""
        a_mat = np.array(mass, dtype=float)  # a private copy (LAPACK overwrites it)
        a_mat.flat[self._diag] += implicit
        # LAPACK's Cholesky solve directly: the scipy/numpy wrappers cost more than
        # the 43x43 factorisation itself. info > 0: not positive definite.
        held = None
        if constraints is None:
            _, acc, info = _posv(a_mat, np.array(rhs, dtype=float), lower=0, overwrite_a=1, overwrite_b=1)
        else:  # planted feet (balance): the prediction holds the stance feet's contacts
            from tracker.control.contact_solve import solve_constrained

            acc, info, held = solve_constrained(a_mat, np.array(rhs, dtype=float), constraints, held=True)
        if info != 0:
            raise SimulationError(
                "SPD: M + Kd·dt is not positive definite (diverged state or bad mass matrix)"
            )
        self.acceleration = acc  # the last solve is the one behind the torques returned (_limit's passes too)
        return acc, held

    def _limit(self, tau: np.ndarray, f: np.ndarray, implicit: np.ndarray, mass: np.ndarray,
               bias: np.ndarray, tau_max: np.ndarray, constraints=None, held: np.ndarray | None = None) -> np.ndarray:
        """Torques within ``tau_max`` with the unsaturated DOFs re-solved implicitly (module docstring).

        With stance ``constraints`` the contact set is fixed while the torque-limit set is sought:
        re-choosing the contacts inside every pass makes the two active sets chase each other (a foot
        let go saturates its ankle, which holds it again, ...; measured on the free-root forearm pass:
        a 2n-pass cycle that ended on the let-go state, the ankle at 5000 rad/s²). So the limits are
        solved with the rows the unlimited solve ``held`` as equalities; then, if the limited torques
        need one of them to pull, the contacts are chosen again among those rows (only ever fewer)
        and the limits solved again.
        """
        over = np.abs(tau) > tau_max
        if not over.any():
            return tau
        if constraints is None:
            return self._limit_fixed(tau, f, implicit, mass, bias, tau_max, None)
        from tracker.control.contact_solve import held_contacts, solve_constrained

        rows = held_contacts(constraints, held)
        n = len(tau)
        for _ in range(len(constraints.jac) + 1):  # each pass holds fewer rows, or ends
            self.held = rows
            tau = self._limit_fixed(tau, f, implicit, mass, bias, tau_max, None if rows is None else rows.equalities())
            if rows is None or not len(self.saturated):
                return tau
            # the contacts under the limited torques: does a held row now have to pull?
            fixed = np.zeros(n, dtype=bool)
            fixed[self.saturated] = True
            a_mat = np.array(mass, dtype=float)
            a_mat.flat[self._diag] += np.where(fixed, 0.0, implicit)
            _, info, keep = solve_constrained(a_mat, np.where(fixed, tau, f) - bias, rows, held=True)
            if info != 0 or keep.all():
                return tau
            rows = held_contacts(rows, keep)
            acc, again = self._solve(mass, implicit, f - bias, rows)  # the unlimited servo on what is left
            rows = None if rows is None else held_contacts(rows, again)
            tau = f - implicit * acc
        return tau

    def _limit_fixed(self, tau: np.ndarray, f: np.ndarray, implicit: np.ndarray, mass: np.ndarray,
                     bias: np.ndarray, tau_max: np.ndarray, constraints=None) -> np.ndarray:
        """:meth:`_limit` with a fixed set of held constraint rows (or none)."""
        self.saturated = _NONE
        over = np.abs(tau) > tau_max
        if not over.any():
            return tau
        fixed = np.zeros(len(tau), dtype=bool)
        tau_fixed = np.zeros(len(tau))
        for _ in range(2 * len(tau)):
            tau_fixed[over] = np.copysign(tau_max[over], tau[over])
            fixed |= over
            d_free = np.where(fixed, 0.0, implicit)
            rhs = np.where(fixed, tau_fixed, f) - bias
            acc = self._solve(mass, d_free, rhs, constraints)[0]
            servo = f - implicit * acc  # what each DOF's implicit servo would ask for now
            tau = np.where(fixed, tau_fixed, servo)
            over = ~fixed & (np.abs(servo) > tau_max)
            # a fixed DOF whose servo now asks for less than its limit (or pushes the other way) is released
            release = fixed & (servo * np.sign(tau_fixed) < tau_max)
            if not over.any() and not release.any():
                break
            if not over.any():
                fixed &= ~release
                over = np.zeros_like(over)
        self.saturated = np.flatnonzero(fixed)
        return np.clip(tau, -tau_max, tau_max)


#: No saturated DOF.
_NONE = np.zeros(0, dtype=int)
_NONE.setflags(write=False)


class _GainTerms:
    """:meth:`SPDController._gain_terms`' last answer and what it was for. A plain object, not data: a
    snapshot (:mod:`tracker.sim.snapshot`) neither saves nor restores it, and it stays valid across restores."""

    __slots__ = ("gains", "dt", "prediction", "terms")

    def __init__(self) -> None:
        self.gains = self.dt = self.prediction = self.terms = None
