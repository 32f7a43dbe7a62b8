"""PyBullet's frames against ours for a Y-up model (``up_axis: y``, the DeepMimic humanoid).

With ``C`` the +90° rotation about X the body is loaded with: base quaternion ``Q = Q_bullet C⁻¹``,
spherical joint quaternion ``q = C q_bullet C⁻¹``, angular velocities and torques ``w = C w_bullet``.
A mixin of :class:`~tracker.character.character.Character` (``_frame_mat``, ``_right_c``,
``_right_c_inv`` and ``_sph`` are set when it loads).
"""

from __future__ import annotations

import numpy as np


def _unit(quat: np.ndarray) -> np.ndarray:
    """Quaternions ``(..., 4)`` scaled to unit length.

    Raises:
        ValueError: a quaternion is zero (norm below 1e-12) or not finite.
    """
    norm = np.linalg.norm(quat, axis=-1, keepdims=True)
    if not (norm > 1e-12).all() or not np.isfinite(norm).all():
        raise ValueError("zero-norm or non-finite quaternion in q")
    return quat / norm


class BulletFrames:
    """Conversions of ``q``, ``v`` and v-shaped vectors between our axes and PyBullet's (a mixin)."""

    def _velocity_transform(self) -> np.ndarray:
        """``T`` with ``v_bullet = T v`` ``(nv, nv)``: identity except ``C⁻¹`` on spherical blocks."""
        t = np.eye(self.layout.nv)
        ct = self._frame_mat.T
        for k in self._sph:
            sl = self._v_slices[k]
            t[sl, sl] = ct
        return t

    def _vec_to_bullet(self, x: np.ndarray) -> np.ndarray:
        """A v-shaped vector (velocity, acceleration, torque) from our axes to PyBullet's."""
        x = np.array(x, dtype=float)
        if self._sph:
            idx = self.layout.sph_v
            x[idx] = x[idx] @ self._frame_mat  # rows times C == C^T applied to each row
        return x

    def _vec_from_bullet(self, x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=float)
        if self._sph:
            idx = self.layout.sph_v
            x[idx] = x[idx] @ self._frame_mat.T
        return x

    def _q_to_bullet(self, q: np.ndarray) -> np.ndarray:
        """``Q C`` for the base quaternion and ``C⁻¹ q C`` for spherical joints (unit quaternions).

        Both are linear in the quaternion: ``Q C`` is a fixed 4x4 matrix times ``Q``, and
        conjugation by ``C`` rotates the vector part by ``C⁻¹`` and keeps the scalar part.
        """
        qb = np.array(q, dtype=float)
        qb[3:7] = self._right_c @ _unit(qb[3:7])
        if self._sph:
            idx = self.layout.sph_q
            sub = _unit(qb[idx])
            sub[:, 0:3] = sub[:, 0:3] @ self._frame_mat  # rows times C == C^T applied to each row
            qb[idx] = sub
        return qb

    def _to_bullet(self, q: np.ndarray, v: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        return self._q_to_bullet(q), (None if v is None else self._vec_to_bullet(v))

    def _from_bullet(self, qb: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.array(qb, dtype=float)
        q[3:7] = self._right_c_inv @ _unit(q[3:7])
        if self._sph:
            idx = self.layout.sph_q
            sub = _unit(q[idx])
            sub[:, 0:3] = sub[:, 0:3] @ self._frame_mat.T
            q[idx] = sub
        return q, self._vec_from_bullet(vb)
