"""A keyframe file as a track the simulation loop samples, like a clip's Reference.

:class:`KeyframeTrack` resolves every key to a full pose ``q (nq,)`` (a joint
left out keeps its previous value; the first key starts from the model's zero
pose standing at its root height), and offers the loop two things:

* ``sample(t) -> (q, v)``: the keys' *kinematic* interpolation, a cubic spline
  (``scipy.interpolate.CubicSpline`` with zero end velocities on positions and
  angles, ``scipy.spatial.transform.RotationSpline`` on rotations). This is the
  paper's comparison (Fig. 6, left), the ghost in the window and ``q_ref`` in
  the recording; a single-target controller (``spd``, ``pd``) tracks it.
* ``target(t) -> KeyTarget``: the two keys around ``t`` and the servos'
  gain weights from the :class:`~tracker.keyframes.profile.GainProfile`, for
  the two-servo controllers of :mod:`tracker.control.keyframe_spd`.

Before the first key and after the last one the track holds that key (with
the weights of the end of an interval).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline
from scipy.spatial.transform import Rotation, RotationSpline

from tracker.arrays import frozen
from tracker.character.layout import Layout
from tracker.control.keyframe_spd import KeyTarget
from tracker.keyframes.file import KeyframeFile
from tracker.keyframes.profile import GainProfile

#: Half-width of the central difference that gives the spline's velocity, s.
_FD = 1e-4


def key_poses(kf: KeyframeFile, layout: Layout, standing_height: float) -> tuple[np.ndarray, np.ndarray]:
    """Every key as a full pose and velocity: ``(K, nq)``, ``(K, nv)`` (read-only).

    A joint (or the root position/orientation) a key leaves out keeps its value
    from the previous key; velocities a key leaves out are zero.
    """
    q = layout.neutral_q()
    if layout.has_base:
        q[2] = standing_height
    qs, vs = [], []
    for key in kf.keys:
        q = q.copy()
        v = np.zeros(layout.nv)
        if key.root_position is not None:
            q[0:3] = key.root_position
        if key.root_orientation is not None:
            q[3:7] = key.root_orientation
        for name, value in key.joints.items():
            q[layout[name].q] = value
        for name, value in key.velocities.items():
            v[layout[name].v] = value
        if key.root_linear is not None:
            v[0:3] = key.root_linear
        if key.root_angular is not None:
            v[3:6] = key.root_angular
        qs.append(q)
        vs.append(v)
    return frozen(np.array(qs)), frozen(np.array(vs))


@dataclass(frozen=True, eq=False)
class KeyframeTrack:
    """Keys resolved on one model's layout, sampled by the loop.

    Attributes:
        file: the validated :class:`KeyframeFile`.
        layout: the model's q/v layout.
        times: key times ``(K,)`` s.
        key_q: key poses ``(K, nq)``; key_v: key velocities ``(K, nv)``.
        profile: the gain profile.
        model: model name (as :class:`~tracker.retarget.reference.Reference`).
        root_fixed_gains: root DOFs keep constant gains (``root: anchored``):
            weights ``(1 − α, α)``, summing to 1, instead of the profile's.
    """

    file: KeyframeFile
    layout: Layout
    times: np.ndarray
    key_q: np.ndarray
    key_v: np.ndarray
    profile: GainProfile
    model: str
    root_fixed_gains: bool

    @classmethod
    def build(cls, kf: KeyframeFile, model, profile: GainProfile | None = None) -> "KeyframeTrack":
        """The track of ``kf`` on ``model`` (a :class:`~tracker.character.model.Model`)."""
        profile = profile or GainProfile(kf.profile, kf.power)
        q, v = key_poses(kf, model.layout, model.standing_root_height)
        track = cls(kf, model.layout, frozen(kf.times), q, v, profile, model.name, kf.root == "anchored")
        track._fit()
        return track

    # -- the Reference interface the loop and the window use -------------------------------
    @property
    def joints(self) -> tuple[tuple[str, str], ...]:
        return tuple((s.name, s.kind) for s in self.layout.joints)

    @property
    def source(self) -> str:
        return str(self.file.path)

    @property
    def duration(self) -> float:
        """Last key plus the hold, s."""
        return float(self.times[-1] + self.file.hold)

    @property
    def fps(self) -> float:
        """Nominal sampling rate for tools that resample a reference (60 Hz)."""
        return 60.0

    @property
    def n_frames(self) -> int:
        return int(np.floor(self.duration * self.fps + 1e-9)) + 1

    def _fit(self) -> None:
        lay, t = self.layout, self.times
        lin = list(lay.rev_q)
        if lay.has_base:
            lin = [0, 1, 2] + lin
        self.__dict__["_lin"] = np.array(lin, dtype=int)
        self.__dict__["_lin_spline"] = (CubicSpline(t, self.key_q[:, lin], axis=0, bc_type="clamped")
                                        if lin else None)
        rot_q = [np.arange(3, 7)] if lay.has_base else []
        rot_q += list(lay.sph_q)
        self.__dict__["_rot_q"] = rot_q
        self.__dict__["_rot_splines"] = [RotationSpline(t, Rotation.from_quat(self.key_q[:, idx])) for idx in rot_q]

    def _spline_qs(self, ts: np.ndarray) -> np.ndarray:
        """Spline poses at times ``ts (n,)`` (clamped to the keys), ``(n, nq)``: one call per spline."""
        tc = np.clip(ts, float(self.times[0]), float(self.times[-1]))
        q = np.tile(self.key_q[0], (len(tc), 1))
        if self._lin_spline is not None:
            q[:, self._lin] = self._lin_spline(tc)
        for idx, spline in zip(self._rot_q, self._rot_splines):
            q[:, idx] = spline(tc).as_quat()
        return q

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """The cubic-spline interpolation of the keys at ``t`` s: ``q (nq,)``, ``v (nv,)``.

        Clamped to the first and last key (at rest there). The loop asks twice for the same
        time (reference and servo target), so the last answer is kept.
        """
        last = self.__dict__.get("_last")
        if last is not None and last[0] == t:
            return last[1].copy(), last[2].copy()
        if t <= self.times[0] or t >= self.times[-1]:
            q, v = self._spline_qs(np.array([t]))[0], np.zeros(self.layout.nv)
        else:
            q3 = self._spline_qs(np.array([t - _FD, t, t + _FD]))
            q, v = q3[1], self.layout.difference(q3[2], q3[0]) / (2 * _FD)
        self.__dict__["_last"] = (t, q, v)
        return q.copy(), v.copy()

    # -- the two servos ------------------------------------------------------------------
    def interval(self, t: float) -> tuple[int, int, float]:
        """``(a, b, α)``: the keys around ``t`` and the normalised time between them.

        Before the first key ``(0, 0, 1)``, after the last ``(K−1, K−1, 1)``.
        """
        times = self.times
        if t <= times[0]:
            return 0, 0, 1.0
        if t >= times[-1]:
            k = len(times) - 1
            return k, k, 1.0
        b = int(np.searchsorted(times, t, side="right"))
        a = b - 1
        return a, b, float((t - times[a]) / (times[b] - times[a]))

    def weights(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Per-DOF gain weights ``(nv,)`` of the servos toward the keys around ``t``."""
        _, _, alpha = self.interval(t)
        wa, wb = self.profile.weights(alpha)
        w_a = np.full(self.layout.nv, float(wa))
        w_b = np.full(self.layout.nv, float(wb))
        if self.root_fixed_gains and self.layout.has_base:
            w_a[0:6], w_b[0:6] = 1.0 - alpha, alpha
        return w_a, w_b

    def target(self, t: float) -> KeyTarget:
        """The :class:`KeyTarget` for a step ending at ``t`` s."""
        a, b, _ = self.interval(t)
        w_a, w_b = self.weights(t)
        q, v = self.sample(t)
        return KeyTarget(q, v, self.key_q[a], self.key_q[b], self.key_v[a], self.key_v[b], w_a, w_b, t)

    def weight_curves(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint weights of the servo toward the previous and the next key at times ``t`` ``(T,)``."""
        pairs = [self.profile.weights(self.interval(float(x))[2]) for x in t]
        return np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)
