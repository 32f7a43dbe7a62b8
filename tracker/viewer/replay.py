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

import tracker.quiet  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402

from tracker.errors import SimulationError, TrackerError
from tracker.sim.recording import Recording
from tracker.viewer.controls import KEY_WAS_TRIGGERED, Controls, replay_controls
from tracker.viewer.playback import FRAME_PERIOD, PlayStats
from tracker.viewer.stage import BallView, Stage, framing
from tracker.viewer.window import is_connected

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
        return len(evs), f"{e.get('link', '?')} at clip time {float(e['t']):.2f} s"

    def status_lines(self, controls: Controls) -> list[str]:
        st = controls.state
        mean, worst = self.joint_error()
        n_ev, last = self.contacts_so_far()
        now = (f"clip t {self.t:5.2f} / {float(self.rec.t[-1]):.2f} s   frame {self.i + 1}/{self.n}   {st.speed:g}x   "
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
    """The window loop of ``tracker replay``: a :class:`ReplaySession` shown on a :class:`Stage`.

    Args:
        session: the replay position.
        model: the character model (name, path or :class:`~tracker.character.model.Model`).
        balls: radius (m) and RGBA of each recorded ball.
        ghost: ``beside``, ``overlay`` or ``off``.
        speed: playback speed.
        title: first line of the on-screen text.
        shadows: draw shadows (see :class:`~tracker.viewer.stage.Stage`).
    """

    def __init__(self, session: ReplaySession, model, balls: Sequence[tuple[float, Sequence[float]]] = (),
                 ghost: str = "beside", speed: float = 1.0, title: str = "", shadows: bool = False) -> None:
        from tracker.character.model import load_model

        self.session = session
        rec = session.rec
        self.model = load_model(model)
        if tuple(s.name for s in self.model.layout.joints) != tuple(n for n, _ in rec.joints):
            raise SimulationError(f"the recording's joints do not match model {self.model.name!r}; "
                                  f"give the model it was made with (--model)")
        self.ball_looks = [(float(r), tuple(float(x) for x in rgba)) for r, rgba in balls]
        self.controls = replay_controls(session, float(rec.t[-1]), speed=speed, ghost=ghost)
        self.stage = Stage(self.model, self.controls, title, rec.dt, shadows=shadows, **framing(self.model))

    def close(self) -> None:
        self.stage.close()

    def ball_views(self) -> list[BallView]:
        """The recorded balls at the row shown (hidden before they exist)."""
        s = self.session
        if s.rec.balls is None:
            return []
        out = []
        for k, (radius, rgba) in enumerate(self.ball_looks[:s.rec.balls.shape[1]]):
            out.append(BallView(k, np.asarray(s.rec.balls[s.i, k], float), np.array([0.0, 0.0, 0.0, 1.0]),
                                radius, rgba))
        return out

    def _frame(self, elapsed: float) -> None:
        s = self.session
        self.stage.frame(s.rec.q[s.i], s.rec.q_ref[s.i], self.ball_views(), elapsed, s.status_lines(self.controls))

    def run(self, frames: int | None = None, presses: Mapping[int, Sequence[int]] | None = None,
            screenshot: str | Path | None = None, grab_screen: bool = False) -> PlayStats:
        """Play until the window closes, the user quits, or ``frames`` frames (one row each) have run.

        Same arguments and result as :meth:`tracker.viewer.playback.LivePlayer.run`; ``steps``
        counts recording rows advanced.
        """
        presses = presses or {}
        s, st = self.session, self.controls.state
        window, client = self.stage.window, self.stage.client
        dt = s.rec.dt
        frame = rows = 0
        closed = False
        start = last = time.perf_counter()
        play_t = s.t
        try:
            self._frame(-1.0)
            while True:
                if not is_connected(client):
                    closed = True
                    break
                before = s.i
                keys = {k: KEY_WAS_TRIGGERED for k in presses.get(frame, ())}
                window.poll(keys)
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
                self._frame(moved if moved >= 0 else -1.0)
                frame += 1
                if frames is not None and frame >= frames:
                    break
                if frames is None:
                    time.sleep(max(FRAME_PERIOD - (time.perf_counter() - now), 0.001))
            wall = time.perf_counter() - start
            if screenshot is not None and not closed:
                self.stage.screenshot(screenshot, s.status_lines(self.controls), grab_screen)
        except p.error:
            if is_connected(client):
                raise
            closed, wall = True, time.perf_counter() - start
        return PlayStats(frame, rows, wall, 0.0, dt, closed)
