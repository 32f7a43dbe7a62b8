"""The :class:`Motion` type: a skeleton animated over frames, with forward kinematics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.motion.skeleton import Skeleton, _frozen


@dataclass(frozen=True)
class SourceInfo:
    """Where a clip came from and how it was converted to SI units, Z up.

    Attributes:
        path: the file read (or ``"<string>"``).
        unit: length unit of the file, a key of :data:`tracker.motion.units.UNITS`.
        scale: metres per file unit.
        up_axis: the file's up axis, one of :data:`tracker.motion.unit_names.UP_AXES`.
        unit_detected: ``True`` if the unit was detected from the skeleton's
            height, ``False`` if the caller gave it.
        frame_time: the file's ``Frame Time`` in seconds, as written.
        mirrored: the file is left-handed and was reflected (:mod:`tracker.motion.orient`).
        stature_m: the skeleton's standing height, m (None: not a humanoid).
        how: how the up axis, handedness and unit were decided, one sentence each.
    """

    path: str
    unit: str
    scale: float
    up_axis: str
    unit_detected: bool
    frame_time: float
    mirrored: bool = False
    stature_m: float | None = None
    how: dict | None = None


@dataclass(frozen=True, eq=False)
class Motion:
    """A clip in SI units, Z-up, xyzw quaternions.

    Attributes:
        skeleton: the joint tree.
        fps: frames per second (float, never rounded). Frame ``i`` is at
            ``i / fps``; the duration is ``(n_frames - 1) / fps``.
        translations: local translation of every joint per frame, ``(F, J, 3)``
            metres, in the parent's frame. For joints without position
            channels it is the rest offset; for the root it is the root's
            position in the world.
        rotations: local rotation of every joint per frame relative to its
            parent, ``(F, J, 4)`` xyzw, sign-continuous over frames.
        source: how the clip was read from a file, or ``None``.
    """

    skeleton: Skeleton
    fps: float
    translations: np.ndarray
    rotations: np.ndarray
    source: SourceInfo | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fps", float(self.fps))
        object.__setattr__(self, "translations", _frozen(self.translations))
        object.__setattr__(self, "rotations", _frozen(self.rotations))
        f, j = self.rotations.shape[:2]
        if self.rotations.shape != (f, self.skeleton.n_joints, 4):
            raise ValueError(f"rotations must be (F, {self.skeleton.n_joints}, 4)")
        if self.translations.shape != (f, j, 3):
            raise ValueError(f"translations must be (F, {j}, 3)")
        if not self.fps > 0:
            raise ValueError("fps must be positive")

    @property
    def n_frames(self) -> int:
        return self.rotations.shape[0]

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame."""
        return (self.n_frames - 1) / self.fps

    @property
    def times(self) -> np.ndarray:
        """Frame times ``(F,)`` s."""
        return np.arange(self.n_frames) / self.fps

    @property
    def root_positions(self) -> np.ndarray:
        """Root joint position in the world per frame, ``(F, 3)`` m."""
        return self.translations[:, 0]

    def global_transforms(self) -> tuple[np.ndarray, np.ndarray]:
        """Forward kinematics.

        Returns:
            ``(positions, rotations)``: world position of each joint
            ``(F, J, 3)`` m and world rotation ``(F, J, 4)`` xyzw.
        """
        parents = self.skeleton.parents
        f, n = self.n_frames, self.skeleton.n_joints
        pos = np.empty((f, n, 3))
        rots: list[Rotation] = []
        for j in range(n):
            local = Rotation.from_quat(self.rotations[:, j])
            p = parents[j]
            if p < 0:
                pos[:, j] = self.translations[:, j]
                rots.append(local)
            else:
                # scipy's apply() needs a writable array; ours are read-only.
                pos[:, j] = pos[:, p] + rots[p].apply(np.array(self.translations[:, j]))
                rots.append(rots[p] * local)
        quats = np.stack([r.as_quat() for r in rots], axis=1)
        return pos, quats

    def end_site_positions(self) -> np.ndarray:
        """World positions of the End Sites, ``(F, E, 3)`` m."""
        sk = self.skeleton
        pos, quats = self.global_transforms()
        out = np.empty((self.n_frames, len(sk.end_site_parents), 3))
        for e, (j, off) in enumerate(zip(sk.end_site_parents, sk.end_site_offsets)):
            out[:, e] = pos[:, j] + Rotation.from_quat(quats[:, j]).apply(np.array(off))
        return out
