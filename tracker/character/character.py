"""The PyBullet adapter: one character body, addressed by joint and link names.

:class:`Character` is the only place that knows PyBullet's joint indices,
state conventions and quirks. Everything it returns uses the layout of
:mod:`tracker.character.layout`:

* ``q`` = base position (3) -- the base link's inertial (centre-of-mass)
  frame, which is what ``getBasePositionAndOrientation`` reports -- base
  quaternion xyzw (4), then 4 (spherical, xyzw) or 1 (revolute) per joint;
* ``v`` = base linear velocity of that point and base angular velocity, both
  in the world frame (6), then 3 (spherical: angular velocity in the joint's
  child frame, PyBullet's convention, pinned by a finite-difference test) or
  1 per joint;
* ``tau`` has ``v``'s layout; its base entries are a world-frame force at the
  base origin and a world-frame torque.

A model whose URDF is Y up (``up_axis: y``, the DeepMimic humanoid) is loaded
rotated +90° about X, and every frame is re-expressed in our axes: with
``C`` that rotation, base quaternion ``Q = Q_bullet C⁻¹``, spherical joint
quaternion ``q = C q_bullet C⁻¹``, angular velocities and torques ``w = C
w_bullet``, link orientations ``R = R_bullet C⁻¹``.

Dynamics (``mass_matrix``, ``bias_forces``, inverse dynamics, Jacobians) are
:class:`~tracker.character.character_dynamics.CharacterDynamics`; frame conversions for Y-up
models are :class:`~tracker.character.bullet_frames.BulletFrames`.

Passive joint damping (the model's per-group ``damping``, N·m·s/rad) is
PyBullet's joint damping, an explicit torque ``-d q̇`` on every DOF; it is
part of ``c(q, v)`` (``+ d v``). Being explicit it must stay small,
``d dt / I < 2`` for the lightest link's inertia ``I`` about the joint; it is
what keeps our humanoid's light hands and feet from spinning up on ground
impacts at dt = 1/60 s with the motors off.

PyBullet's default body damping (linear and angular, 0.04) is zeroed so that
the simulated body obeys ``M a + c = tau`` exactly.

Self-collision: our humanoid defaults to none (``self_collision: off``) so
that tracking a clip whose hands brush the thighs does not fight contacts;
``exclude_parent`` / ``exclude_all_parents`` turn it on (the zero pose is
free of contacts except with ancestors).

Joint torques set with :meth:`apply_torques` and wrenches set with
:meth:`apply_base_wrench` act during the next ``stepSimulation`` only; apply
them before every step.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from itertools import chain
from typing import Callable, Iterator, Iterable

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet with its build banner silenced)
import pybullet as p  # noqa: E402
from scipy.spatial.transform import Rotation

from tracker.character.bullet_frames import BulletFrames, _unit
from tracker.character.character_dynamics import CharacterDynamics
from tracker.character.layout import Layout
from tracker.character.model import Model, load_model
from tracker.character.rigid_body import RigidBodyTree
from tracker.errors import ModelError

_SELF_COLLISION_FLAGS = {
    "off": 0,
    "exclude_parent": p.URDF_USE_SELF_COLLISION | p.URDF_USE_SELF_COLLISION_EXCLUDE_PARENT,
    "exclude_all_parents": p.URDF_USE_SELF_COLLISION | p.URDF_USE_SELF_COLLISION_EXCLUDE_ALL_PARENTS,
}
_UP_TO_Z = {"z": Rotation.identity(), "y": Rotation.from_euler("x", 90.0, degrees=True)}


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product of xyzw quaternions ``(..., 4)`` (broadcast): the rotation ``a`` after ``b``."""
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack((aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz), axis=-1)


