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

Everything here works on one posed frame, a :class:`Pose`, in plain Python (no numpy):
``tracker inspect`` builds the pose straight from the file's first frame line
(:mod:`tracker.motion.bvh_facts`) and so starts in a few tens of milliseconds. Each function
also takes a :class:`~tracker.motion.motion.Motion` and a frame index.
"""

from __future__ import annotations

import math
import re
# typing is not imported at run time: `tracker inspect` loads only what it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from tracker.motion.motion import Motion

T_POSE_MAX_DEG = 20.0
A_POSE_MAX_DEG = 65.0
_OUTWARD_MIN_COS = math.cos(math.radians(45.0))

# Upper-arm joint names across conventions: LeftArm (CMU-MB, Mixamo), UpperArm_L
# (Bandai), CC_Base_L_Upperarm (Reallusion), lShldr (Daz), LeftUpArm.
_UPPER_ARM = re.compile(r"(up(per)?_?arm|shldr|(^|[:_])(left|right|l|r)_?arm$)", re.IGNORECASE)
_NOT_A_BONE = re.compile(r"twist|share|roll|helper", re.IGNORECASE)

Vec = tuple[float, float, float]
Mat = tuple[float, float, float, float, float, float, float, float, float]  # row-major 3x3


class Pose:
    """One posed frame of a skeleton, metres, Z up (plain Python lists).

    Attributes:
        names: joint names ``(J,)``, parents before children.
        parents: parent index per joint ``(J,)``, ``-1`` for the root.
        offsets: rest offset of each joint in its parent's frame ``(J, 3)`` m (the root's: its OFFSET).
        translations: the frame's local translation of each joint ``(J, 3)`` m (the root's: its
            position in the world).
        rotations: the frame's local rotation of each joint relative to its parent, ``(J,)``
            row-major 3x3 matrices (9-tuples).
        end_parents: joint owning each End Site ``(E,)``.
        end_offsets: End Site offsets in the owner's frame ``(E, 3)`` m.
    """

    __slots__ = ("names", "parents", "offsets", "translations", "rotations", "end_parents", "end_offsets")

    def __init__(self, names, parents, offsets, translations, rotations, end_parents, end_offsets) -> None:
        # Taken as given (sequences of Python numbers): the readers build them, nothing converts.
        self.names: list[str] = list(names)
        self.parents: list[int] = list(parents)
        self.offsets: list[Vec] = list(offsets)
        self.translations: list[Vec] = list(translations)
        self.rotations: list[Mat] = list(rotations)
        self.end_parents: list[int] = list(end_parents)
        self.end_offsets: list[Vec] = list(end_offsets)

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def children(self, j: int) -> list[int]:
        return [k for k, p in enumerate(self.parents) if p == j]


def quat_to_matrix(x: float, y: float, z: float, w: float) -> Mat:
    """Row-major rotation matrix of the (normalised) xyzw quaternion."""
    n = x * x + y * y + z * z + w * w
    s = 2.0 / n if n > 0 else 0.0
    xx, yy, zz = x * x * s, y * y * s, z * z * s
    xy, xz, yz = x * y * s, x * z * s, y * z * s
    wx, wy, wz = w * x * s, w * y * s, w * z * s
    return (1.0 - yy - zz, xy - wz, xz + wy,
            xy + wz, 1.0 - xx - zz, yz - wx,
            xz - wy, yz + wx, 1.0 - xx - yy)


def _mul(a: Mat, b: Mat) -> Mat:
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def apply(r: Mat, v: Vec) -> Vec:
    """``r @ v``."""
    x, y, z = v
    return (r[0] * x + r[1] * y + r[2] * z, r[3] * x + r[4] * y + r[5] * z, r[6] * x + r[7] * y + r[8] * z)


def pose_of(motion: Pose | Motion, frame: int = 0) -> Pose:
    """``motion`` itself if it is a :class:`Pose` (``frame`` 0), else frame ``frame`` of a Motion."""
    if isinstance(motion, Pose):
        if frame != 0:
            raise IndexError(f"a Pose holds one frame; frame {frame} asked for")
        return motion
    sk = motion.skeleton
    return Pose(
        sk.names, sk.parents.tolist(), sk.offsets.tolist(), motion.translations[frame].tolist(),
        [quat_to_matrix(*q) for q in motion.rotations[frame].tolist()],
        sk.end_site_parents.tolist(), sk.end_site_offsets.tolist(),
    )


def global_transforms(pose: Pose, root_offset: bool = False) -> tuple[list[Vec], list[Mat]]:
    """Forward kinematics: world position ``(J, 3)`` m and world rotation ``(J,)`` of each joint.

    With ``root_offset`` the root's OFFSET is added to its position (see :func:`frame_points`).
    """
    pos: list[Vec] = []
    rot: list[Mat] = []
    for j, (p, t, r) in enumerate(zip(pose.parents, pose.translations, pose.rotations)):
        if p < 0:
            if root_offset and j == 0:
                o = pose.offsets[0]
                t = (t[0] + o[0], t[1] + o[1], t[2] + o[2])
            pos.append(t)
            rot.append(r)
        else:
            d = apply(rot[p], t)
            q = pos[p]
            pos.append((q[0] + d[0], q[1] + d[1], q[2] + d[2]))
            rot.append(_mul(rot[p], r))
    return pos, rot


def frame_points(motion: Pose | Motion, frame: int = 0, root_offset: bool = False) -> list[Vec]:
    """World positions of all joints then all End Sites in ``frame``, ``(J + E, 3)`` m.

    With ``root_offset``, the root's OFFSET is added to its position channels (Reallusion's
    CC_Base export writes the root's positions relative to its OFFSET; most files write them
    absolute and have a zero root OFFSET, where this changes nothing).
    """
    pose = pose_of(motion, frame)
    pos, rot = global_transforms(pose, root_offset)
    ends = []
    for j, off in zip(pose.end_parents, pose.end_offsets):
        d = apply(rot[j], off)
        q = pos[j]
        ends.append((q[0] + d[0], q[1] + d[1], q[2] + d[2]))
    return pos + ends


def root_offset_applies(motion: Pose | Motion, frame: int = 0) -> bool:
    """Whether the root OFFSET belongs on top of the root's position channels.

    Decided by the floor: it does when adding it brings frame 0's lowest point closer to
    z = 0 (the CC_Base export: lowest point -0.96 m without it, 0.0 m with it).
    """
    pose = pose_of(motion, frame)
    if not any(pose.offsets[0]):
        return False
    without = abs(min(p[2] for p in frame_points(pose)))
    with_offset = abs(min(p[2] for p in frame_points(pose, root_offset=True)))
    return with_offset < without


def floor_and_top(motion: Pose | Motion, frame: int = 0) -> tuple[float, float]:
    """Lowest and highest z of the posed skeleton in ``frame`` (root OFFSET handled), metres."""
    pose = pose_of(motion, frame)
    z = [p[2] for p in frame_points(pose, root_offset=root_offset_applies(pose))]
    return min(z), max(z)


def extent(motion: Pose | Motion, frame: int = 0) -> float:
    """Vertical extent of joints and End Sites in ``frame``, metres."""
    z = [p[2] for p in frame_points(motion, frame)]
    return max(z) - min(z)


#: Thigh + shank length as a fraction of standing height (Drillis & Contini).
LEG_FRACTION = 0.491


def height(motion: Pose | Motion, frame: int = 0) -> float:
    """Standing height estimated from thigh + shank length (module docstring), metres.

    The lowest and highest leaves are those of ``frame``. Falls back to the :func:`extent` of
    ``frame`` when the chain from the lowest to the highest leaf has fewer than two bones below
    the pelvis.
    """
    pose = pose_of(motion, frame)
    n = pose.n_joints
    points = frame_points(pose)
    parents = pose.parents + pose.end_parents
    lengths = [math.sqrt(x * x + y * y + z * z) for x, y, z in pose.offsets + pose.end_offsets]
    has_child = set(pose.parents) | set(pose.end_parents)
    leaves = [i for i in range(len(parents)) if i >= n or i not in has_child]
    low = min(leaves, key=lambda i: points[i][2])
    high = max(leaves, key=lambda i: points[i][2])

    def chain(i: int) -> list[int]:
        out = []
        while i >= 0:
            out.append(i)
            i = parents[i]
        return out

    up = chain(high)
    down = chain(low)
    meet = next(i for i in down if i in up)
    legs = sorted(lengths[i] for i in down[: down.index(meet)])  # bones from the foot up to the pelvis
    if len(legs) < 2 or legs[-2] <= 0:
        return extent(pose)
    return (legs[-1] + legs[-2]) / LEG_FRACTION


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


def upper_arms(skeleton) -> tuple[int, int] | None:
    """Indices of the left and right upper-arm joints, or ``None`` if not exactly one each.

    ``skeleton`` is anything with ``names`` (a Skeleton, a :class:`Pose`) or the names themselves.
    """
    names = getattr(skeleton, "names", skeleton)
    found: dict[str, list[int]] = {"L": [], "R": []}
    for j, name in enumerate(names):
        if _UPPER_ARM.search(name) and not _NOT_A_BONE.search(name):
            s = side(name)
            if s:
                found[s].append(j)
    if len(found["L"]) != 1 or len(found["R"]) != 1:
        return None
    return found["L"][0], found["R"][0]


def _norm(v: Vec) -> float:
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def _elbow_offset(pose: Pose, j: int) -> Vec | None:
    """Rest offset from joint ``j`` to its elbow: its longest child or End Site offset."""
    offsets = [pose.offsets[k] for k in pose.children(j)]
    offsets += [o for p, o in zip(pose.end_parents, pose.end_offsets) if p == j]
    if not offsets:
        return None
    best = max(offsets, key=_norm)
    return best if _norm(best) > 0 else None


class ArmPose:
    """Frame-0 arm pose.

    Attributes:
        kind: ``"T-pose"``, ``"A-pose"``, ``"neither"``, or ``"unknown"``
            (no left and right upper arm found by name).
        left_elevation_deg: angle of the left upper arm above horizontal
            (negative below), or ``None`` if unknown.
        right_elevation_deg: the same for the right upper arm.
    """

    __slots__ = ("kind", "left_elevation_deg", "right_elevation_deg")

    def __init__(self, kind: str, left_elevation_deg: float | None = None,
                 right_elevation_deg: float | None = None) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "left_elevation_deg", left_elevation_deg)
        object.__setattr__(self, "right_elevation_deg", right_elevation_deg)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("ArmPose is read-only")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArmPose) and (self.kind, self.left_elevation_deg, self.right_elevation_deg) == (
            other.kind, other.left_elevation_deg, other.right_elevation_deg)

    def __hash__(self) -> int:
        return hash((self.kind, self.left_elevation_deg, self.right_elevation_deg))

    def __repr__(self) -> str:
        return (f"ArmPose(kind={self.kind!r}, left_elevation_deg={self.left_elevation_deg!r}, "
                f"right_elevation_deg={self.right_elevation_deg!r})")


def arm_pose(motion: Pose | Motion, frame: int = 0) -> ArmPose:
    """Classify the arm pose of ``frame`` (see the module docstring)."""
    pose = pose_of(motion, frame)
    arms = upper_arms(pose)
    if arms is None:
        return ArmPose("unknown")
    pos, rot = global_transforms(pose)
    directions = []
    for j in arms:
        off = _elbow_offset(pose, j)
        if off is None:
            return ArmPose("unknown")
        d = apply(rot[j], off)
        n = _norm(d)
        directions.append((d[0] / n, d[1] / n, d[2] / n))
    elev = [math.degrees(math.asin(min(max(d[2], -1.0), 1.0))) for d in directions]
    a, b = pos[arms[0]], pos[arms[1]]
    across = (a[0] - b[0], a[1] - b[1], 0.0)  # right shoulder to left shoulder, horizontal
    outward = True
    for d, sign in zip(directions, (1.0, -1.0)):
        denom = math.hypot(d[0], d[1]) * _norm(across)
        outward &= bool(denom > 0 and sign * (d[0] * across[0] + d[1] * across[1]) / denom >= _OUTWARD_MIN_COS)
    if outward and all(abs(e) <= T_POSE_MAX_DEG for e in elev):
        kind = "T-pose"
    elif outward and all(-A_POSE_MAX_DEG <= e < -T_POSE_MAX_DEG for e in elev):
        kind = "A-pose"
    else:
        kind = "neither"
    return ArmPose(kind, elev[0], elev[1])
