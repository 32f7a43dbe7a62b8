"""Writing result files atomically (never a half-written file after a crash)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path


def _clean(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def make_readable(path: str | Path) -> None:
    """Give a temporary file the permissions a normal ``open()`` would (mkstemp makes it 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to a temporary file in the same folder, then rename it into place."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        make_readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json_atomic(path: str | Path, data) -> Path:
    """JSON (non-finite floats written as null / "inf") written atomically."""
    return write_text_atomic(path, json.dumps(_clean(data), indent=2, sort_keys=True) + "\n")
