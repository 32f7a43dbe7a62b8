"""``tracker run``: every shipped config runs, result folders, determinism, divergence, video (issue 7)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from tracker.cli import main
from tracker.experiments import runner
from tracker.experiments.config import load_config

from .conftest import CONFIGS, MOCAP, cli

RUN_CONFIGS = sorted(p for p in CONFIGS.rglob("*.yaml") if "sweeps" not in p.relative_to(CONFIGS).parts)


def short_overrides(path: Path, seconds: float = 0.5) -> list[str]:
    """--set options that shorten a config to about ``seconds``, keeping its balls' impacts in the run."""
    cfg = load_config(path)
    last_impact = max((b.impact_time for b in cfg.balls), default=0.0)
    duration = max(seconds, last_impact - cfg.clip.start + 0.3)
    if cfg.duration is not None:
        duration = min(duration, cfg.duration)
    return ["--set", f"sim.duration={duration}", "--set", "outputs.plots=false"]


def needs_shared(path: Path) -> bool:
    clip = (yaml.safe_load(path.read_text()).get("clip") or {}).get("path", "")
    return "shared/mocap" in str(clip)


def test_configs_folder_has_tracking_and_tan2011_configs():
    names = {p.relative_to(CONFIGS).as_posix() for p in RUN_CONFIGS}
    assert {"tracking/demo_wave_spd.yaml", "tan2011/spd_kick_30hz.yaml", "tan2011/pd_kick_30hz.yaml"} <= names


@pytest.mark.parametrize("path", RUN_CONFIGS, ids=[p.relative_to(CONFIGS).as_posix() for p in RUN_CONFIGS])
def test_every_config_runs_through_tracker_run(path, tmp_path, capsys):
    if needs_shared(path) and not MOCAP.is_dir():
        pytest.skip("needs ../shared/mocap beside the checkout")
    out = tmp_path / "result"
    status = main(["run", str(path), *short_overrides(path), "--out", str(out)])
    captured = capsys.readouterr()
    free = load_config(path).root.mode == "free"  # a free-root config may fall (exit 4: it needs its offset track)
    assert status in ((0, 3, 4) if free else (0, 3)), captured.err
    metrics = json.loads((out / "metrics.json").read_text())
    assert (status == 3) == metrics["diverged"]
    assert (status == 4) == (metrics["fell"] and not metrics["diverged"])
    assert metrics["steps"] > 0 and (out / "recording.npz").is_file() and (out / "config.yaml").is_file()
    assert load_config(out / "config.yaml").name == load_config(path).name  # the resolved config loads again
    if load_config(path).balls:
        assert "impact" in metrics and (out / "baseline.npz").is_file()


@pytest.mark.skipif(not MOCAP.is_dir(), reason="needs ../shared/mocap beside the checkout")
def test_tan2011_pd_diverges_where_spd_tracks_at_30_hz(tmp_path, capsys):
    """Tan et al.'s point on the humanoid: same gains and time step, PD blows up and SPD tracks."""
    outcome = {}
    for name in ("pd_kick_30hz", "spd_kick_30hz", "spd_kick_30hz_stiff"):
        out = tmp_path / name
        status = main(["run", str(CONFIGS / "tan2011" / f"{name}.yaml"), "--set", "outputs.plots=false",
                       "--set", "sim.duration=1.0", "--out", str(out)])
        outcome[name] = (status, json.loads((out / "metrics.json").read_text()))
    capsys.readouterr()
    assert outcome["pd_kick_30hz"][0] == 3 and outcome["pd_kick_30hz"][1]["diverged"]
    for name in ("spd_kick_30hz", "spd_kick_30hz_stiff"):
        status, m = outcome[name]
        assert status == 0 and m["steps"] == 30
        assert m["joint_error_mean_rad"] < 0.02  # measured 0.005 and 0.004 over the 3 s kick


