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

The skeleton, the key-pose types and the pose helpers are in ``scripts/clip_poses.py``; turning
a clip's keys into a motion (splines, planted feet) is ``scripts/clip_motion.py``.

Usage::

    python scripts/author_clips.py          # (re)write every clip and events.yaml in data/motions/
    python scripts/author_clips.py --only kick --out /tmp
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # clip_poses, clip_motion beside this file

from tracker.motion.bvh_write import write_bvh  # noqa: E402
from clip_motion import build_motion  # noqa: E402
from clip_poses import (ARMS_DOWN, CATCH_CUP_DEG, CATCH_ELEVATION_DEG, GRIP_SQUEEZE_M,  # noqa: E402
                        ClipEvent, ClipSpec, FootKey, KeyPose, Pose, Root, both_arms, chest, demo_skeleton,
                        flat, heel_up, hold_ball, key, leg, pelvis, pose, reach, stand_height, straight_arm, trunk)


#: The clips by name (this module's own registry: each load of the script has its own).
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
