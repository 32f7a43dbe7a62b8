"""Perturbation trials on a shipped free-root track (``tracker perturb``, issue 33): balls and pushes the
search never saw, drawn from a seed, and who stays up."""

from __future__ import annotations

import json

import pytest

from tracker.cli import EXIT_BAD_INPUT, EXIT_OK, main
from tracker.errors import ConfigError
from tracker.paths import CONFIG_DIR
from tracker.sampling.perturb import BALL_LINKS, EARLIEST, PUSH_SIDES, SETTLE, standard_trials, trial_window

WALK = CONFIG_DIR / "free" / "cmu_02_01_walk.yaml"


def test_the_standard_set_is_twenty_balls_and_two_pushes_from_each_side_drawn_from_the_seed():
    trials = standard_trials(4.0, seed=0)
    balls = [t for t in trials if t.kind == "ball"]
    pushes = [t for t in trials if t.kind == "push"]
    assert len(balls) == 20 and len(pushes) == 8
    assert sorted(t.side for t in pushes) == sorted(PUSH_SIDES * 2)
    assert all(t.link in BALL_LINKS for t in balls) and all(t.link == "pelvis" for t in pushes)
    assert all(EARLIEST <= t.time <= 4.0 - SETTLE for t in trials)
    assert len({round(t.time, 6) for t in trials}) == len(trials)  # random, not a grid
    assert standard_trials(4.0, seed=0) == trials
    assert standard_trials(4.0, seed=1) != trials
    assert [t.time - 1.0 for t in standard_trials(4.0, seed=0, start=1.0)] == pytest.approx([t.time for t in trials])


def test_a_clip_too_short_for_a_fall_to_show_is_refused():
    with pytest.raises(ConfigError, match="at least 1.5 s"):
        trial_window(1.2)


def test_tracker_perturb_runs_the_trials_on_a_shipped_track(tmp_path, capsys):
    out = tmp_path / "p"
    args = ["perturb", str(WALK), "--balls", "2", "--push-times", "1", "--seed", "3", "--json", "--out", str(out)]
    assert main(args) == EXIT_OK
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((out / "perturb.json").read_text())
    assert printed == saved
    assert saved["trials"] == 6 and saved["balls"] == 2 and saved["pushes"] == 4
    assert saved["undisturbed_fell"] is False  # the shipped track stands undisturbed
    rows = saved["outcomes"]
    assert saved["survived"] == sum(not r["fell"] for r in rows)
    for r in rows:  # a fall comes after its disturbance, inside the clip
        assert (r["fell_at"] is None) != r["fell"]
        if r["fell"]:
            assert r["time"] < r["fell_at"] <= 2.86
    # the same seed, the same trials and outcomes (deterministic runs)
    assert main(args[:-2] + ["--out", str(tmp_path / "q")]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == saved


@pytest.mark.parametrize("config, message", [
    (CONFIG_DIR / "soccer_light.yaml", "need root.mode: free and controller.offsets"),
    (CONFIG_DIR / "samcon" / "kick_ball_free.yaml", "need root.mode: free and controller.offsets"),
])
def test_a_config_without_a_free_track_is_refused_in_one_line(config, message, capsys):
    assert main(["perturb", str(config)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_guide_s_perturbation_table_is_what_the_command_gives(capsys):
    """docs/guide/free_root.md's row for the shipped CMU walk, re-run (``tracker perturb``, seed 0)."""
    import re

    from tracker.paths import REPO_DIR

    text = (REPO_DIR / "docs" / "guide" / "free_root.md").read_text()
    row = re.search(r"^\| cmu_02_01_walk \| [\d.]+ s \| (\d+) of 28 \| (\d+) of 20 \| (\d+) of 8 \|$", text, re.M)
    assert row is not None
    assert main(["perturb", str(WALK), "--json"]) == EXIT_OK
    got = json.loads(capsys.readouterr().out)
    assert (got["survived"], got["balls_survived"], got["pushes_survived"]) == tuple(int(x) for x in row.groups())
