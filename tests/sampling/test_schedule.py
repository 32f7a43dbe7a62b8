"""The search `tracker optimize CLIP` runs on its own (issue 32, item 1): windows slid over the clip, narrow passes,
the goal, the budget, resuming; and the two SAMCON options it is built on (a window's start, a cheap look-ahead)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tracker.errors import ConfigError
from tracker.experiments.config import config_from_data
from tracker.sampling.pool import RolloutPool
from tracker.sampling.rollout import RolloutRequest
from tracker.sampling.samcon import SamconOptions, samcon, segment_times
from tracker.sampling.schedule import ScheduleOptions, goal_met, goal_score, run_schedule, windows

ROOT = Path(__file__).resolve().parents[2]
WALK = str((ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve())

#: A schedule small enough for the suite: four windows of at most 0.3 s over 0.8 s (0-0.3, 0.2-0.5, and the last
#: 0.4 s in two), one narrow pass.
SMALL = ScheduleOptions(window=0.3, overlap=0.1, samples=12, keep=3, look_keep=4, iterations=2, refine_pose=(40.0,),
                        seed=2)


def config(duration: float):
    return config_from_data({"clip": {"path": WALK}, "root": {"mode": "free"},
                             "sim": {"dt": 1 / 60, "duration": duration}}, ROOT / "walk_free.yaml")


def test_windows_cover_the_clip_each_starting_inside_the_last():
    times = segment_times(0.0, 2.85, 0.1, 1 / 120)
    wins = windows(0.0, 2.85, times, 1.0, 0.3)
    assert wins[0][0] == 0 and wins[-1][1] == len(times) - 1
    for (a0, b0), (a1, b1) in zip(wins, wins[1:]):
        assert a0 < a1 < b0 < b1  # each starts inside the one before, and reaches further
        assert abs(times[b0] - times[a1] - 0.3) < 1e-9
    assert all(times[b] - times[a] <= 1.0 + 0.1 + 1e-9 for a, b in wins)  # none longer than asked (on the boundaries)
    assert times[wins[-1][1]] - times[wins[-1][0]] >= 0.5 - 1e-9  # no short last piece either: the tail spread evenly
    # 2.85 s in windows of at most 2 s: two of 1.7 and 1.65 s (not one of 2.85 s, nor 2 s and a 1.35 s tail)
    assert [(round(times[a], 2), round(times[b], 2)) for a, b in windows(0.0, 2.85, times, 2.0, 0.5)] == \
        [(0.0, 1.7), (1.2, 2.85)]
    assert windows(0.0, 1.9, segment_times(0.0, 1.9, 0.1, 1 / 120), 2.0, 0.5) == [(0, 19)]  # fits: one window
    kick = segment_times(0.0, 6.67, 0.1, 1 / 120)  # 2 s windows while they fit; the last 2.17 s spread over two
    assert [(round(kick[a], 2), round(kick[b], 2)) for a, b in windows(0.0, 6.67, kick, 2.0, 0.5)] == \
        [(0.0, 2.0), (1.5, 3.5), (3.0, 5.0), (4.5, 5.8), (5.3, 6.67)]
    assert windows(0.0, 0.5, segment_times(0.0, 0.5, 0.1, 0.01), 0.2, 0.0)[-1][1] == 5


def chain_costs(pool, track, times):
    w, s, costs = pool.local, pool.initial_state(), []
    for t in times[1:]:
        r = w.rollout(RolloutRequest(s, track, t))
        costs.append(r.cost)
        s = r.end
    return np.array(costs)


@lru_cache(maxsize=None)
def first_search():
    pool = RolloutPool(config(0.5), workers=1)
    return pool, samcon(pool, options=SamconOptions(samples=10, keep=3, iterations=1, seed=4))


def test_a_window_keeps_the_track_before_its_start_and_replays_bit_for_bit():
    pool, first = first_search()
    res = samcon(pool, options=SamconOptions(samples=10, keep=3, iterations=2, seed=5), init=first.track,
                 t_begin=0.2)
    k = int(np.argmin(np.abs(res.times - 0.2)))
    np.testing.assert_array_equal(res.track.values[:k + 1], first.track.values[:k + 1])
    assert not np.array_equal(res.track.values[k + 1:], first.track.values[k + 1:])
    left = len(res.times) - 1 - k
    assert res.rollouts == k + 2 * left * 10 + 2 * left  # the prefix once, the samples, the carried chain
    costs = chain_costs(pool, res.track, res.times)
    np.testing.assert_array_equal(costs, res.segment_costs[-1])  # what the search scored is what replays
    assert costs.sum() <= chain_costs(pool, first.track, res.times).sum()  # never worse than where it started
    with pytest.raises(ConfigError, match="needs an init track"):
        samcon(pool, options=SamconOptions(samples=4, keep=2, iterations=1), t_begin=0.2)


def test_a_look_ahead_for_the_cheapest_ranks_them_first_and_does_not_depend_on_the_workers():
    opt = SamconOptions(samples=12, keep=3, iterations=2, seed=3, lookahead=1, look_keep=4)
    one = samcon(RolloutPool(config(0.4), workers=1), options=opt)
    pool = RolloutPool(config(0.4), workers=2)
    try:
        two = samcon(pool, options=opt)
    finally:
        pool.close()
    np.testing.assert_array_equal(one.track.values, two.track.values)
    assert one.rollouts == two.rollouts
    n_seg = len(one.times) - 1
    # each segment but the last looks ahead for its 4 cheapest, and for the carried chain in iteration 2 when it is
    # not among them
    plain = 2 * n_seg * 12 + n_seg
    assert plain + 2 * (n_seg - 1) * 4 <= one.rollouts <= plain + 2 * (n_seg - 1) * 4 + (n_seg - 1)
    full = samcon(RolloutPool(config(0.4), workers=1), options=SamconOptions(samples=12, keep=3, iterations=2, seed=3,
                                                                             lookahead=1))
    assert full.rollouts == 2 * n_seg * 12 + n_seg  # the look-ahead inside each rollout: no extra rollouts


def test_goal_score_ranks_standing_tracks_by_the_worse_error_and_falls_last():
    ok = {"fell": False, "fell_at": None, "joint_error_mean_rad": 0.09, "root_error_mean_m": 0.12}
    far = {"fell": False, "fell_at": None, "joint_error_mean_rad": 0.05, "root_error_mean_m": 0.30}
    late = {"fell": True, "fell_at": 2.0, "joint_error_mean_rad": 0.05, "root_error_mean_m": 0.05}
    early = {**late, "fell_at": 1.0}
    assert goal_met(ok) and not goal_met(far) and not goal_met(late)
    assert goal_score(ok) < 1 < goal_score(far) < goal_score(late) < goal_score(early)


@lru_cache(maxsize=None)
def small_schedule(tmp: str, workers: int, **changes):
    import dataclasses

    opt = dataclasses.replace(SMALL, **changes)
    return run_schedule(config(0.8), Path(tmp), opt, workers=workers)


def test_the_schedule_slides_windows_then_refines_and_does_not_depend_on_the_workers(tmp_path_factory):
    one = small_schedule(str(tmp_path_factory.mktemp("one")), 1)
    two = small_schedule(str(tmp_path_factory.mktemp("two")), 2)
    names = [s.name for s in one.stages]
    assert names[0] == "window" and names.count("window") == 4 and set(names) <= {"window", "window again",
                                                                                  "narrow (pose 40)"}
    assert all(s.window is not None for s in one.stages if s.name.startswith("window"))
    assert [(s.name, s.t0, s.t1) for s in one.stages] == [(s.name, s.t0, s.t1) for s in two.stages]
    np.testing.assert_array_equal(one.track.values, two.track.values)
    assert one.goal == two.goal and one.rollouts == two.rollouts
    wins = [s for s in one.stages if s.name == "window"]
    assert wins[0].t0 == 0.0 and wins[-1].t1 == pytest.approx(0.8, abs=0.02)
    assert wins[0].t0 < wins[1].t0 < wins[0].t1  # the next window starts inside the last
    assert any(s.replay is not None for s in one.stages)  # the windows' track replayed against the goal
    assert one.stopped in ("goal met", "stages done")


def test_a_killed_schedule_goes_on_and_ends_as_the_uninterrupted_one(tmp_path_factory):
    whole = small_schedule(str(tmp_path_factory.mktemp("one")), 1)
    folder = tmp_path_factory.mktemp("killed")
    cut = run_schedule(config(0.8), folder, ScheduleOptions(**{**SMALL.__dict__, "max_stages": 2}), workers=1)
    assert len(cut.stages) == 2 and cut.stopped == "max_stages"
    said = []

    class Log:
        prefix = ""

        def say(self, text):
            said.append(text)

        def __call__(self, status):
            pass

    again = run_schedule(config(0.8), folder, SMALL, workers=1, log=Log())
    assert again.resumed == 2 and any(s.startswith("resumed from") for s in said)
    np.testing.assert_array_equal(again.track.values, whole.track.values)
    assert again.goal == whole.goal


def test_a_budget_stops_the_schedule_before_a_stage_that_would_not_fit(tmp_path):
    res = run_schedule(config(0.8), tmp_path, ScheduleOptions(**{**SMALL.__dict__, "budget_s": 1e-3}), workers=1)
    assert len(res.stages) == 1 and res.stopped == "budget"
    assert res.goal and res.track is not None


def test_tracker_optimize_with_no_flags_runs_the_schedule(tmp_path):
    out = tmp_path / "o"
    run = subprocess.run([sys.executable, "-m", "tracker", "optimize", WALK, "--duration", "0.1", "--max-stages", "1",
                          "--workers", "2", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 4), run.stderr[-2000:]
    assert "stage 1 (window 0.00-0.10 s): samcon search" in run.stderr
    assert "schedule: 1 stages" in run.stdout
    data = json.loads((out / "optimize.json").read_text())
    assert data["method"] == "samcon schedule" and len(data["stages"]) == 1
    assert data["stopped"] == ("goal met" if data["goal_met"] else "max_stages")
    assert (out / "stages" / "01.npz").is_file() and (out / "offsets.npz").is_file()
    md = (out / "optimize.md").read_text()
    assert "| 1 | window | 0.00-0.10 |" in md and data["stages"][0]["window"]["fell"] is False
    assert ("Stopped: the goal was met." if data["goal_met"] else "--max-stages 1 was reached") in md
    again = subprocess.run([sys.executable, "-m", "tracker", "optimize", WALK, "--duration", "0.1", "--max-stages", "1",
                            "--workers", "2", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert again.returncode == run.returncode and "resumed from" in again.stderr
    stage_s = data["stages"][0]["seconds"]
    assert f"this run, resumed after stage 1 ({stage_s:.1f} s with the stages read back)" in (out / "optimize.md").read_text()
    bad = subprocess.run([sys.executable, "-m", "tracker", "optimize", WALK, "--iterations", "1", "--budget", "5",
                          "--out", str(tmp_path / "b")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--budget and --max-stages limit the schedule" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_a_window_that_misses_the_goal_is_searched_again_with_twice_the_samples(tmp_path, monkeypatch):
    import tracker.sampling.schedule as schedule

    monkeypatch.setattr(schedule, "GOAL_JOINT_RAD", 1e-6)  # no window can meet it
    opt = ScheduleOptions(**{**SMALL.__dict__, "window": 0.4, "overlap": 0.1, "refine_pose": ()})
    res = run_schedule(config(0.6), tmp_path, opt, workers=1)
    names = [s.name for s in res.stages]
    assert names == ["window", "window again", "window", "window again"]
    first, again = res.stages[0], res.stages[1]
    assert (again.t0, again.t1) == (first.t0, first.t1)
    assert again.rollouts > 1.8 * first.rollouts  # twice the samples, kept states and look-aheads
    kept = again if again.note == "" else first
    assert schedule.goal_score(kept.window) <= schedule.goal_score((first if kept is again else again).window)
    assert res.stopped == "stages done" and not res.met


def test_the_last_window_is_not_searched_again_when_the_whole_clip_meets_the_goal(tmp_path, monkeypatch):
    import tracker.sampling.schedule as schedule

    missed = {"fell": False, "fell_at": None, "joint_error_mean_rad": 0.5, "root_error_mean_m": 0.5}
    met = {**missed, "joint_error_mean_rad": 0.05, "root_error_mean_m": 0.05}
    monkeypatch.setattr(schedule, "_window_goal", lambda *a: dict(missed))  # every window misses its own span
    whole = []
    monkeypatch.setattr(schedule, "_goal", lambda *a: whole.append(1) or dict(met))  # the whole clip meets the goal
    res = run_schedule(config(0.8), tmp_path, SMALL, workers=1)
    assert [s.name for s in res.stages] == ["window", "window again"] * 3 + ["window"]
    assert res.stages[-1].replay == met and res.met and res.stopped == "goal met"
    assert len(whole) == 1  # the last window's whole-clip replay is the schedule's replay too

    monkeypatch.setattr(schedule, "_goal", lambda *a: dict(missed))  # it does not: searched again as any window
    again = run_schedule(config(0.8), tmp_path / "b", dataclasses.replace(SMALL, refine_pose=()), workers=1)
    assert [s.name for s in again.stages][-2:] == ["window", "window again"] and not again.met


def test_a_resumed_schedule_counts_the_time_of_the_stages_it_reads_back(tmp_path):
    run_schedule(config(0.8), tmp_path, ScheduleOptions(**{**SMALL.__dict__, "max_stages": 2}), workers=1)
    res = run_schedule(config(0.8), tmp_path, ScheduleOptions(**{**SMALL.__dict__, "budget_s": 1e-3}), workers=1)
    assert res.resumed == 2 and len(res.stages) == 2 and res.stopped == "budget"
