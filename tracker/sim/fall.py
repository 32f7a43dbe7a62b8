"""One notion of a fall, for every command that runs a free root (``run``, ``track``, ``push``,
``optimize`` and its rollouts).

A free-root character has *fallen* at the first step where

1. its root is below ``fall_height`` (default 0.5) times the clip's root height at that time
   (it went down: a crouch in the clip is no fall, the clip's root is low too);
2. a link other than a foot touches the ground, farther than :data:`FOOT_REACH` from the ankles,
   while the clip holds that link more than :data:`CLEARANCE` m above it (a knee, a hand or the
   pelvis on the floor where the clip has them up; a clip that kneels or crawls does not count its
   own contacts as falls; a shin touching beside its ankle is a foot that sank or rolled, which
   ``foot_penetration_max_m`` measures, not a fall); or
3. its root is more than :data:`THROWN` m above the clip's (thrown off its feet: a push or a
   ball that sends the body flying, or a controller that blew up).

A fall is an outcome, not an error: the run goes on (``push`` stops there), the recording's
``meta["fell_at"]`` and ``meta["fall_reason"]`` say when and why, ``metrics.json`` carries
``fell``, ``fell_at_s`` and ``fall_reason``, and the command exits 4.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet with its banner silenced)
import pybullet as p  # noqa: E402

#: m: a link other than a foot on the ground while the clip holds it higher than this is a fall.
CLEARANCE = 0.05
#: m: a contact point this close to an ankle belongs to the foot's footprint (a sunk or rolled foot
#: touching with its shin), not to a fall. The humanoid's shin box ends 2.4 cm above the ankle; a foot
#: sunk 10 cm into the floor (a stiff servo's landing at one physics step per control step) touches
#: with it 3-9 cm from the ankle.
FOOT_REACH = 0.12
#: m: a contact point at most this far from the ground touches it.
TOUCH_GAP = 0.002
#: m: a root this far above the clip's has been thrown off its feet.
THROWN = 0.5


def fall_reason(q: np.ndarray, q_ref: np.ndarray, fall_height: float, touching: Iterable[str] = (),
                clearance=None) -> str:
    """Why a free root counts as fallen at state ``q`` against the clip's ``q_ref`` ('' if it does not).

    Args:
        q, q_ref: the state and the clip's pose at the same time ``(nq,)`` (root height ``[2]``).
        fall_height: the fraction of the clip's root height below which the root has gone down.
        touching: links other than the feet that touch the ground now.
        clearance: ``clearance(links) -> {link: m}``, how high the clip holds each of ``links`` now
            (lowest point of its collision shapes above the ground); None counts every touching link.
    """
    z, z_ref = float(q[2]), float(q_ref[2])
    if z < fall_height * z_ref:
        return f"the root sank to {z:.2f} m, below {fall_height:g} of the clip's {z_ref:.2f} m"
    if z > z_ref + THROWN:
        return f"the root rose to {z:.2f} m, {z - z_ref:.2f} m above the clip's"
    links = sorted(set(touching))
    if links:
        high = clearance(links) if clearance is not None else {k: np.inf for k in links}
        down = [k for k in links if high.get(k, np.inf) > CLEARANCE]
        if down:
            return f"{', '.join(down)} touched the ground"
    return ""


class ClipClearance:
    """How high a clip holds its links above the ground: ``clearance(links, q_ref)`` (m per link), from
    the model's collision shapes (:meth:`tracker.character.kinematics.Kinematics.lowest_point`)."""

    def __init__(self, kin) -> None:
        self.kin = kin

    def __call__(self, links: list[str], q_ref: np.ndarray) -> dict[str, float]:
        out = {}
        for k in links:
            if k in self.kin.shapes and self.kin.shapes[k]:
                out[k] = float(self.kin.lowest_point(np.asarray(q_ref)[None], [k])[0])
        return out


class FallWatch:
    """A simulation's fall check after each step (:meth:`reason`), with the contacts it already read.

    Args:
        sim: the :class:`~tracker.sim.simulation.Simulation` (its character, world, model, options).
    """

    def __init__(self, sim) -> None:
        self.sim = sim
        self._clearance: ClipClearance | None = None

    def reason(self, q: np.ndarray, q_ref: np.ndarray, others=None, read: bool = False) -> str:
        """Why the free root at ``q`` has fallen against the clip's ``q_ref`` ('' if it has not).

        ``others``: the ground contacts of links other than the feet that this step's servo read
        (:class:`~tracker.sim.support.GroundContacts` or None); ``read``: read the engine's instead."""
        sim = self.sim
        return fall_reason(q, q_ref, sim.opt.fall_height, self.touching(others, read),
                           lambda links: self.clearance(links, q_ref))

    def touching(self, others=None, read: bool = True) -> tuple[str, ...]:
        """Links other than the feet on the ground. A point within :data:`FOOT_REACH` of an ankle is
        the foot's own footprint (a sunk or rolled foot, measured as foot penetration), not a fall."""
        from tracker.sim.support import other_contacts

        sim = self.sim
        c = sim.character
        if read:
            others = other_contacts(c, sim.world.ground, refresh=False)
        if others is None:
            return ()
        near = others.gaps <= TOUCH_GAP
        if not near.any():
            return ()
        ankles = np.array([p.getLinkState(c.body_id, c.link_index(f), physicsClientId=c.client_id)[4]
                           for f in sim.model.feet])
        far = np.linalg.norm(others.points[:, None, :] - ankles[None], axis=2).min(axis=1) > FOOT_REACH
        return tuple(sorted({c.link_name(int(k)) for k in others.links[near & far]}))

    def clearance(self, links: list[str], q_ref: np.ndarray) -> dict[str, float]:
        """How high the clip holds ``links`` at ``q_ref``, m (:class:`ClipClearance`, built on first use)."""
        if self._clearance is None:
            self._clearance = ClipClearance(self.sim.model.kinematics())
        return self._clearance(links, q_ref)
