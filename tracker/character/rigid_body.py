"""Our own joint-space dynamics of a PyBullet multibody: ``M(q)`` (CRBA) and ``c(q, v)`` (RNEA).

Why not PyBullet's ``calculateMassMatrix`` / ``calculateInverseDynamics``?
They are right (the tests compare both), but each call goes through PyBullet's
command queue and returns nested Python lists, ~60 µs for the mass matrix plus
~30 µs to turn its 55×55 padded list into an array, and ~40 µs for the bias
forces: more than PyBullet's whole ``STABLE_PD_CONTROL`` step. Compiled with
numba, the two algorithms below take a few microseconds together, which is
what lets SPD in Python run at about the speed of PyBullet's own stable PD
(``scripts/bench.py --only sim``).

The tree is read from PyBullet after loading (:meth:`RigidBodyTree.from_pybullet`),
so it is the system PyBullet integrates, whatever the URDF says: joint frames
(``getJointInfo``: the joint frame relative to the parent's centre-of-mass
frame, the axis in the joint frame) and inertias (``getDynamicsInfo``: mass,
principal moments and the inertial frame relative to the link frame). Bodies are
in PyBullet's link order (parents first), body 0 the base.

Conventions are PyBullet's state conventions in our ``v`` order
(:mod:`tracker.character.layout`): base position and orientation are those of
the base's centre-of-mass frame; base velocity is the world linear velocity of
that point and the world angular velocity; a spherical joint's quaternion
rotates the child link frame relative to the joint frame, and its velocity and
torque are in the child link frame. The base's generalized force is a world
force at the base's centre of mass and a world torque.

The algorithms work in the world frame with spatial vectors taken about the
base's centre of mass ``P`` (motion ``(ω, v_P)``, force ``(n_P, f)``):

* CRBA: each DOF's motion subspace ``s`` is ``(u, u × (P − r))`` for a
  rotation about the unit axis ``u`` through the pivot ``r`` (the base's
  linear DOFs are ``(0, e_i)``, its angular ones ``(e_i, 0)``). The composite
  inertia of a subtree about ``P`` is the plain sum of its bodies' spatial
  inertias, and ``M[k, l] = s_lᵀ I_C(body of k) s_k`` for ``l`` on the path
  from ``k``'s joint to the root.
* RNEA with zero joint accelerations: velocities and accelerations of the
  centres of mass outward (gravity as a base acceleration ``−g``), Newton-Euler
  forces, and subtree sums of force and moment inward; ``c_k = s_kᵀ (n, f)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: Joint types in :attr:`RigidBodyTree.itab`.
BASE, REVOLUTE, SPHERICAL, FIXED = 0, 1, 2, 3
# Columns of ftab.
_D, _RPJ, _AX, _E, _RCI, _M, _I = 0, 3, 12, 15, 18, 27, 28
_NF = 31


@dataclass(frozen=True)
class RigidBodyTree:
    """The multibody as flat arrays for the compiled kernels.

    Attributes:
        itab: ``(B, 4)`` int: parent body (-1 for the base), joint type
            (:data:`BASE`, :data:`REVOLUTE`, :data:`SPHERICAL`, :data:`FIXED`),
            offset of the joint in ``q`` and in ``v``.
        ftab: ``(B, 31)`` float: pivot in the parent's centre-of-mass frame (3),
            joint frame orientation in that frame (3×3, row-major), joint axis in
            the joint frame (3), the centre of mass in the link frame (3), the
            inertial frame's orientation in the link frame (3×3), mass (1),
            principal moments of inertia (3).
        nq, nv: sizes of ``q`` and ``v``.
    """

    itab: np.ndarray
    ftab: np.ndarray
    nq: int
    nv: int

    @classmethod
    def from_pybullet(cls, p, body: int, client: int, q_offset: dict[int, int],
                      v_offset: dict[int, int]) -> RigidBodyTree:
        """Read the tree of ``body`` from PyBullet.

        Args:
            p: the ``pybullet`` module.
            q_offset, v_offset: PyBullet joint index -> offset of that joint in our ``q`` / ``v``
                (actuated joints only; other joints must be fixed).
        """
        n = p.getNumJoints(body, physicsClientId=client)
        itab = np.zeros((n + 1, 4), dtype=np.int64)
        ftab = np.zeros((n + 1, _NF))
        kinds = {p.JOINT_REVOLUTE: REVOLUTE, p.JOINT_SPHERICAL: SPHERICAL, p.JOINT_FIXED: FIXED}
        itab[0] = (-1, BASE, 0, 0)
        for b in range(n + 1):
            di = p.getDynamicsInfo(body, b - 1, physicsClientId=client)
            ftab[b, _M] = di[0]
            ftab[b, _I:_I + 3] = di[2]
            ftab[b, _E:_E + 3] = di[3]
            ftab[b, _RCI:_RCI + 9] = np.array(p.getMatrixFromQuaternion(di[4])).reshape(9)
            if b == 0:
                continue
            ji = p.getJointInfo(body, b - 1, physicsClientId=client)
            kind = kinds.get(ji[2])
            if kind is None:
                raise ValueError(f"joint {ji[1].decode()}: PyBullet joint type {ji[2]} is not supported")
            if kind != FIXED and (b - 1) not in q_offset:
                raise ValueError(f"joint {ji[1].decode()} is not in the layout")
            itab[b] = (ji[16] + 1, kind, q_offset.get(b - 1, -1), v_offset.get(b - 1, -1))
            ftab[b, _D:_D + 3] = ji[14]
            # getJointInfo reports parentFrameOrn inverted (Bullet stores the parent-to-joint rotation
            # of the frame's axes): the joint frame's orientation in the parent's frame is its transpose.
            # Invisible on frames turned by 0 or 180 degrees (our humanoid, DeepMimic), pinned by
            # tests/character/test_jacobians.py on KUKA's iiwa, whose joint frames turn by 90 degrees.
            ftab[b, _RPJ:_RPJ + 9] = np.array(p.getMatrixFromQuaternion(ji[15])).reshape(3, 3).T.reshape(9)
            ftab[b, _AX:_AX + 3] = ji[13]
        kinds = list(itab[1:, 1])
        nq = 7 + 4 * kinds.count(SPHERICAL) + kinds.count(REVOLUTE)
        nv = 6 + 3 * kinds.count(SPHERICAL) + kinds.count(REVOLUTE)
        for a in (itab, ftab):
            a.setflags(write=False)
        tree = cls(itab, ftab, nq, nv)
        tree.warm_up()
        return tree

    def warm_up(self) -> None:
        """Load (or compile, on the first run after installing) the kernels now, not in a timed loop."""
        q = np.zeros(self.nq)
        q[6] = 1.0
        for b in range(1, self.itab.shape[0]):
            if self.itab[b, 1] == SPHERICAL:
                q[self.itab[b, 2] + 3] = 1.0
        self.mass_matrix(q)
        self.bias_forces(q, np.zeros(self.nv), np.zeros(3))

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Joint-space inertia ``M(q)`` ``(nv, nv)``.

        Raises:
            ValueError: ``q`` is not ``(nq,)`` (the kernels do no bounds checks).
        """
        return _mass_matrix(self.itab, self.ftab, _kernel_input(q, self.nq, "q"), self.nv)

    def bias_forces(self, q: np.ndarray, v: np.ndarray, gravity: np.ndarray) -> np.ndarray:
        """Coriolis, centrifugal and gravity forces ``c(q, v)`` ``(nv,)`` (no joint damping) under world
        ``gravity`` ``(3,)`` m/s².

        Raises:
            ValueError: ``q``, ``v`` or ``gravity`` has the wrong shape.
        """
        return _bias(self.itab, self.ftab, _kernel_input(q, self.nq, "q"), _kernel_input(v, self.nv, "v"),
                     _kernel_input(gravity, 3, "gravity"))


