"""Saved and restored simulation states: the engine's and the loop's, so a run can branch and come back.

A :class:`Snapshot` of a :class:`~tracker.sim.simulation.Simulation` holds

* the engine state (every body in the PyBullet world: the character, the balls, the ground's
  contacts), saved by one :class:`EngineTechnique`;
* the loop's own state: the clock, the last read state and reference sample, the fall time, the
  torque-saturation counters, the current gains;
* the controller's, the balance feedback's and the ball scenario's Python state (events, per-ball
  records, which balls exist).

Restoring it and stepping on gives, bit for bit, what the run gave when it went on from there
(``tests/sim/test_snapshot.py``: ground contacts, a free root, balls launched after the save).

Engine techniques (``technique=`` of :func:`capture`):

* ``memory``: PyBullet's ``saveState`` / ``restoreState`` in the client's memory. Restoring is
  cheap (about 0.01 ms on our humanoid), saving costs about 1 ms; the state cannot leave the process.
* ``bullet``: ``saveBullet`` to a file in ``/dev/shm`` (or the temp folder), kept as bytes, and
  ``restoreState(fileName=...)``. Saving costs about 0.1 ms, restoring about 1 ms; the bytes are
  portable: another process that built the same world (same bodies in the same order) restores
  them bit-identically, which is what parallel rollout workers need.

``scripts/bench.py --only rollout`` measures both. A cheaper technique (e.g. issue 18's for
``vt``'s peek) plugs in as another :class:`EngineTechnique` registered in :data:`TECHNIQUES`.

Python state is copied generically: each object's ``__dict__`` is copied one level deep (numpy
arrays, lists, dicts and sets copied; other objects, such as the character or a plan, shared),
so a controller whose state lives in plain attributes needs nothing more. An object may instead
define ``snapshot() -> object`` and ``restore(state)``.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tracker.errors import SimulationError
from tracker.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402

#: What the simulation loop keeps between steps (attributes of Simulation).
_LOOP_ATTRS = ("t", "_state", "_ref_next", "fell_at", "fall_reason", "n_peeks", "_saturated", "_steps", "gains",
               "support", "balance_term")


class EngineTechnique(Protocol):
    """How the engine's state is saved and restored."""

    name: str
    #: Whether a saved token can be restored in another process (it pickles).
    portable: bool

    def save(self, client: int) -> Any:
        """Save the whole world of ``client``; returns a token."""
        ...

    def restore(self, client: int, token: Any) -> None:
        """Bring the world of ``client`` back to ``token`` (same bodies as when it was saved)."""
        ...

    def forget(self, client: int, token: Any) -> None:
        """Free what ``token`` holds (a no-op for portable tokens)."""
        ...


class MemoryTechnique:
    """PyBullet's in-memory ``saveState`` / ``restoreState`` (fast restore; this process only)."""

    name = "memory"
    portable = False

    def save(self, client: int) -> Any:
        return _MemoryToken(client, p.saveState(physicsClientId=client))

    def restore(self, client: int, token: Any) -> None:
        if token.client != client:
            raise SimulationError("an in-memory engine state can only be restored in the client that saved it")
        try:
            p.restoreState(token.state_id, physicsClientId=client)
        except p.error as exc:
            raise SimulationError(f"cannot restore a saved engine state ({exc})") from None

    def forget(self, client: int, token: Any) -> None:
        if token.client == client and p.isConnected(client):
            p.removeState(token.state_id, physicsClientId=client)


@dataclass(frozen=True)
class _MemoryToken:
    client: int
    state_id: int


