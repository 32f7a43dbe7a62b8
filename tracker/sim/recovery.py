"""Whether to take a recovery step, and which: simulate ahead (issue 33, item 3).

:class:`~tracker.control.stepping.RecoveryStep` knows how to step; this module decides when. Once the
capture point has left the feet's footprint, the simulation is saved (:mod:`tracker.sim.snapshot`,
bit-identical) and simulated ``horizon`` s on, with the disturbance still acting:

1. standing still (no step): if the character stays up, it does not step, and the question is not
   asked again until the horizon has passed (the run then goes on exactly as that rollout did); if it
   falls and no step does better, it is asked again :data:`RETRY` s later;
2. otherwise each candidate step: either foot, toward the pendulum's landing point moved by
   ``-offset``, ``0`` or ``+offset`` m along x and y (18 candidates).

A rollout that falls scores ``100 +`` the time it had left (a later fall is better); one that stands
scores the CoM's horizontal speed at its end. The best rollout is taken (standing still on a tie).
This is sampling-based control, as SAMCON (Liu et al. 2010) is for a clip, run at the moment of
need: the foot placement's reference is SIMBICON's (:mod:`tracker.control.stepping`), and the
samples around it absorb what the pendulum model leaves out (the feet's slip, the push's turn of
the body, the servos' lag). Measured (``docs/games105.md``, "Pushes with a recovery step"): each
decision simulates 19 × ``horizon`` s.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

#: A fall in a rollout scores this plus the time it had left, s.
FALL_SCORE = 100.0
#: s: when every rollout falls and standing still falls last, the question is asked again this much later
#: (a step from a later state may do better).
RETRY = 0.1


def maybe_step(sim, disturb: Callable[[], None] | None = None) -> tuple | None:
    """Before ``sim``'s next step: start a recovery step if one is needed (module docstring).

    Args:
        sim: a :class:`~tracker.sim.simulation.Simulation` with a stepper (``balance.step``).
        disturb: applies this step's disturbance (a push) before each simulated step, or None.

    Returns:
        None when nothing was decided; else ``(score, candidate)``, ``candidate`` None (stand) or
        ``(foot, dx, dy)`` (the step begun).
    """
    st = sim.stepper
    if st is None or st.busy or sim.fell_at is not None:
        return None
    opt = st.options
    if sim.t - st.t_start < opt.settle or sim.t < st.quiet_until:
        return None
    if st.events and st.events[-1].land is not None and sim.t - st.events[-1].land < opt.rest:
        return None
    q, v = sim.character.get_state()
    com, jc = sim.character.com_jacobian(q)
    cdot = jc @ v
    if footprint(st, q).signed_distance(st.capture_point(com, cdot)) <= 0.0:
        return None
    from tracker.sim import snapshot

    snap = snapshot.capture(sim)
    try:
        best = (_rollout(sim, disturb, None, q, com, cdot), None)
        snapshot.restore(sim, snap)
        if best[0] >= FALL_SCORE:  # standing still falls: try the steps
            d = opt.offset
            for foot, dx, dy in itertools.product(st.feet, (-d, 0.0, d), (-d, 0.0, d)):
                score = _rollout(sim, disturb, (foot, dx, dy), q, com, cdot)
                snapshot.restore(sim, snap)
                if score < best[0]:
                    best = (score, (foot, dx, dy))
    finally:
        snapshot.forget(sim, snap)
    if best[1] is None:  # standing still: known safe for the horizon, or nothing does better yet (ask again soon)
        st.quiet_until = sim.t + (opt.horizon if best[0] < FALL_SCORE else RETRY) - 0.5 * sim.opt.dt
    else:
        foot, dx, dy = best[1]
        st.begin(sim.t, q, com, cdot, foot, (dx, dy))
    return best


def footprint(stepper, q: np.ndarray):
    """Both soles' hull on the ground at ``q`` (a :class:`~tracker.sim.support.Support`), from the joint
    angles: the contact polygon shrinks as a heel lifts, and testing the capture point against it was
    measured to step where the ankles would have recovered."""
    from tracker.sim.support import polygon_of

    pts = stepper.sole_corners(q)
    return polygon_of(np.c_[pts, np.zeros(len(pts))])


def balance_of(sim) -> tuple:
    """``(feedback, stepper)`` of ``sim.opt.balance``: the :class:`~tracker.control.balance.BalanceFeedback`
    (None when off) and, with ``balance.step``, its :class:`~tracker.control.stepping.RecoveryStep`."""
    from tracker.errors import SimulationError

    b = sim.opt.balance
    if b is None or not getattr(b, "enabled", False):
        return None, None
    if sim.opt.controller not in ("spd", "pd"):
        raise SimulationError(f"balance feedback needs controller spd or pd, not {sim.opt.controller!r}")
    from tracker.control.balance import BalanceFeedback
    from tracker.sim.support import support_of

    sim._support_of = support_of
    feedback = BalanceFeedback(sim.character, b)
    if getattr(b, "step", None) is None:
        return feedback, None
    from tracker.control.stepping import RecoveryStep

    return feedback, RecoveryStep(sim.character, b.step, feedback.chains, feedback)


def _rollout(sim, disturb, candidate, q, com, cdot) -> float:
    """Simulate the stepper's horizon from now, with ``candidate`` begun (None: no step); the score."""
    st = sim.stepper
    if candidate is not None:
        foot, dx, dy = candidate
        st.begin(sim.t, q, com, cdot, foot, (dx, dy))
    horizon = st.options.horizon
    t0 = sim.t
    for _ in range(int(round(horizon / sim.opt.dt))):
        if disturb is not None:
            disturb()
        sim.step()
        if sim.fell_at is not None:
            return FALL_SCORE + max(horizon - (sim.fell_at - t0), 0.0)
    c, jc = sim.character.com_jacobian()
    return float(np.linalg.norm((jc @ sim.character.get_state()[1])[:2]))
