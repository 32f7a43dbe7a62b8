"""The generalized-coordinate layout: joint names to slices of ``q``, ``v`` and ``tau``.

``q`` = base position (3), base quaternion xyzw (4), then per joint 4
(spherical, quaternion xyzw) or 1 (revolute angle). ``v`` = base linear (3)
and angular (3) velocity, both in the world frame, then 3 (spherical angular
velocity, expressed in the joint's child frame -- PyBullet's convention, pinned
by ``tests/character/test_dynamics.py``) or 1 per joint. ``tau`` has ``v``'s
layout (base entries: world force at the base origin, world torque).

A layout without a base (``has_base=False``) starts directly with the joints;
the pure-numpy pendulum used in control tests has one.

This module is pure numpy: the controllers use it without PyBullet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Literal

import numpy as np
from scipy.spatial.transform import Rotation

JointKind = Literal["spherical", "revolute"]

#: Which frame a spherical joint's angular velocity is expressed in.
SPHERICAL_VELOCITY_FRAME = "child"


@dataclass(frozen=True)
class JointSlot:
    """Where one actuated joint lives in ``q`` / ``v`` / ``tau``."""

    name: str
    kind: JointKind
    q: slice
    v: slice

    @property
    def dofs(self) -> int:
        return 3 if self.kind == "spherical" else 1


@dataclass(frozen=True)
class Layout:
    """Maps joint names to slices; the only place that counts indices.

    Build it with :meth:`Layout.build` from ``[(name, kind), ...]``.
    """

    joints: tuple[JointSlot, ...]
    has_base: bool = True
    nq: int = 0
    nv: int = 0
    _by_name: dict = field(default_factory=dict, repr=False, compare=False)
    # Index arrays for vectorised math (filled by build).
    sph_q: np.ndarray = field(default=None, repr=False, compare=False)  # (S, 4)
    sph_v: np.ndarray = field(default=None, repr=False, compare=False)  # (S, 3)
    rev_q: np.ndarray = field(default=None, repr=False, compare=False)  # (R,)
    rev_v: np.ndarray = field(default=None, repr=False, compare=False)  # (R,)

    BASE_POS = slice(0, 3)
    BASE_QUAT = slice(3, 7)
    BASE_LIN = slice(0, 3)
    BASE_ANG = slice(3, 6)

    @classmethod
    def build(cls, joints: Iterable[tuple[str, JointKind]], has_base: bool = True) -> "Layout":
        iq, iv = (7, 6) if has_base else (0, 0)
        slots = []
        for name, kind in joints:
            if kind == "spherical":
                slots.append(JointSlot(name, kind, slice(iq, iq + 4), slice(iv, iv + 3)))
                iq, iv = iq + 4, iv + 3
            elif kind == "revolute":
                slots.append(JointSlot(name, kind, slice(iq, iq + 1), slice(iv, iv + 1)))
                iq, iv = iq + 1, iv + 1
            else:
                raise ValueError(f"joint {name!r}: unknown kind {kind!r}")
        names = [s.name for s in slots]
        if len(set(names)) != len(names):
            raise ValueError("duplicate joint names in layout")
        sph = [s for s in slots if s.kind == "spherical"]
        rev = [s for s in slots if s.kind == "revolute"]
        return cls(
            joints=tuple(slots),
            has_base=has_base,
            nq=iq,
            nv=iv,
            _by_name={s.name: s for s in slots},
            sph_q=np.array([np.arange(s.q.start, s.q.stop) for s in sph], dtype=int).reshape(-1, 4),
            sph_v=np.array([np.arange(s.v.start, s.v.stop) for s in sph], dtype=int).reshape(-1, 3),
            rev_q=np.array([s.q.start for s in rev], dtype=int),
            rev_v=np.array([s.v.start for s in rev], dtype=int),
        )

    # -- lookup ---------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.joints)

    def __getitem__(self, name: str) -> JointSlot:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no joint {name!r}; joints are: {', '.join(self.names)}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    @property
    def n_actuated_dofs(self) -> int:
        return self.nv - (6 if self.has_base else 0)

    def neutral_q(self) -> np.ndarray:
        """The zero pose: base at the origin, identity quaternions, zero angles. ``(nq,)``."""
        q = np.zeros(self.nq)
        if self.has_base:
            q[6] = 1.0
        q[self.sph_q[:, 3]] = 1.0
        return q

    def per_dof(self, values: dict[str, float], base: float = 0.0) -> np.ndarray:
        """Expand a per-joint value dict into a ``(nv,)`` vector (base entries = ``base``)."""
        out = np.full(self.nv, float(base))
        for s in self.joints:
            out[s.v] = values[s.name]
        return out

    # -- Lie-group math ---------------------------------------------------------
    def integrate(self, q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
        """``q ⊕ v·dt``: positions advanced by velocity ``v`` for ``dt`` seconds. ``(nq,)``."""
        out = np.array(q, dtype=float, copy=True)
        if self.has_base:
            out[0:3] += v[0:3] * dt
            rb = Rotation.from_rotvec(v[3:6] * dt) * Rotation.from_quat(q[3:7])
            out[3:7] = rb.as_quat()
        if len(self.sph_q):
            r = Rotation.from_quat(q[self.sph_q]) * Rotation.from_rotvec(v[self.sph_v] * dt)
            out[self.sph_q] = r.as_quat()
        out[self.rev_q] += v[self.rev_v] * dt
        return out

    def difference(self, q_target: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``q_target ⊖ q`` as a velocity-shaped vector ``(nv,)``.

        Base rotation: world-frame rotation vector of ``q_target * q⁻¹``;
        spherical joints: child-frame rotation vector of ``q⁻¹ * q_target``
        (shortest arc); revolute: plain difference. Satisfies
        ``integrate(q, difference(qt, q), 1) == qt``.
        """
        out = np.zeros(self.nv)
        if self.has_base:
            out[0:3] = q_target[0:3] - q[0:3]
            out[3:6] = (Rotation.from_quat(q_target[3:7]) * Rotation.from_quat(q[3:7]).inv()).as_rotvec()
        if len(self.sph_q):
            r = Rotation.from_quat(q[self.sph_q]).inv() * Rotation.from_quat(q_target[self.sph_q])
            out[self.sph_v] = r.as_rotvec()
        out[self.rev_v] = q_target[self.rev_q] - q[self.rev_q]
        return out
