"""Sweeps: run keys, validation, resume after a kill, summary, local vs Ray backends (issue 7)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracker.cli import main
from tracker.errors import ConfigError
from tracker.experiments.sweep import load_sweep
from tracker.experiments.sweep_summary import largest_stable

from .conftest import CONFIGS, REPO


def sweep_file(tmp_path: Path, wave_config: Path, body: str, name: str = "sw.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"base: {wave_config}\n" + body)
    return path


def test_runs_are_the_grid_crossed_with_the_zipped_lists_with_stable_folder_names(tmp_path, wave_config):
    sw = load_sweep(sweep_file(tmp_path, wave_config, "grid:\n  controller.name: [pd, spd]\n  sim.dt: [1/120, 1/60]\n"
                               "zip:\n  controller.gains.scale: [1, 2.5]\n  clip.start: [0.5, 1.25]\n"))
    assert len(sw.runs) == 8
    assert sw.runs[0].key == "name=pd__dt=1_120__scale=1__start=0.5"
    assert sw.runs[1].key == "name=pd__dt=1_120__scale=2.5__start=1.25"
    assert sw.runs[-1].key == "name=spd__dt=1_60__scale=2.5__start=1.25"
    assert len({r.key for r in sw.runs}) == 8
    cfg = sw.run_config(sw.runs[1])
    assert cfg.controller.gains.scale == 2.5 and cfg.clip.start == 1.25 and cfg.sim.dt == pytest.approx(1 / 120)
    assert cfg.sim.duration == 0.5  # from the base config


@pytest.mark.parametrize("body, message", [
    ("grid:\n  sim.dt: []\n", "sw.yaml: grid.sim.dt: expected a non-empty list of values"),
    ("zip:\n  sim.dt: [1/60, 1/30]\n  controller.gains.scale: [1]\n",
     "sw.yaml: zip: lists must have one common length, got sim.dt: 2, controller.gains.scale: 1"),
    ("grid:\n  controller.gains.scale: [1.0, 1.0000001]\n", "get the same folder name 'scale=1'"),
    ("grid:\n  sim.dt: [1/60, -1]\n", "sim.dt: must be >= 1e-05 s, got -1 [from sweep sw.yaml run dt=-1: sim.dt=-1]"),
    ("grid:\n  sim.dt: [1/60]\nplots:\n  - {x: sim.duration, metric: diverged}\n",
     "sw.yaml: plots.0.x: 'sim.duration' is not a swept key (valid: sim.dt)"),
    ("grid:\n  sim.dt: [1/60]\nplots:\n  - {kind: heatmap, x: sim.dt, metric: diverged}\n",
     "sw.yaml: plots.0.y: required for a heatmap plot"),
    ("grids:\n  sim.dt: [1/60]\n", "sw.yaml: grids: unknown key; did you mean 'grid'?"),
    ("grid:\n  sim.dt: [1/60]\nplots:\n  - {x: sim.dt, metric: diverged, where: {controller.name: pd}}\n",
     "sw.yaml: plots.0.where.controller.name: 'controller.name' is not a swept key (valid: sim.dt)"),
])
def test_a_broken_sweep_is_a_one_line_error(tmp_path, wave_config, body, message):
    with pytest.raises(ConfigError) as err:
        load_sweep(sweep_file(tmp_path, wave_config, body))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_largest_stable_gain_is_the_boundary_below_the_first_divergence():
    rows = [{"finished": True, "c": "pd", "dt": 0.01, "k": k, "diverged": d}
            for k, d in ((1, False), (10, False), (100, True), (1000, False))]
    rows += [{"finished": True, "c": "spd", "dt": 0.01, "k": k, "diverged": False} for k in (1, 10, 100, 1000)]
    rows += [{"finished": False, "c": "spd", "dt": 0.02, "k": 1, "diverged": None}]
    out = largest_stable(rows, "dt", "k", "c")
    assert out == {"pd": [(0.01, 10.0)], "spd": [(0.01, 1000.0)]}


def _metrics_files(folder: Path) -> dict[str, int]:
    return {p.parent.name: p.stat().st_mtime_ns for p in (folder / "runs").glob("*/metrics.json")}


def test_a_sweep_killed_midway_resumes_and_finishes_every_run_exactly_once(tmp_path, wave_config):
    path = sweep_file(tmp_path, wave_config, "set: {sim.dt: 1/480, sim.duration: 1.0}\n"
                      "grid:\n  controller.gains.scale: [0.5, 1, 2, 4, 8, 16]\n"
                      "metrics: [status, joint_error_mean_rad]\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "tracker", "sweep", str(path), "--workers", "1", "--out", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while len(_metrics_files(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        finished_early = proc.poll() is not None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert not finished_early, f"the sweep ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
    before = _metrics_files(out)
    assert 2 <= len(before) < 6, "the kill should land midway"
    assert not (out / "summary.csv").exists()

    status = main(["sweep", str(path), "--workers", "2", "--out", str(out)])
    assert status == 0
    after = _metrics_files(out)
    assert sorted(after) == sorted(r.key for r in load_sweep(path).runs)
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(after)  # no stray folders
    for key, mtime in before.items():
        assert after[key] == mtime  # finished runs were skipped, not redone
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert [r["run"] for r in rows] == [r.key for r in load_sweep(path).runs]
    assert all(r["finished"] == "true" and r["status"] == "ok" for r in rows)
    leftovers = [p for p in (out / "runs").rglob(".*")]
    assert not leftovers, leftovers

    # A third invocation has nothing left to do and writes the same summary.
    text = (out / "summary.csv").read_text()
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    assert (out / "summary.csv").read_text() == text and _metrics_files(out) == after


def test_the_shipped_sweeps_are_valid():
    for name, runs in (("stability", 2 * 7 * 9), ("ball_speed", 4 * 6)):
        sw = load_sweep(CONFIGS / "sweeps" / f"{name}.yaml")
        assert len(sw.runs) == runs and sw.config.plots


def test_ray_backend_gives_the_same_summary_as_local(tmp_path, wave_config):
    pytest.importorskip("ray")
    path = sweep_file(tmp_path, wave_config,
                      "set:\n  schedule.enabled: true\n  balls: [{preset: basketball, target_link: chest, "
                      "impact_time: 1.3, speed: 7, flight_time: 0.25}]\n"
                      "grid:\n  balls.0.mass: [0.6, 3.0]\n  controller.name: [spd, pd]\n"
                      "metrics: [status, diverged, joint_error_mean_rad, impact.peak_deviation_rad]\n"
                      "plots:\n  - {x: balls.0.mass, metric: impact.peak_deviation_rad, hue: controller.name}\n")
    assert main(["sweep", str(path), "--workers", "2", "--out", str(tmp_path / "local")]) == 0
    assert main(["sweep", str(path), "--workers", "2", "--backend", "ray", "--out", str(tmp_path / "ray")]) == 0
    local = (tmp_path / "local" / "summary.csv").read_text()
    assert (tmp_path / "ray" / "summary.csv").read_text() == local
    assert local.count("\n") == 5 and "diverged" in local
    assert (tmp_path / "ray" / "summary_0_line_impact_peak_deviation_rad.png").is_file()


def test_the_ray_backend_without_ray_installed_is_a_one_line_error(tmp_path, wave_config, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    path = sweep_file(tmp_path, wave_config, "grid:\n  controller.gains.scale: [1, 2]\n")
    assert main(["sweep", str(path), "--backend", "ray", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == "error: --backend ray needs the optional 'ray' extra; install it with: pip install -e '.[ray]'\n"
    assert not (tmp_path / "o").exists()


def _children(pid: int) -> set[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sweep_workers_die_within_5_s_of_their_parent_being_killed(tmp_path, wave_config):
    """SIGKILL the sweep (only the parent, not its process group): no worker outlives it by 5 s."""
    path = sweep_file(tmp_path, wave_config, "set: {sim.dt: 1/480, sim.duration: 3.0}\n"
                      "grid:\n  controller.gains.scale: [0.5, 1, 2, 4, 8, 16]\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "tracker", "sweep", str(path), "--workers", "2", "--out", str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            workers = _children(proc.pid)
            if len(workers) >= 2 and any((out / "runs").glob("*/config.yaml")):
                break  # both workers started and a run is under way
            time.sleep(0.05)
        assert proc.poll() is None and len(workers) >= 2, proc.stderr.read().decode()[-2000:] if proc.poll() else ""
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed = time.monotonic()
        while any(_alive(w) for w in workers) and time.monotonic() - killed < 5.0:
            time.sleep(0.05)
        survivors = [w for w in workers if _alive(w)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for w in workers:  # do not leave them behind if the test fails
            try:
                os.kill(w, signal.SIGKILL)
            except OSError:
                pass
    assert not survivors, f"workers {survivors} outlived the killed sweep by more than 5 s"
    assert not (out / "summary.csv").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_a_worker_whose_parent_is_already_gone_ends_at_once():
    """The watchdog's first check: a worker set up for a parent that is not its parent exits with status 1."""
    import multiprocessing as mp

    from tracker.experiments.backends import die_with_parent

    proc = mp.get_context("fork").Process(target=die_with_parent, args=(os.getpid() + 10**6,))
    proc.start()
    proc.join(10)
    assert proc.exitcode == 1


def test_stale_atomic_temporaries_are_removed_and_nothing_else(tmp_path):
    import tempfile

    from tracker.atomic import remove_stale_temporaries

    keep = [".DS_Store", ".gitignore", ".config.yaml", "metrics.json"]
    for name in keep:
        (tmp_path / name).write_text("x")
    stale = []
    for name, suffix in (("timing.json", ""), ("recording.npz", ".npz")):  # as atomic_target makes them
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=suffix, dir=tmp_path)
        os.close(fd)
        stale.append(Path(tmp).name)
    assert sorted(p.name for p in remove_stale_temporaries(tmp_path)) == sorted(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep)
