"""Authoring BVH clips, part 1: the demo skeleton, key-pose types and pose helpers
(used by ``scripts/author_clips.py``; metres, Z up, facing +X, the character's left +Y)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracker.motion.skeleton import Skeleton  # noqa: E402


# --- the skeleton ----------------------------------------------------------------------------------
# Our conventions: metres, Z up, facing +X, the character's left is +Y. Proportions of a 1.75 m
# adult (Drillis & Contini: hip joint 0.530 H, knee 0.285 H, ankle 0.039 H, shoulder 0.818 H,
# upper arm 0.186 H, forearm 0.146 H, hand 0.108 H). Every rest offset is along a world axis, so
# the all-zero pose is a T-pose. (name, parent, offset (m))
_LEG = [
    ("UpLeg", "Hips", (0.0, 0.09, -0.08)),
    ("Leg", "UpLeg", (0.0, 0.0, -0.43)),
    ("Foot", "Leg", (0.0, 0.0, -0.43)),
    ("ToeBase", "Foot", (0.13, 0.0, -0.05)),
]
_ARM = [
    ("Shoulder", "Spine1", (0.0, 0.02, 0.13)),
    ("Arm", "Shoulder", (0.0, 0.16, 0.0)),
    ("ForeArm", "Arm", (0.0, 0.29, 0.0)),
    ("Hand", "ForeArm", (0.0, 0.25, 0.0)),
]
_TRUNK = [
    ("LowerBack", "Hips", (0.0, 0.0, 0.05)),
    ("Spine", "LowerBack", (0.0, 0.0, 0.12)),
    ("Spine1", "Spine", (0.0, 0.0, 0.12)),
    ("Neck", "Spine1", (0.0, 0.0, 0.17)),
    ("Head", "Neck", (0.01, 0.0, 0.10)),
]
HIP_HEIGHT_M = 1.01  # the Hips joint; the hip joints are 0.08 m lower, at 0.93 m
# (owner, offset (m)): toe tips, top of the head, finger tips.
_END_SITES = [
    ("LeftToeBase", (0.06, 0.0, 0.0)),
    ("RightToeBase", (0.06, 0.0, 0.0)),
    ("Head", (0.02, 0.0, 0.18)),
    ("LeftHand", (0.0, 0.18, 0.0)),
    ("RightHand", (0.0, -0.18, 0.0)),
]

ROOT_CHANNELS = ("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")
JOINT_CHANNELS = ("Zrotation", "Yrotation", "Xrotation")


def _side(chain: list, side: str) -> list[tuple[str, str, tuple[float, float, float]]]:
    """A left/right limb from a template written for the left side (+Y)."""
    sign = 1.0 if side == "Left" else -1.0
    out = []
    for name, parent, (x, y, z) in chain:
        parent = parent if parent in ("Hips", "Spine1") else side + parent
        out.append((side + name, parent, (x, sign * y, z)))
    return out


@functools.cache
def demo_skeleton() -> Skeleton:
    """The authored clips' skeleton (22 joints, 5 End Sites), T-pose at rest."""
    joints = [("Hips", "", (0.0, 0.0, HIP_HEIGHT_M))]
    joints += _side(_LEG, "Left") + _side(_LEG, "Right") + _TRUNK
    joints += _side(_ARM, "Left") + _side(_ARM, "Right")
    names = [n for n, _, _ in joints]
    return Skeleton(
        names=names,
        parents=[names.index(p) if p else -1 for _, p, _ in joints],
        offsets=[o for _, _, o in joints],
        channels=[ROOT_CHANNELS if not p else JOINT_CHANNELS for _, p, _ in joints],
        end_site_parents=[names.index(n) for n, _ in _END_SITES],
        end_site_offsets=[o for _, o in _END_SITES],
    )


# --- clips: key poses ------------------------------------------------------------------------------

Euler = tuple[float, float, float]
Pose = dict[str, Euler]


