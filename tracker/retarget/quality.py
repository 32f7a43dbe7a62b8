"""The retargeting quality report: how faithful and how physical the result is."""

from __future__ import annotations

import numpy as np

from tracker.retarget.joint_map import CANONICAL_LINKS

EE_LINKS = ("left_hand", "right_hand", "left_foot", "right_foot", "head")
CONTACT_HEIGHT = 0.01  # m: a foot whose lowest point is this close to the ground is in contact


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True).clip(min=1e-12)


def quality_report(kin, geo, jmap, src, turn, scale, src_hipmid, q, clamped, fps, contacts=None,
                   calibrated=None) -> dict:
    """Compute the report for a retargeted clip.

    Keys: ``frames``, ``fps``, ``bone_cos_mean``, ``bone_cos_min``,
    ``bone_cos_min_link`` and ``bone_cos_min_frame`` (the worst bone and the
    frame, of the retargeted clip, where it is worst), ``bones`` (per link:
    ``cos_mean``, ``cos_min``, ``cos_min_frame``), ``ee_error_mean_m``,
    ``ee_error`` (per end effector, mean m), ``foot_penetration_max_m``,
    ``clamped_frames``, and with ``contacts`` (a
    :class:`tracker.retarget.contacts.FootContacts`):

    * ``contact_frames``: frames with at least one foot on the ground;
      ``contact_frames_by_foot``: per foot;
    * ``foot_float_median_m``: median, over contact frames, of the sole height
      of the lower foot (its lowest collision point);
    * ``contact_height_p95_m``: 95th percentile of the sole height of the feet
      in contact, over their contact frames (each stance foot, not only the lower);
    * ``foot_skating_mps`` / ``foot_skating_p95_mps``: median / 95th percentile
      of the horizontal speed of a foot's lowest point over its contact frames;
    * ``source_skating_mps`` / ``source_skating_p95_mps``: the same for the
      source's contact point (heel, or toe when only the toe is down), scaled
      to the character.

    Without contacts, skating is taken over the frames where a foot is within
    1 cm of the ground.

    ``calibrated`` maps a link to world rotations ``(F,)`` that take the source bone to the
    direction the retarget aims for (the feet's sole calibration): that link's bone is compared
    with the calibrated direction, so the cosine measures what limits, IK and grounding cost,
    not the constant difference between the rig's foot line and the character's.
    """
    pos, rot = kin.forward(q)
    bones = {}
    for link in CANONICAL_LINKS:
        start_s, end_s = src.bone(jmap.links[link])
        s = _unit(turn.apply(end_s - start_s))
        if calibrated and link in calibrated:
            s = calibrated[link].apply(s)
        if link in geo.tip_local:
            end = pos[link] + rot[link].apply(geo.tip_local[link])
        else:
            nxt = {"pelvis": "abdomen", "abdomen": "chest", "chest": "head"}.get(link)
            end = pos[nxt] if nxt else pos[_distal(link)]
        c = _unit(end - pos[link])
        cos = np.sum(s * c, axis=1)
        bones[link] = {"cos_mean": float(cos.mean()), "cos_min": float(cos.min()), "cos_min_frame": int(np.argmin(cos))}

    hipmid_c = 0.5 * (pos["left_thigh"] + pos["right_thigh"])
    ee = {}
    for link in EE_LINKS:
        if link == "head":  # the base of the neck: where the chest bone ends on both skeletons
            c = pos[link]
            s = src.bone(jmap.links["chest"])[1]
        else:
            c = pos[link]
            s = src(jmap.links[link].joint)
        ref = turn.apply(s - src_hipmid) * scale
        ee[link] = float(np.linalg.norm((c - hipmid_c) - ref, axis=1).mean())

    feet = ("left_foot", "right_foot")
    low = {f: kin.lowest_point(q, [f]) for f in feet}
    penetration = max(float(-min(l.min() for l in low.values())), 0.0)
    if contacts is not None:
        on = np.asarray(contacts.contact, bool)
    else:
        on = np.stack([low[f] < CONTACT_HEIGHT for f in feet], axis=1)
    speeds, src_speeds, heights = [], [], []
    for k, f in enumerate(feet):
        # horizontal speed of the foot's lowest collision point (the part that touches the ground)
        vel = _contact_point_velocity(kin, q, f, fps)
        if on[:, k].any():
            speeds.append(np.linalg.norm(vel[on[:, k]], axis=1))
            heights.append(low[f][on[:, k]])
            if contacts is not None:
                src_speeds.append(contacts.source_speed[on[:, k], k])
    either = on.any(axis=1)
    lower = np.minimum(low["left_foot"], low["right_foot"])

    def stat(parts, fn) -> float:
        return float(fn(np.concatenate(parts))) if parts else 0.0

    worst = min(bones, key=lambda k: bones[k]["cos_min"])
    out = {
        "frames": int(len(q)),
        "fps": float(fps),
        "bone_cos_mean": float(np.mean([b["cos_mean"] for b in bones.values()])),
        "bone_cos_min": float(bones[worst]["cos_min"]),
        "bone_cos_min_link": worst,
        "bone_cos_min_frame": bones[worst]["cos_min_frame"],
        "bones": bones,
        "ee_error_mean_m": float(np.mean(list(ee.values()))),
        "ee_error": ee,
        "foot_penetration_max_m": penetration,
        "foot_float_median_m": float(np.median(lower[either])) if either.any() else float(np.median(lower)),
        "contact_frames": int(either.sum()),
        "contact_frames_by_foot": {f: int(on[:, k].sum()) for k, f in enumerate(feet)},
        "contact_height_p95_m": stat(heights, lambda x: np.percentile(x, 95)),
        "foot_skating_mps": stat(speeds, np.median),
        "foot_skating_p95_mps": stat(speeds, lambda x: np.percentile(x, 95)),
        "clamped_frames": int(np.count_nonzero(clamped)),
    }
    if contacts is not None:
        out["source_skating_mps"] = stat(src_speeds, np.median)
        out["source_skating_p95_mps"] = stat(src_speeds, lambda x: np.percentile(x, 95))
    return out


