"""The ``ball`` term of a rollout's cost: did the ball meet its planned link, and leave at the wanted speed?

A config asks for an outcome with ``balls[i].exit_speed`` (m/s); the search launches its balls in every
rollout (:class:`~tracker.sampling.pool.RolloutPool`, ``balls=True``) and scores each such ball at the
window's end (:func:`ball_term`, the definitions in :mod:`tracker.sampling.cost`).
"""

from __future__ import annotations

import numpy as np

#: s: how long after its planned impact a ball may still be on its way to the target link.
GRACE = 0.1


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
            total += 1.0 if t > b.plan.impact_time + GRACE else 0.0
            continue
        speed = float(np.linalg.norm(ball_state(scenario._client, b.body)[1]))
        total += min(abs(speed - want) / max(want, 1.0), 1.0)
    return total
