"""The PyBullet world: client, ground, gravity, time step and solver settings."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tracker.sim.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402
import pybullet_data  # noqa: E402

from tracker.errors import SimulationError  # noqa: E402

GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class WorldSettings:
    """Physics settings.

    Attributes:
        dt: control time step, s (one control update per ``dt``).
        substeps: physics steps per control step (PyBullet steps ``dt / substeps`` at a time). A
            foot at 10 m/s moves a ball's diameter in 1/60 s, so how a kick resolves depends on
            the physics step; substeps make contacts converge while the servo runs at ``dt``.
        solver_iterations: constraint-solver iterations per step.
        ground_friction: lateral friction of the ground plane.
        ground_restitution: restitution of the ground plane. PyBullet multiplies the
            restitutions of two bodies in contact; with 1 a ball's restitution is its
            coefficient against the ground, and the character's links (restitution 0) never bounce.
        restitution_threshold: impacts slower than this (m/s) do not bounce; ``None``: ``10·|g|·h``
            (``h`` the physics step). PyBullet's discrete contacts add up to about ``2|g|h`` to every bounce, so with a
            lower threshold a ball never comes to rest (or hops from rest at ``dt = 1/30``).
    """

    dt: float = 1.0 / 60.0
    substeps: int = 1
    solver_iterations: int = 50
    ground_friction: float = 0.9
    ground_restitution: float = 1.0
    restitution_threshold: float | None = None


def _check_substeps(n) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise SimulationError(f"substeps must be a whole number >= 1, got {n!r}")


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
        _check_substeps(self.settings.substeps)
        with quiet_stdio():
            self.client = p.connect(p.GUI if gui else p.DIRECT, options=options)
        if self.client < 0:
            raise SimulationError("cannot open a PyBullet GUI window (no display?); run headless instead")
        c = self.client
        p.resetSimulation(physicsClientId=c)
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        p.setGravity(*GRAVITY, physicsClientId=c)
        self._configure()
        self.ground = p.loadURDF("plane_implicit.urdf", useFixedBase=True, physicsClientId=c)
        p.changeDynamics(self.ground, -1, lateralFriction=self.settings.ground_friction,
                         restitution=self.settings.ground_restitution, physicsClientId=c)

    def _configure(self) -> None:
        st, h = self.settings, self.physics_dt
        p.setPhysicsEngineParameter(
            fixedTimeStep=h,
            numSolverIterations=st.solver_iterations,
            numSubSteps=0,
            deterministicOverlappingPairs=1,
            restitutionVelocityThreshold=(10.0 * abs(GRAVITY[2]) * h if st.restitution_threshold is None
                                          else st.restitution_threshold),
            physicsClientId=self.client,
        )

    @property
    def dt(self) -> float:
        """The control step, s."""
        return self.settings.dt

    def set_gravity(self, gravity: tuple[float, float, float]) -> None:
        """Change the world's gravity, m/s² (the dynamics routines read it back each call)."""
        p.setGravity(*map(float, gravity), physicsClientId=self.client)

    @property
    def substeps(self) -> int:
        return self.settings.substeps

    @property
    def physics_dt(self) -> float:
        """PyBullet's step ``dt / substeps``, s."""
        return self.settings.dt / self.settings.substeps

    def set_substeps(self, substeps: int) -> None:
        """Change the number of physics steps per control step (e.g. on a window opened elsewhere)."""
        _check_substeps(substeps)
        if substeps != self.settings.substeps:
            self.settings = replace(self.settings, substeps=substeps)
            self._configure()

    def step(self) -> None:
        """One physics step of ``physics_dt``."""
        p.stepSimulation(physicsClientId=self.client)

    def save(self) -> int:
        """Save the whole physics state in memory; returns its id (:meth:`restore`, :meth:`forget`)."""
        return p.saveState(physicsClientId=self.client)

    def restore(self, state_id: int) -> None:
        """Go back to a saved state (bodies must be the same as when it was saved)."""
        p.restoreState(state_id, physicsClientId=self.client)

    def forget(self, state_id: int) -> None:
        """Free a saved state."""
        p.removeState(state_id, physicsClientId=self.client)

    def settle_contacts(self, character, max_steps: int = 48, patience: int = 6, dt: float = 1.0 / 480.0) -> int:
        """Fill the contact manifolds of ``character`` at its current state, which is kept.

        PyBullet adds about one point per box-ground pair every step or few, so a sole set down
        flat is held by one corner or edge at first and pivots on it (at 1/30 s that throws a
        standing character over; under balance feedback a toe edge is also a support "polygon"
        whose centre lies far from the centre of mass). Short steps with the base welded in place
        add the other corners (they survive the state being restored) until the number of points
        has not grown for ``patience`` steps (at most ``max_steps``); the time step is set back
        afterwards. The authored stance fills in 4 steps, the scenario clips' first frames in up
        to 16. Returns the number of steps taken.
        """
        q, v = character.get_state()
        weld = character.hold_base()
        p.setPhysicsEngineParameter(fixedTimeStep=dt, physicsClientId=self.client)
        body, best, still, taken = character.body_id, -1, 0, 0
        try:
            while taken < max_steps and still < patience:
                p.stepSimulation(physicsClientId=self.client)
                taken += 1
                n = len(p.getContactPoints(bodyA=body, physicsClientId=self.client))
                best, still = (n, 0) if n > best else (best, still + 1)
        finally:
            p.setPhysicsEngineParameter(fixedTimeStep=self.physics_dt, physicsClientId=self.client)
            character.release_base(weld)
        character.reset_state(q, v)
        self.detect_contacts()
        return taken

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
