"""Going back in a PyBullet world, exactly and cheaply: one saved state plus the steps taken since.

What the engine's own save and restore cost (pybullet 3.2.7, DIRECT, 2-core machine;
``scripts/bench.py --only state``):

- ``saveState`` serialises the whole world (Bullet's ``btDefaultSerializer``: its type tables
  are rebuilt and the buffer parsed back on every call, then every collision object, shape,
  multibody link and contact manifold): about 0.27 ms for an empty world plus about 25 µs per
  collision object or link, 0.65 ms for the humanoid (16 links) on the ground plane. That is
  two to three SPD control steps of the humanoid.
- ``restoreState(stateId)`` from the in-memory state: about 5 µs. ``removeState``: about 20 µs
  (states that are not removed accumulate in the server).
- ``stepSimulation`` of the humanoid: 20–100 µs.
- Resetting every body through the Python API (``resetBasePositionAndOrientation``,
  ``resetJointStatesMultiDof`` with the values just read) is *not* exact: it moves the state
  by about 3e-14 after one step on the standing humanoid (the base pose and the spherical
  joints do not round-trip), and the difference grows; it also does not restore the contact
  manifolds. Only ``restoreState`` is bit-exact.

So a saved state is expensive and a restore and a step are cheap. :class:`Rewind` keeps one
saved *checkpoint* and the control steps taken since (each a callable that re-applies that
step's inputs and steps the engine); going back to "now" is a restore plus a replay of those
steps, which the deterministic engine reproduces bit for bit
(``tests/sim/test_state.py``). A new checkpoint is saved only every ``every`` steps, so the
save's cost is shared between them.

The owner of the world must record *every* step it takes and must not let anything else
change the world between steps (an external force, a body added, a reset); where it cannot
vouch for that it calls :meth:`Rewind.invalidate`, and the next :meth:`Rewind.now` saves anew.
"""

from __future__ import annotations

from collections.abc import Callable

from tracker.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402


class SavedState:
    """One ``saveState`` of a client, restorable any number of times, freed on :meth:`close`.

    Use as a context manager: ``with SavedState(client) as s: ...; s.restore()``.
    """

    def __init__(self, client: int) -> None:
        self.client = client
        self.id: int | None = p.saveState(physicsClientId=client)
        self.bodies = p.getNumBodies(physicsClientId=client)
        #: whether any contact point existed when saved. Bullet's restore re-synchronises the
        #: contact manifolds (restores the saved ones, empties the others) only if the saved
        #: state holds at least one; otherwise manifolds that appeared after the save keep
        #: their points through the restore (btMultiBodyWorldImporter::convertAllObjects).
        self.has_contacts = bool(p.getContactPoints(physicsClientId=client))

    def restore(self) -> None:
        """Put the world back to the saved state (bit-exact, contact manifolds included)."""
        p.restoreState(self.id, physicsClientId=self.client)

    def close(self) -> None:
        """Free the state in the server (idempotent; a closed client frees it itself)."""
        if self.id is not None and p.isConnected(self.client):
            p.removeState(self.id, physicsClientId=self.client)
        self.id = None

    def __enter__(self) -> "SavedState":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Rewind:
    """A way back to the world's current state: a checkpoint plus the steps taken since, replayed.

    Protocol: before taking steps that must be undone, call :meth:`now`; take them; call
    :meth:`back`, and the world is bit-identical to what it was at :meth:`now`. The owner calls
    :meth:`record` after every step it takes for real (between :meth:`now` calls), with a
    callable that re-applies that step's inputs and steps the engine the same way.

    Args:
        client: the PyBullet client.
        every: save a new checkpoint once this many steps have been recorded since the last
            one (a replay is then at most ``every - 1`` steps). ``1`` saves at every
            :meth:`now`, like a plain save and restore.
    """

    def __init__(self, client: int, every: int = 4) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.client = client
        self.every = int(every)
        self._saved: SavedState | None = None
        self._steps: list[Callable[[], None]] = []
        #: checkpoints saved and steps replayed so far (for reports and tests).
        self.saves = self.replays = 0

    def now(self) -> None:
        """Make sure :meth:`back` can return to the current state (saves a checkpoint if due)."""
        s = self._saved
        if (s is None or len(self._steps) >= self.every or not self._replayable(s)
                or p.getNumBodies(physicsClientId=self.client) != s.bodies):
            self.invalidate()
            self._saved = SavedState(self.client)
            self.saves += 1

    def _replayable(self, s: SavedState) -> bool:
        """Whether restoring ``s`` after a trial from here leaves no stale contact point.

        A checkpoint with contact points is always replayable (its restore re-synchronises every
        manifold). One without is replayable only while no manifold holds a point at the restore:
        the contacts are detected here (the trial's first step would find the same ones at this
        state) and if there are none, the trial adds none either.
        """
        if s.has_contacts or not self._steps:
            return True
        cid = self.client
        p.performCollisionDetection(physicsClientId=cid)
        return not p.getContactPoints(physicsClientId=cid)

    def back(self) -> None:
        """Return to the state of the last :meth:`now`: restore the checkpoint and replay the steps since."""
        if self._saved is None:
            raise RuntimeError("Rewind.back() without Rewind.now()")
        self._saved.restore()
        for step in self._steps:
            step()
        self.replays += len(self._steps)

    def record(self, step: Callable[[], None]) -> None:
        """The owner took a step for real; ``step()`` re-applies its inputs and steps the engine again."""
        if self._saved is None:
            return  # nothing to replay from: the next now() saves the current state
        self._steps.append(step)
        if len(self._steps) > 4 * self.every:  # no peek for a while: do not keep a long tail
            self.invalidate()

    def invalidate(self) -> None:
        """Forget the checkpoint (the world changed in a way that was not recorded)."""
        if self._saved is not None:
            self._saved.close()
        self._saved = None
        self._steps = []

    close = invalidate
