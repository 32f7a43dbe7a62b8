"""Ball–character contacts, read from PyBullet after each step.

One :class:`Contact` per (ball, link) pair touching in a step: the points
``p.getContactPoints(bodyA=ball, bodyB=character)`` reports on that link with
a positive normal force. PyBullet's ``normalForce`` is the solver's normal
impulse divided by the step, so the step's normal impulse is
``J = Σ normalForce · dt`` (N·s, ≥ 0); its vector ``Σ normalForce · dt · n``
(``n`` = ``contactNormalOnB``, from the character towards the ball) is the
impulse the ball received, and the character received its opposite. Friction
impulses are not included.

Timing. Bullet finds contacts on the positions at the *start* of a step and
resolves them during it, so a contact reported after the step ``t - dt -> t``
existed in the state at ``t - dt``: that is the contact's time ``t``. The
bodies first touched during the step that led to that state; ``t_touch``
estimates when: with ``s`` the relative normal approach over that step,
``depth`` the penetration and ``closing`` the closing speed at ``t``,
``t_touch = t - dt + (s - depth) / closing`` (``= t - depth / closing`` for a
free ball; a ball that CCD stopped at its time of impact moved less than
``closing · dt``).

A contact becomes an event (a JSON-able dict) for :attr:`BallScenario.events`:
``{"t", "t_touch", "ball", "link", "impulse", "impulse_vector", "speed",
"speed_in", "position", "normal", "depth", "points"}``; the gain schedule groups
a ball's events into contact episodes itself (:mod:`tracker.control.gains`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402


@dataclass(frozen=True)
class Contact:
    """A ball touching one link of the character, resolved in one step.

    Attributes:
        t: time of the state in which the contact was found (the step's start), s.
        t_touch: estimated time of first touch, in ``[t - dt, t]``, s.
        ball: the ball's index in its scenario.
        link: the character's link name.
        impulse: normal impulse over the step, N·s (> 0).
        impulse_vector: impulse on the ball ``(3,)`` N·s (normal part).
        speed: ball speed after the step, m/s.
        speed_in: ball speed before the step, m/s (``nan`` if unknown).
        position: impulse-weighted contact point on the link, world ``(3,)`` m.
        normal: unit normal from the link towards the ball ``(3,)``.
        depth: deepest penetration at ``t``, m (≥ 0).
        points: number of contact points.
    """

    t: float
    t_touch: float
    ball: int
    link: str
    impulse: float
    impulse_vector: tuple[float, float, float]
    speed: float
    speed_in: float
    position: tuple[float, float, float]
    normal: tuple[float, float, float]
    depth: float
    points: int

    def as_event(self) -> dict:
        """The contact as a JSON-able event dict (plain floats, lists)."""
        return {"t": self.t, "t_touch": self.t_touch, "ball": self.ball, "link": self.link,
                "impulse": self.impulse, "impulse_vector": list(self.impulse_vector), "speed": self.speed,
                "speed_in": self.speed_in, "position": list(self.position), "normal": list(self.normal),
                "depth": self.depth, "points": self.points}


@dataclass(frozen=True)
class BodyState:
    """Velocities of the character's links in one state, for closing speeds.

    Attributes:
        com: centre of mass of each link ``(L, 3)`` m, in ``Character.link_names`` order.
        linear: its linear velocity ``(L, 3)`` m/s.
        angular: the link's angular velocity ``(L, 3)`` rad/s.
    """

    com: np.ndarray
    linear: np.ndarray
    angular: np.ndarray

    @classmethod
    def read(cls, character) -> BodyState:
        """The character's current link state (two PyBullet queries)."""
        lin, ang = character.link_velocities()
        return cls(character.link_com_positions(), lin, ang)

    def point_velocity(self, link_index: int, point: np.ndarray) -> np.ndarray:
        """Velocity ``(3,)`` m/s of a world point rigidly attached to PyBullet link ``link_index``."""
        k = link_index + 1
        return self.linear[k] + np.cross(self.angular[k], point - self.com[k])


def read_contacts(client: int, ball_body: int, character, t: float, dt: float, ball: int = 0,
                  speed: float = float("nan"), velocity_in: np.ndarray | None = None,
                  body_in: BodyState | None = None, displacement_in: np.ndarray | None = None) -> list[Contact]:
    """The contacts of one ball with the character resolved in the step ``t - dt -> t``.

    Args:
        client: PyBullet client.
        ball_body: the ball's body id.
        character: the :class:`~tracker.character.character.Character` adapter (``body_id``, ``link_name``).
        t: time after the step, s.
        dt: the step, s.
        ball: the ball's index, copied into the contacts.
        speed: ball speed after the step, m/s.
        velocity_in: ball velocity before the step ``(3,)`` m/s (for ``speed_in`` and ``t_touch``).
        body_in: the character's link state before the step (for ``t_touch``; without it the
            links count as still).
        displacement_in: the ball's displacement ``(3,)`` m over the step before this one (for
            ``t_touch``; without it the ball is taken to have moved freely at ``velocity_in``).

    Returns:
        one :class:`Contact` per touched link with a positive impulse, in link order.
    """
    pts = p.getContactPoints(bodyA=ball_body, bodyB=character.body_id, physicsClientId=client)
    by_link: dict[int, list] = {}
    for cp in pts:
        if cp[9] > 0.0:
            by_link.setdefault(cp[4], []).append(cp)
    t0 = t - dt
    v_in = None if velocity_in is None else np.asarray(velocity_in, dtype=float)
    out = []
    for k in sorted(by_link):
        cps = by_link[k]
        f = np.array([cp[9] for cp in cps])
        n = np.array([cp[7] for cp in cps], dtype=float)
        x = np.array([cp[6] for cp in cps], dtype=float)
        jv = (f[:, None] * n).sum(axis=0) * dt
        normal = jv / np.linalg.norm(jv) if np.linalg.norm(jv) > 0 else n[0]
        point = f @ x / f.sum()
        depth = max(-min(cp[8] for cp in cps), 0.0)
        t_touch = t0
        if v_in is not None:
            v_link = body_in.point_velocity(k, point) if body_in is not None else np.zeros(3)
            closing = -float(np.dot(v_in - v_link, normal))
            if closing > 1e-6:
                s = closing * dt
                if displacement_in is not None:
                    s = -float(np.dot(np.asarray(displacement_in, dtype=float) - v_link * dt, normal))
                t_touch = t0 - dt + min(max((s - depth) / closing, 0.0), dt)
        out.append(Contact(
            t=float(t0), t_touch=float(t_touch), ball=int(ball), link=character.link_name(k),
            impulse=float(f.sum() * dt), impulse_vector=tuple(float(a) for a in jv), speed=float(speed),
            speed_in=float("nan") if v_in is None else float(np.linalg.norm(v_in)),
            position=tuple(float(a) for a in point), normal=tuple(float(a) for a in normal),
            depth=float(depth), points=len(cps)))
    return out


def touching(client: int, ball_body: int, other_body: int) -> bool:
    """Whether the ball presses on ``other_body`` (e.g. the ground) after the last step."""
    return any(cp[9] > 0.0 or cp[8] <= 0.0
               for cp in p.getContactPoints(bodyA=ball_body, bodyB=other_body, physicsClientId=client))


def select(events: Iterable[Mapping], ball: int | None = None, link: str | None = None) -> list[Mapping]:
    """The events of one ball and/or one link, in time order."""
    return [e for e in events if (ball is None or e["ball"] == ball) and (link is None or e["link"] == link)]


def first_contact(events: Iterable[Mapping], ball: int | None = None, link: str | None = None) -> Mapping | None:
    """The earliest event matching ``ball``/``link`` (``None`` if there is none)."""
    sel = select(events, ball, link)
    return min(sel, key=lambda e: e["t"]) if sel else None


def episodes(events: Sequence[Mapping], dt: float, gap: float | None = None) -> list[list[Mapping]]:
    """Group one ball's events into contact episodes: runs with gaps shorter than ``gap`` s.

    ``gap`` defaults to ``1.5 dt`` (consecutive steps belong to one episode).
    """
    gap = 1.5 * dt if gap is None else gap
    out: list[list[Mapping]] = []
    for e in sorted(events, key=lambda e: e["t"]):
        if out and e["t"] - out[-1][-1]["t"] < gap:
            out[-1].append(e)
        else:
            out.append([e])
    return out


def total_impulse(events: Iterable[Mapping]) -> float:
    """Sum of the events' normal impulses, N·s."""
    return float(sum(e["impulse"] for e in events))
