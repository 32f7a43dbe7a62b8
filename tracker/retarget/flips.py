"""Lasting rig flips (a joint's rotation that jumps and stays) and motion too fast to follow.

A *lasting flip* of joint ``j`` at frame ``k`` is one step ``k - 1 -> k`` of its
local rotation such that

* the step is implausible: above ``max(factor x the joint's 95th-percentile step,
  min_speed / fps)`` (the rule of :mod:`tracker.retarget.glitches`) and above
  ``min_deg`` (a rig flip turns by 90 or 180 degrees, not by a few);
* it is isolated: every other step within ``window`` steps on either side is
  below ``isolated`` times it (real fast motion speeds up and slows down over
  several frames; a solver flip is one step between slow frames);
* it lasts: frames ``k .. k + window`` all stay at least ``back`` times the jump
  away from frame ``k - 1`` (else it is a glitch that comes back, which
  :func:`~tracker.retarget.glitches.find_glitches` finds, so the two never overlap);
* it is a turn no joint makes in one frame: ``"twist"``, a turn about the
  joint's bone axis that moves the bone no more than the steps around it do (or
  ``swing_deg``), so the rotation after the jump is, up to a twist, an ordinary
  step from the one before; or ``"flip"``, a turn of at least ``flip_deg`` about
  any axis (a solver's axis flip). A smaller jump that moves the bone may be
  real (a foot struck by the ball) and is left alone.

Some child joints may turn back by the same step, so that their world rotations
stay continuous (a solver that moved a joint's axes and compensated below it);
they are the flip's ``compensated`` joints.

The repair is by continuity, from the flip frame to the end of the clip. A
``"twist"`` joint is turned back about its bone by the jump's twist less the
twist that its neighbouring steps predict (their mean): the equivalent rotation
nearest the previous frame, with the bone exactly where the clip has it. A
``"flip"`` joint loses the whole jump less the predicted step. The compensating
children take the correction back, so their world rotations do not change. A
rig that flips back later has a second flip there that undoes the first: from
there on the clip is kept, and the frames between take the mean of the
corrections their two ends ask for. What remains of the flip is the prediction's error, about one step's
change of speed (a degree or less in the shared clips).

An Euler-triple branch change in the file, ``(a, b, c) -> (a + 180, 180 - b, c + 180)``,
is the same rotation, so the reader's quaternions do not jump and nothing is found.

*Fast motion*: a joint whose net rotation over ``steps`` consecutive steps
(:class:`FastParams`) is faster than ``limit`` rad/s. It is reported, never
changed. Call :func:`find_fast` on the repaired motion: a glitch's jump is fast too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.motion.motion import Motion
from tracker.motion.skeleton import Skeleton
from tracker.retarget.glitches import GlitchParams, _angle


@dataclass(frozen=True)
class FlipParams:
    """Detection thresholds of :func:`find_flips`.

    Attributes:
        factor: a jump is implausible above this multiple of the joint's 95th-percentile step.
        min_speed: ... and above this angular speed, rad/s, whatever the joint's own steps.
        min_deg: ... and above this angle, degrees.
        window: steps on either side that must be slow, and frames after that must stay away.
        isolated: the other steps in the window must be below this fraction of the jump.
        back: the frames after must stay at least this fraction of the jump from the frame before.
        swing_deg: a ``"twist"`` moves the bone by no more than the largest other step in the
            window or this angle, degrees.
        flip_deg: a jump of at least this angle, degrees, about any axis is a ``"flip"``.
    """

    factor: float = GlitchParams.factor
    min_speed: float = GlitchParams.min_speed
    min_deg: float = 45.0
    window: int = GlitchParams.max_frames
    isolated: float = 0.3
    back: float = GlitchParams.back
    swing_deg: float = 3.0
    flip_deg: float = 90.0


#: A later flip that leaves less than this fraction of a joint's correction flips the rig back.
FLIP_BACK = 0.5


@dataclass(frozen=True)
class Flip:
    """One lasting flip.

    Attributes:
        joint: source joint name.
        frame: first frame after the jump (index into the motion given).
        jump_deg: the angle of the jump, degrees.
        kind: ``"twist"`` (turned about its bone axis) or ``"flip"`` (turned about another axis).
        compensated: names of the child joints that turned back (their world rotations stayed continuous).
    """

    joint: str
    frame: int
    jump_deg: float
    kind: str
    compensated: tuple[str, ...] = ()


@dataclass(frozen=True)
class FastParams:
    """Thresholds of :func:`find_fast`.

    Attributes:
        limit: angular speed of a joint's local rotation, rad/s, above which the character
            cannot follow. 30 rad/s is the top of human joint speeds in whole-body strikes
            (knee extension in a soccer kick, elbow extension in a punch: about 20-35 rad/s);
            the shared clips exceed it only at the kicking foot's ball impact (31 and 46 rad/s)
            and at the noisy left toe of ``cmu_10_05`` (31-34 rad/s).
        steps: the speed is the net rotation over this many frame steps (at least 2, so that one
            noisy step does not count), divided by their time.
    """

    limit: float = 30.0
    steps: int = 2


@dataclass(frozen=True)
class Fast:
    """A span of frames where a joint turns faster than the character can follow.

    Attributes:
        joint: source joint name.
        start: first frame of the span (index into the motion given).
        stop: last frame of the span (inclusive).
        peak_speed: the highest speed in the span, rad/s.
    """

    joint: str
    start: int
    stop: int
    peak_speed: float


def _twist(q: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Swing–twist of xyzw quaternions ``(..., 4)`` about unit ``axis`` ``(3,)``.

    Returns:
        ``(twist, swing)``: the signed turn about ``axis`` in ``(-pi, pi]`` and the angle by
        which the rotation moves ``axis`` ``>= 0``, rad.
    """
    along = q[..., :3] @ axis
    twist = (2 * np.arctan2(along, q[..., 3]) + np.pi) % (2 * np.pi) - np.pi
    swing = 2 * np.arccos(np.sqrt(q[..., 3] ** 2 + along ** 2).clip(max=1.0))
    return twist, swing


