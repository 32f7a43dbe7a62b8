"""Authoring BVH clips, part 2: a :class:`ClipSpec` made into a :class:`Motion` (rotation splines, feet
planted by two-bone IK; used by ``scripts/author_clips.py``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline, PchipInterpolator
from scipy.spatial.transform import Rotation, RotationSpline

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracker.motion.motion import Motion  # noqa: E402
from tracker.motion.skeleton import Skeleton  # noqa: E402
from clip_poses import ClipSpec, FootKey  # noqa: E402


# --- generic machinery -----------------------------------------------------------------------------


def build_motion(spec: ClipSpec, skeleton: Skeleton) -> Motion:
    """Sample ``spec``'s key poses at ``spec.fps``: a C2 rotation spline per joint, a C2 cubic for
    the root (zero velocity at both ends), then the legs of tracked feet solved by IK at every
    frame (their key poses solved first, so the spline starts close).

    The rotation spline's rate at the first (last) key is the mean rate of the first (last)
    segment; with ``spec.ease_ends`` those two segments are run through with an easing of time
    (the same path, starting and ending at rest, C1 where the easing meets the spline).
    """
    times = np.array([k.time_s for k in spec.keys])
    if np.any(np.diff(times) <= 0):
        raise ValueError(f"clip {spec.name!r}: key times must increase")
    for k in spec.keys:
        unknown = set(k.rotations) - set(skeleton.names)
        if unknown:
            raise ValueError(f"clip {spec.name!r}: unknown joints {sorted(unknown)}")
    n_frames = round((times[-1] - times[0]) * spec.fps) + 1
    t = times[0] + np.arange(n_frames) / spec.fps
    key_rots = [
        Rotation.from_euler(
            "xyz", [k.rotations.get(name, (0.0, 0.0, 0.0)) for k in spec.keys], degrees=True
        )
        for name in skeleton.names
    ]
    roots = np.array([k.root_m for k in spec.keys])
    if spec.feet:
        planted = _plant_feet(
            spec, skeleton, times, np.stack([r.as_quat() for r in key_rots], axis=1), roots
        )
        key_rots = [Rotation.from_quat(planted[:, j]) for j in range(skeleton.n_joints)]
    ts = _ease_ends(t, times) if spec.ease_ends else t
    rotations = np.empty((n_frames, skeleton.n_joints, 4))
    for j in range(skeleton.n_joints):
        rotations[:, j] = RotationSpline(times, key_rots[j])(ts).as_quat()
    translations = np.repeat(np.array(skeleton.offsets)[None], n_frames, axis=0)
    translations[:, 0] = CubicSpline(times, roots, axis=0, bc_type="clamped")(ts)
    if spec.feet:
        rotations = _sign_continuous(_plant_feet(spec, skeleton, t, rotations, translations[:, 0]))
    return Motion(skeleton, spec.fps, translations, rotations)


def _ease_ends(t: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Clip times ``(F,)`` -> spline times: the first and last key segments eased in and out.

    On a segment of length h from its outer end, ``u -> u^2 (2 - u)`` has slope 0 at the
    clip's end and 1 where it meets the next segment.
    """
    if len(times) < 3:
        raise ValueError("easing the ends needs at least 3 keys")
    out = np.array(t, dtype=float)
    for outer, inner in ((times[0], times[1]), (times[-1], times[-2])):
        u = (t - outer) / (inner - outer)
        sel = (u >= 0) & (u <= 1)
        out[sel] = outer + (inner - outer) * u[sel] ** 2 * (2 - u[sel])
    return out


def _sign_continuous(quats: np.ndarray) -> np.ndarray:
    """Flip quaternions ``(F, J, 4)`` so consecutive frames of a joint have a positive dot."""
    flip = np.cumsum(np.sum(quats[1:] * quats[:-1], axis=-1) < 0, axis=0) % 2 == 1  # (F-1, J)
    out = quats.copy()
    out[1:][flip] *= -1
    return out


def _smoothstep(u: np.ndarray) -> np.ndarray:
    """Quintic ease 0 -> 1 on ``u`` in [0, 1], zero slope and curvature at both ends."""
    u = np.clip(u, 0.0, 1.0)
    return u**3 * (10 - 15 * u + 6 * u**2)


