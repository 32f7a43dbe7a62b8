"""The :class:`Skeleton` type: a joint tree with rest offsets and channel layout."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


from tracker.arrays import frozen as _frozen  # noqa: E402  (read-only copies)


@dataclass(frozen=True, eq=False)
class Skeleton:
    """A joint hierarchy in SI units, Z-up.

    Attributes:
        names: joint names, ``(J,)``; parents always come before children.
        parents: parent index per joint, ``(J,)`` int, ``-1`` for the root.
        offsets: rest offset of each joint in its parent's frame, ``(J, 3)`` m.
            For the root it is the BVH root OFFSET (converted).
        channels: per joint, the BVH channel names as written in the file
            (e.g. ``("Xposition", "Yposition", "Zposition", "Zrotation",
            "Yrotation", "Xrotation")``). Empty for joints with no channels.
        end_site_parents: joint index that owns each End Site, ``(E,)`` int.
        end_site_offsets: End Site offsets in the owner's frame, ``(E, 3)`` m.
    """

    names: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    channels: tuple[tuple[str, ...], ...]
    end_site_parents: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    end_site_offsets: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(self.names))
        object.__setattr__(self, "channels", tuple(tuple(c) for c in self.channels))
        object.__setattr__(self, "parents", _frozen(self.parents, dtype=np.int64))
        object.__setattr__(self, "offsets", _frozen(np.reshape(self.offsets, (-1, 3))))
        object.__setattr__(
            self, "end_site_parents", _frozen(self.end_site_parents, dtype=np.int64)
        )
        object.__setattr__(
            self, "end_site_offsets", _frozen(np.reshape(self.end_site_offsets, (-1, 3)))
        )
        n = len(self.names)
        if self.parents.shape != (n,) or self.offsets.shape != (n, 3) or len(self.channels) != n:
            raise ValueError("Skeleton arrays disagree on the number of joints")
        for j, p in enumerate(self.parents):
            if not (-1 <= p < j):
                raise ValueError(f"joint {self.names[j]!r}: parent index {p} must precede it")

    @property
    def n_joints(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Index of joint ``name``; ``KeyError`` listing nothing else if absent."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(name) from None

    def children(self, j: int) -> list[int]:
        return [k for k, p in enumerate(self.parents) if p == j]