def _rest_direction(skeleton: Skeleton, j: int) -> np.ndarray | None:
    """Where joint ``j``'s own offset points, or, if it is zero, the first non-zero offset below it
    (children, then End Sites) in the rest pose; ``None`` if there is none."""
    off = np.asarray(skeleton.offsets[j])
    if np.linalg.norm(off) > 1e-9:
        return off
    below = [_rest_direction(skeleton, c) for c in skeleton.children(j)]
    below += [np.asarray(v) for e, v in zip(skeleton.end_site_parents, skeleton.end_site_offsets) if e == j]
    return next((v for v in below if v is not None and np.linalg.norm(v) > 1e-9), None)


def bone_axes(skeleton: Skeleton) -> np.ndarray:
    """Each joint's bone direction in its own frame, ``(J, 3)`` unit (zeros where it has no bone).

    The direction to its child (through zero-length children, in the rest pose) or End Site; of
    several, the one that best continues the bone leading into the joint (a hand's middle finger,
    a chest's neck), or their mean at the root; failing all, the bone leading into the joint.
    """
    out = np.zeros((skeleton.n_joints, 3))
    for j in range(skeleton.n_joints):
        cands = [_rest_direction(skeleton, c) for c in skeleton.children(j)]
        cands += [np.asarray(v) for e, v in zip(skeleton.end_site_parents, skeleton.end_site_offsets) if e == j]
        units = [v / np.linalg.norm(v) for v in cands if v is not None and np.linalg.norm(v) > 1e-9]
        incoming = np.asarray(skeleton.offsets[j])
        if units and skeleton.parents[j] >= 0 and np.linalg.norm(incoming) > 1e-9:
            out[j] = max(units, key=lambda u: float(u @ incoming))
        elif units and np.linalg.norm(np.sum(units, axis=0)) > 1e-6:
            out[j] = np.sum(units, axis=0) / np.linalg.norm(np.sum(units, axis=0))
        elif np.linalg.norm(incoming) > 1e-9:
            out[j] = incoming / np.linalg.norm(incoming)
    return out


def _steps(r: np.ndarray) -> np.ndarray:
    """Local steps ``r[t]^-1 r[t+1]`` of ``(F, ..., 4)`` xyzw rotations, ``(F-1, ..., 4)``."""
    shape = r.shape
    a = Rotation.from_quat(r[:-1].reshape(-1, 4))
    b = Rotation.from_quat(r[1:].reshape(-1, 4))
    return (a.inv() * b).as_quat().reshape((shape[0] - 1,) + shape[1:])


