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

from tracker.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402


class EnginePeek:
    """Peeks one step ahead in the character's own world.

    Args:
        character: the simulated body: ``client_id``, ``body_id``, ``apply_torques(tau)``
            and ``get_state() -> (q, v)`` (a :class:`~tracker.character.character.Character`
            or :class:`~tracker.scenes.desk.DeskArm`).
    """

    def __init__(self, character, substeps: int = 1) -> None:
        self.character = character
        self.substeps = int(substeps)
        #: a :class:`~tracker.sim.state.Rewind` lent by the simulation loop while it owns the
        #: world (None: a plain saveState / restoreState around every peek).
        self.rewind = None
        self._setup: dict | None = None

    def velocity_after_step(self, tau: np.ndarray) -> np.ndarray:
        """The character's ``v`` ``(nv,)`` after one control step under ``tau``; the world is then restored.

        The control step is ``substeps`` engine steps with ``tau`` applied in each, as the
        simulation loop takes it, so the peek sees the same step the real one will be.
        """
        ch = self.character
        cid = ch.client_id
        rw = self.rewind
        if rw is not None:
            rw.now()
            try:
                v1 = self._trial(tau)
            finally:
                rw.back()
            return v1
        sid = p.saveState(physicsClientId=cid)
        try:
            v1 = self._trial(tau)
        finally:
            p.restoreState(sid, physicsClientId=cid)
            p.removeState(sid, physicsClientId=cid)
        return v1

    def _trial(self, tau: np.ndarray) -> np.ndarray:
        ch = self.character
        command = getattr(ch, "torque_command", None)
        apply = command(tau) if command is not None else (lambda: ch.apply_torques(tau))
        for _ in range(self.substeps):
            apply()  # PyBullet clears applied torques after every step
            p.stepSimulation(physicsClientId=ch.client_id)
        return ch.get_state()[1]

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
                    limited_ids=[j for j, _, _ in limited], lo=np.array([lo for _, lo, _ in limited]),
                    hi=np.array([hi for _, _, hi in limited]),
                    radius=np.array([_radius(b, k, cid) for k in range(-1, n)]))  # base first

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
        if p.getContactPoints(bodyA=b, physicsClientId=cid):
            return True  # touching already (a foot on the ground): no need to bound speeds
        if g["limited"]:
            js = p.getJointStates(b, g["limited_ids"], physicsClientId=cid)
            pos = np.fromiter((s[0] for s in js), float, len(js))
            reach = 2.0 * np.abs(np.fromiter((s[1] for s in js), float, len(js))) * dt + 0.01
            if np.any(pos - g["lo"] < reach) or np.any(g["hi"] - pos < reach):
                return True
        lin, ang = p.getBaseVelocity(b, physicsClientId=cid)
        vel = [(lin, ang)]
        if g["links"]:
            vel += [(st[6], st[7]) for st in p.getLinkStates(b, g["links"], computeLinkVelocity=1,
                                                             physicsClientId=cid)]
        w = np.array(vel, dtype=float)  # (links + 1, 2, 3): linear and angular, base first
        speed = float(np.max(np.sqrt((w[:, 0] ** 2).sum(1)) + np.sqrt((w[:, 1] ** 2).sum(1)) * g["radius"]))
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
