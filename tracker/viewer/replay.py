"""``tracker replay``: play a saved recording in the playback window, without simulating again.

The simulated character and the reference ghost are two bodies posed with
``reset_state`` from the recording's ``q`` and ``q_ref``; balls are visual-only
spheres at the recorded centres. Nothing is stepped: the window only poses.
:class:`ReplaySession` is the position in the recording (the controls' target:
restart, seek from the time slider, single frames back and forth);
:class:`ReplayPlayer` is the window loop.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tracker.sim.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402

from tracker.errors import SimulationError, TrackerError
from tracker.sim.recording import Recording
from tracker.viewer.controls import KEY_WAS_TRIGGERED, Controls, replay_controls
from tracker.viewer.playback import PlayStats
from tracker.viewer.window import (BESIDE_OFFSET, Window, is_connected, make_ghost, open_window_world,
                                   sphere_marker)

#: Ball drawn when the recording's config is not at hand: a soccer ball's radius, white.
DEFAULT_BALL = (0.11, (0.95, 0.95, 0.95, 1.0))


def find_recording(path: str | Path) -> tuple[Path, Path | None]:
    """The recording of a result folder (``recording.npz``) or a recording file, and the folder's
    ``config.yaml`` if there is one."""
    path = Path(path)
    if path.is_dir():
        rec = path / "recording.npz"
        if not rec.exists():
            raise SimulationError(f"{path}: no recording.npz in this folder (make one with 'tracker run' or "
                                  f"'tracker track CLIP --out {path}')")
        cfg = path / "config.yaml"
        return rec, cfg if cfg.exists() else None
    if not path.exists():
        raise SimulationError(f"{path}: no such result folder or recording")
    cfg = path.parent / "config.yaml"
    return path, cfg if cfg.exists() and path.name == "recording.npz" else None


def ball_looks(config: Path | None, n_balls: int) -> list[tuple[float, tuple[float, ...]]]:
    """Radius (m) and RGBA of each recorded ball, from the run's config (default: soccer balls)."""
    looks = [DEFAULT_BALL] * n_balls
    if config is None or n_balls == 0:
        return looks
    try:
        from tracker.experiments.config import load_config
        from tracker.scenarios.balls import get_ball

        cfg = load_config(config)
        for k, b in enumerate(cfg.balls[:n_balls]):
            preset = get_ball(b.preset, b.mass)
            looks[k] = (preset.radius, tuple(preset.colour))
    except TrackerError:
        pass  # a moved clip makes the config invalid; the balls are still worth showing
    return looks


class ReplaySession:
    """A position in a recording, moved by the controls.

    Args:
        rec: the recording (at least one step).

    Attributes:
        i: index of the row shown.
    """

    def __init__(self, rec: Recording) -> None:
        if rec.n_steps == 0:
            raise SimulationError("the recording has no steps to replay")
        self.rec = rec
        self.i = 0
        self._layout = rec.layout
        self._kp_track = np.asarray(rec.kp[0], dtype=float)

    @property
    def n(self) -> int:
        return self.rec.n_steps

    @property
    def t(self) -> float:
        return float(self.rec.t[self.i])

    def advance(self, n: int) -> None:
        """Move ``n`` rows (negative: back), wrapping around at either end."""
        self.i = (self.i + int(n)) % self.n

    def restart(self) -> None:
        self.i = 0

    def seek(self, t: float) -> None:
        """Show the row nearest to clip time ``t`` (s)."""
        self.i = int(np.clip(np.searchsorted(self.rec.t, t), 0, self.n - 1))
        if self.i > 0 and abs(self.rec.t[self.i - 1] - t) < abs(self.rec.t[self.i] - t):
            self.i -= 1

    def launch_ball(self) -> str:
        raise TrackerError("a replay cannot launch balls")

    def toggle_schedule(self) -> str:
        raise TrackerError("a replay cannot change its gains")

    def set_gain(self, name: str, value: float) -> None:
        raise TrackerError("a replay cannot change its gains")

    def joint_error(self) -> tuple[float, float]:
        """Mean and max joint error of the row shown, rad."""
        from tracker.analysis.metrics import joint_errors

        err = joint_errors(self._layout, self.rec.q[self.i], self.rec.q_ref[self.i])[0]
        return float(err.mean()), float(err.max())

    def gain_ratio(self) -> float:
        """Lowest joint stiffness of the row shown relative to the first row's (1: tracking gains)."""
        kp = np.asarray(self.rec.kp[self.i], dtype=float)[6:]
        ref = self._kp_track[6:]
        ok = ref > 0
        return float((kp[ok] / ref[ok]).min()) if ok.any() else 1.0

    def contacts_so_far(self) -> tuple[int, str]:
        """Number of contact events up to the row shown, and the last one as text."""
        evs = [e for e in self.rec.events if float(e.get("t", np.inf)) <= self.t + 1e-9]
        if not evs:
            return 0, ""
        e = evs[-1]
        return len(evs), f"{e.get('link', '?')} at {float(e['t']):.2f} s"

    def status_lines(self, controls: Controls) -> list[str]:
        st = controls.state
        mean, worst = self.joint_error()
        n_ev, last = self.contacts_so_far()
        now = (f"t {self.t:5.2f} / {float(self.rec.t[-1]):.2f} s   frame {self.i + 1}/{self.n}   {st.speed:g}x   "
               f"joint error {np.degrees(mean):4.1f} deg (max {np.degrees(worst):4.1f})   "
               f"gains {self.gain_ratio():.2f}x tracking{'   PAUSED' if st.paused else ''}")
        lines = [now]
        if n_ev:
            lines.append(f"contacts {n_ev}, last: {last}")
        if self.rec.diverged:
            lines.append(f"this run diverged: {self.rec.message}")
        if st.message:
            lines.append(st.message)
        return lines


