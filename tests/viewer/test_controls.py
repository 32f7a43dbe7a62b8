"""Window controls as pure logic: keys, buttons and sliders, driven exactly as the window drives them."""

from __future__ import annotations

import numpy as np
import pybullet as p
import pytest

from tracker.errors import TrackerError
from tracker.viewer import controls as ctl
from tracker.viewer.controls import (GHOST_MODES, KEY_IS_DOWN, KEY_WAS_TRIGGERED, SPEEDS, gain_sliders,
                                     live_controls, replay_controls)


class FakeTarget:
    """Records what the controls asked of it."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def restart(self) -> None:
        self.calls.append(("restart",))

    def launch_ball(self) -> str:
        self.calls.append(("launch",))
        return "ball 1 launched"

    def toggle_schedule(self) -> str:
        self.calls.append(("schedule",))
        return "gain schedule off"

    def set_gain(self, name: str, value: float) -> None:
        if value < 0:
            raise TrackerError(f"{name} must be >= 0")
        self.calls.append(("set", name, value))

    def seek(self, t: float) -> None:
        self.calls.append(("seek", t))


PARAMS = {"k_t": 300.0, "k_r": 30.0, "t_e": 0.1, "t_f": 0.5, "gain_scale": 1.0}


def press(c, *keys: str | int) -> list[str]:
    return c.handle_keys({(ord(k) if isinstance(k, str) else k): KEY_WAS_TRIGGERED for k in keys})


def test_key_codes_and_flags_are_pybullets():
    assert (ctl.KEY_IS_DOWN, ctl.KEY_WAS_TRIGGERED) == (p.KEY_IS_DOWN, p.KEY_WAS_TRIGGERED)
    assert (ctl.KEY_LEFT_ARROW, ctl.KEY_RIGHT_ARROW, ctl.KEY_HOME) == (p.B3G_LEFT_ARROW, p.B3G_RIGHT_ARROW,
                                                                      p.B3G_HOME)
    assert ctl.KEY_SPACE == p.B3G_SPACE


def test_a_key_acts_once_when_pressed_not_while_held():
    t = FakeTarget()
    c = live_controls(t, PARAMS)
    assert c.handle_keys({ord("b"): KEY_IS_DOWN}) == []  # held down from an earlier frame
    assert c.handle_keys({ord("b"): KEY_WAS_TRIGGERED | KEY_IS_DOWN}) == ["launch"]
    assert t.calls == [("launch",)]
    assert c.state.message == "ball 1 launched"
    assert c.handle_keys({ord("x"): KEY_WAS_TRIGGERED}) == []  # unbound


def test_pause_single_step_restart_help_quit():
    t = FakeTarget()
    c = live_controls(t, PARAMS)
    press(c, " ")
    assert c.state.paused
    press(c, " ")
    assert not c.state.paused
    press(c, "n")
    press(c, "n")
    assert c.state.paused and c.state.take_steps() == 2 and c.state.take_steps() == 0
    press(c, "r")
    assert t.calls == [("restart",)]
    press(c, "h")
    assert not c.state.show_help
    press(c, "s")
    assert t.calls[-1] == ("schedule",)
    press(c, "q")
    assert c.state.quit


def test_speed_keys_walk_the_ladder_and_stop_at_its_ends():
    c = live_controls(FakeTarget(), PARAMS, speed=1.0)
    press(c, "]")
    assert c.state.speed == 2.0
    for _ in range(10):
        press(c, "]")
    assert c.state.speed == SPEEDS[-1]
    for _ in range(20):
        press(c, "[")
    assert c.state.speed == SPEEDS[0]
    c.state.speed = 0.3  # from the slider: the next key goes to the neighbouring rung
    press(c, "]")
    assert c.state.speed == 0.5


def test_ghost_cycles_beside_overlay_off():
    c = live_controls(FakeTarget(), PARAMS)
    seen = [c.state.ghost]
    for _ in range(3):
        press(c, "g")
        seen.append(c.state.ghost)
    assert seen == ["beside", "overlay", "off", "beside"]
    with pytest.raises(TrackerError, match="ghost mode 'side'"):
        live_controls(FakeTarget(), PARAMS, ghost="side")
    assert GHOST_MODES == ("beside", "overlay", "off")


def test_buttons_fire_on_each_new_click_count():
    t = FakeTarget()
    c = live_controls(t, PARAMS)
    assert c.apply_inputs({"launch": 0.0, "restart": 0.0}) == []
    assert c.apply_inputs({"launch": 1.0}) == ["launch"]
    assert c.apply_inputs({"launch": 1.0}) == []  # same count: no new click
    assert c.apply_inputs({"launch": 2.0, "restart": 1.0}) == ["launch", "restart"]
    assert t.calls == [("launch",), ("launch",), ("restart",)]
    assert c.apply_inputs({"pause": 1.0}) == ["pause"] and c.state.paused


def test_sliders_apply_only_changes_and_reach_the_target():
    t = FakeTarget()
    c = live_controls(t, PARAMS)
    start = {s.name: s.value for s in c.sliders}
    assert c.apply_inputs(start) == []  # the first reading equals the start values
    assert c.apply_inputs({**start, "k_t": np.log10(600.0)}) == ["set k_t"]  # a log slider
    assert t.calls[0][:2] == ("set", "k_t") and t.calls[0][2] == pytest.approx(600.0, rel=1e-12)
    assert c.apply_inputs({**start, "k_t": np.log10(600.0)}) == []  # unchanged since the last reading
    assert len(t.calls) == 1
    c.apply_inputs({"t_e": 0.25})  # a linear one
    assert t.calls[-1] == ("set", "t_e", 0.25)
    c.apply_inputs({"speed": 2.5})
    assert c.state.speed == 2.5
    c.apply_inputs({"speed": 100.0})
    assert c.state.speed == ctl.SPEED_RANGE[1]
    c.apply_inputs({"t_f": -1.0})  # the target refuses: shown, not raised
    assert c.state.message == "t_f must be >= 0"
    assert c.apply_inputs({"nonsense": 3.0, "k_t": float("nan")}) == []


def test_gain_sliders_span_the_start_values_gains_in_decades():
    sliders = {s.name: s for s in gain_sliders(PARAMS, "Nm/rad/kg")}
    assert set(sliders) == set(PARAMS)
    for name, value in PARAMS.items():
        s = sliders[name]
        assert s.quantity(s.lo) <= value * (1 + 1e-12) and value <= s.quantity(s.hi) * (1 + 1e-12)
        assert s.quantity(s.value) == pytest.approx(value, rel=1e-12)
    k_t, k_r = sliders["k_t"], sliders["k_r"]
    assert k_t.log and k_r.log and not sliders["t_e"].log
    assert (k_t.quantity(k_t.lo), k_t.quantity(k_t.hi)) == pytest.approx((3.0, 3000.0), rel=1e-12)
    assert (k_r.quantity(k_r.lo), k_r.quantity(k_r.hi)) == pytest.approx((0.03, 300.0), rel=1e-12)
    assert "Nm/rad/kg" in k_t.label and "log10" in k_t.label
    assert gain_sliders({"t_f": 3.0})[0].hi == 6.0  # a start value beyond the usual range fits
    assert gain_sliders({"k_t": 300.0, "k_r": 0.0})[1].value == pytest.approx(np.log10(0.03))  # 0: the bottom


def test_replay_controls_seek_and_step_both_ways():
    t = FakeTarget()
    c = replay_controls(t, duration=3.0)
    assert c.apply_inputs({"time": 1.25}) == ["set time"]
    assert t.calls == [("seek", 1.25)]
    c.handle_keys({ctl.KEY_LEFT_ARROW: KEY_WAS_TRIGGERED})
    c.handle_keys({ctl.KEY_LEFT_ARROW: KEY_WAS_TRIGGERED})
    c.handle_keys({ctl.KEY_RIGHT_ARROW: KEY_WAS_TRIGGERED})
    assert c.state.paused and c.state.take_steps() == -1
    assert press(c, "b") == []  # no launch key in a replay


def test_help_lists_every_key_once():
    c = live_controls(FakeTarget(), PARAMS)
    text = "\n".join(c.help_lines())
    for b in ctl.LIVE_KEYS:
        assert b.label in text and b.help in text
    assert sum("slower / faster" in line for line in c.help_lines()) == 1
    with pytest.raises(TrackerError, match="unknown action"):
        c.do("fly")
