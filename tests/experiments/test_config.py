"""The experiment config schema: defaults, paths, overrides, round trips and one-line errors (issue 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker.cli import main
from tracker.errors import ConfigError
from tracker.experiments.config import ExperimentConfig, dump_config, keys_table, load_config

from .conftest import DEMO_WAVE


def write(tmp_path: Path, text: str, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_minimal_config_gets_the_defaults_a_user_expects(tmp_path):
    cfg = load_config(write(tmp_path, f"clip: {{path: {DEMO_WAVE}}}\n", "my_run.yaml"))
    assert cfg.name == "my_run"
    assert cfg.model == "humanoid"
    assert cfg.controller.name == "spd" and cfg.controller.target_velocity == "ref"
    assert cfg.root.mode == "anchored"
    assert cfg.sim.dt == pytest.approx(1 / 60, rel=1e-15)
    assert cfg.controller.gains.k_t is None and cfg.controller.gains.kd_mode == "auto"
    assert cfg.schedule.enabled is False and cfg.balls == []
    assert cfg.outputs.plots and cfg.outputs.recording and not cfg.outputs.video
    assert cfg.duration is None  # to the clip's end


def test_relative_paths_resolve_against_the_config_folder_not_the_working_directory(tmp_path, monkeypatch):
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (tmp_path / "a" / "clip.bvh").write_bytes(DEMO_WAVE.read_bytes())
    path = write(sub, "clip: {path: ../clip.bvh}\n")
    monkeypatch.chdir(tmp_path)
    cfg = load_config(path)
    assert cfg.clip.path == str((tmp_path / "a" / "clip.bvh").resolve())


def test_fractions_overrides_and_list_indices(tmp_path):
    path = write(tmp_path, f"clip: {{path: {DEMO_WAVE}}}\nballs:\n"
                 "  - {preset: basketball, target_link: chest, impact_time: 1.5, speed: 6}\n")
    cfg = load_config(path, ["sim.dt=1/30", "balls.0.speed=8", "controller.gains.k_t=300",
                             "outputs.video_size=[320, 240]", "schedule.enabled=true"])
    assert cfg.sim.dt == pytest.approx(1 / 30, rel=1e-15)
    assert cfg.balls[0].speed == 8.0 and isinstance(cfg.balls[0].speed, float)
    assert cfg.controller.gains.k_t == 300.0
    assert cfg.outputs.video_size == (320, 240)
    assert cfg.schedule.enabled is True
    # A (key, value) pair is the programmatic form of --set; the file itself is not changed.
    again = load_config(path, [("balls.0.mass", 2.0)])
    assert again.balls[0].mass == 2.0 and again.balls[0].speed == 6.0


def test_the_resolved_config_loads_again_to_the_same_config(tmp_path):
    path = write(tmp_path, f"clip: {{path: {DEMO_WAVE}, start: 0.5}}\ncontroller: {{gains: {{kd: {{wrists: 2}}}}}}\n"
                 "balls: [{preset: soccer, target_link: right_foot, impact_time: 1.5, speed: 0}]\n")
    cfg = load_config(path, ["sim.dt=1/120"])
    (tmp_path / "out").mkdir()
    resolved = write(tmp_path / "out", dump_config(cfg, "header"), "config.yaml")
    again = load_config(resolved)
    assert isinstance(again, ExperimentConfig)
    assert again == cfg.replace(name=cfg.name)
    assert resolved.read_text().startswith("# header\n")


def test_the_keys_table_documents_every_section_with_units():
    text = keys_table()
    for key in ("clip.path", "controller.gains.k_t", "root.kp_linear", "schedule.k_r", "sim.dt",
                "balls[i].speed", "impact.recover_threshold_rad", "outputs.video_fps"):
        assert key in text
    assert "[m/s]" in text and "[s]" in text


# Each broken config: file text, extra CLI args, the exact message after "error: " ("{f}" stands for the
# config file, "{d}" for its folder). Every one must exit 2 with that one line on stderr and no traceback.
BALL = "{preset: soccer, target_link: chest, impact_time: 1, speed: 3"
BROKEN = {
    "unknown top-level key, with a suggestion": (
        "clip: {path: clip.bvh}\ncontroler: {name: pd}\n", [],
        "{f}: controler: unknown key; did you mean 'controller'? (valid: name, description, seed, model, clip, "
        "controller, root, schedule, sim, balls, launch, impact, outputs)"),
    "unknown nested key": (
        "clip: {path: clip.bvh}\ncontroller: {gains: {k_x: 3}}\n", [],
        "{f}: controller.gains.k_x: unknown key; did you mean 'k_t'? (valid: k_t, inertia_scaling, kd_mode, "
        "kd_ratio, kd, scale, torque_limits)"),
    "wrong type": (
        "clip: {path: clip.bvh}\nsim: {dt: fast}\n", [],
        "{f}: sim.dt: expected a number or a fraction like 1/60, got 'fast'"),
    "out of range": (
        "clip: {path: clip.bvh}\nsim: {dt: -0.01}\n", [], "{f}: sim.dt: must be >= 1e-05 s, got -0.01"),
    "unknown controller name": (
        "clip: {path: clip.bvh}\ncontroller: {name: lqr}\n", [],
        "{f}: controller.name: 'lqr' is not allowed (valid: spd, pd, native, keyframe_spd, keyframe_pd, analytic_pd, timed_pd, vt)"),
    "missing clip file": (
        "clip: {path: missing.bvh}\n", [],
        "{f}: clip.path: file 'missing.bvh' does not exist (looked for {d}/missing.bvh)"),
    "missing required section": (
        "controller: {name: spd}\n", [], "{f}: clip: missing required key (the clip to track; at least clip.path)"),
    "number for a boolean": (
        "clip: {path: clip.bvh}\noutputs: {plots: 1}\n", [], "{f}: outputs.plots: expected true or false, got 1"),
    "YAML syntax error": (
        "clip: {path: clip.bvh\nsim: {dt: 1/60}\n", [], "{f}:2: invalid YAML (did not find expected ',' or '}')"),
    "empty file": ("", [], "{f}: the config is empty (it needs at least clip.path)"),
    "a list instead of a mapping": (
        "- clip\n- sim\n", [], "{f}: expected a mapping of sections (clip, controller, sim...), got [clip, sim]"),
    "unknown model": (
        "clip: {path: clip.bvh}\nmodel: robot\n", [],
        "{f}: model: 'robot' is not a registered model or a model YAML file "
        "(valid: humanoid, deepmimic, <path to a model .yaml>)"),
    "clip end before its start": (
        "clip: {path: clip.bvh, start: 2.0, end: 1.0}\n", [], "{f}: clip.end: must be after clip.start (2 s), got 1"),
    "k_r without k_t": (
        "clip: {path: clip.bvh}\nschedule: {enabled: true, k_r: 100}\n", [],
        "{f}: schedule.k_r: needs controller.gains.k_t (k_r is in its units); with the model's group gains give "
        "schedule.k_r_ratio instead"),
    "short vector": (
        f"clip: {{path: clip.bvh}}\nballs: [{BALL}, direction: [1, 0]}}]\n", [],
        "{f}: balls.0.direction: expected a list of 3 numbers, got [1, 0]"),
    "unknown ball preset": (
        "clip: {path: clip.bvh}\nballs: [{preset: football, target_link: chest, impact_time: 1, speed: 3}]\n", [],
        "{f}: balls.0.preset: 'football' is not a ball preset (valid: basketball, soccer, soccer_heavy, volleyball)"),
    "unknown link": (
        "clip: {path: clip.bvh}\nballs: [{preset: soccer, target_link: nose, impact_time: 1, speed: 3}]\n", [],
        "{f}: balls.0.target_link: 'nose' is not a link of model 'humanoid' (valid: pelvis, abdomen, chest, head, "
        "left_thigh, left_shin, left_foot, right_thigh, right_shin, right_foot, left_upper_arm, left_forearm, "
        "left_hand, right_upper_arm, right_forearm, right_hand)"),
    "ball without impact time": (
        "clip: {path: clip.bvh}\nballs: [{preset: soccer, target_link: chest, speed: 3}]\n", [],
        "{f}: balls.0.impact_time: missing required key (clip time at which the ball meets the link's reference "
        "position; or {file: s} / {file_frame: n} in the clip file)"),
    "impact after the run ends": (
        f"clip: {{path: clip.bvh}}\nsim: {{duration: 0.5}}\nballs: [{BALL}}}]\n", [],
        "{f}: balls.0.impact_time: is after the run ends (at 0.5 s: clip.start + the duration), got 1"),
    "a launch that cannot be made": (
        "clip: {path: clip.bvh}\nballs: [{preset: soccer, target_link: chest, impact_time: 1.5, speed: 2}]\n", [],
        "{f}: balls.0: launch of soccer at chest (impact at t = 1.500 s clip time): a ball at 2 m/s cannot fly 0.60 s from "
        "1.5 m high to the target; nearest feasible: flight_time 0.20 s at 2 m/s or speed 3.3 m/s with this flight "
        "time (0.60 s); or give a direction or another launch height (launch.height)"),
    "launch height out of range": (
        "clip: {path: clip.bvh}\nlaunch: {height: 0}\n", [], "{f}: launch.height: must be > 0 m, got 0"),
    "--set a launch height that is not a number": (
        "clip: {path: clip.bvh}\n", ["--set", "launch.height=high"],
        "{f}: launch.height: expected a number, got 'high' [from --set launch.height=high]"),
    "unknown launch key": (
        "clip: {path: clip.bvh}\nlaunch: {speed: 3}\n", [],
        "{f}: launch.speed: unknown key (valid: height)"),
    "odd video size": (
        "clip: {path: clip.bvh}\noutputs: {video_size: [641, 360]}\n", [],
        "{f}: outputs.video_size: width and height must be even (H.264), got [641, 360]"),
    "name unusable in a folder name": (
        "name: my run\nclip: {path: clip.bvh}\n", [],
        "{f}: name: 'my run' must be non-empty and use only letters, digits, '.', '_', '-'"),
    "--set on a list item that does not exist": (
        "clip: {path: clip.bvh}\n", ["--set", "balls.0.speed=3"],
        "{f}: balls.0: index 0 is out of range (balls has no items) [from --set balls.0.speed=3]"),
    "--set with a misspelt key": (
        "clip: {path: clip.bvh}\n", ["--set", "sim.dtt=1/30"],
        "{f}: sim.dtt: unknown key; did you mean 'dt'? (valid: dt, substeps, duration, solver_iterations, max_speed) "
        "[from --set sim.dtt=1/30]"),
    "--set out of range": (
        "clip: {path: clip.bvh}\n", ["--set", "controller.gains.scale=0"],
        "{f}: controller.gains.scale: must be > 0, got 0 [from --set controller.gains.scale=0]"),
    "--set without =": (
        "clip: {path: clip.bvh}\n", ["--set", "sim.dt"],
        "--set 'sim.dt': expected KEY=VALUE with a dotted key like sim.dt=1/30"),
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_a_broken_config_is_one_line_naming_the_file_and_key_with_status_2(case, tmp_path, capsys, monkeypatch):
    text, args, message = BROKEN[case]
    monkeypatch.delenv("TRACKER_DEBUG", raising=False)
    (tmp_path / "clip.bvh").write_bytes(DEMO_WAVE.read_bytes())
    path = write(tmp_path, text)
    out = tmp_path / "results"
    status = main(["run", str(path), *args, "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err == "error: " + message.replace("{f}", str(path)).replace("{d}", str(tmp_path)) + "\n"
    assert "Traceback" not in captured.err + captured.out
    assert not out.exists()  # nothing written for a config that cannot run


def test_there_are_at_least_twelve_broken_configs():
    assert len(BROKEN) >= 12


def test_a_missing_config_file_and_an_unreadable_one(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope.yaml'}: no such config file\n"
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")


def test_the_launch_height_is_a_config_key_the_balls_leave_from(tmp_path):
    """volleyball_slow's 6 m/s ball thrown from launch.height = 1.1 m instead of the default 1.5 m; a 2 m/s
    ball that cannot fly from 1.5 m can from 1.1 m; the resolved config keeps the height."""
    from .conftest import CONFIGS
    from tracker.character.model import load_model
    from tracker.experiments.build import check_launches
    from tracker.experiments.sources import launches_of, reference_of
    from tracker.scenarios.launch import plan_launch

    base = load_config(CONFIGS / "volleyball_slow.yaml")
    assert base.launch.height == 1.5
    cfg = load_config(CONFIGS / "volleyball_slow.yaml", ["launch.height=1.1"])
    ref, model = reference_of(cfg), load_model(cfg.model)
    for c, height in ((base, 1.5), (cfg, 1.1)):
        (launch,) = launches_of(c)
        assert launch.release_height == height
        plan = plan_launch(launch, ref, model, c.sim.dt, c.clip.start, substeps=c.sim.substeps)
        assert plan.position[2] == pytest.approx(height, abs=1e-9)
    slow = ["balls.0.speed=2.2", "balls.0.flight_time=0.41"]
    with pytest.raises(ConfigError, match="cannot fly 0.42 s from 1.5 m high"):
        check_launches(load_config(CONFIGS / "volleyball_slow.yaml", slow))
    check_launches(load_config(CONFIGS / "volleyball_slow.yaml", [*slow, "launch.height=1.1"]))
    assert "launch: {height: 1.1}" in dump_config(cfg, "header")
