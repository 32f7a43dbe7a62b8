"""Length units and up-axis conversion for BVH files.

BVH files carry no unit and no up axis. We detect the unit from the
skeleton's height (the vertical extent of its frame-0 pose) and assume Y up
unless told otherwise. A Y-up file is turned Z-up by the proper rotation
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

_Y_UP_TO_Z_UP = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def axis_matrix(up_axis: str) -> np.ndarray:
    """Rotation ``C`` ``(3, 3)`` from a file with ``up_axis`` up to Z up."""
    return _Y_UP_TO_Z_UP.copy() if check_up_axis(up_axis) == "Y" else np.eye(3)