@dataclass(frozen=True)
class KeyPose:
    """One key pose.

    Attributes:
        time_s: when the pose is reached.
        rotations: local joint rotations as extrinsic ``xyz`` Euler angles in
            degrees about the parent's axes (X forward, Y left, Z up at rest);
            joints not listed are at rest (identity).
        root_m: root position, metres (default: standing at the rest height).
    """

    time_s: float
    rotations: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    root_m: tuple[float, float, float] = (0.0, 0.0, HIP_HEIGHT_M)


@dataclass(frozen=True)
class FootKey:
    """Where a foot is at ``time_s``: its ankle and orientation, or free.

    Between two placed keys the ankle, yaw and pitch follow a monotone cubic
    (PCHIP: equal keys hold still, no overshoot); between a placed and a free
    key the leg blends (quintic smoothstep) to or from its key-pose rotations.

    Attributes:
        time_s: clip time, s.
        ankle_m: ankle joint position ``(x, y, z)`` m, or None: the leg follows
            the key poses' rotations.
        yaw_deg: foot heading about Z (0: toes along +X).
        pitch_deg: toes down (+) or up (-) about the foot's lateral axis.
    """

    time_s: float
    ankle_m: tuple[float, float, float] | None
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0


@dataclass(frozen=True)
class ClipEvent:
    """The moment a scenario aims at (ball contact...), written to ``events.yaml``.

    Attributes:
        name: what happens (``ball_contact``...).
        time_s: clip time of the event, s (on the frame grid).
        links: the character links (``data/humanoid``) that meet the ball.
        note: one line on what the pose is at that time.
    """

    name: str
    time_s: float
    links: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class ClipSpec:
    """A clip to author: key poses sampled at ``fps`` from the first to the last key.

    Attributes:
        feet: per side (``"Left"``/``"Right"``), the foot's track; sides not
            listed follow the key poses.
        event: the clip's key event, if it has one.
        pose_note: how the clip starts, for the header comment.
        ease_ends: ease time through the first and last segments so the clip
            starts and ends at rest (see :func:`build_motion`).
    """

    name: str
    description: str
    fps: float
    keys: tuple[KeyPose, ...]
    feet: dict[str, tuple[FootKey, ...]] = field(default_factory=dict)
    event: ClipEvent | None = None
    pose_note: str = "Frame 0 is a T-pose."
    ease_ends: bool = False


# --- pose helpers ----------------------------------------------------------------------------------

FOOT_REST_Z_M = 0.07  # ankle height with the foot flat on the floor (1.01 - 0.08 - 0.43 - 0.43)
#: Front edge of the character's sole from its ankle (data/humanoid): a heel raise
#: pivots here so the humanoid's rigid foot box does not dig into the floor.
TOE_PIVOT_M = (0.19, 0.0, -0.07)
KNEE_SOFT_DEG = 8.0  # knee bend when standing relaxed, so no leg is ever fully stretched
PALM_ALONG_M = 0.08  # palm centre along the hand bone from the wrist
PALM_DEPTH_M = 0.015  # palm surface to the hand's mid-plane
# The catch (see hold_ball): the hands' pocket opens toward a ball coming from the front this far
# above level, the palms face this far up (under the ball), and while holding the ball each palm
# is this far inside it, so that a tracking servo presses the palms onto the ball.
CATCH_ELEVATION_DEG = 25.0
CATCH_CUP_DEG = 15.0
GRIP_SQUEEZE_M = 0.015
ARMS_DOWN: Pose = {
    "LeftArm": (-80.0, 0.0, 0.0),
    "LeftForeArm": (0.0, 0.0, -10.0),
    "RightArm": (80.0, 0.0, 0.0),
    "RightForeArm": (0.0, 0.0, 10.0),
}


def _norm(offset: Sequence[float]) -> float:
    return float(np.linalg.norm(offset))


