"""Silence PyBullet's C-level prints (build banner, URDF importer warnings) on stdout/stderr, and
set the engine's one process-wide setting (:data:`CONTACT_BREAKING_THRESHOLD`) once, on import.

Every module that uses PyBullet imports this one first."""

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


#: Bullet's ``gContactBreakingThreshold`` (PyBullet's ``contactBreakingThreshold``, default 0.02). A
#: contact point stays in its pair's manifold while the two shapes are at most this factor times the
#: smaller shape's angular motion disc apart (its bounding radius): 7 mm for a 26 x 10 x 6 cm box at
#: 0.05, 2.8 mm at the default. The engine adds one point per box-plane pair per step, so a sole that
#: tilts a degree and a half loses its far corners at the default and gets them back one per step; at
#: 1/60 s a foot then rests on one or two points for several steps, is no stance foot for the balance
#: feedback (:data:`tracker.control.balance.PLANTED_AREA`), rolls and slides, and the standing
#: character fell 1-3 s after side pushes of 75 N it had absorbed. Kept points a few millimetres off
#: the floor are speculative contacts: the solver acts on them only if the step would close the gap,
#: and the support counts only points that touch (:data:`tracker.sim.support.SUPPORT_GAP`). Measured
#: (``tracker push stand --force F --direction D``, 0.2 s on the chest, 1/60 s): 100 N survived from 4
#: of 4 sides (1 of 4 at the default), 125 N from 3 of 4 (none); at 0.1 the free-root balance grid of
#: ``tests/sim/test_fall_never_diverges.py`` spun ankles to 91-162 rad/s at 1/30 s, at 0.05 its
#: fastest joint is 72 rad/s (65 at the default).
#:
#: It is a global of the Bullet library, shared by every client of the process (a value set by one
#: client holds for clients connected before and after it, and survives ``resetSimulation``), so it
#: is set here, once, and nothing in tracker sets it elsewhere: results do not depend on what ran
#: before in the same process.
CONTACT_BREAKING_THRESHOLD = 0.05


def _set_engine_globals() -> None:
    """Set :data:`CONTACT_BREAKING_THRESHOLD` through a throwaway client (about 25 ms)."""
    with quiet_stdio():
        cid = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setPhysicsEngineParameter(contactBreakingThreshold=CONTACT_BREAKING_THRESHOLD, physicsClientId=cid)
    finally:
        pybullet.disconnect(cid)


with quiet_stdio():
    import pybullet  # noqa: F401  (printed banner swallowed once, here)
_set_engine_globals()
