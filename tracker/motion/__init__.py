"""Motion data: the Skeleton and Motion types, and BVH reading/writing.

The names below are imported on first use (PEP 562), so that importing a light
submodule (``tracker.motion.unit_names``) does not load the BVH reader and scipy.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "read_bvh": "tracker.motion.bvh",
    "write_bvh": "tracker.motion.bvh_write",
    "Motion": "tracker.motion.motion",
    "SourceInfo": "tracker.motion.motion",
    "Skeleton": "tracker.motion.skeleton",
}

__all__ = ["Motion", "Skeleton", "SourceInfo", "read_bvh", "write_bvh"]


def __getattr__(name: str):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'tracker.motion' has no attribute {name!r}") from None
    return getattr(importlib.import_module(module), name)
