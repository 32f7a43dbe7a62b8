"""Box pushing on a desk (virtual-trajectory paper, Fig. 1): a planar arm, a small and a large box.

The scene (choices the paper leaves open, stated here once):

* a desk top, static, 1.6 m x 1.0 m, top surface at ``DESK_TOP`` = 0.75 m;
* a fixed-base arm: upper arm 0.60 m (2.5 kg) and forearm 0.60 m (1.5 kg),
  boxes 6 cm x 6 cm across from hinge to hinge, and a fist (0.5 kg, a
  12 x 10 x 6 cm box centred on the wrist hinge, its front face 6 cm ahead:
  the hand's tip); all three hinges turn about the vertical, so the arm sweeps
  a horizontal plane 5 cm above the desk and gravity does no work on it. The
  shoulder (``SHOULDER``) sits 0.45 m to the side of the hand's line, so the
  arm pushes bent, as a person reaching across a desk does (with the shoulder
  on the line the straight arm is a column under load and buckles sideways at
  K = 110); the boxes leave 2 cm of air under them, so only the boxes on the
  desk touch the arm;
* a small box (0.12 m cube, 1 kg) in the hand's path and a large box
  (0.30 x 0.40 x 0.30 m, ``LARGE_BOX["mass"]``) behind it; friction ``FRICTION`` on the boxes
  and the arm, ``DESK_FRICTION`` on the desk (PyBullet multiplies a pair's coefficients). The
  paper gives no masses; ``tracker reproduce vt`` ("The large box's mass") measures the window
  of large-box masses for which Fig. 1(b) and (c) both hold, and where this one lies in it;
* the reference: the hand moves along +x from ``HAND_START`` to ``HAND_END``
  at constant speed (min-jerk start and stop) in ``DURATION`` s, its
  orientation fixed, joint angles from the arm's closed-form inverse
  kinematics; sampled at the physics step ``dt`` and made
  integrator-consistent (``v̄_n = (q̄_n − q̄_{n−1}) / dt``, so that
  ``q̄_{n+1} = q̄_n + v̄_{n+1} dt`` as PyBullet's symplectic Euler integrates).
  The path goes through both boxes' starting places.

:class:`DeskArm` is the arm's :class:`~tracker.control.base.Dynamics` (PyBullet's
``calculateMassMatrix`` / ``calculateInverseDynamics`` of this fixed-base,
revolute-only body) and also offers ``client_id``, ``apply_torques`` and
``get_state`` so that ``vt``'s ``peek`` can step it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracker.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402

from tracker.character.layout import Layout  # noqa: E402

DESK_TOP = 0.75
ARM_Z = DESK_TOP + 0.05  # height of the arm's plane (link centres)
SHOULDER = np.array([-0.1, -0.1])  # shoulder hinge (x, y): at the desk's corner, 0.45 m to the side of the hand's line
LINKS = (("shoulder", 0.60, 2.5), ("elbow", 0.60, 1.5), ("wrist", 0.06, 0.5))  # (hinge, length m, mass kg)
FIST = (0.12, 0.10, 0.06)  # the hand: a box centred on the wrist hinge; its tip is LINKS[-1]'s length ahead
LINK_WIDTH = 0.06
FRICTION = 0.6  # of the boxes and the arm; the desk's is 1 (PyBullet multiplies a pair's coefficients)
DESK_FRICTION = 1.0
SMALL_BOX = dict(size=(0.12, 0.12, 0.12), mass=1.0, x=0.55)   # centre x; y on the hand's line
LARGE_BOX = dict(size=(0.30, 0.40, 0.30), mass=80.0, x=0.88)
HAND_Y = 0.35     # the hand's line y = HAND_Y
HAND_START = 0.30  # hand tip x at t = 0, m
HAND_END = 1.0     # hand tip x at the end, m
DURATION = 2.5     # s


@dataclass(frozen=True)
class DeskSettings:
    """What varies between the Fig. 1 runs.

    Attributes:
        dt: physics time step, s.
        boxes: put the two boxes on the desk (False: free space).
        gravity: gravity on (it does no work on the arm, only on the boxes).
        solver_iterations: PyBullet's constraint-solver iterations.
        large_mass: the large box's mass, kg (None: ``LARGE_BOX["mass"]``).
        contact_stiffness: PyBullet's ``contactStiffness`` of the small box (None: hard contacts);
            with it the contact is a spring of that stiffness (N/m) and critical-ish damping.
    """

    dt: float = 1.0 / 120.0
    boxes: bool = True
    gravity: bool = True
    solver_iterations: int = 50
    large_mass: float | None = None
    contact_stiffness: float | None = None


class DeskArm:
    """The three-link arm: layout, dynamics and the engine calls ``peek`` needs.

    Attributes:
        layout: no base, revolute ``shoulder``, ``elbow``, ``wrist``.
        client_id, body_id: PyBullet ids.
    """

    def __init__(self, client_id: int) -> None:
        self.client_id = cid = client_id
        self.layout = Layout.build([(name, "revolute") for name, _, _ in LINKS], has_base=False)
        w = LINK_WIDTH
        shapes, masses, positions, frames, parents = [], [], [], [], []
        prev_len = 0.0
        for k, (_, length, mass) in enumerate(LINKS):
            if k < len(LINKS) - 1:  # upper arm and forearm: a box from the hinge to the next hinge
                shapes.append(p.createCollisionShape(p.GEOM_BOX, halfExtents=[length / 2, w / 2, w / 2],
                                                     collisionFramePosition=[length / 2, 0.0, 0.0],
                                                     physicsClientId=cid))
                frames.append([length / 2, 0.0, 0.0])  # centre of mass in the middle
            else:  # the fist, centred on the wrist hinge
                shapes.append(p.createCollisionShape(p.GEOM_BOX, halfExtents=[x / 2 for x in FIST],
                                                     physicsClientId=cid))
                frames.append([0.0, 0.0, 0.0])
            masses.append(mass)
            positions.append([prev_len, 0.0, 0.0])  # hinge k at the end of link k-1 (the base for k = 0)
            parents.append(k)
            prev_len = length
        n = len(LINKS)
        base = p.createCollisionShape(p.GEOM_SPHERE, radius=0.01, physicsClientId=cid)
        self.body_id = p.createMultiBody(
            baseMass=0.0, baseCollisionShapeIndex=base, basePosition=[SHOULDER[0], SHOULDER[1], ARM_Z],
            linkMasses=masses, linkCollisionShapeIndices=shapes, linkVisualShapeIndices=[-1] * n,
            linkPositions=positions, linkOrientations=[[0, 0, 0, 1]] * n,
            linkInertialFramePositions=frames, linkInertialFrameOrientations=[[0, 0, 0, 1]] * n,
            linkParentIndices=parents, linkJointTypes=[p.JOINT_REVOLUTE] * n, linkJointAxis=[[0, 0, 1]] * n,
            physicsClientId=cid)
        b = self.body_id
        for k in range(-1, n):
            p.changeDynamics(b, k, linearDamping=0.0, angularDamping=0.0, jointDamping=0.0,
                             lateralFriction=FRICTION, physicsClientId=cid)
        # The default velocity motors off: the arm obeys M a + c = tau exactly.
        p.setJointMotorControlArray(b, list(range(n)), p.VELOCITY_CONTROL, forces=[0.0] * n, physicsClientId=cid)
        self._joints = list(range(n))

    # -- Dynamics ---------------------------------------------------------------------------
    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """``M(q)`` ``(3, 3)``, kg m²."""
        return np.array(p.calculateMassMatrix(self.body_id, list(map(float, q)), physicsClientId=self.client_id))

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``c(q, v)`` ``(3,)``, N·m (Coriolis and centrifugal; gravity does no work on vertical hinges)."""
        return np.array(p.calculateInverseDynamics(self.body_id, list(map(float, q)), list(map(float, v)),
                                                   [0.0] * 3, physicsClientId=self.client_id))

    # -- engine -----------------------------------------------------------------------------
    def get_state(self) -> tuple[np.ndarray, np.ndarray]:
        st = p.getJointStates(self.body_id, self._joints, physicsClientId=self.client_id)
        return np.array([s[0] for s in st]), np.array([s[1] for s in st])

    def reset_state(self, q: np.ndarray, v: np.ndarray) -> None:
        for j in self._joints:
            p.resetJointState(self.body_id, j, float(q[j]), float(v[j]), physicsClientId=self.client_id)

    def apply_torques(self, tau: np.ndarray) -> None:
        """Joint torques ``(3,)`` N·m for the next step."""
        p.setJointMotorControlArray(self.body_id, self._joints, p.TORQUE_CONTROL,
                                    forces=list(map(float, tau)), physicsClientId=self.client_id)

    def hand_tip(self) -> np.ndarray:
        """World position ``(3,)`` of the hand's tip (the far end of the last link), m."""
        pos, orn = p.getLinkState(self.body_id, len(LINKS) - 1, computeForwardKinematics=1,
                                  physicsClientId=self.client_id)[4:6]
        rot = np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
        return np.array(pos) + rot @ np.array([LINKS[-1][1], 0.0, 0.0])


