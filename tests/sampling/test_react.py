"""Feedback around a free-root track by look-ahead (``tracker perturb --react``, issue 33 item 2): nothing
changes while the body is on its undisturbed run; off it, corrections chosen by simulating ahead keep
it up where the open-loop track falls."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tracker.cli import EXIT_OK, main
from tracker.errors import ConfigError
from tracker.experiments.build import build
from tracker.experiments.config import load_config
from tracker.paths import CONFIG_DIR
from tracker.sampling.perturb import run_trial, standard_trials, undisturbed_nominal
from tracker.sampling.react import SCALE, ReactOptions, deviation, reacting_dofs

WALK = CONFIG_DIR / "free" / "cmu_02_01_walk.yaml"


@pytest.fixture(scope="module")
def walk():
    prep = build(load_config(WALK))
    return prep, undisturbed_nominal(prep)


def test_undisturbed_the_reaction_decides_nothing_and_the_run_is_the_open_loop_track_s(walk):
    prep, nominal = walk
    assert np.isfinite(nominal[:28]).all()  # a reduced state at every knot inside the clip
    plain = run_trial(prep, None)
    reacting = run_trial(prep, None, ReactOptions(), nominal)
    assert reacting.reactions == ()
    assert (reacting.fell, reacting.fell_at, reacting.root_error) == (plain.fell, plain.fell_at, plain.root_error)


def test_a_push_the_open_loop_track_falls_from_is_survived_with_corrections(walk):
    """Seed 0's push from the left at 0.38 s (150 N x 0.1 s on the pelvis): the track alone falls at 2.37 s."""
    prep, nominal = walk
    trial = standard_trials(prep.reference.duration, 0)[22]
    assert (trial.kind, trial.side) == ("push", "left")
    assert run_trial(prep, trial).fell
    out = run_trial(prep, trial, ReactOptions(), nominal)
    assert not out.fell
    first = out.reactions[0]
    assert trial.time < first.t < 1.2  # it reacts once the body is off its run, not before the push
    assert all(d.cost <= d.cost_uncorrected for d in out.reactions)  # the uncorrected knot is a candidate


def test_the_corrections_are_deterministic(walk):
    prep, nominal = walk
    trial = standard_trials(prep.reference.duration, 0)[0]
    opts = ReactOptions(samples=3, horizon=0.2)
    a, b = (run_trial(prep, trial, opts, nominal) for _ in range(2))
    assert [d.to_json() for d in a.reactions] == [d.to_json() for d in b.reactions] and a.reactions
    assert (a.fell_at, a.root_error) == (b.fell_at, b.root_error)


def test_it_corrects_the_legs_and_the_waist(walk):
    prep, _ = walk
    from tracker.experiments.runner import make_simulation

    sim = make_simulation(prep)
    try:
        dofs, spread = reacting_dofs(sim.character, sim.offsets)
    finally:
        sim.close()
    track = prep.options.offsets
    names = [j for j, n in zip(track.joints, track.dofs) for _ in range(int(n))]
    picked = {names[i]: w for i, w in zip(dofs, spread)}
    assert set(picked) == {"spine_lower", "left_hip", "left_knee", "left_ankle", "right_hip", "right_knee",
                           "right_ankle"}
    assert picked["spine_lower"] == pytest.approx(1 / 3) and picked["left_knee"] == 1.0


def test_the_heading_s_deviation_wraps():
    d = deviation(np.array([0, 0, np.pi - 0.01, 0, 0, 0, 0, 0, 0, 0]),
                  np.array([0, 0, -np.pi + 0.01, 0, 0, 0, 0, 0, 0, 0]))
    assert d[2] == pytest.approx(-0.02 / SCALE[2])


@pytest.mark.parametrize("kwargs, message", [
    ({"samples": 0}, "samples"), ({"samples": 2.5}, "samples"), ({"horizon": -1.0}, "horizon"),
    ({"width": float("nan")}, "width"), ({"threshold": -0.1}, "threshold"),
])
def test_bad_options_are_one_line_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        ReactOptions(**kwargs)


def test_tracker_perturb_react_puts_the_open_loop_outcome_beside_each_trial(tmp_path, capsys):
    out = tmp_path / "p"
    args = ["perturb", str(WALK), "--balls", "1", "--push-times", "0", "--seed", "3", "--react", "--workers", "2",
            "--json", "--out", str(out)]
    assert main(args) == EXIT_OK
    saved = json.loads((out / "perturb.json").read_text())
    assert json.loads(capsys.readouterr().out) == saved
    assert saved["react"]["samples"] == ReactOptions().samples and saved["react"]["seed"] == 3
    assert saved["open_loop"]["trials"] == saved["trials"] == 1
    assert saved["open_loop"]["outcomes"][0]["time"] == saved["outcomes"][0]["time"]
    assert "reactions" not in saved["open_loop"]["outcomes"][0]