@contextmanager
def _quiet_stdout() -> Iterator[None]:
    """Send C-level writes to file descriptor 1 to /dev/null (PyBullet's URDF-importer chatter,
    e.g. "no axis element for Joint" for every spherical joint, would corrupt ``--json`` output)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class Character(CharacterDynamics, BulletFrames):
    """One articulated character in a PyBullet client. Build it with :meth:`load`.

    Attributes:
        model: the :class:`Model` it was loaded from.
        layout: the q/v/tau :class:`Layout` (joint names in URDF order).
        client_id: PyBullet physics client.
        body_id: PyBullet body unique id.
        fixed_base: whether the base is welded to the world.
        link_names: every link, base first, then PyBullet link order.
        total_mass: kg.
    """

    def __init__(self, client_id: int, body_id: int, model: Model, fixed_base: bool) -> None:
        self.client_id = client_id
        self.body_id = body_id
        self.model = model
        self.layout: Layout = model.layout
        self.fixed_base = fixed_base
        self._weld: int | None = None
        cid = client_id
        self._frame = _UP_TO_Z[model.up_axis]
        self._convert = model.up_axis != "z"
        self._frame_inv = self._frame.inv()
        self._frame_mat = self._frame.as_matrix()

        n = p.getNumJoints(body_id, physicsClientId=cid)
        infos = [p.getJointInfo(body_id, j, physicsClientId=cid) for j in range(n)]
        base_name = p.getBodyInfo(body_id, physicsClientId=cid)[0].decode()
        self.link_names: tuple[str, ...] = (base_name,) + tuple(i[12].decode() for i in infos)
        self._link_index = {name: k - 1 for k, name in enumerate(self.link_names)}
        kinds = {p.JOINT_SPHERICAL: "spherical", p.JOINT_REVOLUTE: "revolute"}
        actuated = [(i[1].decode(), kinds[i[2]], i[0]) for i in infos if i[2] in kinds]
        others = [i[1].decode() for i in infos if i[2] not in kinds and i[2] != p.JOINT_FIXED]
        if others:
            raise ModelError(f"{model.urdf}: unsupported joint types for {', '.join(others)} (spherical, revolute, fixed)")
        pb_order = tuple((name, kind) for name, kind, _ in actuated)
        lay_order = tuple((s.name, s.kind) for s in self.layout.joints)
        if sorted(pb_order) != sorted(lay_order):
            raise ModelError(f"{model.urdf}: PyBullet's joints {pb_order} differ from the model's {lay_order}")
        pb_index = {name: idx for name, _, idx in actuated}
        #: PyBullet joint index of each layout joint.
        self._pb_joint = [pb_index[s.name] for s in self.layout.joints]

        # Index maps into PyBullet's padded vectors for calculateMassMatrix / InverseDynamics (flags=1):
        # q: base 7, then 4 or 1 per joint in PyBullet order; v: base 6 + 1 pad, then 4 (3 + pad) or 1.
        iq, iv = np.zeros(self.layout.nq, int), np.zeros(self.layout.nv, int)
        iq[0:7], iv[0:6] = np.arange(7), np.arange(6)
        oq, ov = 7, 7
        for name, kind, _ in actuated:
            s = self.layout[name]
            iq[s.q] = np.arange(oq, oq + (4 if kind == "spherical" else 1))
            iv[s.v] = np.arange(ov, ov + (3 if kind == "spherical" else 1))
            oq, ov = oq + (4 if kind == "spherical" else 1), ov + (4 if kind == "spherical" else 1)
        self._iq, self._iv, self._nqb, self._nvb = iq, iv, oq, ov
        self._iv_flat = (iv[:, None] * ov + iv[None, :]).ravel()  # M_ours = M_bullet.flat[this]
        self._v_slices = [s.v for s in self.layout.joints]
        self._sph = [k for k, s in enumerate(self.layout.joints) if s.kind == "spherical"]
        self._rev = [k for k, s in enumerate(self.layout.joints) if s.kind == "revolute"]
        self._zero_acc = [0.0] * ov
        self._damping = self.layout.per_dof({s.name: model.group_of(s.name).damping for s in self.layout.joints})
        self._damped = bool(np.any(self._damping))
        self._cache_key: bytes | None = None
        self._cache_mb: np.ndarray | None = None
        self._rbd: RigidBodyTree | None = None  # built on first use (after inertias are final)
        self._vt = self._velocity_transform() if self._convert else None
        # Right-multiplication by C (and C⁻¹) as 4x4 matrices on xyzw quaternions.
        self._right_c = _quat_mul(np.eye(4), self._frame.as_quat()).T
        self._right_c_inv = _quat_mul(np.eye(4), self._frame_inv.as_quat()).T

        # The kinematic tree (including fixed joints), for the masses.
        self._parent_link = {i[12].decode(): self.link_names[i[16] + 1] for i in infos}
        self._child_of_joint = {i[1].decode(): i[12].decode() for i in infos}
        self._read_masses()
        self._joint_limits_urdf = {i[1].decode(): (i[8], i[9]) for i in infos if i[2] == p.JOINT_REVOLUTE}
        di = p.getDynamicsInfo(body_id, -1, physicsClientId=cid)
        self._base_inertial = (np.array(di[3]), Rotation.from_quat(di[4]))

    # -- construction -----------------------------------------------------------
    @classmethod
    def load(
        cls,
        client_id: int,
        model: Model | str = "humanoid",
        base_position: Iterable[float] | None = None,
        base_orientation: Iterable[float] | None = None,
        fixed_base: bool = False,
        self_collision: str | None = None,
        match_dynamics_inertia: bool | None = None,
    ) -> "Character":
        """Load a model into PyBullet client ``client_id`` and disable its default motors.

        Args:
            client_id: a connected PyBullet client.
            model: a :class:`Model`, a registered name or a model YAML path.
            base_position: world position of the base (its centre of mass), m; default: the
                model's standing height above the origin.
            base_orientation: base quaternion xyzw in our axes; default identity (facing +X).
            fixed_base: weld the base to the world with a fixed constraint (not ``useFixedBase``,
                whose bodies PyBullet's floating-base dynamics routines mis-index); the
                base velocity in ``v`` is then zero and the base rows of ``M`` and
                ``c`` give the wrench the weld supplies.
            self_collision: override the model's ``self_collision`` mode.
            match_dynamics_inertia: override the model's ``match_dynamics_inertia``.

        Returns:
            the character, in the zero pose at rest.
        """
        mdl = load_model(model)
        mode = self_collision if self_collision is not None else mdl.self_collision
        if mode not in _SELF_COLLISION_FLAGS:
            raise ModelError(f"self_collision {mode!r} is not one of: {', '.join(_SELF_COLLISION_FLAGS)}")
        flags = p.URDF_MAINTAIN_LINK_ORDER | _SELF_COLLISION_FLAGS[mode]
        if mdl.use_inertia_from_file:
            flags |= p.URDF_USE_INERTIA_FROM_FILE
        pos = np.array([0.0, 0.0, mdl.standing_root_height] if base_position is None else list(base_position), float)
        orn = np.array([0, 0, 0, 1.0] if base_orientation is None else list(base_orientation), float)
        if pos.shape != (3,) or orn.shape != (4,) or not (np.isfinite(pos).all() and np.isfinite(orn).all()):
            raise ValueError("base_position must be 3 finite numbers and base_orientation 4 (xyzw)")
        orn_b = (Rotation.from_quat(orn) * _UP_TO_Z[mdl.up_axis]).as_quat()
        with _quiet_stdout():
            body = p.loadURDF(str(mdl.urdf), pos.tolist(), orn_b.tolist(), useFixedBase=False,
                              globalScaling=mdl.global_scaling, flags=flags, physicsClientId=client_id)
        if body < 0:
            raise ModelError(f"{mdl.urdf}: PyBullet could not load the URDF")
        char = cls(client_id, body, mdl, bool(fixed_base))
        char._configure()
        if mdl.match_dynamics_inertia if match_dynamics_inertia is None else match_dynamics_inertia:
            char._match_dynamics_inertia()
        char._tree()  # the dynamics kernels loaded now rather than in the first timed step
        if fixed_base:
            # A weld to the world instead of useFixedBase: PyBullet's flags=1 dynamics mis-index fixed-base bodies.
            char._weld = p.createConstraint(body, -1, -1, -1, p.JOINT_FIXED, [0, 0, 0], [0, 0, 0], pos.tolist(),
                                            childFrameOrientation=orn_b.tolist(), physicsClientId=client_id)
            p.changeConstraint(char._weld, maxForce=1e9, physicsClientId=client_id)
        q = mdl.layout.neutral_q()
        q[0:3], q[3:7] = pos, orn / np.linalg.norm(orn)
        char.reset_state(q, np.zeros(mdl.layout.nv))
        return char

    def _configure(self) -> None:
        b, cid = self.body_id, self.client_id
        p.changeDynamics(b, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=cid)
        for k in range(-1, len(self.link_names) - 1):
            p.changeDynamics(b, k, lateralFriction=self.model.lateral_friction, jointDamping=0.0, physicsClientId=cid)
        for s, k in zip(self.layout.joints, self._pb_joint):
            p.changeDynamics(b, k, jointDamping=self.model.group_of(s.name).damping, physicsClientId=cid)
        rev = [self._pb_joint[k] for k in self._rev]
        sph = [self._pb_joint[k] for k in self._sph]
        if rev:
            p.setJointMotorControlArray(b, rev, p.VELOCITY_CONTROL, forces=[0.0] * len(rev), physicsClientId=cid)
        if sph:
            p.setJointMotorControlMultiDofArray(
                b, sph, p.POSITION_CONTROL, targetPositions=[[0.0, 0.0, 0.0, 1.0]] * len(sph),
                positionGains=[0.0] * len(sph), velocityGains=[0.0] * len(sph),
                forces=[[0.0, 0.0, 0.0]] * len(sph), physicsClientId=cid)

    def dynamics_inertia(self) -> dict[str, np.ndarray]:
        """Link -> principal inertia ``(3,)`` kg m² that ``calculateMassMatrix(flags=1)`` assumes.

        PyBullet's floating-base dynamics (DeepMimic's RBD code) rebuild each
        body's inertia from its first collision shape, in the link's inertial
        frame: boxes ``m (b² + c²) / 12 ...``, spheres ``2 m r² / 5``, and
        capsules as if along the frame's Y axis with DeepMimic's formula
        (cylinder mass ``m_c``, each hemisphere ``m_h``, cylinder length ``h``):
        ``Ixx = Izz = m_c (r²/4 + h²/12) + 2 m_h (2 r²/5 + 3 r h/8 + h²/2)``,
        ``Iyy = (m_c/2 + 4 m_h/5) r²``. Links without a collision shape are left out.
        """
        b, cid = self.body_id, self.client_id
        out = {}
        for k in range(-1, len(self.link_names) - 1):
            shapes = p.getCollisionShapeData(b, k, physicsClientId=cid)
            if not shapes:
                continue
            kind, dims = shapes[0][2], shapes[0][3]
            m = p.getDynamicsInfo(b, k, physicsClientId=cid)[0]
            if kind == p.GEOM_BOX:
                a, bb, c = dims
                inertia = [m * (bb * bb + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + bb * bb) / 12]
            elif kind == p.GEOM_SPHERE:
                inertia = [0.4 * m * dims[0] ** 2] * 3
            elif kind == p.GEOM_CAPSULE:
                h, r = dims[0], dims[1]
                v_c, v_h = np.pi * r * r * h, 2.0 / 3.0 * np.pi * r ** 3
                m_c, m_h = m * v_c / (v_c + 2 * v_h), m * v_h / (v_c + 2 * v_h)
                x = m_c * (r * r / 4 + h * h / 12) + 2 * m_h * (0.4 * r * r + 3 / 8 * r * h + 0.5 * h * h)
                inertia = [x, (0.5 * m_c + 0.8 * m_h) * r * r, x]
            else:
                raise ModelError(f"{self.model.urdf}: link {self.link_name(k)!r}: no dynamics inertia for "
                                 f"collision geometry type {kind} (box, sphere, capsule)")
            out[self.link_name(k)] = np.array(inertia, dtype=float)
        return out

    def _match_dynamics_inertia(self) -> None:
        for name, inertia in self.dynamics_inertia().items():
            p.changeDynamics(self.body_id, self.link_index(name), localInertiaDiagonal=inertia.tolist(),
                             physicsClientId=self.client_id)
        self.refresh_dynamics()

    def _read_masses(self) -> None:
        masses = [p.getDynamicsInfo(self.body_id, k, physicsClientId=self.client_id)[0]
                  for k in range(-1, len(self.link_names) - 1)]
        self.link_masses: dict[str, float] = dict(zip(self.link_names, map(float, masses)))
        self.total_mass = float(sum(masses))
        subtree = dict(self.link_masses)
        for name in reversed(self.link_names[1:]):  # children come after their parents in PyBullet order
            subtree[self._parent_link[name]] += subtree[name]
        #: Mass carried by each actuated joint: its child link and everything outboard, kg.
        self.supported_mass: dict[str, float] = {
            s.name: subtree[self._child_of_joint[s.name]] for s in self.layout.joints}

    def refresh_dynamics(self) -> None:
        """Re-read masses and inertias from PyBullet after changing them with ``changeDynamics``.

        :meth:`mass_matrix`, :meth:`bias_forces`, :attr:`link_masses`, :attr:`total_mass` and
        :attr:`supported_mass` are read once at load; call this after any change of a link's
        mass, inertia or inertial frame. (Gravity is read on every call; nothing to refresh.)
        """
        self._read_masses()
        self._rbd = None
        self._tree()

    def _tree(self) -> RigidBodyTree:
        """The rigid-body tree PyBullet simulates (masses, inertias, joint frames), built once."""
        if self._rbd is None:
            q_off = {k: s.q.start for k, s in zip(self._pb_joint, self.layout.joints)}
            v_off = {k: s.v.start for k, s in zip(self._pb_joint, self.layout.joints)}
            self._rbd = RigidBodyTree.from_pybullet(p, self.body_id, self.client_id, q_off, v_off)
        return self._rbd

    def _gravity(self) -> np.ndarray:
        """The world's gravity now ``(3,)`` m/s² (read each time, as PyBullet's own routines do)."""
        params = p.getPhysicsEngineParameters(physicsClientId=self.client_id)
        return np.array((params["gravityAccelerationX"], params["gravityAccelerationY"],
                         params["gravityAccelerationZ"]))

    def remove(self) -> None:
        """Remove the body from the client."""
        p.removeBody(self.body_id, physicsClientId=self.client_id)

    # -- names and constants ------------------------------------------------------
    @property
    def joint_names(self) -> tuple[str, ...]:
        """Actuated joints in layout order."""
        return self.layout.names

    def link_index(self, name: str) -> int:
        """PyBullet link index of ``name`` (-1 for the base), for contact queries."""
        try:
            return self._link_index[name]
        except KeyError:
            raise ModelError(f"{self.model.name}: no link {name!r} (links: {', '.join(self.link_names)})") from None

    def link_name(self, index: int) -> str:
        """Link name of PyBullet link index ``index`` (-1 for the base)."""
        return self.link_names[index + 1]

    def standing_q(self) -> np.ndarray:
        """The zero pose with the base at the model's standing height above the origin, ``(nq,)``."""
        return self.model.standing_q()

    def kp_vector(self) -> np.ndarray:
        """Default proportional gains per DOF ``(nv,)``, N·m/rad (base entries 0)."""
        return self._per_dof(lambda g: g.kp, 0.0)

    def kd_vector(self, dt: float | None = None) -> np.ndarray:
        """Default derivative gains per DOF ``(nv,)``, N·m·s/rad (base entries 0).

        ``dt`` is accepted for callers that scale gains by the time step; the
        model's ``kd`` values are absolute and do not depend on it.
        """
        return self._per_dof(lambda g: g.kd, 0.0)

    def damping_vector(self) -> np.ndarray:
        """Passive joint damping per DOF ``(nv,)``, N·m·s/rad (base entries 0); ``c`` includes ``damping * v``."""
        return self._per_dof(lambda g: g.damping, 0.0)

    def torque_limit_vector(self) -> np.ndarray:
        """Torque limit per DOF ``(nv,)``, N·m (base entries ``inf``)."""
        return self._per_dof(lambda g: g.torque_limit, np.inf)

    def supported_mass_vector(self) -> np.ndarray:
        """Outboard (supported) mass per DOF ``(nv,)``, kg; base entries hold the total mass."""
        return self.layout.per_dof(self.supported_mass, base=self.total_mass)

    def joint_limit_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-DOF ``(lower, upper)`` limits ``(nv,)``, rad.

        Revolute joints: the URDF limits. Spherical joints: the model's
        rotation-vector bounds, or ``±pi`` if it gives none. Base: ``±inf``.
        """
        lo, hi = np.full(self.layout.nv, -np.inf), np.full(self.layout.nv, np.inf)
        for s in self.layout.joints:
            if s.kind == "revolute":
                a, b = self._joint_limits_urdf[s.name]
                lo[s.v], hi[s.v] = (a, b) if a <= b else (-np.inf, np.inf)
            elif s.name in self.model.joint_limits:
                lo[s.v], hi[s.v] = self.model.joint_limits[s.name]
            else:
                lo[s.v], hi[s.v] = -np.pi, np.pi
        return lo, hi

    def _per_dof(self, value, base: float) -> np.ndarray:
        return self.layout.per_dof({j: value(self.model.group_of(j)) for j in self.layout.names}, base=base)

    # -- state --------------------------------------------------------------------
    def get_state(self) -> tuple[np.ndarray, np.ndarray]:
        """The current ``(q (nq,), v (nv,))``."""
        b, cid = self.body_id, self.client_id
        pos, orn = p.getBasePositionAndOrientation(b, physicsClientId=cid)
        lin, ang = p.getBaseVelocity(b, physicsClientId=cid)
        states = p.getJointStatesMultiDof(b, self._pb_joint, physicsClientId=cid)
        lay = self.layout
        q = np.fromiter(chain(pos, orn, *(s[0] for s in states)), float, lay.nq)
        v = np.fromiter(chain(lin, ang, *(s[1] for s in states)), float, lay.nv)
        if self._convert:
            q, v = self._from_bullet(q, v)
        return q, v

    def reset_state(self, q: np.ndarray, v: np.ndarray | None = None) -> None:
        """Teleport the character to ``q`` ``(nq,)`` with velocity ``v`` ``(nv,)`` (default zero)."""
        lay = self.layout
        q = np.asarray(q, dtype=float)
        v = np.zeros(lay.nv) if v is None else np.asarray(v, dtype=float)
        if q.shape != (lay.nq,) or v.shape != (lay.nv,):
            raise ValueError(f"expected q ({lay.nq},) and v ({lay.nv},), got {q.shape} and {v.shape}")
        _unit(q[3:7])
        if self._sph:
            _unit(q[lay.sph_q])  # raises on a zero or non-finite quaternion
        qb, vb = self._to_bullet(q, v) if self._convert else (q, v)
        b, cid = self.body_id, self.client_id
        p.resetBasePositionAndOrientation(b, qb[0:3].tolist(), qb[3:7].tolist(), physicsClientId=cid)
        p.resetBaseVelocity(b, vb[0:3].tolist(), vb[3:6].tolist(), physicsClientId=cid)
        self._move_weld(qb[0:3], qb[3:7])
        p.resetJointStatesMultiDof(
            b, self._pb_joint,
            targetValues=[qb[s.q].tolist() for s in lay.joints],
            targetVelocities=[vb[s.v].tolist() for s in lay.joints],
            physicsClientId=cid)

    def reset_base(self, base_q: np.ndarray, base_v: np.ndarray) -> None:
        """Teleport the base only: ``base_q`` = position + quaternion (7,), ``base_v`` = world lin + ang (6,)."""
        base_q, base_v = np.asarray(base_q, float), np.asarray(base_v, float)
        orn = Rotation.from_quat(base_q[3:7])
        if self._convert:
            orn = orn * self._frame
        b, cid = self.body_id, self.client_id
        p.resetBasePositionAndOrientation(b, base_q[0:3].tolist(), orn.as_quat().tolist(), physicsClientId=cid)
        p.resetBaseVelocity(b, base_v[0:3].tolist(), base_v[3:6].tolist(), physicsClientId=cid)
        self._move_weld(base_q[0:3], orn.as_quat())

    def _move_weld(self, pos: np.ndarray, orn_bullet: np.ndarray) -> None:
        if self._weld is not None:
            p.changeConstraint(self._weld, jointChildPivot=list(map(float, pos)),
                               jointChildFrameOrientation=list(map(float, orn_bullet)), maxForce=1e9,
                               physicsClientId=self.client_id)

    # -- forces -------------------------------------------------------------------
    def apply_torques(self, tau: np.ndarray) -> None:
        """Apply generalized forces ``tau`` ``(nv,)`` for the next step.

        Joint entries become joint torques (TORQUE_CONTROL); nonzero base
        entries become a world force at the base origin and a world torque
        (:meth:`apply_base_wrench`).
        """
        self.torque_command(tau)()

    def torque_command(self, tau: np.ndarray) -> Callable[[], None]:
        """:meth:`apply_torques` ``(tau)`` as a function, converted once: for applying the same
        ``tau`` before several engine steps (substeps, a replayed step) at the cost of the calls alone."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.layout.nv,):
            raise ValueError(f"expected tau ({self.layout.nv},), got {tau.shape}")
        if self._convert:
            tau = self._vec_to_bullet(tau)
        flat = tau.tolist()  # one conversion to Python floats (the same values), then list slices
        forces = [flat[sl] for sl in self._v_slices]
        b, cid, joints = self.body_id, self.client_id, self._pb_joint
        force, torque = flat[0:3], flat[3:6]
        wrench = any(x != 0.0 for x in flat[0:6])

        def apply() -> None:
            p.setJointMotorControlMultiDofArray(b, joints, p.TORQUE_CONTROL, forces=forces, physicsClientId=cid)
            if wrench:  # as apply_base_wrench: at the base origin, world frame
                pos = p.getBasePositionAndOrientation(b, physicsClientId=cid)[0]
                p.applyExternalForce(b, -1, force, pos, p.WORLD_FRAME, physicsClientId=cid)
                p.applyExternalTorque(b, -1, torque, p.WORLD_FRAME, physicsClientId=cid)

        return apply

    def apply_stable_pd(self, q_target: np.ndarray, v_target: np.ndarray, kp: np.ndarray, kd: np.ndarray,
                        tau_max: np.ndarray) -> None:
        """Servo the joints with PyBullet's own ``STABLE_PD_CONTROL`` for the next step.

        Args:
            q_target, v_target: target ``(nq,)`` and ``(nv,)`` in our layout (base entries unused).
            kp, kd, tau_max: per-DOF ``(nv,)``; PyBullet takes one gain per joint, so the
                first DOF's value of each joint is used (ours are uniform within a joint).
        """
        qb, vb = self._to_bullet(q_target, v_target) if self._convert else (q_target, v_target)
        lay = self.layout
        p.setJointMotorControlMultiDofArray(
            self.body_id, self._pb_joint, p.STABLE_PD_CONTROL,
            targetPositions=[qb[s.q].tolist() for s in lay.joints],
            targetVelocities=[vb[s.v].tolist() for s in lay.joints],
            positionGains=[float(kp[s.v.start]) for s in lay.joints],
            velocityGains=[float(kd[s.v.start]) for s in lay.joints],
            forces=[np.minimum(tau_max[s.v], 1e9).tolist() for s in lay.joints],
            physicsClientId=self.client_id)

    def apply_base_wrench(self, force: np.ndarray, torque: np.ndarray) -> None:
        """Apply a world-frame ``force`` (3,) N at the base origin and a world ``torque`` (3,) N·m, next step only."""
        b, cid = self.body_id, self.client_id
        pos = p.getBasePositionAndOrientation(b, physicsClientId=cid)[0]
        p.applyExternalForce(b, -1, list(map(float, force)), pos, p.WORLD_FRAME, physicsClientId=cid)
        p.applyExternalTorque(b, -1, list(map(float, torque)), p.WORLD_FRAME, physicsClientId=cid)

    def apply_link_force(self, link: str, force: np.ndarray) -> None:
        """Apply a world-frame ``force`` (3,) N at the centre of mass of ``link``, next step only (a push)."""
        i, cid = self.link_index(link), self.client_id
        pos = (p.getBasePositionAndOrientation(self.body_id, physicsClientId=cid)[0] if i < 0
               else p.getLinkState(self.body_id, i, physicsClientId=cid)[0])
        p.applyExternalForce(self.body_id, i, list(map(float, force)), pos, p.WORLD_FRAME, physicsClientId=cid)

    # -- kinematics -----------------------------------------------------------------
    def link_poses(self, names: Iterable[str] | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """World pose of each link's URDF frame: name -> ``(position (3,) m, quaternion xyzw (4,))``."""
        names = self.link_names if names is None else tuple(names)
        idx = [self.link_index(n) for n in names]
        b, cid = self.body_id, self.client_id
        out = {}
        links = [k for k in idx if k >= 0]
        states = dict(zip(links, p.getLinkStates(b, links, computeForwardKinematics=1, physicsClientId=cid))) \
            if links else {}
        for name, k in zip(names, idx):
            if k < 0:
                pos, orn = p.getBasePositionAndOrientation(b, physicsClientId=cid)
                rot = Rotation.from_quat(orn) * self._base_inertial[1].inv()
                pos = np.array(pos) - rot.apply(self._base_inertial[0])
            else:
                pos, rot = np.array(states[k][4]), Rotation.from_quat(states[k][5])
            if self._convert:
                rot = rot * self._frame_inv
            out[name] = (np.asarray(pos, dtype=float), rot.as_quat())
        return out

    def link_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World pose of one link frame: ``(position (3,) m, quaternion xyzw (4,))``."""
        return self.link_poses([name])[name]

    def end_effector_poses(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """End effector name -> world pose of its link frame ``(position (3,), quaternion (4,))``."""
        poses = self.link_poses(self.model.end_effectors.values())
        return {ee: poses[link] for ee, link in self.model.end_effectors.items()}

    def link_com_positions(self) -> np.ndarray:
        """World centre of mass of every link ``(L, 3)`` m, in :attr:`link_names` order."""
        b, cid = self.body_id, self.client_id
        base = p.getBasePositionAndOrientation(b, physicsClientId=cid)[0]
        states = p.getLinkStates(b, list(range(len(self.link_names) - 1)), computeForwardKinematics=1,
                                 physicsClientId=cid)
        return np.array([base] + [s[0] for s in states], dtype=float)

    def link_velocities(self) -> tuple[np.ndarray, np.ndarray]:
        """World linear velocity of every link's centre of mass and its angular velocity, ``(L, 3)`` each."""
        b, cid = self.body_id, self.client_id
        lin, ang = p.getBaseVelocity(b, physicsClientId=cid)
        states = p.getLinkStates(b, list(range(len(self.link_names) - 1)), computeLinkVelocity=1,
                                 computeForwardKinematics=1, physicsClientId=cid)
        return (np.array([lin] + [s[6] for s in states], dtype=float),
                np.array([ang] + [s[7] for s in states], dtype=float))

    def center_of_mass(self) -> np.ndarray:
        """World centre of mass of the whole character ``(3,)`` m."""
        m = np.array([self.link_masses[n] for n in self.link_names])
        return m @ self.link_com_positions() / self.total_mass

    def hold_base(self) -> int:
        """Weld the base where it is (a temporary fixed constraint); returns its id for :meth:`release_base`."""
        cid = self.client_id
        pos, orn = p.getBasePositionAndOrientation(self.body_id, physicsClientId=cid)
        weld = p.createConstraint(self.body_id, -1, -1, -1, p.JOINT_FIXED, [0, 0, 0], [0, 0, 0], pos,
                                  childFrameOrientation=orn, physicsClientId=cid)
        p.changeConstraint(weld, maxForce=1e9, physicsClientId=cid)
        return weld

    def release_base(self, weld: int) -> None:
        """Remove a weld made by :meth:`hold_base`."""
        p.removeConstraint(weld, physicsClientId=self.client_id)
