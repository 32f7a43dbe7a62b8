"""'tracker optimize': search, write, replay; refuses a clip the model cannot stand in (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tracker.cli import main
from tracker.sim.offsets import load_offsets
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
    assert rec.n_steps == 48 and rec.meta["root"] == "free"  # a bare clip: 1/120 s (CLIP_SETTINGS)
    replay = (out / "config.yaml").read_text()
    assert "scale: 3.0" in replay and "balance: {enabled: true, kp: 0.0, kd: 0.0" in replay  # 3x gains, stance-held
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


@pytest.mark.parametrize("method", ["samcon", "cma"])
def test_a_killed_optimize_resumes_and_ends_with_the_uninterrupted_result(tmp_path, method):
    import pickle
    import signal
    import subprocess
    import sys
    import time

    args = [sys.executable, "-m", "tracker", "optimize", WALK, "--method", method, "--duration", "0.6",
            "--samples", "16", "--keep", "3", "--iterations", "2", "--seed", "4"]
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    subprocess.run(args + ["--out", str(whole)], check=True, capture_output=True, cwd=ROOT, timeout=600)
    proc = subprocess.Popen(args + ["--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=ROOT)
    ckpt = killed / "checkpoint.pkl"
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:  # kill it once it is well into the search
            if ckpt.is_file() and (killed / "checkpoint.pkl.key").is_file():
                try:
                    state = pickle.loads(ckpt.read_bytes())
                except (EOFError, pickle.UnpicklingError):
                    state = {}
                done = state.get("iteration", 0) * 6 + state.get("segment", 0)
                if done >= 3:
                    break
            assert proc.poll() is None, "the search ended before it could be killed"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        import glob
        import tempfile

        for d in ("/dev/shm", tempfile.gettempdir()):  # a killed process may leave its engine scratch file
            for f in glob.glob(f"{d}/tracker-*{proc.pid}-*.bullet"):
                Path(f).unlink(missing_ok=True)
    assert not (killed / "offsets.npz").exists()
    subprocess.run(args + ["--out", str(killed)], check=True, capture_output=True, cwd=ROOT, timeout=600)
    timing = json.loads((killed / "timing.json").read_text())
    assert timing["resumed_from"] is not None and timing["resumed_from"]["segment"] + \
        6 * timing["resumed_from"].get("iteration", 0) >= 3
    for name in ("offsets.npz", "optimize.json", "recording.npz", "metrics.json"):
        assert (killed / name).read_bytes() == (whole / name).read_bytes(), name
    assert not ckpt.exists()


def test_weights_and_selection_reach_the_search_and_are_recorded(tmp_path, capsys):
    runs = {}
    for name, extra in (("default", []), ("no_velocity", ["--weights", "velocity=0,root=20,contact=2", "--selection", "spread",
                                                              "--lookahead", "1", "--width-scale", "0.5",
                                                              "--decay", "0.6"])):
        out = tmp_path / name
        assert main(["optimize", WALK, "--duration", "0.2", "--samples", "6", "--keep", "2", "--iterations", "1",
                     "--seed", "2", "--out", str(out), *extra]) in (0, 4)
        runs[name] = json.loads((out / "optimize.json").read_text())
    capsys.readouterr()
    assert runs["default"]["weights"]["velocity"] == 1.0 and runs["default"]["weights"]["root"] == 10.0
    assert runs["no_velocity"]["weights"]["velocity"] == 0.0 and runs["no_velocity"]["weights"]["root"] == 20.0
    assert runs["default"]["weights"]["contact"] == 0.0 and runs["no_velocity"]["weights"]["contact"] == 2.0
    assert runs["no_velocity"]["weights"]["pose"] == 10.0  # the others keep their defaults
    assert runs["no_velocity"]["cost_per_iteration"] != runs["default"]["cost_per_iteration"]
    assert runs["default"]["options"]["selection"] == "elite" and runs["no_velocity"]["options"]["selection"] == "spread"
    assert runs["default"]["options"]["lookahead"] == 0 and runs["no_velocity"]["options"]["lookahead"] == 1
    assert runs["default"]["options"]["decay"] == 0.7 and runs["no_velocity"]["options"]["decay"] == 0.6
    assert runs["default"]["options"]["widths"][0][1] == 0.4 and runs["no_velocity"]["options"]["widths"][0][1] == 0.2
    report = (tmp_path / "no_velocity" / "optimize.md").read_text()
    assert "keep 2 (spread)" in report and "look-ahead 1 segments" in report
    assert "half-widths 0.2 / 0.05 / 0.025 rad (legs / trunk / others), decay 0.6" in report
    assert "half-widths" not in (tmp_path / "default" / "optimize.md").read_text()
    header = (tmp_path / "no_velocity" / "config.yaml").read_text()
    assert "--lookahead=1" in header and "--width-scale=0.5" in header and "--decay=0.6" in header


def test_a_search_goes_on_from_an_earlier_track(tmp_path, capsys):
    first, then = tmp_path / "first", tmp_path / "then"
    common = [WALK, "--duration", "0.2", "--samples", "6", "--keep", "2", "--iterations", "1"]
    assert main(["optimize", *common, "--seed", "2", "--out", str(first)]) in (0, 4)
    assert main(["optimize", *common, "--seed", "3", "--init", str(first / "offsets.npz"), "--out", str(then)]) in (0, 4)
    assert "warning" not in capsys.readouterr().err
    a, b = (json.loads((d / "optimize.json").read_text()) for d in (first, then))
    assert a["init"] is None and b["init"] == str((first / "offsets.npz").resolve())
    assert b["cost_per_iteration"][0] <= a["cost_per_iteration"][0]  # the earlier track is carried
    assert f"started from {first / 'offsets.npz'}" in (then / "optimize.md").read_text()
    assert f"--init={(first / 'offsets.npz').resolve()}" in (then / "config.yaml").read_text()
    # a track of another clip is taken (the same model), with a warning
    bandai = str((ROOT / ".." / "shared" / "mocap" / "bandai_walk_normal_001.bvh").resolve())
    assert main(["optimize", bandai, "--duration", "0.1", "--samples", "2", "--keep", "1", "--iterations", "1",
                 "--init", str(first / "offsets.npz"), "--out", str(tmp_path / "other")]) in (0, 4)
    assert "was made for clip cmu_02_01_walk.bvh, not bandai_walk_normal_001.bvh" in capsys.readouterr().err


def _feet_in_the_ground(sets: list[str], seconds: float) -> tuple[float, dict]:
    """Tracking the Bandai walk's first ``seconds`` under ``tracker optimize``'s bare-clip settings with
    ``sets`` on top (no offsets: plain stance-held SPD): the deepest foot contact the engine reports (m),
    and the run's metrics (``tracking_metrics``, from the recorded states)."""
    import pybullet as p

    from tracker.analysis.metrics import tracking_metrics
    from tracker.experiments.config import config_from_data
    from tracker.experiments.runner import build, make_simulation
    from tracker.sampling.optimize import clip_config

    src = (ROOT / ".." / "shared" / "mocap" / "bandai_walk_normal_001.bvh").resolve()
    prep = build(config_from_data(clip_config(src), src, sets + [f"sim.duration={seconds!r}"]))
    sim = make_simulation(prep)
    ch, deepest = sim.character, 0.0
    feet = [ch.link_index(f) for f in sim.model.feet]
    rows = []
    try:
        for _ in range(int(round(seconds / sim.opt.dt))):
            rows.append(sim.step())
            for c in p.getContactPoints(bodyA=ch.body_id, physicsClientId=ch.client_id):
                if c[3] in feet:
                    deepest = max(deepest, -c[8])
        rec = sim._recording(rows, "ok", "", 0.0)
    finally:
        sim.close()
    return deepest, tracking_metrics(rec, prep.model.kinematics(), feet=prep.model.feet)


