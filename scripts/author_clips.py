"""Author the project's own small BVH clips from key poses.

These clips are made here, not captured: each is a few key poses on a
CMU-MotionBuilder-named skeleton with adult proportions, interpolated with a
C2 rotation spline and written by the project's own BVH writer
(centimetres, Y up, facing +Z, like most BVH files). A clip is a function
registered with ``@clip(name)`` that returns a :class:`ClipSpec`; everything
else is shared.

Usage::

    python scripts/author_clips.py            # (re)write every clip into data/motions/
    python scripts/author_clips.py --only demo_wave --out /tmp
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path

import numpy as np
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
class ClipSpec:
    """A clip to author: key poses sampled at ``fps`` from the first to the last key."""

    name: str
    description: str
    fps: float
    keys: tuple[KeyPose, ...]


CLIPS: dict[str, Callable[[], ClipSpec]] = {}


def clip(name: str) -> Callable[[Callable[[], ClipSpec]], Callable[[], ClipSpec]]:
    """Register a clip-making function under ``name`` (names must be unique)."""

    def register(fn: Callable[[], ClipSpec]) -> Callable[[], ClipSpec]:
        if name in CLIPS:
            raise ValueError(f"clip {name!r} is registered twice")
        CLIPS[name] = fn
        return fn

    return register


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


# --- generic machinery -----------------------------------------------------------------------------


def build_motion(spec: ClipSpec, skeleton: Skeleton) -> Motion:
    """Sample ``spec``'s key poses at ``spec.fps`` with a C2 rotation spline per joint."""
    times = np.array([k.time_s for k in spec.keys])
    if np.any(np.diff(times) <= 0):
        raise ValueError(f"clip {spec.name!r}: key times must increase")
    for key in spec.keys:
        unknown = set(key.rotations) - set(skeleton.names)
        if unknown:
            raise ValueError(f"clip {spec.name!r}: unknown joints {sorted(unknown)}")
    n_frames = round((times[-1] - times[0]) * spec.fps) + 1
    t = times[0] + np.arange(n_frames) / spec.fps
    rotations = np.empty((n_frames, skeleton.n_joints, 4))
    for j, name in enumerate(skeleton.names):
        eulers = [k.rotations.get(name, (0.0, 0.0, 0.0)) for k in spec.keys]
        spline = RotationSpline(times, Rotation.from_euler("xyz", eulers, degrees=True))
        rotations[:, j] = spline(t).as_quat()
    translations = np.repeat(np.array(skeleton.offsets)[None], n_frames, axis=0)
    roots = np.array([k.root_m for k in spec.keys])
    translations[:, 0] = np.stack([np.interp(t, times, roots[:, a]) for a in range(3)], axis=1)
    return Motion(skeleton, spec.fps, translations, rotations)


def author(name: str, out_dir: Path) -> Path:
    """Build clip ``name`` and write ``out_dir/name.bvh``; return the path."""
    spec = CLIPS[name]()
    motion = build_motion(spec, demo_skeleton())
    path = out_dir / f"{name}.bvh"
    comment = (
        f"{spec.name}: authored by scripts/author_clips.py from {len(spec.keys)} key poses, "
        "not motion capture.\n"
        f"{' '.join(spec.description.split())}\n"
        f"Frame 0 is a T-pose. CMU-MotionBuilder joint names, centimetres, Y up, facing +Z, "
        f"{spec.fps:g} fps."
    )
    write_bvh(motion, path, unit="cm", up_axis="Y", decimals=6, comment=comment)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "data" / "motions")
    parser.add_argument("--only", choices=sorted(CLIPS), help="author just this clip")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in [args.only] if args.only else sorted(CLIPS):
        print(author(name, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
