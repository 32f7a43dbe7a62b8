"""'tracker optimize': search, write, replay; refuses a clip the model cannot stand in (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tracker.cli import main
from tracker.sampling.offsets import load_offsets
from tracker.sim.recording import Recording

ROOT = Path(__file__).resolve().parents[2]
WALK = str((ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve())
RUN_KEYS = ("fell", "joint_error_mean_rad", "joint_error_max_rad", "root_error_mean_m", "ee_error_mean_m",
            "torque_saturation", "effort_mean_nm", "diverged", "steps", "status")


@pytest.mark.parametrize("method", ["samcon", "cma"])
def test_optimize_writes_the_track_the_costs_and_the_replay(tmp_path, method, capsys):
    out = tmp_path / "out"
    status = main(["optimize", WALK, "--method", method, "--duration", "0.4", "--samples", "8", "--keep", "2",
                   "--iterations", "2", "--seed", "3", "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0, printed
    for name in ("offsets.npz", "optimize.json", "optimize.md", "cost_per_iteration.png", "cost_per_segment.png",
                 "config.yaml", "metrics.json", "recording.npz", "report.md", "timing.json"):
        assert (out / name).is_file(), name
    info = json.loads((out / "optimize.json").read_text())
    assert info["method"] == method and len(info["cost_per_iteration"]) == 2
    assert info["cost_per_iteration"][1] <= info["cost_per_iteration"][0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(RUN_KEYS) <= set(metrics) and metrics["fell"] is False
    track = load_offsets(out / "offsets.npz")
    assert track.meta["method"] == method and np.abs(track.values).max() > 0
    assert f"offsets: {(out / 'offsets.npz').resolve()}" in (out / "config.yaml").read_text()
    rec = Recording.load(out / "recording.npz")
    assert rec.n_steps == 24 and rec.meta["root"] == "free"
    assert f"{method}: " in printed and "plain SPD" in printed


def test_a_clip_the_model_cannot_stand_in_is_one_line_exit_2(tmp_path, capsys):
    pose = (ROOT / "data" / "poses" / "stand.yaml").read_text().replace("height: 0.0", "height: 0.5")
    (tmp_path / "jump.yaml").write_text(pose)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"clip: {{path: {tmp_path / 'jump.yaml'}}}\nroot: {{mode: free}}\nsim: {{duration: 1.0}}\n")
    out = tmp_path / "out"
    assert main(["optimize", str(cfg), "--samples", "4", "--keep", "1", "--iterations", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot stand at t = 0 s: nothing touches the ground" in err[0], err
    assert not out.exists()  # refused before anything was written
