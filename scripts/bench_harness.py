"""The benchmark harness of ``scripts/bench.py``: printed rows, the section registry, best-of timing."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


MOCAP_DIR = REPO / ".." / "shared" / "mocap"


@dataclass(frozen=True)
class Row:
    """One printed line: a timing (``seconds``) or a ratio (``ratio``)."""

    case: str
    seconds: float | None = None
    ratio: float | None = None
    note: str = ""


Section = Callable[[argparse.Namespace], list[Row]]
SECTIONS: dict[str, Section] = {}


def section(name: str) -> Callable[[Section], Section]:
    """Register a benchmark section under ``name`` (unique)."""

    def register(fn: Section) -> Section:
        if name in SECTIONS:
            raise ValueError(f"section {name!r} registered twice")
        SECTIONS[name] = fn
        return fn

    return register


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall-clock time of ``repeat`` calls after one warm-up call, and the last result."""
    result = fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result
