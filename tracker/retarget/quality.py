"""The retargeting quality report: how faithful and how physical the result is."""

from __future__ import annotations

import numpy as np

from tracker.retarget.joint_map import CANONICAL_LINKS

EE_LINKS = ("left_hand", "right_hand", "left_foot", "right_foot", "head")
CONTACT_HEIGHT = 0.01  # m: a foot whose lowest point is this close to the ground is in contact


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True).clip(min=1e-12)


def quality_report(kin, geo, jmap, src, turn, scale, src_hipmid, q, clamped, fps) -> dict:
    """Compute the report for a retargeted clip.

    Keys: ``frames``, ``fps``, ``bone_cos_mean``, ``bone_cos_min``, ``bones``
    (per link: ``cos_mean``, ``cos_min``), ``ee_error_mean_m``, ``ee_error``
    (per end effector, mean m), ``foot_penetration_max_m``,
    ``foot_skating_mps`` (median horizontal speed of a foot's lowest point while within 1 cm of the ground), ``clamped_frames``.
    """
    pos, rot = kin.forward(q)
    bones = {}
    for link in CANONICAL_LINKS:
        start_s, end_s = src.bone(jmap.links[link])
        s = _unit(turn.apply(end_s - start_s))
        if link in geo.tip_local:
            end = pos[link] + rot[link].apply(geo.tip_local[link])
        else:
            nxt = {"pelvis": "abdomen", "abdomen": "chest", "chest": "head"}.get(link)
            end = pos[nxt] if nxt else pos[_distal(link)]
        c = _unit(end - pos[link])
        cos = np.sum(s * c, axis=1)
        bones[link] = {"cos_mean": float(cos.mean()), "cos_min": float(cos.min())}

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

    low = {f: kin.lowest_point(q, [f]) for f in ("left_foot", "right_foot")}
    penetration = max(float(-min(l.min() for l in low.values())), 0.0)
    speeds = []
    for f, lo in low.items():
        # horizontal speed of the foot's lowest collision point (the part that touches the ground)
        vel = np.gradient(_lowest_xy(kin, q, f), axis=0) * fps
        contact = lo < CONTACT_HEIGHT
        if contact.any():
            speeds.append(np.linalg.norm(vel[contact], axis=1))
    skating = float(np.median(np.concatenate(speeds))) if speeds else 0.0
    return {
        "frames": int(len(q)),
        "fps": float(fps),
        "bone_cos_mean": float(np.mean([b["cos_mean"] for b in bones.values()])),
        "bone_cos_min": float(np.min([b["cos_min"] for b in bones.values()])),
        "bones": bones,
        "ee_error_mean_m": float(np.mean(list(ee.values()))),
        "ee_error": ee,
        "foot_penetration_max_m": penetration,
        "foot_skating_mps": skating,
        "clamped_frames": int(np.count_nonzero(clamped)),
    }


def _lowest_xy(kin, q: np.ndarray, link: str, tie: float = 0.002) -> np.ndarray:
    """Horizontal position ``(F, 2)`` of the part of ``link`` that touches the ground.

    The mean of the collision sample points within ``tie`` m of the lowest one, so that a
    flat sole (four corners at the same height) does not jump from corner to corner.
    """
    pos, rot = kin.forward(q)
    pts = np.vstack([s.sample_points() for s in kin.shapes[link]])  # (P, 3)
    world = np.einsum("fij,pj->fpi", rot[link].as_matrix(), pts) + pos[link][:, None, :]
    z = world[:, :, 2]
    near = z <= z.min(axis=1, keepdims=True) + tie  # (F, P)
    return (world[:, :, :2] * near[:, :, None]).sum(axis=1) / near.sum(axis=1, keepdims=True)


def _distal(link: str) -> str:
    from tracker.retarget.joint_map import DISTAL

    return DISTAL[link]
