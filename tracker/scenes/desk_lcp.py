"""The desk scene simulated by the paper's own kind of engine: one MLCP per step, contacts included.

The virtual-trajectory paper's step 2 *is* its simulation step (eqs. 24–25: the PD with offset
torque is a row of the engine's LCP). To run it as the paper does, the desk's dynamics here are
that LCP, not PyBullet's solver: each step the arm's three hinges and the boxes' plane motion
``(x, y, θ)`` advance by the velocities the MLCP gives (symplectic Euler, ``h = dt``). PyBullet is
used only as the geometry kernel: the bodies are put where this simulation has them and
:class:`~tracker.scenes.desk_contacts.DeskContacts` reads the contact rows from
``getClosestPoints``. So the controller's model of the world and the world are the same LCP, as
in the paper; what the planar model leaves out (the boxes tipping, the contact's height) is said
in :mod:`tracker.scenes.desk_contacts`.

* ``vt`` with ``f0 = "lcp"``: the step is the controller's step 2 (its ``v_next``);
* every other controller (``vt`` ``id``, ``spd``, ``pd``): its torque is an applied force and the
  step is :func:`~tracker.control.vt_lcp.contact_step`.
"""

from __future__ import annotations

import numpy as np

from tracker.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402

from tracker.scenes.desk import (DURATION, DeskRun, DeskSettings, Desk, SMALL_BOX, LARGE_BOX,  # noqa: E402
                                 _tip_xy, reference)


def _place(desk: Desk, boxes: np.ndarray, box_v: np.ndarray, z: list[float]) -> None:
    """Put the boxes at ``(x, y, θ)`` rows of ``boxes`` with velocities ``box_v``."""
    cid = desk.client_id
    for k, b in enumerate((desk.small, desk.large)):
        x, y, th = boxes[k]
        p.resetBasePositionAndOrientation(b, [x, y, z[k]], p.getQuaternionFromEuler([0, 0, th]),
                                          physicsClientId=cid)
        p.resetBaseVelocity(b, [box_v[k, 0], box_v[k, 1], 0.0], [0.0, 0.0, box_v[k, 2]], physicsClientId=cid)


def run_desk_lcp(controller: str, k: float, *, f0: str = "lcp", step1: str = "all",
                 settings: DeskSettings | None = None, kd_ratio: float = 1.0,
                 duration: float = DURATION, solves: list | None = None) -> DeskRun:
    """Track the sweep in the LCP-simulated desk (boxes on) with ``controller`` at stiffness ``k`` N·m/rad.

    Args:
        f0: ``vt``'s feed-forward (``lcp`` or ``id``); ignored by ``spd`` and ``pd``.
        step1: ``vt`` ``lcp``: the contacts step 1 sees, ``"all"`` or ``"own"``.
        settings: ``dt``, ``large_mass`` (the rest as :class:`DeskSettings`; boxes always on).
        kd_ratio: ``kd = kd_ratio · k · dt``.
        duration: seconds of sweep.
        solves: if given, every step's MLCP solutions with contact rows are appended to it.

    Returns:
        a :class:`DeskRun`; ``hand_force`` and ``box_force`` are the normal forces of the step's
        solve (arm on the boxes, box on box), ``penetration`` the deepest arm–box overlap, and
        ``lcp_error`` the complementarity error of the step's solves.
    """
    from tracker.control.base import Gains, State, Target
    from tracker.control.registry import create
    from tracker.control.vt_lcp import BETWEEN, CHARACTER, contact_step
    from tracker.scenes.desk_contacts import DeskContacts

    s = settings or DeskSettings()
    dt = s.dt
    q_ref, v_ref = reference(dt, duration)
    n = len(q_ref) - 1
    with Desk(DeskSettings(dt=dt, boxes=True, large_mass=s.large_mass)) as desk:
        arm, cid = desk.arm, desk.client_id
        z = [p.getBasePositionAndOrientation(b, physicsClientId=cid)[0][2] for b in (desk.small, desk.large)]
        boxes = np.array([[SMALL_BOX["x"], p.getBasePositionAndOrientation(desk.small, physicsClientId=cid)[0][1],
                           0.0], [LARGE_BOX["x"], p.getBasePositionAndOrientation(desk.large, physicsClientId=cid)
                                  [0][1], 0.0]])
        box_v = np.zeros((2, 3))
        q, v = q_ref[0].copy(), v_ref[0].copy()
        engine = DeskContacts(desk)
        opts: dict = {"passive": None}
        if controller == "vt":
            opts.update(f0=f0, engine=engine, step1=step1) if f0 == "lcp" else opts.update(f0=f0)
        ctrl = create(controller, layout=arm.layout, dynamics=arm, **opts)
        gains = Gains.critical_ratio(k, dt, nv=3, ratio=kd_ratio)
        keys = ("q", "hand_x", "small_x", "large_x", "hand_force", "box_force", "penetration", "tau", "f0",
                "lcp_error", "lcp_rows", "model_error")
        rows: dict[str, list] = {key: [] for key in keys}
        warm = None
        for i in range(n):
            arm.reset_state(q, v)
            _place(desk, boxes, box_v, z)
            tau = np.asarray(ctrl.torques(State(q.copy(), v.copy()), Target(q_ref[i + 1], v_ref[i + 1]), gains, dt))
            res = getattr(ctrl, "last_lcp", None)
            if controller == "vt" and f0 == "lcp":
                world = engine.last
                v_next, sol, err = res.v_next, res.step2, max(res.step1.error, res.step2.error)
                x = sol.x[3:]
            else:
                world = engine.contact_problem(dt)
                v_next, sol = contact_step(world, tau, dt, warm)
                warm, err, x = sol.x, sol.error, sol.x
            if solves is not None and np.isfinite(world.gap).any():
                solves.extend([res.step1, res.step2] if controller == "vt" and f0 == "lcp" else [sol])
            normal = world.normal_of < 0
            hand = normal & (world.kind == CHARACTER) & np.isfinite(world.gap)
            between = normal & (world.kind == BETWEEN) & np.isfinite(world.gap)
            v = v_next[:3]
            q = q + v * dt
            box_v = v_next[3:].reshape(2, 3)
            boxes = boxes + box_v * dt
            rows["q"].append(q.copy())
            rows["hand_x"].append(_tip_xy(q)[0])
            rows["small_x"].append(boxes[0, 0])
            rows["large_x"].append(boxes[1, 0])
            rows["hand_force"].append(float(x[hand].sum()))
            rows["box_force"].append(float(x[between].sum()))
            rows["penetration"].append(float(max([0.0, *(-world.gap[hand])])))
            rows["tau"].append(tau)
            rows["f0"].append(np.array(getattr(ctrl, "last_f0", np.zeros(3))))
            rows["lcp_error"].append(err)
            rows["lcp_rows"].append(int(np.isfinite(world.gap).sum()))
            rows["model_error"].append(0.0)  # the world is the model
    arr = {key: np.array(val) for key, val in rows.items()}
    return DeskRun(t=np.arange(1, n + 1) * dt, q_ref=q_ref[1:],
                   hand_ref_x=np.array([_tip_xy(x)[0] for x in q_ref[1:]]), **arr)
