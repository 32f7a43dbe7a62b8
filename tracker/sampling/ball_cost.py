"""The ``ball`` term of a rollout's cost: did the ball meet its planned link, and leave at the wanted speed?

A config asks for an outcome with ``balls[i].exit_speed`` (m/s); the search launches its balls in every
rollout (:class:`~tracker.sampling.pool.RolloutPool`, ``balls=True``) and scores each such ball at the
window's end (:func:`ball_term`, the definitions in :mod:`tracker.sampling.cost`; from :data:`LEAD` s
before the planned impact until the target touches the ball, the aim point's gap to it).
"""

from __future__ import annotations

import numpy as np

#: s: how long after its planned impact a ball may still be on its way to the target link.
GRACE = 0.1
#: s: from this long before the planned impact until the grace ends, a ball the target link has not
#: touched yet scores how far the link's aim point is from it (:data:`REACH`), so that the search sees
#: a kick come closer before it connects.
LEAD = 0.15
#: m: a gap from the aim point to the ball's surface this large or larger scores as much as a miss.
REACH = 0.5


def ball_specs(config) -> tuple[tuple[int, float], ...]:
    """``(ball index, wanted exit speed)`` of the config's balls that ask for an outcome."""
    return tuple((k, float(b.exit_speed)) for k, b in enumerate(config.balls) if b.exit_speed is not None)


def ball_term(scenario, specs: tuple[tuple[int, float], ...], t: float) -> float:
    """The term at clip time ``t`` (a window's end) for the balls of ``specs`` (:func:`ball_specs`) of
    ``scenario`` (:class:`~tracker.scenarios.ball_scenario.BallScenario`): 0 to 1 per ball, summed."""
    if scenario is None or not specs:
        return 0.0
    from tracker.scenarios.balls import ball_state

    total = 0.0
    for k, want in specs:
        b = scenario._balls[k]
        events = [e for e in scenario.events if e["ball"] == k]
        if events and events[0]["link"] != b.plan.link:
            total += 1.0  # it met another link first
            continue
        if not any(e["link"] == b.plan.link for e in events):
            if t > b.plan.impact_time + GRACE:
                total += 1.0
            elif t >= b.plan.impact_time - LEAD and b.body is not None:
                total += min(_gap(scenario, b) / REACH, 1.0)
            continue
        speed = float(np.linalg.norm(ball_state(scenario._client, b.body)[1]))
        total += min(abs(speed - want) / max(want, 1.0), 1.0)
    return total


def _gap(scenario, b) -> float:
    """How far the target link's aim point (its origin plus the launch's offset, in the link's frame) is
    from the ball's surface now, m (0 when inside it)."""
    from scipy.spatial.transform import Rotation

    from tracker.scenarios.balls import ball_state

    pos, quat = scenario._sim.character.link_pose(b.plan.link)
    aim = pos + Rotation.from_quat(quat).apply(np.asarray(b.plan.launch.offset, dtype=float))
    centre = ball_state(scenario._client, b.body)[0]
    return max(float(np.linalg.norm(aim - centre)) - float(b.plan.preset.radius), 0.0)