def arm_ik(x: np.ndarray, y: np.ndarray, heading: float = 0.0) -> np.ndarray:
    """Joint angles ``(n, 3)`` putting the hand's tip at ``(x, y)`` with the hand pointing along ``heading``.

    Elbow to the right (negative elbow angle), so the arm bends away from the boxes' side.
    """
    (_, l1, _), (_, l2, _), (_, l3, _) = LINKS
    wx = np.asarray(x) - SHOULDER[0] - l3 * np.cos(heading)
    wy = np.asarray(y) - SHOULDER[1] - l3 * np.sin(heading)
    c2 = (wx**2 + wy**2 - l1**2 - l2**2) / (2 * l1 * l2)
    if np.any(np.abs(c2) > 1):
        raise ValueError("desk reference out of the arm's reach")
    q2 = -np.arccos(c2)
    q1 = np.arctan2(wy, wx) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    q3 = heading - q1 - q2
    return np.stack([q1, q2, q3], axis=-1)


def reference(dt: float, duration: float = DURATION) -> tuple[np.ndarray, np.ndarray]:
    """The hand's sweep as joint angles ``(n + 1, 3)`` and integrator-consistent velocities ``(n + 1, 3)``.

    Row ``k`` is the reference at ``t = k·dt``; ``v[0]`` is zero (the arm starts at rest).
    """
    n = int(round(duration / dt))
    s = np.arange(n + 1) / n
    s = 10 * s**3 - 15 * s**4 + 6 * s**5  # min-jerk
    x = HAND_START + (HAND_END - HAND_START) * s
    q = arm_ik(x, np.full_like(x, HAND_Y))
    v = np.zeros_like(q)
    v[1:] = (q[1:] - q[:-1]) / dt
    return q, v


