"""The window's balance keys on a live session (no window): p pushes along the camera, v toggles balance."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.paths import CONFIG_DIR
from tracker.viewer.controls import KEY_WAS_TRIGGERED, live_controls
from tracker.viewer.playback import build_session, live_config


@pytest.fixture()
def stand():
    s = build_session(live_config(CONFIG_DIR / "balance" / "stand.yaml"))
    yield s
    s.sim.close()


def _press(controls, key: str) -> None:
    controls.handle_keys({ord(key): KEY_WAS_TRIGGERED})


def test_p_pushes_the_standing_character_away_from_the_camera_and_it_recovers(stand):
    controls = live_controls(stand, stand.gain_params(), k_unit=stand.k_unit())
    for _ in range(30):
        stand.step()
    c0 = stand.sim.character.center_of_mass()
    stand.camera_forward = np.array([0.0, 1.0, -0.3])  # looking toward +Y: the push goes to the left
    _press(controls, "p")
    assert "push" in controls.state.message
    ys = []
    for _ in range(120):
        stand.step()
        ys.append(stand.sim.character.center_of_mass()[1] - c0[1])
    assert max(ys) > 0.003  # moved the way the camera looks
    assert stand.sim.character.get_state()[0][2] > 0.9  # and stayed up
    com, poly = stand.balance_view()
    assert com.shape == (2,) and poly.shape[1] == 2 and len(poly) >= 4


def test_v_turns_balance_off_and_the_free_root_falls(stand):
    controls = live_controls(stand, stand.gain_params(), k_unit=stand.k_unit())
    _press(controls, "v")
    assert controls.state.message == "balance off"
    for _ in range(120):
        stand.step()
    assert stand.sim.character.get_state()[0][2] < 0.6 or stand.loops > 1  # it fell (or blew up and restarted)
    _press(controls, "v")
    assert controls.state.message == "balance on"
