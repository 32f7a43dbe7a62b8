"""Motion data: the Skeleton and Motion types, and BVH reading/writing."""

from tracker.motion.bvh import read_bvh
from tracker.motion.bvh_write import write_bvh
from tracker.motion.motion import Motion, SourceInfo
from tracker.motion.skeleton import Skeleton

__all__ = ["Motion", "Skeleton", "SourceInfo", "read_bvh", "write_bvh"]