def test_the_result_folder_has_plots_report_and_links(wave_config, tmp_path, capsys):
    out = tmp_path / "r"
    status = main(["run", str(wave_config), "--set", "outputs.plots=true", "--out", str(out)])
    text = capsys.readouterr().out
    assert status == 0
    assert "joint error  mean" in text and f"wrote {out}/" in text
    for name in ("config.yaml", "metrics.json", "timing.json", "recording.npz", "joint_error.png", "gains.png",
                 "joint_angles.png", "report.md"):
        assert (out / name).is_file(), name
    report = (out / "report.md").read_text()
    for target in ("joint_error.png", "gains.png", "joint_angles.png", "config.yaml", "metrics.json"):
        assert f"]({target})" in report
    assert (out / "joint_error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    metrics = json.loads((out / "metrics.json").read_text())
    assert "wall_s" not in metrics and "realtime_factor" not in metrics  # wall clock lives in timing.json
    assert "sim_s" in json.loads((out / "timing.json").read_text())
    assert metrics["steps"] == 30 and metrics["status"] == "ok"


def test_the_same_config_gives_identical_files_in_two_processes(tmp_path):
    """Determinism: two fresh interpreters run one config; every file of the two folders is the same
    byte for byte (plots, recordings and report included), except timing.json (wall-clock times)."""
    from .conftest import DEMO_WAVE

    path = tmp_path / "ball.yaml"
    path.write_text(f"clip: {{path: {DEMO_WAVE}, start: 1.0}}\nsim: {{duration: 0.8}}\nschedule: {{enabled: true}}\n"
                    "balls: [{preset: basketball, target_link: chest, impact_time: 1.4, speed: 7, flight_time: 0.25}]\n"
                    "outputs: {plots: true}\n")
    for name in ("a", "b"):
        proc = cli("run", str(path), "--out", str(tmp_path / name))
        assert proc.returncode == 0, proc.stderr
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    names = {p.name for p in files_a}
    assert {"config.yaml", "metrics.json", "recording.npz", "baseline.npz", "joint_error.png", "gains.png",
            "joint_angles.png", "balls.png", "report.md", "timing.json"} <= names
    differ = [str(p) for p in files_a if (tmp_path / "a" / p).read_bytes() != (tmp_path / "b" / p).read_bytes()]
    assert differ == ["timing.json"]
    metrics = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert metrics["impact"]["impacts"] > 0  # the ball did hit, so the comparison covers contacts too
    assert metrics["impact"]["peak_deviation_rad"] > 0.01
    with np.load(tmp_path / "a" / "recording.npz") as rec:
        assert "wall_s" not in json.loads(str(rec["meta"]))  # wall-clock time lives in timing.json
    assert "sim_s" in json.loads((tmp_path / "a" / "timing.json").read_text())


def test_a_diverged_run_writes_what_it_has_and_exits_3(wave_config, tmp_path, capsys):
    out = tmp_path / "pd"
    status = main(["run", str(wave_config), "--set", "controller.name=pd", "--set", "sim.dt=1/30",
                   "--set", "outputs.plots=true", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 3
    assert "DIVERGED: t = " in captured.out
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["diverged"] is True and metrics["status"] == "diverged" and metrics["message"].startswith("t = ")
    rec = np.load(out / "recording.npz")
    assert 0 < len(rec["t"]) < 15 and np.isfinite(rec["q"]).all()
    assert "**DIVERGED**" in (out / "report.md").read_text()


def test_a_plot_or_report_that_fails_loses_nothing_and_keeps_the_exit_status(wave_config, tmp_path, capsys,
                                                                              monkeypatch):
    """A diverged run whose gains plot overflows in matplotlib and whose report cannot be written:
    metrics.json and the recording are there, each failure is one warning line, the exit status is 3."""
    import tracker.analysis.plots as plots
    import tracker.analysis.report as report

    def overflow(*_args, **_kw):
        raise OverflowError("cannot convert float infinity to integer")

    def disk_full(*_args, **_kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plots, "plot_gains", overflow)
    out = tmp_path / "pd"
    status = main(["run", str(wave_config), "--set", "controller.name=pd", "--set", "sim.dt=1/30",
                   "--set", "outputs.plots=true", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 3
    assert err == "warning: gains.png not written (OverflowError: cannot convert float infinity to integer)\n"
    assert json.loads((out / "metrics.json").read_text())["diverged"] is True
    assert (out / "recording.npz").is_file() and (out / "joint_error.png").is_file()
    assert not (out / "gains.png").exists()
    assert "- gains.png not written (OverflowError: cannot convert float infinity to integer)" in \
        (out / "report.md").read_text()
    assert json.loads((out / "timing.json").read_text())["problems"] == [
        "gains.png not written (OverflowError: cannot convert float infinity to integer)"]

    monkeypatch.setattr(report, "report_markdown", disk_full)
    out = tmp_path / "ok"
    status = main(["run", str(wave_config), "--set", "outputs.plots=true", "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 0
    assert err.splitlines() == [
        "warning: gains.png not written (OverflowError: cannot convert float infinity to integer)",
        "warning: report.md not written (OSError: [Errno 28] No space left on device)"]
    files = sorted(p.name for p in out.iterdir())
    assert {"metrics.json", "recording.npz", "config.yaml", "timing.json"} <= set(files)
    assert "report.md" not in files and not [f for f in files if f.startswith(".")]


def test_a_run_in_a_folder_of_an_earlier_run_is_unfinished_until_its_metrics_are_written(wave_config, tmp_path,
                                                                                         monkeypatch):
    import tracker.experiments.runner as run_module

    def broken(*_args, **_kw):
        raise RuntimeError("simulation crashed")

    monkeypatch.setattr(run_module, "_timed_sim", broken)
    (tmp_path / "crash").mkdir()
    (tmp_path / "crash" / "metrics.json").write_text("{}\n")  # an earlier run in the same folder
    with pytest.raises(RuntimeError, match="simulation crashed"):
        runner.run_experiment(load_config(wave_config), tmp_path / "crash")
    assert sorted(p.name for p in (tmp_path / "crash").iterdir()) == ["config.yaml"]


def test_a_missing_video_extra_is_a_one_line_error_before_anything_runs(wave_config, tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "imageio", None)  # import imageio -> ImportError
    status = main(["run", str(wave_config), "--video", "--out", str(tmp_path / "v")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("error: video output needs the optional 'video' extra") and err.count("\n") == 1
    assert "pip install -e '.[video]'" in err
    assert not (tmp_path / "v").exists()


def test_video_plays_and_shows_both_characters(wave_config, tmp_path, capsys):
    imageio = pytest.importorskip("imageio")
    pytest.importorskip("imageio_ffmpeg")
    out = tmp_path / "v"
    status = main(["run", str(wave_config), "--video", "--set", "outputs.video_size=[320, 180]",
                   "--set", "outputs.video_fps=20", "--out", str(out)])
    capsys.readouterr()
    assert status == 0
    reader = imageio.get_reader(out / "video.mp4")
    try:
        meta = reader.get_meta_data()
        assert meta["size"] == (320, 180) and meta["fps"] == 20
        # 0.5 s of steps at 60 Hz (t = 1/60 ... 0.5 after the start) sampled at 20 fps: 10 frames.
        assert reader.count_frames() == 10
        frame = reader.get_data(5).astype(int)
    finally:
        reader.close()
    assert frame.shape == (180, 320, 3)
    r, g, b = frame[..., 0], frame[..., 1], frame[..., 2]
    orange = (r > g + 40) & (r > b + 80)  # the simulated character
    green = (g > r + 40) & (g > b + 30)  # the reference, 1.2 m to its left (right of the picture)
    left, right = slice(0, 160), slice(160, 320)
    assert orange[:, left].sum() > 300 and green[:, right].sum() > 300
    assert orange[:, right].sum() < 30 and green[:, left].sum() < 30


def test_gui_without_a_display_is_a_one_line_error_not_a_silent_exit(wave_config, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    assert main(["run", str(wave_config), "--gui", "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --gui needs a display") and err.count("\n") == 1
    assert not (tmp_path / "g").exists()
