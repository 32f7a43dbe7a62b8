"""The window's keyframe session, without a window: it steps, loops, marks the next key and says the gains."""

from __future__ import annotations

import numpy as np

from tracker.keyframes import load_keyframes
from tracker.keyframes.run import KeyframeOptions, build_simulation
from tracker.paths import DATA_DIR
from tracker.viewer.keyframes import KeyframeSession


def test_the_session_marks_the_next_key_and_reports_the_cross_fade():
    kf = load_keyframes(DATA_DIR / "keyframes" / "mouse.yaml")
    sim, track, _ = build_simulation(kf, KeyframeOptions(dt=1 / 30))
    try:
        s = KeyframeSession(sim, track)
        assert s.end == track.duration and s.schedule is None
        for _ in range(12):  # 0.4 s: between key 0 and key 1 (0.8 s), alpha ~ 0.5
            assert s.step() is not None
        (marker,) = s.ball_views()
        assert np.allclose(marker.position, track.key_q[1, 0:3])
        assert s.schedule_state().startswith("key 0 -> 1, gains 0.5")
        lines = s.status_lines(type("C", (), {"state": type("S", (), {"speed": 1.0, "paused": False,
                                                                          "message": ""})()})())
        assert "key 0 -> 1" in lines[0]
        n = round(track.duration / s.dt)
        for _ in range(n):
            s.step()
        assert s.loops >= 1  # looped back to the start at the end of the hold
    finally:
        sim.close()


def test_the_window_is_framed_for_the_mouse_and_left_alone_for_the_humanoid():
    from tracker.character.model import load_model
    from tracker.viewer.stage import framing

    assert framing(load_model("humanoid")) == {}
    v = framing(load_model(str(DATA_DIR / "mouse" / "mouse.yaml")))
    assert v["camera"][0] < 1.0 and v["camera_height"] < 0.1 and 0.1 <= v["ghost_offset"][1] < 0.5
