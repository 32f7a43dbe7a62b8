"""The simulation loop: one control update per physics step, recorded.

At step ``n`` (time ``t_n``) the loop reads the character's state, samples
the reference at ``t_{n+1} = t_n + dt`` (the target every controller gets),
asks the gain schedule for the gains at ``t_n``, computes generalized forces,
handles the root (anchored: the root's share becomes an external wrench on the
base; kinematic: the base is also set to the reference at every step; free: no
root force),
steps PyBullet and records the result. Divergence (NaN, runaway speeds,
joint speeds pinned at PyBullet's clamp) stops the run with a report and
keeps what was recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np

from tracker.control.base import Gains, State, Target
from tracker.control.registry import create as create_controller
from tracker.errors import SimulationError
from tracker.retarget.reference import Reference
from tracker.sim.quiet import quiet_stdio
from tracker.sim.recording import Recording
from tracker.sim.world import World, WorldSettings

RootMode = Literal["anchored", "kinematic", "free"]
ROOT_MODES: tuple[str, ...] = ("anchored", "kinematic", "free")
#: PyBullet clamps joint speeds to 100 rad/s; a joint sitting at the clamp has blown up.
PYBULLET_SPEED_CLAMP = 100.0


@dataclass(frozen=True)
class SimOptions:
    """How to simulate.

    Attributes:
        controller: ``spd``, ``pd`` or ``native``.
        dt: physics (= control) time step, s.
        root: ``anchored``, ``kinematic`` or ``free``.
        target_velocity: ``ref`` or ``zero``.
        gain_scale: multiplies every joint's kp and kd.
        root_kp: stiffness of the anchored root: (linear N/m, angular N·m/rad).
        root_kd_ratio: root kd as a multiple of ``kp·dt``.
        max_speed: joint angular speed (rad/s) or base linear speed (m/s)
            above which the run counts as diverged. Just below PyBullet's
            100 rad/s clamp: a light hand or foot struck by a ball may spin at
            60-90 rad/s for a step and recover.
        start: clip time at which the run starts, s.
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
    #: CoM balance feedback (:class:`tracker.control.balance.BalanceOptions`), spd/pd only; None: off.
    balance: object | None = None


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
        self.world = world or World(WorldSettings(dt=opt.dt, solver_iterations=opt.solver_iterations), gui=gui)
        with quiet_stdio():  # PyBullet's URDF importer prints warnings we cannot act on
            self.character = Character.load(self.world.client, model)
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
        if opt.controller in ("spd", "pd"):
            kwargs["passive"] = passive
        if opt.controller == "native":
            kwargs["character"] = self.character
        self.controller = create_controller(opt.controller, layout=lay, dynamics=self.character, **kwargs)
        self._native = bool(getattr(self.controller, "drives_root_kinematically", False))
        self.balance = self._balance_feedback()
        self.support = None  # the support polygon the balance feedback last used
        self.balance_term = None  # and its last feedback
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

    def _balance_feedback(self):
        """The balance feedback of ``opt.balance`` (None when off)."""
        b = self.opt.balance
        if b is None or not getattr(b, "enabled", False):
            return None
        if self.opt.controller not in ("spd", "pd"):
            raise SimulationError(f"balance feedback needs controller spd or pd, not {self.opt.controller!r}")
        from tracker.control.balance import BalanceFeedback
        from tracker.sim.support import support_of

        self._support_of = support_of
        return BalanceFeedback(self.character, b)

    def reset(self) -> None:
        q0, v0 = self.reference.sample(self.opt.start)
        self.character.reset_state(q0, v0)
        self._state = None  # the state read after the last step (None: read it anew)
        self.t = self.opt.start
        if self.balance is not None:
            self._check_stance(q0)
        if self.scenario is not None:
            self.scenario.reset(self)

    def _check_stance(self, q0: np.ndarray) -> None:
        """Balance needs a foot on the ground at the start: the engine's contacts at ``q0``."""
        from tracker.errors import ConfigError
        from tracker.sim.support import support_of, touching_links

        self.world.settle_contacts(self.character)
        self.support = support_of(self.character, self.world.ground)
        if self.support.empty:
            others = touching_links(self.character, self.world.ground)
            where = f"only {', '.join(others)} touch the ground" if others else "nothing touches the ground"
            raise ConfigError(f"{self.reference.source or 'reference'}: balance needs a foot on the ground at "
                              f"t = {self.opt.start:g} s, but {where} (feet: {', '.join(self.model.feet)})")
        self.balance.reset(q0)

    # -- stepping -------------------------------------------------------------
    def step(self) -> dict:
        """Advance one physics step; returns the row to record."""
        opt, c, dt = self.opt, self.character, self.opt.dt
        # The state read after the previous step is still the character's state (only reset()
        # moves it between steps), so it is not read twice.
        q, v = self._state if self._state is not None else c.get_state()
        q_next, v_next = self.reference.sample(self.t + dt)
        self.gains = self.gains_fn(self.t, self.base_gains) if self.gains_fn else self.base_gains
        if self.scenario is not None:
            self.scenario.before_step(self, self.t)
        if opt.root == "kinematic" or self._native:
            q_now, v_now = self.reference.sample(self.t)
            q, v = q.copy(), v.copy()
            q[0:7], v[0:6] = q_now[0:7], v_now[0:6]
            c.reset_base(q[0:7], v[0:6])
        if self.balance is None:
            tau = self.controller.torques(State(q, v), Target(q_next, v_next), self.gains, dt)
        else:
            term = self._balance_term(q, v)
            # SPD predicts the step with the stance feet held (see tracker.control.balance)
            kwargs = {"constraints": term.constraints} if opt.controller == "spd" else {}
            tau = self.controller.torques(State(q, v), Target(q_next, v_next), self.gains, dt,
                                          extra=term.tau, **kwargs)
        if not self._native:
            if opt.root == "free":
                tau[0:6] = 0.0
            # Joint torques, and the base entries as a world wrench. A kinematic root is re-set to
            # the reference every step and also gets the wrench, so that within the step the
            # joints push against a held base, as the SPD solve assumed.
            c.apply_torques(tau)
        self.world.step()
        self.t += dt
        if self.scenario is not None:
            self.scenario.after_step(self, self.t)
        q1, v1 = c.get_state()
        self._state = (q1, v1)
        return {"t": self.t, "q": q1, "v": v1, "q_ref": q_next, "v_ref": v_next, "tau": tau, "kp": self.gains.kp}

    def _balance_term(self, q: np.ndarray, v: np.ndarray):
        self.support = self._support_of(self.character, self.world.ground)
        self.balance_term = self.balance.term(q, v, self.support)
        return self.balance_term

    def _diverged(self, row: dict) -> str:
        q, v = row["q"], row["v"]
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            return "NaN in the state"
        jv = np.abs(v[6:])
        if jv.size and jv.max() >= PYBULLET_SPEED_CLAMP * 0.99:
            k = int(np.argmax(jv)) + 6
            return f"joint {self._joint_at(k)} speed pinned at PyBullet's {PYBULLET_SPEED_CLAMP:.0f} rad/s clamp"
        if jv.size and jv.max() > self.opt.max_speed:
            k = int(np.argmax(jv)) + 6
            return f"joint {self._joint_at(k)} runs away at {jv.max():.0f} rad/s"
        if np.linalg.norm(v[0:3]) > self.opt.max_speed:
            return f"root runs away at {np.linalg.norm(v[0:3]):.0f} m/s"
        return ""

    def _joint_at(self, k: int) -> str:
        for s in self.layout.joints:
            if s.v.start <= k < s.v.stop:
                return s.name
        return "root"

    def run(self, duration: float | None = None, progress: bool = False,
            on_step: Callable[[dict], None] | None = None) -> Recording:
        """Simulate ``duration`` seconds (default: to the end of the clip) and record every step."""
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

            bar = tqdm(total=n, unit="step", desc="simulating", leave=False)
        wall0 = time.perf_counter()
        try:
            for _ in range(n):
                try:
                    row = self.step()
                except SimulationError as exc:
                    status, message = "diverged", f"t = {self.t:.3f} s: {exc}"
                    break
                rows.append(row)
                reason = self._diverged(row)
                if reason:
                    status, message = "diverged", f"t = {row['t']:.3f} s: {reason}"
                    break
                if on_step is not None:
                    on_step(row)
                if bar is not None:
                    bar.update(1)
        finally:
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
                  "gain_scale": self.opt.gain_scale, "clip": self.reference.source, "wall_s": wall},
            status=status, message=message,
        )

    def close(self) -> None:
        self.world.close()
