"""The ball scenario: launches balls at the character, reads contacts, records the balls.

Wiring (the simulation calls the hooks; the gain schedule reads ``events``)::

    scenario = BallScenario([Launch("basketball", "chest", impact_time=1.2, speed=4.0)])
    sim = Simulation(model, reference, opt, scenario=scenario, gains_fn=schedule.bind(scenario))
    rec = sim.run()                      # rec.events, rec.balls (N, B, 3)
    outcome = scenario.outcomes()[0]     # first contact, exit velocity, caught/dropped

Each launch is planned at :meth:`reset` against the reference
(:func:`tracker.scenarios.launch.plan_launch`, on the simulation's step grid)
and its ball is spawned in :meth:`before_step` at the planned time. After every
step the scenario records each ball's centre and velocity, notes ground contacts and
whether the ball is held; after every physics (sub)step it appends one event per
touched link (:mod:`tracker.scenarios.contacts`). For the simulation's trial
steps it can tell whether a ball may touch soon (:meth:`BallScenario.may_touch`)
and rewind its contact book-keeping (:meth:`BallScenario.mark`,
:meth:`BallScenario.rewind`).

Outcome of a ball (:class:`BallOutcome`):
- exit velocity: the ball's velocity one step after its first exchange with
  the character ends (its first run of contacts without a 0.25 s gap), or at
  the end of the run if it is still touching;
- caught: for at least ``hold_time`` s at the end of the run, after a contact,
  the ball's centre is within ``hold_radius`` of both hands' centres of mass
  (or of the chest's) and moves at most ``hold_speed`` relative to them;
- outcome: kicked, deflected, caught, dropped, rolling or flying
  (:class:`BallOutcome`); dropped: not caught, held a while or left slowly, then
  reached the ground (a kicked ball that lands is not dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.errors import ConfigError
from tracker.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)
from tracker.scenarios.balls import ball_state, remove_ball, spawn_ball
from tracker.scenarios.base import Launch
from tracker.scenarios.contacts import BodyState, read_contacts, touching
from tracker.scenarios.launch import (
    RELEASE_HEIGHT, LaunchPlan, aim_point, check_launch, heading, plan_launch, solve_launch,
)

import pybullet as p  # noqa: E402


def _parking(k: int) -> list[float]:
    """Where ball ``k`` waits for its launch, m: far from everything, one place per ball."""
    return [-1000.0 - 10.0 * k, -1000.0, 100.0]


#: Warnings already given in this process (:func:`_warn_if_coarse` says each once).
_WARNED: set[str] = set()


def _warn_if_coarse(launches, sim, kinematics) -> None:
    """Say on stderr (once per process) when the run's physics step resolves a ball's impact too
    coarsely for its outcome to converge (:func:`tracker.scenarios.substeps.coarse_warning`)."""
    import sys

    from tracker.scenarios.substeps import coarse_warning, impact_speeds

    speeds = impact_speeds(launches, sim.reference, sim.model, sim.opt.dt, sim.t, kinematics)
    text = coarse_warning(speeds, sim.opt.dt, sim.opt.substeps)
    if text and text not in _WARNED:
        _WARNED.add(text)
        print(f"warning: {text}", file=sys.stderr)


@dataclass(frozen=True)
class BallOutcome:
    """What happened to one ball. Times are clip times, s; ``None`` when it did not happen.

    Attributes:
        ball: index in the scenario.
        name: preset name.
        target_link: the link it was aimed at.
        planned_impact_time: when it was planned to meet the link, s.
        first_contact_time: first contact with the character (event time ``t``: the state in
            which PyBullet found it), s.
        first_touch_time: the same contact's estimated touch time (``t_touch``), s.
        first_contact_link: link of that contact (the first in link order if several).
        first_target_contact_time: first contact with ``target_link``, s.
        links: every link it touched, in order of first touch.
        impulse: total normal impulse it exchanged with the character, N·s.
        exit_velocity: velocity after the last contact ``(3,)`` m/s.
        exit_speed: its norm, m/s.
        exit_direction: its unit vector ``(3,)``.
        caught: held at the end (module docstring).
        held_time: length of the final hold, s.
        dropped: reached the ground and was not caught.
        ground_time: first ground touch after the first contact (or the launch), s: the end of the
            control step in any of whose physics steps the ball, in the air before, touched the ground.
        outcome: ``kicked`` (left a leg link), ``deflected`` (left another link), ``caught``,
            ``dropped`` (not caught, held for a while or left the character slower than
            ``drop_speed``, then reached the ground), ``rolling`` or ``flying`` (never touched
            the character; on the ground or in the air at the end).
        on_ground: at the end of the run the ball touches the ground, or its centre is within
            1 mm of its radius above it.
    """

    ball: int
    name: str
    target_link: str
    planned_impact_time: float | None
    first_contact_time: float | None
    first_touch_time: float | None
    first_contact_link: str | None
    first_target_contact_time: float | None
    links: tuple[str, ...]
    impulse: float
    exit_velocity: tuple[float, float, float] | None
    exit_speed: float | None
    exit_direction: tuple[float, float, float] | None
    caught: bool
    held_time: float
    dropped: bool
    ground_time: float | None
    outcome: str = ""
    on_ground: bool = False

    def to_dict(self) -> dict:
        """JSON-able dict."""
        d = dict(self.__dict__)
        d["links"] = list(self.links)
        for k in ("exit_velocity", "exit_direction"):
            d[k] = None if d[k] is None else list(d[k])
        return d


def is_held(ball_pos: np.ndarray, ball_vel: np.ndarray, hands_pos: np.ndarray, hands_vel: np.ndarray,
            body_pos: np.ndarray | None, body_vel: np.ndarray | None, radius: float, max_speed: float) -> bool:
    """Whether a ball is held: near all the hands (or the body) and moving with them.

    Args:
        ball_pos, ball_vel: ball centre ``(3,)`` m and velocity ``(3,)`` m/s.
        hands_pos, hands_vel: the holding links' centres of mass and velocities ``(H, 3)`` (H may be 0).
        body_pos, body_vel: the body link's (``None``: no body link).
        radius: max centre distance to every hand (or to the body), m.
        max_speed: max speed relative to the hands' mean velocity (or the body's), m/s.
    """
    hands_pos = np.asarray(hands_pos, dtype=float).reshape(-1, 3)
    if len(hands_pos) and np.all(np.linalg.norm(hands_pos - ball_pos, axis=1) <= radius):
        ref = np.asarray(hands_vel, dtype=float).reshape(-1, 3).mean(axis=0)
    elif body_pos is not None and np.linalg.norm(np.asarray(body_pos) - ball_pos) <= radius:
        ref = np.asarray(body_vel, dtype=float)
    else:
        return False
    return bool(np.linalg.norm(np.asarray(ball_vel) - ref) <= max_speed)


def trailing_run(flags: Sequence[bool]) -> int:
    """Number of consecutive true values at the end of ``flags``."""
    n = 0
    for f in reversed(flags):
        if not f:
            break
        n += 1
    return n


#: A ball whose centre is this close to its radius above the ground is on the ground, m.
GROUND_TOLERANCE = 1e-3


class _Ball:
    """Book-keeping of one ball: its plan, body and per-step records."""

    def __init__(self, plan: LaunchPlan) -> None:
        self.plan = plan
        self.body: int | None = None
        self.launched = False  # the body exists from the scenario's reset; parked until its launch
        self.first_step: int | None = None  # index of its first recorded step
        self.pos: list[np.ndarray] = []
        self.vel: list[np.ndarray] = []
        self.ground: list[bool] = []  # per recorded step: touched the ground in any of its physics steps
        self.ground_now = False  # touched the ground in a physics step of the control step under way
        self.held: list[bool] = []
        self.contact_steps: list[int] = []
        self.velocity_in: np.ndarray | None = None  # velocity in the state before the step
        self.x_in: np.ndarray | None = None  # centre in the state before the step
        self.x_before: np.ndarray | None = None  # centre one state earlier


class BallScenario:
    """Balls launched at the character (see the module docstring).

    Args:
        launches: the balls to launch, planned at :meth:`reset`.
        ccd: continuous collision detection for the balls (keep it on: fast balls tunnel otherwise).
        hold_links: the links that hold a caught ball together (both must be near it).
        body_link: a link that holds a caught ball alone (against the chest).
        hold_radius: max distance from the ball's centre to those links' centres of mass, m.
        hold_speed: max speed of the ball relative to them, m/s.
        hold_time: how long the ball must be held at the end of the run to count as caught, s.
        live_flight_time: flight time of a ball launched with :meth:`launch_now`, s.
        release_height: launch height of a ball without a direction, m (:mod:`.launch`).
        exchange_gap: contact-free time that ends a ball's first exchange with the character, s.
        drop_speed: a ball that leaves the character slower than this and reaches the ground is dropped, m/s.

    Attributes:
        events: contact events so far (one per ball, link and step; see :mod:`.contacts`).
        plans: the solved launches, in ``launches`` order, then the ones of :meth:`launch_now`.
        times: time after each recorded step, s.
    """

    def __init__(self, launches: Sequence[Launch] = (), *, ccd: bool = True,
                 hold_links: Sequence[str] = ("left_hand", "right_hand"), body_link: str | None = "chest",
                 hold_radius: float = 0.3, hold_speed: float = 1.0, hold_time: float = 0.5,
                 live_flight_time: float = 0.5, release_height: float = RELEASE_HEIGHT,
                 exchange_gap: float = 0.25, drop_speed: float = 2.0) -> None:
        self.launches = tuple(launches)
        for launch in self.launches:
            if not isinstance(launch, Launch):
                raise ConfigError(f"BallScenario takes Launch objects, got {launch!r}")
            check_launch(launch)
        for name, x in (("hold_radius", hold_radius), ("hold_speed", hold_speed), ("hold_time", hold_time),
                        ("live_flight_time", live_flight_time), ("release_height", release_height),
                        ("exchange_gap", exchange_gap), ("drop_speed", drop_speed)):
            if not (np.isfinite(x) and x > 0):
                raise ConfigError(f"BallScenario: {name} must be positive, got {x}")
        self.ccd = ccd
        self.hold_links = tuple(hold_links)
        self.body_link = body_link
        self.hold_radius = float(hold_radius)
        self.hold_speed = float(hold_speed)
        self.hold_time = float(hold_time)
        self.live_flight_time = float(live_flight_time)
        self.release_height = float(release_height)
        self.exchange_gap = float(exchange_gap)
        self.drop_speed = float(drop_speed)
        self.events: list[dict] = []
        self.times: list[float] = []
        self._balls: list[_Ball] = []
        self._sim = None
        self._kin = None
        self._hold_idx: tuple[list[int], int | None] | None = None
        self._body: BodyState | None = None  # the character's link state after the last step

    @property
    def _client(self) -> int | None:
        """The PyBullet client of the simulation this scenario runs in. Read from it, never kept: a
        snapshot restores every plain attribute, and a client id kept as one would come back from the
        world that saved it (a search's forked worker then launched its balls into its parent's copy)."""
        return None if self._sim is None else self._sim.world.client

    # -- hooks --------------------------------------------------------------------------
    def reset(self, sim) -> None:
        """Forget the last run, plan every launch for this one and make its ball bodies, parked.

        Every planned ball's body is made here, before the first step, and parked (held still in the
        air, far from everything) until its launch: a world then holds the same bodies, with the same
        ids, whatever it did before, so an engine state saved in one world restores in another built
        the same way (a search's worker processes restore each other's states across a launch)."""
        keep = [b.body for b in self._balls[:len(self.launches)]] if self._sim is sim else []
        for b in self._balls[len(keep):]:  # balls launched by hand (the GUI) go
            if b.body is not None and self._client is not None:
                remove_ball(self._client, b.body)
        self._sim = sim
        self._kin = sim.model.kinematics()
        self.events = []
        self.times = []
        self._balls = [_Ball(plan_launch(launch, sim.reference, sim.model, sim.opt.dt, sim.t, self._kin,
                                         self.release_height, sim.opt.substeps)) for launch in self.launches]
        for k, b in enumerate(self._balls):
            b.body = keep[k] if k < len(keep) and keep[k] is not None else spawn_ball(
                self._client, b.plan.preset, _parking(k), ccd=self.ccd)
            self._park(k, b)
        if self.launches:
            _warn_if_coarse(self.launches, sim, self._kin)
        names = sim.character.link_names
        hands = [names.index(n) for n in self.hold_links if n in names]
        body = names.index(self.body_link) if self.body_link in names else None
        self._hold_idx = (hands if len(hands) == len(self.hold_links) else [], body)
        self._body = BodyState.read(sim.character) if self._balls else None

    def before_step(self, sim, t: float) -> None:
        """Launch the balls whose time has come; hold the others where they are parked."""
        for k, b in enumerate(self._balls):
            if b.launched or b.body is None:  # flying, or removed (remove_balls)
                continue
            if b.first_step is None and t >= b.plan.spawn_time - 0.5 * sim.opt.dt:
                self._spawn(b)
            else:
                self._park(k, b)

    def after_substep(self, sim, t: float) -> None:
        """Read the balls' contacts after one physics step that ended at ``t`` (contact events)."""
        if not self._balls:
            return
        body_in, body_out = self._body, BodyState.read(sim.character)
        self._body = body_out
        client, h = self._client, sim.world.physics_dt
        step = len(self.times)  # the control step under way
        for k, b in enumerate(self._balls):
            if not b.launched:
                continue
            pos, vel = ball_state(client, b.body)
            moved = None if b.x_before is None else b.x_in - b.x_before
            contacts = read_contacts(client, b.body, sim.character, t, h, ball=k, speed=float(np.linalg.norm(vel)),
                                     velocity_in=b.velocity_in, body_in=body_in, displacement_in=moved)
            if contacts:
                if not b.contact_steps or b.contact_steps[-1] != step:
                    b.contact_steps.append(step)
                self.events.extend(c.as_event() for c in contacts)
            b.velocity_in = vel
            b.x_before, b.x_in = b.x_in, pos
            # a bounce lasts a physics step or two: read the ground here, not only after the control step
            b.ground_now = b.ground_now or touching(client, b.body, sim.world.ground)

    def after_step(self, sim, t: float) -> None:
        """Record the balls after the control step that ended at ``t`` (contacts: :meth:`after_substep`)."""
        self.times.append(float(t))
        step = len(self.times) - 1
        if not self._balls:
            return
        client, state = self._client, self._body
        for b in self._balls:
            if not b.launched:
                continue
            pos, vel = ball_state(client, b.body)
            if b.first_step is None:
                b.first_step = step
            b.pos.append(pos)
            b.vel.append(vel)
            b.ground.append(b.ground_now or touching(client, b.body, sim.world.ground))
            b.ground_now = False
            b.held.append(self._held(pos, vel, state))

    # -- trial steps (the simulation's peek) -------------------------------------------------
    def may_touch(self, sim) -> bool:
        """Whether a ball may touch the character within the next step (a cheap bound).

        True when some ball's centre is within its radius, a link's reach (0.6 m from the link's
        centre of mass) and the distance both can close in one step of a link's centre of mass.
        """
        if not self._balls or self._body is None:
            return False
        body, dt = self._body, sim.opt.dt
        link_speed = float(np.linalg.norm(body.linear, axis=1).max()) + 2.0 * float(
            np.linalg.norm(body.angular, axis=1).max()) * 0.3
        for b in self._balls:
            if not b.launched or b.x_in is None:
                continue
            gap = float(np.linalg.norm(body.com - b.x_in, axis=1).min())
            reach = b.plan.preset.radius + 0.6 + (float(np.linalg.norm(b.velocity_in)) + link_speed) * dt
            if gap <= reach:
                return True
        return False

    def mark(self) -> tuple:
        """The contact book-keeping now, to :meth:`rewind` to after a trial step."""
        return (len(self.events), self._body,
                [(b.velocity_in, b.x_in, b.x_before, len(b.contact_steps), b.ground_now) for b in self._balls])

    def events_since(self, mark: tuple) -> list[dict]:
        """The contact events added since ``mark``."""
        return self.events[mark[0]:]

    def rewind(self, mark: tuple, announce: Sequence[dict] = ()) -> None:
        """Back to ``mark`` (after the world went back to the same state); ``announce`` events are
        appended as already known. The event list is replaced by a new list, so a gain schedule
        reading it replays it."""
        n, self._body, balls = mark
        self.events = self.events[:n] + list(announce)
        for b, (v_in, x_in, x_before, n_steps, ground_now) in zip(self._balls, balls):
            b.velocity_in, b.x_in, b.x_before, b.ground_now = v_in, x_in, x_before, ground_now
            del b.contact_steps[n_steps:]

    # -- GUI ------------------------------------------------------------------------------
    def launch_now(self, launch: Launch, sim=None) -> int:
        """Launch a ball at once at ``launch.target_link``; returns its index.

        It meets the link's current simulated position, moved on by the reference's motion
        over ``live_flight_time`` s, ``live_flight_time`` s from now, with ``launch``'s speed,
        direction, offset and ball (its ``impact_time`` and ``flight_time`` are ignored).
        """
        sim = sim or self._sim
        if sim is None:
            raise ConfigError("launch_now: the scenario has not been reset by a simulation yet")
        check_launch(launch)
        dt, t = sim.opt.dt, sim.t
        flight = max(round(self.live_flight_time / dt), 1) * dt
        pos, quat = sim.character.link_pose(launch.target_link)
        offset = np.asarray(launch.offset, dtype=float)
        here = pos + Rotation.from_quat(quat).apply(offset)
        kin = self._kin or sim.model.kinematics()
        ref_now, _ = aim_point(sim.model, sim.reference, launch.target_link, t, offset, kin)
        ref_then, ref_vel = aim_point(sim.model, sim.reference, launch.target_link, t + flight, offset, kin)
        live = replace(launch, impact_time=t + flight, flight_time=flight)
        plan = solve_launch(live, here + ref_then - ref_now, ref_vel, heading(sim.reference, t + flight), t,
                            dt / sim.opt.substeps, self.release_height)
        b = _Ball(plan)
        self._balls.append(b)
        b.body = spawn_ball(self._client, plan.preset, plan.position, plan.velocity, ccd=self.ccd)
        self._spawn(b)
        if self._body is None:
            self._body = BodyState.read(sim.character)
        return len(self._balls) - 1

    # -- results ----------------------------------------------------------------------------
    @property
    def plans(self) -> list[LaunchPlan]:
        return [b.plan for b in self._balls]

    @property
    def n_balls(self) -> int:
        return len(self._balls)

    def ball_positions(self) -> np.ndarray:
        """Ball centres per recorded step ``(N, B, 3)`` m; NaN before a ball exists."""
        return self._per_step("pos")

    def ball_velocities(self) -> np.ndarray:
        """Ball velocities per recorded step ``(N, B, 3)`` m/s; NaN before a ball exists."""
        return self._per_step("vel")

    def _per_step(self, attr: str) -> np.ndarray:
        out = np.full((len(self.times), len(self._balls), 3), np.nan)
        for k, b in enumerate(self._balls):
            if b.first_step is not None and getattr(b, attr):
                rows = np.array(getattr(b, attr))
                out[b.first_step:b.first_step + len(rows), k] = rows
        return out

    def outcomes(self) -> list[BallOutcome]:
        """One :class:`BallOutcome` per ball (module docstring for the definitions)."""
        return [self._outcome(k, b) for k, b in enumerate(self._balls)]

    def to_dict(self) -> dict:
        """Plans and outcomes, JSON-able."""
        return {"plans": [p.to_dict() for p in self.plans], "outcomes": [o.to_dict() for o in self.outcomes()]}

    def remove_balls(self) -> None:
        """Remove every ball body from the simulation (records are kept)."""
        for b in self._balls:
            if b.body is not None and self._client is not None:
                remove_ball(self._client, b.body)
            b.body = None
            b.launched = False

    # -- internals ----------------------------------------------------------------------------
    def _spawn(self, b: _Ball) -> None:
        """Launch ``b``: its parked body goes to the planned position and velocity, collisions on."""
        pl, client = b.plan, self._client
        p.resetBasePositionAndOrientation(b.body, list(map(float, pl.position)), [0.0, 0.0, 0.0, 1.0],
                                          physicsClientId=client)
        p.resetBaseVelocity(b.body, list(map(float, pl.velocity)), [0.0, 0.0, 0.0], physicsClientId=client)
        b.launched = True
        b.velocity_in = np.array(pl.velocity)
        b.x_in, b.x_before = np.array(pl.position), None

    def _park(self, k: int, b: _Ball) -> None:
        """Hold ball ``k``'s body still at its parking place, high in the air far from everything
        (gravity moved it 1-2 mm in the last step). Its collision filter stays as it is: changing one
        takes the body out of the engine's world and puts it back, and a saved engine state no longer
        finds it ("didn't find bodyUniqueId")."""
        client = self._client
        p.resetBasePositionAndOrientation(b.body, _parking(k), [0.0, 0.0, 0.0, 1.0], physicsClientId=client)
        p.resetBaseVelocity(b.body, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)

    def _held(self, pos: np.ndarray, vel: np.ndarray, state: BodyState) -> bool:
        hands, body = self._hold_idx
        return is_held(pos, vel, state.com[hands], state.linear[hands],
                       None if body is None else state.com[body], None if body is None else state.linear[body],
                       self.hold_radius, self.hold_speed)

    def _leg_links(self) -> set[str]:
        """Links below a hip joint (a ball they strike is kicked)."""
        kin = self._kin
        out = set()
        for link in kin.links:
            node = link
            while node in kin.joint_by_child:
                j = kin.joint_by_child[node]
                if "hip" in j.name:
                    out.add(link)
                    break
                node = j.parent
        return out

    def _exit_index(self, b: _Ball) -> int | None:
        """Record index of the ball's state one step after its first exchange with the character.

        The exchange is the first run of contact steps without a gap of ``exchange_gap`` s: a ball
        that rolls along the forearms into the hands is still in it; one that falls onto a shin
        half a second later is not. ``None`` without contact; the last record if still touching.
        """
        if not b.contact_steps or not b.pos:
            return None
        dt = self._sim.opt.dt if self._sim is not None else 1.0 / 60.0
        gap = max(int(np.ceil(self.exchange_gap / dt - 1e-9)), 1)
        last = b.contact_steps[0]
        for s in b.contact_steps[1:]:
            if s - last > gap:
                break
            last = s
        return min(last + 1 - b.first_step, len(b.pos) - 1)

    def _outcome(self, k: int, b: _Ball) -> BallOutcome:
        evs = [e for e in self.events if e["ball"] == k]
        first = evs[0] if evs else None
        target = [e for e in evs if e["link"] == b.plan.link]
        links = tuple(dict.fromkeys(e["link"] for e in evs))
        n = len(b.pos)
        i = self._exit_index(b)
        exit_v = None if i is None else np.asarray(b.vel[i])
        held_time = trailing_run(b.held) * (self._sim.opt.dt if self._sim is not None else 0.0)
        caught = bool(evs) and held_time >= self.hold_time - 1e-9
        # the first ground touch after the ball was in the air following its first character
        # contact (or its launch): a ball at rest on the ground does not "drop"
        ground_time = None
        start = (b.contact_steps[0] - b.first_step) if b.contact_steps else 0
        airborne = False
        for j in range(start, n):
            airborne = airborne or not b.ground[j]
            if airborne and b.ground[j]:
                ground_time = self.times[b.first_step + j]
                break
        speed = None if exit_v is None else float(np.linalg.norm(exit_v))
        radius = b.plan.preset.radius
        on_ground = bool(n) and (bool(b.ground[-1]) or float(b.pos[-1][2]) <= radius + GROUND_TOLERANCE)
        was_held = any(b.held[start:]) if n else False
        if not evs:
            fate = "rolling" if on_ground else "flying"
        elif caught:
            fate = "caught"
        elif ground_time is not None and (was_held or (speed is not None and speed < self.drop_speed)):
            fate = "dropped"
        elif first["link"] in self._leg_links():
            fate = "kicked"
        else:
            fate = "deflected"
        return BallOutcome(
            ball=k, name=b.plan.preset.name, target_link=b.plan.link, planned_impact_time=b.plan.impact_time,
            first_contact_time=None if first is None else first["t"],
            first_touch_time=None if first is None else first["t_touch"],
            first_contact_link=None if first is None else first["link"],
            first_target_contact_time=target[0]["t"] if target else None, links=links,
            impulse=float(sum(e["impulse"] for e in evs)),
            exit_velocity=None if exit_v is None else tuple(map(float, exit_v)), exit_speed=speed,
            exit_direction=None if not speed else tuple(map(float, exit_v / speed)),
            caught=caught, held_time=float(held_time), dropped=fate == "dropped",
            ground_time=ground_time, outcome=fate, on_ground=on_ground)