class Desk:
    """The scene in its own PyBullet client: desk, arm and (optionally) the two boxes.

    Args:
        settings: :class:`DeskSettings`.
    """

    def __init__(self, settings: DeskSettings | None = None) -> None:
        self.settings = s = settings or DeskSettings()
        with quiet_stdio():
            self.client_id = cid = p.connect(p.DIRECT)
        p.setGravity(0, 0, -9.81 if s.gravity else 0.0, physicsClientId=cid)
        p.setPhysicsEngineParameter(fixedTimeStep=s.dt, numSolverIterations=s.solver_iterations, numSubSteps=0,
                                    deterministicOverlappingPairs=1, physicsClientId=cid)
        top = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.8, 0.5, 0.02], physicsClientId=cid)
        self.desk = p.createMultiBody(0.0, top, basePosition=[0.6, 0.35, DESK_TOP - 0.02], physicsClientId=cid)
        p.changeDynamics(self.desk, -1, lateralFriction=DESK_FRICTION, physicsClientId=cid)
        self.arm = DeskArm(cid)
        self.small = self.large = None
        if s.boxes:
            self.small = self._box(SMALL_BOX)
            large = LARGE_BOX if s.large_mass is None else {**LARGE_BOX, "mass": s.large_mass}
            self.large = self._box(large)
            if s.contact_stiffness is not None:
                k = float(s.contact_stiffness)
                p.changeDynamics(self.small, -1, contactStiffness=k, contactDamping=2.0 * np.sqrt(k * 1.0),
                                 physicsClientId=cid)

    @property
    def spec(self) -> dict:
        """The scene's geometry and friction (module constants), for adapters that must not import this module."""
        return dict(shoulder=SHOULDER, links=LINKS, fist=FIST, link_width=LINK_WIDTH, friction=FRICTION,
                    desk_friction=DESK_FRICTION, box_sizes=[SMALL_BOX["size"], LARGE_BOX["size"]])

    def _box(self, spec: dict) -> int:
        cid = self.client_id
        half = [x / 2 for x in spec["size"]]
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=cid)
        body = p.createMultiBody(spec["mass"], shape, basePosition=[spec["x"], HAND_Y, DESK_TOP + half[2]],
                                 physicsClientId=cid)
        p.changeDynamics(body, -1, lateralFriction=FRICTION, linearDamping=0.0, angularDamping=0.0,
                         physicsClientId=cid)
        return body

    def step(self) -> None:
        p.stepSimulation(physicsClientId=self.client_id)

    def box_x(self, body: int) -> float:
        return float(p.getBasePositionAndOrientation(body, physicsClientId=self.client_id)[0][0])

    def hand_contact(self, body: int) -> tuple[float, float]:
        """Total normal force (N) between the arm and ``body``, and the deepest penetration (m, >= 0)."""
        pts = p.getContactPoints(self.arm.body_id, body, physicsClientId=self.client_id)
        force = sum(c[9] for c in pts)
        depth = max([-c[8] for c in pts] + [0.0])
        return float(force), float(depth)

    def box_contact(self) -> float:
        """Normal force (N) between the small and the large box."""
        pts = p.getContactPoints(self.small, self.large, physicsClientId=self.client_id)
        return float(sum(c[9] for c in pts))

    def close(self) -> None:
        if self.client_id is not None and p.isConnected(self.client_id):
            p.disconnect(self.client_id)
        self.client_id = None

    def __enter__(self) -> "Desk":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class DeskRun:
    """One Fig. 1 run, sampled every step ``(n,)``.

    Attributes:
        t: time after the step, s.
        q, q_ref: arm joint angles and their reference ``(n, 3)``, rad.
        hand_x, hand_ref_x: the hand tip's x and its reference, m.
        small_x, large_x: box centres' x (nan without boxes), m.
        hand_force: normal force between the arm and the small box, N.
        box_force: normal force between the two boxes, N.
        penetration: deepest arm-into-small-box penetration, m.
        tau, f0: applied torques and the feed-forward part ``(n, 3)``, N·m.
        lcp_error: ``f0 = lcp`` only: the larger complementarity error of the step's two solves
            ``(n,)`` (m/s, rad/s; :func:`~tracker.control.lcp.complementarity_error`), else empty.
        lcp_rows: ``f0 = lcp``: contact rows in the step-2 solve ``(n,)``.
        model_error: ``f0 = lcp`` in PyBullet's world: the largest ``|v̂ − v|`` of the arm's hinges
            after the step, ``v̂`` as step 2's LCP predicted it (rad/s) ``(n,)``, else empty.
    """

    t: np.ndarray
    q: np.ndarray
    q_ref: np.ndarray
    hand_x: np.ndarray
    hand_ref_x: np.ndarray
    small_x: np.ndarray
    large_x: np.ndarray
    hand_force: np.ndarray
    box_force: np.ndarray
    penetration: np.ndarray
    tau: np.ndarray
    f0: np.ndarray
    lcp_error: np.ndarray
    lcp_rows: np.ndarray
    model_error: np.ndarray


