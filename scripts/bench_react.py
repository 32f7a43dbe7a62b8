"""The ``react`` section of ``scripts/bench.py`` (issue 33, item 2): what look-ahead feedback
(:mod:`tracker.sampling.react`) costs per simulated step, against the same run open loop, measured
side by side in one run.

Undisturbed, the reaction only reads the reduced state at each knot (every 0.1 s) and compares it; the
undisturbed run it compares against is simulated once before (a row of its own). Disturbed, every knot
after the body left its run simulates ``samples`` corrections over 0.1 + ``horizon`` s.
"""

from __future__ import annotations

import argparse
import time

from bench_harness import REPO, Row, best_time, section


@section("react")
def bench_react(args: argparse.Namespace) -> list[Row]:
    """Feedback by look-ahead (issue 33): a step watched by the reaction vs open loop; a disturbed trial's cost."""
    import tracker.quiet  # noqa: F401
    from tracker.experiments.build import build
    from tracker.experiments.config import load_config
    from tracker.sampling.perturb import run_trial, standard_trials, undisturbed_nominal
    from tracker.sampling.react import ReactOptions

    prep = build(load_config(REPO / "configs" / "free" / "cmu_02_01_walk.yaml"))
    steps = int(round(prep.reference.duration / prep.config.sim.dt))
    react = ReactOptions()

    def once(fn):  # a disturbed trial takes tens of seconds: timed once, without a warm-up
        t0 = time.perf_counter()
        out = fn()
        return time.perf_counter() - t0, out

    t_nominal, nominal = best_time(lambda: undisturbed_nominal(prep), args.repeat)
    t_open, _ = best_time(lambda: run_trial(prep, None), args.repeat)
    t_watch, watched = best_time(lambda: run_trial(prep, None, react, nominal), args.repeat)
    trial = standard_trials(prep.reference.duration, 0)[22]  # seed 0's push from the left: the track alone falls
    t_push_open, _ = best_time(lambda: run_trial(prep, trial), args.repeat)
    t_push, pushed = once(lambda: run_trial(prep, trial, react, nominal))
    return [
        Row(f"open loop, undisturbed CMU walk ({steps} steps)", t_open / steps),
        Row("undisturbed run for the reaction to compare with (once per track)", t_nominal),
        Row("with the reaction watching, undisturbed", t_watch / steps,
            note=f"{len(watched.reactions)} corrections"),
        Row("RATIO a step with the reaction vs without, undisturbed (target <= 1.2)", ratio=t_watch / t_open),
        Row(f"a trial: {trial.label()}, open loop", t_push_open),
        Row("the same trial with the reaction", t_push,
            note=f"{len(pushed.reactions)} corrections, {'FELL' if pushed.fell else 'stayed up'}"),
        Row("RATIO that trial's time with the reaction vs open loop", ratio=t_push / t_push_open),
    ]