def _bone(name: str) -> float:
    sk = demo_skeleton()
    return _norm(sk.offsets[sk.index(name)])


def stand_height(half_width_m: float) -> float:
    """Hips height (m) standing with soft knees and the ankles ``half_width_m`` off the midline."""
    l1, l2 = _bone("LeftLeg"), _bone("LeftFoot")
    reach = np.sqrt(l1**2 + l2**2 + 2 * l1 * l2 * np.cos(np.radians(KNEE_SOFT_DEG)))
    hip = demo_skeleton().offsets[demo_skeleton().index("LeftUpLeg")]
    lateral = half_width_m - hip[1]
    return float(FOOT_REST_Z_M - hip[2] + np.sqrt(reach**2 - lateral**2))


def flat(x: float, y: float, yaw_deg: float = 0.0) -> dict:
    """FootKey arguments for a foot flat on the floor with its ankle above ``(x, y)``."""
    return {"ankle_m": (x, y, FOOT_REST_Z_M), "yaw_deg": yaw_deg}


def heel_up(x: float, y: float, pitch_deg: float, yaw_deg: float = 0.0) -> dict:
    """FootKey arguments for the foot at ``(x, y)`` turned toes-down about the front of its sole."""
    yaw = Rotation.from_euler("z", yaw_deg, degrees=True)
    pivot = np.array([x, y, FOOT_REST_Z_M]) + yaw.apply(TOE_PIVOT_M)
    ankle = pivot - (yaw * Rotation.from_euler("y", pitch_deg, degrees=True)).apply(TOE_PIVOT_M)
    return {"ankle_m": tuple(float(v) for v in ankle), "yaw_deg": yaw_deg, "pitch_deg": pitch_deg}


def trunk(
    lean: float = 0.0, bend: float = 0.0, twist: float = 0.0, nod: float = 0.0, turn: float = 0.0
) -> Pose:
    """Spine and head, degrees.

    ``lean`` forward (+), ``bend`` to the left (+) and ``twist`` to the left (+) are spread
    over the three spine joints; the head ``nod`` s down (+) and ``turn`` s left (+).
    """
    each = (-bend / 3.0, lean / 3.0, twist / 3.0)
    return {"LowerBack": each, "Spine": each, "Spine1": each, "Head": (0.0, nod, turn)}


Root = tuple[float, float, float]


def pose(*parts: Pose) -> Pose:
    """One pose from several partial ones (later parts win)."""
    out: Pose = {}
    for part in parts:
        out.update(part)
    return out


def key(time_s: float, root_m: Root, *parts: Pose) -> KeyPose:
    """A :class:`KeyPose` from partial poses (see :func:`pose`)."""
    return KeyPose(time_s, pose(*parts), root_m)


def leg(
    side: str, thigh: float = 0.0, knee: float = 0.0, toes: float = 0.0, out: float = 0.0
) -> Pose:
    """A free leg, degrees: thigh swung forward (+) or back (-), moved ``out`` to the side,
    knee bent, toes pointed down (+)."""
    sign = 1.0 if side == "Left" else -1.0
    return {f"{side}UpLeg": (sign * out, -thigh, 0.0), f"{side}Leg": (0.0, knee, 0.0),
            f"{side}Foot": (0.0, toes, 0.0)}  # fmt: skip


def pelvis(turn: float = 0.0, tilt: float = 0.0, hike: float = 0.0) -> Pose:
    """The pelvis (root joint), degrees: turned left (+), tilted forward (+), right side up (+)."""
    return {"Hips": (-hike, tilt, turn)}


