"""The character's dynamics: ``M(q)``, ``c(q, v)``, inverse dynamics and Jacobians, in our layout.

A mixin of :class:`~tracker.character.character.Character` (it uses the body's state, its
rigid-body tree and the frame conversions of :class:`~tracker.character.bullet_frames.BulletFrames`).

Dynamics. ``mass_matrix`` and ``bias_forces`` are our own compiled CRBA and
RNEA (:mod:`tracker.character.rigid_body`) on the tree PyBullet simulates,
read from PyBullet after loading (:meth:`Character.refresh_dynamics` re-reads
it after a ``changeDynamics``): about 10 µs for both on our humanoid, against
~135 µs for PyBullet's own calls (``scripts/bench.py --only dynamics``).
``mass_matrix_pybullet`` and ``bias_forces_pybullet`` keep PyBullet's
``calculateMassMatrix`` / ``calculateInverseDynamics`` with ``flags=1`` (the
floating-base, spherical-joint capable path, DeepMimic's RBD code) as a
cross-check; the two agree to 1e-12 wherever PyBullet's path is right (on
DeepMimic they differ by the 0.1 g base link PyBullet's path drops). Its base
DOFs are already ordered (linear, angular) in the world frame and its joint
DOFs use the same frames as the joint state, so the velocity transform is the
identity (up to ``C`` for Y-up models) and the conversion is an index
selection that drops the padding entries (quaternion slots). Four findings
about that path (PyBullet 3.2.7), each pinned by a test in
``tests/character/test_dynamics.py`` against the simulator's own response to
torques:

* it ignores the URDF inertia and rebuilds each body's inertia from its first
  collision primitive (exact for boxes and spheres; it also drops the DeepMimic
  base's 0.1 g); our humanoid is built from boxes and a sphere so both agree
  (see ``scripts/build_humanoid.py``). Our own dynamics read the inertias PyBullet
  simulates, so they are right for the DeepMimic humanoid too;
* its floating-base velocity-product term treats the world angular velocity
  ``w`` as a body-frame one; the bias force is off by ``M[:, 0:3] ((R w) x v
  - w x v)`` (``R`` the base rotation, ``v`` the base linear velocity), which
  :meth:`Character.bias_forces` adds back;
* ``calculateInverseDynamics`` ignores its acceleration argument (it returns
  ``c(q, v)`` for any ``a``), so :meth:`Character.inverse_dynamics` is
  ``M a + c``; the tests check it against the simulator instead;
* bodies loaded with ``useFixedBase`` are mis-indexed (the result is
  garbage), so ``fixed_base=True`` welds a floating base to the world with a
  fixed constraint instead.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet with its build banner silenced)
import pybullet as p  # noqa: E402

from tracker.character.composite import joint_inertia, parent_compensation
from tracker.character.inertia import JointInertia


def _cross(a, b) -> tuple[float, float, float]:
    """``a x b`` for 3-vectors, as floats (np.cross costs ~30 µs per call on 3-vectors)."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _root_term(quat: np.ndarray, w: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``(R w) x v - w x v`` with ``R`` the rotation of the unit quaternion ``quat`` xyzw, ``(3,)``."""
    u, s = quat[0:3], float(quat[3])
    t = _cross(u, w)
    t = (t[0] + s * w[0], t[1] + s * w[1], t[2] + s * w[2])
    c = _cross(u, t)
    rw = (w[0] + 2.0 * c[0], w[1] + 2.0 * c[1], w[2] + 2.0 * c[2])  # R w = w + 2 u x (u x w + s w)
    a, b = _cross(rw, v), _cross(w, v)
    return np.array((a[0] - b[0], a[1] - b[1], a[2] - b[2]))


