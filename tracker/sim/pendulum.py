"""A planar two-link pendulum with analytic dynamics (pure numpy).

Two hinge joints about the same horizontal axis: ``q1`` is link 1's angle from
the downward vertical, ``q2`` link 2's angle relative to link 1 (both rad,
positive counter-clockwise). Gravity ``g`` pulls along the downward vertical.
Link ``i`` has mass ``m_i``, length ``l_i``, centre of mass at ``lc_i`` from its
hinge and rotational inertia ``I_i`` about its centre of mass.

Equations of motion ``M(q) a + c(q, v) = tau`` with (``C2 = cos q2``,
``h = m2·l1·lc2·sin q2``)::

    M11 = I1 + m1 lc1² + I2 + m2 (l1² + lc2² + 2 l1 lc2 C2)
    M12 = I2 + m2 (lc2² + l1 lc2 C2)
    M22 = I2 + m2 lc2²
    c1  = −h (2 v1 v2 + v2²) + g (m1 lc1 + m2 l1) sin q1 + g m2 lc2 sin(q1 + q2)
    c2  =  h v1²                                        + g m2 lc2 sin(q1 + q2)

The layout has no base and two revolute joints (``"hinge1"``, ``"hinge2"``),
so the controllers of :mod:`tracker.control` drive it with the same code as
the humanoid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tracker.character.inertia import JointInertia
from tracker.character.layout import Layout

#: ``explicit``: ``q' = q + v·dt, v' = v + a·dt`` (forward Euler, Tan et al. 2011).
#: ``semi_implicit``: ``v' = v + a·dt, q' = q + v'·dt`` (symplectic Euler, PyBullet).
Integrator = Literal["explicit", "semi_implicit"]
INTEGRATORS: tuple[str, ...] = ("explicit", "semi_implicit")


@dataclass(frozen=True)
class PendulumParams:
    """Physical parameters of the two-link pendulum (SI units).

    The defaults are two uniform 1 kg, 1 m rods under gravity.
    """

    m1: float = 1.0
    m2: float = 1.0
    l1: float = 1.0
    l2: float = 1.0
    lc1: float = 0.5
    lc2: float = 0.5
    inertia1: float = 1.0 / 12.0
    inertia2: float = 1.0 / 12.0
    g: float = 9.81

    @classmethod
    def uniform_rods(
        cls, m1: float, m2: float, l1: float, l2: float, g: float = 9.81
    ) -> PendulumParams:
        """Two uniform thin rods: ``lc = l/2``, ``I = m l² / 12``."""
        return cls(m1, m2, l1, l2, l1 / 2, l2 / 2, m1 * l1**2 / 12, m2 * l2**2 / 12, g)

    @classmethod
    def point_masses(
        cls, m1: float, m2: float, l1: float, l2: float, g: float = 9.81
    ) -> PendulumParams:
        """Massless rods with point masses at their tips: ``lc = l``, ``I = 0``."""
        return cls(m1, m2, l1, l2, l1, l2, 0.0, 0.0, g)


def pendulum_urdf(params: PendulumParams) -> str:
    """URDF text of the same pendulum for PyBullet (load it with a fixed base and
    ``URDF_USE_INERTIA_FROM_FILE``).

    Links hang along −z from hinges about +y, so ``q = 0`` is straight down and
    PyBullet's joint angles, velocities and torques equal ours.
    """

    def link(name: str, mass: float, lc: float, inertia: float) -> str:
        # Only the inertia about the hinge axis (y) matters; keep the others tiny but valid.
        iyy = max(inertia, 1e-9)
        return (
            f'<link name="{name}"><inertial><origin xyz="0 0 {-lc!r}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{iyy!r}" iyy="{iyy!r}" izz="1e-9" ixy="0" ixz="0" iyz="0"/>'
            "</inertial></link>"
        )

    p = params
    return (
        '<?xml version="1.0"?>\n<robot name="two_link_pendulum">'
        '<link name="base"><inertial><mass value="0"/>'
        '<inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        + link("link1", p.m1, p.lc1, p.inertia1)
        + link("link2", p.m2, p.lc2, p.inertia2)
        + '<joint name="hinge1" type="continuous"><parent link="base"/><child link="link1"/>'
        '<axis xyz="0 1 0"/></joint>'
        '<joint name="hinge2" type="continuous"><parent link="link1"/><child link="link2"/>'
        f'<origin xyz="0 0 {-p.l1!r}"/><axis xyz="0 1 0"/></joint></robot>\n'
    )


class TwoLinkPendulum:
    """Analytic two-link pendulum: dynamics quantities and one-step integration.

    Satisfies :class:`tracker.control.base.Dynamics`.
    """

    JOINTS = ("hinge1", "hinge2")

    def __init__(self, params: PendulumParams | None = None) -> None:
        self.params = params or PendulumParams()
        self.layout = Layout.build([(n, "revolute") for n in self.JOINTS], has_base=False)
        p = self.params
        # Constant parts of M and the coupling coefficient.
        self._a = p.inertia1 + p.m1 * p.lc1**2 + p.inertia2 + p.m2 * (p.l1**2 + p.lc2**2)
        self._b = p.m2 * p.l1 * p.lc2
        self._d = p.inertia2 + p.m2 * p.lc2**2
        self._g1 = p.g * (p.m1 * p.lc1 + p.m2 * p.l1)
        self._g2 = p.g * p.m2 * p.lc2

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """``M(q)`` ``(2, 2)``, kg·m²."""
        bc = self._b * np.cos(q[1])
        m12 = self._d + bc
        return np.array([[self._a + 2.0 * bc, m12], [m12, self._d]])

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``c(q, v)`` ``(2,)``, N·m: Coriolis, centrifugal and gravity torques."""
        h = self._b * np.sin(q[1])
        s12 = self._g2 * np.sin(q[0] + q[1])
        return np.array(
            [
                -h * (2.0 * v[0] * v[1] + v[1] * v[1]) + self._g1 * np.sin(q[0]) + s12,
                h * v[0] * v[0] + s12,
            ]
        )

    def joint_inertia(self, q: np.ndarray) -> JointInertia:
        """Composite inertia about each hinge (``diag M``) and each link's own (Allen et al. 2007).

        Both hinges turn about the same axis (+y in :func:`pendulum_urdf`).
        """
        p = self.params
        moment = np.diag(self.mass_matrix(q)).copy()
        own = np.array([p.inertia1 + p.m1 * p.lc1**2, p.inertia2 + p.m2 * p.lc2**2])
        axis = np.tile([0.0, 1.0, 0.0], (2, 1))
        return JointInertia(moment, np.zeros((2, 3)), axis, own, np.zeros((2, 3)))

    def parent_compensation(self, tau: np.ndarray, inertia: JointInertia) -> np.ndarray:
        """Allen et al. 2007 eq. 8-10 on the chain: ``τ2 += m2 τ1 / m1`` (parallel axes)."""
        out = np.array(tau, dtype=float)
        out[1] += inertia.moment[1] * out[0] / inertia.moment[0]
        return out

    def acceleration(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Forward dynamics ``a = M⁻¹ (tau − c)``, ``(2,)`` rad/s²."""
        return np.linalg.solve(self.mass_matrix(q), np.asarray(tau, float) - self.bias_forces(q, v))

    def energy(self, q: np.ndarray, v: np.ndarray) -> float:
        """Kinetic plus potential energy, J (zero potential at the hinge height)."""
        kin = 0.5 * float(v @ self.mass_matrix(q) @ v)
        pot = -self._g1 * np.cos(q[0]) - self._g2 * np.cos(q[0] + q[1])
        return kin + float(pot)

    def step(
        self,
        q: np.ndarray,
        v: np.ndarray,
        tau: np.ndarray,
        dt: float,
        integrator: Integrator = "semi_implicit",
    ) -> tuple[np.ndarray, np.ndarray]:
        """Advance ``(q, v)`` by ``dt`` under generalized force ``tau``.

        Returns:
            New ``(q, v)``, each ``(2,)``; the inputs are not modified.
        """
        a = self.acceleration(q, v, tau)
        v_new = v + a * dt
        if integrator == "semi_implicit":
            return q + v_new * dt, v_new
        if integrator == "explicit":
            return q + v * dt, v_new
        raise ValueError(f"integrator {integrator!r} is not one of: {', '.join(INTEGRATORS)}")
