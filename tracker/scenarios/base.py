"""The scenario contract: lifecycle hooks the simulation calls, and ball launch specs.

A scenario is any object with::

    reset(sim)                # after the character is placed at the clip's start
    before_step(sim, t)       # before control at time t (launch balls here)
    after_substep(sim, t)     # optional: after each physics step (read contacts here)
    after_step(sim, t)        # after the control step's physics, t = new time (record here)
    events: list[dict]        # contact events {"t", "link", "impulse", "ball", "speed"} so far
    ball_positions() -> (N, B, 3) | None   # per recorded step, for the Recording

``sim`` is a :class:`tracker.sim.simulation.Simulation` (``sim.world.client``,
``sim.character``, ``sim.reference``, ``sim.opt.dt``, ``sim.t``). The gain
schedule (:mod:`tracker.control.schedule`) reads ``events`` to start reactions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class BallPreset:
    """A ball type. SI units.

    Attributes:
        name: registry name (``soccer``, ``soccer_heavy``, ``volleyball``, ``basketball``...).
        mass: kg.
        radius: m.
        restitution: coefficient of restitution against the ground (0..1).
        lateral_friction: Coulomb friction coefficient.
        rolling_friction: rolling friction (PyBullet's, m).
        spinning_friction: spinning friction (PyBullet's, m).
        colour: RGBA.
    """

    name: str
    mass: float
    radius: float
    restitution: float
    lateral_friction: float = 0.6
    rolling_friction: float = 0.001
    spinning_friction: float = 0.001
    colour: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True)
class Launch:
    """One ball launched at the character, aimed at a link at a clip time.

    Attributes:
        ball: preset name.
        target_link: character link the ball must meet (e.g. ``right_foot``).
        impact_time: clip time (s) at which the ball meets the link's reference position.
        speed: approach speed at impact, m/s (0 for a stationary ball placed in the path).
        direction: approach direction in the world (unit vector the ball travels along),
            or ``None`` for the scenario default (from the character's front).
        offset: where on the link the ball should hit, m, added to the link's reference origin.
        flight_time: seconds of flight before impact (launch at ``impact_time - flight_time``).
        mass: override the preset's mass, kg (``None``: keep).
        release_height: height of the ball's centre at launch when ``direction`` is ``None``, m
            (``None``: the planner's, :data:`tracker.scenarios.launch.RELEASE_HEIGHT`).
        shift: moves the aim point in the world, m (after ``offset``): a free-root character that
            strays from the clip's root meets a ball laid where its own link passes
            (``scripts/aim_shift.py`` measures the shift on a replay).
    """

    ball: str
    target_link: str
    impact_time: float
    speed: float
    direction: tuple[float, float, float] | None = None
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    flight_time: float = 0.6
    mass: float | None = None
    release_height: float | None = None
    shift: tuple[float, float, float] = (0.0, 0.0, 0.0)


class Scenario(Protocol):
    events: list

    def reset(self, sim) -> None: ...

    def before_step(self, sim, t: float) -> None: ...

    def after_step(self, sim, t: float) -> None: ...
