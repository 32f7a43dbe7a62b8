"""``tracker play``: watch a simulation live, launch balls at it and turn its gains while it runs.

:class:`LiveSession` is the simulation side, free of any window: it steps the
:class:`~tracker.sim.simulation.Simulation` in its own headless client, loops
the clip, restarts after a divergence, launches balls through the scenario's
``launch_now`` and applies gain changes through the
:class:`~tracker.control.schedule.GainSchedule`'s ``set`` (so they act from the
next step). It is the target of the window's
:class:`~tracker.viewer.controls.Controls`; tests drive it without a window.

:class:`LivePlayer` is the loop of the window: read the inputs, step the
session at the playback speed against the wall clock (as many steps as are
due, at most :data:`MAX_CATCH_UP` seconds' worth), then show the poses, balls, camera
and text on the :class:`~tracker.viewer.stage.Stage` (the GUI client, where
nothing is simulated). With ``frames`` it runs that many frames unpaced, one
step each (the headless screenshot path), which also measures how fast the
window can simulate.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import tracker.quiet  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402

from tracker.errors import ConfigError, SimulationError, TrackerError
from tracker.viewer.controls import GAIN_PARAMS, KEY_WAS_TRIGGERED, Controls, live_controls
from tracker.viewer.stage import BallView, Stage
from tracker.viewer.window import is_connected

#: Wall time between two drawn frames, s (the GUI itself draws at most every 33 ms).
FRAME_PERIOD = 1.0 / 60.0
#: Most clip time simulated in one frame, s: a longer stall (the machine busy elsewhere) is caught
#: up to this much, beyond it the playback drops the backlog and falls behind real time.
MAX_CATCH_UP = 0.5
#: The push key's push: this force (N) for this long (s) on this link, horizontal, away from the camera.
PUSH_FORCE, PUSH_DURATION, PUSH_LINK = 40.0, 0.2, "chest"
#: The ball the launch key throws when the config has none: a basketball (orange, easy to see
#: against the ground) at the chest, at this speed, m/s.
DEFAULT_LAUNCH_SPEED = 5.0


def _default_launch():
    from tracker.scenarios.base import Launch

    return Launch(ball="basketball", target_link="chest", impact_time=0.0, speed=DEFAULT_LAUNCH_SPEED)


class LiveSession:
    """A simulation that loops its clip and takes changes while it runs.

    Args:
        sim: the simulation; its ``gains_fn`` must come from ``schedule`` (``schedule.bind``)
            for the gain sliders to act, and its scenario must have ``launch_now`` for balls.
        schedule: the :class:`~tracker.control.schedule.GainSchedule` behind ``sim.gains_fn``, or
            None (constant gains: no gain sliders).
        launch: the :class:`~tracker.scenarios.base.Launch` the launch key throws (its
            ``impact_time`` and ``flight_time`` are ignored); default a basketball at the chest.
        end: clip time at which the run loops to its start, s; default the clip's end.

    Attributes:
        row: the last step's row (``Simulation.step``), or None right after a (re)start.
        n_steps: steps taken in all.
        loops: how many times the run started again (end of clip, restart, divergence).
        message: the last thing worth telling the user (a divergence).
    """

    def __init__(self, sim, schedule=None, launch=None, end: float | None = None) -> None:
        self.sim = sim
        self.schedule = schedule
        self.launch = launch if launch is not None else _default_launch()
        ref_end = sim.reference.duration
        self.end = ref_end if end is None else min(float(end), ref_end)
        if not self.end > sim.opt.start:
            raise ConfigError(f"nothing to play: the run would start at clip time {sim.opt.start:g} s and end at {self.end:g} s")
        self.row: dict | None = None
        self.n_steps = 0
        self.loops = 0
        self.message = ""
        #: The window camera's viewing direction (world, (3,)), set by the player; pushes go along it.
        self.camera_forward = np.array([-1.0, 0.0, 0.0])
        self._push: tuple[np.ndarray, int] | None = None  # (world force N, steps left)

    # -- time -------------------------------------------------------------------------
    @property
    def t(self) -> float:
        """Clip time, s."""
        return self.sim.t

    @property
    def dt(self) -> float:
        return self.sim.opt.dt

    def step(self) -> dict | None:
        """One physics step; loops at the end of the clip and restarts after a divergence.

        Returns:
            the step's row, or None if the run started again instead.
        """
        if self.sim.t >= self.end - 0.5 * self.dt:
            self.restart()
            return None
        if self._push is not None:
            self._apply_push()
        try:
            row = self.sim.step()
        except SimulationError as exc:
            self._diverged(str(exc))
            return None
        self.n_steps += 1
        reason = _diverged(row, self.sim.opt.max_speed)
        if reason:
            self._diverged(reason)
            return None
        self.row = row
        return row

    def _diverged(self, reason: str) -> None:
        t = self.sim.t
        self.restart()
        self.message = f"diverged at clip time {t:.2f} s ({reason}); started again"

    def restart(self) -> None:
        """Back to the start of the clip (balls removed, schedule reset)."""
        self._push = None
        self.sim.reset()
        if self.schedule is not None:
            self.schedule.reset()
        self.row = None
        self.loops += 1
        self.message = ""

    # -- controls' target ------------------------------------------------------------------
    def launch_ball(self) -> str:
        """Throw :attr:`launch`'s ball now; returns what happened, for the screen."""
        scenario = self.sim.scenario
        if scenario is None or not hasattr(scenario, "launch_now"):
            raise TrackerError("this run has no ball scenario to launch a ball from")
        k = scenario.launch_now(self.launch, self.sim)
        return f"ball {k + 1} ({self.launch.ball}) launched at the {self.launch.target_link}"

    def push(self) -> str:
        """Push the character (:data:`PUSH_FORCE` N for :data:`PUSH_DURATION` s on :data:`PUSH_LINK`),
        horizontally along the camera's viewing direction; returns what happened, for the screen."""
        d = np.array(self.camera_forward, dtype=float)[:2]
        n = float(np.hypot(*d))
        if not n > 1e-9:
            raise TrackerError("the camera looks straight down: no horizontal direction to push along")
        force = np.array([d[0] / n, d[1] / n, 0.0]) * PUSH_FORCE
        self._push = (force, max(1, int(round(PUSH_DURATION / self.dt))))
        return f"push: {PUSH_FORCE:g} N for {PUSH_DURATION:g} s on the {PUSH_LINK}, away from the camera"

    def _apply_push(self) -> None:
        force, left = self._push
        c = self.sim.character
        k = c.link_index(PUSH_LINK)
        pos = (p.getLinkState(c.body_id, k, physicsClientId=c.client_id)[0] if k >= 0
               else p.getBasePositionAndOrientation(c.body_id, physicsClientId=c.client_id)[0])
        p.applyExternalForce(c.body_id, k, force.tolist(), pos, p.WORLD_FRAME, physicsClientId=c.client_id)
        self._push = (force, left - 1) if left > 1 else None

    def toggle_balance(self) -> str:
        """Switch the CoM balance feedback on or off (off: SPD alone, which cannot hold a free root up)."""
        sim = self.sim
        if sim.balance is None:
            if sim.opt.root != "free" or sim.opt.controller not in ("spd", "pd"):
                raise TrackerError("balance feedback needs a free root and controller spd or pd")
            from tracker.control.balance import BalanceFeedback, BalanceOptions

            sim.balance = BalanceFeedback(sim.character, BalanceOptions())
            sim.balance.reset(sim.character.get_state()[0])
            return "balance on"
        on = not sim.balance.options.enabled
        sim.balance.options = dataclasses.replace(sim.balance.options, enabled=on)
        return f"balance {'on' if on else 'off'}"

    def balance_view(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The CoM's ground point ``(2,)`` and the support polygon ``(K, 2)`` (m) to draw, or None."""
        term, support = getattr(self.sim, "balance_term", None), getattr(self.sim, "support", None)
        if term is None or support is None:
            return None
        return np.asarray(term.com[:2]), np.asarray(support.polygon)

    def toggle_schedule(self) -> str:
        """Switch the Zordan-Hodgins reaction on or off (off: ``k_t`` throughout)."""
        if self.schedule is None:
            raise TrackerError("this run has constant gains (no schedule)")
        on = not self.schedule.params.enabled
        self.schedule.set(enabled=on)
        return f"gain schedule {'on' if on else 'off'}"

    def set_gain(self, name: str, value: float) -> None:
        """Set one of :data:`~tracker.viewer.controls.GAIN_PARAMS`; it acts from the next step.

        Raises:
            TrackerError: no schedule, an unknown name, or a value the schedule refuses.
        """
        if self.schedule is None:
            raise TrackerError("this run has constant gains (no schedule to set)")
        if name not in GAIN_PARAMS:
            raise TrackerError(f"unknown gain parameter {name!r} (one of: {', '.join(GAIN_PARAMS)})")
        self.schedule.set(**{name: float(value)})

    def seek(self, t: float) -> None:
        raise TrackerError("a live run cannot jump in time; restart it instead")

    def gain_params(self) -> dict[str, float]:
        """The schedule's current ``k_t``, ``k_r``, ``t_e``, ``t_f`` and ``gain_scale`` (empty without one)."""
        if self.schedule is None:
            return {}
        s = self.schedule.params
        return {"k_t": s.k_t, "k_r": s.k_r, "t_e": s.t_e, "t_f": s.t_f, "gain_scale": self.schedule.gain_scale}

    def k_unit(self) -> str:
        """Unit of ``k_t`` and ``k_r`` for the slider labels."""
        scaling = getattr(self.schedule, "scaling", "")
        return {"mass": "Nm/rad/kg", "uniform": "Nm/rad", "model": "x model"}.get(scaling, "")

    # -- display -----------------------------------------------------------------------------
    def pose(self) -> np.ndarray:
        """The simulated ``q`` now ``(nq,)``."""
        if self.row is not None:
            return self.row["q"]
        return self.sim.character.get_state()[0]

    def ball_views(self) -> list:
        """The balls in the simulation's world now, as :class:`~tracker.viewer.stage.BallView`."""
        c = self.sim.world.client
        known = {self.sim.character.body_id, self.sim.world.ground}
        out = []
        for i in range(p.getNumBodies(physicsClientId=c)):
            body = p.getBodyUniqueId(i, physicsClientId=c)
            if body in known:
                continue
            shape = p.getVisualShapeData(body, physicsClientId=c)
            if not shape or shape[0][2] != p.GEOM_SPHERE:
                continue
            radius, rgba = float(shape[0][3][0]), tuple(float(x) for x in shape[0][7])
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=c)
            out.append(BallView((body, radius, rgba), np.array(pos), np.array(orn), radius, rgba))
        return out

    def next_key(self):
        """The keyframe a timed controller (``timed_pd``) aims at, or None (clips, other controllers)."""
        key = getattr(self.sim.controller, "last_key", None)
        return key if key is not None and key.index >= 0 else None

    def reference_pose(self) -> np.ndarray:
        """The reference ``q`` at the current time ``(nq,)``; the next keyframe for a timed controller."""
        key = self.next_key()
        if key is not None:
            return key.q
        if self.row is not None:
            return self.row["q_ref"]
        return self.sim.reference.sample(self.sim.t)[0]

    def joint_error(self) -> tuple[float, float]:
        """Mean and max joint error of the last step, rad (0 right after a start)."""
        if self.row is None:
            return 0.0, 0.0
        from tracker.analysis.metrics import joint_errors

        err = joint_errors(self.sim.layout, self.row["q"], self.row["q_ref"])[0]
        return float(err.mean()), float(err.max())

    def schedule_state(self) -> str:
        """``tracking``, ``reacting`` or ``recovering`` (``constant gains`` without a schedule)."""
        if self.schedule is None:
            return "constant gains"
        if not self.schedule.params.enabled:
            return "tracking (schedule off)"
        return self.schedule.state(self.sim.t)

    def n_balls(self) -> int:
        return int(getattr(self.sim.scenario, "n_balls", 0) or 0)

    def status_lines(self, controls: Controls) -> list[str]:
        """The on-screen status: time, speed, joint error, schedule state, balls; gains; last message."""
        st = controls.state
        mean, worst = self.joint_error()
        # One line for what changes every frame: each re-sent line costs the loop a GUI frame.
        now = (f"clip t {self.sim.t:5.2f} / {self.end:.2f} s   {st.speed:g}x   joint error {np.degrees(mean):4.1f} deg "
               f"(max {np.degrees(worst):4.1f})   {self.schedule_state()}   balls {self.n_balls()}"
               f"{'   PAUSED' if st.paused else ''}")
        lines = [now]
        key = self.next_key()
        if key is not None:
            lines.append(f"ghost: key {key.index} at {key.t:.2f} s, {max(key.t - self.sim.t, 0.0):.2f} s to go")
        g = self.gain_params()
        if g:
            lines.append(f"k_t {g['k_t']:.4g}  k_r {g['k_r']:.4g}  t_e {g['t_e']:.3g} s  t_f {g['t_f']:.3g} s  "
                         f"scale {g['gain_scale']:.3g}")
        message = st.message or self.message
        if message:
            lines.append(message)
        return lines


