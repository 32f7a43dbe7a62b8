"""Atomic file writes: a temporary file beside the target, renamed into place on success.

Result files (text, JSON) go through :func:`write_text_atomic` and :func:`write_json_atomic`, so a
crash never leaves a half-written file.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tracker.errors import TrackerError
from tracker.outdir import path_problem


class WriteError(TrackerError, OSError):
    """A file could not be written (a full disk, a file-size limit, no permission, a name too long).

    A :class:`~tracker.errors.TrackerError` (one line naming the file, exit status 2) that is
    also the :class:`OSError` it came from (``errno`` kept), for callers that catch those.
    """

    def __init__(self, path: str | Path, exc: OSError) -> None:
        OSError.__init__(self, exc.errno, exc.strerror)
        self.path = Path(path)
        self.message = f"cannot write {path} ({path_problem(exc)})"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # across processes (sweep workers): rebuilt from the path and the OSError's numbers
        return _write_error, (str(self.path), self.errno, self.strerror)


def _write_error(path: str, errno: int | None, strerror: str | None) -> WriteError:
    return WriteError(path, OSError(errno, strerror))


def make_readable(path: str | Path) -> None:
    """Give a temporary file the permissions a normal ``open()`` would (mkstemp makes it 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


@contextmanager
def atomic_target(path: str | Path, suffix: str = "") -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` if the block succeeds.

    The file gets normal permissions; on any error the temporary file is removed and
    ``path`` is left as it was. ``suffix`` keeps writers that add an extension happy.

    Raises:
        WriteError: an :class:`OSError` while writing (disk full, file-size limit, permissions),
            as one line naming ``path``.
    """
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    except OSError as exc:
        raise WriteError(path, exc) from None
    os.close(fd)
    try:
        yield Path(tmp)
        make_readable(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, TrackerError):
            raise WriteError(path, exc) from None  # a full disk, a file-size limit: say which file
        raise


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Delete the temporary files that :func:`atomic_target` left in ``folder`` when its process
    was killed between creating and renaming them (``.NAME.XXXXXXXX[SUFFIX]`` beside a target).

    Only call it when no other process is writing into ``folder``. Returns what was removed.
    """
    import re

    pattern = re.compile(r"\.[^.].*\.[a-z0-9_]{8}(\.[A-Za-z0-9]+)?")  # mkstemp's 8 random characters
    removed = []
    for p in Path(folder).glob(".*"):
        if p.is_file() and pattern.fullmatch(p.name):
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


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
