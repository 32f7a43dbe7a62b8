"""Composite inertia about each joint axis, by Allen et al. 2007's leaf-to-root recursion (eq. 5-7).

For every body ``b`` the recursion accumulates, from the leaves to the root, the
mass ``M_b``, centre of mass ``c_b`` and inertia tensor ``D_b`` (about ``c_b``)
of ``b`` and everything outboard of it. Each child's composite is moved into
its parent's by the parallel-axis theorem (eq. 5: ``R D Rᵀ + M([p][p]ᵀ …)``;
here every tensor is already in world axes, so ``R`` is the identity and the
shift is ``M (|d|² I − d dᵀ)`` with ``d`` the offset of the centres of mass).
The moment about a joint axis ``s`` through the joint's pivot ``r`` is then
(eq. 7)::

    m = sᵀ D s + M (|c − r|² − (s · (c − r))²)

and for a ball joint the 3×3 tensor ``Sᵀ [D + M(|c − r|² I − (c − r)(c − r)ᵀ)] S``
in the axes of its velocity (the child link frame, :mod:`tracker.character.layout`).

This is the same quantity as the diagonal (block) of the joint-space mass matrix
``M(q)``: ``M_kk = s_kᵀ I_C s_k``, the composite spatial inertia of the subtree
seen along the joint's motion subspace. The tests check the two against each
other to 1e-10; Allen's recursion is kept because it also yields the world axes
and the per-subtree quantities the parent-torque compensation needs, in one
``O(n)`` pass.
"""

from __future__ import annotations

import numpy as np

from tracker.character.inertia import JointInertia
from tracker.character.rigid_body import (
    _M,
    BASE,
    FIXED,
    REVOLUTE,
    SPHERICAL,
    RigidBodyTree,
    _frames,
    _jit,
    _kernel_input,
    _world_inertia,
)


def joint_inertia(tree: RigidBodyTree, q: np.ndarray) -> JointInertia:
    """Composite inertia about every joint axis of ``tree`` at ``q`` (PyBullet's ``q``)."""
    return JointInertia(*_joint_inertia(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv))


def parent_compensation(tree: RigidBodyTree, tau: np.ndarray, inertia: JointInertia) -> np.ndarray:
    """Allen et al. 2007 eq. 8-10: each joint's torque plus ``m_i u_i`` for its inboard joints' torques.

    Walking from the root outward, every actuated joint ``j`` imparts the world
    angular acceleration ``(τ_j / m_j) ŝ_j`` on everything outboard of it; a
    joint ``i`` sees the sum ``a_i`` of its ancestors' (eq. 8) and adds the
    torque ``m_i (a_i · ŝ_i)`` (eq. 9-10) that keeps its own subtree turning
    with them, so that its PD torque acts on the motion relative to its parent.
    The torques passed down are the compensated ones (Algorithm 1). The base's
    angular DOFs (an anchored root's servo torque) pass theirs on; its linear DOFs
    take no part.

    Args:
        tau: ``(nv,)`` PD torques (PyBullet's axes); not modified.
        inertia: :func:`joint_inertia` at the same pose.

    Returns:
        ``(nv,)`` compensated torques.
    """
    return _compensate(tree.itab, np.require(tau, np.float64, "C"), inertia.moment, inertia.axis)


@_jit
def _compensate(itab, tau, moment, axis):
    nb = itab.shape[0]
    out = tau.copy()
    acc = np.zeros((nb, 3))  # world angular acceleration imposed on each body by inboard torques
    for k in range(3, 6):  # the base's angular DOFs (world axes): a root wrench turns everything
        if moment[k] > 0.0:
            r = out[k] / moment[k]
            for i in range(3):
                acc[0, i] += r * axis[k, i]
    for b in range(1, nb):
        p = itab[b, 0]
        kind, vi = itab[b, 1], itab[b, 3]
        a0, a1, a2 = acc[p, 0], acc[p, 1], acc[p, 2]
        n = 1 if kind == REVOLUTE else (3 if kind == SPHERICAL else 0)
        for k in range(vi, vi + n):
            out[k] += moment[k] * (a0 * axis[k, 0] + a1 * axis[k, 1] + a2 * axis[k, 2])
        for k in range(vi, vi + n):
            if moment[k] > 0.0:
                r = out[k] / moment[k]
                a0 += r * axis[k, 0]
                a1 += r * axis[k, 1]
                a2 += r * axis[k, 2]
        acc[b, 0], acc[b, 1], acc[b, 2] = a0, a1, a2
    return out


