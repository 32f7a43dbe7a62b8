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

Both are then clipped to the torque limits. Passive DOFs (e.g. a free root)
get ``Kp = Kd = 0`` and hence zero force, but their inertia still takes part
in the solve. ``M + diag(Kd·dt [+ Kp·dt²])`` is symmetric positive definite,
so the solve uses a Cholesky factorisation.
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
        self.mask = actuation_mask(layout.nv, passive)
        self._all_active = bool(self.mask.all())
        self._diag = np.arange(layout.nv) * (layout.nv + 1)  # flat indices of the diagonal

    def torques(self, state: State, target: Target, gains: Gains, dt: float,
                extra: np.ndarray | None = None, constraints: np.ndarray | None = None) -> np.ndarray:
        """SPD generalized forces ``(nv,)`` for the step ``t_n -> t_n + dt``.

        ``extra`` ``(nv,)`` is a generalized force added to the servo's (e.g. balance feedback,
        :mod:`tracker.control.balance`): it enters the right-hand side of the implicit solve, so the
        predicted acceleration, and with it the damping and stiffness terms, account for it.
        ``constraints`` ``(k, nv)``: velocity combinations the prediction holds at zero acceleration
        (the stance feet's Jacobians: planted feet), solved exactly by
        :func:`tracker.control.balance.solve_constrained`; without them a free root's prediction
        is a body in free fall, whose light shins would seem to meet any knee target at once.

        Raises:
            SimulationError: ``M + Kd·dt`` is not positive definite (a diverged
                state or a broken mass matrix).
        """
        q, v = state
        q_bar, v_bar = target
        kp, kd = gains.kp, gains.kd
        if not self._all_active:
            kp = kp * self.mask
            kd = kd * self.mask
        p_err = self._step_error(q_bar, q, v, dt)
        v_err = (v_bar - v) if self.target_velocity == "ref" else -np.asarray(v, dtype=float)
        f = kp * p_err
        f += kd * v_err

        implicit = kd * dt
        if self.prediction == "semi_implicit":
            implicit += kp * (dt * dt)
        a_mat = np.array(self.dynamics.mass_matrix(q), dtype=float)  # a private copy
        a_mat.flat[self._diag] += implicit
        rhs = f - self.dynamics.bias_forces(q, v)
        if extra is not None:  # a feedback force the implicit solve must see (balance)
            rhs += extra
        # LAPACK's Cholesky solve directly: the scipy/numpy wrappers cost more than
        # the 43x43 factorisation itself. info > 0: not positive definite.
        if constraints is None:
            _, acc, info = _posv(a_mat, rhs, lower=0, overwrite_a=1, overwrite_b=1)
        else:  # planted feet (balance)
            from tracker.control.balance import solve_constrained

            acc, info = solve_constrained(a_mat, rhs, constraints)
        if info != 0:
            raise SimulationError(
                "SPD: M + Kd·dt is not positive definite (diverged state or bad mass matrix)"
            )
        tau = f
        tau -= implicit * acc
        if extra is not None:
            tau += extra
        if gains.limited:
            np.clip(tau, -gains.tau_max, gains.tau_max, out=tau)
        return tau