def _candidates(s: np.ndarray, r: np.ndarray, thr: float, p: FlipParams) -> tuple[np.ndarray, np.ndarray]:
    """Steps ``i`` of one joint (angles ``s`` ``(F-1,)``, rotations ``r`` ``(F, 4)``) that are big,
    isolated and lasting (the first three rules of the module docstring), and the largest other
    step within ``window`` of each, rad."""
    n = len(s)
    w = p.window
    pad = np.concatenate([np.zeros(w), s, np.zeros(w)])
    near = np.lib.stride_tricks.sliding_window_view(pad, 2 * w + 1).copy()  # near[i] = steps i-w .. i+w
    near[:, w] = 0.0
    i = np.arange(n)
    ok = (s > thr) & (near.max(axis=1) < p.isolated * s) & (i >= 1) & (i <= n - 2)
    for m in range(w + 1):  # frame i+1+m (clipped to the clip) stays away from frame i
        after = np.minimum(i + 1 + m, n)
        ok &= _angle(r[i], r[after]) >= p.back * s
    found = np.flatnonzero(ok)
    return found, near.max(axis=1)[found]


def find_flips(motion: Motion, params: FlipParams | None = None) -> list[Flip]:
    """The lasting flips of every joint of ``motion`` (see the module docstring), by joint then frame."""
    p = params or FlipParams()
    r = np.asarray(motion.rotations)
    f, n = r.shape[:2]
    if f < 4:
        return []
    sk = motion.skeleton
    axes = bone_axes(sk)
    step = _angle(r[1:], r[:-1])  # (F-1, J): step[t] between frames t and t+1
    floor = p.min_speed / motion.fps
    found: dict[int, list[tuple[int, float]]] = {}
    for j in range(n):
        thr = max(p.factor * float(np.percentile(step[:, j], 95)), floor, np.radians(p.min_deg))
        found[j] = list(zip(*(x.tolist() for x in _candidates(step[:, j], r[:, j], thr, p))))
    if not any(found.values()):
        return []
    world = motion.global_transforms()[1]
    wstep = _angle(world[1:], world[:-1])
    out: list[Flip] = []
    dropped: set[tuple[int, int]] = set()
    for j in range(n):
        for i, near in found[j]:
            if (j, i) in dropped:
                continue
            swing = _twist(_steps(r[i:i + 2, j])[0], axes[j])[1] if axes[j].any() else np.pi
            if swing <= max(near, np.radians(p.swing_deg)):
                kind = "twist"
            elif step[i, j] >= np.radians(p.flip_deg):
                kind = "flip"
            else:
                continue
            comp = tuple(c for c in sk.children(j)
                         if step[i, c] > 0.5 * step[i, j] and wstep[i, c] < p.isolated * step[i, c])
            dropped.update((c, i) for c in comp)  # the child's local jump is this flip's compensation
            out.append(Flip(sk.names[j], i + 1, float(np.degrees(step[i, j])), kind,
                            tuple(sk.names[c] for c in comp)))
    return out


def _fix(r: np.ndarray, k: int, kind: str, axis: np.ndarray) -> Rotation:
    """What the jump into frame ``k`` of one joint's rotations ``r`` ``(F, 4)`` added to the step that
    its neighbouring steps predict: ``r[k] * fix^-1`` continues ``r[k - 1]`` by that step."""
    lo = max(k - 2, 0)
    steps = _steps(r[lo:k + 2])  # steps lo -> lo+1 .. k -> k+1, as many as the clip has
    i = k - 1 - lo
    jump = Rotation.from_quat(steps[i])
    near = [Rotation.from_quat(steps[i - 1]).as_rotvec()] if i >= 1 else []
    if i + 1 < len(steps):  # the step after, turned back into the frame before the jump
        near.append((jump * Rotation.from_quat(steps[i + 1]) * jump.inv()).as_rotvec())
    guess = np.mean(near, axis=0) if near else np.zeros(3)
    if kind == "twist":  # only the twist is undone: the bone keeps the jump's swing, its own motion
        return Rotation.from_rotvec(axis * (_twist(steps[i], axis)[0] - guess @ axis))
    return Rotation.from_rotvec(guess).inv() * jump


def _sign_continuous(q: np.ndarray, before: np.ndarray) -> np.ndarray:
    """``q`` ``(F, 4)`` with signs flipped so that no frame, the first after ``before`` ``(4,)``
    included, jumps to ``-q``."""
    dots = np.einsum("fk,fk->f", q, np.vstack([before, q[:-1]]))
    return q * np.where(np.cumsum(dots < 0) % 2 == 1, -1.0, 1.0)[:, None]


