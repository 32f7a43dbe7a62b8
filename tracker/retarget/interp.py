"""Compiled interpolation of a reference's ``q`` between two frames (used by :meth:`Reference.sample`).

Sampling the reference is in every simulation step (the target, and a key ahead for
``timed_pd``); with numpy on a dozen quaternions it took more than SPD's linear solve.
The kernel computes exactly what :func:`tracker.retarget.reference.slerp` does, in the
same order, so samples are bit-identical; it is ~15x faster.
"""

from __future__ import annotations

import numpy as np

from tracker.character.rigid_body import _jit


@_jit
def interp_q(q0, q1, alpha, quat_start, out):
    """``out`` = linear interpolation of ``q0``, ``q1`` ``(nq,)`` with the quaternions starting at
    ``quat_start`` ``(K,)`` slerped (shortest arc, xyzw); returns ``out``."""
    for k in range(q0.shape[0]):
        out[k] = (1.0 - alpha) * q0[k] + alpha * q1[k]
    for r in range(quat_start.shape[0]):
        i0 = quat_start[r]
        dot = 0.0
        for c in range(4):
            dot += q0[i0 + c] * q1[i0 + c]
        sgn = 1.0
        if dot < 0:
            sgn = -1.0
            dot = -dot
        if dot > 1.0:
            dot = 1.0
        theta = np.arccos(dot)
        s = np.sin(theta)
        if s < 1e-8:
            w0, w1 = 1.0 - alpha, alpha
        else:
            w0, w1 = np.sin((1.0 - alpha) * theta) / s, np.sin(alpha * theta) / s
        nrm = 0.0
        for c in range(4):
            x = w0 * q0[i0 + c] + w1 * (sgn * q1[i0 + c])
            out[i0 + c] = x
            nrm += x * x
        nrm = np.sqrt(nrm)
        for c in range(4):
            out[i0 + c] /= nrm
    return out
