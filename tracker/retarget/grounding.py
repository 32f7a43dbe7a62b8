"""Grounding: stance feet on the floor in every contact frame, by root height and leg IK.

Given the retargeted ``q`` and the source's foot contacts
(:mod:`tracker.retarget.contacts`):

1. In frames where a foot is flat on the ground in the source (heel and toe
   down), its sole is turned level (its yaw kept); the change is blended in
   over the first and out over the last :data:`BLEND_S` / 2 of the flat run,
   so the foot neither snaps nor fights the source's heel strike or heel-off.
2. The root is lowered (or raised) so that the higher of the stance feet
   touches: the needed offset is known in contact frames, interpolated between
   them, and smoothed under its lower envelope so that it stays smooth without
   lifting a stance foot out of reach.
3. Each leg is solved by two-bone IK (:func:`tracker.retarget.ik.two_bone_ik`):
   in contact frames the ankle goes to the scaled source ankle's horizontal
   position (so the foot slides no more than the source's foot) at the height
   that puts the sole's lowest point on z = 0; outside contacts it stays where
   it was (or goes to the scaled source ankle with ``follow_source``), except
   that a foot below the floor is lifted onto it. The ankle then takes the
   wanted foot orientation within its limits, and the solve is repeated with
   the residual so that the clamped orientation still touches; where the
   hip's limits kept the ankle from its target, the repeat keeps the ankle's
   horizontal position and corrects only its height.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import distance_transform_edt, gaussian_filter1d, maximum_filter1d, minimum_filter1d
from scipy.spatial.transform import Rotation

from tracker.character.kinematics import Kinematics
from tracker.retarget.contacts import FOOT_LINKS, FootContacts, _runs
from tracker.retarget.ik import two_bone_ik

#: Seconds over which the contact constraints are blended in and out.
BLEND_S = 0.1
#: Width (s) of the lower envelope of the root offset, and its smoothing (s).
ENVELOPE_S = 0.1
#: Smoothing (s) of the planted feet's horizontal path.
PLANT_SMOOTH_S = 0.04
#: A swing foot keeps the source foot's clearance above the floor up to this height (m), so a low
#: swing toe or a kick's sweep does not scrape the floor where the source did not. Capped because
#: the source's clearance is that of its ankle and toe joints, not of a sole: a pointed foot's tip
#: is lower than its toe joint, and lifting it by the joints' clearance would move the kick.
MAX_CLEARANCE = 0.04
#: Width (s) over which a swing foot's lift is smoothed.
LIFT_SMOOTH_S = 0.1
#: Solves after the first that correct the sole height for the ankle's and hip's limits (at most;
#: a stance foot whose ankle is at its limit needs up to about ten to stop penetrating the floor).
REFINE = 12
LEG_CHAIN = {"left_foot": ("left_thigh", "left_shin", "left_foot"),
             "right_foot": ("right_thigh", "right_shin", "right_foot")}


def ramp(mask: np.ndarray, frames: float) -> np.ndarray:
    """1 where ``mask`` holds, falling linearly to 0 over ``frames`` frames outside it ``(F,)``."""
    if not mask.any():
        return np.zeros(len(mask))
    if mask.all():
        return np.ones(len(mask))
    dist = distance_transform_edt(~mask)
    return np.clip(1.0 - dist / max(frames, 1.0), 0.0, 1.0)


def ramp_inside(mask: np.ndarray, frames: float) -> np.ndarray:
    """0 outside ``mask`` and at its edges, rising linearly to 1 over ``frames`` frames inside it ``(F,)``."""
    if not mask.any():
        return np.zeros(len(mask))
    if mask.all():
        return np.ones(len(mask))
    return np.clip(distance_transform_edt(mask) / max(frames, 1.0), 0.0, 1.0)


def _sole_points(kin: Kinematics, link: str) -> np.ndarray:
    pts = [s.sample_points() for s in kin.shapes[link]]
    return np.vstack(pts) if pts else np.zeros((1, 3))


def _drop_below(rot: Rotation, pts: np.ndarray) -> np.ndarray:
    """Lowest z of ``pts`` (link frame) below the link origin for each frame's orientation ``(F,)``."""
    return (rot.as_matrix()[:, 2, :] @ pts.T).min(axis=1)


def level(rot: Rotation, weight: np.ndarray) -> Rotation:
    """``rot`` turned toward its yaw-only version (sole level) by ``weight`` in [0, 1] per frame."""
    fwd = rot.apply([1.0, 0.0, 0.0])
    yaw = Rotation.from_rotvec(np.outer(np.arctan2(fwd[:, 1], fwd[:, 0]), [0.0, 0.0, 1.0]))
    delta = (rot.inv() * yaw).as_rotvec()
    return rot * Rotation.from_rotvec(delta * weight[:, None])


