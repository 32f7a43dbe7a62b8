"""Every subcommand refuses bad command-line values with one line and exit status 2 (issue 13).

Each case runs ``tracker.cli.main`` in-process (argparse errors too) and must end with status 2,
exactly one line on stderr starting ``error:``, and never ``internal error`` or a traceback.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tracker.cli import EXIT_BAD_INPUT, main

ROOT = Path(__file__).resolve().parents[1]
KICK = str(ROOT / "data" / "motions" / "kick.bvh")  # 3.0 s, authored
SOCCER = str(ROOT / "configs" / "soccer_light.yaml")
SWEEP = str(ROOT / "configs" / "sweeps" / "ball_speed.yaml")
KEYS = str(ROOT / "data" / "keyframes" / "ymca.yaml")
FREE_WALK = str(ROOT / "configs" / "free" / "cmu_02_01_walk.yaml")
FREE_SOCCER_SEARCH = str(ROOT / "configs" / "samcon" / "kick_ball_free.yaml")  # balls, no track


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("bad")
    (d / "empty.bvh").write_text("")
    (d / "broken.yaml").write_text("clip: [unclosed\n")
    (d / "notes.txt").write_text("hello\n")
    (d / "unknown_key.yaml").write_text(f"clip: {{path: {KICK}}}\nbogus: 1\n")
    (d / "rec.npz").write_bytes(b"not a zip")
    (d / "folder").mkdir()
    names = ("empty.bvh", "broken.yaml", "notes.txt", "unknown_key.yaml", "rec.npz", "folder")
    return {k.replace(".", "_"): str(d / k) for k in names} | {"missing": str(d / "missing.bvh"), "dir": str(d)}


CASES: dict[str, list[list[str]]] = {
    "inspect": [
        ["{missing}"], ["{empty_bvh}"], ["{notes_txt}"], ["{folder}"], [KICK, "--unit", "cmu"], [KICK, "--unit", ""],
        [KICK, "--unit", "km"], [KICK, "--up", "W"], [KICK, "--up", ""], [KICK, "--bogus"], [], [KICK, KICK],
        ["{broken_yaml}"], [KICK, "--unit"], [KICK, "--up"], ["{rec_npz}"], [KICK, "--json", "x"],
        ["{missing}", "--json"], ["{empty_bvh}", "--unit", "cm"], [KICK, "--up", "Q", "--unit", "m"],
    ],
    "model": [
        ["nonexistent"], ["{missing}"], ["{broken_yaml}"], ["{notes_txt}"], ["{folder}"], ["humanoid", "extra"],
        ["--bogus"], ["--json", "nope"], ["{unknown_key_yaml}"], ["{empty_bvh}"], ["{rec_npz}"], [""],
        ["humanoid", "--json", "--x"], ["deepmimic", "deepmimic"], ["{dir}/none.yaml"], ["HUMANOID_"],
        ["-"], ["--json", "{missing}"], ["humanoid", "--model"], ["{broken_yaml}", "--json"],
    ],
    "retarget": [
        ["{missing}"], ["{empty_bvh}"], [KICK, "--unit", "cmu"], [KICK, "--unit", "feet"], [KICK, "--fps", "0"],
        [KICK, "--fps", "-30"], [KICK, "--fps", "abc"], [KICK, "--fps", "nan"], [KICK, "--fps", "inf"],
        [KICK, "--model", "nonexistent"], [KICK, "--map", "nonexistent"], [KICK, "--map", "{broken_yaml}"],
        ["{notes_txt}"], ["{folder}"], [], [KICK, "--bogus"], [KICK, "--unit"], [KICK, "--fps"],
        [KICK, "--model", "{broken_yaml}"], [KICK, "--map", "{missing}"],
        [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "1,,2"], [KICK, "--sheet", "{dir}/s.png", "--sheet-at", ""],
        [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "99"], [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "-1"],
        [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "file_frame:-1"],
        [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "file_frame:100000"],
        [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "frame:3"], [KICK, "--sheet", "{dir}/s.png", "--sheet-at", "file:x"],
    ],
    "track": [
        [KICK, "--start", "10"], [KICK, "--start", "2.99"], [KICK, "--start", "3"], [KICK, "--start", "-1"],
        [KICK, "--duration", "0"], [KICK, "--duration", "-2"], [KICK, "--duration", "5"],
        [KICK, "--start", "2", "--duration", "1.5"], [KICK, "--duration", "0.001"], [KICK, "--gain-scale", "-1"],
        [KICK, "--gain-scale", "0"], [KICK, "--gain-scale", "x"], [KICK, "--dt", "0"], [KICK, "--dt", "-1/60"],
        [KICK, "--dt", "1/0"], [KICK, "--dt", "1"], [KICK, "--controller", "lqr"], [KICK, "--root", "floating"],
        [KICK, "--target-velocity", "half"], ["{missing}"], ["{empty_bvh}"], [KICK, "--model", "nonexistent"],
        [KICK, "--start", "nan"], [KICK, "--duration", "inf"],
    ],
    "scenario": [
        ["nonexistent"], ["soccer_light", "--dt", "0"], ["soccer_light", "--dt", "abc"], ["soccer_light", "--dt", "1"],
        ["soccer_light", "--set", "bogus=1"], ["soccer_light", "--set", "sim.dt=0"], ["soccer_light", "--set", "x"],
        ["soccer_light", "--set", "balls.0.speed=-1"], ["soccer_light", "--set", "sim.substeps=0"],
        ["soccer_light", "--set", "schedule.k_r=-5"], ["soccer_light", "--set", "controller.name=lqr"],
        ["soccer_light", "--set", "root.mode=floating"], ["soccer_light", "--set", "balls.5.speed=1"],
        ["soccer_light", "--set", "clip.path={missing}"], ["soccer_light", "--set", "clip.start=100"],
        ["soccer_light", "--bogus"], [], ["soccer_light", "--dt"], ["soccer_light", "--set", "sim.substeps=1.5"],
        ["soccer_light", "--set", "impact.hold_s=-1"],
    ],
    "run": [
        [], ["{missing}"], ["{broken_yaml}"], ["{unknown_key_yaml}"], ["{notes_txt}"], ["{folder}"],
        [SOCCER, "--set", "bogus=1"], [SOCCER, "--set", "sim.dt=0"], [SOCCER, "--set", "sim.dt=1/0"],
        [SOCCER, "--set", "controller.gains.scale=-1"], [SOCCER, "--set", "controller.gains.k_t=-1"],
        [SOCCER, "--set", "clip.start=-1"], [SOCCER, "--set", "clip.start=100"], [SOCCER, "--set", "noequals"],
        [SOCCER, "--set", "balls.0.preset=golfball"], [SOCCER, "--set", "balls.0.target_link=tail"],
        [SOCCER, "--set", "sim.substeps=0"], [SOCCER, "--set", "sim.solver_iterations=0"], [SOCCER, "--bogus"],
        [SOCCER, "--set", "outputs.video_fps=0"],
    ],
    "sweep": [
        [], ["{missing}"], ["{broken_yaml}"], ["{notes_txt}"], ["{folder}"], [SWEEP, "--workers", "0"],
        [SWEEP, "--workers", "-2"], [SWEEP, "--workers", "two"], [SWEEP, "--workers", "1.5"],
        [SWEEP, "--backend", "dask"], [SWEEP, "--bogus"], [SWEEP, "--workers"], ["{unknown_key_yaml}"],
        [SOCCER], [SWEEP, SWEEP], [SWEEP, "--backend"], ["{empty_bvh}"], ["{rec_npz}"], [KICK],
        [SWEEP, "--workers", "0", "--list"],
    ],
    "play": [
        ["{missing}"], [KICK, "--speed", "0"], [KICK, "--speed", "-1"], [KICK, "--speed", "fast"],
        [KICK, "--frames", "0"], [KICK, "--frames", "-3"], [KICK, "--frames", "x"], [KICK, "--dt", "0"],
        [KICK, "--dt", "1"], [KICK, "--ghost", "ghostly"], [KICK, "--press", "b"], [KICK, "--press", "-1:b"],
        [KICK, "--press", "3:"], [KICK, "--screenshot", "x.png"], [KICK, "--frames", "2", "--screenshot", "x.jpg"],
        ["{broken_yaml}"], ["{unknown_key_yaml}"], [SOCCER, "--set", "bogus=1"], [KICK, "--model", "nonexistent"],
        [], ["{empty_bvh}"],
    ],
    "replay": [
        ["{missing}"], ["{folder}"], ["{rec_npz}"], ["{notes_txt}"], [], ["{folder}", "--speed", "0"],
        ["{folder}", "--speed", "-2"], ["{folder}", "--frames", "0"], ["{folder}", "--frames", "x"],
        ["{folder}", "--ghost", "x"], ["{folder}", "--press", "zz"], ["{folder}", "--screenshot", "a.png"],
        ["{folder}", "--bogus"], ["{missing}", "--frames", "1"], ["{rec_npz}", "--frames", "1"],
        ["{folder}", "--press", "1:"], ["{folder}", "--speed"], ["{broken_yaml}"], ["{dir}/nothing"],
        ["{empty_bvh}"],
    ],
    "report": [
        [], ["{missing}"], ["{folder}"], ["{rec_npz}"], ["{notes_txt}"], ["{dir}/nothing"], ["{folder}", "--html"],
        ["{missing}", "--html"], ["{rec_npz}", "--html"], ["{notes_txt}", "--html"], ["{dir}", "--html"],
        ["{empty_bvh}", "--html"], ["{folder}", "--html", "--fps", "0"], ["{folder}", "--html", "--fps", "x"],
        ["{folder}", "--html", "--fps", "61"], ["{folder}", "--html", "--max-runs", "0"],
        ["{folder}", "--html", "--max-runs", "1.5"], ["{folder}", "--bogus"], ["{folder}", "--html", "-o"],
        ["{folder}", "{folder}", "--html"], ["{dir}/nothing", "--html", "-o", "{dir}/no/such/dir/page.html"],
    ],
    "keyframes": [
        [], ["{missing}"], ["{broken_yaml}"], ["{notes_txt}"], ["{folder}"], ["{empty_bvh}"], [SOCCER],
        [KEYS, "--profile", "cubic"], [KEYS, "--power", "0"], [KEYS, "--power", "-2"], [KEYS, "--power", "x"],
        [KEYS, "--dt", "0"], [KEYS, "--dt", "1/0"], [KEYS, "--dt", "-1/60"], [KEYS, "--controller", "lqr"],
        [KEYS, "--kp-per-kg", "-1"], [KEYS, "--kp-per-kg", "abc"], [KEYS, "--bogus"], [KEYS, KEYS],
        [KEYS, "--profile"], ["{unknown_key_yaml}"],
    ],
    "push": [
        [], ["{missing}"], ["{broken_yaml}"], ["{notes_txt}"], ["{folder}"], [SOCCER], ["stand", "--force", "-5"],
        ["stand", "--force", "x"], ["stand", "--duration", "0"], ["stand", "--duration", "-1"],
        ["stand", "--direction", "north"], ["stand", "--link", "tail"], ["stand", "--dt", "0"],
        ["stand", "--dt", "1/0"], ["stand", "--strategy", "magic"], ["stand", "--kp", "-1"],
        ["stand", "--kd", "-1"], ["stand", "--target", "moon"], ["stand", "--sweep", "{missing}"],
        ["stand", "--bogus"], ["stand", "--time", "0"],
    ],
    "perturb": [
        [], ["{missing}"], ["{broken_yaml}"], ["{notes_txt}"], ["{folder}"], [SOCCER], ["{unknown_key_yaml}"],
        [FREE_WALK, "--seed", "-1"], [FREE_WALK, "--seed", "x"], [FREE_WALK, "--seed", "1.5"],
        [FREE_WALK, "--balls", "-1"], [FREE_WALK, "--balls", "1001"], [FREE_WALK, "--push-times", "-2"],
        [FREE_WALK, "--push-times", "nan"], [FREE_WALK, "--workers", "0"], [FREE_WALK, "--react", "yes"],
        [FREE_WALK, "--bogus"], [FREE_WALK, FREE_WALK], [FREE_WALK, "--seed"],
        [FREE_WALK, "--out"], [FREE_WALK, "--set", "sim.dt=1/60"], [KICK], [FREE_SOCCER_SEARCH],
        [FREE_WALK, "--out", "{rec_npz}"],
    ],
    "reproduce": [
        [], ["nonexistent"], ["tan"], ["--bogus"], ["tan2011", "extra"], ["--out"], ["TAN2011"], [""],
        ["../tan2011"], ["tan2011.py"], ["nonexistent", "--quick"], ["nonexistent", "--out", "x"],
        ["--quick"], ["--out", "x"], ["tan2011", "--bogus"], ["tan2011", "--quick", "extra"], ["x", "y", "z"],
        ["--list", "--bogus"], ["os"], ["__init__"],
    ],
    "optimize": [
        [], ["{missing}"], ["{empty_bvh}"], ["{notes_txt}"], ["{folder}"], ["{broken_yaml}"], ["{unknown_key_yaml}"],
        [KICK, "--method", "lqr"], [KICK, "--method", ""], [KICK, "--samples", "-5"], [KICK, "--samples", "0"],
        [KICK, "--samples", "x"], [KICK, "--iterations", "0"], [KICK, "--iterations", "-1"], [KICK, "--keep", "0"],
        [KICK, "--keep", "50", "--samples", "10"], [KICK, "--segment", "0"], [KICK, "--segment", "-0.1"],
        [KICK, "--segment", "0.001"], [KICK, "--workers", "0"], [KICK, "--workers", "1.5"],
        [KICK, "--backend", "dask"], [KICK, "--seed", "-1"], [KICK, "--dt", "1"], [KICK, "--start", "100"], [KICK, "--start", "file_frame:-3"], [KICK, "--start", "frame:3"], [KICK, "--start", "file:999"],
        [KICK, "--duration", "0"], [KICK, "--set", "bogus=1"], [KICK, "--bogus"], [KICK, KICK],
        [KICK, "--segment", "5"], [KICK, "--weights", "speed=1"], [KICK, "--weights", "velocity=-1"],
        [KICK, "--weights", "velocity"], [KICK, "--weights", "pose=nan"], [KICK, "--selection", "best"],
        [KICK, "--lookahead", "-1"], [KICK, "--lookahead", "x"], [KICK, "--method", "cma", "--lookahead", "2"],
        [KICK, "--init", "{missing}"], [KICK, "--init", "{empty_bvh}"], [KICK, "--init"],
        [KICK, "--method", "cma", "--init", "{rec_npz}"],
        [KICK, "--decay", "0"], [KICK, "--decay", "1.5"], [KICK, "--decay", "nan"], [KICK, "--method", "cma", "--decay", "0.5"],
        [KICK, "--width-scale", "0"], [KICK, "--width-scale", "-1"], [KICK, "--width-scale", "9"],
    ],
}


def _all_cases():
    for command, cases in CASES.items():
        for i, args in enumerate(cases):
            yield pytest.param(command, args, id=f"{command}-{i}")


def test_every_subcommand_has_at_least_20_bad_combinations():
    from tracker.cli import COMMANDS

    assert set(CASES) == set(COMMANDS)
    for command, cases in CASES.items():
        assert len(cases) >= 20, command


@pytest.mark.parametrize("command,args", list(_all_cases()))
def test_bad_arguments_give_one_line_and_exit_2(command, args, files, capsys, tmp_path, monkeypatch):
    if command == "reproduce" and not hasattr(importlib.import_module("tracker.reproduce"), "names"):
        pytest.skip("the reproduction registry (tracker/reproduce/__init__.py) is not on this branch")
    monkeypatch.chdir(tmp_path)  # nothing a case writes lands in the checkout
    monkeypatch.delenv("DISPLAY", raising=False)
    argv = [command] + [a.format(**files) for a in args]
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse
        status = exc.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == EXIT_BAD_INPUT, (argv, status, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    assert "internal error" not in err and "Traceback" not in err


def test_help_lists_the_exit_statuses():
    out = subprocess.run([sys.executable, "-m", "tracker", "--help"], capture_output=True, text=True, check=True).stdout
    text = " ".join(out.split())
    for status in ("0 ok", "2 bad input", "3 the simulation diverged", "4 a free-root character fell"):
        assert status in text
