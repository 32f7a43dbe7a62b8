"""Which joint map fits a skeleton: the detection rule, on plain data (no PyYAML, no numpy).

:class:`tracker.retarget.joint_map.JointMap` scores itself with :func:`score`, and
``tracker inspect`` names a clip's convention with :func:`detect` straight from the shipped
maps' index (``joint_maps/index.json``, the validated maps with the CRC-32 of each YAML file
they were made from), so that it needs neither PyYAML nor the map classes. When the index is
not current (a shipped YAML edited and ``python -m tracker.retarget.joint_map`` not run),
:func:`load_index` returns None and callers read the YAML files instead.
"""

from __future__ import annotations

import os
import re

# os.path, not tracker.paths: pathlib costs `tracker inspect` a few ms of its ~50 ms start-up
JOINT_MAP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "joint_maps")

#: The validated shipped maps and the checksums of the YAML files they come from (a str path).
INDEX_FILE = os.path.join(JOINT_MAP_DIR, "index.json")

def canonical(strip_prefix: str, name: str) -> str:
    """``name`` with the map's prefix pattern removed."""
    return re.sub(strip_prefix, "", name) if strip_prefix else name


def missing(links, names: set[str]) -> set[str]:
    """Joints the links need that ``names`` lacks (a point is missing when no alternative exists).

    ``links`` holds ``(joint, start, end, across)`` per character link.
    """
    out = set()
    for joint, start, end, across in links:
        if joint not in names:
            out.add(joint)
        out.update(a for a in (across or ()) if a not in names)
        for alts in (start, end):
            if not any(a.split("/")[0] in names for a in alts):
                out.add(alts[0].split("/")[0])
    return out


def score(detect, strip_prefix: str, links, joint_names) -> int:
    """How well a map fits joints ``joint_names``: -1 if it cannot be used, else detect names found (+2 for a prefix)."""
    names = {canonical(strip_prefix, n) for n in joint_names}
    if missing(links, names) or not all(d in names for d in detect):
        return -1
    prefixed = bool(strip_prefix) and any(re.match(strip_prefix, n) for n in joint_names)
    return len(detect) + (2 if prefixed else 0)


def sources() -> dict[str, int]:
    """CRC-32 of each shipped YAML map, by file name."""
    import zlib

    out = {}
    for name in sorted(os.listdir(JOINT_MAP_DIR)):
        if name.endswith(".yaml"):
            with open(os.path.join(JOINT_MAP_DIR, name), "rb") as fh:
                out[name] = zlib.crc32(fh.read())
    return out


def load_index() -> list[dict] | None:
    """The maps of ``index.json``, or None when it is missing, unreadable or not made from these YAML files."""
    import json

    try:
        with open(INDEX_FILE, encoding="utf-8") as fh:
            data = json.load(fh)
        if data["sources"] != sources():
            return None
        return list(data["maps"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _links(m: dict) -> list[tuple]:
    """A map's links as (joint, start alternatives, end alternatives, across or None)."""
    return [(s["joint"], s["start"], s["end"], s["across"]) for s in m["links"].values()]


def detect(joint_names) -> str | None:
    """Name of the shipped map that fits ``joint_names`` best (ties: the later name), or None if none fits.

    The rule of :func:`tracker.retarget.joint_map.select_joint_map`. Raises ``LookupError`` when
    the index is not current (then ask ``select_joint_map``, which reads the YAML files).
    """
    maps = load_index()
    if maps is None:
        raise LookupError("the joint-map index is not current")
    names = list(joint_names)
    scored = sorted(((score(m["detect"], m["strip_prefix"], _links(m), names), m["name"]) for m in maps),
                    reverse=True)
    return next((name for s, name in scored if s >= 0), None)
