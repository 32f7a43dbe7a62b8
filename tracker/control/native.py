"""PyBullet's own stable PD (``STABLE_PD_CONTROL``), the baseline ``native``.

PyBullet computes the joint torques itself during ``stepSimulation`` from the
targets and per-joint gains (its DeepMimic stable-PD code). It has no root
servo: with ``native`` the simulation drives the root kinematically (the base
is set to the reference every step), whatever root mode was asked for, and
:meth:`torques` returns zeros (the torques are not known on the Python side).
"""

from __future__ import annotations

import numpy as np

from tracker.character.layout import Layout
from tracker.control.base import Gains, State, Target, check_target_velocity
from tracker.control.registry import register


@register("native")
class NativeStablePD:
    """Joint servo by PyBullet's ``STABLE_PD_CONTROL``.

    Args:
        layout: the q/v layout.
        dynamics: unused (PyBullet has its own model).
        character: the :class:`~tracker.character.character.Character` to servo.
        target_velocity: ``"ref"`` or ``"zero"``.
    """

    name = "native"
    drives_root_kinematically = True

    def __init__(self, layout: Layout, dynamics=None, *, character, target_velocity: str = "ref") -> None:
        self.layout = layout
        self.character = character
        self.target_velocity = check_target_velocity(target_velocity)
        self._zero = np.zeros(layout.nv)

    def torques(self, state: State, target: Target, gains: Gains, dt: float) -> np.ndarray:
        """Set PyBullet's servo targets for the coming step; returns zeros ``(nv,)``."""
        v_bar = target.v if self.target_velocity == "ref" else self._zero
        self.character.apply_stable_pd(target.q, v_bar, gains.kp, gains.kd, gains.tau_max)
        return self._zero.copy()
