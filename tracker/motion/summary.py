"""Facts a person checks first about a clip: its height and its frame-0 arm pose.

The *extent* is the vertical extent (along world Z) of all joints and End
Sites in a frame. It understates a person's height whenever the skeleton has
no head-top point (Bandai's topmost point is the head joint, at the chin) or
the frame is not an upright pose, so the *height* is estimated from bone
lengths instead: thigh + shank are 0.491 of standing height (Drillis & Contini
segment proportions: hip 0.530 H, knee 0.285 H, ankle 0.039 H). The thigh and
shank are the two longest bones on the chain from the lowest leaf of frame 0
(a foot) up to where it meets the chain of the highest leaf (the pelvis).
The frame-0 pose kind comes from the world directions of the two
upper arms (shoulder joint to elbow joint): a T-pose has both within
:data:`T_POSE_MAX_DEG` of horizontal, an A-pose has both between
:data:`T_POSE_MAX_DEG` and :data:`A_POSE_MAX_DEG` below horizontal, and in
both cases each arm points away from the body (its horizontal direction is
within 45 degrees of the line from the other shoulder to its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.motion.motion import Motion
from tracker.motion.skeleton import Skeleton

T_POSE_MAX_DEG = 20.0
A_POSE_MAX_DEG = 65.0
_OUTWARD_MIN_COS = np.cos(np.radians(45.0))

# Upper-arm joint names across conventions: LeftArm (CMU-MB, Mixamo), UpperArm_L
# (Bandai), CC_Base_L_Upperarm (Reallusion), lShldr (Daz), LeftUpArm.
_UPPER_ARM = re.compile(r"(up(per)?_?arm|shldr|(^|[:_])(left|right|l|r)_?arm$)", re.IGNORECASE)
_NOT_A_BONE = re.compile(r"twist|share|roll|helper", re.IGNORECASE)


@dataclass(frozen=True)
class ArmPose:
    """Frame-0 arm pose.

    Attributes:
        kind: ``"T-pose"``, ``"A-pose"``, ``"neither"``, or ``"unknown"``
            (no left and right upper arm found by name).
        left_elevation_deg: angle of the left upper arm above horizontal
            (negative below), or ``None`` if unknown.
        right_elevation_deg: the same for the right upper arm.
    """

    kind: str
    left_elevation_deg: float | None = None
    right_elevation_deg: float | None = None


def frame_points(motion: Motion, frame: int = 0, root_offset: bool = False) -> np.ndarray:
    """World positions of all joints then all End Sites in ``frame``, ``(J + E, 3)`` m.

    With ``root_offset``, the root's OFFSET is added to its position channels (Reallusion's
    CC_Base export writes the root's positions relative to its OFFSET; most files write them
    absolute and have a zero root OFFSET, where this changes nothing).
    """
    trans = np.array(motion.translations[frame : frame + 1])
    if root_offset:
        trans[:, 0] += motion.skeleton.offsets[0]
    one = Motion(motion.skeleton, motion.fps, trans, motion.rotations[frame : frame + 1])
    pos, quats = one.global_transforms()
    sk = motion.skeleton
    ends = [
        pos[0, j] + Rotation.from_quat(quats[0, j]).apply(np.array(off))
        for j, off in zip(sk.end_site_parents, sk.end_site_offsets)
    ]
    return np.concatenate([pos[0], np.reshape(ends, (-1, 3))])


def root_offset_applies(motion: Motion) -> bool:
    """Whether the root OFFSET belongs on top of the root's position channels.

    Decided by the floor: it does when adding it brings frame 0's lowest point closer to
    z = 0 (the CC_Base export: lowest point -0.96 m without it, 0.0 m with it).
    """
    if not np.any(motion.skeleton.offsets[0]):
        return False
    without = abs(float(frame_points(motion, 0)[:, 2].min()))
    with_offset = abs(float(frame_points(motion, 0, root_offset=True)[:, 2].min()))
    return with_offset < without


def floor_and_top(motion: Motion, frame: int = 0) -> tuple[float, float]:
    """Lowest and highest z of the posed skeleton in ``frame`` (root OFFSET handled), metres."""
    z = frame_points(motion, frame, root_offset=root_offset_applies(motion))[:, 2]
    return float(z.min()), float(z.max())


def extent(motion: Motion, frame: int = 0) -> float:
    """Vertical extent of joints and End Sites in ``frame``, metres."""
    z = frame_points(motion, frame)[:, 2]
    return float(z.max() - z.min())


#: Thigh + shank length as a fraction of standing height (Drillis & Contini).
LEG_FRACTION = 0.491


def height(motion: Motion) -> float:
    """Standing height estimated from thigh + shank length (module docstring), metres.

    Falls back to the frame-0 :func:`extent` when the chain from the lowest
    to the highest leaf has fewer than two bones below the pelvis.
    """
    sk = motion.skeleton
    points = frame_points(motion, 0)
    parents = np.concatenate([sk.parents, sk.end_site_parents])
    lengths = np.linalg.norm(np.concatenate([sk.offsets, sk.end_site_offsets]), axis=1)
    has_child = set(sk.parents.tolist()) | set(sk.end_site_parents.tolist())
    leaves = [i for i in range(len(parents)) if i >= sk.n_joints or i not in has_child]
    low = min(leaves, key=lambda i: points[i, 2])
    high = max(leaves, key=lambda i: points[i, 2])

    def chain(i: int) -> list[int]:
        out = []
        while i >= 0:
            out.append(i)
            i = int(parents[i])
        return out

    up = chain(high)
    down = chain(low)
    meet = next(i for i in down if i in up)
    legs = np.sort(lengths[down[: down.index(meet)]])  # bones from the foot up to the pelvis
    if len(legs) < 2 or legs[-2] <= 0:
        return extent(motion, 0)
    return float((legs[-1] + legs[-2]) / LEG_FRACTION)


def side(name: str) -> str | None:
    """``"L"``, ``"R"`` or ``None`` from a joint name (LeftArm, lShldr, UpperArm_L, CC_Base_L_...)."""
    low = name.lower()
    if "left" in low:
        return "L"
    if "right" in low:
        return "R"
    parts = [p.lower() for p in re.split(r"[_:.\-\s]+", name)]
    if "l" in parts:
        return "L"
    if "r" in parts:
        return "R"
    match = re.match(r"([lr])[A-Z]", name)
    return match.group(1).upper() if match else None


def upper_arms(skeleton: Skeleton) -> tuple[int, int] | None:
    """Indices of the left and right upper-arm joints, or ``None`` if not exactly one each."""
    found: dict[str, list[int]] = {"L": [], "R": []}
    for j, name in enumerate(skeleton.names):
        if _UPPER_ARM.search(name) and not _NOT_A_BONE.search(name):
            s = side(name)
            if s:
                found[s].append(j)
    if len(found["L"]) != 1 or len(found["R"]) != 1:
        return None
    return found["L"][0], found["R"][0]


def _elbow_offset(skeleton: Skeleton, j: int) -> np.ndarray | None:
    """Rest offset from joint ``j`` to its elbow: its longest child or End Site offset."""
    offsets = [skeleton.offsets[k] for k in skeleton.children(j)]
    offsets += [o for p, o in zip(skeleton.end_site_parents, skeleton.end_site_offsets) if p == j]
    if not offsets:
        return None
    best = max(offsets, key=lambda o: float(np.linalg.norm(o)))
    return best if np.linalg.norm(best) > 0 else None


def arm_pose(motion: Motion, frame: int = 0) -> ArmPose:
    """Classify the arm pose of ``frame`` (see the module docstring)."""
    sk = motion.skeleton
    arms = upper_arms(sk)
    if arms is None:
        return ArmPose("unknown")
    one = Motion(
        sk, motion.fps, motion.translations[frame : frame + 1], motion.rotations[frame : frame + 1]
    )
    pos, quats = one.global_transforms()
    directions = []
    for j in arms:
        off = _elbow_offset(sk, j)
        if off is None:
            return ArmPose("unknown")
        d = Rotation.from_quat(quats[0, j]).apply(np.array(off))
        directions.append(d / np.linalg.norm(d))
    elev = [float(np.degrees(np.arcsin(np.clip(d[2], -1.0, 1.0)))) for d in directions]
    across = pos[0, arms[0]] - pos[0, arms[1]]  # right shoulder to left shoulder
    across[2] = 0.0
    outward = True
    for d, sign in zip(directions, (1.0, -1.0)):
        h = np.array([d[0], d[1], 0.0])
        denom = np.linalg.norm(h) * np.linalg.norm(across)
        outward &= bool(denom > 0 and sign * h @ across / denom >= _OUTWARD_MIN_COS)
    if outward and all(abs(e) <= T_POSE_MAX_DEG for e in elev):
        kind = "T-pose"
    elif outward and all(-A_POSE_MAX_DEG <= e < -T_POSE_MAX_DEG for e in elev):
        kind = "A-pose"
    else:
        kind = "neither"
    return ArmPose(kind, elev[0], elev[1])
