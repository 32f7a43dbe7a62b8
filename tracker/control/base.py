"""Types shared by the joint-space controllers: state, target, gains, dynamics.

Every controller maps ``(state, target, gains, dt)`` to a generalized force
``tau`` with ``v``'s layout (:mod:`tracker.character.layout`). The simulation
loop samples the reference at the time of the NEXT physics step,
``t_{n+1} = t_n + dt``, and passes that one :class:`Target` to whichever
controller runs, so that PD, SPD and PyBullet's native servo see exactly the
same setpoint (SPD needs ``q̄^{n+1}`` by construction, Tan et al. 2011 eq. 5).
The target also carries the reference at ``t_n`` (``q_now``, ``v_now``), which
analytic PD needs for the error at the start of the step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np

from tracker.errors import ConfigError

#: ``"ref"``: servo toward the reference velocity; ``"zero"``: toward zero velocity.
TargetVelocity = Literal["ref", "zero"]
TARGET_VELOCITIES: tuple[str, ...] = ("ref", "zero")


class State(NamedTuple):
    """The simulated state: ``q`` ``(nq,)`` and ``v`` ``(nv,)`` (layout order)."""

    q: np.ndarray
    v: np.ndarray


class Target(NamedTuple):
    """The reference at the next step's time ``t_{n+1}``, and at ``t_n``.

    ``q`` ``(nq,)``, ``v`` ``(nv,)``: the setpoint at ``t_{n+1}`` (what PD,
    SPD and ``native`` servo toward). ``q_now`` ``(nq,)``, ``v_now`` ``(nv,)``:
    the reference at the step's start ``t_n`` (``None`` when the caller has no
    clip); controllers that predict the error over the step from its value at
    ``t_n`` (``analytic_pd``, Weinstein et al. 2008) need it. The tuple has four
    entries: read them by name or index (``target[0]``, ``target[1]``), not by
    unpacking into two.
    """

    q: np.ndarray
    v: np.ndarray
    q_now: np.ndarray | None = None
    v_now: np.ndarray | None = None


@runtime_checkable
class Dynamics(Protocol):
    """Joint-space dynamics ``M(q) a + c(q, v) = tau`` in the layout's ``v`` order.

    ``Character`` (PyBullet) and :class:`tracker.sim.pendulum.TwoLinkPendulum`
    (analytic) both satisfy it.
    """

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Joint-space inertia ``M(q)``, ``(nv, nv)``, symmetric positive definite."""
        ...

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``c(q, v)`` = Coriolis, centrifugal and gravity forces, ``(nv,)``.

        This is inverse dynamics at zero acceleration (and zero applied force).
        """
        ...


class Controller(Protocol):
    """A servo: generalized forces from the state and the next-step target."""

    name: str

    def torques(self, state: State, target: Target, gains: Gains, dt: float) -> np.ndarray:
        """Generalized forces ``(nv,)`` for the step ``t_n -> t_n + dt``."""
        ...


def _frozen_vector(x: np.ndarray | float, n: int | None, what: str) -> np.ndarray:
    a = np.array(x, dtype=float, copy=True)
    if n is not None and a.ndim == 0:
        a = np.full(n, float(a))
    if a.ndim != 1:
        raise ValueError(f"{what} must be a vector, got shape {a.shape}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Gains:
    """Per-DOF servo gains in ``v``'s layout (build them by joint name elsewhere).

    Attributes:
        kp: stiffness ``(nv,)``, N·m/rad (N/m on base linear DOFs).
        kd: damping ``(nv,)``, N·m·s/rad (N·s/m on base linear DOFs).
        tau_max: torque limit ``(nv,)``, N·m (N); ``inf`` means unlimited.
            Torques are clipped to ``[-tau_max, tau_max]``.
    """

    kp: np.ndarray
    kd: np.ndarray
    tau_max: np.ndarray | None = None

    def __post_init__(self) -> None:
        kp = _frozen_vector(self.kp, None, "kp")
        kd = _frozen_vector(self.kd, kp.shape[0], "kd")
        lim = np.inf if self.tau_max is None else self.tau_max
        tau_max = _frozen_vector(lim, kp.shape[0], "tau_max")
        if not (kd.shape == tau_max.shape == kp.shape):
            raise ValueError(
                f"gains disagree on nv: kp {kp.shape}, kd {kd.shape}, tau_max {tau_max.shape}"
            )
        if (kp < 0).any() or (kd < 0).any() or (tau_max < 0).any():
            raise ValueError("kp, kd and tau_max must be non-negative")
        object.__setattr__(self, "kp", kp)
        object.__setattr__(self, "kd", kd)
        object.__setattr__(self, "tau_max", tau_max)

    @property
    def nv(self) -> int:
        return self.kp.shape[0]

    @property
    def limited(self) -> bool:
        """Whether any DOF has a finite torque limit."""
        return bool(np.isfinite(self.tau_max).any())

    @classmethod
    def critical_ratio(
        cls,
        kp: np.ndarray | float,
        dt: float,
        *,
        nv: int | None = None,
        ratio: float = 1.0,
        tau_max: np.ndarray | float | None = None,
    ) -> Gains:
        """Gains with ``kd = ratio · kp · dt`` (Tan et al. 2011 use ``ratio = 1``).

        Args:
            kp: ``(nv,)`` or a scalar (then ``nv`` is required).
            dt: the physics time step, s.
            nv: number of DOFs when ``kp`` is a scalar.
            ratio: multiple of ``kp·dt``; SPD is stable for ``ratio >= 1``.
            tau_max: torque limit, ``(nv,)`` or scalar; ``None`` = unlimited.
        """
        kp_v = np.asarray(kp, dtype=float)
        if kp_v.ndim == 0:
            if nv is None:
                raise ValueError("a scalar kp needs nv")
            kp_v = np.full(nv, float(kp_v))
        return cls(kp_v, ratio * kp_v * dt, tau_max)

    def scaled(self, s: float) -> Gains:
        """Both ``kp`` and ``kd`` multiplied by ``s`` (limits unchanged)."""
        return Gains(self.kp * s, self.kd * s, self.tau_max)


def actuation_mask(nv: int, passive: np.ndarray | None) -> np.ndarray:
    """Read-only ``(nv,)`` float mask: 1 on actuated DOFs, 0 on ``passive`` ones.

    Args:
        nv: number of velocity DOFs.
        passive: boolean ``(nv,)`` mask or integer indices of DOFs that get no
            servo force (e.g. a free root's six DOFs), or ``None``.
    """
    mask = np.ones(nv)
    if passive is not None:
        p = np.asarray(passive)
        if p.dtype == bool:
            if p.shape != (nv,):
                raise ValueError(f"passive mask must have shape ({nv},), got {p.shape}")
            mask[p] = 0.0
        else:
            mask[p.astype(int)] = 0.0
    mask.setflags(write=False)
    return mask


def check_target_velocity(mode: str) -> str:
    """Validate a ``target_velocity`` option (``"ref"`` or ``"zero"``)."""
    if mode not in TARGET_VELOCITIES:
        raise ConfigError(f"target_velocity {mode!r} is not one of: {', '.join(TARGET_VELOCITIES)}")
    return mode
