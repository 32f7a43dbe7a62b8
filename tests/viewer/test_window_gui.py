"""The real window: 'tracker play' and 'tracker replay' in PyBullet's GUI, checked on their screenshots.

Each test runs the command in a subprocess on the display, or on a virtual one (``Xvfb``, see
``conftest.py``) when there is none (CI), and is skipped when neither exists. The screenshot's JSON gives each body's pixel box
(its AABB projected with the window's own camera); the test counts the pixels in that box that no
background can have: the ground and sky are blue-grey or white (blue >= red, green), while the
ghost is gold, the basketball orange and the character has skin, orange and green links.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
CLIP = REPO / "data" / "motions" / "demo_wave.bvh"

pytestmark = pytest.mark.gui


def gui_run(args: list[str], cwd: Path, display: str, timeout: float = 240.0) -> subprocess.CompletedProcess:
    """Run ``python args...`` with its windows on ``display``."""
    env = dict(os.environ, DISPLAY=display,
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def marked_fraction(img: np.ndarray, box: list[int], others: list[list[int]]) -> float:
    """Fraction of the pixels of ``box`` (outside ``others``) whose red or green exceeds blue by 30."""
    x0, y0, x1, y1 = box
    mask = np.zeros(img.shape[:2], dtype=bool)
    mask[y0:y1, x0:x1] = True
    for a0, b0, a1, b1 in others:
        mask[b0:b1, a0:a1] = False
    rgb = img[mask].astype(int)
    if len(rgb) == 0:
        return 0.0
    warm = np.maximum(rgb[:, 0], rgb[:, 1]) - rgb[:, 2] > 30
    return float(warm.mean())


def check_screenshot(png: Path, expect: dict[str, float]) -> dict:
    """Every body in ``expect`` has a box on the image with at least that fraction of marked pixels."""
    from PIL import Image

    info = json.loads(png.with_suffix(".json").read_text())
    img = np.asarray(Image.open(png).convert("RGB"))
    assert img.shape == (info["height"], info["width"], 3)
    boxes = info["boxes"]
    fractions = {}
    for name, minimum in expect.items():
        box = boxes.get(name)
        assert box is not None, f"{name} is not on the screenshot: {boxes}"
        x0, y0, x1, y1 = box
        assert 0 <= x0 < x1 <= img.shape[1] and 0 <= y0 < y1 <= img.shape[0]
        # A character's box leaves out the other bodies' boxes (a ball in front of it is warm too);
        # a ball, drawn in front, is counted whole.
        others = [] if name.startswith("ball") else [b for k, b in boxes.items() if k != name and b is not None]
        fractions[name] = marked_fraction(img, box, others)
        assert fractions[name] >= minimum, (name, fractions[name], box)
    # The classifier is not trivially true: a same-sized patch of plain ground and sky at the image's
    # left edge (nothing drawn there) has next to no marked pixels.
    x0, y0, x1, y1 = boxes["character"]
    control = [0, y0, x1 - x0, y1]
    assert control[2] < min(b[0] for b in boxes.values() if b is not None)
    assert marked_fraction(img, control, []) < 0.005
    return fractions


def test_play_shows_both_characters_and_a_launched_ball(tmp_path, display):
    png = tmp_path / "play.png"
    # launch key pressed at frame 30 through the keyboard path; the ball flies 0.5 s (30 frames)
    r = gui_run(["-m", "tracker", "play", str(CLIP), "--frames", "50", "--press", "30:b", "--screenshot", str(png)],
                tmp_path, display)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "played 50 frames, 50 steps (0.83 s of clip)" in r.stdout
    assert "x real time in the window" in r.stdout
    info = json.loads(png.with_suffix(".json").read_text())
    assert info["renderer"] in ("opengl", "tiny") and (info["width"], info["height"]) == (1280, 720)
    char, ghost = info["boxes"]["character"], info["boxes"]["ghost"]
    assert char[3] - char[1] > 100 and ghost[3] - ghost[1] > 100  # both full-size on screen, side by side
    assert (char[0] + char[2]) / 2 < (ghost[0] + ghost[2]) / 2
    check_screenshot(png, {"character": 0.02, "ghost": 0.05, "ball1": 0.2})


def test_play_on_a_shipped_scenario_shows_both_characters_and_its_ball(tmp_path, display):
    from tracker.experiments.config import load_config

    config = REPO / "configs" / "basketball_fast.yaml"
    cfg = load_config(config)
    ball = cfg.balls[0]
    # stop 0.1 s before the ball meets the hands: launched, in flight, in front of the character
    frames = round((ball.impact_time - min(0.1, ball.flight_time / 2) - cfg.clip.start) / cfg.sim.dt)
    png = tmp_path / "play_basketball.png"
    r = gui_run(["-m", "tracker", "play", str(config), "--frames", str(frames), "--screenshot", str(png)],
                tmp_path, display)
    assert r.returncode == 0, r.stderr + r.stdout
    check_screenshot(png, {"character": 0.02, "ghost": 0.05, "ball1": 0.2})


def test_replay_of_a_run_with_a_ball_shows_both_characters_and_the_ball(tmp_path, display):
    cfg = tmp_path / "ball.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        clip: {{path: {CLIP}}}
        schedule: {{enabled: true}}
        balls: [{{preset: basketball, target_link: chest, impact_time: 1.2, speed: 5.0, flight_time: 0.6}}]
        outputs: {{plots: false}}
    """))
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import run_experiment

    result = run_experiment(load_config(cfg), tmp_path / "result")
    assert result.recording.balls.shape[1] == 1
    png = tmp_path / "replay.png"
    # frame k shows row k (t = (k + 1) / 60): frame 55 is t = 0.93 s, the ball in flight since 0.6 s
    r = gui_run(["-m", "tracker", "replay", str(tmp_path / "result"), "--frames", "55", "--screenshot", str(png)],
                tmp_path, display)
    assert r.returncode == 0, r.stderr + r.stdout
    check_screenshot(png, {"character": 0.02, "ghost": 0.05, "ball1": 0.2})


def test_closing_the_window_ends_the_loop_cleanly(tmp_path, display):
    script = textwrap.dedent(f"""\
        import pybullet as p
        from tracker.viewer.playback import LivePlayer, build_session, live_config
        from tracker.viewer.window import open_window_world

        window = open_window_world()  # the GUI first: client 0
        session = build_session(live_config({str(CLIP)!r}))
        player = LivePlayer(session, world=window)
        step = session.step

        def step_then_close():  # the user closes the window during the 21st step
            if session.n_steps == 20:
                p.disconnect(player.stage.client)
            return step()

        session.step = step_then_close
        stats = player.run(frames=100)
        player.close()
        session.sim.close()
        print("closed", stats.closed, "frames", stats.frames, "steps", stats.steps)
    """)
    r = gui_run(["-c", script], tmp_path, display)
    assert r.returncode == 0, r.stderr + r.stdout
    # the step runs in the simulation's own client; the next frame finds the window gone
    assert "closed True frames 20 steps 21" in r.stdout


def test_without_a_display_the_command_says_how_to_get_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["PYTHONPATH"] = str(REPO)
    r = subprocess.run([sys.executable, "-m", "tracker", "play", str(CLIP), "--frames", "2"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120, check=False)
    if sys.platform.startswith("linux"):
        assert r.returncode == 2
        assert "no display" in r.stderr and "xvfb-run" in r.stderr
