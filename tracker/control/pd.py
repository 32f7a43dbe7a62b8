"""Explicit PD servo, the baseline of Tan, Liu & Turk 2011 (eq. 1 and 4).

``tau = Kp·(q̄ ⊖ q) + Kd·(v̄ − v)``, clipped to the torque limits, with
``v̄ = 0`` when ``target_velocity="zero"``.

Target time: the loop passes the reference sampled at the next step's time
``t_{n+1}`` (see :mod:`tracker.control.base`); this PD servos toward it as
given. The paper's eq. 1 writes ``q̄^n``; the Tan 2011 reproduction
(:mod:`tracker.sim.tan2011`) therefore feeds PD the reference at ``t_n`` in its
own loop. The one-step shift changes no stability property.
"""

from __future__ import annotations

import numpy as np

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


@register("pd")
class PDController:
    """Explicit PD in generalized coordinates (no dynamics model needed).

    Args:
        layout: the q/v layout (Lie-group difference for spherical joints and
            the root).
        dynamics: accepted for a uniform factory signature; unused.
        target_velocity: ``"ref"`` servos toward the target velocity,
            ``"zero"`` toward rest.
        passive: DOFs that get no servo force (bool ``(nv,)`` mask or indices),
            e.g. a free root.
    """

    name = "pd"

    def __init__(
        self,
        layout: Layout,
        dynamics: Dynamics | None = None,
        *,
        target_velocity: TargetVelocity = "ref",
        passive: np.ndarray | None = None,
    ) -> None:
        self.layout = layout
        self._step_error = StepError(layout)
        self.target_velocity = check_target_velocity(target_velocity)
        self.mask = actuation_mask(layout.nv, passive)

    def torques(self, state: State, target: Target, gains: Gains, dt: float,
                extra: np.ndarray | None = None) -> np.ndarray:
        """``Kp·(q̄ ⊖ q) + Kd·(v̄ − v) + extra``, clipped; ``(nv,)``. ``dt`` is unused.

        ``extra`` ``(nv,)``: a generalized force added before clipping (balance feedback).
        """
        q, v = state
        q_bar, v_bar = target[0], target[1]  # a Target, or any (q, v) pair
        p_err = self._step_error(q_bar, q, v, 0.0)
        v_err = (v_bar - v) if self.target_velocity == "ref" else -np.asarray(v, dtype=float)
        tau = gains.kp * p_err
        tau += gains.kd * v_err
        tau *= self.mask
        if extra is not None:
            tau += extra
        if gains.limited:
            np.clip(tau, -gains.tau_max, gains.tau_max, out=tau)
        return tau