def test_a_bare_clips_feet_stay_out_of_the_ground_at_heel_strike():
    # One 1/120 s physics step lets the landing heel of a stiff servo sink 5-10 cm (a box on one contact
    # point), and searches found tracks that walked with their feet in the floor; CLIP_SETTINGS step the
    # physics four times per control step.
    deepest, m = _feet_in_the_ground([], 0.6)
    assert deepest < 0.005 and m["foot_penetration_max_m"] < 0.005
    deepest, m = _feet_in_the_ground(["sim.substeps=1"], 0.6)
    assert deepest > 0.03
    # the metric reads the same depth off the recorded states (the engine's contacts lag a step behind)
    assert m["foot_penetration_max_m"] > 0.03 and abs(m["foot_penetration_max_m"] - deepest) < 0.015
    assert 0 < m["foot_penetration_p95_m"] <= m["foot_penetration_max_m"]


def test_the_servo_without_offsets_is_reported_as_it_ended():
    from tracker.sampling.optimize import plain_outcome

    assert plain_outcome({"fell_at": 1.0, "status": "ok", "diverged_at": None}) == "FELL at t = 1.00 s"
    # a servo that diverges while falling, before its pelvis is below the fall height, did fall
    assert plain_outcome({"fell_at": None, "status": "diverged", "diverged_at": 1.092}) == "DIVERGED at t = 1.09 s"
    assert (plain_outcome({"fell_at": None, "status": "diverged", "diverged_at": 1.092, "height_share": 0.664})
            == "DIVERGED at t = 1.09 s (pelvis at 66 % of the clip's height)")
    assert plain_outcome({"fell_at": None, "status": "ok", "diverged_at": None}) == "did not fall"


