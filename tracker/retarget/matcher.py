"""A joint map for a skeleton no shipped map knows: found from its shape (plain Python, no numpy).

:func:`tracker.motion.body.find_body` finds the pelvis, legs, spine, neck, head and arms in
the tree; :func:`tracker.motion.orient.decide` has decided left and right (from the names, or
from which side of the facing direction each limb stands on); :func:`map_from_body` turns that
into a :class:`~tracker.retarget.joint_map.JointMap` of the same kind as the shipped YAML maps,
so everything after it is unchanged:

* pelvis: the joint the legs hang from, to the first spine joint away from it;
* abdomen: that first spine joint (the pelvis itself when the chest hangs straight off it), to
  the chest; chest: the joint the arms hang from, to the first neck joint away from it;
* head: the head joint to its End Site (or the end joint of the chain, ``HeadTop_End``);
* legs: thigh, shin, foot (to the toe joint or the foot's End Site); arms: upper arm, forearm,
  hand (to the middle finger's knuckle or the hand's End Site).

:func:`confidence` says how sure the match is: how many chosen joints carry the words of their
segment (hip/thigh/upleg, knee/shin/calf/leg ..., the issue's list), how the sides were decided,
and how well the legs hang below the spine over the clip.
"""

from __future__ import annotations

import re
from pathlib import Path

from tracker.errors import RetargetError
from tracker.motion.body import Body, Limb
from tracker.retarget.map_types import CANONICAL_LINKS, JointMap, LinkSource

#: Words that name each character link's source joint (lower case, matched inside the name).
SEGMENT_WORDS: dict[str, tuple[str, ...]] = {
    "pelvis": ("hip", "pelvis", "root", "hips"),
    "abdomen": ("spine", "back", "abdomen", "waist", "torso", "lumbar"),
    "chest": ("chest", "spine", "torso", "thorax", "back", "upperback"),
    "head": ("head",),
    "thigh": ("hip", "thigh", "upleg", "femur", "upperleg", "uleg"),
    "shin": ("knee", "calf", "shin", "leg", "lowerleg", "tibia", "crus"),
    "foot": ("ankle", "foot"),
    "upper_arm": ("arm", "upperarm", "humerus", "shoulder", "shldr", "uparm"),
    "forearm": ("forearm", "elbow", "lowerarm", "lowarm", "arm"),
    "hand": ("wrist", "hand"),
}
_GENERIC = re.compile(r"^(j(oint)?[_\s]?\d+|\d+)$", re.IGNORECASE)


def _point(body: Body, names, tip: int) -> str:
    return names[tip] if tip >= 0 else f"{names[-1 - tip]}/end"


def _away(body: Body, joints: list[int], seg, eps: float) -> int | None:
    """The first of ``joints`` at a distance from the one before it (zero offsets skipped)."""
    return next((k for k in joints if seg[k] > eps), None)


