"""'tracker optimize' starts that hold, and a search you can watch (issue 32, items 2 and 3)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tracker.cli import main

ROOT = Path(__file__).resolve().parents[2]
WALK = str((ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve())
TINY = ["--samples", "3", "--keep", "1", "--iterations", "1"]


def test_a_first_frame_5_mm_up_starts_settled_on_the_floor(tmp_path, capsys):
    from tracker.sim.recording import Recording

    pose = (ROOT / "data" / "poses" / "stand.yaml").read_text().replace("height: 0.0 ", "height: 0.005")
    (tmp_path / "lifted.yaml").write_text(pose)
    out = tmp_path / "out"
    assert main(["optimize", str(tmp_path / "lifted.yaml"), "--duration", "0.2", *TINY, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "settled the first frame 5.0 mm down onto the floor" in err
    info = json.loads((out / "optimize.json").read_text())
    assert info["start"]["settled_m"] == pytest.approx(0.005, abs=1e-4)
    rec = Recording.load(out / "recording.npz")
    assert rec.q[0, 2] == pytest.approx(rec.q_ref[0, 2], abs=2e-3)  # no 5 mm drop at the start
    assert json.loads((out / "metrics.json").read_text())["fell"] is False
    # the replay's config tracks the lowered clip: the feet touch at t = 0 (balance would refuse otherwise)
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, make_simulation
    from tracker.sim.support import support_of

    sim = make_simulation(build(load_config(out / "config.yaml")))
    try:
        assert not support_of(sim.character, sim.world.ground).empty
    finally:
        sim.close()


def _airborne_walk(tmp_path: Path, frames: int) -> Path:
    """The CMU walk's reference with its first ``frames`` frames lifted 0.3 m and labelled in the air."""
    from tracker.experiments.config import config_from_data
    from tracker.experiments.runner import build
    from tracker.retarget.reference import Reference
    from tracker.sampling.optimize import clip_config

    ref = build(config_from_data(clip_config(Path(WALK)), Path(WALK), [])).reference
    q, contacts = ref.q.copy(), ref.contacts.copy()
    q[:frames, 2] += 0.3
    contacts[:frames] = False
    path = tmp_path / "airborne.npz"
    Reference(q, ref.v, ref.fps, ref.joints, ref.model, ref.source, ref.quality, contacts).save(path)
    return path


def test_a_clip_starting_in_the_air_starts_at_its_first_planted_frame_and_says_so(tmp_path, capsys):
    from tracker.retarget.reference import Reference

    clip = _airborne_walk(tmp_path, 12)
    ref = Reference.load(clip)
    out = tmp_path / "out"
    assert main(["optimize", str(clip), "--duration", "0.2", *TINY, "--out", str(out)]) in (0, 4)
    err = capsys.readouterr().err
    t = 12 / ref.fps
    frame = round(ref.timing.file_time_of_clip_time(t) * ref.timing.file_fps)
    line = f"starting at clip time {t:.3f} s (file frame {frame}): the first frame where a foot is planted"
    assert sum(line in x for x in err.splitlines()) == 1, err
    assert "(the clip at 0 s cannot stand)" in err  # why, on the same line
    info = json.loads((out / "optimize.json").read_text())
    assert info["start"]["clip_start_s"] == pytest.approx(t) and info["start"]["moved_from_s"] == 0.0
    assert info["segment_times"][0] == pytest.approx(t)


def test_the_search_logs_one_plain_line_per_window_without_a_terminal(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["optimize", WALK, "--duration", "0.2", "--samples", "4", "--keep", "2", "--iterations", "2",
                 "--out", str(out)]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("samcon search: ")]
    assert len(lines) == 4, lines  # 2 iterations x 2 windows
    assert lines[0].startswith("samcon search: iteration 1/2, window 1/2 (0.00-0.10 s): best cost ")
    for x in lines:
        assert "joint error" in x and "rad (goal <= 0.10)" in x and "m (goal <= 0.15)" in x and "elapsed" in x
        assert "left" in x and "\r" not in x
    assert lines[-1].startswith("samcon search: iteration 2/2, window 2/2")


