"""How many physics steps a run with balls takes under each control step (``sim.substeps``).

PyBullet finds contacts in step states only, so an impact resolves in steps of the distance a
link and a ball close in on each other per physics step. A kicking foot at 11 m/s closes 19 cm
(1.7 soccer-ball radii) in 1/60 s: a kick config as written from ``tracker run --keys`` (the clip
``data/motions/kick.bvh`` and a soccer ball in the right foot's path, nothing else) gave an exit
speed of 6.6 m/s at 1/60 s with one physics step per control step (the shin met the ball first),
11.5 with the 7 this rule chooses, and 11.8 at 1/240 s (12.3 there with one physics step).

The rule: in one physics step ``h = dt / substeps`` the ball and the links near it at its impact
close in by at most :data:`RESOLUTION` of the ball's radius,
``(v_link + v_ball) · h <= RESOLUTION · r``, with ``v_ball`` the planned speed at impact and
``v_link`` the fastest reference speed of the aim point and of the link origins within
``r +`` :data:`NEAR` of the ball's planned centre then; bounded by 1 and :data:`MAX_SUBSTEPS`.
A config without ``sim.substeps`` takes it (:func:`tracker.experiments.config.config_from_data`); one
that sets fewer than the rule with :data:`COARSE` instead of :data:`RESOLUTION` needs is warned
about (:func:`coarse_warning`).

Measured (``tests/scenarios/test_substeps_converge.py``): the shipped ball configs need 3-10 by
the rule and set 8 (none is warned about); ``configs/soccer_light.yaml`` without its
``sim.substeps`` takes 7 and kicks at 12.4 m/s, against 12.0 at 1/240 s. With several physics
steps per control step a free root's SPD runs as before issue 34 (:mod:`tracker.sim.simulation`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tracker.scenarios.launch import LaunchPlan, aim_point, link_positions, plan_launch

#: A ball and the links near it close in by at most this fraction of the ball's radius per physics step.
RESOLUTION = 0.25
#: Warn when a config's substeps let them close in by more than this fraction per physics step.
COARSE = 0.5
#: The most physics steps chosen per control step.
MAX_SUBSTEPS = 16
#: Links whose origin is within the ball's radius plus this (m) of its planned centre at impact count.
NEAR = 0.25


@dataclass(frozen=True)
class ImpactSpeed:
    """The fastest closing at one ball's impact.

    Attributes:
        ball: index of the launch.
        preset: the ball's preset name. radius: its radius, m.
        time: the planned impact time (clip time), s.
        link: the fastest link near the ball then (``aim point`` of ``target_link`` or a link origin).
        link_speed: its reference speed, m/s.
        ball_speed: the ball's planned speed at impact, m/s.
    """

    ball: int
    preset: str
    radius: float
    time: float
    link: str
    link_speed: float
    ball_speed: float

    @property
    def closing(self) -> float:
        """``link_speed + ball_speed``, m/s (the most they can close in on each other)."""
        return self.link_speed + self.ball_speed

    def needed(self, dt: float, fraction: float = RESOLUTION) -> int:
        """Physics steps per control step ``dt`` that keep the closing per step under ``fraction`` of the radius."""
        return max(math.ceil(dt * self.closing / (fraction * self.radius) - 1e-9), 1)

    def substeps(self, dt: float, fraction: float = RESOLUTION) -> int:
        """:meth:`needed`, at most :data:`MAX_SUBSTEPS`."""
        return min(self.needed(dt, fraction), MAX_SUBSTEPS)

    def describe(self, dt: float, substeps: int) -> str:
        """One line: who closes in how fast, and how far per physics step at ``substeps``."""
        step = self.closing * dt / substeps
        return (f"{self.link} at {self.link_speed:.1f} m/s and ball {self.ball} ({self.preset}, r {self.radius:g} m) "
                f"at {self.ball_speed:.1f} m/s at {self.time:.3f} s close in {step * 100:.1f} cm "
                f"({step / self.radius:.2f} of its radius) per physics step")


def impact_speeds(launches: Sequence, reference, model, dt: float, start: float = 0.0,
                  kinematics=None) -> list[ImpactSpeed]:
    """:class:`ImpactSpeed` of each of ``launches`` (:class:`tracker.scenarios.base.Launch`) against the clip.

    Plans each launch as the simulation will (:func:`tracker.scenarios.launch.plan_launch`, on the
    ``dt`` grid from ``start``) and reads the reference at the planned impact time.
    """
    kin = kinematics if kinematics is not None else model.kinematics()
    out = []
    for i, launch in enumerate(launches):
        plan: LaunchPlan = plan_launch(launch, reference, model, dt, start, kin)
        t, r = float(plan.impact_time), float(plan.preset.radius)
        _, aim_velocity = aim_point(model, reference, launch.target_link, t, launch.offset, kin)
        best = (float(np.linalg.norm(aim_velocity)), f"{launch.target_link} (aim point)")
        h = 0.5 / reference.fps
        pos = link_positions(model, reference, [t - h, t, t + h], kin)
        for link, p in pos.items():
            if np.linalg.norm(p[1] - plan.impact_centre) <= r + NEAR:
                best = max(best, (float(np.linalg.norm(p[2] - p[0]) / (2 * h)), link))
        out.append(ImpactSpeed(i, plan.preset.name, r, t, best[1], best[0], float(np.linalg.norm(plan.impact_velocity))))
    return out


def choose_substeps(speeds: Sequence[ImpactSpeed], dt: float) -> tuple[int, str]:
    """``(substeps, why)``: the most any ball needs by the rule (1 without balls), and a line saying why."""
    if not speeds:
        return 1, "no balls"
    worst = max(speeds, key=lambda s: s.needed(dt))
    n = worst.substeps(dt)
    capped = f"; it would need {worst.needed(dt)}, {MAX_SUBSTEPS} is the most chosen" if worst.needed(dt) > n else ""
    return n, f"{worst.describe(dt, n)}{capped}"


def coarse_warning(speeds: Sequence[ImpactSpeed], dt: float, substeps: int) -> str | None:
    """A warning when ``substeps`` resolve a ball's impact coarser than :data:`COARSE` of its radius
    per physics step, else None."""
    for s in speeds:
        if substeps < s.substeps(dt, COARSE):
            return (f"sim.substeps: {substeps} is too coarse for ball {s.ball}: {s.describe(dt, substeps)}; its outcome "
                    f"depends on the step (leave sim.substeps out to have {s.substeps(dt)} chosen)")
    return None
