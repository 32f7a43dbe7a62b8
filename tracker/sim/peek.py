"""One engine step taken and undone: what ``vt``'s ``peek`` feed-forward needs from PyBullet.

:class:`EnginePeek` steps the world from a ``saveState`` and restores it; the
restore is bit-exact, contacts included
(``tests/control/test_vt.py::test_restore_state_is_exact_with_contacts``). It
also says, cheaply and conservatively, whether anything can push the
character during the next step, so that a peek can be skipped where its answer
would be zero.
"""

from __future__ import annotations

import numpy as np

from tracker.sim.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402


class EnginePeek:
    """Peeks one step ahead in the character's own world.

    Args:
        character: the simulated body: ``client_id``, ``body_id``, ``apply_torques(tau)``
            and ``get_state() -> (q, v)`` (a :class:`~tracker.character.character.Character`
            or :class:`~tracker.scenes.desk.DeskArm`).
    """

    def __init__(self, character) -> None:
        self.character = character
        self._setup: dict | None = None

    def velocity_after_step(self, tau: np.ndarray) -> np.ndarray:
        """The character's ``v`` ``(nv,)`` after one engine step under ``tau``; the world is then restored."""
        ch = self.character
        cid = ch.client_id
        sid = p.saveState(physicsClientId=cid)
        try:
            ch.apply_torques(tau)
            p.stepSimulation(physicsClientId=cid)
            _, v1 = ch.get_state()
        finally:
            p.restoreState(sid, physicsClientId=cid)
            p.removeState(sid, physicsClientId=cid)
        return v1

    def _prepare(self) -> dict:
        """Once: the limited hinges, each link's size, and whether the body must always peek."""
        ch = self.character
        b, cid = ch.body_id, ch.client_id
        n = p.getNumJoints(b, physicsClientId=cid)
        limited = []
        for j in range(n):
            info = p.getJointInfo(b, j, physicsClientId=cid)
            if info[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC) and info[8] <= info[9]:
                limited.append((j, info[8], info[9]))
        always = (getattr(getattr(ch, "model", None), "self_collision", "off") != "off"
                  or bool(getattr(ch, "fixed_base", False)))
        return dict(links=list(range(n)), limited=limited, always=always,
                    radius=[_radius(b, k, cid) for k in range(-1, n)])  # base first

    def may_act(self, dt: float) -> bool:
        """Whether a contact, a joint limit or a constraint can push the character during the next step.

        Conservative: any other body closer than the distance the two can close in two steps
        (point speeds bounded by ``|v_com| + |ω|·r`` per link, ``r`` the link's size) plus 5 cm
        of contact margin, another articulated body anywhere, any limited hinge within two steps
        of its limit, any user constraint, self-collision or a welded base. Where it says no,
        a peek's environment force is zero to rounding.

        Args:
            dt: the step, s.
        """
        ch = self.character
        b, cid = ch.body_id, ch.client_id
        if self._setup is None:
            self._setup = self._prepare()
        g = self._setup
        if g["always"] or p.getNumConstraints(physicsClientId=cid):
            return True
        lin, ang = p.getBaseVelocity(b, physicsClientId=cid)
        speed = np.linalg.norm(lin) + np.linalg.norm(ang) * g["radius"][0]
        if g["links"]:
            states = p.getLinkStates(b, g["links"], computeLinkVelocity=1, physicsClientId=cid)
            for st, r in zip(states, g["radius"][1:]):
                speed = max(speed, np.linalg.norm(st[6]) + np.linalg.norm(st[7]) * r)
        if g["limited"]:
            js = p.getJointStates(b, [j for j, _, _ in g["limited"]], physicsClientId=cid)
            for (_, lo, hi), (pos, vel, *_rest) in zip(g["limited"], js):
                reach = 2.0 * abs(vel) * dt + 0.01
                if pos - lo < reach or hi - pos < reach:
                    return True
        for k in range(p.getNumBodies(physicsClientId=cid)):
            other = p.getBodyUniqueId(k, physicsClientId=cid)
            if other == b:
                continue
            if p.getNumJoints(other, physicsClientId=cid):
                return True  # another articulated body: its speed is not bounded here
            olin, oang = p.getBaseVelocity(other, physicsClientId=cid)
            ospeed = np.linalg.norm(olin) + np.linalg.norm(oang) * _radius(other, -1, cid)
            margin = 2.0 * (speed + ospeed) * dt + 0.05
            if p.getClosestPoints(b, other, margin, physicsClientId=cid):
                return True
        return False


def _radius(body: int, link: int, cid: int) -> float:
    """The diagonal of a link's world bounding box, m: no point of the link is farther from its centre of mass."""
    lo, hi = p.getAABB(body, link, physicsClientId=cid)
    return float(np.linalg.norm(np.subtract(hi, lo)))
