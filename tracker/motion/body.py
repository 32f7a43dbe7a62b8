"""A humanoid found in a joint tree by its shape: pelvis, two legs, a spine to the head, two arms.

Plain Python (no numpy): the BVH readers use it to decide a file's up axis, handedness and unit
from the body (:mod:`tracker.motion.orient`), before anything is converted, and
``tracker inspect`` reads files without numpy. The retargeter turns a :class:`Body` into a joint
map (:mod:`tracker.retarget.matcher`).

The rules work on the tree and its rest offsets alone (names only break ties, see below), so
a skeleton whose joints are called ``j0 ... jN`` is found as well as a named one:

* *reach* of a joint: the longest path (sum of offset lengths, End Sites included) from it to
  a leaf; a child is *significant* when its offset plus reach is a fair share of its parent's.
* the **pelvis region**: walk down from the root while one child carries the body (an extra
  root above the hips, a ``Reference`` node); stop at the first joint with two significant
  children. The **spine** is the child whose subtree branches three ways (two arms and a neck);
  the **legs** are the two other longest children, or the two children of a joint of their own
  (Reallusion's ``CC_Base_Pelvis`` beside ``CC_Base_Waist``). The pelvis link is the joint the
  legs hang from.
* the **chest** is the first joint on the spine's main chain (the child of longest reach at
  each step) that branches three ways; the **arms** are its two longest children and the
  **neck** the longest of the rest. The **head** is the first joint up the neck that ends the
  chain or branches (eyes, jaw), or its parent when it sits at the same point (a facial root);
  a leaf called like an end point (``HeadTop_End``) is the head's end, not the head.
* a **leg** chain: the thigh and shin are the two consecutive longest bones; the ankle ends the
  shin; the first point past it at least 40 % as far as the farthest (a toe joint, or an End
  Site) gives the foot's direction.
* an **arm** chain: a bone is long when it is at least half the chain's longest; the last long
  bone is the forearm, it ends at the hand, and the previous bone is the upper arm (a clavicle
  before it, fingers after it are optional). The hand's end is its middle finger (the knuckle
  nearest the mean of all knuckles) or its End Site.

Joints named as twist, roll, share or helper bones come last among their siblings, so a chain
goes through them only where nothing else goes on.
Sides come from names when every chain of a pair says the same (``Left``, ``L_``, ``_L``,
``.L``, ``l_``, ``lThigh``, ``Lft`` ...), else from geometry (:func:`sides_from_geometry`).
"""

from __future__ import annotations

import math
import re

Vec = tuple[float, float, float]

#: A child counts as a branch of its parent when offset + reach is at least this share of the
#: parent's reach (pelvis region), or of the spine's reach (the chest's three-way branch).
SIGNIFICANT = 0.25
BRANCH = 0.15
#: An arm bone is long when at least this share of the chain's longest bone.
LONG_BONE = 0.5

_HELPER = re.compile(r"twist|roll|share|helper|adjust|corrective|bend", re.IGNORECASE)
_END_NAME = re.compile(r"(end|nub|top|tip|site)$", re.IGNORECASE)
_LEFT = {"left", "l", "lft", "lt"}
_RIGHT = {"right", "r", "rgt", "rt"}
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class NotHumanoid(ValueError):
    """The joint tree is not a humanoid; the message names what is missing."""


def name_side(name: str) -> str | None:
    """``"left"``, ``"right"`` or None from a joint name's words (``LeftArm``, ``lThigh``, ``UpperArm_L``,
    ``CC_Base_L_Calf``, ``Bip01 L Thigh``, ``thigh.L``, ``l_knee``, ``LftFoot``)."""
    words: list[str] = []
    for part in re.split(r"[_:.\-\s|]+", name):
        words += [w.lower() for w in _CAMEL.findall(part)] or [part.lower()]
    left = any(w in _LEFT or w.startswith("left") for w in words)
    right = any(w in _RIGHT or w.startswith("right") for w in words)
    if left == right:
        return None
    return "left" if left else "right"


def is_helper(name: str) -> bool:
    """A twist, roll, share or helper bone: it rides along a limb and is never on a chain."""
    return bool(_HELPER.search(name))


