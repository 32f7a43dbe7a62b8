"""The BVH length units and up axes by name, their checks and the unit detection.

No numpy here: the command line builds its choices from these names, and ``tracker inspect``
reads a file with them without loading numpy.
"""

from __future__ import annotations

import math

#: Metres per file unit, by unit name.
UNITS: dict[str, float] = {
    "m": 1.0,
    "cm": 0.01,
    "mm": 0.001,
    "inch": 0.0254,
    # CMU ASF length unit: 1/0.45 inch. CMU hip height is about 17.7 of these.
    "asf": 0.0254 / 0.45,
}

UNIT_HELP: dict[str, str] = {
    "m": "metres",
    "cm": "centimetres",
    "mm": "millimetres",
    "inch": "inches",
    "asf": "CMU ASF units (1/0.45 inch)",
}

#: Up axes a file may have ("-Y": its up is -Y); Y and Z first, the usual ones.
UP_AXES = ("Y", "Z", "X", "-Y", "-Z", "-X")

#: Height assumed for the unit detection: the unit that makes the skeleton
#: closest to this (on a log scale) wins.
TYPICAL_HEIGHT_M = 1.7

#: Unit assumed when a skeleton has no height at all (a single joint).
DEFAULT_UNIT = "cm"

def check_unit(unit: str) -> float:
    """Metres per ``unit``; ``ValueError`` listing the valid names otherwise."""
    try:
        return UNITS[unit]
    except (KeyError, TypeError):
        raise ValueError(f"unknown unit {unit!r}; valid units: {', '.join(UNITS)}") from None


def check_up_axis(up_axis: str) -> str:
    """Normalised up-axis name (one of :data:`UP_AXES`; ``"+Y"`` is ``"Y"``); ``ValueError`` otherwise."""
    up = str(up_axis).upper()
    if up.startswith("+"):
        up = up[1:]
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


def up_index(up_axis: str) -> int:
    """Index of the up axis among x, y, z in the file's coordinates."""
    return "XYZ".index(check_up_axis(up_axis)[-1])