def _root_offset(need: np.ndarray, any_contact: np.ndarray, fps: float) -> np.ndarray:
    """Smooth vertical root offset ``(F,)``: ``-need`` in contact frames, interpolated and enveloped."""
    idx = np.flatnonzero(any_contact)
    f = len(need)
    off = np.interp(np.arange(f), idx, -need[idx])
    width = max(3, int(round(ENVELOPE_S * fps)) | 1)
    if f > width:
        env = minimum_filter1d(off, width, mode="nearest")
        off = np.minimum(gaussian_filter1d(env, width / 4.0, mode="nearest"), off)
        # the min above can leave corners; a light second pass keeps the curve smooth
        off = gaussian_filter1d(off, width / 8.0, mode="nearest")
    return off


def _hipmid(kin: Kinematics, q: np.ndarray) -> np.ndarray:
    pos, _ = kin.forward(q)
    return 0.5 * (pos["left_thigh"] + pos["right_thigh"])


def _clamp_spherical(rot: Rotation, limits) -> Rotation:
    if limits is None:
        return rot
    lo, hi = limits
    return Rotation.from_rotvec(rot.as_rotvec().clip(lo, hi))


def _solve_leg(kin: Kinematics, q: np.ndarray, foot: str, target: np.ndarray, foot_rot: Rotation,
               frames: np.ndarray, limits: dict) -> None:
    """Two-bone IK of one leg in ``frames``: ankle to ``target`` ``(F, 3)``, foot to ``foot_rot``. In place."""
    solve_leg(kin, q, LEG_CHAIN[foot], target, foot_rot, frames, limits)


def solve_leg(kin: Kinematics, q: np.ndarray, chain: tuple[str, str, str], target: np.ndarray, foot_rot: Rotation,
              frames: np.ndarray, limits: dict) -> None:
    """Two-bone IK of the leg ``chain`` (thigh, shin, foot links) in ``frames`` of ``q`` ``(F, nq)``: the
    ankle (the foot link's origin) to ``target`` ``(F, 3)``, the foot to ``foot_rot`` (length ``F``),
    spherical joints clamped to ``limits``. In place."""
    if not frames.any():
        return
    upper, lower, end = chain
    lay = kin.layout
    sub = q[frames]
    pos, rot = kin.forward(sub)
    ju, jl, je = (kin.joint_by_child[k] for k in (upper, lower, end))
    new_upper, theta = two_bone_ik(pos[upper], rot[upper], jl.origin, je.origin, jl.axis, target[frames],
                                   (jl.lower, jl.upper))
    parent = rot[ju.parent] * Rotation.from_matrix(ju.rotation)
    hip = _clamp_spherical(parent.inv() * new_upper, limits.get(ju.name))
    sub[:, lay[ju.name].q] = hip.as_quat()
    sub[:, lay[jl.name].q] = theta[:, None]
    upper_rot = parent * hip
    lower_rot = upper_rot * Rotation.from_matrix(jl.rotation) * Rotation.from_rotvec(theta[:, None] * jl.axis)
    end_parent = lower_rot * Rotation.from_matrix(je.rotation)
    ankle = _clamp_spherical(end_parent.inv() * foot_rot[np.flatnonzero(frames)], limits.get(je.name))
    sub[:, lay[je.name].q] = ankle.as_quat()
    q[frames] = sub


