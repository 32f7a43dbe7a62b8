"""Retargeting a :class:`Motion` onto a character, giving a :class:`Reference`.

Steps (each a function below):

1. source forward kinematics and the points each character link needs;
2. per-link rotation offsets from bone directions and twist cues
   (:mod:`tracker.retarget.calibrate`), so the character link takes the source
   joint's world rotation times a constant;
3. the clip turned to face +X at its start, root motion scaled by leg length;
4. local joint rotations; hinges (knees, elbows) by swing–twist projection onto
   their axis; joint limits enforced and counted;
5. optional two-bone IK of the hands to the scaled source positions;
6. grounding (:mod:`tracker.retarget.grounding`): the source's foot contacts
   (:mod:`tracker.retarget.contacts`) planted on the floor by root height and
   leg IK (``ik_feet``: the ankles follow the scaled source in every frame);
   velocities by smoothed finite differences;
7. the quality report (:mod:`tracker.retarget.quality`).

Before step 1, glitches of the source (a joint that flips for a few frames and
comes back, :mod:`tracker.retarget.glitches`) and lasting flips (a joint that
turns over and stays turned, :mod:`tracker.retarget.flips`) are found and,
unless ``repair_glitches`` is off, repaired; motion faster than the character
can follow is reported. In step 4 each upper limb is
turned about its bone so the hinge plane holds the source's lower bone, and a
wrist whose clip-long pose lies beyond its range gets its neutral shifted
(:mod:`tracker.retarget.limbs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.spatial.transform import Rotation

from tracker.character.kinematics import Kinematics
from tracker.errors import RetargetError
from tracker.motion.motion import Motion
from tracker.retarget.calibrate import cue_weight, frame, hinge_normal, link_offset
from tracker.retarget.contacts import FOOT_LINKS, FootContacts, detect_contacts
from tracker.retarget.flips import fast_report, find_fast, find_flips, flip_report, repair_flips
from tracker.retarget.glitches import find_glitches, glitch_report, repair_glitches
from tracker.retarget.grounding import ground
from tracker.retarget.ik import two_bone_ik
from tracker.retarget.limbs import align_hinges, neutral_shift
from tracker.retarget.joint_map import CANONICAL_LINKS, DISTAL, JointMap, select_joint_map
from tracker.retarget.quality import quality_report, segment_ratios
from tracker.retarget.hidden import fit_pitch
from tracker.retarget.reference import Reference

FEET = ("left_foot", "right_foot")
HANDS = ("left_hand", "right_hand")
#: Terminal links: the direction of the bone in the character's zero pose.
TIP_DIRECTIONS = {"head": (0, 0, 1), "left_hand": (0, 0, -1), "right_hand": (0, 0, -1),
                  "left_foot": (1, 0, 0), "right_foot": (1, 0, 0)}
LEG = {"left": ("left_thigh", "left_shin", "left_foot"), "right": ("right_thigh", "right_shin", "right_foot")}
ARM = {"left": ("left_upper_arm", "left_forearm", "left_hand"),
       "right": ("right_upper_arm", "right_forearm", "right_hand")}


@dataclass(frozen=True)
class RetargetOptions:
    """Options of :func:`retarget`.

    Attributes:
        ik_feet: bring the ankles to the scaled source positions by IK.
        ik_hands: the same for the wrists.
        fps: resample the result to this rate (None: keep the clip's).
        drop_tpose: drop an added T-pose first frame (CMU conversions) when
            the pose jumps from it.
        smooth_sigma: Gaussian smoothing of velocities, in source frames.
        repair_glitches: interpolate over the glitches found (they are reported either way).
        ground: plant the feet in the source's contact frames (else only shift the clip so
            its lowest foot point touches the floor).
    """

    ik_feet: bool = False
    ik_hands: bool = False
    fps: float | None = None
    drop_tpose: bool = True
    smooth_sigma: float = 1.0
    repair_glitches: bool = True
    ground: bool = True


class SourcePoints:
    """World positions of named source points over frames (joints and ``X/end``)."""

    def __init__(self, motion: Motion, jmap: JointMap) -> None:
        self.motion = motion
        self.pos, quats = motion.global_transforms()
        self.rot = [Rotation.from_quat(quats[:, j]) for j in range(quats.shape[1])]
        self.index = jmap.resolve(motion.skeleton)

    def joint_rot(self, name: str) -> Rotation:
        return self.rot[self.index[name]]

    def has(self, name: str) -> bool:
        return name.partition("/")[0] in self.index

    def bone(self, spec) -> tuple[np.ndarray, np.ndarray]:
        """``(start, end)`` positions ``(F, 3)`` of a link's bone: the first alternatives present
        whose bone is not of zero length."""
        start = next(self(a) for a in spec.start if self.has(a))
        for alt in spec.end:
            if self.has(alt):
                end = self(alt)
                if np.median(np.linalg.norm(end - start, axis=1)) > 1e-4:
                    return start, end
        raise RetargetError(f"link bone from {spec.start[0]!r}: every end point ({', '.join(spec.end)}) "
                            "is missing or at the start; give another 'end' in the joint map")

    def __call__(self, name: str) -> np.ndarray:
        base, _, tail = name.partition("/")
        j = self.index[base]
        if not tail:
            return self.pos[:, j]
        sk = self.motion.skeleton
        ends = [k for k, p in enumerate(sk.end_site_parents) if p == j]
        if ends and np.linalg.norm(sk.end_site_offsets[ends[0]]) > 1e-6:
            off = np.array(sk.end_site_offsets[ends[0]])
        else:  # continue the bone that leads into the joint, in the joint's own frame
            off = np.array(sk.offsets[j])
            if np.linalg.norm(off) < 1e-9:
                raise RetargetError(f"joint {base!r}: no End Site and a zero offset; give 'end' explicitly")
        return self.pos[:, j] + self.rot[j].apply(off)


def _drop_added_tpose(motion: Motion, max_blend: int = 12) -> tuple[Motion, int]:
    """Remove an added first pose (cgspeed's T-pose frame 0) and the blend out of it.

    Frame 0 counts as added when the clip jumps away from it much faster than
    it moves anywhere else (more than 4x the 90th percentile of per-frame joint
    rotation); the frames that follow are dropped too while that stays true
    (the Daz conversions blend out of the T-pose over frames 1-7).
    """
    f = motion.n_frames
    if f < 8:
        return motion, 0
    r = motion.rotations
    step = 2 * np.arccos(np.abs(np.sum(r[1:] * r[:-1], axis=-1)).clip(max=1)).max(axis=1)  # (F-1,)
    typical = max(float(np.percentile(step, 90)), 1e-3)
    if step[0] < max(4 * typical, 0.3):
        return motion, 0
    drop = 1
    while drop < min(max_blend, f - 3) and step[drop] > 2 * typical:
        drop += 1
    return Motion(motion.skeleton, motion.fps, motion.translations[drop:], motion.rotations[drop:],
                  source=motion.source), drop


class CharacterGeometry:
    """The character's zero-pose points the retargeter compares with the source."""

    def __init__(self, kin: Kinematics) -> None:
        missing = [l for l in CANONICAL_LINKS if l not in kin.links]
        if missing:
            raise RetargetError(f"{kin.path}: model has no links {', '.join(missing)} (needed for retargeting)")
        self.kin = kin
        self.zero = kin.zero_pose_positions()
        self.tip_local: dict[str, np.ndarray] = {}
        for link, d in TIP_DIRECTIONS.items():
            d = np.asarray(d, float)
            pts = np.vstack([s.sample_points() for s in kin.shapes[link]]) if kin.shapes[link] else np.zeros((1, 3))
            self.tip_local[link] = d * max(float((pts @ d).max()), 0.02)
            if link in FEET:  # the ball of the foot sits on the sole: ankle -> front of the sole
                self.tip_local[link] = np.array([0.75 * pts[:, 0].max(), 0.0, pts[:, 2].min()])

    def joint_of(self, link: str):
        return self.kin.joint_by_child[link]

    def start(self, link: str) -> np.ndarray:
        return self.zero[link]

    def end(self, link: str) -> np.ndarray:
        if link in self.tip_local:
            return self.zero[link] + self.tip_local[link]
        nxt = {"pelvis": "abdomen", "abdomen": "chest", "chest": "head"}.get(link) or DISTAL[link]
        return self.zero[nxt]

    def hinge_axis(self, link: str) -> np.ndarray:
        j = self.joint_of(link)
        return j.rotation @ j.axis

    def leg_length(self) -> float:
        z = self.zero
        return float(np.linalg.norm(z["left_shin"] - z["left_thigh"]) + np.linalg.norm(z["left_foot"] - z["left_shin"]))


def _cue(link: str, src: SourcePoints, jmap: JointMap, geo: CharacterGeometry):
    """Twist cue of a link: ``(source (F,3), character (3,), weights (F,))``."""
    L = jmap.links
    f = src.motion.n_frames

    def lateral(left: str, right: str):
        s = src(L[left].joint) - src(L[right].joint)
        c = geo.zero[left] - geo.zero[right]
        return s, c, np.ones(f)

    if link in HANDS and jmap.links[link].across:  # the palm's width: little finger -> index, +X at zero
        a, b = jmap.links[link].across
        return src(b) - src(a), np.array([1.0, 0.0, 0.0]), np.ones(f)
    hips = lateral("left_thigh", "right_thigh")
    shoulders = lateral("left_upper_arm", "right_upper_arm")
    for side, chains, fallback in (("left", LEG, hips), ("right", LEG, hips), ("left", ARM, shoulders), ("right", ARM, shoulders)):
        chain = chains[side]
        if link in chain:
            n, w = hinge_normal(*(src(L[k].joint) for k in chain))
            w = np.where(w > 0.02, w, 0.0)
            if w.sum() < 3 * 0.02:  # limb (almost) never bends: use the body's lateral axis
                return fallback
            return n, geo.hinge_axis(chain[1]), w
    return shoulders if link in ("chest", "head") else hips


def world_rotations(src: SourcePoints, jmap: JointMap, geo: CharacterGeometry) -> dict[str, Rotation]:
    """Character link world rotations per frame (before heading alignment)."""
    out = {}
    for link in CANONICAL_LINKS:
        spec = jmap.links[link]
        start_s, end_s = src.bone(spec)
        bone_s = end_s - start_s
        bone_c = geo.end(link) - geo.start(link)
        cue_s, cue_c, w = _cue(link, src, jmap, geo)
        w = w * cue_weight(bone_s, cue_s)  # a cue parallel to the bone says nothing about twist
        if link == "pelvis":  # the hip axis is the better-defined direction of the pelvis
            fs, fc = frame(cue_s, bone_s), frame(cue_c, bone_c)[0]
        else:
            fs, fc = frame(bone_s, cue_s), frame(bone_c, cue_c)[0]
        rs = src.joint_rot(spec.joint)
        try:
            out[link] = rs * link_offset(rs, fs, fc, w)
        except ValueError:
            raise RetargetError(f"{src.motion.source.path if src.motion.source else 'clip'}: the twist of "
                                f"{link} ({spec.joint}) is undefined in every frame") from None
    return out


def _flatten_feet(rots: dict[str, Rotation], contacts: FootContacts) -> dict[str, Rotation]:
    """Calibrate each foot's sole: a constant pitch and roll that level it, on median, over the
    frames where the source foot is flat on the ground (heel and toe down).

    Returns, per foot calibrated, the world rotation per frame that takes the foot's direction
    as the rig has it to the calibrated one: the rig's ankle-to-toe line is not the character's
    ankle-to-sole line, and the quality report compares the foot with the calibrated direction.
    """
    turned = {}
    for k, foot in enumerate(FEET):
        flat = contacts.flat[:, k]
        if not flat.any():
            flat = contacts.contact[:, k]
        if not flat.any():
            continue
        fwd = rots[foot][flat].apply([1, 0, 0])
        pitch = np.median(np.arcsin(np.clip(fwd[:, 2], -1, 1)))
        roll_side = rots[foot][flat].apply([0, 1, 0])
        roll = np.median(np.arcsin(np.clip(roll_side[:, 2], -1, 1)))
        # local correction: pitch about the foot's y axis, roll about its x axis
        before = rots[foot]
        rots[foot] = before * Rotation.from_rotvec([0, pitch, 0]) * Rotation.from_rotvec([-roll, 0, 0])
        turned[foot] = rots[foot] * before.inv()
    return turned


def _swing_twist_angle(local: Rotation, axis: np.ndarray) -> np.ndarray:
    q = local.as_quat()
    angle = 2 * np.arctan2(q[:, :3] @ axis, q[:, 3])
    return (angle + np.pi) % (2 * np.pi) - np.pi  # the quaternion's sign must not matter


def retarget(
    motion: Motion,
    kin: Kinematics,
    joint_map: JointMap | str | None = None,
    options: RetargetOptions | None = None,
    spherical_limits: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    model_name: str = "humanoid",
    source: str = "clip",
) -> Reference:
    """Retarget ``motion`` onto the character described by ``kin``.

    Args:
        motion: the source clip (SI units, Z up).
        kin: the character's kinematics (our humanoid's link names).
        joint_map: a :class:`JointMap`, a built-in name or YAML path, or None to detect.
        options: see :class:`RetargetOptions`.
        spherical_limits: per spherical joint, lower/upper bounds ``(3,)`` of the
            joint's rotation vector (rad); values outside are clamped.
        model_name: recorded in the reference.
        source: name of the clip for messages.

    Raises:
        RetargetError: the clip is too short or no joint map fits.
    """
    opt = options or RetargetOptions()
    if motion.n_frames < 2:
        raise RetargetError(f"{source}: clip has {motion.n_frames} frame(s); at least 2 are needed")
    jmap = joint_map if isinstance(joint_map, JointMap) else select_joint_map(motion.skeleton, joint_map, source, motion=motion)
    dropped = 0
    source_fps, source_frames = float(motion.fps), int(motion.n_frames)  # the file's (timing.ClipTiming)
    if opt.drop_tpose:
        motion, dropped = _drop_added_tpose(motion)
    glitches = find_glitches(motion)
    if opt.repair_glitches:
        motion = repair_glitches(motion, glitches)
    flips = find_flips(motion)
    if opt.repair_glitches:
        motion = repair_flips(motion, flips)
    fast = find_fast(motion)
    fps = motion.fps
    geo = CharacterGeometry(kin)
    src = SourcePoints(motion, jmap)
    rots = world_rotations(src, jmap, geo)

    # Heading: face +X at the first frame.
    fwd = rots["pelvis"][0].apply([1.0, 0, 0])
    yaw0 = np.arctan2(fwd[1], fwd[0])
    turn = Rotation.from_rotvec([0, 0, -yaw0])
    rots = {k: turn * r for k, r in rots.items()}

    # Root motion: the hip midpoint, scaled by leg length, starting above the origin.
    L = jmap.links
    src_hipmid = 0.5 * (src(L["left_thigh"].joint) + src(L["right_thigh"].joint))
    src_leg = np.mean(
        np.linalg.norm(src(L["left_shin"].joint) - src(L["left_thigh"].joint), axis=1)
        + np.linalg.norm(src(L["left_foot"].joint) - src(L["left_shin"].joint), axis=1)
    )
    scale = geo.leg_length() / src_leg

    def scaled(points: np.ndarray) -> np.ndarray:  # source world -> character world, hips over the origin
        return turn.apply(points - src_hipmid[0] * [1, 1, 0]) * scale

    heel = np.stack([scaled(src(L[f].joint)) for f in FOOT_LINKS], axis=1)
    toe = np.stack([scaled(src.bone(L[f])[1]) for f in FOOT_LINKS], axis=1)
    contacts = detect_contacts(heel, toe, fps, root_z=scaled(src_hipmid)[:, 2])
    soles = _flatten_feet(rots, contacts)
    directions = {}
    for link in ("left_thigh", "left_shin", "right_thigh", "right_shin",
                 "left_upper_arm", "left_forearm", "right_upper_arm", "right_forearm"):
        start_s, end_s = src.bone(L[link])
        directions[link] = turn.apply(end_s - start_s)
    align_hinges(rots, directions, geo, kin)

    lateral = geo.zero["left_thigh"] - geo.zero["right_thigh"]  # the pelvis's frame is the world's at zero
    rots[kin.root], pelvis_pitch = fit_pitch(kin, rots, spherical_limits, lateral)
    rots["abdomen"], abdomen_pitch = fit_pitch(kin, rots, spherical_limits, lateral, "abdomen")
    hipmid = scaled(src_hipmid)
    char_hipmid_local = 0.5 * (geo.zero["left_thigh"] + geo.zero["right_thigh"]) - geo.zero["pelvis"]
    pelvis_pos = hipmid - rots["pelvis"].apply(char_hipmid_local)

    q, clamped, shifts = _compose_q(kin, rots, pelvis_pos, spherical_limits)
    if opt.ik_hands:
        targets = {chain: turn.apply(src(L[chain[2]].joint) - src_hipmid) * scale for chain in ARM.values()}
        q = _apply_ik(kin, q, targets, char_hipmid_local)
    ankle_rel = np.stack([turn.apply(src(L[f].joint) - src_hipmid) * scale for f in FOOT_LINKS], axis=1)
    if opt.ground:
        q = ground(kin, q, contacts, ankle_rel, fps, spherical_limits, follow_source=opt.ik_feet)
    else:
        if opt.ik_feet:
            q = _apply_ik(kin, q, {LEG[s]: ankle_rel[:, k] for k, s in enumerate(("left", "right"))},
                          char_hipmid_local)
        q = _put_on_ground(kin, q)
    _make_quats_continuous(q, kin.layout)
    v = differentiate(kin.layout, q, fps, opt.smooth_sigma)
    clamped, clamped_by_joint = clamped
    report = quality_report(kin, geo, jmap, src, turn, scale, src_hipmid, q, clamped, fps, contacts,
                            calibrated=soles)
    report["clamped_by_joint"] = clamped_by_joint
    report["wrist_neutral_shift_deg"] = shifts
    report["pelvis_pitch"], report["abdomen_pitch"] = pelvis_pitch, abdomen_pitch
    report["segment_ratios"] = segment_ratios(src, jmap, geo, scale)
    report["glitches"] = glitch_report(glitches, dropped, fps)
    report["glitches_repaired"] = bool(opt.repair_glitches)
    report["flips"] = flip_report(flips, dropped, fps)
    report["fast"] = fast_report(fast, dropped, fps)
    if jmap.matching is not None:
        report["matching"] = jmap.matching
    report.update({"convention": jmap.name, "joint_map": str(jmap.path), "scale": float(scale), "dropped_frames": int(dropped),
                   "source_fps": source_fps, "source_frames": source_frames,
                   "heading_rad": float(yaw0), "ik_feet": opt.ik_feet, "ik_hands": opt.ik_hands})
    report["warnings"] = retarget_warnings(report, q, fps, motion.source, geo.leg_length())
    ref = Reference(q, v, fps, tuple((j.name, j.kind) for j in kin.layout.joints), model_name, source, report,
                    contacts=contacts.contact)
    if opt.fps is not None and abs(opt.fps - fps) > 1e-9:
        ref = ref.resample(opt.fps)
    object.__setattr__(ref, "quality", {**report, "frames": ref.n_frames, "fps": ref.fps})
    return ref


#: Thresholds of the retarget's warnings (``--strict`` makes them errors).
WARN_BONE_COS = 0.5
WARN_LIMIT_SHARE = 0.2
WARN_STATURE_M = (1.0, 2.3)
#: A root faster than this (m/s, horizontal, over a tenth of a second) is not a person's.
WARN_ROOT_SPEED = 12.0
#: A pelvis higher than this many leg lengths above the floor is not a person's.
WARN_ROOT_HEIGHT_LEGS = 2.5


def retarget_warnings(report: dict, q: np.ndarray, fps: float, source, leg: float) -> list[str]:
    """Signs that a retarget is wrong, one sentence each (see the ``WARN_*`` thresholds)."""
    out = []
    if report["bone_cos_min"] < WARN_BONE_COS:
        out.append(f"bone-direction cosine min {report['bone_cos_min']:.2f} < {WARN_BONE_COS} "
                   f"({report['bone_cos_min_link']} at clip frame {report['bone_cos_min_frame']}): a limb "
                   "points the wrong way (a wrong joint map, up axis or a flipped rig?)")
    frames = len(q)
    for joint, n in sorted(report.get("clamped_by_joint", {}).items(), key=lambda kv: -kv[1]):
        if n > WARN_LIMIT_SHARE * frames:
            out.append(f"{joint} sits at its joint limit in {n} of {frames} frames ({100 * n / frames:.0f} % > "
                       f"{100 * WARN_LIMIT_SHARE:.0f} %)")
    stature = getattr(source, "stature_m", None) if source is not None else None
    if stature is not None and not WARN_STATURE_M[0] <= stature <= WARN_STATURE_M[1]:
        out.append(f"stature {stature:.2f} m is outside {WARN_STATURE_M[0]}-{WARN_STATURE_M[1]} m "
                   f"(unit {source.unit}: pass --unit if that is wrong)")
    if getattr(source, "unit", None) == "scaled":
        out.append(f"the skeleton fits no length unit; it was scaled to a {stature:.2f} m stature")
    k = max(1, int(round(0.1 * fps)))
    if frames > k:
        speed = np.linalg.norm(q[k:, :2] - q[:-k, :2], axis=1) * fps / k
        if speed.max() > WARN_ROOT_SPEED:
            out.append(f"the root moves at up to {speed.max():.1f} m/s (> {WARN_ROOT_SPEED} m/s over "
                       f"{k / fps:.2f} s): not a person's path")
    if q[:, 2].max() > WARN_ROOT_HEIGHT_LEGS * leg:
        out.append(f"the pelvis rises to {q[:, 2].max():.2f} m, over {WARN_ROOT_HEIGHT_LEGS} leg lengths: "
                   "not a person's path")
    return out


def _compose_q(kin, rots, pelvis_pos, spherical_limits):
    lay = kin.layout
    f = len(pelvis_pos)
    q = np.zeros((f, lay.nq))
    base = rots[kin.root]
    q[:, 0:3] = pelvis_pos + base.apply(kin.inertial_origin[kin.root])
    q[:, 3:7] = base.as_quat()
    clamped = np.zeros(f, dtype=bool)
    by_joint: dict[str, int] = {}
    shifts: dict[str, float] = {}
    world = dict(rots)
    for j in kin.joints:
        if j.kind == "fixed":
            continue
        parent = world[j.parent] * Rotation.from_matrix(j.rotation)
        local = parent.inv() * world[j.child]
        sl = lay[j.name].q
        if j.kind == "revolute":
            ang = _swing_twist_angle(local, j.axis)
            lo, hi = j.lower, j.upper
            out = (ang < lo - 1e-9) | (ang > hi + 1e-9)
            clamped |= out
            if out.any():
                by_joint[j.name] = int(out.sum())
            ang = ang.clip(lo, hi)
            q[:, sl] = ang[:, None]
            world[j.child] = parent * Rotation.from_rotvec(ang[:, None] * j.axis)
        else:
            if spherical_limits and j.name in spherical_limits and j.name.endswith("wrist"):
                shift = neutral_shift(local, *spherical_limits[j.name])
                shifts[j.name] = round(float(np.degrees(shift.magnitude())), 2)
                local = local * shift.inv()
            rv = local.as_rotvec()
            if spherical_limits and j.name in spherical_limits:
                lo, hi = spherical_limits[j.name]
                out = ((rv < lo - 1e-9) | (rv > hi + 1e-9)).any(axis=1)
                clamped |= out
                if out.any():
                    by_joint[j.name] = int(out.sum())
                rv = rv.clip(lo, hi)
                local = Rotation.from_rotvec(rv)
            q[:, sl] = local.as_quat()
            world[j.child] = parent * local
    _make_quats_continuous(q, lay)
    return q, (clamped, by_joint), shifts


def _make_quats_continuous(q: np.ndarray, lay) -> None:
    idx = [np.arange(3, 7)] + list(lay.sph_q)
    for cols in idx:
        qq = q[:, cols]
        flip = np.cumsum(np.r_[0, (np.sum(qq[1:] * qq[:-1], axis=1) < 0)]) % 2 == 1
        qq[flip] *= -1
        q[:, cols] = qq


def _apply_ik(kin: Kinematics, q: np.ndarray, targets: dict, char_hipmid_local: np.ndarray) -> np.ndarray:
    q = q.copy()
    lay = kin.layout
    pos, rot = kin.forward(q)
    hipmid = 0.5 * (pos["left_thigh"] + pos["right_thigh"])
    for (upper, lower, end), rel in targets.items():
        ju, jl, je = (kin.joint_by_child[k] for k in (upper, lower, end))
        target = hipmid + rel
        new_upper, theta = two_bone_ik(pos[upper], rot[upper], jl.origin, je.origin, jl.axis, target,
                                       (jl.lower, jl.upper))
        parent = rot[ju.parent] * Rotation.from_matrix(ju.rotation)
        q[:, lay[ju.name].q] = (parent.inv() * new_upper).as_quat()
        q[:, lay[jl.name].q] = theta[:, None]
        lower_rot = new_upper * Rotation.from_matrix(jl.rotation) * Rotation.from_rotvec(theta[:, None] * jl.axis)
        end_parent = lower_rot * Rotation.from_matrix(je.rotation)
        if je.kind == "spherical":  # keep the hand/foot's world orientation
            q[:, lay[je.name].q] = (end_parent.inv() * rot[end]).as_quat()
    _make_quats_continuous(q, lay)
    return q


def _put_on_ground(kin: Kinematics, q: np.ndarray) -> np.ndarray:
    """Shift the clip vertically so the lowest foot point over the clip touches z = 0."""
    low = kin.lowest_point(q, list(FEET))
    q = q.copy()
    q[:, 2] -= low.min()
    return q


def differentiate(lay, q: np.ndarray, fps: float, sigma: float = 1.0) -> np.ndarray:
    """Generalized velocities ``(F, nv)`` by central differences on the Lie group, smoothed.

    Quaternion sign changes do not produce spikes: differences are taken as
    relative rotations, which are sign-independent.
    """
    f = len(q)
    v = np.zeros((f, lay.nv))
    i0 = np.r_[0, np.arange(f - 1)]
    i1 = np.r_[np.arange(1, f), f - 1]
    span = (i1 - i0) / fps
    span[span == 0] = 1.0 / fps
    for t in range(f):  # layout.difference is per configuration; F is small (hundreds to thousands)
        v[t] = lay.difference(q[i1[t]], q[i0[t]]) / span[t]
    if sigma > 0 and f > 3:
        v = gaussian_filter1d(v, sigma, axis=0, mode="nearest")
    return v