class BulletTechnique:
    """``saveBullet`` bytes (fast save; portable across processes that built the same world)."""

    name = "bullet"
    portable = True

    def __init__(self) -> None:
        self._pid = 0
        self._file = ""

    @property
    def _path(self) -> str:
        """This process's scratch file (a forked worker gets its own: two processes never share one)."""
        if self._pid != os.getpid():
            folder = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
            fd, self._file = tempfile.mkstemp(suffix=".bullet", prefix=f"tracker-{os.getppid()}-{os.getpid()}-",
                                              dir=folder)
            os.close(fd)
            _unlink(self._file)  # a unique name; the file exists only while a state passes through it
            self._pid = os.getpid()
        return self._file

    def save(self, client: int) -> bytes:
        path = self._path
        try:
            p.saveBullet(path, physicsClientId=client)
            with open(path, "rb") as f:
                return f.read()
        finally:
            _unlink(path)  # nothing left behind (forked workers end without running atexit hooks)

    def restore(self, client: int, token: bytes) -> None:
        path = self._path
        with open(path, "wb") as f:
            f.write(token)
        # PyBullet caches files by name: with the cache on, a second restore from the same path would
        # bring back the first file's state. Off for this read only (URDF loading keeps its cache).
        p.setPhysicsEngineParameter(enableFileCaching=0, physicsClientId=client)
        try:
            p.restoreState(fileName=path, physicsClientId=client)
        except p.error as exc:
            raise SimulationError(f"cannot restore a saved engine state ({exc}); was it saved from a world "
                                  "with the same bodies?") from None
        finally:
            p.setPhysicsEngineParameter(enableFileCaching=1, physicsClientId=client)
            _unlink(path)

    def forget(self, client: int, token: Any) -> None:
        pass



def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


#: Engine techniques by name.
TECHNIQUES: dict[str, type] = {"memory": MemoryTechnique, "bullet": BulletTechnique}
_INSTANCES: dict[str, EngineTechnique] = {}


def technique(name: str) -> EngineTechnique:
    """The (per-process) engine technique ``name``.

    Raises:
        SimulationError: unknown name (the valid ones are listed).
    """
    if name not in TECHNIQUES:
        raise SimulationError(f"engine state technique {name!r} is not one of: {', '.join(TECHNIQUES)}")
    if name not in _INSTANCES:
        _INSTANCES[name] = TECHNIQUES[name]()
    return _INSTANCES[name]


@dataclass(frozen=True)
class Snapshot:
    """One moment of a simulation.

    Attributes:
        t: the simulation clock, s (clip time).
        technique: the engine technique's name.
        engine: its token (bytes for ``bullet``; an in-process handle for ``memory``).
        loop: the loop's attributes.
        objects: the Python state of the controller, balance feedback and scenario (by role).
        bodies: the ball bodies that existed when saved (their PyBullet ids).
    """

    t: float
    technique: str
    engine: Any
    loop: dict
    objects: dict
    bodies: tuple[int, ...]

    @property
    def portable(self) -> bool:
        return bool(TECHNIQUES[self.technique].portable)


def capture(sim, technique_name: str = "memory") -> Snapshot:
    """Save ``sim`` (a :class:`~tracker.sim.simulation.Simulation`) as it is now."""
    tech = technique(technique_name)
    loop = {k: _copy_value(getattr(sim, k)) for k in _LOOP_ATTRS if hasattr(sim, k)}
    objects = {role: _save_object(obj) for role, obj in _objects(sim).items()}
    return Snapshot(float(sim.t), tech.name, tech.save(sim.world.client), loop, objects, _ball_bodies(sim))


def restore(sim, snap: Snapshot) -> None:
    """Bring ``sim`` back to ``snap`` (taken from it, or from a simulation built the same way).

    Balls spawned after the snapshot are removed first, so the world holds the same bodies as
    when it was saved; the scenario then spawns them again at their time.
    """
    scenario = sim.scenario
    if scenario is not None and hasattr(scenario, "_balls"):
        for b in scenario._balls:
            if b.body is not None and b.body not in snap.bodies:
                sim.world.remove_body(b.body)
                b.body = None
    _drop_contacts(sim)
    technique(snap.technique).restore(sim.world.client, snap.engine)
    for k, v in snap.loop.items():
        setattr(sim, k, _copy_value(v))
    for role, obj in _objects(sim).items():
        if role in snap.objects:
            _restore_object(obj, snap.objects[role])


#: m: how far every body is lifted for a moment before a restore (:func:`_drop_contacts`).
_LIFT = 1.0e4


