"""Two keyframe servos with cross-faded gains (Tan, Liu & Turk 2011 §4.2).

Between key ``a`` (the last one passed) and key ``b`` (the next one) two
servos pull at once, one toward each key, with gains ``w_a·Kp`` and ``w_b·Kp``
(``w`` from :mod:`tracker.keyframes.profile`, per DOF so that an anchored root
can keep constant gains). Both see the same predicted state, so the SPD
solve (:mod:`tracker.control.spd`) becomes::

    p_j  = q_j ⊖ (q ⊕ v·dt)                         j = a, b
    f    = Kp·(w_a·p_a + w_b·p_b) + Kd·(w_a·(v_a − v) + w_b·(v_b − v))
    (M + K̃d·dt [+ K̃p·dt²]) acc = f − c             K̃ = (w_a + w_b)·K
    tau  = f − (K̃d·dt [+ K̃p·dt²])·acc

(the bracketed term with the default ``semi_implicit`` prediction). For scalar
DOFs this is exactly one SPD with the summed gains toward the gain-weighted
target ``(w_a q_a + w_b q_b)/(w_a + w_b)``; for rotations it sums the two
log-errors, which is not the same as servoing toward one blended rotation.
``keyframe_pd`` is the same pair of servos as explicit PD (no prediction, no
solve): ``tau = Kp·(w_a·(q_a ⊖ q) + w_b·(q_b ⊖ q)) + Kd·(…)``.

The target comes as a :class:`KeyTarget`; it also carries a single ``(q, v)``
(the keys' kinematic interpolation) so that any other controller given the
same target simply tracks that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dposv as _posv

from tracker.character.layout import Layout
from tracker.control.base import Dynamics, Gains, State, actuation_mask
from tracker.control.lie import StepError
from tracker.control.registry import register
from tracker.control.spd import PREDICTIONS, Prediction
from tracker.errors import ConfigError, SimulationError


@dataclass(frozen=True, eq=False)
class KeyTarget:
    """The two keys around the next step's time, and their servo weights.

    Iterates as ``(q, v)`` like :class:`tracker.control.base.Target`, so
    single-target controllers track the interpolated pose.

    Attributes:
        q, v: the keys' kinematic interpolation at ``t_{n+1}``: ``(nq,)``, ``(nv,)``.
        q_a, q_b: the previous and next key poses ``(nq,)``.
        v_a, v_b: their velocities ``(nv,)`` (zero unless the file gives them).
        w_a, w_b: gain weights ``(nv,)`` of the two servos, >= 0.
        t: the time of the step's end ``t_{n+1}``, s (as :class:`tracker.control.base.Target`).
    """

    q: np.ndarray
    v: np.ndarray
    q_a: np.ndarray
    q_b: np.ndarray
    v_a: np.ndarray
    v_b: np.ndarray
    w_a: np.ndarray
    w_b: np.ndarray
    t: float = float("nan")

    def __iter__(self):
        return iter((self.q, self.v))

    def __getitem__(self, i):
        return (self.q, self.v)[i]

    def __len__(self) -> int:
        return 2


def _key_target(target) -> KeyTarget:
    if not isinstance(target, KeyTarget):
        raise ConfigError("the keyframe controllers need a keyframe file as their source "
                          "(tracker keyframes FILE.yaml); for a clip use spd or pd")
    return target


class _TwoServos:
    def __init__(self, layout: Layout, passive: np.ndarray | None) -> None:
        self.layout = layout
        self._step_error = StepError(layout)
        self.mask = actuation_mask(layout.nv, passive)

    def _forces(self, state: State, tgt: KeyTarget, gains: Gains, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """The PD force of both servos at the predicted state, and the summed weights ``(nv,)``."""
        q, v = state
        w_a = tgt.w_a * self.mask
        w_b = tgt.w_b * self.mask
        p = w_a * self._step_error(tgt.q_a, q, v, dt)
        p += w_b * self._step_error(tgt.q_b, q, v, dt)
        d = w_a * (tgt.v_a - v)
        d += w_b * (tgt.v_b - v)
        f = gains.kp * p
        f += gains.kd * d
        return f, w_a + w_b


@register("keyframe_spd")
class KeyframeSPD(_TwoServos):
    """Two SPD servos toward the keys around ``t_{n+1}`` (Tan et al. 2011 §4.2).

    Args:
        layout: the q/v layout.
        dynamics: ``mass_matrix(q)`` and ``bias_forces(q, v)`` in ``v`` order.
        prediction: ``semi_implicit`` (default, PyBullet's integrator) or ``explicit``
            (see :mod:`tracker.control.spd`).
        passive: DOFs that get no servo force.
        target_velocity: accepted for the loop's uniform call; the keys' own
            velocities are used (zero unless the file gives them).
    """

    name = "keyframe_spd"

    def __init__(self, layout: Layout, dynamics: Dynamics, *, prediction: Prediction = "semi_implicit",
                 passive: np.ndarray | None = None, target_velocity: str = "zero") -> None:
        if prediction not in PREDICTIONS:
            raise ConfigError(f"SPD prediction {prediction!r} is not one of: {', '.join(PREDICTIONS)}")
        super().__init__(layout, passive)
        self.dynamics = dynamics
        self.prediction = prediction
        self._diag = np.arange(layout.nv) * (layout.nv + 1)

    def torques(self, state: State, target: KeyTarget, gains: Gains, dt: float) -> np.ndarray:
        """Generalized forces ``(nv,)`` of both servos for the step ``t_n -> t_n + dt``."""
        tgt = _key_target(target)
        q, v = state
        f, w = self._forces(state, tgt, gains, dt)
        implicit = (gains.kd * w) * dt
        if self.prediction == "semi_implicit":
            implicit += (gains.kp * w) * (dt * dt)
        a_mat = np.array(self.dynamics.mass_matrix(q), dtype=float)
        a_mat.flat[self._diag] += implicit
        rhs = f - self.dynamics.bias_forces(q, v)
        _, acc, info = _posv(a_mat, rhs, lower=0, overwrite_a=1, overwrite_b=1)
        if info != 0:
            raise SimulationError("keyframe SPD: M + Kd·dt is not positive definite (diverged state)")
        tau = f - implicit * acc
        if gains.limited:
            np.clip(tau, -gains.tau_max, gains.tau_max, out=tau)
        return tau


@register("keyframe_pd")
class KeyframePD(_TwoServos):
    """Two explicit PD servos toward the keys around ``t_{n+1}`` (the paper's baseline).

    Args:
        layout: the q/v layout.
        dynamics: unused (uniform factory signature).
        passive: DOFs that get no servo force.
        target_velocity: accepted for the loop's uniform call (see :class:`KeyframeSPD`).
    """

    name = "keyframe_pd"

    def __init__(self, layout: Layout, dynamics: Dynamics | None = None, *,
                 passive: np.ndarray | None = None, target_velocity: str = "zero") -> None:
        super().__init__(layout, passive)

    def torques(self, state: State, target: KeyTarget, gains: Gains, dt: float) -> np.ndarray:
        """``Σ_j w_j·(Kp·(q_j ⊖ q) + Kd·(v_j − v))``, clipped; ``(nv,)``."""
        tau, _ = self._forces(state, _key_target(target), gains, 0.0)
        if gains.limited:
            np.clip(tau, -gains.tau_max, gains.tau_max, out=tau)
        return tau