class CharacterDynamics:
    """Dynamics and Jacobians of a :class:`~tracker.character.character.Character` (a mixin)."""

    # -- dynamics -----------------------------------------------------------------
    def mass_matrix(self, q: np.ndarray | None = None) -> np.ndarray:
        """Joint-space inertia ``M(q)`` ``(nv, nv)`` in our layout (default: at the current state)."""
        if q is None:
            q = self.get_state()[0]
        q = np.asarray(q, dtype=float)
        self._check_shapes(q)
        if not self._convert:
            return self._tree().mass_matrix(q)
        t = self._vt
        return t.T @ self._tree().mass_matrix(self._q_to_bullet(q)) @ t

    def bias_forces(self, q: np.ndarray | None = None, v: np.ndarray | None = None) -> np.ndarray:
        """Coriolis, centrifugal, gravity and joint-damping forces ``c(q, v)`` ``(nv,)`` (default: current state)."""
        if q is None or v is None:
            q0, v0 = self.get_state()
            q = q0 if q is None else q
            v = v0 if v is None else v
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        self._check_shapes(q, v)
        if self._convert:
            c = self._vec_from_bullet(self._tree().bias_forces(self._q_to_bullet(q), self._vec_to_bullet(v),
                                                               self._gravity()))
        else:
            c = self._tree().bias_forces(q, v, self._gravity())
        return c + self._damping * v if self._damped else c

    def joint_inertia(self, q: np.ndarray | None = None) -> JointInertia:
        """Composite inertia about every DOF's axis, world axes and ball-joint tensors, in our layout.

        Allen et al. 2007's recursion (:mod:`tracker.character.composite`); ``moment`` equals the
        diagonal of :meth:`mass_matrix` (default: at the current state).
        """
        if q is None:
            q = self.get_state()[0]
        q = np.asarray(q, dtype=float)
        self._check_shapes(q)
        if not self._convert:
            return joint_inertia(self._tree(), q)
        ji = joint_inertia(self._tree(), self._q_to_bullet(q))
        moment, block, axis = ji.moment.copy(), ji.block.copy(), ji.axis.copy()
        own, own_block = ji.own.copy(), ji.own_block.copy()
        ct = self._frame_mat.T  # v_bullet = C^T v on a ball joint's block
        for k in self._sph:
            sl = self._v_slices[k]
            b, ob = ct.T @ ji.block[sl] @ ct, ct.T @ ji.own_block[sl] @ ct
            block[sl], moment[sl], axis[sl] = b, np.diag(b), ct.T @ ji.axis[sl]
            own_block[sl], own[sl] = ob, np.diag(ob)
        return JointInertia(moment, block, axis, own, own_block)

    def parent_compensation(self, tau: np.ndarray, inertia: JointInertia) -> np.ndarray:
        """Allen et al. 2007's parent-torque compensation of ``tau`` ``(nv,)`` in our layout
        (:func:`tracker.character.composite.parent_compensation`; axes as :meth:`joint_inertia` gives)."""
        return parent_compensation(self._tree(), tau, inertia)

    def _check_shapes(self, q: np.ndarray, v: np.ndarray | None = None) -> None:
        lay = self.layout
        if q.shape != (lay.nq,):
            raise ValueError(f"expected q ({lay.nq},), got shape {q.shape}")
        if v is not None and v.shape != (lay.nv,):
            raise ValueError(f"expected v ({lay.nv},), got shape {v.shape}")

    def mass_matrix_pybullet(self, q: np.ndarray | None = None) -> np.ndarray:
        """:meth:`mass_matrix` by PyBullet's ``calculateMassMatrix(flags=1)`` (a cross-check; see the module notes)."""
        if q is None:
            q = self.get_state()[0]
        mb = self._bullet_mass_matrix(np.asarray(q, dtype=float))
        nv = self.layout.nv
        m = mb.ravel()[self._iv_flat].reshape(nv, nv)
        if self._convert:
            t = self._vt
            m = t.T @ m @ t
        return m

    def bias_forces_pybullet(self, q: np.ndarray | None = None, v: np.ndarray | None = None) -> np.ndarray:
        """:meth:`bias_forces` by PyBullet (a cross-check).

        PyBullet's ``calculateInverseDynamics(flags=1)`` (which returns the
        rigid-body bias whatever acceleration it is given), plus the root
        velocity-product correction described in the module docstring, plus
        the passive joint damping ``damping_vector() * v``.
        """
        if q is None or v is None:
            q0, v0 = self.get_state()
            q = q0 if q is None else q
            v = v0 if v is None else v
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        qb, vb = self._to_bullet(q, v) if self._convert else (q, v)
        qd = np.zeros(self._nvb)
        qd[self._iv] = vb
        qbp = np.empty(self._nqb)
        qbp[self._iq] = qb
        c_b = np.array(p.calculateInverseDynamics(self.body_id, qbp.tolist(), qd.tolist(), self._zero_acc, flags=1,
                                                  physicsClientId=self.client_id))
        w, lin = vb[3:6], vb[0:3]
        if np.any(w) and np.any(lin):
            c_b = c_b + self._bullet_mass_matrix(q)[:, 0:3] @ _root_term(qb[3:7], w, lin)
        c = c_b[self._iv]
        if self._convert:
            c = self._vec_from_bullet(c)
        return c + self._damping * v if self._damped else c

    def inverse_dynamics(self, a: np.ndarray, q: np.ndarray | None = None, v: np.ndarray | None = None) -> np.ndarray:
        """Generalized forces ``M(q) a + c(q, v)`` ``(nv,)`` that produce acceleration ``a`` ``(nv,)``."""
        if q is None or v is None:
            q0, v0 = self.get_state()
            q = q0 if q is None else q
            v = v0 if v is None else v
        return self.mass_matrix(q) @ np.asarray(a, dtype=float) + self.bias_forces(q, v)

    def _bullet_mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """PyBullet's padded mass matrix at our ``q``, cached for the last ``q``."""
        key = q.tobytes()
        if key != self._cache_key:
            qb = self._to_bullet(q, None)[0] if self._convert else q
            qbp = np.empty(self._nqb)
            qbp[self._iq] = qb
            rows = p.calculateMassMatrix(self.body_id, qbp.tolist(), flags=1, physicsClientId=self.client_id)
            n = self._nvb
            self._cache_mb = np.fromiter(chain.from_iterable(rows), float, n * n).reshape(n, n)
            self._cache_key = key
        return self._cache_mb

    # -- Jacobians (tracker.character.jacobians) ---------------------------------------
    def point_jacobian(self, link: str, offset: Iterable[float] = (0.0, 0.0, 0.0),
                       q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A point of ``link`` and its Jacobians at ``q`` (default: the current state).

        Args:
            link: link name.
            offset: the point in the link's centre-of-mass frame (PyBullet's), m.

        Returns:
            ``(x (3,), J_lin (3, nv), J_ang (3, nv))`` world frame, our ``v`` layout.
        """
        from tracker.character.jacobians import point_jacobian

        body = self.link_index(link) + 1
        q = self._dyn_q(q)
        x, jl, ja = point_jacobian(self._tree(), q, body, np.asarray(offset, dtype=float))
        if self._convert:
            jl, ja = jl @ self._vt, ja @ self._vt
        return x, jl, ja

    def com_jacobian(self, q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The centre of mass ``(3,)`` m and its Jacobian ``(3, nv)`` at ``q`` (default: now)."""
        from tracker.character.jacobians import com_jacobian

        c, jc = com_jacobian(self._tree(), self._dyn_q(q))
        return c, (jc @ self._vt if self._convert else jc)

    def jacobian_kernel_input(self, links: Iterable[str]) -> tuple | None:
        """``(tree, bodies)`` for calling the compiled Jacobian kernels (:mod:`tracker.character.
        jacobians`) on our ``q`` directly, as per-step code does to skip this class's checks and
        conversions; None when the model's frames differ from PyBullet's (Y-up models), where the
        kernels' columns need converting (:meth:`com_and_point_jacobians` does it)."""
        if self._convert:
            return None
        links = links if type(links) is tuple else tuple(links)
        cache = self.__dict__.setdefault("_bodies_of", {})
        bodies = cache.get(links)
        if bodies is None:
            bodies = cache[links] = np.array([self.link_index(n) + 1 for n in links], dtype=np.int64)
        return self._rbd if self._rbd is not None else self._tree(), bodies

    def com_and_point_jacobians(self, links: Iterable[str], q: np.ndarray | None = None) -> tuple:
        """CoM and link centre-of-mass Jacobians in one kinematics pass (what balance needs per step):
        ``(c (3,), J_c (3, nv), x (n, 3), J_lin (n, 3, nv), J_ang (n, 3, nv))`` for ``links``."""
        from tracker.character.jacobians import com_and_point_jacobians

        links = tuple(links)
        cache = self.__dict__.setdefault("_bodies_of", {})
        bodies = cache.get(links)
        if bodies is None:
            bodies = cache[links] = np.array([self.link_index(n) + 1 for n in links], dtype=np.int64)
        c, jc, x, jl, ja = com_and_point_jacobians(self._tree(), self._dyn_q(q), bodies)
        if self._convert:
            jc, jl, ja = jc @ self._vt, jl @ self._vt, ja @ self._vt
        return c, jc, x, jl, ja

    def com_velocity(self, q: np.ndarray | None = None, v: np.ndarray | None = None) -> np.ndarray:
        """Velocity of the centre of mass ``J_c(q) v`` ``(3,)`` m/s (default: the current state)."""
        if q is None or v is None:
            q0, v0 = self.get_state()
            q = q0 if q is None else q
            v = v0 if v is None else v
        return self.com_jacobian(q)[1] @ np.asarray(v, dtype=float)

    def _dyn_q(self, q: np.ndarray | None) -> np.ndarray:
        """``q`` (default: now) checked and converted to PyBullet's frames for the kernels."""
        if q is None:
            q = self.get_state()[0]
        q = np.asarray(q, dtype=float)
        self._check_shapes(q)
        return self._q_to_bullet(q) if self._convert else q