def foot_track(keys: Sequence[FootKey], t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A foot's track at times ``t (F,)``.

    Returns:
        ``(ankle (F, 3) m, (yaw, pitch) (F, 2) deg, weight (F,))``: weight 1
        where the foot is placed, 0 where it is free, blending in between.
    """
    times = np.array([k.time_s for k in keys])
    if np.any(np.diff(times) <= 0):
        raise ValueError("foot key times must increase")
    placed = np.array([k.ankle_m is not None for k in keys])
    values = np.array(
        [[*(k.ankle_m or (np.nan,) * 3), k.yaw_deg, k.pitch_deg] for k in keys]
    )  # (K, 5)
    out = np.zeros((len(t), 5))
    weight = np.zeros(len(t))
    # PCHIP over each run of consecutive placed keys
    run_id = np.cumsum(np.r_[1, np.diff(placed.astype(int)) != 0])
    for r in np.unique(run_id[placed]):
        idx = np.flatnonzero(run_id == r)
        inside = (t >= times[idx[0]]) & (t <= times[idx[-1]])
        if len(idx) == 1:
            out[inside] = values[idx[0]]
        else:
            out[inside] = PchipInterpolator(times[idx], values[idx], axis=0)(t[inside])
        weight[inside] = 1.0
    seg = np.clip(np.searchsorted(times, t, side="right") - 1, 0, len(keys) - 2)
    u = (t - times[seg]) / (times[seg + 1] - times[seg])
    lift = placed[seg] & ~placed[seg + 1] & (u > 0)
    land = ~placed[seg] & placed[seg + 1] & (u < 1)
    out[lift], weight[lift] = values[seg[lift]], 1.0 - _smoothstep(u[lift])
    out[land], weight[land] = values[seg[land] + 1], _smoothstep(u[land])
    for end, sel in ((0, t < times[0]), (-1, t > times[-1])):
        out[sel], weight[sel] = values[end], float(placed[end])
    return out[:, :3], out[:, 3:], weight


def _plant_feet(
    spec: ClipSpec, sk: Skeleton, t: np.ndarray, quats: np.ndarray, roots: np.ndarray
) -> np.ndarray:
    """Local rotations ``(F, J, 4)`` with each tracked leg solved toward its foot track."""
    if not spec.feet:
        return quats
    translations = np.repeat(np.array(sk.offsets)[None], len(t), axis=0)
    translations[:, 0] = roots
    pos, world = Motion(sk, spec.fps, translations, quats).global_transforms()
    out = quats.copy()
    for side, keys in spec.feet.items():
        if side not in ("Left", "Right"):
            raise ValueError(f"clip {spec.name!r}: foot side must be Left or Right, not {side!r}")
        ankle, angles, w = foot_track(keys, t)
        on = w > 0
        if not on.any():
            continue
        hip, knee, foot = (sk.index(f"{side}{n}") for n in ("UpLeg", "Leg", "Foot"))
        spline_foot = Rotation.from_quat(world[on, foot])
        track_foot = Rotation.from_euler(
            "ZY", angles[on], degrees=True
        )  # yaw, then pitch about the foot's Y
        blend = Rotation.from_rotvec(w[on, None] * (spline_foot.inv() * track_foot).as_rotvec())
        target = (1 - w[on, None]) * pos[on, foot] + w[on, None] * ankle[on]
        try:
            hip_q, knee_q, ankle_q = _leg_ik(
                sk, (hip, knee, foot), pos[on], world[on], target, spline_foot * blend
            )
        except ValueError as exc:
            raise ValueError(
                f"clip {spec.name!r}, {side} foot at t = {t[on][0]:.2f}..{t[on][-1]:.2f} s: {exc}"
            ) from None
        out[on, hip], out[on, knee], out[on, foot] = hip_q, knee_q, ankle_q
    return out


def _leg_ik(
    sk: Skeleton,
    joints: tuple[int, int, int],
    pos: np.ndarray,
    world: np.ndarray,
    ankle: np.ndarray,
    foot: Rotation,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two-bone IK of a leg (hip, knee and ankle joint indices), over frames ``(F,)``.

    ``pos``/``world`` are the current world positions ``(F, J, 3)`` and rotations
    ``(F, J, 4)``. The knee is a hinge about the thigh's Y axis; the thigh takes the smallest
    rotation from its current direction that brings the ankle to ``ankle (F, 3)``, so the
    knee keeps pointing where the key poses point it; the ankle then turns the foot to
    ``foot``. Returns local xyzw quaternions ``(F, 4)`` of hip, knee and ankle.
    """
    hip, knee, ank = joints
    o1, o2 = np.array(sk.offsets[knee]), np.array(sk.offsets[ank])
    l1, l2 = np.linalg.norm(o1), np.linalg.norm(o2)
    to_ankle = ankle - pos[:, hip]
    d = np.linalg.norm(to_ankle, axis=1)
    if np.any(d > l1 + l2 + 0.005):
        raise ValueError(
            f"the ankle is {d.max():.3f} m from the hip, beyond the leg's {l1 + l2:.3f} m"
        )
    bend = np.arccos(np.clip((d**2 - l1**2 - l2**2) / (2 * l1 * l2), -1.0, 1.0))
    knee_rot = Rotation.from_rotvec(bend[:, None] * [0.0, 1.0, 0.0])
    thigh = Rotation.from_quat(world[:, hip])
    current = thigh.apply(o1 + knee_rot.apply(o2))
    axis = np.cross(current, to_ankle)
    sin = np.linalg.norm(axis, axis=1)
    angle = np.arctan2(sin, np.sum(current * to_ankle, axis=1))
    align = Rotation.from_rotvec(axis / np.maximum(sin, 1e-12)[:, None] * angle[:, None])
    new_thigh = align * thigh
    parent = Rotation.from_quat(world[:, sk.parents[hip]])
    return (
        (parent.inv() * new_thigh).as_quat(),
        knee_rot.as_quat(),
        ((new_thigh * knee_rot).inv() * foot).as_quat(),
    )