def _diverged(row: dict, max_speed: float) -> str:
    """Why a row counts as diverged (non-finite state, runaway joint or root speed), or ''."""
    q, v = row["q"], row["v"]
    if not (np.isfinite(q).all() and np.isfinite(v).all()):
        return "NaN in the state"
    if v.size > 6 and np.abs(v[6:]).max() > max_speed:
        return f"a joint spins at {np.abs(v[6:]).max():.0f} rad/s"
    if np.linalg.norm(v[0:3]) > max_speed:
        return "the root runs away"
    return ""


# -- building a session ------------------------------------------------------------------------


def live_config(source: str | Path, model: str | None = None, overrides: Sequence[str] = ()):
    """The experiment config to play: a YAML config, or a clip wrapped in the default config.

    A clip (BVH, reference ``.npz`` or DeepMimic motion) is played as ``tracker run`` would run a
    config holding only ``clip.path`` and ``model``, with the gain schedule switched on.
    """
    from tracker.experiments.config import config_from_data, load_config

    source = Path(source)
    if not source.exists():
        raise ConfigError(f"{source}: no such config or clip")
    sets = [f"model={model}"] if model else []
    sets += list(overrides)
    if source.suffix.lower() in (".yaml", ".yml"):
        return load_config(source, sets)
    raw = {"model": "humanoid", "clip": {"path": str(source.resolve())}, "schedule": {"enabled": True}}
    return config_from_data(raw, source.with_suffix(".yaml"), sets, origin="option")


