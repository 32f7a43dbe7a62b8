"""Capture-solver glitches: a joint's rotation that jumps away for a few frames and comes back.

A glitch of joint ``j`` is a span of frames ``[a, b]`` (at most
``max_frames`` long) such that

* the rotation jumps into the span and out of it: the angles between frames
  ``a - 1`` and ``a`` and between ``b`` and ``b + 1`` both exceed the joint's
  threshold, ``max(factor x its 95th-percentile per-frame step, min_speed / fps)``;
* and it comes back: frames ``a - 1`` and ``b + 1`` are closer to each other
  than ``back`` times the smaller of the two jumps.

A fast but real motion (a kick's knee) moves on and does not come back within a
few frames, so it is not a glitch; a solver flip (a hand turned 174 degrees for
one frame) is; one that does not come back is a lasting flip
(:mod:`tracker.retarget.flips`). A repair replaces the span by the slerp between
its two neighbours. Rotations are the source's local joint rotations, so a glitch is
reported at the joint where it happens, not at every descendant it moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from tracker.motion.motion import Motion


@dataclass(frozen=True)
class GlitchParams:
    """Detection thresholds.

    Attributes:
        max_frames: longest span that counts as a glitch.
        factor: a jump is implausible above this multiple of the joint's 95th-percentile step.
        min_speed: ... and above this angular speed, rad/s, whatever the joint's own steps.
        back: the neighbours of a span must be closer than this fraction of its jumps.
    """

    max_frames: int = 4
    factor: float = 6.0
    min_speed: float = 25.0
    back: float = 0.5


@dataclass(frozen=True)
class Glitch:
    """One repaired (or reported) span.

    Attributes:
        joint: source joint name.
        start: first glitched frame (index into the motion given).
        stop: last glitched frame (inclusive).
        jump_deg: the larger of the jumps into and out of the span, degrees.
    """

    joint: str
    start: int
    stop: int
    jump_deg: float


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Geodesic angles between xyzw quaternions ``(..., 4)``, rad."""
    return 2 * np.arccos(np.abs(np.sum(a * b, axis=-1)).clip(max=1.0))


def find_glitches(motion: Motion, params: GlitchParams | None = None) -> list[Glitch]:
    """The glitches of every joint of ``motion`` (see the module docstring), by joint then frame."""
    p = params or GlitchParams()
    r = np.asarray(motion.rotations)
    f, n = r.shape[:2]
    out: list[Glitch] = []
    if f < 4:
        return out
    step = _angle(r[1:], r[:-1])  # (F-1, J): step[t] between frames t and t+1
    floor = p.min_speed / motion.fps
    for j in range(n):
        s = step[:, j]
        thr = max(p.factor * float(np.percentile(s, 95)), floor)
        big = np.flatnonzero(s > thr)
        used_until = -1
        for i in big:  # a jump between frames i and i+1 opens a candidate span starting at a = i+1
            a = i + 1
            if a <= used_until or a < 1:
                continue
            for b in range(a, min(a + p.max_frames, f - 1)):
                if s[b] <= thr:  # no jump out of the span at b -> b+1
                    continue
                back = _angle(r[a - 1, j], r[b + 1, j])
                if back < p.back * min(s[i], s[b]):
                    out.append(Glitch(motion.skeleton.names[j], int(a), int(b), float(np.degrees(max(s[i], s[b])))))
                    used_until = b
                    break
    return out


def repair_glitches(motion: Motion, glitches: list[Glitch]) -> Motion:
    """A new motion with each glitch span replaced by the slerp between its neighbouring frames."""
    if not glitches:
        return motion
    rot = np.array(motion.rotations)
    names = motion.skeleton.names
    for g in glitches:
        j = names.index(g.joint)
        a, b = g.start - 1, g.stop + 1
        key = Rotation.from_quat(rot[[a, b], j])
        times = np.arange(g.start, g.stop + 1, dtype=float)
        q = Slerp([float(a), float(b)], key)(times).as_quat()
        q *= np.sign(np.sum(q * rot[a, j], axis=-1, keepdims=True) + 1e-300)  # keep the sign continuous
        rot[g.start:g.stop + 1, j] = q
    return Motion(motion.skeleton, motion.fps, motion.translations, rot, source=motion.source)


def glitch_report(glitches: list[Glitch], first_file_frame: int, fps: float) -> list[dict]:
    """JSON-able per-joint list: ``{joint, file_frames, clip_times_s, jump_deg}`` per span.

    ``first_file_frame`` is the file frame of the motion's frame 0 (the number of dropped frames).
    """
    out = []
    for g in glitches:
        frames = list(range(g.start + first_file_frame, g.stop + first_file_frame + 1))
        out.append({"joint": g.joint, "file_frames": frames,
                    "clip_times_s": [round((k - first_file_frame) / fps, 6) for k in frames],
                    "jump_deg": round(g.jump_deg, 1)})
    return out
