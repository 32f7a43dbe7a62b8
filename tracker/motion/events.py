"""Events of a clip that one aims at: each end effector's peak speeds and lowest points, and
when both hands come close together (where a ball can be caught).

Found on the source, in the file's frames; each event is also given in *clip
time*, the time axis of the retargeted reference (and so of runs, balls and
schedules): clip frame 0 is the first frame the retargeter keeps, which is file
frame ``dropped`` when an added T-pose is dropped, so
``clip_time = (file_frame - dropped) / fps``.

A speed peak is a local maximum inside the clip: the clip's first and last frames
are its edges, not peaks. After a dropped T-pose the motion still blends out of it
for a few frames (the Daz conversions blend over frames 1-7, and the drop stops
where the blend slows down): an effector's speed that rises straight from the
clip's start to a maximum within :data:`BLEND_FRAMES` file frames, and the fall
after it, is that blend, not an event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.signal import find_peaks

from tracker.motion.motion import Motion

#: End effectors and the character link whose source joint stands for them.
END_EFFECTORS = ("left_hand", "right_hand", "left_foot", "right_foot", "head")
#: File frames within which a speed maximum rising from the clip's start is the blend out of a
#: dropped T-pose (as :func:`tracker.retarget.retarget._drop_added_tpose`'s ``max_blend``).
BLEND_FRAMES = 12
#: Hands whose joints are at most this far apart are together, m.
HANDS_TOGETHER_M = 0.25


@dataclass(frozen=True)
class Event:
    """One event.

    Attributes:
        effector: end-effector name (``left_foot``...), or ``hands`` for ``hands_together``.
        kind: ``"peak_speed"``, ``"lowest"`` or ``"hands_together"`` (the hands closest together,
            at most :data:`HANDS_TOGETHER_M` apart).
        file_frame: frame number in the file (0-based).
        clip_time: time in the retargeted clip, s (negative: before the clip starts).
        value: the speed (m/s), height above the clip's floor (m) or distance between the hands (m).
    """

    effector: str
    kind: str
    file_frame: int
    clip_time: float
    value: float


def find_events(motion: Motion, joints: dict[str, int], dropped: int = 0, n: int = 3,
                separation_s: float = 0.25) -> list[Event]:
    """The ``n`` highest speed peaks and ``n`` lowest points of each end effector, and the ``n``
    times the hands are closest together (when ``joints`` has both hands and they come together).

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
            if kind == "peak_speed":  # interior maxima after the blend (module docstring)
                start = _after_blend(speed, dropped) if dropped else 0
                idx, _ = find_peaks(s[start:], distance=dist)
                idx = idx + start
                if not len(idx):
                    continue
            else:
                idx, _ = find_peaks(np.r_[-np.inf, s[dropped:], -np.inf], distance=dist)
                idx = idx - 1 + dropped
                if not len(idx):
                    idx = np.array([int(np.argmax(s))])
            best = idx[np.argsort(-s[idx])][:n]
            for f in sorted(best):
                out.append(Event(ee, kind, int(f), (int(f) - dropped) / fps, float(signal[f])))
    if "left_hand" in joints and "right_hand" in joints and motion.n_frames > dropped:
        gap = np.linalg.norm(pos[:, joints["left_hand"]] - pos[:, joints["right_hand"]], axis=1)
        s = np.where(gap <= HANDS_TOGETHER_M, -gap, -np.inf)
        s[:dropped] = -np.inf
        idx, _ = find_peaks(np.r_[-np.inf, s[dropped:], -np.inf], distance=dist, height=-HANDS_TOGETHER_M)
        for f in sorted(idx[np.argsort(gap[idx - 1 + dropped])][:n] - 1 + dropped):
            out.append(Event("hands", "hands_together", int(f), (int(f) - dropped) / fps, float(gap[f])))
    return out


def _after_blend(speed: np.ndarray, dropped: int) -> int:
    """First frame past the blend out of a dropped T-pose in one effector's ``speed`` ``(F,)``:
    past its rise from the clip's start and the fall after it, if that rise peaks within
    :data:`BLEND_FRAMES` file frames (module docstring); else ``dropped``."""
    i, n = dropped, len(speed)
    while i + 1 < n and speed[i + 1] >= speed[i]:
        i += 1
    if i >= BLEND_FRAMES:
        return dropped
    while i + 1 < n and speed[i + 1] <= speed[i]:
        i += 1
    return i
