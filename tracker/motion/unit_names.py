"""The BVH length units and up axes by name (no numpy: the command line builds its choices from it)."""

from __future__ import annotations

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

UP_AXES = ("Y", "Z")
