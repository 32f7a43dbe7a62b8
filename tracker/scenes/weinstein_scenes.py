"""Weinstein et al. 2008's maximal-coordinate scenes (Figs. 1, 8, 9), on :mod:`tracker.scenes.impulse_world`.

* :func:`resting_block` (Fig. 1): a chain of planks (the sizes of
  :mod:`tracker.scenes.plank_chain`) on a post, drooping ``droop`` rad at the first joint, with a
  block *resting* on the last plank (a separate body, held only by contact). Target: horizontal.
  ``in_solve=True``: the block's contacts are rows of the global post-stabilisation (Fig. 1
  right); ``False``: they are resolved after it, so the block's weight fights PD (Fig. 1 left).
* :func:`obstruction` (Fig. 8 top): the chain curls toward the curled target of Fig. 7 under an
  immovable sphere, which is taken away at ``release`` s.
* :func:`ball_hit` (Fig. 8 bottom): the horizontal chain holds its target; a ball hits it from
  below and the chain recovers.
* :func:`muscle_mace` (Figs. 9 and §VI): a two-link arm on a fixed shoulder driven only by five
  line-segment muscles (one crossing both joints), swinging a mace of two bodies on free point
  joints along an analytic target.

PD everywhere: the doubled closed form (``k_p`` 1/s², critical ``k_v``), the secant target
``ω̃ = (θ_E − θ)/h`` on each actuated hinge's axis row; the prediction ``θ_E`` is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tracker.control import closed_form as cf
from tracker.scenes.impulse_world import Body, Joint, Muscle, MuscleSet, World, rotation

PLANK = (0.5, 0.2, 0.04)
PLANK_MASS = 1.0
POST_HEIGHT = 2.0
BLOCK = (0.2, 0.16, 0.2)
Y = np.array([0.0, 1.0, 0.0])


def plank_chain(q: np.ndarray) -> World:
    """Planks hinged end to end at the post (0, 0, 2 m), joint angles ``q`` ``(n,)`` rad, at rest."""
    lx = PLANK[0]
    bodies, joints = [], []
    p, phi = np.array([0.0, 0.0, POST_HEIGHT]), 0.0
    for k, qk in enumerate(q):
        phi += qk
        r = rotation(Y, phi)
        bodies.append(Body.box(f"plank{k}", PLANK_MASS, PLANK, p + r @ [lx / 2, 0, 0], r))
        joints.append(Joint(k - 1, k, np.array([0.0, 0.0, POST_HEIGHT]) if k == 0 else np.array([lx / 2, 0, 0]),
                            np.array([-lx / 2, 0, 0])))
        p = p + r @ [lx, 0, 0]
    return World(bodies, joints)


@dataclass(frozen=True)
class Run:
    """A run: times ``(N+1,)``; hinge angles ``(N+1, A)`` and predictions ``(N, A)`` of the actuated
    hinges (rad); per-step extras ``(N, ...)`` by name; body positions ``(N+1, B, 3)`` m."""

    t: np.ndarray
    q: np.ndarray
    predicted: np.ndarray
    x: np.ndarray
    extra: dict


def _unwrap(angle: float, near: float) -> float:
    return near + (angle - near + np.pi) % (2 * np.pi) - np.pi


def run_pd(world: World, target: Callable[[float], tuple[np.ndarray, np.ndarray]], *, kp: float, dt: float,
           duration: float, muscles: MuscleSet | None = None,
           events: Callable[[World, float], None] | None = None,
           record: Callable[[World], dict] | None = None) -> Run:
    """Servo every actuated hinge to ``target(t) -> (θ̄, θ̄')`` with analytic PD in the impulse solve."""
    act = [k for k, jt in enumerate(world.joints) if jt.kind == "hinge" and jt.actuated]
    kv = float(cf.critical_kv(kp))
    a, b, _, _ = cf.transition(2 * kp, 2 * kv, dt)
    steps = int(round(duration / dt))
    angles = lambda th0: np.array([_unwrap(world.hinge_angle(world.joints[k]), th0[i]) for i, k in enumerate(act)])
    qs, preds, xs, extra = [], [], [], {}
    th0, _ = target(0.0)
    qs.append(angles(th0))
    xs.append(np.array([bd.x for bd in world.bodies]))
    for n in range(steps):
        t = n * dt
        if events is not None:
            events(world, t)
        tb, tv = target(t)
        tb1, _ = target(t + dt)
        q = angles(tb)
        v = world.velocity()
        rate = np.array([world.joint_rows(world.joints[k], dt)[2] @ v for k in act])
        e_h = a * (q - tb) + b * (rate - tv)
        q_e = tb1 + e_h
        world.step(dt, {k: float((q_e[i] - q[i]) / dt) for i, k in enumerate(act)}, muscles=muscles)
        qs.append(angles(tb1))
        preds.append(q_e)
        xs.append(np.array([bd.x for bd in world.bodies]))
        rec = dict(world.last)
        if record is not None:
            rec.update(record(world))
        for key, val in rec.items():
            extra.setdefault(key, []).append(val)
    return Run(np.arange(steps + 1) * dt, np.array(qs), np.array(preds), np.array(xs),
               {k: v for k, v in extra.items()})


def _joint_gap(world: World) -> float:
    """Largest distance between a joint's two anchors, m (the position drift)."""
    gap = 0.0
    for jt in world.joints:
        xp, rp = world._frame(jt.parent)
        xc, rc = world._frame(jt.child)
        gap = max(gap, float(np.linalg.norm(xp + rp @ jt.anchor_p - xc - rc @ jt.anchor_c)))
    return gap


def resting_block(in_solve: bool, *, n: int = 5, kp: float = 100.0, dt: float = 1 / 60, duration: float = 4.0,
                  droop: float = 0.25, block_mass: float = 3.0, on: int = -2) -> dict:
    """Fig. 1: the chain lifts a block resting on plank ``on`` from ``droop`` rad below, to horizontal.

    Returns:
        ``run``; ``final`` / ``held`` (last 40 %) max joint error, rad; ``prediction_miss`` max
        ``|θ − θ_E|``, rad; ``slide`` max displacement of the block in the last plank's frame, m;
        ``gap`` max joint-anchor drift, m; ``penetration`` m; ``mu`` the friction coefficient the
        sticking contact needed (max over steps of the net ``|λ_t|/λ_n``); ``min_normal`` the
        smallest net normal impulse of a step, N·s; ``block_lift`` the block's rise, m.
    """
    q0 = np.zeros(n)
    q0[0] = droop
    world = plank_chain(q0)
    on = on % n
    tip = world.bodies[on]
    offset = np.array([0.0, 0.0, PLANK[2] / 2 + BLOCK[2] / 2])
    world.bodies.append(Body.box("block", block_mass, BLOCK, tip.point(offset), tip.R.copy()))
    blk = len(world.bodies) - 1
    world.pairs = [(k, blk, in_solve, True) for k in range(n)]

    def record(w: World) -> dict:
        last = w.bodies[on]
        return {"block_local": last.R.T @ (w.bodies[blk].x - last.x), "gap": _joint_gap(w)}

    target = np.zeros(n)
    run = run_pd(world, lambda t: (target, np.zeros(n)), kp=kp, dt=dt, duration=duration, record=record)
    err = np.abs(run.q - target)
    hold = int(round(0.6 * len(run.t)))
    local = np.array(run.extra["block_local"])
    mu, min_normal = 0.0, np.inf
    for imp, act, nrm in zip(run.extra.get("contact_impulse", []), run.extra.get("contact_active", []),
                             run.extra.get("normals", [])):
        firsts = [f for f in sorted(set(nrm.tolist())) if act[f]]
        if firsts:  # the net contact impulse (its split among the corners is the minimal-norm one)
            normal = sum(imp[f] for f in firsts)
            tangent = np.hypot(sum(imp[f + 1] for f in firsts), sum(imp[f + 2] for f in firsts))
            mu = max(mu, float(tangent / normal)) if normal > 1e-12 else mu
            min_normal = min(min_normal, float(normal))
    return {"run": run, "final": float(err[-1].max()), "held": float(err[hold:].max()),
            "prediction_miss": float(np.max(np.abs(run.q[1:] - run.predicted))),
            "slide": float(np.max(np.linalg.norm(local - offset, axis=1))),
            "gap": float(np.max(run.extra["gap"])), "penetration": float(np.max(run.extra["penetration"])),
            "mu": mu, "min_normal": min_normal, "on": on, "block_lift": float(run.x[-1, -1, 2] - run.x[0, -1, 2])}


def curled(n: int, curl: float = -0.6) -> np.ndarray:
    """Fig. 7's curled target: the first plank horizontal, each next turned up by ``-curl`` rad."""
    t = np.full(n, curl)
    t[0] = 0.0
    return t


#: The immovable obstacle of Fig. 8 top: a fixed sphere (centre, m; radius, m). A sphere, since
#: contacts between boxes are found at corners only, and a plank's face would pass a box's edge.
OBSTACLE_CENTRE, OBSTACLE_RADIUS = (1.15, 0.0, 2.55), 0.15


def obstruction(*, n: int = 5, kp: float = 100.0, dt: float = 1 / 60, duration: float = 5.0,
                release: float = 2.5) -> dict:
    """Fig. 8 top: the horizontal chain curls toward :func:`curled` under a fixed sphere, removed at ``release``.

    Returns:
        ``run``; ``blocked_error`` joint error (max over joints) just before the release, rad;
        ``free_error`` the curled chain's error at the same time without it; ``final`` error
        at the end; ``penetration`` max, m; ``touching`` fraction of steps in contact before release.
    """
    target = curled(n)
    out = {}
    for name, with_obstacle in (("free", False), ("blocked", True)):
        world = plank_chain(np.zeros(n))
        if with_obstacle:
            world.bodies.append(Body.sphere("obstacle", 0.0, OBSTACLE_RADIUS, OBSTACLE_CENTRE))
            world.pairs = [(k, len(world.bodies) - 1, False, False) for k in range(n)]

        def events(w: World, t: float) -> None:
            if with_obstacle and t >= release - 1e-9:
                w.bodies[-1].enabled = False

        out[name] = run_pd(world, lambda t: (target, np.zeros(n)), kp=kp, dt=dt, duration=duration, events=events)
    run = out["blocked"]
    k = int(round(release / dt))
    err = np.abs(run.q - target).max(axis=1)
    free = np.abs(out["free"].q - target).max(axis=1)
    fc = np.array(run.extra["foreign_contacts"][:k])
    return {"run": run, "free_run": out["free"], "target": target, "release": release,
            "obstacle": (OBSTACLE_CENTRE, OBSTACLE_RADIUS), "blocked_error": float(err[k]), "free_error": float(free[k]),
            "final": float(err[-1]), "penetration": float(np.max(run.extra["penetration"][:k])),
            "touching": float(np.mean(fc > 0))}


def ball_hit(*, n: int = 5, kp: float = 100.0, dt: float = 1 / 60, duration: float = 4.0, ball_mass: float = 2.0,
             speed: float = 8.0, restitution: float = 0.5) -> dict:
    """Fig. 8 bottom: a ball from below hits the held horizontal chain near its tip.

    Returns:
        ``run``; ``peak`` max joint error, rad; ``tip_peak`` largest tip displacement, m;
        ``recovery`` s from the hit until every joint stays within 1e-3 rad; ``final`` error, rad.
    """
    world = plank_chain(np.zeros(n))
    r = 0.1
    x_hit = PLANK[0] * (n - 0.5)
    fly = 0.4  # s of flight before the hit
    z0 = POST_HEIGHT - PLANK[2] / 2 - r - (speed * fly - 0.5 * 9.81 * fly * fly)
    ball = Body.sphere("ball", ball_mass, r, [x_hit, 0.0, z0])
    ball.v = np.array([0.0, 0.0, speed])
    world.bodies.append(ball)
    world.restitution = restitution
    b = len(world.bodies) - 1
    world.pairs = [(k, b, False, False) for k in range(n)]
    target = np.zeros(n)
    run = run_pd(world, lambda t: (target, np.zeros(n)), kp=kp, dt=dt, duration=duration)
    err = np.abs(run.q - target).max(axis=1)
    hit = int(np.argmax(np.array(run.extra["foreign_contacts"]) > 0))
    bad = np.flatnonzero(err > 1e-3)
    settle = (bad[-1] + 1) if bad.size else 0
    tip = run.x[:, n - 1, :] - run.x[0, n - 1, :]
    return {"run": run, "hit_time": float(run.t[hit]), "peak": float(err.max()),
            "tip_peak": float(np.max(np.linalg.norm(tip, axis=1))),
            "recovery": float(run.t[settle] - run.t[hit]) if settle < len(err) else float("inf"),
            "final": float(err[-1]), "ball_speed": speed}


SHOULDER = np.array([0.0, 0.0, 1.5])


def arm_with_mace(scale: float = 1.0) -> tuple[World, MuscleSet]:
    """A two-link arm (hinges, no torque) with a two-body mace on point joints, and its five muscles
    (maximum forces × ``scale``)."""
    upper = Body.box("upper_arm", 2.0, (0.3, 0.06, 0.06), SHOULDER + [0.15, 0, 0])
    fore = Body.box("forearm", 1.5, (0.3, 0.05, 0.05), SHOULDER + [0.45, 0, 0])
    handle = Body.box("handle", 0.3, (0.2, 0.03, 0.03), SHOULDER + [0.7, 0, 0])
    head = Body.sphere("head", 1.5, 0.06, SHOULDER + [0.86, 0, 0])
    joints = [Joint(-1, 0, SHOULDER.copy(), np.array([-0.15, 0, 0])),
              Joint(0, 1, np.array([0.15, 0, 0]), np.array([-0.15, 0, 0])),
              Joint(1, 2, np.array([0.15, 0, 0]), np.array([-0.1, 0, 0]), kind="point", actuated=False),
              Joint(2, 3, np.array([0.1, 0, 0]), np.array([-0.06, 0, 0]), kind="point", actuated=False)]
    world = World([upper, fore, handle, head], joints)
    m = [Muscle("deltoid", -1, SHOULDER + [0, 0, 0.12], 0, np.array([-0.03, 0, 0.03]), 2500.0),
         Muscle("latissimus", -1, SHOULDER + [0, 0, -0.12], 0, np.array([-0.03, 0, -0.03]), 2500.0),
         Muscle("biceps", 0, np.array([-0.05, 0, 0.04]), 1, np.array([-0.10, 0, 0.035]), 1500.0),
         Muscle("triceps", 0, np.array([-0.05, 0, -0.03]), 1, np.array([-0.18, 0, -0.02]), 1500.0),
         Muscle("biarticular", -1, SHOULDER + [0, 0, 0.1], 1, np.array([-0.10, 0, 0.035]), 1500.0)]
    return world, MuscleSet([Muscle(x.name, x.a, x.origin, x.b, x.insertion, x.f_max * scale) for x in m])


def mace_target(t: float) -> tuple[np.ndarray, np.ndarray]:
    """The analytic arm motion: shoulder ``0.5 sin(πt)``, elbow ``−0.7 − 0.4 sin(πt)`` rad."""
    s, c = np.sin(np.pi * t), np.cos(np.pi * t)
    return np.array([0.5 * s, -0.7 - 0.4 * s]), np.array([0.5 * np.pi * c, -0.4 * np.pi * c])


def muscle_mace(*, scale: float = 1.0, kp: float = 100.0, dt: float = 1 / 60, duration: float = 4.0) -> dict:
    """Fig. 9 with §VI's muscles: the arm swings the mace along :func:`mace_target`.

    Returns:
        ``run``; ``activation`` ``(N, 5)``; ``act_min``/``act_max``; ``prediction_miss`` max
        ``|θ − θ_E|``, rad; ``tracking`` max ``|θ − θ̄|`` after 1 s, rad; ``residual`` max of the
        reduced system (0: the PD prediction was achievable); ``saturated`` fraction of steps
        with a muscle at 1; ``mace_swing`` the mace's largest angle from the forearm, rad.
    """
    world, muscles = arm_with_mace(scale)
    q0, _ = mace_target(0.0)
    r1 = rotation(Y, q0[0])
    r2 = rotation(Y, q0[0] + q0[1])
    world.bodies[0].x, world.bodies[0].R = SHOULDER + r1 @ [0.15, 0, 0], r1
    elbow = SHOULDER + r1 @ [0.3, 0, 0]
    for k, local in enumerate((0.15, 0.4, 0.56), start=1):
        world.bodies[k].x, world.bodies[k].R = elbow + r2 @ [local, 0, 0], r2.copy()

    def record(w: World) -> dict:
        d = w.bodies[3].x - w.bodies[1].x
        f = w.bodies[1].R[:, 0]
        return {"mace": float(np.arctan2(np.cross(f, d)[1], f @ d))}

    run = run_pd(world, mace_target, kp=kp, dt=dt, duration=duration, muscles=muscles, record=record)
    act = np.array(run.extra["activation"])
    ref = np.array([mace_target(t)[0] for t in run.t])
    after = int(round(1.0 / dt))
    return {"run": run, "activation": act, "act_min": float(act.min()), "act_max": float(act.max()),
            "prediction_miss": float(np.max(np.abs(run.q[1:] - run.predicted))),
            "tracking": float(np.max(np.abs(run.q[after:] - ref[after:]))),
            "residual": float(np.max(run.extra["muscle_residual"])),
            "saturated": float(np.mean(np.any(act > 1 - 1e-6, axis=1))),
            "mace_swing": float(np.max(np.abs(run.extra["mace"]))), "target": mace_target, "names": [m.name for m in muscles.muscles]}
