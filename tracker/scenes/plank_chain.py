"""A chain of planks hinged end to end on a fixed post, in PyBullet (Weinstein et al. 2008 Figs. 1, 7).

Choices (the paper gives no sizes): ``n`` planks of 0.5 m × 0.2 m × 0.04 m,
1 kg each, hinged about the world Y axis, the first one at a post 2 m above
the ground; joint angle 0 everywhere is the horizontal chain along +X and a
positive angle turns the plank down (the chain hangs straight down at
``θ = (π/2, 0, ..., 0)``). An optional block (0.2 m cube, default 3 kg) is
welded on the last plank's far end by a fixed joint, so that the simulated
body is the same whether or not the controller's model knows about it.

The controller's dynamics (``M``, ``c``) come from a *model* copy of the
chain loaded in its own DIRECT client: with the block (the block is part of
the inverse dynamics) or without it (it is not; the chain then has to fight
an unknown load, the paper's Fig. 1 left). Both use PyBullet's
``calculateMassMatrix`` and ``calculateInverseDynamics`` on the fixed-base
chain, whose joints are all revolute.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet quietly)
import pybullet as p  # noqa: E402

from tracker.character.layout import Layout  # noqa: E402
from tracker.control.base import Gains, State, Target  # noqa: E402
from tracker.control.registry import create as create_controller  # noqa: E402

PLANK = (0.5, 0.2, 0.04)
PLANK_MASS = 1.0
BLOCK_SIZE = 0.2
POST_HEIGHT = 2.0


def _box_inertia(m: float, x: float, y: float, z: float) -> tuple[float, float, float]:
    return m * (y * y + z * z) / 12.0, m * (x * x + z * z) / 12.0, m * (x * x + y * y) / 12.0


def chain_urdf(n: int, block_mass: float = 0.0) -> str:
    """URDF text of ``n`` planks (and a block of ``block_mass`` kg on the tip if > 0)."""
    lx, ly, lz = PLANK
    ix, iy, iz = _box_inertia(PLANK_MASS, lx, ly, lz)
    parts = ['<?xml version="1.0"?>\n<robot name="plank_chain">',
             '<link name="post"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" '
             'izz="0"/></inertial></link>']
    plank = (f'<inertial><origin xyz="{lx / 2} 0 0"/><mass value="{PLANK_MASS}"/><inertia ixx="{ix}" ixy="0" '
             f'ixz="0" iyy="{iy}" iyz="0" izz="{iz}"/></inertial><collision><origin xyz="{lx / 2} 0 0"/>'
             f'<geometry><box size="{lx} {ly} {lz}"/></geometry></collision><visual><origin xyz="{lx / 2} 0 0"/>'
             f'<geometry><box size="{lx} {ly} {lz}"/></geometry></visual>')
    for k in range(n):
        parent = "post" if k == 0 else f"plank{k - 1}"
        x = 0.0 if k == 0 else lx
        parts.append(f'<link name="plank{k}">{plank}</link>')
        parts.append(f'<joint name="j{k}" type="revolute"><parent link="{parent}"/><child link="plank{k}"/>'
                     f'<origin xyz="{x} 0 0"/><axis xyz="0 1 0"/>'
                     f'<limit lower="-10" upper="10" effort="1e9" velocity="1e9"/></joint>')
    if block_mass > 0:
        s = BLOCK_SIZE
        bi = _box_inertia(block_mass, s, s, s)[0]
        parts.append(f'<link name="block"><inertial><mass value="{block_mass}"/><inertia ixx="{bi}" ixy="0" '
                     f'ixz="0" iyy="{bi}" iyz="0" izz="{bi}"/></inertial><collision><geometry>'
                     f'<box size="{s} {s} {s}"/></geometry></collision><visual><geometry><box size="{s} {s} {s}"/>'
                     f'</geometry></visual></link>')
        parts.append(f'<joint name="weld" type="fixed"><parent link="plank{n - 1}"/><child link="block"/>'
                     f'<origin xyz="{lx - s / 2} 0 {lz / 2 + s / 2}"/></joint>')
    parts.append("</robot>\n")
    return "\n".join(parts)


def _load(client: int, text: str) -> int:
    fd, path = tempfile.mkstemp(suffix=".urdf", prefix="plank_chain_")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        body = p.loadURDF(path, [0, 0, POST_HEIGHT], useFixedBase=True,
                          flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    finally:
        os.unlink(path)
    for k in range(-1, p.getNumJoints(body, physicsClientId=client)):
        p.changeDynamics(body, k, linearDamping=0.0, angularDamping=0.0, jointDamping=0.0, physicsClientId=client)
    return body


class ChainDynamics:
    """``M(q)``, ``c(q, v)`` of a fixed-base plank chain, from PyBullet (its own DIRECT client)."""

    def __init__(self, n: int, block_mass: float = 0.0) -> None:
        self.client = p.connect(p.DIRECT)
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)
        self.body = _load(self.client, chain_urdf(n, block_mass))
        self.n = n

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return np.array(p.calculateMassMatrix(self.body, list(map(float, q)), physicsClientId=self.client))

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.array(p.calculateInverseDynamics(self.body, list(map(float, q)), list(map(float, v)),
                                                   [0.0] * self.n, physicsClientId=self.client))

    def close(self) -> None:
        if p.isConnected(self.client):
            p.disconnect(self.client)


@dataclass(frozen=True)
class ChainRun:
    """One run: times ``(N+1,)``, angles and velocities ``(N+1, n)``, predicted errors ``(N, n)``, tip ``(N+1, 3)``."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    predicted: np.ndarray
    tip: np.ndarray
    target: np.ndarray