def run_desk(controller: str, k: float, *, f0: str = "id", settings: DeskSettings | None = None,
             kd_ratio: float = 1.0, duration: float = DURATION, hold: float = 0.0,
             options: dict | None = None) -> DeskRun:
    """Track the sweep with ``controller`` (``vt``, ``spd`` or ``pd``) at stiffness ``k`` N·m/rad on every hinge.

    Args:
        f0: ``vt``'s feed-forward mode (``id``, ``peek`` or ``none``).
        kd_ratio: ``kd = kd_ratio · k · dt``.
        duration: seconds of sweep.
        hold: seconds the run goes on after the sweep, the reference holding its end pose.
        options: more keyword options for the controller.
    """
    from tracker.control.base import Gains, State, Target
    from tracker.control.registry import create

    s = settings or DeskSettings()
    dt = s.dt
    q_ref, v_ref = reference(dt, duration)
    extra = int(round(hold / dt))
    q_ref = np.vstack([q_ref, np.repeat(q_ref[-1:], extra, axis=0)])
    v_ref = np.vstack([v_ref, np.zeros((extra, 3))])
    n = len(q_ref) - 1
    with Desk(s) as desk:
        arm = desk.arm
        arm.reset_state(q_ref[0], v_ref[0])
        opts = {"passive": None}
        if controller == "vt" and f0 == "lcp":
            from tracker.scenes.desk_contacts import DeskContacts

            opts.update(f0=f0, engine=DeskContacts(desk))
        elif controller == "vt":
            from tracker.sim.peek import EnginePeek

            opts.update(f0=f0, engine=EnginePeek(arm))
        opts.update(options or {})
        ctrl = create(controller, layout=arm.layout, dynamics=arm, **opts)
        gains = Gains.critical_ratio(k, dt, nv=3, ratio=kd_ratio)
        kin_tip = lambda q: _tip_xy(q)[0]
        rows = {key: [] for key in ("q", "hand_x", "small_x", "large_x", "hand_force", "box_force",
                                    "penetration", "tau", "f0", "lcp_error", "lcp_rows", "model_error")}
        for i in range(n):
            q, v = arm.get_state()
            tau = ctrl.torques(State(q, v), Target(q_ref[i + 1], v_ref[i + 1]), gains, dt)
            arm.apply_torques(tau)
            desk.step()
            q1, v1 = arm.get_state()
            rows["q"].append(q1)
            rows["hand_x"].append(kin_tip(q1))
            rows["tau"].append(np.array(tau))
            rows["f0"].append(np.array(getattr(ctrl, "last_f0", np.zeros(3))))
            res = getattr(ctrl, "last_lcp", None)
            if res is not None:
                rows["lcp_error"].append(max(res.step1.error, res.step2.error))
                rows["lcp_rows"].append(res.step2.x.size - 3)
                rows["model_error"].append(float(np.abs(res.v_next[:3] - v1).max()))
            if desk.small is not None:
                force, depth = desk.hand_contact(desk.small)
                rows["small_x"].append(desk.box_x(desk.small))
                rows["large_x"].append(desk.box_x(desk.large))
                rows["hand_force"].append(force)
                rows["penetration"].append(depth)
                rows["box_force"].append(desk.box_contact())
            else:
                for key in ("small_x", "large_x", "hand_force", "penetration", "box_force"):
                    rows[key].append(np.nan)
    arr = {key: np.array(val) for key, val in rows.items()}
    return DeskRun(t=np.arange(1, n + 1) * dt, q_ref=q_ref[1:],
                   hand_ref_x=np.array([_tip_xy(x)[0] for x in q_ref[1:]]), **arr)


def _tip_xy(q: np.ndarray) -> np.ndarray:
    """The hand tip's ``(x, y)`` for joint angles ``q`` ``(3,)`` (planar forward kinematics)."""
    a = np.cumsum(q)
    lengths = np.array([length for _, length, _ in LINKS])
    return SHOULDER + np.array([np.sum(lengths * np.cos(a)), np.sum(lengths * np.sin(a))])
