"""``tracker report RESULT --html``: the page of a run, a free-root run and a sweep; bad input; a real browser."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tracker.analysis.html_report import build_page
from tracker.analysis.video import frame_steps
from tracker.character.model import load_model
from tracker.cli import main
from tracker.sim.recording import Recording

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _run(capsys, *args: str) -> int:
    status = main(list(args))
    capsys.readouterr()
    return status


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A 1.6 s kick of the light soccer ball (the contact at 1.4 s, plots on), 0.5 s of free-root
    standing, and a sweep of the demo wave (pd, spd; 0.4 s; no plots)."""
    root = tmp_path_factory.mktemp("results")
    assert main(["run", str(CONFIGS / "soccer_light.yaml"), "--set", "sim.duration=1.6", "--out",
                 str(root / "kick")]) == 0
    assert main(["run", str(CONFIGS / "balance" / "stand.yaml"), "--set", "sim.duration=0.5", "--out",
                 str(root / "stand")]) == 0
    sweep = root / "sweep.yaml"
    sweep.write_text(f"name: mini\nbase: {CONFIGS / 'tracking' / 'demo_wave_spd.yaml'}\n"
                     "set:\n  sim.duration: 0.4\n  outputs.plots: false\ngrid:\n  controller.name: [pd, spd]\n")
    assert main(["sweep", str(sweep), "--workers", "1", "--out", str(root / "sweep")]) in (0, 3)
    return {"kick": root / "kick", "stand": root / "stand", "sweep": root / "sweep"}


def json_scripts(page: str) -> dict[str, object]:
    """The page's ``<script type='application/json' id=...>`` blocks, parsed."""
    return {m.group(1): json.loads(m.group(2).replace("<\\/", "</")) for m in
            re.finditer(r"<script type='application/json' id='([\w-]+)'>(.*?)</script>", page, re.S)}


