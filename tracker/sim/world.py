"""The PyBullet world: client, ground, gravity, time step and solver settings."""

from __future__ import annotations

from dataclasses import dataclass

from tracker.sim.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402
import pybullet_data  # noqa: E402

from tracker.errors import SimulationError  # noqa: E402

GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class WorldSettings:
    """Physics settings.

    Attributes:
        dt: physics time step, s (one control update per step).
        solver_iterations: constraint-solver iterations per step.
        ground_friction: lateral friction of the ground plane.
        ground_restitution: restitution of the ground plane. PyBullet multiplies the
            restitutions of two bodies in contact; with 1 a ball's restitution is its
            coefficient against the ground, and the character's links (restitution 0) never bounce.
        restitution_threshold: impacts slower than this (m/s) do not bounce; ``None``: ``10·|g|·dt``.
            PyBullet's discrete contacts add up to about ``2|g|dt`` to every bounce, so with a
            lower threshold a ball never comes to rest (or hops from rest at ``dt = 1/30``).
    """

    dt: float = 1.0 / 60.0
    solver_iterations: int = 50
    ground_friction: float = 0.9
    ground_restitution: float = 1.0
    restitution_threshold: float | None = None


class World:
    """One PyBullet client with a ground plane, deterministic in DIRECT mode.

    Args:
        settings: physics settings.
        gui: open a GUI window instead of a headless DIRECT client.
    """

    def __init__(self, settings: WorldSettings | None = None, gui: bool = False, options: str = "") -> None:
        self.settings = settings or WorldSettings()
        if not self.settings.dt > 0:
            raise SimulationError(f"time step must be positive, got {self.settings.dt}")
        with quiet_stdio():
            self.client = p.connect(p.GUI if gui else p.DIRECT, options=options)
        if self.client < 0:
            raise SimulationError("cannot open a PyBullet GUI window (no display?); run headless instead")
        c = self.client
        p.resetSimulation(physicsClientId=c)
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        p.setGravity(*GRAVITY, physicsClientId=c)
        p.setPhysicsEngineParameter(
            fixedTimeStep=self.settings.dt,
            numSolverIterations=self.settings.solver_iterations,
            numSubSteps=0,
            deterministicOverlappingPairs=1,
            restitutionVelocityThreshold=(10.0 * abs(GRAVITY[2]) * self.settings.dt
                                          if self.settings.restitution_threshold is None
                                          else self.settings.restitution_threshold),
            physicsClientId=c,
        )
        self.ground = p.loadURDF("plane_implicit.urdf", useFixedBase=True, physicsClientId=c)
        p.changeDynamics(self.ground, -1, lateralFriction=self.settings.ground_friction,
                         restitution=self.settings.ground_restitution, physicsClientId=c)

    @property
    def dt(self) -> float:
        return self.settings.dt

    def step(self) -> None:
        p.stepSimulation(physicsClientId=self.client)

    def settle_contacts(self, character, steps: int = 4, dt: float = 1.0 / 480.0) -> None:
        """Fill the contact manifolds of ``character`` at its current state, which is kept.

        PyBullet adds about one point per box-ground pair per step, so a sole set down flat is
        held by one corner in the first step and pivots on it (at 1/30 s that throws a standing
        character over). A few short steps with the base welded in place add the other corners
        (they survive the state being restored); the time step is set back afterwards.
        """
        q, v = character.get_state()
        weld = character.hold_base()
        p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=self.client)
        try:
            for _ in range(steps):
                p.stepSimulation(physicsClientId=self.client)
        finally:
            p.setPhysicsEngineParameter(fixedTimeStep=self.settings.dt, physicsClientId=self.client)
            character.release_base(weld)
        character.reset_state(q, v)
        self.detect_contacts()

    def detect_contacts(self) -> None:
        """Refresh the engine's contact points without stepping (e.g. right after a reset)."""
        p.performCollisionDetection(physicsClientId=self.client)

    def close(self) -> None:
        if self.client is not None and p.isConnected(self.client):
            p.disconnect(self.client)
        self.client = None

    def __enter__(self) -> "World":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