def _drop_contacts(sim) -> None:
    """Empty the engine's contact manifolds before a restore.

    A saved engine state brings back the manifolds it held, but leaves alone those it did not hold, and
    their points and warm-start impulses then act in the next step. A state saved in a fresh world (a
    search's start: no step taken, no manifold yet) restored into a world that has stepped therefore
    stepped on from other contacts than the fresh world did: measured on the kick at 1/120 s without
    balance, the first step after the restore differed by 16 mm (4 substeps: 0.8 mm), and a search's
    results depended on which of its rollouts a worker had run before. Lifting every body far above
    the ground and detecting collisions releases every manifold (their pairs leave the broadphase);
    the restore then puts the bodies back. Every restore is then exactly the saved world
    (``tests/sim/test_snapshot.py``)."""
    c = sim.world.client
    for i in range(p.getNumBodies(physicsClientId=c)):
        body = p.getBodyUniqueId(i, physicsClientId=c)
        if body != sim.world.ground:
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=c)
            p.resetBasePositionAndOrientation(body, [pos[0], pos[1], pos[2] + _LIFT], orn, physicsClientId=c)
    p.performCollisionDetection(physicsClientId=c)


def forget(sim, snap: Snapshot) -> None:
    """Free the engine memory a ``memory`` snapshot holds (nothing for portable ones)."""
    technique(snap.technique).forget(sim.world.client, snap.engine)


# -- Python state ---------------------------------------------------------------------------------


def _objects(sim) -> dict[str, Any]:
    out = {"controller": sim.controller}
    if getattr(sim, "balance", None) is not None:
        out["balance"] = sim.balance
    if getattr(sim, "stepper", None) is not None:  # a recovery step's plan and events (its snapshot())
        out["stepper"] = sim.stepper
    if sim.scenario is not None:
        out["scenario"] = sim.scenario
    return out


def _ball_bodies(sim) -> tuple[int, ...]:
    balls = getattr(sim.scenario, "_balls", None) if sim.scenario is not None else None
    return tuple(b.body for b in balls or () if b.body is not None)


def _copy_value(v: Any) -> Any:
    """A copy deep enough that stepping on does not change it: containers and arrays copied."""
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, tuple):
        return tuple(_copy_value(x) for x in v)
    if isinstance(v, list):
        return [_copy_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy_value(x) for k, x in v.items()}
    if isinstance(v, set):
        return set(v)
    return v


def _is_data(v: Any, depth: int = 0) -> bool:
    """Whether ``v`` is plain state (numbers, text, arrays, containers and records of them).

    Anything else (the character, the layout, a plan, the simulation) is structure, fixed when the
    object was built and the same in any simulation built the same way: it is neither saved nor
    restored, which keeps a portable snapshot small and picklable.
    """
    if v is None or isinstance(v, (bool, int, float, str, bytes, np.generic, np.ndarray)):
        return True
    if depth > 6:
        return False
    if isinstance(v, (list, tuple, set, frozenset)):
        return all(_is_data(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return all(_is_data(k, depth + 1) and _is_data(x, depth + 1) for k, x in v.items())
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return all(_is_data(getattr(v, f.name), depth + 1) for f in dataclasses.fields(v))
    return False


def _data_attrs(obj: Any, skip: tuple[str, ...] = ()) -> dict:
    return {k: _copy_value(v) for k, v in vars(obj).items() if k not in skip and _is_data(v)}


def _save_object(obj: Any) -> Any:
    if hasattr(obj, "snapshot") and hasattr(obj, "restore"):
        return ("own", obj.snapshot())
    state = _data_attrs(obj, skip=("_balls",))
    names = tuple(vars(obj))
    balls = None
    if isinstance(getattr(obj, "_balls", None), list):  # a ball scenario: each ball's records, not its plan
        balls = [_data_attrs(b) for b in obj._balls]
    return ("dict", (state, names, balls))


def _restore_object(obj: Any, saved: Any) -> None:
    kind, state = saved
    if kind == "own":
        obj.restore(state)
        return
    values, names, balls = state
    current = vars(obj)
    for k in [k for k in current if k not in names]:
        del current[k]  # attributes made after the snapshot (lazily built caches) go
    for k, v in values.items():
        current[k] = _copy_value(v)
    if balls is not None:
        del obj._balls[len(balls):]  # balls launched by hand after the snapshot
        for b, attrs in zip(obj._balls, balls):
            vars(b).update({k: _copy_value(v) for k, v in attrs.items()})
