"""Pushes on a standing character, and whether it stays up.

A push is a horizontal world force on one link's centre of mass for a while. Its direction
is where it comes *from*, in degrees about +Z from the character's facing direction (+X):
0 from the front (the force points backward, −X), 90 from its left (+Y side, force −Y),
180 from behind, 270 from its right. A fall is an outcome, not an error: a link other than
a foot touches the ground, or the CoM sinks below half its starting height.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import tracker.sim.quiet  # noqa: F401
import pybullet as p  # noqa: E402

#: Push directions of the sweep: from the front, the left, behind, the right.
DIRECTIONS: dict[str, float] = {"front": 0.0, "left": 90.0, "back": 180.0, "right": 270.0}


@dataclass(frozen=True)
class Push:
    """One push.

    Attributes:
        force: N (>= 0). duration: s. direction: degrees (see the module docstring).
        link: the pushed link. start: simulated time at which it starts, s.
    """

    force: float = 0.0
    duration: float = 0.2
    direction: float = 0.0
    link: str = "chest"
    start: float = 1.0

    def vector(self) -> np.ndarray:
        """The world force ``(3,)`` N."""
        a = math.radians(self.direction)
        return -self.force * np.array([math.cos(a), math.sin(a), 0.0])


@dataclass
class PushOutcome:
    """What a push did (``--json`` of ``tracker push``).

    Attributes:
        fell: whether the character fell. fell_time_s: when (None if it did not), s.
        com_drift_m: horizontal distance between the CoM at the start and at the end, m.
        max_com_offset_m: the largest horizontal distance of the CoM from where it started, m.
        fell_reason: what touched the ground, or the CoM height.
        t, com: the time ``(T,)`` s and CoM ``(T, 3)`` m of every step (not in the JSON).
    """

    fell: bool
    fell_time_s: float | None
    com_drift_m: float
    max_com_offset_m: float
    duration_s: float
    push: Push
    fell_reason: str = ""
    t: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    com: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)), repr=False)

    def to_json(self) -> dict:
        return {"fell": self.fell, "fell_time_s": self.fell_time_s, "com_drift_m": self.com_drift_m,
                "max_com_offset_m": self.max_com_offset_m, "fell_reason": self.fell_reason,
                "duration_s": self.duration_s, "force_n": self.push.force, "push_duration_s": self.push.duration,
                "direction_deg": self.push.direction, "link": self.push.link, "push_start_s": self.push.start}


def fall_reason(sim, com_z0: float) -> str:
    """Why the character counts as fallen now ('' if it does not)."""
    from tracker.sim.support import touching_links

    feet = set(sim.model.feet)
    others = [k for k in touching_links(sim.character, sim.world.ground) if k not in feet]
    if others:
        return f"{', '.join(others)} touched the ground"
    z = sim.character.com_jacobian()[0][2]
    if z < 0.5 * com_z0:
        return f"the centre of mass sank to {z:.2f} m"
    return ""


def run_push(sim, push: Push, duration: float, *, stop_on_fall: bool = True) -> PushOutcome:
    """Simulate ``duration`` s from the simulation's current state, pushing as ``push`` says.

    Args:
        sim: a :class:`tracker.sim.simulation.Simulation` (free root, usually with balance).
        stop_on_fall: stop at the fall (the rest would be lying on the ground).
    """
    c = sim.character
    link = c.link_index(push.link)  # a wrong name is a ModelError naming the links
    force = push.vector().tolist()
    dt = sim.opt.dt
    t0 = sim.t
    com0 = c.com_jacobian()[0]
    ts, coms = [t0], [com0]
    fell_at, reason = None, ""
    for _ in range(int(round(duration / dt))):
        rel = sim.t - t0
        if push.force > 0 and push.start <= rel + 1e-9 < push.start + push.duration:
            pos = p.getLinkState(c.body_id, link, physicsClientId=c.client_id)[0] if link >= 0 else \
                p.getBasePositionAndOrientation(c.body_id, physicsClientId=c.client_id)[0]
            p.applyExternalForce(c.body_id, link, force, pos, p.WORLD_FRAME, physicsClientId=c.client_id)
        sim.step()
        com = c.com_jacobian()[0]
        ts.append(sim.t)
        coms.append(com)
        if fell_at is None:
            reason = fall_reason(sim, com0[2])
            if reason:
                fell_at = sim.t - t0
                if stop_on_fall:
                    break
    com = np.array(coms)
    off = np.linalg.norm(com[:, :2] - com0[:2], axis=1)
    return PushOutcome(fell=fell_at is not None, fell_time_s=None if fell_at is None else round(fell_at, 6),
                       com_drift_m=float(off[-1]), max_com_offset_m=float(off.max()), duration_s=float(ts[-1] - t0),
                       push=push, fell_reason=reason, t=np.array(ts) - t0, com=com)
