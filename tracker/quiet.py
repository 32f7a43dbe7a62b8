"""Silence PyBullet's C-level prints (build banner, URDF importer warnings) on stdout/stderr."""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

try:
    _LIBC = ctypes.CDLL(None)
except OSError:  # pragma: no cover - not on a libc platform
    _LIBC = None


def _flush_c_stdio() -> None:
    """Flush C's stdio buffers, so that text printed (buffered) inside the block goes to /dev/null."""
    if _LIBC is not None:
        try:
            _LIBC.fflush(None)
        except (AttributeError, OSError):  # pragma: no cover
            pass


@contextlib.contextmanager
def quiet_stdio():
    """Redirect file descriptors 1 and 2 to /dev/null for the duration (C prints included)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
    except (OSError, ValueError):  # no real descriptors (e.g. captured by a test runner)
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        _flush_c_stdio()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


with quiet_stdio():
    import pybullet  # noqa: F401  (printed banner swallowed once, here)