class Limb:
    """One leg or arm: its joints from the body down, and where its last segment ends.

    Attributes:
        chain: joint indices from the limb's first joint below the pelvis or chest to its leaf.
        upper, middle, end: the thigh, shin and ankle joints (or upper arm, forearm and hand).
        tip: the point past ``end`` giving its direction: a joint index, or ``-1 - end`` for
            the End Site (or continued bone) of ``end``.
        across: a hand's little-finger and index knuckles (joint indices), when found.
        side: ``"left"``/``"right"``, or None until decided.
    """

    __slots__ = ("chain", "upper", "middle", "end", "tip", "across", "side")

    def __init__(self, chain, upper, middle, end, tip, across=None) -> None:
        self.chain, self.upper, self.middle, self.end, self.tip = chain, upper, middle, end, tip
        self.across = across
        self.side: str | None = None


class Body:
    """The humanoid's parts as joint indices of the tree (see the module docstring).

    Attributes:
        pelvis: the joint the legs hang from.
        spine: joints from the first spine joint above the pelvis up to the chest (inclusive).
        chest: the joint the arms hang from.
        neck: joints from the chest's neck child up to the head (inclusive).
        head: the head joint; ``head_end`` the point past it (a joint, or ``-1 - head`` for
            its End Site / continued bone).
        legs, arms: two :class:`Limb` each, left first once sides are decided.
        above: joints above the pelvis region (an extra root).
    """

    def __init__(self, pelvis, spine, chest, neck, head, head_end, legs, arms, above) -> None:
        self.pelvis, self.spine, self.chest, self.neck = pelvis, spine, chest, neck
        self.head, self.head_end = head, head_end
        self.legs: list[Limb] = list(legs)
        self.arms: list[Limb] = list(arms)
        self.above = above
        self.sides_from = "unknown"
        self.parents: list[int] = []


class Tree:
    """A joint tree with rest offsets: children, offset lengths and reach."""

    def __init__(self, names, parents, offsets, end_parents, end_offsets, channels=None) -> None:
        self.names = list(names)
        self.rotates = [True] * len(self.names) if channels is None else \
            [any(c.endswith("rotation") for c in ch) for ch in channels]
        self.parents = list(parents)
        self.n = len(self.names)
        self.kids: list[list[int]] = [[] for _ in range(self.n)]
        for j, p in enumerate(self.parents):
            if p >= 0:
                self.kids[p].append(j)
        self.offsets = [tuple(o) for o in offsets]
        self.seg = [_norm(o) for o in self.offsets]
        self.end_len = [0.0] * self.n
        self.has_end = [False] * self.n
        for p, o in zip(end_parents, end_offsets):
            self.end_len[p] = max(self.end_len[p], _norm(o))
            self.has_end[p] = True
        self.reach = [0.0] * self.n
        for j in reversed(range(self.n)):  # parents precede children
            r = self.end_len[j]
            for c in self.kids[j]:
                r = max(r, self.seg[c] + self.reach[c])
            self.reach[j] = r
        #: lengths below this are zero: joints at the same point (1 mm on a 1 m reach)
        self.eps = 1e-3 * max(self.reach, default=0.0)

    def span(self, c: int) -> float:
        """Offset + reach of child ``c``: how far its subtree goes from its parent."""
        return self.seg[c] + self.reach[c]

    def limbs_of(self, j: int) -> list[int]:
        """Children of ``j``, longest first, helper bones after the others (a chain follows them only
        where nothing else goes on: Reallusion's neck is ``NeckTwist01``)."""
        return sorted(self.kids[j], key=lambda c: (is_helper(self.names[c]), -self.span(c)))

    def main_chain(self, j: int) -> list[int]:
        """``j`` and, at each step, its child of longest reach (helper bones skipped)."""
        out = [j]
        while True:
            kids = self.limbs_of(out[-1])
            if not kids:
                return out
            out.append(kids[0])

    def branches(self, j: int, scale: float, share: float = BRANCH) -> list[int]:
        kids = self.limbs_of(j)
        return [c for c in kids if self.span(c) >= share * scale and self.span(c) > 0]

    def three_way(self, start: int) -> int | None:
        """First joint on ``start``'s main chain that branches three ways (arms and neck)."""
        scale = self.span(start)
        for j in self.main_chain(start):
            if len(self.branches(j, scale)) >= 3:
                return j
        return None