def test_the_log_line_reads_the_status():
    from tracker.sampling.watch import SearchLog, SearchStatus

    ticks = iter([0.0, 0.0, 10.0, 20.0])
    log = SearchLog(stream=None, bar=False, clock=lambda: next(ticks))
    log.begin()
    s = SearchStatus("samcon", 0, 2, 0, 5, 0.0, 0.1, 1.5, 0.08, 0.05, 10, 1, 10)
    assert log.line(s) == ("samcon search: iteration 1/2, window 1/5 (0.00-0.10 s): best cost 1.5, joint error "
                           "0.080 rad (goal <= 0.10), root error 0.050 m (goal <= 0.15), 10.0 s elapsed, "
                           "about 2 min left")
    assert log.line(SearchStatus("samcon", 0, 2, 1, 5, 0.1, 0.2, 1.4, 0.08, 0.05, 20, 2, 10)).endswith(
        "20.0 s elapsed, about 80 s left")


def test_a_schedules_later_search_estimates_its_time_left_from_its_own_windows():
    from tracker.sampling.watch import SearchLog, SearchStatus

    ticks = iter([0.0, 0.0, 10.0, 20.0, 30.0, 40.0])
    log = SearchLog(stream=None, bar=False, clock=lambda: next(ticks))
    log.begin()
    for done in (1, 2):  # stage 1: two windows of 10 s
        log.line(SearchStatus("samcon", 0, 1, done - 1, 2, 0.0, 0.1, 1.0, 0.05, 0.05, 10, done, 2))
    # stage 2, a window later in the clip: its counter restarts and its total differs
    first = log.line(SearchStatus("samcon", 0, 2, 16, 41, 1.6, 1.7, 1.0, 0.05, 0.05, 10, 2, 4))
    assert first.endswith("30.0 s elapsed, about 20 s left")  # 10 s for its window, 2 to go
    assert log.line(SearchStatus("samcon", 0, 2, 17, 41, 1.7, 1.8, 1.0, 0.05, 0.05, 10, 3, 4)).endswith(
        "40.0 s elapsed, about 10 s left")


@pytest.mark.parametrize("method", ["samcon", "cma"])
def test_samples_mean_rollouts_per_segment_and_iteration_for_both_methods(tmp_path, method, capsys):
    out = tmp_path / "out"
    args = ["optimize", WALK, "--method", method, "--duration", "0.5", "--samples", "4", "--iterations", "2",
            "--out", str(out)]
    if method == "samcon":
        args += ["--keep", "2"]
    assert main(args) in (0, 4)
    capsys.readouterr()
    info = json.loads((out / "optimize.json").read_text())
    assert len(info["segment_times"]) - 1 == 5
    extra = 5 if method == "samcon" else 0  # samcon's second pass re-simulates the carried best chain
    assert info["rollouts"] == 4 * 2 * 5 + extra


def test_metrics_put_the_plain_servo_beside_the_result(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["optimize", WALK, "--duration", "0.2", *TINY, "--out", str(out)]) in (0, 4)
    capsys.readouterr()
    m = json.loads((out / "metrics.json").read_text())
    base = m["baseline"]
    for key in ("fell", "joint_error_mean_rad", "root_error_mean_m"):
        assert key in base and key in m
    assert base["steps"] == m["steps"] and base["joint_error_mean_rad"] != m["joint_error_mean_rad"]
    assert np.isfinite(base["joint_error_mean_rad"])
    report = (out / "optimize.md").read_text()
    assert "| fell |" in report and "plain servo" in report


def test_a_resumed_search_says_from_where(tmp_path, capsys):
    from tracker.cli import build_parser
    from tracker.commands.optimize import config_of
    from tracker.sampling.optimize import optimize
    from tracker.sampling.samcon import SamconOptions
    from tracker.sampling.watch import SearchLog

    class Stop(Exception):
        pass

    class StopAfter(SearchLog):  # a search killed in its second window
        def __call__(self, s):
            super().__call__(s)
            if s.done == 2:
                raise Stop

    cfg = config_of(build_parser().parse_args(["optimize", WALK, "--duration", "0.3"]))
    out, opt = tmp_path / "out", SamconOptions(samples=3, keep=1, iterations=2)
    with pytest.raises(Stop):
        optimize(cfg, out, options=opt, log=StopAfter(bar=False))
    assert (out / "checkpoint.pkl").is_file()
    capsys.readouterr()
    res = optimize(cfg, out, options=opt, log=SearchLog(bar=False))
    err = capsys.readouterr().err
    assert f"resumed from {out / 'checkpoint.pkl'} (iteration 1 of 2)" in err, err
    assert res.timing["resumed_from"] == {"iteration": 0, "segment": 1}
    assert "samcon search: iteration 1/2, window 1/3" not in err  # the first window is not searched again
