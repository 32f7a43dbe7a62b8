"""Recovery steps for standing balance (tracker/control/stepping.py, tracker/sim/recovery.py; issue 33, item 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tracker.cli import main
from tracker.control.balance import BalanceOptions
from tracker.control.stepping import StepOptions
from tracker.errors import ConfigError
from tracker.sim.push import Push, run_push
from tracker.sim.stance import stand_simulation


def push_run(force: float, direction: float, step: bool):
    sim = stand_simulation("stand", balance=BalanceOptions(step=StepOptions() if step else None))
    try:
        return run_push(sim, Push(force=force, direction=direction), 4.0)
    finally:
        sim.close()


def test_a_look_ahead_that_does_not_step_leaves_the_run_as_it_was_bit_for_bit():
    """100 N from the left takes the capture point out of the feet, but standing still survives it: the look-ahead
    sees that, takes no step, and the run goes on exactly as the one without steps (the snapshot restores)."""
    with_steps, without = push_run(100.0, 90.0, True), push_run(100.0, 90.0, False)
    assert with_steps.steps == [] and not with_steps.fell and not without.fell
    assert np.array_equal(with_steps.com, without.com)


def test_a_push_that_fells_the_standing_character_is_survived_with_a_step(capsys):
    """150 N x 0.2 s on the chest from the left fells the Jacobian feedback; with steps the loaded (right) foot steps
    out and the character stands; tracker push reports the step."""
    assert main(["push", "stand", "--force", "150", "--direction", "left"]) == 4
    capsys.readouterr()
    assert main(["push", "stand", "--force", "150", "--direction", "left", "--strategy", "step", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fell"] is False and out["strategy"] == "step"
    first = out["steps"][0]
    assert first["foot"] == "right_foot" and first["start_s"] > 1.0 and first["land_s"] > first["start_s"]
    assert first["landed_m"][1] < first["from_m"][1] - 0.2  # out to the right, the way the push sent the body
    assert main(["push", "stand", "--force", "150", "--direction", "left", "--strategy", "step"]) == 0
    text = capsys.readouterr().out
    assert "step: right_foot lifted at" in text and "landed at" in text


def test_steps_are_for_a_standing_pose_not_a_clip(capsys):
    from tracker.paths import REPO_DIR

    config = REPO_DIR / "configs" / "free" / "cmu_01_01_jump.yaml"
    assert main(["push", str(config), "--strategy", "step", "--force", "10"]) == 2
    err = capsys.readouterr().err
    assert "--strategy step: recovery steps are for a standing pose" in err and err.count("\n") == 1


@pytest.mark.parametrize("change, needle", [
    ({"swing_time": 0.0}, "balance.step.swing_time must be > 0"),
    ({"touch": 1.5}, "balance.step.touch is a fraction of the swing"),
    ({"lift": -0.1}, "balance.step.lift must be a finite number >= 0"),
    ({"horizon": float("nan")}, "balance.step.horizon must be a finite number >= 0"),
])
def test_step_options_are_checked(change, needle):
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        StepOptions(**change)


def test_a_sweep_may_name_the_step_strategy(tmp_path):
    from tracker.sim.push import load_sweep

    path = tmp_path / "s.yaml"
    path.write_text("kind: push_sweep\nstrategies: [jacobian, step]\nforces: [0]\n")
    assert load_sweep(path).strategies == ("jacobian", "step")
    path.write_text("kind: push_sweep\nstrategies: [hop]\nforces: [0]\n")
    with pytest.raises(ConfigError, match="'hop' is not one of: none, jacobian, ankle, hip, step"):
        load_sweep(path)