def find_body(names, parents, offsets, end_parents=(), end_offsets=(), channels=None) -> Body:
    """The humanoid in a joint tree (see the module docstring); sides are not decided yet.

    Raises:
        NotHumanoid: naming what is missing (legs, a spine with two arms and a head ...).
    """
    t = Tree(names, parents, offsets, end_parents, end_offsets, channels)
    if t.n == 0:
        raise NotHumanoid("no joints")
    j, above = 0, []
    while True:
        sig = [c for c in t.limbs_of(j) if t.span(c) >= SIGNIFICANT * t.reach[j] and t.span(c) > 0]
        if len(sig) >= 2:
            break
        if not sig:
            raise NotHumanoid(f"a single chain of {t.n} joints, no branching into two legs and a spine")
        above.append(j)
        j = sig[0]
    spines = [c for c in sig if t.three_way(c) is not None]
    if not spines:
        raise NotHumanoid(f"no spine that branches into two arms and a neck (the tree branches at "
                          f"{t.names[j]!r} into {len(sig)} chains with no further three-way branch)")
    spine_child = max(spines, key=lambda c: len(_subtree(t, c)))
    rest = [c for c in sig if c != spine_child]
    if len(rest) >= 2:
        pelvis, leg_roots = j, rest[:2]
    else:
        group = rest[0]
        legs2 = [c for c in t.limbs_of(group) if t.span(c) >= 0.5 * t.span(group)]
        if len(legs2) < 2:
            raise NotHumanoid(f"one leg chain only at {t.names[j]!r} (two are needed)")
        pelvis, leg_roots = group, legs2[:2]
    chest = t.three_way(spine_child)
    spine = t.main_chain(spine_child)
    spine = spine[: spine.index(chest) + 1]
    scale = t.span(spine_child)
    kids = t.branches(chest, scale)
    arm_roots = kids[:2]
    if t.span(arm_roots[1]) < 0.6 * t.span(arm_roots[0]):
        raise NotHumanoid(f"the chest {t.names[chest]!r} has no two arms of like length")
    neck_child = kids[2]
    legs = [_leg(t, c) for c in leg_roots]
    arms = [_arm(t, c) for c in arm_roots]
    neck, head, head_end = _head(t, neck_child)
    body = Body(pelvis, spine, chest, neck, head, head_end, legs, arms, above)
    body.parents = t.parents
    return body


def _subtree(t: Tree, j: int) -> list[int]:
    out, stack = [], [j]
    while stack:
        k = stack.pop()
        out.append(k)
        stack.extend(t.kids[k])
    return out


def _tip(t: Tree, chain: list[int], end: int) -> int:
    """The first point past ``end`` down the chain at a distance from it, or its End Site."""
    for k in chain[chain.index(end) + 1:]:
        if t.seg[k] > t.eps:
            return k
        # a zero offset: a joint at the same point; look further down
    return -1 - end


def _leg(t: Tree, root: int) -> Limb:
    chain = t.main_chain(root)
    bones = [t.seg[k] for k in chain[1:]]  # bone i runs chain[i] -> chain[i + 1]
    if len(bones) < 2:
        raise NotHumanoid(f"the leg from {t.names[root]!r} has {len(chain)} joint(s): no thigh, shin and ankle")
    i = max(range(len(bones) - 1), key=lambda k: bones[k] + bones[k + 1])
    upper, middle, end = chain[i], chain[i + 1], chain[i + 2]
    return Limb(chain, upper, middle, end, _toe(t, chain, end))


def _toe(t: Tree, chain: list[int], ankle: int) -> int:
    """The foot's direction point: the first point past the ankle (a joint, or the last joint's End
    Site) at least 40 % as far from it as the farthest, so that a short joint below the ankle (a
    ``ForeFoot`` 1.4 cm down, its End Site 8.7 cm forward) does not stand for the toes."""
    after = chain[chain.index(ankle) + 1:]
    points = [(k, _norm(_rest_position(t, ankle, k))) for k in after]
    if after and t.has_end[after[-1]]:
        points.append((-1 - after[-1], points[-1][1] + t.end_len[after[-1]]))
    elif not after and t.has_end[ankle]:
        return -1 - ankle
    far = max((d for _, d in points), default=0.0)
    for k, d in points:
        if d >= 0.4 * far and d > t.eps:
            return k
    return -1 - ankle