def _kernel_input(x, n: int, name: str) -> np.ndarray:
    """``x`` as a writable, contiguous float64 ``(n,)`` array (one compiled signature for every caller)."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (n,):
        flags = x.flags  # the usual case, per step: already such an array (np.require costs ~2 µs)
        if flags.c_contiguous and flags.writeable:
            return x
    x = np.require(x, np.float64, "CW")
    if x.shape != (n,):
        raise ValueError(f"expected {name} ({n},), got shape {x.shape}")
    return x


def _jit(fn):
    """``numba.njit`` with an on-disk cache where one can be written, else compiled in memory.

    numba caches next to this module, or in ``~/.cache/numba`` (or ``NUMBA_CACHE_DIR``) when the
    package folder is read-only; with neither writable it would refuse to decorate at all.
    """
    try:
        return njit(cache=True)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return njit(fn)


# --- compiled kernels -------------------------------------------------------------------------------
# Written with scalar loops: numba turns small-array temporaries and 3x3 ``@`` into allocations and
# BLAS calls that cost more than the arithmetic.

@_jit
def _quat_matrix(x, y, z, w, r):
    n = x * x + y * y + z * z + w * w
    s = 2.0 / n if n > 0.0 else 0.0
    r[0, 0] = 1.0 - s * (y * y + z * z)
    r[0, 1] = s * (x * y - z * w)
    r[0, 2] = s * (x * z + y * w)
    r[1, 0] = s * (x * y + z * w)
    r[1, 1] = 1.0 - s * (x * x + z * z)
    r[1, 2] = s * (y * z - x * w)
    r[2, 0] = s * (x * z - y * w)
    r[2, 1] = s * (y * z + x * w)
    r[2, 2] = 1.0 - s * (x * x + y * y)


@_jit
def _axis_angle_matrix(ftab, b, angle, r):
    c, s = np.cos(angle), np.sin(angle)
    t = 1.0 - c
    x, y, z = ftab[b, _AX], ftab[b, _AX + 1], ftab[b, _AX + 2]
    r[0, 0] = t * x * x + c
    r[0, 1] = t * x * y - s * z
    r[0, 2] = t * x * z + s * y
    r[1, 0] = t * x * y + s * z
    r[1, 1] = t * y * y + c
    r[1, 2] = t * y * z - s * x
    r[2, 0] = t * x * z - s * y
    r[2, 1] = t * y * z + s * x
    r[2, 2] = t * z * z + c


@_jit
def _mul33(a, b, out):
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@_jit
def _mul33_tab(a, ftab, b, col, out):
    """``out = a @ ftab[b, col:col+9].reshape(3, 3)``."""
    for i in range(3):
        for j in range(3):
            out[i, j] = (a[i, 0] * ftab[b, col + j] + a[i, 1] * ftab[b, col + 3 + j]
                         + a[i, 2] * ftab[b, col + 6 + j])


@_jit
def _kinematics(itab, ftab, q, rl, rc, piv, x):
    """World link-frame rotations, centre-of-mass frame rotations, pivots and centres of mass."""
    nb = itab.shape[0]
    frame = np.empty((3, 3))
    rj = np.empty((3, 3))
    _quat_matrix(q[3], q[4], q[5], q[6], rc[0])
    for i in range(3):
        x[0, i] = q[i]
        piv[0, i] = q[i]
        for j in range(3):  # rl = rc @ Rci^T
            rl[0, i, j] = (rc[0, i, 0] * ftab[0, _RCI + 3 * j] + rc[0, i, 1] * ftab[0, _RCI + 3 * j + 1]
                           + rc[0, i, 2] * ftab[0, _RCI + 3 * j + 2])
    for b in range(1, nb):
        par, kind, qi = itab[b, 0], itab[b, 1], itab[b, 2]
        _mul33_tab(rc[par], ftab, b, _RPJ, frame)
        if kind == REVOLUTE:
            _axis_angle_matrix(ftab, b, q[qi], rj)
            _mul33(frame, rj, rl[b])
        elif kind == SPHERICAL:
            _quat_matrix(q[qi], q[qi + 1], q[qi + 2], q[qi + 3], rj)
            _mul33(frame, rj, rl[b])
        else:
            rl[b] = frame
        for i in range(3):
            piv[b, i] = x[par, i] + (rc[par, i, 0] * ftab[b, _D] + rc[par, i, 1] * ftab[b, _D + 1]
                                     + rc[par, i, 2] * ftab[b, _D + 2])
        _mul33_tab(rl[b], ftab, b, _RCI, rc[b])
        for i in range(3):
            x[b, i] = piv[b, i] + (rl[b, i, 0] * ftab[b, _E] + rl[b, i, 1] * ftab[b, _E + 1]
                                   + rl[b, i, 2] * ftab[b, _E + 2])


@_jit
def _set_rotation_subspace(s, k, u0, u1, u2, piv, b, origin):
    """``s[k] = (u, u x (origin - pivot))``."""
    d0, d1, d2 = origin[0] - piv[b, 0], origin[1] - piv[b, 1], origin[2] - piv[b, 2]
    s[k, 0], s[k, 1], s[k, 2] = u0, u1, u2
    s[k, 3] = u1 * d2 - u2 * d1
    s[k, 4] = u2 * d0 - u0 * d2
    s[k, 5] = u0 * d1 - u1 * d0


@_jit
def _motion_subspaces(itab, ftab, rl, piv, s, body):
    """Each DOF's world motion subspace about the base's centre of mass ``(nv, 6)``, and its body."""
    s[:] = 0.0
    body[:] = 0
    for i in range(3):
        s[i, 3 + i] = 1.0
        s[3 + i, i] = 1.0
    origin = piv[0]
    for b in range(1, itab.shape[0]):
        kind, vi = itab[b, 1], itab[b, 3]
        if kind == REVOLUTE:
            a0, a1, a2 = ftab[b, _AX], ftab[b, _AX + 1], ftab[b, _AX + 2]
            r = rl[b]
            _set_rotation_subspace(s, vi, r[0, 0] * a0 + r[0, 1] * a1 + r[0, 2] * a2,
                                   r[1, 0] * a0 + r[1, 1] * a1 + r[1, 2] * a2,
                                   r[2, 0] * a0 + r[2, 1] * a1 + r[2, 2] * a2, piv, b, origin)
            body[vi] = b
        elif kind == SPHERICAL:
            for i in range(3):
                _set_rotation_subspace(s, vi + i, rl[b, 0, i], rl[b, 1, i], rl[b, 2, i], piv, b, origin)
                body[vi + i] = b


@_jit
def _world_inertia(ftab, rc, b, out):
    """``out = R diag(I) R^T`` of body ``b``."""
    for i in range(3):
        for j in range(i, 3):
            val = (rc[b, i, 0] * ftab[b, _I] * rc[b, j, 0] + rc[b, i, 1] * ftab[b, _I + 1] * rc[b, j, 1]
                   + rc[b, i, 2] * ftab[b, _I + 2] * rc[b, j, 2])
            out[i, j] = val
            out[j, i] = val


@_jit
def _dofs(kind):
    if kind == BASE:
        return 6
    if kind == SPHERICAL:
        return 3
    if kind == REVOLUTE:
        return 1
    return 0


@_jit
def _frames(itab, ftab, q, nv):
    """Kinematics and motion subspaces at ``q``: ``(rl, rc, piv, x, s, body)``."""
    nb = itab.shape[0]
    rl, rc = np.empty((nb, 3, 3)), np.empty((nb, 3, 3))
    piv, x = np.empty((nb, 3)), np.empty((nb, 3))
    _kinematics(itab, ftab, q, rl, rc, piv, x)
    s, body = np.empty((nv, 6)), np.empty(nv, dtype=np.int64)
    _motion_subspaces(itab, ftab, rl, piv, s, body)
    return rl, rc, piv, x, s, body


@_jit
def _mass_matrix(itab, ftab, q, nv):
    nb = itab.shape[0]
    rl, rc, piv, x, s, body = _frames(itab, ftab, q, nv)
    # Composite spatial inertia about the base's centre of mass: [[I + m [c]x [c]x^T, m [c]x], [m [c]x^T, m]].
    comp = np.zeros((nb, 6, 6))
    iw = np.empty((3, 3))
    for b in range(nb):
        m = ftab[b, _M]
        c0, c1, c2 = x[b, 0] - x[0, 0], x[b, 1] - x[0, 1], x[b, 2] - x[0, 2]
        _world_inertia(ftab, rc, b, iw)
        cc = c0 * c0 + c1 * c1 + c2 * c2
        cv = (c0, c1, c2)
        for i in range(3):
            for j in range(3):
                comp[b, i, j] = iw[i, j] + m * ((cc if i == j else 0.0) - cv[i] * cv[j])
        # m [c]x
        comp[b, 0, 4], comp[b, 0, 5] = -m * c2, m * c1
        comp[b, 1, 3], comp[b, 1, 5] = m * c2, -m * c0
        comp[b, 2, 3], comp[b, 2, 4] = -m * c1, m * c0
        for i in range(3):
            for j in range(3):
                comp[b, 3 + i, j] = comp[b, j, 3 + i]
            comp[b, 3 + i, 3 + i] = m
    for b in range(nb - 1, 0, -1):
        comp[itab[b, 0]] += comp[b]
    mm = np.zeros((nv, nv))
    f = np.empty(6)
    for k in range(nv):
        b = body[k]
        for i in range(6):
            acc = 0.0
            for j in range(6):
                acc += comp[b, i, j] * s[k, j]
            f[i] = acc
        j = b
        while j >= 0:
            vj = itab[j, 3]
            for l in range(vj, vj + _dofs(itab[j, 1])):
                val = 0.0
                for i in range(6):
                    val += s[l, i] * f[i]
                mm[k, l] = val
                mm[l, k] = val
            j = itab[j, 0]
    return mm


@_jit
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@_jit
def _bias(itab, ftab, q, v, gravity):
    nb = itab.shape[0]
    rl, rc, piv, x, s, body = _frames(itab, ftab, q, v.shape[0])
    w, alpha, acc = np.zeros((nb, 3)), np.zeros((nb, 3)), np.zeros((nb, 3))
    force, moment = np.zeros((nb, 3)), np.zeros((nb, 3))  # moment about the base's centre of mass
    iw = np.empty((3, 3))
    for i in range(3):
        w[0, i] = v[3 + i]
        acc[0, i] = -gravity[i]
    for b in range(nb):
        if b > 0:
            par, kind, vi = itab[b, 0], itab[b, 1], itab[b, 3]
            u0 = u1 = u2 = 0.0
            if kind == REVOLUTE:
                u0, u1, u2 = s[vi, 0] * v[vi], s[vi, 1] * v[vi], s[vi, 2] * v[vi]
            elif kind == SPHERICAL:
                for i in range(3):
                    u0 += s[vi + i, 0] * v[vi + i]
                    u1 += s[vi + i, 1] * v[vi + i]
                    u2 += s[vi + i, 2] * v[vi + i]
            wp0, wp1, wp2 = w[par, 0], w[par, 1], w[par, 2]
            ap0, ap1, ap2 = alpha[par, 0], alpha[par, 1], alpha[par, 2]
            w0, w1, w2 = wp0 + u0, wp1 + u1, wp2 + u2
            e0, e1, e2 = _cross(wp0, wp1, wp2, u0, u1, u2)
            al0, al1, al2 = ap0 + e0, ap1 + e1, ap2 + e2
            r10, r11, r12 = piv[b, 0] - x[par, 0], piv[b, 1] - x[par, 1], piv[b, 2] - x[par, 2]
            r20, r21, r22 = x[b, 0] - piv[b, 0], x[b, 1] - piv[b, 1], x[b, 2] - piv[b, 2]
            # a = a_p + alpha_p x r1 + w_p x (w_p x r1) + alpha x r2 + w x (w x r2)
            t0, t1, t2 = _cross(ap0, ap1, ap2, r10, r11, r12)
            h0, h1, h2 = _cross(wp0, wp1, wp2, r10, r11, r12)
            g0, g1, g2 = _cross(wp0, wp1, wp2, h0, h1, h2)
            k0, k1, k2 = _cross(al0, al1, al2, r20, r21, r22)
            h0, h1, h2 = _cross(w0, w1, w2, r20, r21, r22)
            n0, n1, n2 = _cross(w0, w1, w2, h0, h1, h2)
            acc[b, 0] = acc[par, 0] + t0 + g0 + k0 + n0
            acc[b, 1] = acc[par, 1] + t1 + g1 + k1 + n1
            acc[b, 2] = acc[par, 2] + t2 + g2 + k2 + n2
            w[b, 0], w[b, 1], w[b, 2] = w0, w1, w2
            alpha[b, 0], alpha[b, 1], alpha[b, 2] = al0, al1, al2
        m = ftab[b, _M]
        _world_inertia(ftab, rc, b, iw)
        f0, f1, f2 = m * acc[b, 0], m * acc[b, 1], m * acc[b, 2]
        ia0 = iw[0, 0] * alpha[b, 0] + iw[0, 1] * alpha[b, 1] + iw[0, 2] * alpha[b, 2]
        ia1 = iw[1, 0] * alpha[b, 0] + iw[1, 1] * alpha[b, 1] + iw[1, 2] * alpha[b, 2]
        ia2 = iw[2, 0] * alpha[b, 0] + iw[2, 1] * alpha[b, 1] + iw[2, 2] * alpha[b, 2]
        iw0 = iw[0, 0] * w[b, 0] + iw[0, 1] * w[b, 1] + iw[0, 2] * w[b, 2]
        iw1 = iw[1, 0] * w[b, 0] + iw[1, 1] * w[b, 1] + iw[1, 2] * w[b, 2]
        iw2 = iw[2, 0] * w[b, 0] + iw[2, 1] * w[b, 1] + iw[2, 2] * w[b, 2]
        gy0, gy1, gy2 = _cross(w[b, 0], w[b, 1], w[b, 2], iw0, iw1, iw2)
        cm0, cm1, cm2 = _cross(x[b, 0] - x[0, 0], x[b, 1] - x[0, 1], x[b, 2] - x[0, 2], f0, f1, f2)
        force[b, 0], force[b, 1], force[b, 2] = f0, f1, f2
        moment[b, 0] = ia0 + gy0 + cm0
        moment[b, 1] = ia1 + gy1 + cm1
        moment[b, 2] = ia2 + gy2 + cm2
    for b in range(nb - 1, 0, -1):
        par = itab[b, 0]
        for i in range(3):
            force[par, i] += force[b, i]
            moment[par, i] += moment[b, i]
    c = np.empty(v.shape[0])
    for k in range(v.shape[0]):
        b = body[k]
        c[k] = (s[k, 0] * moment[b, 0] + s[k, 1] * moment[b, 1] + s[k, 2] * moment[b, 2]
                + s[k, 3] * force[b, 0] + s[k, 4] * force[b, 1] + s[k, 5] * force[b, 2])
    return c