def map_from_body(body: Body, names, offsets, source: str = "clip") -> JointMap:
    """The joint map of a humanoid ``body`` whose sides are decided (left limbs first)."""
    names = list(names)
    seg = [sum(c * c for c in o) ** 0.5 for o in offsets]
    eps = 1e-3 * max(seg, default=0.0)
    dupes = {n for n in names if names.count(n) > 1}
    used = {body.pelvis, body.chest, body.head, *body.spine, *(k for limb in body.legs + body.arms
                                                               for k in (limb.upper, limb.middle, limb.end))}
    clash = sorted({names[k] for k in used} & dupes)
    if clash:
        raise RetargetError(f"{source}: joint name {clash[0]!r} is used by more than one joint; "
                            "rename it or pass --map FILE")
    spine_away = [k for k in body.spine if k != body.chest]
    abdomen = _away(body, spine_away, seg, eps)
    if abdomen is None:
        abdomen = body.pelvis  # the chest hangs straight off the pelvis: the abdomen rides with it
    neck = [k for k in body.neck if k != body.chest]
    chest_end = _away(body, neck, seg, eps)
    links: dict[str, LinkSource] = {
        "pelvis": LinkSource(names[body.pelvis], (names[body.pelvis],),
                             (names[abdomen if abdomen != body.pelvis else body.chest],)),
        "abdomen": LinkSource(names[abdomen], (names[abdomen],), (names[body.chest],)),
        "chest": LinkSource(names[body.chest], (names[body.chest],),
                            (names[chest_end if chest_end is not None else body.head],)),
        "head": LinkSource(names[body.head], (names[body.head],), (_point(body, names, body.head_end),)),
    }
    for side, leg, arm in (("left", body.legs[0], body.arms[0]), ("right", body.legs[1], body.arms[1])):
        for (link, joint, end) in _limb_links(side, leg, ("thigh", "shin", "foot"), names, body) + \
                _limb_links(side, arm, ("upper_arm", "forearm", "hand"), names, body):
            across = None
            if link.endswith("hand") and arm.across:
                across = (names[arm.across[0]], names[arm.across[1]])
            links[link] = LinkSource(joint, (joint,), (end,), across)
    return JointMap(name="matched", description="found from the skeleton's shape (tracker.retarget.matcher)",
                    links={k: links[k] for k in CANONICAL_LINKS}, strip_prefix="", detect=(),
                    path=Path(f"<matched: {Path(source).name}>"))


def _limb_links(side: str, limb: Limb, segs, names, body: Body):
    a, b, c = segs
    return [(f"{side}_{a}", names[limb.upper], names[limb.middle]),
            (f"{side}_{b}", names[limb.middle], names[limb.end]),
            (f"{side}_{c}", names[limb.end], _point(body, names, limb.tip))]


def _segment(link: str) -> str:
    return link.split("_", 1)[1] if link.startswith(("left_", "right_")) else link


def name_agreement(jmap: JointMap) -> tuple[int, int, list[str]]:
    """How many links' joints carry a word of their segment: ``(agree, named, disagreeing links)``.

    ``named`` leaves out joints with generic names (``j12``, ``joint_3``), which say nothing.
    """
    agree, named, off = 0, 0, []
    for link, src in jmap.links.items():
        if _GENERIC.match(src.joint):
            continue
        named += 1
        low = src.joint.lower()
        if any(w in low for w in SEGMENT_WORDS[_segment(link)]):
            agree += 1
        else:
            off.append(f"{link}={src.joint}")
    return agree, named, off


def confidence(jmap: JointMap, body: Body, sides_how: str) -> dict:
    """How sure the match is: ``{"score", "names", "sides", "notes"}`` (score in [0, 1])."""
    agree, named, off = name_agreement(jmap)
    names_share = agree / named if named else None
    sides_named = body.sides_from == "names"
    score = 0.6 + (0.25 * names_share if names_share is not None else 0.1) + (0.15 if sides_named else 0.05)
    notes = []
    if off:
        notes.append("names that do not say their segment: " + ", ".join(off[:6]))
    if names_share is None:
        notes.append("generic joint names: matched by topology and geometry alone")
    return {"score": round(min(score, 1.0), 2),
            "names": None if names_share is None else f"{agree} of {named} joints named as their segment",
            "sides": sides_how, "notes": notes}


def map_yaml(jmap: JointMap, header: str = "") -> str:
    """A joint map as YAML in the shipped maps' format (``tracker retarget --write-map``)."""
    import json

    def alts(v: tuple[str, ...]) -> str:
        return json.dumps(v[0]) if len(v) == 1 else "[" + ", ".join(json.dumps(x) for x in v) + "]"

    lines = [f"# {line}" for line in header.splitlines()] + [
        f"name: {jmap.name}", f"description: {json.dumps(jmap.description)}", "links:"]
    for link in CANONICAL_LINKS:
        s = jmap.links[link]
        extra = f", across: [{json.dumps(s.across[0])}, {json.dumps(s.across[1])}]" if s.across else ""
        start = f", start: {alts(s.start)}" if s.start != (s.joint,) else ""
        lines.append(f"  {link + ':':16} {{joint: {json.dumps(s.joint)}{start}, end: {alts(s.end)}{extra}}}")
    return "\n".join(lines) + "\n"