def ground(kin: Kinematics, q: np.ndarray, contacts: FootContacts, ankle_rel: np.ndarray, fps: float,
           limits: dict | None = None, follow_source: bool = False) -> np.ndarray:
    """Plant the feet in their contact frames (module docstring).

    Args:
        kin: the character's kinematics.
        q: retargeted generalized positions ``(F, nq)``.
        contacts: the source's foot contacts.
        ankle_rel: ``(F, 2, 3)`` scaled source ankle positions relative to the source's hip
            midpoint, in the character's axes (left, right), m; the targets are the character's
            hip midpoint plus these.
        fps: frames per second.
        limits: spherical joint limits (rotation-vector bounds) to respect.
        follow_source: outside contacts, bring the ankles to ``source_ankles`` (foot IK).

    Returns:
        the new ``q`` ``(F, nq)``. With no contact in any frame, the clip is only shifted so its
        lowest foot point touches z = 0.
    """
    limits = limits or {}
    q = np.array(q, dtype=float)
    f = len(q)
    contact = np.asarray(contacts.contact, bool)
    any_contact = contact.any(axis=1)
    blend = BLEND_S * fps
    pos, rot = kin.forward(q)
    pts = {foot: _sole_points(kin, foot) for foot in FOOT_LINKS}
    # levelled inside flat runs only: at a heel strike or a heel-off the foot takes the source's pitch
    foot_rot = {foot: level(rot[foot], ramp_inside(contacts.flat[:, k], blend / 2)) for k, foot in enumerate(FOOT_LINKS)}
    drop = {foot: _drop_below(foot_rot[foot], pts[foot]) for foot in FOOT_LINKS}
    if not any_contact.any():
        low = min(float((pos[foot][:, 2] + drop[foot]).min()) for foot in FOOT_LINKS)
        q[:, 2] -= low
        if follow_source:
            source_ankles = _hipmid(kin, q)[:, None] + ankle_rel
            for k, foot in enumerate(FOOT_LINKS):
                _solve_leg(kin, q, foot, source_ankles[:, k] - [0, 0, low], foot_rot[foot], np.ones(f, bool), limits)
        return q
    need = np.full(f, -np.inf)
    for k, foot in enumerate(FOOT_LINKS):
        sole = pos[foot][:, 2] + drop[foot]
        need = np.where(contact[:, k], np.maximum(need, sole), need)
    q[:, 2] += _root_offset(need, any_contact, fps)
    pos, rot = kin.forward(q)
    source_ankles = 0.5 * (pos["left_thigh"] + pos["right_thigh"])[:, None] + ankle_rel
    # a planted foot follows the source's foot without its marker jitter, smoothed within each
    # contact run only (smoothing across a lift-off would drag the planted foot after the moving one)
    planted_xy = np.array(source_ankles[..., :2])
    for k in range(2):
        for a, b in _runs(contact[:, k]):
            if b - a > 2:
                planted_xy[a:b, k] = gaussian_filter1d(planted_xy[a:b, k], PLANT_SMOOTH_S * fps, axis=0, mode="nearest")
    for k, foot in enumerate(FOOT_LINKS):
        w = ramp(contact[:, k], blend)[:, None]
        base = np.array(source_ankles[:, k]) if follow_source else pos[foot]
        planted = np.column_stack([planted_xy[:, k], -drop[foot]])
        target = base + w * (planted - base)
        # outside contacts a foot keeps the source's clearance (a swing toe must not scrape the floor)
        clear = 0.0 if contacts.clearance is None else np.minimum(contacts.clearance[:, k], MAX_CLEARANCE)
        # lifted smoothly: a lift that switches on and off with the constraint would put kinks in
        # the leg's joint paths, and a fast foot's kinks are accelerations no servo should chase
        lift = np.maximum(-drop[foot] + (1.0 - w[:, 0]) * clear - target[:, 2], 0.0)
        if lift.any() and f > 3:
            width = max(3, int(round(LIFT_SMOOTH_S * fps)) | 1)
            lift = np.maximum(gaussian_filter1d(maximum_filter1d(lift, width, mode="nearest"), width / 4.0,
                                                mode="nearest"), lift)
        target[:, 2] += lift
        frames = (w[:, 0] > 0) | follow_source | (pos[foot][:, 2] + drop[foot] < -1e-9)
        frames |= np.abs(target - pos[foot]).max(axis=1) > 1e-9
        _solve_leg(kin, q, foot, target, foot_rot[foot], frames, limits)
        # The ankle may not reach the wanted orientation (its limits): put the actual sole on the
        # floor once more where it must touch (contact frames) or must not go below it.
        # Each pass moves the ankle, which changes how far its clamp lets the sole turn, so a foot at
        # its ankle's limit converges over several passes; only the frames still off are redone.
        want = np.broadcast_to((1.0 - w[:, 0]) * clear, (f,))
        check = np.arange(f)
        for _ in range(REFINE):
            p2, r2 = kin.forward(q[check])
            sole = p2[foot][:, 2] + _drop_below(r2[foot], pts[foot])
            off = ((w[check, 0] >= 1.0) & (np.abs(sole) > 1e-4)) | (sole < want[check] - 1e-4)
            if not off.any():
                break
            check = check[off]
            # where the hip's limits kept the ankle from its target (a trailing leg stretched behind
            # in double support), the foot is planted where the leg can reach: only its height is
            # corrected, from where the ankle is
            target[check, :2] = p2[foot][off, :2]
            target[check, 2] = p2[foot][off, 2] - sole[off] + want[check]
            redo = np.zeros(f, bool)
            redo[check] = True
            _solve_leg(kin, q, foot, target, foot_rot[foot], redo, limits)
    return q
