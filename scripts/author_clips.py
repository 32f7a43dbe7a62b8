"""Author the project's own small BVH clips from key poses.

These clips are made here, not captured: each is a few key poses on a
CMU-MotionBuilder-named skeleton with adult proportions, interpolated with a
C2 rotation spline and written by the project's own BVH writer
(centimetres, Y up, facing +Z, like most BVH files). A clip is a function
registered with ``@clip(name)`` that returns a :class:`ClipSpec`; everything
else is shared.

Feet that stand on the floor are not left to the spline: a clip may give each
foot a track of :class:`FootKey` (where the ankle is, or "free"), and the leg is
then solved by two-bone IK at every frame, so planted feet do not slide or sink.
Arms are posed at the keys by the same IK (:func:`reach`, :func:`hold_ball`).
A clip may name its key event (ball contact, catch...); ``events.yaml`` beside
the clips lists them for the scenario configs.

Usage::

    python scripts/author_clips.py          # (re)write every clip and events.yaml in data/motions/
    python scripts/author_clips.py --only kick --out /tmp
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from scipy.interpolate import CubicSpline, PchipInterpolator
from scipy.spatial.transform import Rotation, RotationSpline

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracker.motion.bvh_write import write_bvh  # noqa: E402
from tracker.motion.motion import Motion  # noqa: E402
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


CLIPS: dict[str, Callable[[], ClipSpec]] = {}


def clip(name: str) -> Callable[[Callable[[], ClipSpec]], Callable[[], ClipSpec]]:
    """Register a clip-making function under ``name`` (names must be unique)."""

    def register(fn: Callable[[], ClipSpec]) -> Callable[[], ClipSpec]:
        if name in CLIPS:
            raise ValueError(f"clip {name!r} is registered twice")
        CLIPS[name] = fn
        return fn

    return register


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


@clip("demo_wave")
def demo_wave() -> ClipSpec:
    """T-pose, then the left arm drops to the side while the right hand waves three times."""
    # Right arm points -Y at rest: +x lowers it, +z swings it forward. Its forearm at x = -90
    # points straight up; -65 tilts it outward, -115 inward. The left arm mirrors the signs.
    left_down = {"LeftArm": (-75.0, 0.0, 0.0), "LeftForeArm": (0.0, 0.0, -15.0)}
    raised = {"RightArm": (15.0, 0.0, 20.0), "RightShoulder": (-8.0, 0.0, 0.0)}

    def wave(forearm_x: float, hand_x: float, lean: float) -> dict:
        return {
            **left_down,
            **raised,
            "RightForeArm": (forearm_x, 0.0, 0.0),
            "RightHand": (hand_x, 0.0, 0.0),
            "Spine1": (lean, 0.0, 0.0),
            "Head": (-lean, 4.0, 0.0),
        }

    keys = [
        KeyPose(0.0),
        KeyPose(0.6, wave(-90.0, 0.0, 0.0)),
        KeyPose(0.9, wave(-65.0, 10.0, 2.0)),
        KeyPose(1.2, wave(-115.0, -10.0, -2.0)),
        KeyPose(1.5, wave(-65.0, 10.0, 2.0)),
        KeyPose(1.8, wave(-115.0, -10.0, -2.0)),
        KeyPose(2.1, wave(-65.0, 10.0, 2.0)),
        KeyPose(2.4, wave(-90.0, 0.0, 0.0)),
        KeyPose(3.0, {**left_down, "RightArm": (75.0, 0.0, 0.0), "RightForeArm": (0.0, 0.0, 15.0)}),
    ]
    return ClipSpec("demo_wave", demo_wave.__doc__ or "", 60.0, tuple(keys))


# --- the ball clips --------------------------------------------------------------------------------
# Angles in degrees. Arms hang at x = -80 (left) / +80 (right) about the parent's X axis; y < 0 then
# swings them forward; the elbows bend forward about -Z (left) / +Z (right).

STANDING = "Starts and ends standing still (the skeleton's rest pose, all zeros, is a T-pose)."


@clip("kick")
def kick() -> ClipSpec:
    """A right-footed instep kick of a ball lying on the floor: the left foot steps forward and
    plants beside the ball, the right leg swings back, whips forward through the ball (foot at
    its fastest) and follows through high, then comes down beside the left foot."""
    t_kick = 1.40
    s = stand_height(0.09)
    # the left ankle plants beside the ball; the right foot passes ~0.3 m to its right
    plant = (0.40, 0.16)
    end = (plant[0], plant[1] - 0.09)  # hips above the middle of the feet at the end
    step = {"LeftArm": (-78, 12, 0), "LeftForeArm": (0, 0, -15),
            "RightArm": (78, -15, 0), "RightForeArm": (0, 0, 20)}  # fmt: skip
    balance = {"LeftArm": (-35, -25, 0), "LeftForeArm": (0, 0, -25),
               "RightArm": (65, 25, 0), "RightForeArm": (0, 0, 35)}  # fmt: skip
    through = {"LeftArm": (-45, 5, 0), "LeftForeArm": (0, 0, -30),
               "RightArm": (60, -20, 0), "RightForeArm": (0, 0, 30)}  # fmt: skip
    keys = [
        key(0.00, (0.0, 0.0, s), ARMS_DOWN),
        # weight onto the right foot, eyes on the ball
        key(0.40, (0.02, -0.04, s - 0.008), ARMS_DOWN, trunk(lean=4, nod=15), pelvis(turn=-3)),
        # the left foot steps forward to the ball; the arms swing against it
        key(0.62, (0.12, -0.02, s - 0.02), step, trunk(lean=6, twist=-5, nod=20), pelvis(turn=5)),
        key(0.82, (0.24, 0.05, s - 0.03), step, trunk(lean=6, twist=-8, nod=22), pelvis(turn=2)),
        # weight over the planted left foot; the right heel is up, the arms open for balance
        key(1.02, (0.30, 0.10, s - 0.032), balance, trunk(lean=8, bend=4, twist=-10, nod=25),
            pelvis(turn=-6, tilt=3)),
        # the right foot leaves the floor and folds up behind
        key(1.12, (0.31, 0.105, s - 0.034), balance, trunk(lean=8, bend=5, twist=-11, nod=25),
            pelvis(turn=-7, tilt=4, hike=-1), leg("Right", thigh=-4, knee=72, toes=25, out=12)),
        # backswing: thigh back, knee folded, toes pointed; the pelvis turns the right hip back
        key(1.28, (0.32, 0.11, s - 0.036), balance, trunk(lean=6, bend=6, twist=-12, nod=25),
            pelvis(turn=-8, tilt=5, hike=-2), leg("Right", thigh=-20, knee=105, toes=30, out=20)),
        # ball contact: the thigh has swung through, the knee snaps open, the foot is pointed
        key(t_kick, (0.35, 0.11, s - 0.015), through, trunk(lean=-4, bend=8, twist=4, nod=25),
            pelvis(turn=8, hike=7), leg("Right", thigh=30, knee=70, toes=18, out=8)),
        # follow-through: the leg goes on up almost straight, the trunk leans back
        key(1.58, (0.38, 0.10, s - 0.025), through, trunk(lean=-12, bend=6, twist=10, nod=10),
            pelvis(turn=14, tilt=-4, hike=4), leg("Right", thigh=72, knee=15, toes=30, out=2)),
        key(1.80, (0.41, 0.08, s - 0.02), step, trunk(lean=-4, bend=3, twist=4, nod=8),
            pelvis(turn=8, tilt=-2), leg("Right", thigh=38, knee=55)),
        # the right foot lands beside the left; the player settles
        key(2.02, (end[0] + 0.01, 0.06, s - 0.015), ARMS_DOWN, trunk(lean=2, nod=5),
            pelvis(turn=2)),
        key(2.45, (end[0], end[1], s - 0.005), ARMS_DOWN, trunk(nod=2)),
        key(3.00, (end[0], end[1], s), ARMS_DOWN),
    ]  # fmt: skip
    feet = {
        "Left": (
            FootKey(0.00, **flat(0.0, 0.09)),
            FootKey(0.42, **flat(0.0, 0.09)),
            FootKey(0.62, (0.20, 0.13, 0.17), pitch_deg=-4.0),
            FootKey(0.82, **flat(*plant)),
            FootKey(3.00, **flat(*plant)),
        ),
        "Right": (
            FootKey(0.00, **flat(0.0, -0.09)),
            FootKey(0.80, **flat(0.0, -0.09)),
            FootKey(0.92, **heel_up(0.0, -0.09, 15.0)),
            FootKey(1.02, **heel_up(0.0, -0.09, 30.0)),
            FootKey(1.12, None),
            FootKey(1.84, None),
            FootKey(2.04, **flat(end[0], end[1] - 0.09)),
            FootKey(3.00, **flat(end[0], end[1] - 0.09)),
        ),
    }
    event = ClipEvent(
        "ball_contact",
        t_kick,
        ("right_foot",),
        "the right foot at the bottom of its swing, moving fastest; the left foot planted by it",
    )
    return ClipSpec(
        "kick", kick.__doc__ or "", 60.0, tuple(keys), feet, event, STANDING, ease_ends=True
    )


@clip("forearm_pass")
def forearm_pass() -> ClipSpec:
    """A volleyball forearm pass (bump): from standing into a knees-bent ready stance, the arms
    come together straight in front, forearms presented as a platform angled up, and the legs
    extend a little as the ball is met; then the arms lower and the player stands up."""
    t_pass = 1.50
    half = 0.16  # feet a little wider than the hips
    s = stand_height(half)
    feet = {side: (FootKey(0.0, **flat(0.0, sign * half)), FootKey(3.0, **flat(0.0, sign * half)))
            for side, sign in (("Left", 1.0), ("Right", -1.0))}  # fmt: skip

    def bent(t: float, root: Root, wrist: tuple[float, float, float], *body: Pose) -> KeyPose:
        """Wrists ``(ahead of, off the midline, below)`` the shoulders; elbows down and out."""
        ahead, y, below = wrist
        arms = both_arms(pose(*body), root, (ahead, y, -below), (-0.3, 0.6, -1.0), True)
        return KeyPose(t, arms, root)

    def platform(t: float, root: Root, down_deg: float, *body: Pose) -> KeyPose:
        """Arms almost straight (elbows 10 deg), wrists together, ``down_deg`` below level."""
        arms = pose(*body)
        for side, sign in (("Left", 1.0), ("Right", -1.0)):
            wrist = straight_arm(arms, root, side, sign * 0.035, down_deg, elbow_deg=10.0)
            arms = reach(arms, root, side, wrist, (0.0, 0.0, -1.0))
        return KeyPose(t, arms, root)

    keys = [
        key(0.00, (0.0, 0.0, s), ARMS_DOWN),
        bent(0.45, (-0.01, 0.0, s - 0.05), (0.12, 0.20, 0.40), trunk(lean=10, nod=-8),
             pelvis(tilt=6)),
        # ready: knees bent, back inclined, hands apart in front of the knees
        bent(0.95, (-0.03, 0.0, s - 0.13), (0.28, 0.15, 0.30), trunk(lean=14, nod=-18),
             pelvis(tilt=14)),
        bent(1.25, (-0.03, 0.0, s - 0.135), (0.35, 0.07, 0.32), trunk(lean=15, nod=-20),
             pelvis(tilt=15)),
        # contact: arms straight and together, pointing 42 deg below level; the legs push up
        platform(t_pass, (-0.02, 0.0, s - 0.11), 42.0, trunk(lean=14, nod=-18), pelvis(tilt=13)),
        platform(1.75, (0.0, 0.0, s - 0.06), 25.0, trunk(lean=11, nod=-15), pelvis(tilt=10)),
        bent(2.20, (0.0, 0.0, s - 0.02), (0.10, 0.22, 0.42), trunk(lean=4, nod=-5), pelvis(tilt=3)),
        key(3.00, (0.0, 0.0, s), ARMS_DOWN),
    ]  # fmt: skip
    event = ClipEvent(
        "forearms_presented",
        t_pass,
        ("left_forearm", "right_forearm"),
        "arms straight and together, forearms pointing forward-down at about waist height",
    )
    return ClipSpec(
        "forearm_pass",
        forearm_pass.__doc__ or "",
        60.0,
        tuple(keys),
        feet,
        event,
        STANDING,
        ease_ends=True,
    )


@clip("catch")
def catch() -> ClipSpec:
    """A two-handed chest catch: the arms reach forward with the hands open in a pocket at chest
    height, the palms close on the ball as it arrives and give backward with it, then the elbows
    bend to draw it in to the chest while the trunk gives a little backward; the player ends
    standing, holding the ball pressed to the chest."""
    t_catch = 1.30
    radius = 0.12  # basketball size 7
    half = 0.13
    s = stand_height(half)
    feet = {side: (FootKey(0.0, **flat(dx, sign * half)), FootKey(3.0, **flat(dx, sign * half)))
            for side, sign, dx in (("Left", 1.0, 0.04), ("Right", -1.0, -0.04))}  # fmt: skip

    def ball(
        t: float, root: Root, body: Pose, ahead: float, up: float, grip: float, open_deg: float
    ) -> KeyPose:
        """Palms ``grip`` m from the centre of a ball ``ahead`` of and ``up`` from the chest
        joint (m), turned ``open_deg`` toward the thrower (:func:`hold_ball`)."""
        centre = chest(body, root) + [ahead, 0.0, up]
        arms = hold_ball(body, root, centre, grip, open_deg, CATCH_ELEVATION_DEG, CATCH_CUP_DEG)
        return KeyPose(t, arms, root)

    held = radius - GRIP_SQUEEZE_M
    r1 = (0.0, 0.0, s - 0.005)
    keys = [
        KeyPose(0.00, ARMS_DOWN, (0.0, 0.0, s)),
        KeyPose(0.45, both_arms(trunk(lean=2), r1, (0.22, 0.22, 1.02), (0.0, 0.5, -1.0)), r1),
        # reaching: the hands wait in front, open wider than the ball, wrists back so the palms
        # make a pocket facing the thrower; knees soft
        ball(0.95, (0.01, 0.0, s - 0.015), trunk(lean=6, nod=-4), 0.54, 0.08, radius + 0.04, 20.0),
        ball(1.15, (0.01, 0.0, s - 0.015), trunk(lean=6, nod=-3), 0.54, 0.08, radius + 0.015, 20.0),
        # the catch: the palms close onto the ball 0.5 m ahead of the chest joint, already
        # giving backward with it
        ball(t_catch, (0.01, 0.0, s - 0.015), trunk(lean=5, nod=-2), 0.50, 0.08, held, 20.0),
        # drawn in: the wrists turn the palms from behind the ball's middle (a pocket facing the
        # thrower) to in front of it (the hands wrap it against the chest)
        ball(1.45, (-0.01, 0.0, s - 0.03), trunk(lean=-1, nod=4), 0.37, 0.08, held, 5.0),
        ball(1.60, (-0.02, 0.0, s - 0.035), trunk(lean=-5, nod=7), 0.27, 0.08, held, -10.0),
        # against the chest, the trunk given back, the knees a little more bent; then hold it
        ball(1.75, (-0.02, 0.0, s - 0.035), trunk(lean=-6, nod=8), 0.235, 0.08, held, -10.0),
        ball(2.25, (-0.01, 0.0, s - 0.01), trunk(lean=-1, nod=4), 0.235, 0.08, held, -10.0),
        ball(3.00, (0.0, 0.0, s), trunk(nod=3), 0.235, 0.08, held, -10.0),
    ]  # fmt: skip
    event = ClipEvent(
        "catch",
        t_catch,
        ("left_hand", "right_hand"),
        "palms close on the ball's sides at chest height, 0.4 m before the chest; at it by +0.5 s",
    )
    return ClipSpec(
        "catch", catch.__doc__ or "", 60.0, tuple(keys), feet, event, STANDING, ease_ends=True
    )


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


def author(name: str, out_dir: Path) -> Path:
    """Build clip ``name`` and write ``out_dir/name.bvh``; return the path."""
    spec = CLIPS[name]()
    motion = build_motion(spec, demo_skeleton())
    path = out_dir / f"{name}.bvh"
    event = ""
    if spec.event is not None:
        e = spec.event
        event = (
            f"Key event: {e.name} at t = {e.time_s:g} s (frame {round(e.time_s * spec.fps)}), "
            f"links {', '.join(e.links)}: {e.note}.\n"
        )
    comment = (
        f"{spec.name}: authored by scripts/author_clips.py from {len(spec.keys)} key poses, "
        "not motion capture.\n"
        f"{' '.join(spec.description.split())}\n"
        f"{event}"
        f"{spec.pose_note} CMU-MotionBuilder joint names, centimetres, Y up, facing +Z, "
        f"{spec.fps:g} fps."
    )
    write_bvh(motion, path, unit="cm", up_axis="Y", decimals=6, comment=comment)
    return path


EVENTS_HEADER = """\
# Key events of the authored clips in this folder, for the scenario configs.
# Written by scripts/author_clips.py (do not edit by hand; change the clip there).
# time_s: clip time of the event, s (frame i is at i / 60 s);
# links: the humanoid links (data/humanoid) that meet the ball at that time.
"""


def write_events(out_dir: Path) -> Path:
    """Write ``out_dir/events.yaml``: clip -> {event, time_s, links, note} (clips with an event)."""
    events = {}
    for name in sorted(CLIPS):
        e = CLIPS[name]().event
        if e is not None:
            events[name] = {
                "event": e.name,
                "time_s": e.time_s,
                "links": list(e.links),
                "note": e.note,
            }
    path = out_dir / "events.yaml"
    path.write_text(
        EVENTS_HEADER + yaml.safe_dump(events, sort_keys=False, width=120, default_flow_style=None),
        encoding="utf-8",
    )
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "data" / "motions")
    parser.add_argument("--only", choices=sorted(CLIPS), help="author just this clip")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in [args.only] if args.only else sorted(CLIPS):
        print(author(name, args.out))
    print(write_events(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