def _arm(t: Tree, root: int) -> Limb:
    chain = t.main_chain(root)
    bones = [t.seg[k] for k in chain[1:]]
    if len(bones) < 2:
        raise NotHumanoid(f"the arm from {t.names[root]!r} has {len(chain)} joint(s): no upper arm, forearm and hand")
    longest = max(bones)
    k = max(i for i, b in enumerate(bones) if b >= LONG_BONE * longest)
    prev = [i for i in range(k) if bones[i] > t.eps]
    if not prev:
        raise NotHumanoid(f"the arm from {t.names[root]!r} has no upper arm before its forearm")
    upper, middle, hand = chain[prev[-1]], chain[k], chain[k + 1]
    tip, across = _hand_end(t, chain, hand)
    return Limb(chain, upper, middle, hand, tip, across)


def _hand_end(t: Tree, chain: list[int], hand: int) -> tuple[int, tuple[int, int] | None]:
    """The hand's end point (middle finger knuckle, else the first point past it) and its palm cue."""
    fingers = [c for c in t.kids[hand] if t.span(c) > 0]
    knuckles = [_first_point(t, c) for c in fingers]
    knuckles = [k for k in knuckles if k is not None]
    if len(knuckles) >= 3:
        pos = {k: _rest_position(t, hand, k) for k in knuckles}
        mean = tuple(sum(p[i] for p in pos.values()) / len(pos) for i in range(3))
        middle = min(knuckles, key=lambda k: _norm(_sub(pos[k], mean)))
        return middle, None
    return _tip(t, chain, hand), None


def _first_point(t: Tree, j: int) -> int | None:
    """``j`` or the first joint below it (on the main chain) at a distance from ``j``'s parent."""
    for k in t.main_chain(j):
        if _norm(_rest_position(t, t.parents[j], k)) > t.eps:
            return k
    return None


def _rest_position(t: Tree, base: int, k: int) -> Vec:
    """Position of joint ``k`` relative to its ancestor ``base`` in the rest pose (offsets summed)."""
    x = y = z = 0.0
    while k != base and k >= 0:
        o = t.offsets[k]
        x, y, z = x + o[0], y + o[1], z + o[2]
        k = t.parents[k]
    return (x, y, z)


def _head(t: Tree, neck_child: int) -> tuple[list[int], int, int]:
    chain = t.main_chain(neck_child)
    head = chain[-1]
    for k in chain:
        if len(t.kids[k]) >= 2 or not t.kids[k]:
            head = k
            break
    if t.seg[head] <= 0.05 * t.span(neck_child) and head != neck_child and t.kids[head]:
        head = t.parents[head]  # a facial root at the head's point
    end = -1 - head
    if not t.kids[head] and head != neck_child and (_END_NAME.search(t.names[head]) or not t.rotates[head]):
        end, head = head, t.parents[head]  # HeadTop_End: the head's end point, not the head
    neck = chain[: chain.index(head) + 1]
    return neck, head, end


def _norm(v) -> float:
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def _sub(a, b) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def point_index(tip: int, n_joints: int, end_site_of: dict[int, int]) -> int | None:
    """Index into a frame's points (joints then End Sites) of a limb's tip, None for a continued bone."""
    if tip >= 0:
        return tip
    return None if (-1 - tip) not in end_site_of else n_joints + end_site_of[-1 - tip]


def sides_from_names(body: Body, names) -> bool:
    """Set the limbs' sides from their joints' names when both pairs agree; True if they did."""
    decided = []
    for pair in (body.legs, body.arms):
        votes = []
        for limb in pair:
            said = {name_side(names[k]) for k in limb.chain[: limb.chain.index(limb.end) + 1]} - {None}
            votes.append(said.pop() if len(said) == 1 else None)
        if sorted(v or "" for v in votes) != ["left", "right"]:
            return False
        decided.append(votes)
    for pair, votes in zip((body.legs, body.arms), decided):
        for limb, side in zip(pair, votes):
            limb.side = side
        pair.sort(key=lambda limb: limb.side != "left")
    body.sides_from = "names"
    return True
