"""Point and centre-of-mass Jacobians of the rigid-body tree, and the centre of mass itself.

They reuse the motion subspaces the CRBA builds (:mod:`tracker.character.rigid_body`):
DOF ``k`` of body ``b`` has the world spatial motion ``s_k = (u, u × (P − r))`` about
the base's centre of mass ``P`` (``u`` the rotation axis through the pivot ``r``;
``(0, e_i)`` and ``(e_i, 0)`` for the base's linear and angular DOFs). A point ``x``
fixed to body ``b`` then moves with

    ẋ = Σ_k (s_k,lin + s_k,ang × (x − P)) v_k,   ω_b = Σ_k s_k,ang v_k

over the DOFs ``k`` on the path from ``b`` to the root, so its Jacobian columns are
``s_k,lin + s_k,ang × (x − P)`` (linear) and ``s_k,ang`` (angular), in the layout's
``v`` order (base linear and angular velocity in the world frame, spherical joints'
angular velocity in the child frame). The centre-of-mass Jacobian is the mass-weighted
sum of the bodies' centre-of-mass Jacobians; per DOF it needs only the subtree mass
``m_b`` and first moment ``h_b = Σ m x`` of the subtree the DOF moves:
``J_c[:, k] = (m_b s_k,lin + s_k,ang × (h_b − m_b P)) / m``.

Everything is world frame, metres, and for the tree PyBullet simulates (its body
order; the character adapter converts Y-up models' spherical columns). Compiled with
numba like the dynamics (a few microseconds per call on the humanoid).
"""

from __future__ import annotations

import numpy as np

from tracker.character.rigid_body import _M, RigidBodyTree, _frames, _jit, _kernel_input


