"""SAMCON on a short clip segment: the cost improves every iteration, the result replays, the seed decides (issue 20)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tracker.errors import ConfigError
from tracker.experiments.config import config_from_data
from tracker.sampling.pool import RolloutPool
from tracker.sampling.rollout import RolloutRequest
from tracker.sampling.samcon import SamconOptions, samcon, segment_times, spread_select, widths_vector

ROOT = Path(__file__).resolve().parents[2]
WALK = str((ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve())


def config(duration: float):
    return config_from_data({"clip": {"path": WALK}, "root": {"mode": "free"},
                             "sim": {"dt": 1 / 60, "duration": duration}}, ROOT / "walk_free.yaml")


@lru_cache(maxsize=None)
def walk_result():
    pool = RolloutPool(config(0.6), workers=1)
    seen = []
    res = samcon(pool, options=SamconOptions(samples=16, keep=4, iterations=3, seed=1),
                 progress=lambda it, k, n, c: seen.append((it, k, n, c)))
    return pool, res, seen


def chain(pool, track, times):
    """The track replayed segment by segment from the clip's start: each segment's cost and the end."""
    w = pool.local
    s, costs, res = pool.initial_state(), [], None
    for t in times[1:]:
        res = w.rollout(RolloutRequest(s, track, t))
        costs.append(res.cost)
        s = res.end
    return np.array(costs), res


def test_cost_improves_every_iteration_and_the_character_ends_standing():
    pool, res, seen = walk_result()
    c = res.cost_per_iteration
    assert len(c) == 3 and all(c[i + 1] < c[i] for i in range(2)), c
    assert res.fell == (False, False, False)
    assert res.rollouts == 3 * 6 * 16 + 2 * 6  # the samples, and the carried best chain of iterations 2 and 3
    assert len(seen) == 18 and seen[-1][:3] == (2, 5, 6)
    # against the clip's own targets (zero offsets), over the same segments
    zero, _ = chain(pool, None, res.times)
    assert c[-1] < 0.8 * zero.sum(), (c[-1], zero.sum())
    # replayed from the start, the track gives the optimiser's segment costs bit for bit, and stands
    costs, end = chain(pool, res.track, res.times)
    np.testing.assert_array_equal(costs, res.segment_costs[-1])
    assert costs.sum() == c[-1]
    ref_height = pool.local.sim.reference.sample(res.times[-1])[0][2]
    assert not end.fell and end.q_end[2] > 0.5 * ref_height


def test_the_track_has_a_knot_per_segment_boundary_starting_at_zero():
    _, res, _ = walk_result()
    np.testing.assert_array_equal(res.track.times, res.times)
    assert not res.track.values[0].any() and np.abs(res.track.values[1:]).max() > 0
    assert res.track.meta["method"] == "samcon" and res.track.meta["seed"] == 1


def test_same_seed_same_result_on_two_workers_other_seed_other_result():
    opts = SamconOptions(samples=6, keep=2, iterations=2, seed=5)
    a = samcon(RolloutPool(config(0.3), workers=1), options=opts)
    b = samcon(RolloutPool(config(0.3), workers=2), options=opts)
    np.testing.assert_array_equal(a.cost_per_iteration, b.cost_per_iteration)
    np.testing.assert_array_equal(a.track.values, b.track.values)
    c = samcon(RolloutPool(config(0.3), workers=1), options=SamconOptions(samples=6, keep=2, iterations=2, seed=6))
    assert not np.array_equal(a.track.values, c.track.values)


def test_segment_times_are_the_simulation_clock():
    dt = 1 / 60
    ts = segment_times(0.25, 0.25 + 37 * dt, 0.1, dt)
    clock, t = [], 0.25
    for n in range(38):
        clock.append(t)
        t += dt
    assert list(ts) == [clock[k] for k in (0, 6, 12, 18, 24, 30, 37)]  # the 1-step remainder joins the last
    with pytest.raises(ConfigError, match="shorter than one time step"):
        segment_times(0.0, 1.0, 0.001, dt)
    with pytest.raises(ConfigError, match="shorter than one segment"):
        segment_times(0.0, 0.05, 0.1, dt)


def test_widths_by_joint_pattern():
    pool, _, _ = walk_result()
    lay = pool.local.sim.layout
    w = widths_vector(lay, (("knee", 0.3), ("spine", 0.1)))
    names = [s.name for s in lay.joints for _ in range(s.v.stop - s.v.start)]
    for name, x in zip(names, w):
        assert x == (0.3 if "knee" in name else 0.1 if "spine" in name else 0.0)


@pytest.mark.parametrize("bad, message", [
    (dict(samples=0), "samples must be >= 1"),
    (dict(samples=-5), "samples must be >= 1"),
    (dict(keep=0), "keep must be in"),
    (dict(samples=4, keep=5), "keep must be in"),
    (dict(iterations=0), "iterations must be >= 1"),
    (dict(seed=-1), "seed must be >= 0"),
    (dict(segment=0.0), "segment must be a positive time"),
    (dict(segment=float("nan")), "segment must be a positive time"),
    (dict(decay=1.5), "decay must be in"),
    (dict(samples=2.5), "samples must be a whole number"),
    (dict(widths=(("(", 0.1),)), "is not a regular expression"),
    (dict(widths=((".*", -0.1),)), "must be in [0, π] rad"),
    (dict(selection="best"), "selection must be one of elite, spread"),
    (dict(lookahead=-1), "lookahead must be >= 0 segments"),
])
def test_bad_options_are_named(bad, message):
    with pytest.raises(ConfigError, match=None) as err:
        SamconOptions(**bad).check()
    assert message in str(err.value)


def test_spread_selection_keeps_the_cheapest_and_reaches_up_the_cheaper_costs():
    costs = np.sort(np.random.default_rng(0).exponential(size=1000))
    picked = spread_select(costs, 100)
    assert len(set(picked)) == 100 and picked == sorted(picked)
    assert picked[:5] == [0, 1, 2, 3, 4]  # the cheapest are all kept
    assert max(picked) <= 599 and costs[max(picked)] > 0.5 * costs[599]  # up the cheaper 60 %, none beyond
    assert sum(i >= 100 for i in picked) >= 10  # not simply the 100 cheapest
    assert spread_select([3.0, 4.0], 5) == [0, 1] and spread_select([1.0] * 6, 3) == [0, 1, 2]


def test_spread_selection_improves_the_cost_every_iteration_and_stands():
    pool = RolloutPool(config(0.4), workers=1)
    res = samcon(pool, options=SamconOptions(samples=16, keep=4, iterations=2, seed=1, selection="spread"))
    c = res.cost_per_iteration
    assert c[1] < c[0] and res.fell == (False, False) and res.track.meta["selection"] == "spread"
    costs, end = chain(pool, res.track, res.times)
    np.testing.assert_array_equal(costs, res.segment_costs[-1])


def test_a_look_ahead_ranks_by_the_next_segments_too_and_the_track_replays_its_own_costs():
    pool = RolloutPool(config(0.4), workers=1)
    opts = dict(samples=16, keep=4, iterations=2, seed=1)
    res = samcon(pool, options=SamconOptions(**opts, lookahead=2))
    base = samcon(pool, options=SamconOptions(**opts))
    c = res.cost_per_iteration
    assert c[1] < c[0] and res.fell == (False, False)
    assert res.rollouts == base.rollouts  # as many samples; each simulated longer
    assert not np.array_equal(res.track.values, base.track.values)  # ranked otherwise, kept otherwise
    # the kept chain's costs are its own segments' (the look-ahead ranks, it is not added in)
    costs, end = chain(pool, res.track, res.times)
    np.testing.assert_array_equal(costs, res.segment_costs[-1])
    assert not end.fell


def test_a_search_started_from_a_track_carries_it_and_is_never_costlier():
    pool, first, _ = walk_result()
    res = samcon(pool, options=SamconOptions(samples=8, keep=2, iterations=1, seed=9), init=first.track)
    # the track is carried as the best chain so far: its own costs replayed, then beaten or kept
    assert res.cost_per_iteration[0] <= first.cost_per_iteration[-1]
    assert res.rollouts == 6 * 8 + 6
    costs, end = chain(pool, res.track, res.times)
    np.testing.assert_array_equal(costs, res.segment_costs[-1])
    assert not end.fell
    # a longer window with other segments reads the track at its own boundaries (zero past its end):
    # with zero widths every sample is the track itself
    still = SamconOptions(samples=2, keep=1, iterations=1, segment=0.15, widths=((".*", 0.0),))
    longer = samcon(RolloutPool(config(0.9), workers=1), options=still, init=first.track)
    want = np.array([first.track.at(t) for t in longer.times])
    want[0] = 0
    assert np.abs(want[1:4]).max() > 0 and not want[-1].any()
    np.testing.assert_array_equal(longer.track.values, want)
    other = type(first.track)(first.track.joints[:-1], first.track.dofs[:-1], first.track.times,
                              first.track.values[:, :-int(first.track.dofs[-1])])
    with pytest.raises(ConfigError, match="init: offset track has no joint"):
        samcon(pool, options=SamconOptions(samples=4, keep=2, iterations=1), init=other)