#: A humanoid's legs hang below its spine: the median cosine between pelvis -> chest and
#: hip -> ankle over the sampled frames must be below this (a quadruped's hind legs stand
#: across its spine, about 0).
LEGS_BELOW_SPINE = -0.3


def match_skeleton(skeleton, frames=None, source: str = "clip") -> tuple[JointMap, dict]:
    """The joint map of a humanoid ``skeleton`` found by its shape, and how sure the match is.

    Args:
        skeleton: anything with ``names``, ``parents``, ``offsets``, ``end_site_parents``,
            ``end_site_offsets`` and ``channels`` (a :class:`~tracker.motion.skeleton.Skeleton`).
        frames: sampled frames, each the world points (joints then End Sites, Z up) as lists;
            ``None``: the rest pose alone.

    Raises:
        RetargetError: not a humanoid, one line naming what is missing.
    """
    from tracker.motion.body import NotHumanoid, find_body, sides_from_names
    from tracker.motion.orient import assign_sides

    names = list(skeleton.names)
    parents = [int(p) for p in skeleton.parents]
    offsets = [tuple(float(x) for x in o) for o in skeleton.offsets]
    end_parents = [int(p) for p in skeleton.end_site_parents]
    end_offsets = [tuple(float(x) for x in o) for o in skeleton.end_site_offsets]
    try:
        body = find_body(names, parents, offsets, end_parents, end_offsets, skeleton.channels)
    except NotHumanoid as exc:
        raise RetargetError(f"{source}: not a humanoid skeleton: {exc}; pass --map FILE if it is one") from None
    if frames is None:
        frames = [_rest_points(parents, offsets, end_parents, end_offsets)]
    _check_upright(body, frames, source)
    how = "from the joint names" if sides_from_names(body, names) else \
        assign_sides(body, frames, len(names), end_parents)
    jmap = map_from_body(body, names, offsets, source)
    return jmap, confidence(jmap, body, how)


def _rest_points(parents, offsets, end_parents, end_offsets) -> list:
    pos: list = []
    for j, p in enumerate(parents):
        o = offsets[j]
        pos.append(o if p < 0 else tuple(pos[p][i] + o[i] for i in range(3)))
    return pos + [tuple(pos[p][i] + o[i] for i in range(3)) for p, o in zip(end_parents, end_offsets)]


def _check_upright(body: Body, frames, source: str) -> None:
    cosines = []
    for pts in frames:
        spine = [pts[body.chest][i] - pts[body.pelvis][i] for i in range(3)]
        for leg in body.legs:
            down = [pts[leg.end][i] - pts[leg.upper][i] for i in range(3)]
            n = (sum(x * x for x in spine) * sum(x * x for x in down)) ** 0.5
            if n > 0:
                cosines.append(sum(a * b for a, b in zip(spine, down)) / n)
    cosines.sort()
    if cosines and cosines[len(cosines) // 2] > LEGS_BELOW_SPINE:
        raise RetargetError(f"{source}: not a humanoid skeleton: its legs do not hang below its spine "
                            f"(median cosine {cosines[len(cosines) // 2]:+.2f}, a humanoid's is below "
                            f"{LEGS_BELOW_SPINE}): a quadruped? pass --map FILE if it is a humanoid")


def motion_frames(motion) -> list:
    """The sampled frames of :func:`tracker.motion.orient.sample_frames` as lists of world points."""
    import numpy as np

    from tracker.motion.orient import sample_frames

    idx = sample_frames(motion.n_frames)
    pos, quats = motion.global_transforms()
    ends = motion.end_site_positions() if len(motion.skeleton.end_site_parents) else np.zeros((motion.n_frames, 0, 3))
    return [np.concatenate([pos[i], ends[i]]).tolist() for i in idx]