def point_jacobian(tree: RigidBodyTree, q: np.ndarray, body: int,
                   offset: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Jacobians of a point fixed to ``body`` (0 = base, else PyBullet link index + 1).

    Args:
        q: ``(nq,)`` generalized positions.
        offset: ``(3,)`` the point in the body's centre-of-mass (inertial) frame, m, as
            PyBullet's ``calculateJacobian`` takes its ``localPosition``.

    Returns:
        ``(x (3,), J_lin (3, nv), J_ang (3, nv))``: the point's world position at ``q`` (m),
        ``ẋ = J_lin v`` (m/s) and the body's angular velocity ``ω = J_ang v`` (rad/s).
    """
    nb = tree.itab.shape[0]
    if not 0 <= body < nb:
        raise ValueError(f"body {body} is not in 0..{nb - 1}")
    return _point_jacobian(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv, body,
                           _kernel_input(offset, 3, "offset"))


def com_jacobian(tree: RigidBodyTree, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The whole body's centre of mass ``c`` ``(3,)`` m and its Jacobian ``(3, nv)`` (``ċ = J v``)."""
    return _com_jacobian(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv)


def body_positions(tree: RigidBodyTree, q: np.ndarray) -> np.ndarray:
    """World centre of mass of every body ``(B, 3)`` m, base first, at ``q``."""
    return _frames(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv)[3]


@_jit
def _point_jacobian(itab, ftab, q, nv, body, offset):
    rl, rc, piv, x, s, dof_body = _frames(itab, ftab, q, nv)
    jl, ja = np.zeros((3, nv)), np.zeros((3, nv))
    point = np.empty(3)
    for i in range(3):
        point[i] = x[body, i] + rc[body, i, 0] * offset[0] + rc[body, i, 1] * offset[1] + rc[body, i, 2] * offset[2]
    d0, d1, d2 = point[0] - x[0, 0], point[1] - x[0, 1], point[2] - x[0, 2]
    for k in range(nv):
        # Is DOF k on the path from `body` to the root?
        j = body
        while j >= 0 and j != dof_body[k]:
            j = itab[j, 0]
        if j < 0:
            continue
        a0, a1, a2 = s[k, 0], s[k, 1], s[k, 2]
        jl[0, k] = s[k, 3] + a1 * d2 - a2 * d1
        jl[1, k] = s[k, 4] + a2 * d0 - a0 * d2
        jl[2, k] = s[k, 5] + a0 * d1 - a1 * d0
        ja[0, k], ja[1, k], ja[2, k] = a0, a1, a2
    return point, jl, ja


@_jit
def _com_from_frames(itab, ftab, x, s, dof_body, nv):
    """The centre of mass ``(3,)`` and its Jacobian ``(3, nv)`` from the frames of :func:`_frames`."""
    nb = itab.shape[0]
    msub = np.empty(nb)
    h = np.empty((nb, 3))
    for b in range(nb):
        m = ftab[b, _M]
        msub[b] = m
        for i in range(3):
            h[b, i] = m * x[b, i]
    for b in range(nb - 1, 0, -1):
        par = itab[b, 0]
        msub[par] += msub[b]
        for i in range(3):
            h[par, i] += h[b, i]
    total = msub[0]
    com = np.empty(3)
    for i in range(3):
        com[i] = h[0, i] / total
    jc = np.zeros((3, nv))
    for k in range(nv):
        b = dof_body[k]
        m = msub[b]
        e0, e1, e2 = h[b, 0] - m * x[0, 0], h[b, 1] - m * x[0, 1], h[b, 2] - m * x[0, 2]
        a0, a1, a2 = s[k, 0], s[k, 1], s[k, 2]
        jc[0, k] = (m * s[k, 3] + a1 * e2 - a2 * e1) / total
        jc[1, k] = (m * s[k, 4] + a2 * e0 - a0 * e2) / total
        jc[2, k] = (m * s[k, 5] + a0 * e1 - a1 * e0) / total
    return com, jc


@_jit
def _com_jacobian(itab, ftab, q, nv):
    rl, rc, piv, x, s, dof_body = _frames(itab, ftab, q, nv)
    return _com_from_frames(itab, ftab, x, s, dof_body, nv)


def com_and_point_jacobians(tree: RigidBodyTree, q: np.ndarray, bodies: np.ndarray) -> tuple:
    """:func:`com_jacobian` and :func:`point_jacobian` (at the bodies' centres of mass) of several
    bodies in one kinematics pass: ``(c (3,), J_c (3, nv), x (n, 3), J_lin (n, 3, nv), J_ang (n, 3, nv))``."""
    b = np.ascontiguousarray(bodies, dtype=np.int64)
    if b.size and (b.min() < 0 or b.max() >= tree.itab.shape[0]):
        raise ValueError(f"bodies {b.tolist()} are not all in 0..{tree.itab.shape[0] - 1}")
    return _com_and_points(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv, b)


@_jit
def _com_and_points(itab, ftab, q, nv, bodies):
    rl, rc, piv, x, s, dof_body = _frames(itab, ftab, q, nv)
    com, jc = _com_from_frames(itab, ftab, x, s, dof_body, nv)
    n = bodies.shape[0]
    xs = np.empty((n, 3))
    jl, ja = np.zeros((n, 3, nv)), np.zeros((n, 3, nv))
    for t in range(n):
        body = bodies[t]
        for i in range(3):
            xs[t, i] = x[body, i]
        d0, d1, d2 = x[body, 0] - x[0, 0], x[body, 1] - x[0, 1], x[body, 2] - x[0, 2]
        for k in range(nv):
            j = body
            while j >= 0 and j != dof_body[k]:
                j = itab[j, 0]
            if j < 0:
                continue
            a0, a1, a2 = s[k, 0], s[k, 1], s[k, 2]
            jl[t, 0, k] = s[k, 3] + a1 * d2 - a2 * d1
            jl[t, 1, k] = s[k, 4] + a2 * d0 - a0 * d2
            jl[t, 2, k] = s[k, 5] + a0 * d1 - a1 * d0
            ja[t, 0, k], ja[t, 1, k], ja[t, 2, k] = a0, a1, a2
    return com, jc, xs, jl, ja
