"""The motion a config tracks and the balls it launches, built from the config's keys.

The reference is a retargeted clip (:mod:`tracker.retarget`), a keyframe file
(:mod:`tracker.keyframes`) or an authored stance (``data/poses/``); it is cached
per process, keyed by the clip file's modification time, since retargeting is
the slow part of a short run and sweeps reuse it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracker.experiments.config import ExperimentConfig


@lru_cache(maxsize=8)
def _reference(model: str, path: str, mtime: float, joint_map: str | None, ik: str, fps: float | None,
               keep_first_frame: bool):
    """Retargeting is the slow part of a short run; sweeps reuse the reference within a process."""
    from tracker.keyframes.file import is_keyframe_file

    if is_keyframe_file(path):  # keyframes (tracker.keyframes) are a source like a clip
        from tracker.character.model import load_model
        from tracker.keyframes import load_keyframes
        from tracker.keyframes.track import KeyframeTrack

        return KeyframeTrack.build(load_keyframes(path), load_model(model))
    from tracker.retarget import load_clip_reference
    from tracker.sim.stance import is_pose_file, load_pose

    if path.endswith((".yaml", ".yml")) and is_pose_file(path):  # an authored stance (data/poses/)
        return load_pose(path)

    return load_clip_reference(path, model=model, joint_map=joint_map, ik_feet=ik in ("feet", "both"),
                               ik_hands=ik in ("hands", "both"), fps=fps, drop_tpose=not keep_first_frame)


def reference_of(cfg: ExperimentConfig):
    """The reference motion of ``cfg`` (``clip.*`` and ``model``), cached per process."""
    clip = cfg.clip
    return _reference(cfg.model, clip.path, os.path.getmtime(clip.path), clip.joint_map, clip.ik, clip.fps,
                      clip.keep_first_frame)


def launches_of(cfg: ExperimentConfig) -> list:
    """The config's balls as :class:`tracker.scenarios.base.Launch` specs."""
    from tracker.scenarios.base import Launch

    return [Launch(ball=b.preset, target_link=b.target_link, impact_time=b.impact_time, speed=b.speed,
                   direction=b.direction, offset=b.offset, flight_time=b.flight_time, mass=b.mass,
                   release_height=cfg.launch.height, shift=b.shift)
            for b in cfg.balls]