def _corrections(raw: np.ndarray, flips: list[Flip], axis: np.ndarray) -> np.ndarray:
    """The correction ``g`` ``(F, 4)`` xyzw of one joint's rotations ``raw`` ``(F, 4)`` for its
    ``flips`` (sorted by frame): the repaired rotations are ``raw * g^-1``."""
    g = np.tile([0.0, 0.0, 0.0, 1.0], (len(raw), 1))
    start = flips[0].frame
    for fl in flips:
        k = fl.frame
        fix = _fix((Rotation.from_quat(raw) * Rotation.from_quat(g).inv()).as_quat(), k, fl.kind, axis)
        held = Rotation.from_quat(g[k - 1])
        total = fix * held
        if held.magnitude() > 0 and total.magnitude() < FLIP_BACK * held.magnitude():
            # Flipped back. The span between takes the halfway of ``held`` (exact at its start) and
            # ``held * d total^-1 d^-1`` (exact at its end with no correction after; d the jump).
            d = Rotation.from_quat(_steps(raw[k - 1:k + 1])[0])
            g[start:k] = (held * Rotation.from_rotvec(-0.5 * d.apply(total.as_rotvec()))).as_quat()
            g[k:] = [0.0, 0.0, 0.0, 1.0]
        else:
            g[k:] = total.as_quat()
        start = k
    return g


def repair_flips(motion: Motion, flips: list[Flip]) -> Motion:
    """A new motion with each flip's joint (and its compensating children) made continuous from its frame on.

    A joint's corrections add up over its flips. A flip that leaves less than ``FLIP_BACK`` of the
    correction held before it flips the rig back: from there on the clip is kept as it is, and the
    frames between take the mean of the corrections that their two ends ask for. A child that
    compensates any of a joint's flips takes back all of that joint's corrections.
    """
    if not flips:
        return motion
    sk = motion.skeleton
    raw = np.asarray(motion.rotations)
    rot = np.array(raw)
    axes = bone_axes(sk)
    for j in sorted({sk.index(x.joint) for x in flips}):
        mine = sorted((x for x in flips if x.joint == sk.names[j]), key=lambda x: x.frame)
        k = mine[0].frame
        g = Rotation.from_quat(_corrections(raw[:, j], mine, axes[j])[k:])
        rot[k:, j] = _sign_continuous((Rotation.from_quat(raw[k:, j]) * g.inv()).as_quat(), rot[k - 1, j])
        for c in {sk.index(n) for x in mine for n in x.compensated}:
            rot[k:, c] = _sign_continuous((g * Rotation.from_quat(raw[k:, c])).as_quat(), rot[k - 1, c])
    return Motion(sk, motion.fps, motion.translations, rot, source=motion.source)


def find_fast(motion: Motion, params: FastParams | None = None) -> list[Fast]:
    """Spans where a joint's local rotation turns faster than ``params.limit``, by joint then frame.

    The speed at frame ``t`` is the angle between frames ``t`` and ``t + steps`` times
    ``fps / steps``: a net rotation, so capture noise that jitters back and forth does not add up.
    A span runs from the first such ``t`` to the last ``t + steps`` of overlapping windows.
    """
    p = params or FastParams()
    r = np.asarray(motion.rotations)
    n = p.steps
    if r.shape[0] <= n:
        return []
    speed = _angle(r[n:], r[:-n]) * motion.fps / n  # (F-n, J)
    out: list[Fast] = []
    for j in range(r.shape[1]):
        hot = np.flatnonzero(speed[:, j] > p.limit)
        if not hot.size:
            continue
        breaks = np.flatnonzero(np.diff(hot) > n) + 1  # windows that overlap or touch form one span
        for run in np.split(hot, breaks):
            out.append(Fast(motion.skeleton.names[j], int(run[0]), int(run[-1] + n),
                            float(speed[run, j].max())))
    return out


def flip_report(flips: list[Flip], first_file_frame: int, fps: float) -> list[dict]:
    """JSON-able list: ``{joint, file_frame, clip_time_s, jump_deg, kind, compensated}`` per flip.

    ``first_file_frame`` is the file frame of the motion's frame 0 (the number of dropped frames);
    the clip time counts from that frame, as in :func:`~tracker.retarget.glitches.glitch_report`.
    """
    return [{"joint": x.joint, "file_frame": x.frame + first_file_frame,
             "clip_time_s": round(x.frame / fps, 6), "jump_deg": round(x.jump_deg, 1), "kind": x.kind,
             "compensated": list(x.compensated)} for x in flips]


def fast_report(fast: list[Fast], first_file_frame: int, fps: float) -> list[dict]:
    """JSON-able list: ``{joint, file_frames, clip_times_s, peak_speed_rad_s}`` per span (every frame of it).

    The frame and time conventions are those of :func:`flip_report`.
    """
    out = []
    for x in fast:
        frames = list(range(x.start, x.stop + 1))
        out.append({"joint": x.joint, "file_frames": [k + first_file_frame for k in frames],
                    "clip_times_s": [round(k / fps, 6) for k in frames],
                    "peak_speed_rad_s": round(x.peak_speed, 1)})
    return out
