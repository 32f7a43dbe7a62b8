"""What a joint map is: the character links it drives and, for each, the source joints that drive it.

:mod:`tracker.retarget.joint_map` reads, ships and selects maps; :mod:`tracker.retarget.matcher`
builds one from a skeleton's shape. Both use the types here (kept apart so that neither imports
the other's module to get them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tracker.errors import RetargetError
from tracker.retarget import conventions

# typing is not imported at run time: `tracker inspect` loads only what it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from tracker.motion.skeleton import Skeleton

#: The character links a map must drive, in parent-before-child order.
CANONICAL_LINKS: tuple[str, ...] = (
    "pelvis", "abdomen", "chest", "head",
    "left_thigh", "left_shin", "left_foot", "right_thigh", "right_shin", "right_foot",
    "left_upper_arm", "left_forearm", "left_hand", "right_upper_arm", "right_forearm", "right_hand",
)
#: Default bone end: the next link down the limb.
DISTAL: dict[str, str] = {
    "left_thigh": "left_shin", "left_shin": "left_foot", "right_thigh": "right_shin",
    "right_shin": "right_foot", "left_upper_arm": "left_forearm", "left_forearm": "left_hand",
    "right_upper_arm": "right_forearm", "right_forearm": "right_hand",
}


@dataclass(frozen=True)
class LinkSource:
    """Source of one character link. ``start``/``end`` are alternatives, first usable wins."""

    joint: str
    start: tuple[str, ...]
    end: tuple[str, ...]
    across: tuple[str, str] | None = None  # hands: little-finger side -> index side (the palm's width)

    def points(self) -> tuple[str, ...]:
        return (self.joint, *self.start, *self.end, *(self.across or ()))


@dataclass(frozen=True)
class JointMap:
    """A validated joint map.

    Attributes:
        name: convention name (``cmu_mb``...).
        links: character link -> :class:`LinkSource` (source names after prefix stripping).
        strip_prefix: regex removed from source joint names before matching.
        detect: names that identify the convention.
        path: the YAML file (``<matched: CLIP>`` for a map found from the skeleton's shape).
        matching: for a matched map, how sure the match is (:func:`tracker.retarget.matcher.confidence`).
    """

    name: str
    description: str
    links: dict[str, LinkSource]
    strip_prefix: str
    detect: tuple[str, ...]
    path: Path
    matching: dict | None = field(default=None, compare=False)

    def canonical(self, name: str) -> str:
        return conventions.canonical(self.strip_prefix, name)

    def resolve(self, skeleton: Skeleton) -> dict[str, int]:
        """Source joint index per (prefix-stripped) joint name used by this map.

        Raises:
            RetargetError: naming the map and the missing joints.
        """
        names = {self.canonical(n): i for i, n in enumerate(skeleton.names)}
        missing = sorted(self._missing(set(names)))
        if missing:
            raise RetargetError(
                f"joint map {self.path.name}: joints {', '.join(missing)} are not in the clip's skeleton"
            )
        return names

    def _missing(self, names: set[str]) -> set[str]:
        """Joints the map needs that ``names`` lacks (a point is missing when no alternative exists)."""
        return conventions.missing(self._link_tuples(), names)

    def score(self, skeleton: Skeleton) -> int:
        """How well the map fits: -1 if it cannot be used, else detect names found (+2 for a prefix)."""
        return conventions.score(self.detect, self.strip_prefix, list(self._link_tuples()), skeleton.names)

    def _link_tuples(self):
        return ((s.joint, s.start, s.end, s.across) for s in self.links.values())

    def matches(self, skeleton: Skeleton) -> bool:
        return self.score(skeleton) >= 0
