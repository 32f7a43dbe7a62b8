"""Sweep state (issue 34, items 2 and 3): a broken metrics.json is rerun, sweep sizes have a limit,
``--list`` of an accepted grid builds and validates little, folder names fit the filesystem.

Runs are faked where the test is about the sweep's bookkeeping, not the simulation: ``_run_one``
writes the run's metrics.json as the runner would, and ``warm_up`` does nothing.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tracker.cli import main
from tracker.errors import ConfigError
from tracker.experiments import sweep as sweep_module
from tracker.experiments.sweep import FULL_CHECKS, MAX_KEY_BYTES, MAX_RUNS, load_sweep, run_sweep


def sweep_file(tmp_path: Path, wave_config: Path, body: str, name: str = "sw.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"base: {wave_config}\n" + body)
    return path


@pytest.fixture
def fake_runs(monkeypatch) -> list[str]:
    """Runs that write ``{"status": "ok", ...}`` without simulating; returns the keys run, in order."""
    ran: list[str] = []

    def run_one(sweep_path: str, run_key: str, folder: str):
        ran.append(run_key)
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / "metrics.json").write_text(json.dumps({"status": "ok", "diverged": False, "steps": 30}))
        return run_key, "ok", ""

    monkeypatch.setattr(sweep_module, "_run_one", run_one)
    monkeypatch.setattr("tracker.experiments.runner.warm_up", lambda cfg: None)
    return ran


BROKEN = {
    "empty": b"",
    "truncated": b'{"status": "ok", "diverged": fa',
    "binary": bytes(range(256)) * 4,
    "a list": b"[1, 2]",
    "null": b"null",
    "an empty mapping": b"{}",
    "nested too deep": b"[" * 100_000,
}


@pytest.mark.parametrize("content", list(BROKEN.values()), ids=list(BROKEN))
def test_a_finished_run_with_a_broken_metrics_json_is_run_again(content, tmp_path, wave_config, fake_runs):
    path = sweep_file(tmp_path, wave_config, "grid:\n  controller.gains.scale: [1, 2]\n")
    out = tmp_path / "out"
    run_sweep(load_sweep(path), out)
    assert fake_runs == ["scale=1", "scale=2"]
    (out / "runs" / "scale=2" / "metrics.json").write_bytes(content)
    notes: list[str] = []

    result = run_sweep(load_sweep(path), out, log=notes.append)
    assert fake_runs[2:] == ["scale=2"] and result.skipped == ["scale=1"] and result.ran == ["scale=2"]
    assert len(notes) == 1 and notes[0].startswith("run scale=2: its metrics.json ") and "running it again" in notes[0]
    assert "\n" not in notes[0]
    assert json.loads((out / "runs" / "scale=2" / "metrics.json").read_text())["status"] == "ok"
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [(r["run"], r["finished"], r["status"]) for r in rows] == [("scale=1", "true", "ok"), ("scale=2", "true", "ok")]


def test_the_command_reruns_a_truncated_metrics_json_and_says_so_in_one_line(tmp_path, wave_config, fake_runs, capsys):
    path = sweep_file(tmp_path, wave_config, "grid:\n  controller.gains.scale: [1]\n")
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out)]) == 0
    (out / "runs" / "scale=1" / "metrics.json").write_text('{"status": "o')
    capsys.readouterr()
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "run scale=1: its metrics.json is unreadable (JSONDecodeError); running it again\n" in err
    assert fake_runs == ["scale=1", "scale=1"]


def test_a_grid_of_a_million_runs_is_refused_before_any_run_is_built(tmp_path, wave_config, monkeypatch, capsys):
    def no_runs(*_args):
        raise AssertionError("runs were built")

    monkeypatch.setattr(sweep_module, "_runs", no_runs)
    values = ", ".join(str(1 + i / 1000) for i in range(1000))
    path = sweep_file(tmp_path, wave_config, f"grid:\n  controller.gains.scale: [{values}]\n  clip.start: [{values}]\n")
    with pytest.raises(ConfigError) as err:
        load_sweep(path)
    assert str(err.value) == (f"{path}: grid: 1000000 runs (1000 x 1000) is over the limit of {MAX_RUNS}; split the "
                              "sweep into smaller ones")
    assert main(["sweep", str(path), "--list"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_zipped_lists_count_toward_the_limit(tmp_path, wave_config):
    grid = ", ".join(str(1 + i / 100) for i in range(101))
    zipped = ", ".join(str(0.5 + i / 1000) for i in range(100))
    path = sweep_file(tmp_path, wave_config, f"grid:\n  controller.gains.scale: [{grid}]\nzip:\n  clip.start: [{zipped}]\n")
    with pytest.raises(ConfigError, match=r"grid: 10100 runs \(101 x 100 zipped\) is over the limit of 10000"):
        load_sweep(path)


def test_listing_a_10000_run_grid_validates_a_few_configs_not_every_run(tmp_path, wave_config, monkeypatch, capsys):
    """--list of the largest accepted grid answers at once: every value is checked, a few runs in full
    (the rest before any run starts), instead of 10000 config validations (minutes)."""
    calls = []
    real = sweep_module.config_from_data

    def counted(*args, **kwargs):
        calls.append(1)
        assert len(calls) <= FULL_CHECKS, "more full validations than FULL_CHECKS"
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "config_from_data", counted)
    scales = ", ".join(str(1 + i / 100) for i in range(100))
    starts = ", ".join(str(0.5 + i / 1000) for i in range(100))
    path = sweep_file(tmp_path, wave_config, f"grid:\n  controller.gains.scale: [{scales}]\n  clip.start: [{starts}]\n")
    assert main(["sweep", str(path), "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10_000 and lines[0] == "scale=1__start=0.5" and lines[-1] == "scale=1.99__start=0.599"
    assert len(calls) == FULL_CHECKS


def test_a_bad_grid_value_past_the_fully_checked_runs_is_still_refused_when_read(tmp_path, wave_config):
    dts = [f"1/{60 + i}" for i in range(40)] + ["-1"]  # -1 is in run 80, past the FULL_CHECKS runs
    path = sweep_file(tmp_path, wave_config, f"grid:\n  sim.dt: [{', '.join(dts)}]\n  controller.gains.scale: [1, 2]\n")
    with pytest.raises(ConfigError) as err:
        load_sweep(path)
    assert "sim.dt: must be >= 1e-05 s, got -1 [from sweep sw.yaml run dt=-1__scale=1: sim.dt=-1]" in str(err.value)


def test_a_bad_combination_past_the_checked_runs_is_refused_before_any_run_starts(tmp_path, wave_config, fake_runs):
    """clip.start 0.8 with sim.duration 0.4 ends before the ball's impact at 1.3 s; each value alone is fine."""
    path = sweep_file(tmp_path, wave_config,
                      "set:\n  balls: [{preset: basketball, target_link: chest, impact_time: 1.3, speed: 7, "
                      "flight_time: 0.25}]\ngrid:\n  clip.start: [1.0, 0.8]\n  sim.duration: [1.0, 0.4]\n")
    sweep = load_sweep(path)  # --list works
    assert [r.key for r in sweep.runs][-1] == "start=0.8__duration=0.4"
    with pytest.raises(ConfigError, match=r"run start=0\.8__duration=0\.4: .*balls\.0\.impact_time"):
        run_sweep(sweep, tmp_path / "out")
    assert fake_runs == [] and not any((tmp_path / "out" / "runs").iterdir())