def build_session(cfg, world=None) -> LiveSession:
    """A :class:`LiveSession` for an experiment config, simulated in ``world`` (default: a new
    headless client; the window only shows its poses, see :mod:`tracker.viewer.stage`).

    The gain schedule always exists, so the sliders act; when the config disables it, it starts
    switched off (gains stay at ``k_t``, as the config's constant gains) and the ``s`` key turns it on.
    Without configured balls the scenario is an empty ball scenario, so the launch key works.
    """
    from tracker.experiments import runner
    from tracker.scenarios.ball_scenario import BallScenario

    prep = runner.build(cfg)
    on = dataclasses.replace(cfg.schedule, enabled=True)
    schedule = runner.schedule_of(dataclasses.replace(prep, config=cfg.replace(schedule=on)))
    if not cfg.schedule.enabled:
        schedule.set(enabled=False)
    scenario = runner.scenario_of(prep) or BallScenario()
    sim = runner.make_simulation(prep, scenario=scenario, schedule=schedule, world=world)
    launch = prep.launches[0] if prep.launches else None
    end = cfg.clip.end
    if cfg.sim.duration is not None:
        end = cfg.clip.start + cfg.sim.duration
    return LiveSession(sim, schedule, launch, end)


# -- the window loop ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayStats:
    """What a :meth:`LivePlayer.run` did.

    Attributes:
        frames: loop iterations (window frames).
        steps: physics steps (replay: recording rows advanced).
        wall_s: wall-clock time of the loop, s.
        step_wall_s: of which in ``Simulation.step``, s.
        dt: time step, s.
        closed: the window was closed (or the user quit) before the frames ran out.
    """

    frames: int
    steps: int
    wall_s: float
    step_wall_s: float
    dt: float
    closed: bool

    @property
    def realtime_factor(self) -> float:
        """Simulated seconds per wall second over the whole loop (inputs, drawing and text included)."""
        return self.steps * self.dt / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def step_realtime_factor(self) -> float:
        """Simulated seconds per wall second spent stepping (control + physics only)."""
        return self.steps * self.dt / self.step_wall_s if self.step_wall_s > 0 else float("inf")