@_jit
def _joint_inertia(itab, ftab, q, nv):
    nb = itab.shape[0]
    rl, rc, piv, x, s, body = _frames(itab, ftab, q, nv)
    mass = np.zeros(nb)
    com = np.zeros((nb, 3))
    ten = np.zeros((nb, 3, 3))  # about each composite's own centre of mass, world axes
    iw = np.empty((3, 3))
    for b in range(nb):
        mass[b] = ftab[b, _M]
        _world_inertia(ftab, rc, b, iw)
        for i in range(3):
            com[b, i] = x[b, i]
            for j in range(3):
                ten[b, i, j] = iw[i, j]
    # Leaf to root (bodies are stored parents first): merge each composite into its parent's;
    # first the bodies welded on by fixed joints (a link and its welded parts are one rigid
    # body: the "single link" a joint moves), then the rest.
    for b in range(nb - 1, 0, -1):
        if itab[b, 1] == FIXED:
            _merge(itab[b, 0], b, mass, com, ten)
    own = _about_axes(itab, piv, s, mass, com, ten, nv)
    for b in range(nb - 1, 0, -1):
        if itab[b, 1] != FIXED:
            p = itab[b, 0]
            while p > 0 and itab[p, 1] == FIXED:  # welded bodies were folded into their parents
                p = itab[p, 0]
            _merge(p, b, mass, com, ten)
    moment, block, axis = _about_axes(itab, piv, s, mass, com, ten, nv)
    return moment, block, axis, own[0], own[1]


@_jit
def _merge(p, b, mass, com, ten):
    """Add body ``b``'s composite (mass, centre of mass, tensor about it) into body ``p``'s."""
    mp, mb = mass[p], mass[b]
    mt = mp + mb
    if mt <= 0.0:
        return
    c = np.empty(3)
    for i in range(3):
        c[i] = (mp * com[p, i] + mb * com[b, i]) / mt
    dp = com[p] - c
    db = com[b] - c
    dp2 = dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]
    db2 = db[0] * db[0] + db[1] * db[1] + db[2] * db[2]
    for i in range(3):
        for j in range(3):
            e = 1.0 if i == j else 0.0
            ten[p, i, j] += (mp * (dp2 * e - dp[i] * dp[j]) + ten[b, i, j]
                             + mb * (db2 * e - db[i] * db[j]))
    mass[p] = mt
    for i in range(3):
        com[p, i] = c[i]


@_jit
def _about_axes(itab, piv, s, mass, com, ten, nv):
    """Moments (and ball-joint tensors) about every DOF's axis of the bodies' (composite) inertias."""
    nb = itab.shape[0]
    moment = np.zeros(nv)
    block = np.zeros((nv, 3))
    axis = np.zeros((nv, 3))
    jt = np.empty((3, 3))
    for b in range(nb):
        kind, vi = itab[b, 1], itab[b, 3]
        if kind != BASE and kind != REVOLUTE and kind != SPHERICAL:
            continue
        # Composite tensor about the pivot: D + M (|d|^2 I - d d^T), d = c - r.
        d = com[b] - piv[b]
        d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        for i in range(3):
            for j in range(3):
                jt[i, j] = ten[b, i, j] + mass[b] * ((d2 if i == j else 0.0) - d[i] * d[j])
        if kind == BASE:
            for i in range(3):
                moment[vi + i] = mass[b]  # linear DOFs
            axes_start, n_ax = vi + 3, 3
        elif kind == SPHERICAL:
            axes_start, n_ax = vi, 3
        else:
            axes_start, n_ax = vi, 1
        for a in range(n_ax):
            k = axes_start + a
            for i in range(3):
                axis[k, i] = s[k, i]
        for a in range(n_ax):
            k = axes_start + a
            for a2 in range(n_ax):
                k2 = axes_start + a2
                val = 0.0
                for i in range(3):
                    for j in range(3):
                        val += s[k, i] * jt[i, j] * s[k2, j]
                if n_ax == 3:
                    block[k, a2] = val
                if a2 == a:
                    moment[k] = val
    return moment, block, axis
