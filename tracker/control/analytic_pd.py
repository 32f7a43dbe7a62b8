"""Analytic PD with inverse-dynamics feedback (Weinstein, Teran & Fedkiw 2008).

Per DOF the PD error ``E = q ⊖ q̄`` obeys ``Ë + k_v Ė + k_p E = 0`` with
*acceleration* gains; it is solved in closed form over the step
(:mod:`tracker.control.closed_form`), and inverse dynamics then makes every
joint reach its own prediction at once, whatever gravity, the neighbouring
joints and the outboard limbs do. Stiffness sets *when* the target is
reached, never *whether*. For the step ``t_n -> t_{n+1} = t_n + h`` with the
target at both ends (:class:`tracker.control.base.Target`)::

    E₀ = q ⊖ q̄(t_n),   Ė₀ = v − v̄(t_n)           (relative velocity, see below)
    E_h = a E₀ + b Ė₀                              (closed form of the DOUBLED system)
    q_E = q̄(t_{n+1}) ⊕ E_h,   ω̃ = (q_E ⊖ q) / h    (the secant velocity)
    τ = M (ω̃ − v) / h + c                          (all DOFs actuated)

With PyBullet's integrator (``v' = v + h a``, ``q' = q ⊕ h v'``) the step then
ends exactly at ``q_E``: without contact, ``q' ⊖ q̄(t_{n+1}) = E_h`` per DOF
(:attr:`AnalyticPDController.predicted_error`; the tests pin it to 1e-9 on the
humanoid).

Choices (``../shared/CONTROLLERS.md`` §3):

* **Gains.** ``k_p = kp / M_kk`` with ``kp`` the loop's stiffness (N·m/rad,
  e.g. the Zordan–Hodgins schedule's) and ``M_kk`` the joint's own inertia, the
  diagonal of ``M(q)`` (everything outboard, about the joint's axis); ``k_v =
  2ζ√k_p`` (``ζ = 1``: critical damping; ``kd`` is not used).
  ``gain_units="acceleration"`` takes ``kp`` as ``k_p`` directly.
* **Doubled gains** (``prediction="doubled"``, the default): the secant
  ``ω̃`` becomes the next step's velocity, which lives at ``t_{n+1/2}``, so
  only half the acceleration is accounted for and plain gains behave like PD
  with ``k/2`` as ``h -> 0`` (paper §III, Fig. 3). The closed form is therefore
  evaluated for ``(2k_p, 2k_v)`` (an over-damped system); ``"single"`` keeps
  the plain gains (for the reproduction).
* **Rotations** (spherical joints, child frame; the base, world frame): the
  error is the rotation vector of the layout's ``⊖`` and ``Ė₀`` the relative
  angular velocity ``ω − Qᵀω̄`` (``Q = q̄⁻¹q``; for the base ``ω − Qω̄``, ``Q =
  q q̄⁻¹``), whose component along the error is the exact rate of ``|E|``. The
  closed form acts on the three components (Lie form
  ``q_E = q̄ ⊕ E_h``): along the error axis it is the paper's scalar
  ``E(0) = |v|``; across it (``E₀ = 0``) it gives the paper's extra term for
  the perpendicular velocity, ``b(h)ω⊥/h`` (``ω⊥ e^{−√k_p h}`` for plain
  critical gains).
* **Root.** Anchored or kinematic: every DOF is actuated (the root's share is
  the wrench the loop applies). A free root (``passive`` DOFs) needs the
  partition (``partition=True``): the passive DOFs get no force and their
  velocity change follows from the actuated ones,
  ``Δv_r = −M_rr⁻¹(M_ra Δv_a + h c_r)``, ``τ_a = (M_ar Δv_r + M_aa Δv_a)/h + c_a``.
  Contacts act after our torques (and a free root rests on them), so the
  prediction is then approximate.
* **Torque limits.** A DOF whose force exceeds its limit is held at the
  limit and the others are solved again with it as a given force (the same
  partition as a free root's), so the unclipped DOFs still reach their
  predictions; the clipped ones do not, which is flagged (:attr:`clipped`,
  :meth:`report`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from tracker.character.layout import Layout
from tracker.control import closed_form
from tracker.control._analytic_kernel import analytic_step
from tracker.control.base import (
    Dynamics,
    Gains,
    State,
    Target,
    TargetVelocity,
    actuation_mask,
    check_target_velocity,
)
from tracker.control.lie import _conj, _exp, _log, _mul, rotation_indices
from tracker.control.registry import register
from tracker.errors import ConfigError, SimulationError

#: Which closed form predicts the step: the doubled system (default) or the plain one.
Prediction = Literal["doubled", "single"]
PREDICTIONS: tuple[str, ...] = ("doubled", "single")
GainUnits = Literal["torque", "acceleration"]
GAIN_UNITS: tuple[str, ...] = ("torque", "acceleration")


def _rotate(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """``R(quat) vec`` for ``(n, 4)`` xyzw quaternions and ``(n, 3)`` vectors."""
    p = np.zeros((vec.shape[0], 4))
    p[:, :3] = vec
    return _mul(_mul(quat, p), _conj(quat))[:, :3]


@register("analytic_pd")
class AnalyticPDController:
    """Weinstein et al. 2008's analytic PD, in reduced coordinates.

    Args:
        layout: the q/v layout.
        dynamics: ``mass_matrix(q)`` and ``bias_forces(q, v)`` in ``v``'s order.
        target_velocity: ``"ref"`` (``Ė₀ = v − v̄(t_n)``) or ``"zero"`` (``Ė₀ = v``).
        prediction: ``"doubled"`` (default) or ``"single"`` (see the module notes).
        passive: DOFs that get no force (bool ``(nv,)`` mask or indices), e.g. a free root.
        partition: allow ``passive`` DOFs, with the free-root partition.
        damping_ratio: ``ζ`` in ``k_v = 2ζ√k_p`` (1: critical; > 0).
        gain_units: ``"torque"`` (``k_p = kp/M_kk``, default) or ``"acceleration"`` (``k_p = kp``).

    Raises:
        ConfigError: an unknown prediction mode or gain unit, a non-positive
            damping ratio, or passive DOFs without ``partition``.
    """

    name = "analytic_pd"

    def __init__(
        self,
        layout: Layout,
        dynamics: Dynamics,
        *,
        target_velocity: TargetVelocity = "ref",
        prediction: Prediction = "doubled",
        passive: np.ndarray | None = None,
        partition: bool = False,
        damping_ratio: float = 1.0,
        gain_units: GainUnits = "torque",
    ) -> None:
        if prediction not in PREDICTIONS:
            raise ConfigError(f"analytic_pd prediction {prediction!r} is not one of: {', '.join(PREDICTIONS)}")
        if gain_units not in GAIN_UNITS:
            raise ConfigError(f"analytic_pd gain_units {gain_units!r} is not one of: {', '.join(GAIN_UNITS)}")
        if not (isinstance(damping_ratio, (int, float)) and np.isfinite(damping_ratio) and damping_ratio > 0):
            raise ConfigError(f"analytic_pd damping_ratio must be a positive number, got {damping_ratio!r}")
        self.layout = layout
        self.dynamics = dynamics
        self.target_velocity = check_target_velocity(target_velocity)
        self.prediction = prediction
        self.damping_ratio = float(damping_ratio)
        self.gain_units = gain_units
        self.mask = actuation_mask(layout.nv, passive)
        self._passive = np.nonzero(self.mask == 0.0)[0]
        self._active = np.nonzero(self.mask != 0.0)[0]
        if self._passive.size and not partition:
            raise ConfigError("analytic_pd: passive DOFs (a free root) need the free-root partition "
                              "(partition: true; approximate under contact), or use an anchored or kinematic root")
        self.partition = bool(partition)
        self._scale = 2.0 if prediction == "doubled" else 1.0
        # Rotations: the base (world frame, left-multiplied) then the spherical joints (child frame).
        self._rot_q, self._rot_v = rotation_indices(layout)
        self._base = layout.has_base
        lin = [np.arange(0, 3)] if layout.has_base else []
        self._lin_q = np.concatenate(lin + [np.asarray(layout.rev_q, dtype=int)]).astype(int)
        self._lin_v = np.concatenate(lin + [np.asarray(layout.rev_v, dtype=int)]).astype(int)
        #: ``(nv,)`` the error ``q^{n+1} ⊖ q̄^{n+1}`` the last step aims at (the closed form's ``E(h)``).
        self.predicted_error = np.zeros(layout.nv)
        #: ``(nv,)`` acceleration gains ``k_p`` of the last step (before doubling), 1/s².
        self.kp_acc = np.zeros(layout.nv)
        #: number of DOFs clipped by the torque limits in the last step (0: the prediction is exact).
        self.clipped = 0
        self.clipped_steps = 0
        self.steps = 0

    # -- the pieces (numpy; the compiled kernel in torques() does the same, a test pins it) ---
    def predict(self, q, v, target: Target, kp_acc: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
        """``(E_h, ω̃)`` ``(nv,)`` by numpy (the reference for the compiled kernel)."""
        kv = closed_form.critical_kv(kp_acc, self.damping_ratio)
        a, b, _, _ = closed_form.transition(self._scale * kp_acc, self._scale * kv, h)
        e0, de0 = self._error_and_rate(q, v, target.q_now, target.v_now)
        e_h = a * e0 + b * de0
        return e_h, self._secant_velocity(q, target.q, e_h, h)

    def _error_and_rate(self, q, v, q0, v0):
        """``E₀ = q ⊖ q̄₀`` and ``Ė₀`` ``(nv,)`` (see the module notes for rotations)."""
        e = np.empty(self.layout.nv)
        de = np.array(v, dtype=float, copy=True)
        li, lv = self._lin_q, self._lin_v
        e[lv] = q[li] - q0[li]
        if self.target_velocity == "ref":
            de[lv] -= v0[lv]
        if len(self._rot_q):
            cur, ref = q[self._rot_q], q0[self._rot_q]
            rel = _mul(_conj(ref), cur)  # spherical: Q = q̄⁻¹ q (child frame)
            if self._base:
                rel[0] = _mul(cur[:1], _conj(ref[:1]))[0]  # base: Q = q q̄⁻¹ (world frame)
            e[self._rot_v] = _log(rel)
            if self.target_velocity == "ref":
                vbar = v0[self._rot_v]
                rot = _conj(rel)  # spherical: Qᵀ ω̄
                if self._base:
                    rot[0] = rel[0]  # base: Q ω̄
                de[self._rot_v] -= _rotate(rot, vbar)
        return e, de

    def _secant_velocity(self, q, q1, e_h, h):
        """``ω̃ = ((q̄₁ ⊕ E_h) ⊖ q) / h`` ``(nv,)``."""
        w = np.empty(self.layout.nv)
        li, lv = self._lin_q, self._lin_v
        w[lv] = (q1[li] + e_h[lv] - q[li]) / h
        if len(self._rot_q):
            ex = _exp(e_h[self._rot_v])
            tgt = q1[self._rot_q]
            q_e = _mul(tgt, ex)  # spherical: q̄ · exp(E) (child frame)
            cur = q[self._rot_q]
            step = _mul(_conj(cur), q_e)  # spherical: q⁻¹ q_E
            if self._base:
                q_e0 = _mul(ex[:1], tgt[:1])  # base: exp(E) · q̄ (world frame)
                step[0] = _mul(q_e0, _conj(cur[:1]))[0]  # base: q_E q⁻¹
            w[self._rot_v] = _log(step) / h
        return w

    def accel_gains(self, kp: np.ndarray, m_diag: np.ndarray) -> np.ndarray:
        """``k_p`` (1/s²) from the loop's ``kp`` and the joint inertias ``M_kk``."""
        if self.gain_units == "acceleration":
            return np.asarray(kp, dtype=float)
        return kp / m_diag

    # -- the servo ----------------------------------------------------------------------------
    def torques(self, state: State, target: Target, gains: Gains, dt: float) -> np.ndarray:
        """Generalized forces ``(nv,)`` that make every DOF reach its analytic prediction.

        Raises:
            SimulationError: the target at ``t_n`` is missing, or ``M_rr`` of
                the partition is singular (a diverged state).
        """
        q, v = state
        if getattr(target, "q_now", None) is None or getattr(target, "v_now", None) is None:
            raise SimulationError("analytic_pd needs the target at t_n as well as t_{n+1} (Target.q_now, v_now)")
        h = float(dt)
        m = np.asarray(self.dynamics.mass_matrix(q), dtype=float)
        c = np.asarray(self.dynamics.bias_forces(q, v), dtype=float)
        kp = self.accel_gains(gains.kp, m.diagonal())
        self.kp_acc = kp
        e_h, w = analytic_step(np.asarray(q, float), np.asarray(v, float), np.asarray(target.q_now, float),
                               np.asarray(target.v_now, float), np.asarray(target.q, float),
                               np.ascontiguousarray(kp, float), self.damping_ratio, self._scale, h,
                               self.target_velocity == "ref", self._lin_q, self._lin_v, self._rot_q, self._rot_v,
                               self._base)
        self.predicted_error = e_h
        dv = w - v
        fixed = np.zeros(self.layout.nv, dtype=bool)  # DOFs whose force is given: passive (0) or clipped
        fixed[self._passive] = True
        tau_fixed = np.zeros(self.layout.nv)
        tau = self._inverse_dynamics(m, c, dv, h, fixed, tau_fixed)
        self.steps += 1
        self.clipped = 0
        if gains.limited:
            # A clipped DOF cannot reach its prediction; hold its force at the limit and solve the
            # others again with it as a given force (else the coupling terms computed for its
            # full velocity change would throw the rest off). A few rounds settle the set.
            lim = gains.tau_max
            for _ in range(self.layout.nv):  # the fixed set only grows, so this ends
                over = (np.abs(tau) > lim * (1.0 + 1e-12)) & ~fixed
                if not over.any():
                    break
                fixed |= over
                tau_fixed[over] = np.clip(tau[over], -lim[over], lim[over])
                tau = self._inverse_dynamics(m, c, dv, h, fixed, tau_fixed)
            clipped = fixed.copy()
            clipped[self._passive] = False
            self.clipped = int(np.count_nonzero(clipped))
            if self.clipped:
                self.clipped_steps += 1
            np.clip(tau, -lim, lim, out=tau)
        return tau

    @staticmethod
    def _inverse_dynamics(m, c, dv, h, fixed, tau_fixed):
        """``τ = M Δv / h + c`` with the DOFs in ``fixed`` given the forces ``tau_fixed``.

        Their velocity change is not imposed but follows from the others':
        ``Δv_f = M_ff⁻¹(h(τ_f − c_f) − M_fa Δv_a)`` (the free-root partition when
        ``τ_f = 0``); ``dv`` is updated in place.

        Raises:
            SimulationError: ``M_ff`` is singular (a diverged state).
        """
        if fixed.any():
            f = np.nonzero(fixed)[0]
            a = np.nonzero(~fixed)[0]
            rhs = h * (tau_fixed[f] - c[f]) - m[np.ix_(f, a)] @ dv[a]
            try:
                dv[f] = np.linalg.solve(m[np.ix_(f, f)], rhs)
            except np.linalg.LinAlgError:
                raise SimulationError("analytic_pd: a block of M is singular (diverged state)") from None
        tau = m @ dv
        tau /= h
        tau += c
        if fixed.any():
            tau[fixed] = tau_fixed[fixed]
        return tau

    def report(self) -> dict:
        """Run summary: how often the torque limits broke the exact prediction."""
        return {"analytic_pd_clipped_steps": self.clipped_steps, "analytic_pd_steps": self.steps}