class ReplayPlayer:
    """The window loop of ``tracker replay``.

    Args:
        session: the replay position.
        model: the character model (name, path or :class:`~tracker.character.model.Model`).
        balls: radius (m) and RGBA of each recorded ball.
        ghost: ``beside``, ``overlay`` or ``off``.
        speed: playback speed.
        title: first line of the on-screen text.
    """

    def __init__(self, session: ReplaySession, model, balls: Sequence[tuple[float, Sequence[float]]] = (),
                 ghost: str = "beside", speed: float = 1.0, title: str = "") -> None:
        from tracker.character.character import Character
        from tracker.character.model import load_model

        self.session = session
        rec = session.rec
        self.model = load_model(model)
        if tuple(s.name for s in self.model.layout.joints) != tuple(n for n, _ in rec.joints):
            raise SimulationError(f"the recording's joints do not match model {self.model.name!r}; "
                                  f"give the model it was made with (--model)")
        self.world = open_window_world(rec.dt)
        self.client = c = self.world.client
        try:
            with quiet_stdio():
                self.character = Character.load(c, self.model)
            self.ghost = make_ghost(c, self.model)
            self.ball_looks = list(balls)
            self.balls = [sphere_marker(c, r, rgba) for r, rgba in self.ball_looks]
            self.controls = replay_controls(session, float(rec.t[-1]), speed=speed, ghost=ghost)
            self.window = Window(c, self.controls, [title] if title else [])
        except BaseException:
            self.world.close()
            raise
        self._shown = -1
        self._ghost_mode = ""

    def close(self) -> None:
        self.world.close()

    def _pose(self) -> None:
        s, mode = self.session, self.controls.state.ghost
        if s.i == self._shown and mode == self._ghost_mode:
            return
        rec = s.rec
        self.character.reset_state(rec.q[s.i])
        q = np.array(rec.q_ref[s.i], dtype=float)
        if mode == "beside":
            q[0:3] += BESIDE_OFFSET
        elif mode == "off":
            q[2] -= 100.0
        self.ghost.reset_state(q)
        if rec.balls is not None:
            for k, body in enumerate(self.balls):
                pos = rec.balls[s.i, k] if k < rec.balls.shape[1] else np.full(3, np.nan)
                pos = pos if np.isfinite(pos).all() else np.array([0.0, 0.0, -10.0])
                p.resetBasePositionAndOrientation(body, pos.tolist(), [0, 0, 0, 1], physicsClientId=self.client)
        self._shown, self._ghost_mode = s.i, mode

    def _focus(self) -> np.ndarray:
        pos = np.array(self.session.rec.q[self.session.i][0:3], dtype=float)
        if self.controls.state.ghost == "beside":
            pos = pos + 0.5 * np.asarray(BESIDE_OFFSET)
        return pos

    def bodies(self) -> dict[str, object]:
        """Body ids by role for screenshot boxes; a ball (visual only, no AABB) as its bounding cube."""
        out: dict[str, object] = {"character": self.character.body_id, "ghost": self.ghost.body_id}
        s = self.session
        cube = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
        for k, (radius, _) in enumerate(self.ball_looks):
            centre = s.rec.balls[s.i, k] if s.rec.balls is not None else np.full(3, np.nan)
            if np.isfinite(centre).all():
                out[f"ball{k + 1}"] = centre + radius * cube
        return out

    def run(self, frames: int | None = None, presses: Mapping[int, Sequence[int]] | None = None,
            screenshot: str | Path | None = None, grab_screen: bool = False) -> PlayStats:
        """Play until the window closes, the user quits, or ``frames`` frames (one row each) have run.

        Same arguments and result as :meth:`tracker.viewer.playback.LivePlayer.run`; ``steps``
        counts recording rows advanced.
        """
        presses = presses or {}
        s, st = self.session, self.controls.state
        dt = s.rec.dt
        frame = rows = 0
        closed = False
        start = last = time.perf_counter()
        play_t = s.t
        try:
            self.window.show_text(s.status_lines(self.controls), force=True)
            while True:
                if not is_connected(self.client):
                    closed = True
                    break
                before = s.i
                keys = {k: KEY_WAS_TRIGGERED for k in presses.get(frame, ())}
                self.window.poll(keys)
                if st.quit:
                    closed = True
                    break
                now = time.perf_counter()
                elapsed, last = now - last, now
                if s.i != before:  # restart or time slider
                    play_t = s.t
                n = st.take_steps()
                if n or st.paused:
                    s.advance(n)
                    play_t = s.t
                elif frames is not None:
                    s.advance(1)
                    play_t = s.t
                else:
                    play_t += elapsed * st.speed
                    if play_t > float(s.rec.t[-1]) + 0.5 * dt:
                        play_t = float(s.rec.t[0])
                    s.seek(play_t)
                rows += abs(s.i - before)
                moved = float(s.rec.t[s.i] - s.rec.t[before])
                self._pose()
                self.window.follow(self._focus(), moved if moved >= 0 else -1.0)
                self.window.show_text(s.status_lines(self.controls))
                frame += 1
                if frames is not None and frame >= frames:
                    break
                if frames is None:
                    time.sleep(0.01)
            wall = time.perf_counter() - start
            if screenshot is not None and not closed:
                self.window.show_text(s.status_lines(self.controls), force=True)
                if grab_screen:
                    time.sleep(0.3)
                self.window.screenshot(screenshot, self.bodies(), grab_screen=grab_screen)
        except p.error:
            if is_connected(self.client):
                raise
            closed, wall = True, time.perf_counter() - start
        return PlayStats(frame, rows, wall, 0.0, dt, closed)