def run_chain(n: int, target: np.ndarray, *, controller: str = "analytic_pd", kp: float = 100.0, dt: float = 1 / 60,
              duration: float = 4.0, block_mass: float = 0.0, block_in_model: bool = True,
              q0: np.ndarray | None = None) -> ChainRun:
    """Servo the chain from ``q0`` (default: hanging straight down, at rest) to one fixed ``target``.

    Args:
        n: number of planks (joints).
        target: ``(n,)`` joint angles, rad; held for the whole run (no in-betweens).
        controller: ``analytic_pd`` (acceleration gain ``kp``, 1/s², the same on every joint) or
            ``pd`` (torque gains ``kp·M_kk`` at the target pose, ``kd`` critical for them).
        kp: acceleration stiffness ``k_p``, 1/s².
        dt: time step, s.
        duration: s.
        block_mass: kg of the block on the tip (0: none).
        block_in_model: whether the controller's model includes the block.
    """
    target = np.asarray(target, dtype=float)
    client = p.connect(p.DIRECT)
    model = ChainDynamics(n, block_mass if block_in_model else 0.0)
    try:
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        p.setPhysicsEngineParameter(fixedTimeStep=dt, numSubSteps=0, physicsClientId=client)
        body = _load(client, chain_urdf(n, block_mass))
        joints = list(range(n))
        p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * n, physicsClientId=client)
        q = np.zeros(n) if q0 is None else np.asarray(q0, dtype=float)
        if q0 is None:
            q[0] = np.pi / 2
        for k in joints:
            p.resetJointState(body, k, float(q[k]), 0.0, physicsClientId=client)
        lay = Layout.build([(f"j{k}", "revolute") for k in joints], has_base=False)
        if controller == "analytic_pd":
            ctrl = create_controller("analytic_pd", layout=lay, dynamics=model, gain_units="acceleration")
            gains = Gains(np.full(n, kp), np.zeros(n))
        else:
            ctrl = create_controller(controller, layout=lay, dynamics=model)
            m_kk = model.mass_matrix(target).diagonal()
            gains = Gains(kp * m_kk, 2.0 * np.sqrt(kp) * m_kk)
        zero = np.zeros(n)
        tgt = Target(target, zero, target, zero)
        steps = int(round(duration / dt))
        qs, vs, pred, tips = [q.copy()], [zero.copy()], [], []
        tip_link = n - 1

        def tip() -> np.ndarray:
            st = p.getLinkState(body, tip_link, computeForwardKinematics=1, physicsClientId=client)
            pos, orn = np.array(st[4]), st[5]
            return pos + np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3) @ np.array([PLANK[0], 0, 0])

        tips.append(tip())
        v = zero.copy()
        for _ in range(steps):
            tau = ctrl.torques(State(q, v), tgt, gains, dt)
            pred.append(np.array(getattr(ctrl, "predicted_error", np.full(n, np.nan))))
            p.setJointMotorControlArray(body, joints, p.TORQUE_CONTROL, forces=list(map(float, tau)),
                                        physicsClientId=client)
            p.stepSimulation(physicsClientId=client)
            states = p.getJointStates(body, joints, physicsClientId=client)
            q = np.array([s[0] for s in states])
            v = np.array([s[1] for s in states])
            qs.append(q)
            vs.append(v)
            tips.append(tip())
        return ChainRun(np.arange(steps + 1) * dt, np.array(qs), np.array(vs), np.array(pred), np.array(tips),
                        target)
    finally:
        model.close()
        p.disconnect(client)


def horizontal_target(n: int) -> np.ndarray:
    """Every plank horizontal, along +X."""
    return np.zeros(n)


def curled_target(n: int, curl: float = -0.6) -> np.ndarray:
    """The first plank horizontal, each next one turned up by ``-curl`` rad (a curl over the post)."""
    t = np.full(n, curl)
    t[0] = 0.0
    return t
