"""The PyBullet world: client, ground, gravity, time step and solver settings."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tracker.quiet import quiet_stdio  # imports pybullet silently first

import numpy as np  # noqa: E402
import pybullet as p  # noqa: E402
import pybullet_data  # noqa: E402

from tracker.errors import SimulationError  # noqa: E402

GRAVITY = (0.0, 0.0, -9.81)
#: Joint speed, rad/s (and base speed, m/s), at which PyBullet clamps a character (:meth:`World.unclamp`):
#: far above any joint the divergence check lets run (``sim.max_speed`` is at most 10⁴).
ENGINE_SPEED_LIMIT = 1.0e5
#: The force cap of :meth:`World.hold_velocities` on a DOF without a torque limit, N·m.
UNLIMITED_HOLD = 1.0e6


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

    def unclamp(self, character) -> None:
        """Lift PyBullet's joint speed clamp of ``character`` to :data:`ENGINE_SPEED_LIMIT`.

        PyBullet clamps every joint speed (and the base's) at 100 by default, and it clamps the
        velocity the applied forces give *before* the contact solve (``btMultiBody::
        applyDeltaVeeMultiDof``). A stiff servo holding a foot against the ground gives the 1 kg foot,
        taken alone, thousands of rad/s per step, which the contact is there to cancel; clamped first,
        the velocity the contacts then cancel is not the one the torque gave, and the difference is
        left spinning the foot. Measured on the free-root Bandai punch under balance at 1/60 s: the
        ankle's torque of 120 N·m left the foot at the clamp in one step (−55, −22, −103 rad/s), while
        the same step with the clamp lifted leaves it at (1, −6, 7) rad/s, as the contact model
        predicts. Lifted, it removes 12 of the 15 divergences of the free-root grid
        (``tests/sim/test_fall_never_diverges.py``: all ten ankles). Runs in which no velocity ever
        reaches the clamp are unchanged, bit for bit (the authored stance standing 30 s at 1/60 s);
        it did reach it while the stance recovered from pushes, which it now survives larger (the
        jacobian strategy's largest push on the chest went from 25-75 N to 50-100 N).

        The simulation lifts it for SPD with one physics step per control step only
        (:class:`tracker.sim.simulation.Simulation`). With several, the torque stays while the
        engine's contacts change from one physics step to the next, and the clamp is then what bounds
        a foot the ground let go of (measured: the free-root forearm pass with balance, 8 substeps,
        ran to its end clamped and spun its right ankle to 253 rad/s at 2.38 s unclamped); it acts
        before the contact solve as before, but the velocity a step's torque gives is ``substeps``
        times smaller. Explicit PD and PyBullet's own stable PD keep it: their blow-ups are what the
        reproductions measure against it.
        """
        p.changeDynamics(character.body_id, -1, maxJointVelocity=ENGINE_SPEED_LIMIT, physicsClientId=self.client)

    def hold_velocities(self, character, v_target: np.ndarray, force: np.ndarray) -> None:
        """Until :meth:`release_velocities`: PyBullet joint motors that drive every actuated joint of
        ``character`` toward ``v_target`` ``(nv,)`` (our layout; the base entries unused) with at most
        ``force`` ``(nv,)`` N·m per DOF (capped at :data:`UNLIMITED_HOLD`).

        The engine solves them with its contacts, in one solve: the servo's reserve within the step
        (:meth:`tracker.sim.simulation.Simulation._physics`). Joint torques applied for the same step
        (``TORQUE_CONTROL``) add to them. An explicit torque reacts to an impact one step late: a
        falling arm stopped by the ground whips the 0.4 kg hand on its wrist within the step (the
        free-root grid's three divergences left with the clamp lifted: wrists at 97-99 rad/s after
        falls); held at the predicted velocity by what the wrist has left below its torque limit, the
        hand follows the arm. The simulation holds them in impact steps only: held in every step of
        a lying body, they spend every joint's torque reserve on the prediction against the ground,
        and the lying CMU kick's mean joint error went from 0.22 to 0.36 rad (0.16 held at impacts).
        """
        cid, body = self.client, character.body_id
        v = character._vec_to_bullet(v_target) if character._convert else np.asarray(v_target, dtype=float)
        cap = np.minimum(np.asarray(force, dtype=float), UNLIMITED_HOLD)
        joints, slices = character._pb_joint, character._v_slices
        sph = character._sph
        if sph:
            p.setJointMotorControlMultiDofArray(
                body, [joints[k] for k in sph], p.POSITION_CONTROL, targetPositions=[[0.0, 0.0, 0.0, 1.0]] * len(sph),
                targetVelocities=[v[slices[k]].tolist() for k in sph], positionGains=[0.0] * len(sph),
                velocityGains=[1.0] * len(sph), forces=[cap[slices[k]].tolist() for k in sph], physicsClientId=cid)
        rev = character._rev
        if rev:
            p.setJointMotorControlArray(body, [joints[k] for k in rev], p.VELOCITY_CONTROL,
                                        targetVelocities=[float(v[slices[k]][0]) for k in rev],
                                        forces=[float(cap[slices[k]][0]) for k in rev], physicsClientId=cid)

    def release_velocities(self, character) -> None:
        """Switch the motors of :meth:`hold_velocities` off (zero force, as the character is loaded)."""
        cid, body = self.client, character.body_id
        joints = character._pb_joint
        sph, rev = character._sph, character._rev
        if sph:
            p.setJointMotorControlMultiDofArray(
                body, [joints[k] for k in sph], p.POSITION_CONTROL, targetPositions=[[0.0, 0.0, 0.0, 1.0]] * len(sph),
                positionGains=[0.0] * len(sph), velocityGains=[0.0] * len(sph),
                forces=[[0.0, 0.0, 0.0]] * len(sph), physicsClientId=cid)
        if rev:
            p.setJointMotorControlArray(body, [joints[k] for k in rev], p.VELOCITY_CONTROL,
                                        forces=[0.0] * len(rev), physicsClientId=cid)

    def save(self) -> int:
        """Save the whole physics state in memory; returns its id (:meth:`restore`, :meth:`forget`)."""
        return p.saveState(physicsClientId=self.client)

    def restore(self, state_id: int) -> None:
        """Go back to a saved state (bodies must be the same as when it was saved)."""
        p.restoreState(state_id, physicsClientId=self.client)

    def remove_body(self, body: int) -> None:
        """Remove a body (a ball) from the world; nothing if the client is already gone."""
        if p.isConnected(self.client):
            p.removeBody(body, physicsClientId=self.client)

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
