"""Events of a clip that one aims at: each end effector's peak speeds and lowest points.

Found on the source, in the file's frames; each event is also given in *clip
time*, the time axis of the retargeted reference (and so of runs, balls and
schedules): clip frame 0 is the first frame the retargeter keeps, which is file
frame ``dropped`` when an added T-pose is dropped, so
``clip_time = (file_frame - dropped) / fps``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.signal import find_peaks

from tracker.motion.motion import Motion

#: End effectors and the character link whose source joint stands for them.
END_EFFECTORS = ("left_hand", "right_hand", "left_foot", "right_foot", "head")


@dataclass(frozen=True)
class Event:
    """One event.

    Attributes:
        effector: end-effector name (``left_foot``...).
        kind: ``"peak_speed"`` or ``"lowest"``.
        file_frame: frame number in the file (0-based).
        clip_time: time in the retargeted clip, s (negative: before the clip starts).
        value: the speed (m/s) or height above the clip's floor (m).
    """

    effector: str
    kind: str
    file_frame: int
    clip_time: float
    value: float


def find_events(motion: Motion, joints: dict[str, int], dropped: int = 0, n: int = 3,
                separation_s: float = 0.25) -> list[Event]:
    """The ``n`` highest speed peaks and ``n`` lowest points of each end effector.

    Args:
        motion: the whole clip as read (file frames).
        joints: end effector -> source joint index.
        dropped: file frames before clip frame 0 (dropped added T-pose).
        n: events of each kind per end effector.
        separation_s: peaks of one kind are at least this far apart, s.
    """
    pos, _ = motion.global_transforms()
    fps = motion.fps
    floor = float(pos[dropped:, list(joints.values()), 2].min()) if motion.n_frames > dropped else 0.0
    dist = max(1, int(round(separation_s * fps)))
    out: list[Event] = []
    for ee, j in joints.items():
        p = pos[:, j]
        speed = np.zeros(len(p))
        if len(p) - dropped > 1:  # over the clip's frames only: the jump out of an added T-pose is no event
            clip = np.linalg.norm(np.gradient(p[dropped:], axis=0), axis=1) * fps
            speed[dropped:] = gaussian_filter1d(clip, max(0.01 * fps, 0.5), mode="nearest")
        h = p[:, 2] - floor
        for kind, signal, sign in (("peak_speed", speed, 1.0), ("lowest", h, -1.0)):
            s = sign * signal
            s[:dropped] = -np.inf
            idx, _ = find_peaks(np.r_[-np.inf, s[dropped:], -np.inf], distance=dist)
            idx = idx - 1 + dropped
            if not len(idx):
                idx = np.array([int(np.argmax(s))])
            best = idx[np.argsort(-s[idx])][:n]
            for f in sorted(best):
                out.append(Event(ee, kind, int(f), (int(f) - dropped) / fps, float(signal[f])))
    return out