def floats(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<f4")


def check_offline(page: str) -> None:
    """Nothing in the page is fetched: no http(s) address, no external script, style or image."""
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=['\"](?!data:)", page)


def test_a_run_page_embeds_every_frame_the_ghost_the_ball_its_contact_and_the_plots(runs):
    folder = runs["kick"]
    page = build_page(folder)
    assert page.kind == "run" and page.runs == 1 and not page.problems
    check_offline(page.html)
    blocks = json_scripts(page.html)
    (entry,) = blocks["runs"]
    scene = blocks[entry["scene"]]
    rec = Recording.load(folder / "recording.npz")
    n_frames = len(frame_steps(rec.t, 60.0))  # dt 1/60: every step, 96 of them
    assert scene["frames"] == n_frames == rec.n_steps == 96
    n_links = len(scene["links"])
    assert n_links == 16 and len(scene["shapes"]) == 16
    assert floats(scene["t"]).shape == (n_frames,)
    assert floats(scene["sim"]).size == floats(scene["ref"]).size == n_frames * n_links * 7
    assert scene["balls"]["count"] == 1 and scene["balls"]["radius"] == [pytest.approx(0.11)]
    assert floats(scene["balls"]["pos"]).size == n_frames * 3
    assert scene["contacts"] and all(1.3 < c["t"] < 1.6 and c["link"] == scene["links"].index("right_foot")
                                     for c in scene["contacts"])
    pngs = sorted(p.name for p in folder.glob("*.png"))
    assert len(pngs) >= 3 and page.html.count("data:image/png;base64,") == len(pngs)  # each plot once
    assert "mean joint error" in page.html and "joint_error_by_joint" in page.html  # report.md and metrics.json


def test_the_embedded_poses_are_the_models_forward_kinematics_within_float32(runs):
    folder = runs["kick"]
    blocks = json_scripts(build_page(folder).html)
    scene = blocks[blocks["runs"][0]["scene"]]
    rec = Recording.load(folder / "recording.npz")
    kin = load_model("humanoid").kinematics()
    n, links = scene["frames"], scene["links"]
    sim = floats(scene["sim"]).reshape(n, len(links), 7)
    ref = floats(scene["ref"]).reshape(n, len(links), 7)
    for poses, q in ((sim, rec.q), (ref, rec.q_ref)):
        pos, rot = kin.forward(q)
        for link in ("pelvis", "right_foot", "head"):
            k = links.index(link)
            np.testing.assert_allclose(poses[:, k, :3], pos[link], atol=1e-5)
            dots = np.abs(np.sum(poses[:, k, 3:].astype(float) * rot[link].as_quat(), axis=1))
            np.testing.assert_allclose(dots, 1.0, atol=1e-5)  # the same rotation (q or -q)
    np.testing.assert_allclose(floats(scene["t"]), rec.t, atol=1e-6)


def test_a_free_root_page_and_a_lower_frame_rate(runs):
    page = build_page(runs["stand"], max_fps=20.0)
    check_offline(page.html)
    blocks = json_scripts(page.html)
    scene = blocks[blocks["runs"][0]["scene"]]
    assert scene["frames"] == 10  # 0.5 s at 20 fps (30 steps at 60 Hz)
    assert floats(scene["sim"]).size == 10 * 16 * 7 and scene["balls"]["count"] == 0 and scene["ref"]
    assert "root free" in page.html


def test_a_y_up_model_stands_upright_on_the_ground(tmp_path, capsys):
    out = tmp_path / "walk"
    assert _run(capsys, "run", str(CONFIGS / "tracking" / "deepmimic_walk.yaml"), "--set", "sim.duration=0.3",
                "--set", "outputs.plots=false", "--out", str(out)) == 0
    blocks = json_scripts(build_page(out).html)
    scene = blocks[blocks["runs"][0]["scene"]]
    assert scene["model"] == "deepmimic" and {s["kind"] for s in scene["shapes"]} == {"box", "sphere", "capsule"}
    poses = floats(scene["sim"]).reshape(scene["frames"], len(scene["links"]), 7)
    head, foot = poses[:, scene["links"].index("neck"), 2], poses[:, scene["links"].index("right_ankle"), 2]
    assert (head > 1.2).all() and (foot < 0.3).all() and (foot > 0.0).all()  # Z up, metres


def test_a_sweep_page_has_a_table_row_and_a_replay_for_every_run(runs):
    page = build_page(runs["sweep"])
    assert page.kind == "sweep" and page.runs == 2
    check_offline(page.html)
    blocks = json_scripts(page.html)
    names = [r["name"] for r in blocks["runs"]]
    assert names == ["name=pd", "name=spd"] and all(r["scene"] for r in blocks["runs"])
    assert page.html.count("<tr data-run=") == 2 and "joint_error_mean_rad" in page.html
    assert page.html.count("<template id='panel-") == 2
    assert all(blocks[r["scene"]]["frames"] > 0 for r in blocks["runs"])
    one = build_page(runs["sweep"], max_runs=1)  # the table keeps every run
    assert [r["scene"] is None for r in json_scripts(one.html)["runs"]] == [False, True]


def test_the_command_writes_report_html_in_the_folder_or_where_told(runs, tmp_path, capsys):
    assert main(["report", str(runs["stand"]), "--html"]) == 0
    assert "wrote " in capsys.readouterr().out and (runs["stand"] / "report.html").is_file()
    out = tmp_path / "page.html"
    assert main(["report", str(runs["sweep"]), "--html", "-o", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("case, message", [
    ("missing", "no such result folder"),
    ("empty", "no recording.npz in this folder"),
    ("metrics_only", "outputs.recording off"),
    ("broken_recording", "not a recording file"),
    ("broken_metrics", "metrics.json"),
    ("text_file", "not a result folder"),
])
def test_bad_input_is_one_line_naming_the_path_and_exit_2(runs, tmp_path, capsys, case, message):
    target = tmp_path / case
    if case == "empty":
        target.mkdir()
    elif case == "metrics_only":
        target.mkdir()
        (target / "metrics.json").write_text("{}")
    elif case == "broken_recording":
        target.mkdir()
        (target / "recording.npz").write_bytes(b"PK\x03\x04 not a zip")
    elif case == "broken_metrics":
        shutil.copytree(runs["stand"], target)
        (target / "metrics.json").write_text("{not json")
    elif case == "text_file":
        target.write_text("hello")
    status = main(["report", str(target), "--html"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert str(target) in err and message in err


def test_without_html_the_command_says_to_give_it(runs, capsys):
    assert main(["report", str(runs["stand"])]) == 2
    assert "--html" in capsys.readouterr().err


# -- in a browser --------------------------------------------------------------------------------

def screenshot(page: Path, fragment: str, out: Path) -> np.ndarray:
    """Chromium's headless screenshot (1280 x 800, WebGL by SwiftShader) of ``page#fragment`` as RGB."""
    from PIL import Image

    cmd = [CHROMIUM, "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
           "--hide-scrollbars", "--window-size=1280,800", "--virtual-time-budget=5000",
           f"--screenshot={out}", f"{page.as_uri()}#{fragment}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.is_file(), done.stderr[-2000:]
    return np.asarray(Image.open(out).convert("RGB")).astype(int)


def character_pixels(img: np.ndarray) -> np.ndarray:
    """Pixels of the simulated character's orange (#ed7326, lit) in the viewer (left, below the title;
    the legend's swatch at the bottom left is left out)."""
    view = img[90:550, 20:740]
    r, g, b = view[..., 0], view[..., 1], view[..., 2]
    return (r > 150) & (r - b > 90) & (g > 50) & (g < r - 50)


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium (apt-get install chromium)")
def test_in_headless_chromium_the_character_is_drawn_and_moves_with_the_time_in_the_address(runs, tmp_path):
    page = tmp_path / "kick.html"
    page.write_text(build_page(runs["kick"]).html)
    still = screenshot(page, "t=0.2&ghost=off", tmp_path / "t0.png")
    kick = screenshot(page, "t=1.45&ghost=off", tmp_path / "t1.png")
    a, b = character_pixels(still), character_pixels(kick)
    assert a.sum() > 3000 and b.sum() > 3000  # the character fills a good part of the viewer
    assert (a ^ b).sum() > 1500  # the kicking leg and arms moved
    cols_a, cols_b = np.nonzero(a)[1], np.nonzero(b)[1]
    assert abs(np.median(cols_a) - np.median(cols_b)) > 3 or abs(cols_a.min() - cols_b.min()) > 20
    dom = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--use-angle=swiftshader",
                          "--enable-unsafe-swiftshader", "--virtual-time-budget=5000", "--dump-dom",
                          f"{page.as_uri()}#t=1.45"], capture_output=True, text=True, timeout=120).stdout
    assert 'data-ready="1"' in dom and 'data-time="1.4500"' in dom and "t = 1.450 s" in dom
