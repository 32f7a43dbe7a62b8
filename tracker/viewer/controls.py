"""The playback window's controls as pure logic: keys, buttons and sliders, and what they do.

The window (:mod:`tracker.viewer.window`) only reads PyBullet's keyboard events
and debug parameters and hands them, unchanged, to :meth:`Controls.handle_keys`
and :meth:`Controls.apply_inputs`. Tests drive those same two methods with
synthetic events and values, so a key press or a slider move in a test goes
through exactly the code a user's does; no PyBullet is needed here.

Inputs:

* keys: ``{key code: flags}`` as ``pybullet.getKeyboardEvents()`` returns it;
  an action fires when its key has :data:`KEY_WAS_TRIGGERED` set;
* buttons: a PyBullet button is a debug parameter whose value counts the
  clicks; an action fires when the count goes up;
* sliders: a value that differs from the last one seen is applied (``speed``
  to the playback, ``time`` to a replay's position, anything else to the
  target's gains, e.g. ``k_t``).

What the actions change lives in :class:`PlaybackState` (pause, speed, ghost
mode, single steps still to take) or is forwarded to the target: a live
session (:class:`tracker.viewer.playback.LiveSession`) or a replay
(:class:`tracker.viewer.replay.ReplaySession`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from tracker.errors import TrackerError

#: ``getKeyboardEvents`` flags (PyBullet's values, pinned by a test).
KEY_IS_DOWN = 1
KEY_WAS_TRIGGERED = 2
#: PyBullet key codes of the keys that are not characters (pinned by a test).
KEY_LEFT_ARROW = 65295
KEY_RIGHT_ARROW = 65296
KEY_HOME = 65302
KEY_ESCAPE = 27
KEY_SPACE = 32

#: Where the reference ghost is drawn: beside the character (+Y), on top of it, or not at all.
GHOST_MODES: tuple[str, ...] = ("beside", "overlay", "off")
#: Playback speeds the ``[`` and ``]`` keys step through (clip seconds per wall second).
SPEEDS: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
SPEED_RANGE: tuple[float, float] = (0.05, 8.0)
#: Names of the schedule parameters a live session exposes as sliders.
GAIN_PARAMS: tuple[str, ...] = ("k_t", "k_r", "t_e", "t_f", "gain_scale")


@dataclass(frozen=True)
class Binding:
    """A key bound to an action.

    Attributes:
        key: PyBullet key code (``ord(c)`` for characters).
        label: how the key is shown in the on-screen help.
        action: action name (see :meth:`Controls.do`).
        help: what it does, a few words.
    """

    key: int
    label: str
    action: str
    help: str


@dataclass(frozen=True)
class Slider:
    """A slider: ``name`` is what it sets, ``label`` is shown beside it (with its unit).

    ``lo``, ``hi`` and ``value`` are in the slider's own units: with ``log`` the slider shows
    ``log10`` of the quantity (gains that span decades) and sets ``10 ** reading``.
    """

    name: str
    label: str
    lo: float
    hi: float
    value: float
    log: bool = False

    def quantity(self, reading: float) -> float:
        """The quantity a slider reading stands for."""
        return 10.0 ** reading if self.log else reading


@dataclass(frozen=True)
class Button:
    """A button: a click runs ``action``."""

    name: str
    label: str
    action: str


LIVE_KEYS: tuple[Binding, ...] = (
    Binding(KEY_SPACE, "space", "pause", "pause / resume"),
    Binding(ord("n"), "n", "step", "single step (pauses)"),
    Binding(ord("r"), "r", "restart", "restart the clip"),
    Binding(ord("["), "[", "slower", "slower / faster"),
    Binding(ord("]"), "]", "faster", "slower / faster"),
    Binding(ord("b"), "b", "launch", "launch a ball now"),
    Binding(ord("s"), "s", "schedule", "gain schedule on / off"),
    Binding(ord("p"), "p", "push", "push the character away from the camera"),
    Binding(ord("v"), "v", "balance", "balance feedback on / off"),
    Binding(ord("g"), "g", "ghost", "ghost: beside / overlay / off"),
    Binding(ord("h"), "h", "help", "hide / show this help"),
    Binding(ord("q"), "q", "quit", "quit (or close the window)"),
)

REPLAY_KEYS: tuple[Binding, ...] = (
    Binding(KEY_SPACE, "space", "pause", "pause / resume"),
    Binding(KEY_RIGHT_ARROW, "right", "step", "next frame (pauses)"),
    Binding(KEY_LEFT_ARROW, "left", "step_back", "previous frame (pauses)"),
    Binding(ord("n"), "n", "step", "next frame (pauses)"),
    Binding(ord("r"), "r", "restart", "back to the start"),
    Binding(ord("["), "[", "slower", "slower / faster"),
    Binding(ord("]"), "]", "faster", "slower / faster"),
    Binding(ord("g"), "g", "ghost", "ghost: beside / overlay / off"),
    Binding(ord("h"), "h", "help", "hide / show this help"),
    Binding(ord("q"), "q", "quit", "quit (or close the window)"),
)

LIVE_BUTTONS: tuple[Button, ...] = (
    Button("pause", "pause / resume", "pause"),
    Button("step", "single step", "step"),
    Button("restart", "restart", "restart"),
    Button("launch", "launch ball", "launch"),
    Button("schedule", "gain schedule on/off", "schedule"),
    Button("ghost", "ghost beside/overlay/off", "ghost"),
)

REPLAY_BUTTONS: tuple[Button, ...] = (
    Button("pause", "pause / resume", "pause"),
    Button("step", "next frame", "step"),
    Button("step_back", "previous frame", "step_back"),
    Button("restart", "restart", "restart"),
    Button("ghost", "ghost beside/overlay/off", "ghost"),
)


class Target(Protocol):
    """What the controls act on. A replay has no gains or balls; a live session cannot seek."""

    def restart(self) -> None: ...

    def launch_ball(self) -> str: ...

    def toggle_schedule(self) -> str: ...

    def set_gain(self, name: str, value: float) -> None: ...

    def seek(self, t: float) -> None: ...


@dataclass
class PlaybackState:
    """Playback state the window loop reads every frame.

    Attributes:
        paused: no time advances except requested single steps.
        speed: clip seconds per wall second.
        ghost: one of :data:`GHOST_MODES`.
        steps: single steps still to take (negative: backwards, replay only).
        show_help: the key help is on screen.
        quit: the user asked to quit.
        message: feedback of the last action (shown on screen), e.g. an invalid gain.
    """

    paused: bool = False
    speed: float = 1.0
    ghost: str = "beside"
    steps: int = 0
    show_help: bool = True
    quit: bool = False
    message: str = ""

    def take_steps(self) -> int:
        """Single steps requested since the last call (and forget them)."""
        n, self.steps = self.steps, 0
        return n


def gain_sliders(params: Mapping[str, float], k_unit: str = "") -> tuple[Slider, ...]:
    """Sliders for the schedule parameters in ``params`` (keys from :data:`GAIN_PARAMS`).

    ``k_t`` and ``k_r`` span decades (the shipped scenarios react with 1% of ``k_t`` or less), so
    their sliders are logarithmic: ``k_t`` from 1/100 to 10 times its start value, ``k_r`` from
    ``k_t``/10^4 to ``k_t``. Linear: ``t_e`` 0-1 s, ``t_f`` 0-2 s (or up to twice a larger start
    value), ``gain_scale`` 0.05-4. ``k_unit`` is shown beside ``k_t`` and ``k_r`` (e.g. ``Nm/rad/kg``;
    the panel's font has ASCII only, and about 30 characters fit).
    """
    k_t = float(params.get("k_t", 1.0))
    unit = f" ({k_unit})" if k_unit else ""
    specs = {
        "k_t": (f"log10 k_t{unit}", k_t / 100.0, 10.0 * k_t, True),
        "k_r": (f"log10 k_r{unit}", k_t * 1e-4, k_t, True),
        "t_e": ("t_e (reaction, s)", 0.0, 1.0, False),
        "t_f": ("t_f (recovery, s)", 0.0, 2.0, False),
        "gain_scale": ("gain scale", 0.05, 4.0, False),
    }
    out = []
    for name in GAIN_PARAMS:
        if name not in params:
            continue
        label, lo, hi, log = specs[name]
        value = float(params[name])
        hi = max(hi, 2.0 * value)
        value = min(max(value, lo), hi)
        if log:
            lo, hi, value = np.log10(lo), np.log10(hi), np.log10(value)
        out.append(Slider(name, label, float(lo), float(hi), float(value), log))
    return tuple(out)


@dataclass
class Controls:
    """Keys, buttons and sliders of one window, and the state they change.

    Args:
        target: the live session or replay the actions act on.
        keys: key bindings (:data:`LIVE_KEYS` or :data:`REPLAY_KEYS`).
        buttons: buttons shown in the window's parameter panel.
        sliders: sliders shown there (``speed``, ``time``, gain names).
        state: the playback state (default: running at speed 1, ghost beside).
    """

    target: Target
    keys: tuple[Binding, ...]
    buttons: tuple[Button, ...] = ()
    sliders: tuple[Slider, ...] = ()
    state: PlaybackState = field(default_factory=PlaybackState)

    def __post_init__(self) -> None:
        if self.state.ghost not in GHOST_MODES:
            raise TrackerError(f"ghost mode {self.state.ghost!r} is not one of: {', '.join(GHOST_MODES)}")
        self._by_key = {b.key: b.action for b in self.keys}
        self._button = {b.name: b.action for b in self.buttons}
        self._slider = {s.name: s for s in self.sliders}
        # Last value seen per input: a change from it is what the user did.
        self._seen: dict[str, float] = {b.name: 0.0 for b in self.buttons}
        self._seen.update({s.name: s.value for s in self.sliders})

    # -- inputs ----------------------------------------------------------------------
    def handle_keys(self, events: Mapping[int, int]) -> list[str]:
        """Run the action of every bound key in ``events`` that was just pressed.

        Args:
            events: ``{key code: flags}`` (``pybullet.getKeyboardEvents()``).

        Returns:
            the actions run, in key-code order.
        """
        done = []
        for key in sorted(events):
            action = self._by_key.get(key)
            if action is not None and events[key] & KEY_WAS_TRIGGERED:
                self.do(action)
                done.append(action)
        return done

    def apply_inputs(self, values: Mapping[str, float]) -> list[str]:
        """Apply button and slider readings that changed since the last call.

        Args:
            values: input name -> current reading (``pybullet.readUserDebugParameter``; a log
                slider reads ``log10`` of its quantity); names not among this window's buttons
                and sliders are ignored.

        Returns:
            what was applied: action names for buttons, ``"set <name>"`` for sliders.
        """
        done = []
        for name, value in values.items():
            value = float(value)
            if name in self._button:
                if value > self._seen[name]:
                    self._seen[name] = value
                    self.do(self._button[name])
                    done.append(self._button[name])
            elif name in self._slider:
                s = self._slider[name]
                if math.isfinite(value) and abs(value - self._seen[name]) > 1e-6 * (s.hi - s.lo):
                    self._seen[name] = value
                    self.set_value(name, s.quantity(value))
                    done.append(f"set {name}")
        return done

    # -- actions -----------------------------------------------------------------------
    def do(self, action: str) -> None:
        """Run one action: ``pause``, ``step``, ``step_back``, ``restart``, ``slower``, ``faster``,
        ``launch``, ``schedule``, ``push``, ``balance``, ``ghost``, ``help`` or ``quit``."""
        st = self.state
        if action == "pause":
            st.paused = not st.paused
            st.message = "paused" if st.paused else ""
        elif action == "step":
            st.paused = True
            st.steps += 1
        elif action == "step_back":
            st.paused = True
            st.steps -= 1
        elif action == "restart":
            st.steps = 0
            self.target.restart()
            st.message = "restarted"
        elif action in ("slower", "faster"):
            st.speed = _next_speed(st.speed, +1 if action == "faster" else -1)
            st.message = f"speed {st.speed:g}x"
        elif action == "launch":
            try:
                st.message = self.target.launch_ball()
            except TrackerError as exc:
                st.message = str(exc)
        elif action == "schedule":
            st.message = self.target.toggle_schedule()
        elif action in ("push", "balance"):  # live sessions only (tracker.viewer.playback.LiveSession)
            try:
                st.message = self.target.push() if action == "push" else self.target.toggle_balance()
            except (TrackerError, AttributeError) as exc:
                st.message = str(exc) if isinstance(exc, TrackerError) else f"no {action} in this window"
        elif action == "ghost":
            st.ghost = GHOST_MODES[(GHOST_MODES.index(st.ghost) + 1) % len(GHOST_MODES)]
            st.message = f"ghost {st.ghost}"
        elif action == "help":
            st.show_help = not st.show_help
        elif action == "quit":
            st.quit = True
        else:
            raise TrackerError(f"unknown action {action!r}")

    def set_value(self, name: str, value: float) -> None:
        """What a slider does: ``speed``, ``time`` (replay position, s) or a gain parameter."""
        st = self.state
        if name == "speed":
            st.speed = min(max(value, SPEED_RANGE[0]), SPEED_RANGE[1])
        elif name == "time":
            self.target.seek(value)
        else:
            try:
                self.target.set_gain(name, value)
                st.message = f"{name} = {value:.4g}"
            except TrackerError as exc:
                st.message = str(exc)

    # -- display -------------------------------------------------------------------------
    def help_lines(self) -> list[str]:
        """One line per help text (keys with the same help are listed together)."""
        by_help: dict[str, list[Binding]] = {}
        for b in self.keys:
            by_help.setdefault(b.help, []).append(b)
        return [f"{' '.join(b.label for b in bs):>7}  {text}" for text, bs in by_help.items()]


def _next_speed(speed: float, direction: int) -> float:
    """The next speed of :data:`SPEEDS` above (``+1``) or below (``-1``) ``speed``."""
    if direction > 0:
        return next((s for s in SPEEDS if s > speed * (1 + 1e-9)), SPEEDS[-1])
    return next((s for s in reversed(SPEEDS) if s < speed * (1 - 1e-9)), SPEEDS[0])


def live_controls(target: Target, params: Mapping[str, float], speed: float = 1.0, ghost: str = "beside",
                  k_unit: str = "") -> Controls:
    """Controls of ``tracker play``: keys, buttons, a speed slider and the gain sliders."""
    sliders = (Slider("speed", "speed (x real time)", SPEED_RANGE[0], 4.0, min(speed, 4.0)),
               *gain_sliders(params, k_unit))
    return Controls(target, LIVE_KEYS, LIVE_BUTTONS, sliders, PlaybackState(speed=speed, ghost=ghost))


def replay_controls(target: Target, duration: float, speed: float = 1.0, ghost: str = "beside") -> Controls:
    """Controls of ``tracker replay``: keys, buttons, a speed slider and the time slider."""
    sliders = (Slider("speed", "speed (x real time)", SPEED_RANGE[0], 4.0, min(speed, 4.0)),
               Slider("time", "clip time (s)", 0.0, max(duration, 1e-3), 0.0))
    return Controls(target, REPLAY_KEYS, REPLAY_BUTTONS, sliders, PlaybackState(speed=speed, ghost=ghost))