def test_the_pelvis_height_share_is_read_at_the_last_finite_step():
    from types import SimpleNamespace

    from tracker.sampling.optimize import _height_share

    q = np.zeros((3, 8))
    q[:, 2] = [0.9, 0.6, np.nan]  # the diverged step's state is not finite
    q_ref = np.zeros((3, 8))
    q_ref[:, 2] = 0.95
    rec = SimpleNamespace(layout=SimpleNamespace(has_base=True), q=q, q_ref=q_ref)
    assert _height_share(rec) == pytest.approx(0.6 / 0.95)
    assert _height_share(SimpleNamespace(layout=SimpleNamespace(has_base=False), q=q, q_ref=q_ref)) is None
    assert _height_share(SimpleNamespace(layout=SimpleNamespace(has_base=True), q=q[:0], q_ref=q_ref[:0])) is None


def test_the_report_names_widths_only_when_they_are_not_the_defaults():
    from tracker.sampling.optimize import _widths_note
    from tracker.sampling.samcon import DEFAULT_WIDTHS, SamconOptions

    assert _widths_note(SamconOptions()) == ""
    scaled = SamconOptions(widths=tuple((p, w / 2) for p, w in DEFAULT_WIDTHS))
    assert _widths_note(scaled) == "half-widths 0.2 / 0.05 / 0.025 rad (legs / trunk / others), decay 0.7, "
    assert _widths_note(SamconOptions(decay=0.5)).endswith("decay 0.5, ")
    own = SamconOptions(widths=((r"knee", 0.3), (r".*", 0.0)))
    assert _widths_note(own) == "half-widths 0.3 rad for 'knee', 0 rad for '.*', decay 0.7, "


def test_a_search_can_start_from_the_plain_servo(tmp_path, capsys):
    """``--init plain`` is the all-zero track carried as the best chain: the same search as from a zeros file."""
    from tracker.character.model import load_model
    from tracker.sim.offsets import OffsetTrack

    zeros = tmp_path / "zeros.npz"
    OffsetTrack.zeros(load_model("humanoid").layout, [0.0], model="humanoid").save(zeros)
    common = [WALK, "--duration", "0.2", "--samples", "4", "--keep", "2", "--iterations", "2", "--seed", "5"]
    plain, filed = tmp_path / "plain", tmp_path / "filed"
    assert main(["optimize", *common, "--init", "plain", "--out", str(plain)]) in (0, 4)
    assert main(["optimize", *common, "--init", str(zeros), "--out", str(filed)]) in (0, 4)
    a, b = (json.loads((d / "optimize.json").read_text()) for d in (plain, filed))
    assert a["init"] == "plain"
    assert a["cost_per_iteration"] == b["cost_per_iteration"] and a["segment_costs"] == b["segment_costs"]
    np.testing.assert_array_equal(load_offsets(plain / "offsets.npz").values, load_offsets(filed / "offsets.npz").values)
    assert "started from the plain servo (no offsets)" in (plain / "optimize.md").read_text()
    assert "--init=plain" in (plain / "config.yaml").read_text()
