"""The simulation loop: one control update per step, recorded.

At step ``n`` (time ``t_n``) the loop reads the character's state, samples
the reference at ``t_{n+1} = t_n + dt`` (the target every controller gets),
asks the gain schedule for the gains at ``t_n``, computes generalized forces,
handles the root (anchored: the root's share becomes an external wrench on the
base; kinematic: the base is also set to the reference at every step; free: no
root force), steps PyBullet ``substeps`` times (``dt / substeps`` each, the
same forces throughout; SPD's prediction knows it) and records the result.

Contacts that start within a step. A ball found touching the character after
a step was resolved *during* that step, with the gains chosen before it. With
``peek`` (default) and a gain schedule, a step in which a ball may touch (the
scenario's ``may_touch``) is first taken on trial: if it produced contact
events, the world and the scenario go back to the step's start, the events
are announced at their times, and the step is recomputed with the gains the
schedule gives at the first contact (the reaction gains), so the reaction acts
from the contact step itself.

Divergence (NaN, runaway speeds, joint speeds pinned at PyBullet's clamp where it
is not lifted: :meth:`~tracker.sim.world.World.unclamp`) stops the run with a report
naming the joints whose torque limits were saturated, and keeps what was recorded.
A free root that has *fallen* (:mod:`tracker.sim.fall`: its root below ``fall_height``
times the clip's, a link the clip holds up on the ground, or thrown off its feet) goes on:
a fall is an outcome, not an error, and ``meta["fell_at"]`` and ``meta["fall_reason"]`` say
when and why.

A free root's contacts with the ground. SPD's prediction holds the stance feet's
contacts (balance, :mod:`tracker.control.balance`) and, with or without balance,
those of every other link touching the ground (a hand, a knee, the pelvis of a
falling or lying body: :func:`~tracker.control.balance.contact_rows`). The servo
still reacts to what the engine does only at the next step, so in a step where
such a link meets the ground (faster than :data:`IMPACT_SPEED`) the engine's solve
also holds every joint at SPD's predicted velocity, with the torque it has left
below its limit (:meth:`~tracker.sim.world.World.hold_velocities`): an impact that
would whip a light hand within the step meets the servo's reserve. While only the
feet touch the ground none of this acts. Nor with several physics steps per
control step (``substeps``): the torque then stays while the engine's contacts
change from one physics step to the next, and a contact the prediction held for
the whole step may be gone after the first (measured on the free-root CMU kick
under balance, falling: with the rows its left wrist reached PyBullet's clamp at
8 substeps and 82 rad/s at 4, without them 28 and 39); such runs are as before.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Literal

import numpy as np

from tracker.control.base import Gains, State, Target
from tracker.control.registry import create as create_controller
from tracker.errors import SimulationError
from tracker.retarget.reference import Reference, SampleMemo
from tracker.quiet import quiet_stdio
from tracker.sim.recording import Recording
from tracker.sim.fall import FallWatch
from tracker.sim.support import other_contacts, settled_support
from tracker.sim.world import World, WorldSettings

RootMode = Literal["anchored", "kinematic", "free"]
ROOT_MODES: tuple[str, ...] = ("anchored", "kinematic", "free")
#: A peeking controller's checkpoint is saved every this many control steps (tracker.sim.state;
#: saveState costs 2-3 humanoid control steps, a replayed step a third of one; 3, 4, 6, 8 and 12
#: measured alike within the shared machine's noise, 6 the cheapest most often). 0: never (a
#: saveState around every peek).
REWIND_EVERY = 6
#: A link other than the feet that meets the ground faster than this (m/s; beyond what its gap takes
#: up within the step) starts an impact: the step holds the joints at SPD's prediction in the engine's
#: solve (Simulation._plan_reserve). Resting contacts move at a few mm/s (median 1-3 mm/s lying, 95 %
#: under 0.5 m/s); 1.5-6 % of a lying body's steps are impacts.
IMPACT_SPEED = 0.3
_UNREAD = object()  # the other links' contacts were not read this step
#: PyBullet clamps joint speeds to 100 rad/s; a joint sitting at the clamp has blown up (where the
#: simulation does not lift it: :meth:`tracker.sim.world.World.unclamp`).
PYBULLET_SPEED_CLAMP = 100.0


@dataclass(frozen=True)
class SimOptions:
    """How to simulate.

    Attributes:
        controller: ``spd``, ``pd``, ``native``, ``analytic_pd`` or ``vt`` (any registered name).
        dt: physics (= control) time step, s.
        root: ``anchored``, ``kinematic`` or ``free``.
        target_velocity: ``ref`` or ``zero``.
        gain_scale: multiplies every joint's kp and kd.
        root_kp: stiffness of the anchored root: (linear N/m, angular N·m/rad).
        root_kd_ratio: root kd as a multiple of ``kp·dt``.
        max_speed: joint angular speed (rad/s) or base linear speed (m/s)
            above which the run counts as diverged. Just below PyBullet's 100 rad/s
            clamp (lifted for SPD with one physics step per control step:
            :meth:`~tracker.sim.world.World.unclamp`): a light hand or foot struck by a ball
            may spin at 60-90 rad/s for a step and recover.
        start: clip time at which the run starts, s.
        solver_iterations: PyBullet's constraint-solver iterations per step.
        substeps: physics steps per control step (:class:`~tracker.sim.world.WorldSettings`).
        peek: recompute a step in which a ball contact begins with the schedule's gains at the
            contact (module docstring).
        fall_height: a free root below this fraction of the reference root's height has fallen.
        controller_options: extra keyword options for the controller's factory, as
            ``(name, value)`` pairs (e.g. ``(("f0", "peek"),)`` for ``vt``).
    """

    controller: str = "spd"
    dt: float = 1.0 / 60.0
    root: RootMode = "anchored"
    target_velocity: str = "ref"
    gain_scale: float = 1.0
    root_kp: tuple[float, float] = (2.0e5, 2.0e5)
    root_kd_ratio: float = 1.0
    max_speed: float = 95.0
    start: float = 0.0
    solver_iterations: int = 50
    #: extra keyword options for the controller's factory, as ``(name, value)`` pairs
    #: (e.g. ``(("prediction", "doubled"), ("partition", True))`` for ``analytic_pd``).
    controller_options: tuple[tuple[str, object], ...] = ()
    substeps: int = 1
    peek: bool = True
    fall_height: float = 0.5
    #: CoM balance feedback (:class:`tracker.control.balance.BalanceOptions`), spd/pd only; None: off.
    balance: object | None = None
    #: PD-target offsets (:class:`tracker.sim.offsets.OffsetTrack`): the servo aims at
    #: ``reference ⊕ Δ(t)``; the recording's ``q_ref`` stays the clip. None: none.
    offsets: object | None = None


@dataclass
class StepHooks:
    """Optional callbacks: a scenario (balls) and a gain schedule."""

    before_step: list[Callable] = field(default_factory=list)
    after_step: list[Callable] = field(default_factory=list)


class Simulation:
    """Tracks a :class:`Reference` with a character in a PyBullet world.

    Args:
        model: the character model (:func:`tracker.character.model.load_model`).
        reference: the clip in the model's coordinates.
        options: :class:`SimOptions`.
        gains_fn: ``gains_fn(t, base_gains) -> Gains`` (a gain schedule); default constant.
        scenario: object with ``reset(sim)``, ``before_step(sim, t)``, ``after_step(sim, t)``.
        gui: open a GUI window.
    """

    def __init__(self, model, reference: Reference, options: SimOptions | None = None, *,
                 gains_fn: Callable | None = None, scenario=None, gui: bool = False, world: World | None = None) -> None:
        from tracker.character.character import Character

        self.opt = opt = options or SimOptions()
        if opt.root not in ROOT_MODES:
            raise SimulationError(f"root mode {opt.root!r} is not one of: {', '.join(ROOT_MODES)}")
        self.model = model
        self.reference = reference
        self.world = world or World(WorldSettings(dt=opt.dt, substeps=opt.substeps,
                                                  solver_iterations=opt.solver_iterations), gui=gui)
        if world is not None:
            world.set_substeps(opt.substeps)
        with quiet_stdio():  # PyBullet's URDF importer prints warnings we cannot act on
            self.character = Character.load(self.world.client, model)
        # PyBullet's speed clamp acts before the contact solve (World.unclamp: lifted when, and why only then)
        self._unclamped = opt.controller == "spd" and opt.substeps == 1
        if self._unclamped:
            self.world.unclamp(self.character)
        self.layout = lay = self.character.layout
        if tuple(s.name for s in lay.joints) != tuple(n for n, _ in reference.joints):
            raise SimulationError(
                f"reference {reference.source or ''} was made for model {reference.model!r}; "
                f"its joints do not match model {model.name!r}"
            )
        self.base_gains = self._base_gains()
        self.gains_fn = gains_fn
        self.scenario = scenario
        passive = np.zeros(lay.nv, dtype=bool)
        if opt.root == "free":
            passive[:6] = True
        kwargs = {"target_velocity": opt.target_velocity}
        if opt.controller in ("spd", "pd", "analytic_pd", "timed_pd", "vt"):
            kwargs["passive"] = passive
        if opt.controller in ("spd", "vt"):
            kwargs["substeps"] = opt.substeps  # SPD's prediction spans the control step's physics steps
        if opt.controller == "native":
            kwargs["character"] = self.character
        if opt.controller == "timed_pd":
            kwargs["reference"] = reference
        if opt.controller == "vt":  # peek steps the character's world; it refuses a kinematic root
            from tracker.sim.peek import EnginePeek

            kwargs.update(engine=EnginePeek(self.character, opt.substeps), root=opt.root)
        kwargs.update(dict(opt.controller_options))
        self.controller = create_controller(opt.controller, layout=lay, dynamics=self.character, **kwargs)
        if scenario is not None and hasattr(self.controller, "bind"):
            self.controller.bind(scenario)  # controllers that react to contacts watch its events
        self._native = bool(getattr(self.controller, "drives_root_kinematically", False))
        self.offsets = opt.offsets
        if self.offsets is not None:
            try:
                if getattr(reference, "target", None) is not None:
                    raise SimulationError("offset tracks need a clip reference, not a keyframe track")
                self.offsets.check_layout(lay, "controller.offsets")
            except Exception:
                if world is None:
                    self.world.close()  # do not leak the client
                raise
        # A controller that peeks (vt f0=peek) goes back by restore + replay while run() alone
        # steps a world it owns (tracker.sim.state.Rewind): a saveState every few steps, not every step.
        self._owns_world = world is None and not gui
        self._rewind = None
        self._rewind_saves = 0  # checkpoints saved by rewinds lent so far (recording meta)
        self._balance_feedback()
        self.support = None  # the support polygon the balance feedback last used
        self.balance_term = None  # and its last feedback
        # A free root's SPD sees the contacts of every link with the ground (contact_rows), and holds
        # the joints at its prediction in the engine's solve when another link than a foot lands; with
        # one physics step per control step only (the module docstring says why).
        self._ground_rows = opt.root == "free" and self._unclamped
        self._reserve = None
        self._fall, self._samples = FallWatch(self), SampleMemo()
        self.t = opt.start
        self.gains = self.base_gains
        try:
            self.reset()
        except Exception:  # e.g. a stance without a foot on the ground: do not leak the client
            if world is None:
                self.close()
            raise

    # -- set-up -------------------------------------------------------------
    def _base_gains(self) -> Gains:
        opt = self.opt
        c = self.character
        kp = c.kp_vector() * opt.gain_scale
        kd = c.kd_vector(opt.dt) * opt.gain_scale
        kp[0:3], kp[3:6] = opt.root_kp
        kd[0:6] = opt.root_kd_ratio * kp[0:6] * opt.dt
        tau_max = c.torque_limit_vector()
        tau_max[0:6] = np.inf
        if opt.root == "free":
            kp[0:6] = kd[0:6] = 0.0
        return Gains(kp, kd, tau_max)

    def _balance_feedback(self) -> None:
        """``self.balance``, the feedback of ``opt.balance``, and ``self.stepper``, its recovery step (each None
        when off): :func:`tracker.sim.recovery.balance_of`."""
        from tracker.sim.recovery import balance_of

        self.balance, self.stepper = balance_of(self)

    def reset(self) -> None:
        q0, v0 = self.reference.sample(self.opt.start)
        self.character.reset_state(q0, v0)
        self._state = None  # the state read after the last step (None: read it anew)
        self._ref_next = self._aim_last = None  # the last t_{n+1} sample (t, q, v) and aim (_aim), the next t_n's
        self.t = self.opt.start
        if getattr(self, "_rewind", None) is not None:
            self._rewind.invalidate()  # the world was teleported: nothing to replay from
        self.fell_at: float | None = None
        self.fall_reason = ""
        self._others = _UNREAD  # the other links' ground contacts this step's servo read
        self.n_peeks = 0  # steps recomputed because a contact began in them
        self._saturated = np.zeros(self.layout.nv, dtype=int)  # steps at the torque limit, per DOF
        self._steps = 0
        if self.balance is not None:  # it needs a foot on the ground at the start
            self.support = settled_support(self)
            self.balance.reset(q0)
            if self.stepper is not None:
                self.stepper.reset(self.t)
        if self.scenario is not None:
            self.scenario.reset(self)

    # -- stepping -------------------------------------------------------------
    def step(self) -> dict:
        """Advance one control step (``substeps`` physics steps); returns the row to record."""
        opt, c, dt = self.opt, self.character, self.opt.dt
        # The state read after the previous step is still the character's state (only reset()
        # moves it between steps), so it is not read twice.
        q, v = self._state if self._state is not None else c.get_state()
        q_now, v_now = self._reference_now()
        q_next, v_next = self._samples(self.reference, self.t + dt)  # kept by time (SampleMemo: rollouts repeat them)
        self._ref_next = (self.t + dt, q_next, v_next)
        self.gains = self.gains_fn(self.t, self.base_gains) if self.gains_fn else self.base_gains
        scenario = self.scenario
        if scenario is not None:
            scenario.before_step(self, self.t)
        if opt.root == "kinematic" or self._native:
            q, v = q.copy(), v.copy()
            q[0:7], v[0:6] = q_now[0:7], v_now[0:6]
            c.reset_base(q[0:7], v[0:6])
        # A keyframe track (tracker.keyframes) also gives the two keys around t + dt for its servos.
        key_target = getattr(self.reference, "target", None)
        target = (key_target(self.t + dt) if key_target is not None
                  else Target(q_next, v_next, q_now, v_now, t=self.t + dt))
        if self.offsets is not None:  # aim at reference ⊕ Δ (tracker.sim.offsets); rows keep the clip
            aim_now = self._aim(q_now, self.t)
            target = target._replace(q=self._aim(target.q, self.t + dt, keep=True), q_now=aim_now)
        state = State(q, v)
        tau = self._servo(state, target)
        if self._should_peek():
            tau = self._peek(state, target, tau)
        else:
            self._physics(tau)
        if self._rewind is not None:
            self._rewind.record(partial(self._replay, self._command))
        self.t += dt
        if scenario is not None:
            scenario.after_step(self, self.t)
        q1, v1 = c.get_state()
        self._state = (q1, v1)
        self._count(tau, q1, q_next)
        return {"t": self.t, "q": q1, "v": v1, "q_ref": q_next, "v_ref": v_next, "tau": tau, "kp": self.gains.kp}

    def _servo(self, state: State, target: Target) -> np.ndarray:
        """The controller's torques for this step, with the balance feedback and the contacts its
        prediction holds; plans the servo's reserve in the engine's solve (:meth:`_physics`)."""
        opt, dt, q, v = self.opt, self.opt.dt, state[0], state[1]
        self._reserve = None
        others = rows = None  # contacts of links other than the feet (a free-root SPD run's only)
        self._others = _UNREAD
        if self.balance is None:
            if self._ground_rows:
                others = self._others = other_contacts(self.character, self.world.ground)
            rows = self._contact_rows(q, v, others)
            if rows is None:
                tau = self.controller.torques(state, target, self.gains, dt)
            else:
                tau = self.controller.torques(state, target, self.gains, dt, constraints=rows)
        else:
            term = self._balance_term(q, v)
            if self.stepper is not None:  # a recovery step sets the legs' targets (tracker.control.stepping)
                target = self.stepper.update(self.t, q, self.support, term.com, term.com_velocity, target)
            if opt.controller != "spd":
                return self.controller.torques(state, target, self.gains, dt, extra=term.tau)
            self._others = self.support.other_contacts
            if self._ground_rows:
                others = self._others
            # SPD predicts the step with the stance feet held (see tracker.control.balance), and the
            # other links' contacts
            rows = self._contact_rows(q, v, others)
            constraints = rows if term.constraints is None else term.constraints + rows
            tau = self.controller.torques(state, target, self.gains, dt, extra=term.tau, constraints=constraints)
        if rows is not None and float(rows.target.max()) * dt > IMPACT_SPEED:  # an impact begins
            self._plan_reserve(v, tau)
        return tau

    def _contact_rows(self, q: np.ndarray, v: np.ndarray, others):
        """SPD's prediction rows of ``others`` (:func:`tracker.control.balance.contact_rows`), or None."""
        if others is None:
            return None
        from tracker.control.balance import contact_rows

        return contact_rows(self.character, q, v, self.opt.dt, others)

    def _plan_reserve(self, v: np.ndarray, tau: np.ndarray) -> None:
        """Hold the joints at SPD's predicted velocities in the engine's solve of this step, with the
        torque each has left below its limit (:meth:`_physics`, :meth:`World.hold_velocities`)."""
        acc = getattr(self.controller, "acceleration", None)
        if acc is None:
            return
        lim = self.gains.tau_max
        self._reserve = (np.asarray(v, dtype=float), acc * self.opt.dt, np.maximum(lim - np.abs(tau), 0.0))

    def _aim(self, q: np.ndarray, t: float, keep: bool = False) -> np.ndarray:
        """``q ⊕ Δ(t)``; a step's ``t_{n+1}`` aim (``keep``) is reused as the next step's ``t_n`` one (same inputs)."""
        last = self._aim_last
        if last is not None and last[0] is self.offsets and last[1] is q and last[2] == t:
            return last[3]
        out = self.offsets.apply(self.layout, q, t)
        if keep:
            self._aim_last = (self.offsets, q, t, out)
        return out

    def _reference_now(self) -> tuple[np.ndarray, np.ndarray]:
        """The reference at ``t_n``: the previous step's ``t_{n+1}`` sample when the clock agrees."""
        cached = getattr(self, "_ref_next", None)
        if cached is not None and cached[0] == self.t:
            return cached[1], cached[2]
        return self.reference.sample(self.t)

    def _physics(self, tau: np.ndarray) -> None:
        """Apply ``tau`` and take the control step's physics steps (the scenario sees each one)."""
        c, n = self.character, self.opt.substeps
        if not self._native and self.opt.root == "free":
            tau[0:6] = 0.0
        h = self.opt.dt / n
        substep = getattr(self.scenario, "after_substep", None)
        # Joint torques, and the base entries as a world wrench (PyBullet clears both after every
        # step, so they are applied before each substep). A kinematic root is re-set to the reference
        # every control step and also gets the wrench, so that the joints push against a held base,
        # as SPD assumed.
        self._command = apply = None if self._native else c.torque_command(tau)
        reserve = getattr(self, "_reserve", None)
        try:
            for k in range(n):
                if apply is not None:
                    apply()
                if reserve is not None:  # toward the predicted velocity at this substep's end
                    v0, dv, force = reserve
                    self.world.hold_velocities(c, v0 + dv * ((k + 1) / n), force)
                self.world.step()
                if substep is not None:
                    substep(self, self.t + (k + 1) * h)
        finally:
            if reserve is not None:
                self.world.release_velocities(c)

    def _replay(self, apply: Callable[[], None]) -> None:
        """A recorded control step again (a :class:`~tracker.sim.state.Rewind` replay): same torques, same steps."""
        for _ in range(self.opt.substeps):
            apply()
            self.world.step()

    def _lend_rewind(self) -> None:
        """Give a peeking controller a :class:`Rewind` if nothing but this loop can change the world."""
        use = getattr(self.controller, "use_rewind", None)
        if (use is None or REWIND_EVERY < 1 or not self._owns_world or self.scenario is not None
                or self.balance is not None or self._native or self.opt.root == "kinematic"):
            return
        from tracker.sim.state import Rewind

        self._rewind = Rewind(self.world.client, every=REWIND_EVERY)
        use(self._rewind)

    def _return_rewind(self) -> None:
        if self._rewind is not None:
            self.controller.use_rewind(None)
            self._rewind_saves += self._rewind.saves
            self._rewind.close()
            self._rewind = None

    def _should_peek(self) -> bool:
        if not (self.opt.peek and self.gains_fn is not None and self.scenario is not None):
            return False
        may_touch = getattr(self.scenario, "may_touch", None)
        return bool(may_touch is not None and may_touch(self))

    def _peek(self, state: State, target: Target, tau: np.ndarray) -> np.ndarray:
        """Take the step on trial; if a contact began in it, redo it with the gains at the contact."""
        scenario, world = self.scenario, self.world
        saved, mark = world.save(), scenario.mark()
        try:
            self._physics(tau.copy())
            new = scenario.events_since(mark)
            if not new:
                return tau
            t_c = min(float(e["t"]) for e in new)
            world.restore(saved)
            scenario.rewind(mark, announce=new)  # the events are known from the step's start
            gains = self.gains_fn(max(t_c, self.t), self.base_gains)
            if np.array_equal(gains.kp, self.gains.kp) and np.array_equal(gains.kd, self.gains.kd):
                scenario.rewind(mark)
                self._physics(tau)  # same gains: the same step again (deterministic)
                return tau
            self.gains = gains
            self.n_peeks += 1
            scenario.rewind(mark)  # the redone step reports its own contacts
            tau = self.controller.torques(state, target, gains, self.opt.dt)
            self._reserve = None  # planned for the first torques: this prediction holds no contacts
            self._physics(tau)
            return tau
        finally:
            world.forget(saved)

    def _count(self, tau: np.ndarray, q: np.ndarray, q_ref: np.ndarray) -> None:
        """Torque-limit saturation per DOF, and a free root's fall (:mod:`tracker.sim.fall`)."""
        self._steps += 1
        lim = self.gains.tau_max
        self._saturated += np.abs(tau) >= lim * (1 - 1e-9)
        if self.fell_at is None and self.opt.root == "free" and self.layout.has_base:
            reason = self._fall.reason(q, q_ref, self._others, read=self._others is _UNREAD)
            if reason:
                self.fell_at, self.fall_reason = self.t, reason

    def saturation(self) -> dict[str, float]:
        """Share of the steps so far in which each joint had a DOF at its torque limit (joints that had any)."""
        out = {}
        for s in self.layout.joints:
            n = int(self._saturated[s.v].max()) if self._steps else 0
            if n:
                out[s.name] = n / self._steps
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def _saturation_note(self) -> str:
        sat = self.saturation()
        if not sat:
            return ""
        top = ", ".join(f"{name} {share:.0%}" for name, share in list(sat.items())[:4])
        return (f"; torque limits saturated (share of steps): {top} — try lower gains, a smaller dt or "
                "controller.gains.torque_limits=false")
    def _balance_term(self, q: np.ndarray, v: np.ndarray):
        self.support = self._support_of(self.character, self.world.ground)
        self.balance_term = self.balance.term(q, v, self.support)
        return self.balance_term

    def _diverged(self, row: dict) -> str:
        q, v = row["q"], row["v"]
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            return "NaN in the state"
        top = np.abs(v[6:]).max() if len(v) > 6 else -np.inf  # the fastest joint's speed, once
        if top >= PYBULLET_SPEED_CLAMP * 0.99 and not self._unclamped:
            k = int(np.argmax(np.abs(v[6:]))) + 6
            return f"joint {self._joint_at(k)} speed pinned at PyBullet's {PYBULLET_SPEED_CLAMP:.0f} rad/s clamp"
        if top > self.opt.max_speed:
            k = int(np.argmax(np.abs(v[6:]))) + 6
            return f"joint {self._joint_at(k)} runs away at {top:.0f} rad/s"
        speed = np.sqrt(v[0:3].dot(v[0:3]))  # np.linalg.norm(v[0:3]), as it computes a vector's
        if speed > self.opt.max_speed:
            return f"root runs away at {speed:.0f} m/s"
        return ""

    def _joint_at(self, k: int) -> str:
        for s in self.layout.joints:
            if s.v.start <= k < s.v.stop:
                return s.name
        return "root"

    def run(self, duration: float | None = None, progress: bool = False,
            on_step: Callable[[dict], None] | None = None) -> Recording:
        """Simulate ``duration`` seconds (default: to the end of the clip) and record every step.

        Args:
            duration: seconds to simulate.
            progress: show a progress bar.
            on_step: called with every recorded row, to watch the run (progress, live plots); it
                must not change the world, whose steps a peeking controller may replay.
        """
        ref = self.reference
        dt = self.opt.dt
        if duration is None:
            duration = ref.duration - self.opt.start
        n = max(int(round(duration / dt)), 0)
        rows: list[dict] = []
        status, message = "ok", ""
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n, unit="step", leave=False,
                       desc=f"simulating clip time {self.opt.start:.2f}-{self.opt.start + n * dt:.2f} s")
        wall0 = time.perf_counter()
        self._lend_rewind()
        try:
            for _ in range(n):
                try:
                    row = self.step()
                except SimulationError as exc:
                    status, message = "diverged", f"t = {self.t:.3f} s (clip time): {exc}{self._saturation_note()}"
                    break
                rows.append(row)
                reason = self._diverged(row)
                if reason:
                    status, message = "diverged", f"t = {row['t']:.3f} s (clip time): {reason}{self._saturation_note()}"
                    break
                if on_step is not None:
                    on_step(row)
                if bar is not None:
                    bar.update(1)
        finally:
            self._return_rewind()
            if bar is not None:
                bar.close()
        wall = time.perf_counter() - wall0
        return self._recording(rows, status, message, wall)

    def _recording(self, rows: list[dict], status: str, message: str, wall: float) -> Recording:
        lay = self.layout
        stack = lambda k, w: np.array([r[k] for r in rows]) if rows else np.zeros((0, w))
        balls = None
        if self.scenario is not None and hasattr(self.scenario, "ball_positions"):
            balls = self.scenario.ball_positions()
            if balls is not None and len(balls) > len(rows):  # it records every step since reset; keep this run's
                balls = balls[len(balls) - len(rows):]
        return Recording(
            dt=self.opt.dt, joints=tuple((s.name, s.kind) for s in lay.joints),
            t=np.array([r["t"] for r in rows]), q=stack("q", lay.nq), v=stack("v", lay.nv),
            q_ref=stack("q_ref", lay.nq), v_ref=stack("v_ref", lay.nv), tau=stack("tau", lay.nv),
            kp=stack("kp", lay.nv), tau_max=np.array(self.base_gains.tau_max),
            events=list(getattr(self.scenario, "events", [])) if self.scenario is not None else [],
            balls=balls,
            meta={"model": self.model.name, "controller": self.opt.controller, "root": self.opt.root,
                  "dt": self.opt.dt, "target_velocity": self.opt.target_velocity,
                  "gain_scale": self.opt.gain_scale, "clip": self.reference.source, "wall_s": wall,
                  "substeps": self.opt.substeps, "fell_at": self.fell_at, "fall_reason": self.fall_reason, "peeks": self.n_peeks,
                  "rewind_saves": self._rewind_saves,
                  "saturation_by_joint": self.saturation(),
                  **(self.controller.report() if hasattr(self.controller, "report") else {})},
            status=status, message=message,
        )

    def close(self) -> None:
        self.world.close()