def both_arms(
    body: Pose,
    root: Root,
    wrist: Sequence[float],
    pole: Sequence[float],
    from_shoulders: bool = False,
) -> Pose:
    """``body`` with both arms posed by :func:`reach`.

    ``wrist`` and ``pole`` are the left arm's; the right arm mirrors them across the midline.
    With ``from_shoulders`` the wrist's x and z are offsets from each shoulder (its y stays a
    distance from the midline).
    """
    out = dict(body)
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        x, y, z = wrist
        if from_shoulders:
            shoulder = fk_pose(out, root)[0][f"{side}Arm"]
            x, z = shoulder[0] + x, shoulder[2] + z
        out = reach(out, root, side, (x, sign * y, z), (pole[0], sign * pole[1], pole[2]))
    return out


def fk_pose(
    rotations: Pose, root_m: Sequence[float]
) -> tuple[dict[str, np.ndarray], dict[str, Rotation]]:
    """World position ``(3,)`` m and rotation of every joint of one pose."""
    sk = demo_skeleton()
    pos: dict[str, np.ndarray] = {}
    rot: dict[str, Rotation] = {}
    for j, name in enumerate(sk.names):
        local = Rotation.from_euler("xyz", rotations.get(name, (0.0, 0.0, 0.0)), degrees=True)
        p = sk.parents[j]
        if p < 0:
            pos[name], rot[name] = np.array(root_m, dtype=float), local
        else:
            parent = sk.names[p]
            pos[name] = pos[parent] + rot[parent].apply(np.array(sk.offsets[j]))
            rot[name] = rot[parent] * local
    return pos, rot


def _euler(r: Rotation) -> Euler:
    return tuple(float(v) for v in r.as_euler("xyz", degrees=True))  # type: ignore[return-value]


def reach(
    rotations: Pose,
    root_m: Sequence[float],
    side: str,
    wrist: Sequence[float],
    pole: Sequence[float],
) -> Pose:
    """``rotations`` with the ``side`` arm solved so its wrist is at ``wrist`` (world, m).

    Two-bone IK: the elbow bends toward ``pole`` (a world direction), the hand
    continues the forearm. The elbow stays a pure hinge about the upper arm's
    rest flexion axis (-Z on the left, +Z on the right: it swings the forearm
    forward in the T-pose), so the retargeter's hinge projection loses nothing.
    With the elbow toward ``pole`` the palms face the plane of the two arms
    (palms facing each other when both poles point down).

    Raises:
        ValueError: the wrist is out of the arm's reach.
    """
    sign = 1.0 if side == "Left" else -1.0
    pos, rot = fk_pose(rotations, root_m)
    l1, l2 = _bone(f"{side}ForeArm"), _bone(f"{side}Hand")
    to_wrist = np.asarray(wrist, float) - pos[f"{side}Arm"]
    d = float(np.linalg.norm(to_wrist))
    if d > l1 + l2 - 1e-6:
        raise ValueError(
            f"{side} wrist target {np.round(wrist, 3)} is {d:.3f} m from the shoulder "
            f"(arm {l1 + l2:.3f} m)"
        )
    flex = np.arccos(np.clip((d**2 - l1**2 - l2**2) / (2 * l1 * l2), -1.0, 1.0))
    alpha = np.arccos(np.clip((l1**2 + d**2 - l2**2) / (2 * l1 * d), -1.0, 1.0))
    u = to_wrist / d
    p = np.asarray(pole, float) - np.dot(pole, u) * u
    p /= np.linalg.norm(p)
    upper = np.cos(alpha) * u + np.sin(alpha) * p
    axis = np.cross(p, u)  # (shoulder->elbow) x (elbow->wrist) points along the flexion axis
    axis /= np.linalg.norm(axis)
    bone, hinge = np.array([0.0, sign, 0.0]), np.array([0.0, 0.0, -sign])
    rest = np.column_stack([bone, hinge, np.cross(bone, hinge)])
    world = np.column_stack([upper, axis, np.cross(upper, axis)])
    arm_world = Rotation.from_matrix(world @ rest.T)
    out = dict(rotations)
    out[f"{side}Arm"] = _euler(rot[f"{side}Shoulder"].inv() * arm_world)
    out[f"{side}ForeArm"] = _euler(Rotation.from_rotvec(flex * hinge))
    out[f"{side}Hand"] = (0.0, 0.0, 0.0)
    return out


