"""Length units and up-axis conversion for BVH files.

BVH files carry no unit and no up axis. We detect the unit from the
skeleton's height (the vertical extent of its frame-0 pose) and assume Y up
unless told otherwise. A Y-up file is turned Z-up by the proper rotation
``C`` mapping ``(x, y, z) -> (z, x, y)``: the file's up (+Y) becomes +Z and
its forward (+Z, the usual BVH facing) becomes +X, as the package conventions
require. Positions map as ``p' = C p``, rotations as ``R' = C R C^T``.
"""

from __future__ import annotations

import math

import numpy as np

from tracker.motion.unit_names import UNIT_HELP, UNITS, UP_AXES  # noqa: F401  (their home is unit_names)

#: Height assumed for the unit detection: the unit that makes the skeleton
#: closest to this (on a log scale) wins.
TYPICAL_HEIGHT_M = 1.7

#: Unit assumed when a skeleton has no height at all (a single joint).
DEFAULT_UNIT = "cm"

_Y_UP_TO_Z_UP = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])


def check_unit(unit: str) -> float:
    """Metres per ``unit``; ``ValueError`` listing the valid names otherwise."""
    try:
        return UNITS[unit]
    except (KeyError, TypeError):
        raise ValueError(f"unknown unit {unit!r}; valid units: {', '.join(UNITS)}") from None


def check_up_axis(up_axis: str) -> str:
    """Normalised up-axis name (``"Y"`` or ``"Z"``); ``ValueError`` otherwise."""
    up = str(up_axis).upper()
    if up not in UP_AXES:
        raise ValueError(f"unknown up axis {up_axis!r}; valid: {', '.join(UP_AXES)}")
    return up


def detect_unit(height: float) -> str | None:
    """Guess the unit of a skeleton ``height`` given in file units.

    Returns the unit whose scale brings the height closest to
    :data:`TYPICAL_HEIGHT_M` on a log scale (so metres, ASF units, inches,
    centimetres and millimetres split at about 7, 45, 107 and 540 file units),
    :data:`DEFAULT_UNIT` for a zero height, and ``None`` if the height is not
    finite.
    """
    if not math.isfinite(height) or height < 0:
        return None
    if height == 0:
        return DEFAULT_UNIT
    # Logs added, not the product's log: a denormal height times a scale underflows to 0.
    log_h = math.log(height)
    return min(UNITS, key=lambda u: abs(log_h + math.log(UNITS[u] / TYPICAL_HEIGHT_M)))


def axis_matrix(up_axis: str) -> np.ndarray:
    """Rotation ``C`` ``(3, 3)`` from a file with ``up_axis`` up to Z up."""
    return _Y_UP_TO_Z_UP.copy() if check_up_axis(up_axis) == "Y" else np.eye(3)


def up_index(up_axis: str) -> int:
    """Index of the up axis among x, y, z in the file's coordinates."""
    return "XYZ".index(check_up_axis(up_axis))
