"""Length units and up-axis conversion for BVH files.

BVH files carry no unit and no up axis. Both are read from the body the file
holds (:mod:`tracker.motion.orient`): up is where the head is and the feet are
not, the unit the one that makes the stature human. A Y-up file is turned Z-up by the proper rotation
``C`` mapping ``(x, y, z) -> (z, x, y)``: the file's up (+Y) becomes +Z and
its forward (+Z, the usual BVH facing) becomes +X, as the package conventions
require. Positions map as ``p' = C p``, rotations as ``R' = C R C^T``.
"""

from __future__ import annotations

import numpy as np

# Names, checks and the unit detection live in the numpy-free unit_names (the command line and
# `tracker inspect` use them without numpy); they are re-exported here.
from tracker.motion.unit_names import (  # noqa: F401
    DEFAULT_UNIT,
    TYPICAL_HEIGHT_M,
    UNIT_HELP,
    UNITS,
    UP_AXES,
    check_unit,
    check_up_axis,
    detect_unit,
    up_index,
)

def axis_matrix(up_axis: str, mirrored: bool = False) -> np.ndarray:
    """``C`` ``(3, 3)`` from a file with ``up_axis`` up to Z up: a rotation, times a reflection of
    the lateral axis for a ``mirrored`` (left-handed) file (:func:`tracker.motion.orient.up_matrix`)."""
    from tracker.motion.orient import up_matrix

    return np.array(up_matrix(check_up_axis(up_axis), mirrored), dtype=float).reshape(3, 3)
