"""A run with balls and no ``sim.substeps`` takes as many as its impacts need, says so, and converges (issue 34, item 4).

The rule (:mod:`tracker.scenarios.substeps`): a ball and the links near it at its planned impact
close in by at most a quarter of its radius per physics step. A kick config as written from
``tracker run --keys`` (clip, one ball, nothing else) gave an exit speed of 6.6 m/s at 1/60 s
with one physics step per control step (the shin, not the foot, met the ball), 11.5 with the 7
chosen, 11.8 at 1/240 s (2 chosen there) and 12.3 at 1/240 s with one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker.experiments.config import load_config
from tracker.experiments.runner import build, simulate
from tracker.scenarios.substeps import COARSE, MAX_SUBSTEPS, ImpactSpeed, choose_substeps, coarse_warning

ROOT = Path(__file__).resolve().parents[2]
KICK = ROOT / "data" / "motions" / "kick.bvh"
SOCCER = ROOT / "configs" / "soccer_light.yaml"
BALL = "{preset: soccer, target_link: right_foot, impact_time: 1.4, speed: 0.0, offset: [0.12, 0.0, -0.04]}"


@pytest.fixture(autouse=True)
def _nothing_said_yet(monkeypatch):
    """Each choice and warning is said once per process: start every test with none said."""
    import tracker.experiments.resolve as resolve
    import tracker.scenarios.ball_scenario as ball_scenario

    monkeypatch.setattr(resolve, "_SAID", set())
    monkeypatch.setattr(ball_scenario, "_WARNED", set())


def keys_kick(tmp_path: Path, sim: str = "") -> Path:
    """The kick config of the issue: the clip, one ball lying in the foot's path, nothing else."""
    path = tmp_path / "kick.yaml"
    path.write_text(f"clip: {{path: {KICK}}}\nballs:\n  - {BALL}\noutputs: {{plots: false}}\n" + sim)
    return path


def exit_speed(path: Path, *overrides: str) -> tuple[float, int]:
    """``(exit speed m/s, substeps)`` of the config's ball, simulated from just before its flight to 0.5 s after impact."""
    cfg = load_config(path, list(overrides))
    ball = cfg.balls[0]
    start = max(cfg.clip.start, ball.impact_time - ball.flight_time - 0.05)
    cfg = load_config(path, list(overrides) + [f"clip.start={start}", f"sim.duration={ball.impact_time + 0.5 - start}"])
    rec, out = simulate(build(cfg))
    assert not rec.diverged, rec.message
    return out["balls"][0]["exit_speed"], cfg.sim.substeps


def test_the_rule_keeps_the_closing_per_physics_step_under_a_quarter_of_the_radius():
    kick = ImpactSpeed(0, "soccer", 0.11, 1.4, "right_foot", 11.3, 0.0)
    assert kick.closing == pytest.approx(11.3)
    assert kick.substeps(1 / 60) == 7  # 11.3 m/s * 1/420 s = 2.7 cm <= 2.75 cm; 6 would be 3.1 cm
    assert kick.closing / 60 / 7 <= 0.25 * 0.11 < kick.closing / 60 / 6
    assert kick.substeps(1 / 240) == 2
    slow = ImpactSpeed(1, "basketball", 0.12, 2.0, "left_hand", 0.5, 0.0)
    assert slow.substeps(1 / 60) == 1  # never fewer than one
    bullet = ImpactSpeed(2, "volleyball", 0.105, 1.0, "chest", 0.0, 100.0)
    assert bullet.substeps(1 / 60) == MAX_SUBSTEPS and bullet.needed(1 / 60) > MAX_SUBSTEPS
    n, why = choose_substeps([slow, kick], 1 / 60)  # the ball that needs the most decides
    assert n == 7 and why.startswith("right_foot at 11.3 m/s and ball 0 (soccer")
    assert "most chosen" in choose_substeps([bullet], 1 / 60)[1]
    assert choose_substeps([], 1 / 60) == (1, "no balls")
    assert coarse_warning([kick], 1 / 60, kick.substeps(1 / 60, COARSE)) is None
    assert "too coarse for ball 0" in coarse_warning([kick], 1 / 60, 1)


def test_a_config_with_a_ball_and_no_substeps_chooses_them_and_says_so(tmp_path, capsys):
    path = keys_kick(tmp_path)
    cfg = load_config(path)
    assert cfg.sim.substeps == 7
    said = capsys.readouterr().err
    assert said.startswith("substeps: 7 (chosen: right_foot (aim point) at 11.3 m/s and ball 0 (soccer, r 0.11 m)")
    load_config(path)
    assert capsys.readouterr().err == ""  # once
    from tracker.experiments.config import dump_config

    text = dump_config(cfg)
    assert "# sim.substeps: 7 chosen for the balls: right_foot" in text
    again = tmp_path / "again.yaml"
    again.write_text(text)
    assert load_config(again).sim.substeps == 7  # the saved config gives them: nothing to choose
    assert capsys.readouterr().err == ""


def test_a_config_without_balls_takes_one_substep_and_says_nothing(tmp_path, capsys):
    path = tmp_path / "wave.yaml"
    path.write_text(f"clip: {{path: {ROOT / 'data' / 'motions' / 'demo_wave.bvh'}}}\n")
    assert load_config(path).sim.substeps == 1
    assert capsys.readouterr().err == ""


def test_the_kick_without_substeps_exits_within_10_percent_of_the_same_config_at_1_240_s(tmp_path):
    path = keys_kick(tmp_path)
    chosen, n = exit_speed(path)
    fine, n_fine = exit_speed(path, "sim.dt=1/240")
    assert (n, n_fine) == (7, 2)
    assert abs(chosen - fine) <= 0.1 * fine, (chosen, fine)
    finest, _ = exit_speed(path, "sim.dt=1/240", "sim.substeps=1")
    assert abs(chosen - finest) <= 0.1 * finest, (chosen, finest)
    coarse, _ = exit_speed(path, "sim.substeps=1")
    assert coarse < 0.7 * fine  # what one physics step per control step gave: not converged


def test_the_soccer_config_without_its_substeps_exits_within_10_percent_of_it_at_1_240_s():
    chosen, n = exit_speed(SOCCER, "sim.substeps=null")
    fine, _ = exit_speed(SOCCER, "sim.substeps=null", "sim.dt=1/240")
    assert n == 7
    assert abs(chosen - fine) <= 0.1 * fine, (chosen, fine)


def test_a_run_with_too_few_substeps_for_its_ball_warns_once(tmp_path, capsys):
    short = ["clip.start=1.3", "sim.duration=0.15"]
    path = keys_kick(tmp_path, "sim: {substeps: 1}\n")
    simulate(build(load_config(path, short)))
    err = capsys.readouterr().err
    assert err.startswith("warning: sim.substeps: 1 is too coarse for ball 0: right_foot (aim point) at 11.3 m/s")
    assert "close in 18.9 cm (1.71 of its radius) per physics step" in err and "have 7 chosen" in err
    simulate(build(load_config(path, short)))  # the same run again: said already
    assert capsys.readouterr().err == ""
    simulate(build(load_config(path, short + ["sim.substeps=4"])))  # half a radius per step at most: enough
    assert capsys.readouterr().err == ""
