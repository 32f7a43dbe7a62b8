"""The file-to-clip time map of a clip file (:class:`~tracker.retarget.timing.ClipTiming`), read
without retargeting it: a BVH (the retargeter's own added T-pose test), a saved reference or a
DeepMimic motion file. Cached per file and modification time.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from tracker.errors import RetargetError
from tracker.retarget.timing import ClipTiming


def clip_timing(path: str | Path, drop_tpose: bool = True) -> ClipTiming:
    """The file-to-clip time map of a clip file, as retargeting it would give.

    Args:
        path: a BVH file, a saved reference (``.npz``) or a DeepMimic motion file.
        drop_tpose: as the retargeter's option (``clip.keep_first_frame: true`` is False).

    Raises:
        RetargetError: the file cannot be read, has no frames of its own (a keyframe or pose
            file) or is a reference saved without its source's timing.
    """
    path = Path(path)
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        raise RetargetError(f"{path}: no such clip") from None
    return _clip_timing(str(path), mtime, bool(drop_tpose))


@lru_cache(maxsize=16)
def _clip_timing(path: str, mtime: float, drop_tpose: bool) -> ClipTiming:
    from tracker.retarget.deepmimic import is_deepmimic_file

    if path.endswith((".yaml", ".yml")):
        raise RetargetError(f"{path}: a keyframe or pose file has no file frames; give its times in seconds "
                            "(its own times are clip times)")
    if is_deepmimic_file(path):  # no frames dropped
        from tracker.retarget.deepmimic import deepmimic_timing

        fps, frames = deepmimic_timing(path)
        return ClipTiming(fps, frames, 0)
    if path.endswith(".npz"):
        from tracker.retarget.reference import Reference

        ref = Reference.load(path)
        timing = ClipTiming.from_quality(ref.quality)
        if timing is None:
            raise RetargetError(f"{path}: this reference does not record its source file's frames (saved by an "
                                "older tracker); retarget the BVH again, or give times in clip time")
        return timing
    from tracker.motion.bvh import read_bvh
    from tracker.retarget.retarget import _drop_added_tpose

    motion = read_bvh(path)
    dropped = _drop_added_tpose(motion)[1] if drop_tpose else 0
    return ClipTiming(float(motion.fps), int(motion.n_frames), int(dropped))