def hold_ball(
    rotations: Pose,
    root_m: Sequence[float],
    centre: Sequence[float],
    radius: float,
    open_deg: float = 0.0,
    elevation_deg: float = 0.0,
    cup_deg: float = 0.0,
) -> Pose:
    """``rotations`` with the palms on a ball of ``radius`` at ``centre`` (world, m).

    Each palm faces the ball's centre from its side (±Y), tilted ``cup_deg`` up (under the
    ball) and turned ``open_deg`` toward the opening direction (forward, ``elevation_deg``
    up): the hands make a pocket that opens toward an incoming ball (wrists extended), the
    fingers along the opening. A ``radius`` smaller than the ball's puts the palms inside it:
    a servo tracking the pose presses them onto the ball.

    The elbow goes where the plane of the arm makes the palm face that way without twisting
    the hand about its bone (a hand's roll follows its arm's plane when the clip is
    retargeted): down, and in toward the body the more the palms face up.
    """
    out = dict(rotations)
    centre = np.asarray(centre, float)
    e, th, cup = np.radians(elevation_deg), np.radians(open_deg), np.radians(cup_deg)
    opening = np.array([np.cos(e), 0.0, np.sin(e)])
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        inward = np.array([0.0, -sign * np.cos(cup), np.sin(cup)])
        face = np.cos(th) * inward + np.sin(th) * opening  # palm -> centre
        face /= np.linalg.norm(face)
        fingers = opening - np.dot(opening, face) * face
        fingers /= np.linalg.norm(fingers)
        # the hand bone runs along ±Y (the side's sign) and the palm faces -Z in the T-pose
        hand = Rotation.from_matrix(
            np.column_stack([np.cross(sign * fingers, -face), sign * fingers, -face])
        )
        wrist = centre - radius * face - hand.apply([0.0, sign * PALM_ALONG_M, -PALM_DEPTH_M])
        # the arm's palm-facing axis: in the plane of `face` and `fingers`, normal to the
        # shoulder-wrist line; the elbow bends about it (see reach)
        reach_dir = wrist - fk_pose(out, root_m)[0][f"{side}Arm"]
        chi = np.arctan2(-np.dot(face, reach_dir), np.dot(fingers, reach_dir))
        axis = np.cos(chi) * face + np.sin(chi) * fingers
        pole = sign * np.cross(reach_dir, axis)
        out = reach(out, root_m, side, wrist, pole)
        forearm = fk_pose(out, root_m)[1][f"{side}ForeArm"]
        out[f"{side}Hand"] = _euler(forearm.inv() * hand)
    return out


def chest(rotations: Pose, root_m: Sequence[float]) -> np.ndarray:
    """World position ``(3,)`` m of the chest joint (``Spine1``) of a pose."""
    return fk_pose(rotations, root_m)[0]["Spine1"]


def straight_arm(
    rotations: Pose,
    root_m: Sequence[float],
    side: str,
    wrist_y: float,
    down_deg: float,
    elbow_deg: float = 6.0,
) -> np.ndarray:
    """Wrist point (m) of an almost straight ``side`` arm reaching forward ``down_deg`` below
    level, to ``wrist_y`` off the midline."""
    l1, l2 = _bone(f"{side}ForeArm"), _bone(f"{side}Hand")
    length = np.sqrt(l1**2 + l2**2 + 2 * l1 * l2 * np.cos(np.radians(elbow_deg)))
    shoulder = fk_pose(rotations, root_m)[0][f"{side}Arm"]
    dy = wrist_y - shoulder[1]
    sagittal = np.sqrt(length**2 - dy**2)
    down = np.radians(down_deg)
    return shoulder + [sagittal * np.cos(down), dy, -sagittal * np.sin(down)]
