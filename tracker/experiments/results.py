"""Writing result files atomically (never a half-written file after a crash)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from tracker.atomic import atomic_target, make_readable  # noqa: F401  (re-exported)


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to a temporary file in the same folder, then rename it into place."""
    path = Path(path)
    with atomic_target(path) as tmp, open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    return path


def write_json_atomic(path: str | Path, data) -> Path:
    """JSON (non-finite floats written as null / "inf") written atomically."""
    return write_text_atomic(path, json.dumps(_clean(data), indent=2, sort_keys=True) + "\n")