def segment_ratios(src, jmap, geo, scale: float) -> dict[str, float]:
    """Source segment lengths scaled to the character over the character's own, by segment.

    Medians over frames of: ``trunk`` (hip midpoint to neck base), ``upper_arm``,
    ``forearm``, ``thigh``, ``shank`` (left and right averaged) and ``shoulder_width``.
    The legs are about 1 by construction (root motion is scaled by leg length); a trunk or an
    arm far from 1 is what puts the hands and neck off the scaled source on the default humanoid.
    """
    L = jmap.links
    z = geo.zero

    def med(a, b) -> float:
        return float(np.median(np.linalg.norm(a - b, axis=-1)))

    def pair(start: str, end: str) -> tuple[float, float]:
        s = np.mean([med(src(L[f"{side}_{end}"].joint), src(L[f"{side}_{start}"].joint)) for side in ("left", "right")])
        c = np.mean([np.linalg.norm(z[f"{side}_{end}"] - z[f"{side}_{start}"]) for side in ("left", "right")])
        return s * scale, float(c)

    out = {}
    for name, (a, b) in {"upper_arm": ("upper_arm", "forearm"), "forearm": ("forearm", "hand"),
                         "thigh": ("thigh", "shin"), "shank": ("shin", "foot")}.items():
        s, c = pair(a, b)
        out[name] = s / c
    hipmid_s = 0.5 * (src(L["left_thigh"].joint) + src(L["right_thigh"].joint))
    neck_s = src.bone(L["chest"])[1]
    hipmid_c = 0.5 * (z["left_thigh"] + z["right_thigh"])
    out["trunk"] = med(neck_s, hipmid_s) * scale / float(np.linalg.norm(z["head"] - hipmid_c))
    sw = med(src(L["left_upper_arm"].joint), src(L["right_upper_arm"].joint)) * scale
    out["shoulder_width"] = sw / float(np.linalg.norm(z["left_upper_arm"] - z["right_upper_arm"]))
    return {k: round(float(v), 3) for k, v in out.items()}


def _contact_point_velocity(kin, q: np.ndarray, link: str, fps: float, tie: float = 0.002) -> np.ndarray:
    """Horizontal velocity ``(F, 2)`` m/s of the material point of ``link`` that touches the ground.

    The touching point of frame ``t`` is the mean of the collision sample points within ``tie``
    m of the lowest one (a flat sole's four corners give its centre), fixed in the link; its
    velocity is the central difference of where that same point is at ``t - 1`` and ``t + 1``.
    A foot that rolls from heel to toe moves its touching point without sliding it, so this
    measures sliding, not rolling.
    """
    pos, rot = kin.forward(q)
    pts = np.vstack([s.sample_points() for s in kin.shapes[link]])  # (P, 3)
    m = rot[link].as_matrix()  # (F, 3, 3)
    world = np.einsum("fij,pj->fpi", m, pts) + pos[link][:, None, :]
    z = world[:, :, 2]
    near = z <= z.min(axis=1, keepdims=True) + tie  # (F, P)
    local = (pts[None] * near[:, :, None]).sum(axis=1) / near.sum(axis=1, keepdims=True)  # (F, 3)
    f = len(q)
    i0 = np.r_[0, np.arange(f - 1)]
    i1 = np.r_[np.arange(1, f), f - 1]
    x0 = np.einsum("fij,fj->fi", m[i0], local) + pos[link][i0]
    x1 = np.einsum("fij,fj->fi", m[i1], local) + pos[link][i1]
    span = np.maximum(i1 - i0, 1) / fps
    return ((x1 - x0) / span[:, None])[:, :2]


def _distal(link: str) -> str:
    from tracker.retarget.joint_map import DISTAL

    return DISTAL[link]
