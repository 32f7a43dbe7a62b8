"""Results are never silently lost or mixed (issue 34, item 3).

A full disk names the file (exit 2); a plot, report or video that fails is one warning and a
report section, the run keeping its own status; an --out holding another run is refused unless
--force, which removes that run's files only; SIGINT/SIGTERM during the simulation keep what ran
(exit 130); paths too long for the system and folders that cannot be made are one line, exit 2.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tracker.cli import main
from tracker.experiments import runner
from tracker.outdir import check_out, clear_run_files

from .conftest import DEMO_WAVE, REPO

KICK = REPO / "data" / "motions" / "kick.bvh"
MOUSE = REPO / "data" / "keyframes" / "mouse.yaml"
SOCCER = REPO / "configs" / "soccer_light.yaml"
LONG = "x" * 300  # one path component over NAME_MAX (255 bytes)


def wave(tmp_path: Path, plots: bool = True, clip: Path = DEMO_WAVE, extra: str = "") -> Path:
    """A 0.5 s tracking config of a shipped clip."""
    path = tmp_path / "wave.yaml"
    path.write_text(f"name: wave\nclip: {{path: {clip}, start: 1.0}}\nsim: {{dt: 1/60, duration: 0.5}}\n"
                    f"outputs: {{plots: {str(plots).lower()}}}\n{extra}")
    return path


def tracker(*args: str, env: dict | None = None, preexec_fn=None, **popen) -> subprocess.CompletedProcess:
    """``python -m tracker ARGS`` in a fresh interpreter (``env`` added to ours)."""
    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full.pop("TRACKER_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "tracker", *args], env=full, capture_output=True, text=True,
                          timeout=300, preexec_fn=preexec_fn, check=False, **popen)


def saved(path: Path) -> tuple[int, str]:
    """``(steps, status)`` of a saved recording (read as plain arrays)."""
    with np.load(path, allow_pickle=False) as d:
        return len(d["t"]), str(d["status"])


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "internal error" not in err and "Traceback" not in err, err
    return lines[0]


# -- faults while writing -------------------------------------------------------------------------


def _file_size_limit(limit: int):
    def apply() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_full_disk_names_the_file_it_could_not_write_and_exits_2(tmp_path):
    out = tmp_path / "out"
    res = tracker("run", str(wave(tmp_path, plots=False)), "--out", str(out), preexec_fn=_file_size_limit(30_000))
    assert res.returncode == 2, res.stderr
    line = one_error_line(res.stderr)
    assert f"cannot write {out / 'recording.npz'}" in line and "file-size limit" in line, line
    assert (out / "config.yaml").is_file()  # what was written before stays
    assert not (out / "metrics.json").exists()  # the run is not marked finished
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


@pytest.mark.parametrize("clip, controller, status", [(DEMO_WAVE, "spd", 0), (KICK, "pd", 3)], ids=["ok", "diverged"])
def test_a_bad_matplotlib_backend_is_one_warning_and_a_report_section_and_the_run_keeps_its_status(
        tmp_path, clip, controller, status):
    cfg = wave(tmp_path, clip=clip, extra=f"controller: {{name: {controller}}}\n")
    out = tmp_path / "out"
    res = tracker("run", str(cfg), "--out", str(out), env={"MPLBACKEND": "nonexistent_backend"})
    assert res.returncode == status, res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: plots (") and "not written" in lines[0], res.stderr
    report = (out / "report.md").read_text()
    assert "## Problems" in report and "plots (joint_error.png" in report
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["diverged"] == (status == 3) and (out / "recording.npz").is_file()


@pytest.mark.parametrize("what", ["report", "video"])
def test_a_failing_report_or_video_is_one_warning_and_the_run_keeps_its_status(what, tmp_path, capsys, monkeypatch):
    def boom(*_args, **_kwargs):
        raise RuntimeError(f"the {what} writer broke")

    argv = ["run", str(wave(tmp_path)), "--out", str(tmp_path / "out")]
    if what == "video":
        monkeypatch.setattr("tracker.analysis.video.require_video_extra", lambda: None)
        monkeypatch.setattr("tracker.analysis.video.write_video", boom)
        argv.append("--video")
    else:
        monkeypatch.setattr("tracker.analysis.report.report_markdown", boom)
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    name = "report.md" if what == "report" else "video.mp4"
    assert lines == [f"warning: {name} not written (RuntimeError: the {what} writer broke)"]
    out = tmp_path / "out"
    assert (out / "metrics.json").is_file() and (out / "joint_error.png").is_file()
    if what == "video":
        assert "- video.mp4 not written (RuntimeError: the video writer broke)" in (out / "report.md").read_text()


# -- result folders -------------------------------------------------------------------------------


def test_an_out_holding_another_run_is_refused_in_one_line_and_left_as_it_was(tmp_path, capsys):
    out = tmp_path / "out"
    cfg = wave(tmp_path, plots=False)
    assert main(["run", str(cfg), "--out", str(out)]) == 0
    (out / "video.mp4").write_bytes(b"another clip's video")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(["run", str(cfg), "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"--out {out}: holds another run (config.yaml, metrics.json, recording.npz" in line and "--force" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_force_removes_the_earlier_runs_files_and_nothing_else(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "runs").mkdir(parents=True)
    (out / "runs" / "config.yaml").write_text("a sweep's run, in a subfolder\n")
    outside = tmp_path / "precious.npz"
    outside.write_bytes(b"not a result of this folder")
    (out / "recording.npz").symlink_to(outside)
    for name in ("video.mp4", "balls.png", "metrics.json", ".metrics.json.abcd_123", "report.md"):
        (out / name).write_text("stale")
    (out / "notes.txt").write_text("mine")
    assert main(["run", str(wave(tmp_path, plots=False)), "--out", str(out), "--force"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["config.yaml", "metrics.json", "notes.txt", "recording.npz", "runs", "timing.json"]
    assert not (out / "recording.npz").is_symlink() and saved(out / "recording.npz") == (30, "ok")
    assert outside.read_bytes() == b"not a result of this folder"  # the symlink was removed, not followed
    assert (out / "runs" / "config.yaml").is_file() and (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("argv, flag", [
    (["track", str(DEMO_WAVE), "--duration", "0.2"], "--force"),
    (["keyframes", str(MOUSE), "--dt", "1/30"], "--force"),
    (["push", "stand", "--time", "0.2"], "--overwrite"),  # push's --force is the push's size
], ids=["track", "keyframes", "push"])
def test_every_command_with_an_out_folder_refuses_another_run_unless_forced(argv, flag, tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(argv + ["--out", out]) == 0
    capsys.readouterr()
    assert main(argv + ["--out", out]) == 2
    assert flag in one_error_line(capsys.readouterr().err)
    assert main(argv + ["--out", out, flag]) == 0


def test_a_folder_with_other_files_or_a_search_to_resume_is_not_refused(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a run")
    assert check_out(folder, force=False) == folder
    (folder / "checkpoint.pkl").write_bytes(b"")
    (folder / "checkpoint.pkl.key").write_text("tracker samcon checkpoint v1\n")
    assert check_out(folder, force=False, resume_files=("checkpoint.pkl.key",)) == folder  # optimize goes on
    with pytest.raises(Exception, match="holds another run"):
        check_out(folder, force=False)
    assert clear_run_files(folder) == ["checkpoint.pkl", "checkpoint.pkl.key"]
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


# -- interrupted runs -----------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_simulation_keeps_what_ran_and_exits_130(signum, tmp_path):
    # a minute or more of simulation (1/1000 s steps of 64 substeps each), so that even on a loaded
    # machine, where this process may wake late, the run is still simulating when the signal comes
    cfg = tmp_path / "slow.yaml"
    cfg.write_text(f"name: slow\nclip: {{path: {DEMO_WAVE}}}\nsim: {{dt: 1/1000, substeps: 64, solver_iterations: 200}}\n"
                   "outputs: {plots: false}\n")
    out = tmp_path / "out"
    # the progress bar on stderr (TRACKER_PROGRESS=1) says when steps are being simulated: the signal
    # comes after the first ones, not during set-up (a fresh install compiles its kernels first)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TRACKER_PROGRESS": "1"}
    # a test worker (pytest-xdist) may run with SIGINT ignored, and a child inherits that: Python then
    # installs no KeyboardInterrupt for it, as for a shell's background job; the user's terminal does not
    proc = subprocess.Popen([sys.executable, "-m", "tracker", "run", str(cfg), "--out", str(out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    chunks: list[bytes] = []

    def pump() -> None:
        while block := os.read(proc.stderr.fileno(), 4096):
            chunks.append(block)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300
        while not re.search(rb"\| *[1-9][0-9]*/[0-9]+", b"".join(chunks)):  # a step or more done
            assert proc.poll() is None and time.monotonic() < deadline, b"".join(chunks).decode(errors="replace")
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signum)
        proc.wait(timeout=120)
        reader.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 130, err
    assert "interrupted at t = " in err and "wrote what ran to" in err
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["interrupted"] is True and metrics["status"] == "interrupted"
    assert saved(out / "recording.npz") == (metrics["steps"], "interrupted") and metrics["steps"] < 3000


def _interrupt_after(monkeypatch, steps: int, only_baseline: bool = False) -> None:
    """Simulation.step raises KeyboardInterrupt (as SIGINT would) on its ``steps``-th call."""
    from tracker.sim.simulation import Simulation

    step, calls = Simulation.step, [0]

    def interrupted_step(self):
        if not (only_baseline and self.scenario is not None):
            calls[0] += 1
            if calls[0] == steps:
                raise KeyboardInterrupt
        return step(self)

    monkeypatch.setattr(Simulation, "step", interrupted_step)


def test_an_interrupted_run_writes_the_steps_before_it(tmp_path, capsys, monkeypatch):
    _interrupt_after(monkeypatch, 10)
    out = tmp_path / "out"
    assert main(["run", str(wave(tmp_path)), "--out", str(out)]) == 130
    assert "interrupted at t = 1.150 s (clip time), after 9 steps" in capsys.readouterr().err
    assert saved(out / "recording.npz") == (9, "interrupted")
    assert json.loads((out / "metrics.json").read_text())["interrupted"] is True


def test_an_interrupted_baseline_keeps_the_whole_run_and_the_baseline_so_far(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "_BASELINES", {})  # run the baseline, not one from an earlier test
    _interrupt_after(monkeypatch, 20, only_baseline=True)
    out = tmp_path / "out"
    assert main(["run", str(SOCCER), "--set", "sim.duration=1.6", "--set", "sim.substeps=1", "--out", str(out)]) == 130
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["interrupted_during"] == "baseline" and metrics["steps"] == 96 and "impact" not in metrics
    assert saved(out / "baseline.npz") == (19, "interrupted")
    assert runner._BASELINES == {}  # a partial baseline is never reused


def test_an_interrupted_track_writes_the_steps_before_it(tmp_path, capsys, monkeypatch):
    _interrupt_after(monkeypatch, 5)
    out = tmp_path / "out"
    assert main(["track", str(DEMO_WAVE), "--out", str(out)]) == 130
    assert saved(out / "recording.npz") == (4, "interrupted")
    assert json.loads((out / "metrics.json").read_text())["status"] == "interrupted"


# -- special and long paths -----------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["track", f"{LONG}.bvh"], ["track", str(DEMO_WAVE), "--out", LONG], ["retarget", f"{LONG}.bvh"],
    ["retarget", str(DEMO_WAVE), "-o", f"{LONG}.npz"], ["retarget", str(DEMO_WAVE), "--sheet", f"{LONG}.png"],
    ["replay", LONG], ["push", f"{LONG}.yaml"], ["push", "stand", "--time", "0.1", "--out", LONG],
    ["optimize", f"{LONG}.bvh"], ["optimize", str(KICK), "--out", LONG], ["play", f"{LONG}.bvh"],
    ["scenario", LONG], ["keyframes", f"{LONG}.yaml"], ["keyframes", str(MOUSE), "--out", LONG],
    ["run", "{wave}", "--out", LONG],
], ids=lambda argv: "-".join(a if len(a) < 20 else ("LONG" if "xxx" in a else Path(a).name) for a in argv))
def test_a_path_too_long_for_the_system_is_one_line_and_exit_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("TRACKER_DEBUG", raising=False)
    argv = [a.format(wave=wave(tmp_path)) for a in argv]
    assert main(argv) == 2
    one_error_line(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wave.yaml"]  # nothing written


@pytest.mark.parametrize("argv", [
    ["track", str(DEMO_WAVE), "--duration", "0.2"], ["keyframes", str(MOUSE)], ["run", "{wave}"],
    ["push", "stand", "--time", "0.1"],
], ids=["track", "keyframes", "run", "push"])
def test_an_out_that_cannot_be_created_is_one_line_and_exit_2(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TRACKER_DEBUG", raising=False)
    (tmp_path / "file.txt").write_text("a file, not a folder")
    out = tmp_path / "file.txt" / "out"
    assert main([a.format(wave=wave(tmp_path)) for a in argv] + ["--out", str(out)]) == 2
    assert f"cannot create the result folder {out} (Not a directory)" in one_error_line(capsys.readouterr().err)
