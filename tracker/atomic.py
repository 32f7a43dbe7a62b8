"""Atomic file writes: a temporary file beside the target, renamed into place on success."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


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
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        make_readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
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