def test_a_long_grid_value_gets_a_short_unique_folder_name_that_stays_the_same(tmp_path, wave_config, fake_runs):
    long_a, long_b = "a" * 300, "a" * 299 + "b"
    path = sweep_file(tmp_path, wave_config, f"grid:\n  description: [short, {long_a}, {long_b}]\n")
    keys = [r.key for r in load_sweep(path).runs]
    assert keys[0] == "description=short"
    assert all(len(k.encode()) <= MAX_KEY_BYTES for k in keys) and len(set(keys)) == 3
    assert keys[1].startswith("description=aaa") and "~" in keys[1]
    assert keys == [r.key for r in load_sweep(path).runs]  # stable: a resumed sweep finds its folders

    out = tmp_path / "out"
    run_sweep(load_sweep(path), out)
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(keys)
    assert run_sweep(load_sweep(path), out).skipped == keys


def test_an_output_folder_whose_run_paths_would_be_too_long_is_refused(tmp_path, wave_config, fake_runs):
    path = sweep_file(tmp_path, wave_config, "grid:\n  controller.gains.scale: [1]\n")
    deep = tmp_path.joinpath(*["d" * 250] * 17)
    with pytest.raises(ConfigError, match="over the system's limit of 4096"):
        run_sweep(load_sweep(path), deep)
    with pytest.raises(ConfigError, match="a folder name is over 255 bytes"):
        run_sweep(load_sweep(path), tmp_path / ("x" * 256))
    assert fake_runs == []