class LivePlayer:
    """The window loop of ``tracker play``: a :class:`LiveSession` shown on a :class:`Stage`.

    Args:
        session: the live session (simulated in its own headless client).
        ghost: ``beside``, ``overlay`` or ``off``.
        speed: playback speed, clip seconds per wall second.
        title: first line of the on-screen text.
        world: the window's GUI world, opened before the session's headless client (see
            :class:`~tracker.viewer.stage.Stage`); default: open it now.
        shadows: draw shadows (see :class:`~tracker.viewer.stage.Stage`).
    """

    def __init__(self, session: LiveSession, ghost: str = "beside", speed: float = 1.0, title: str = "",
                 world=None, shadows: bool = False, **view) -> None:
        self.session = session
        self.controls = live_controls(session, session.gain_params(), speed=speed, ghost=ghost,
                                      k_unit=session.k_unit())
        # view: optional camera, camera_height and ghost_offset for a model far from human size (Stage).
        self.stage = Stage(session.sim.model, self.controls, title, session.dt, world=world, shadows=shadows,
                           **view)

    def close(self) -> None:
        self.stage.close()

    def _frame(self, elapsed: float) -> None:
        s = self.session
        self.stage.frame(s.pose(), s.reference_pose(), s.ball_views(), elapsed, s.status_lines(self.controls))
        cam = self.stage.window._camera()
        if cam is not None:  # the push key pushes along the view
            s.camera_forward = np.asarray(cam[5], dtype=float)
        view = s.balance_view()
        if view is not None:
            self.stage.show_balance(*view)

    def run(self, frames: int | None = None, presses: Mapping[int, Sequence[int]] | None = None,
            screenshot: str | Path | None = None, grab_screen: bool = False) -> PlayStats:
        """Run until the window closes, the user quits, or ``frames`` frames have run.

        Args:
            frames: run this many frames unpaced, one physics step each (None: real time, forever).
            presses: frame -> key codes pressed at that frame (scripted, same path as the keyboard).
            screenshot: after the last frame, save the window's image here (see :meth:`Window.screenshot`).
            grab_screen: capture the X screen rather than render the view.

        Returns:
            counts and timings of the loop. A closed window is a normal end.
        """
        presses = presses or {}
        st = self.controls.state
        window, client = self.stage.window, self.stage.client
        steps = frame = 0
        step_wall = 0.0
        closed = False
        start = last = time.perf_counter()
        budget = 0.0
        dt = self.session.dt
        try:
            self._frame(-1.0)
            while True:
                if not is_connected(client):
                    closed = True
                    break
                keys = {k: KEY_WAS_TRIGGERED for k in presses.get(frame, ())}
                window.poll(keys)
                if st.quit:
                    closed = True
                    break
                now = time.perf_counter()
                elapsed, last = now - last, now
                if frames is not None:
                    n = st.take_steps() if st.paused else 1
                elif st.paused:
                    n, budget = st.take_steps(), 0.0
                else:
                    budget += elapsed * st.speed
                    n = int(budget / dt)
                    budget -= n * dt
                    cap = max(1, int(MAX_CATCH_UP * st.speed / dt))
                    if n > cap:  # too far behind real time: drop the backlog
                        n, budget = cap, 0.0
                t_before = self.session.t
                for _ in range(max(n, 0)):
                    t0 = time.perf_counter()
                    self.session.step()
                    step_wall += time.perf_counter() - t0
                    steps += 1
                moved = self.session.t - t_before
                self._frame(moved if moved >= 0 else -1.0)
                frame += 1
                if frames is not None and frame >= frames:
                    break
                if frames is None:
                    wait = FRAME_PERIOD - (time.perf_counter() - now)
                    time.sleep(max(wait, 0.001))
            wall = time.perf_counter() - start
            if screenshot is not None and not closed:
                self.stage.screenshot(screenshot, self.session.status_lines(self.controls), grab_screen)
        except p.error:
            if is_connected(client):
                raise
            closed, wall = True, time.perf_counter() - start
        return PlayStats(frame, steps, wall, step_wall, dt, closed)
