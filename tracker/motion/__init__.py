"""Motion data: the Skeleton and Motion types, and BVH reading/writing."""

from tracker.motion.motion import Motion
from tracker.motion.skeleton import Skeleton

__all__ = ["Motion", "Skeleton"]
