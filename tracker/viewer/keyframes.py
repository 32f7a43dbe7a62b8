"""The window's side of a keyframe file (``tracker play FILE.yaml``): a live session that marks the keys.

:class:`KeyframeSession` is a :class:`~tracker.viewer.playback.LiveSession` on
a :class:`~tracker.keyframes.track.KeyframeTrack`: the ghost is the keys'
cubic-spline interpolation (the paper's comparison, Fig. 6), a red marker
shows the keyed root position the servos pull toward, and the status line
says which keys the two servos pull toward and with what gains.
"""

from __future__ import annotations

import numpy as np

from tracker.viewer.playback import LiveSession
from tracker.viewer.stage import BallView

#: The marker of the key the servos pull toward.
NEXT_RGBA = (1.0, 0.1, 0.1, 1.0)


class KeyframeSession(LiveSession):
    """A live keyframe run; no balls, no gain schedule (the gains are the track's cross-fade).

    Args:
        sim: the simulation built by :func:`tracker.keyframes.run.build_simulation`.
        track: its keyframe track.
    """

    def __init__(self, sim, track) -> None:
        super().__init__(sim, None, None, track.duration)
        self.track = track
        size = float(np.ptp(track.key_q[:, 0:3], axis=0).max())
        self._marker_radius = float(np.clip(0.03 * size, 0.004, 0.03))
        self._moves = size > 1e-6

    def ball_views(self) -> list:
        """A marker at the next keyed root position (none when the root is not keyed to move)."""
        if not self._moves:
            return []
        # Only the key the servos pull toward: each marker costs the window a round trip per frame.
        _, b, _ = self.track.interval(self.sim.t + self.dt)
        return [BallView(("key", b), np.array(self.track.key_q[b, 0:3]), np.array([0.0, 0.0, 0.0, 1.0]),
                         self._marker_radius, NEXT_RGBA)]

    def schedule_state(self) -> str:
        key = self.next_key()
        if key is not None:  # timed PD: no cross-fade, each key is met at its time
            return f"timed PD toward key {key.index}"
        a, b, alpha = self.track.interval(self.sim.t + self.dt)
        w = float(np.add(*self.track.profile.weights(alpha)))
        toward = f"key {a} -> {b}" if a != b else f"holding key {b}"
        return f"{toward}, gains {w:.3f} k_p ({self.track.profile.label()})"
