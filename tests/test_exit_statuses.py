"""Exit statuses: 3 diverged (naming saturated torque limits), 4 a free root fell (issue 13)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tracker.cli import EXIT_DIVERGED, EXIT_FELL, EXIT_OK, main
from tracker.commands.run import exit_status

KICK = str(Path(__file__).resolve().parents[1] / "data" / "motions" / "kick.bvh")


def test_a_free_root_that_falls_says_fell_and_exits_4(capsys):
    assert main(["track", KICK, "--root", "free", "--duration", "2"]) == EXIT_FELL
    out = capsys.readouterr().out
    assert "FELL at t = " in out


def test_an_anchored_run_does_not_fall(capsys):
    assert main(["track", KICK, "--duration", "0.5"]) == EXIT_OK
    assert "FELL" not in capsys.readouterr().out


def test_a_divergence_names_the_saturated_joints_and_exits_3(capsys):
    assert main(["track", KICK, "--controller", "pd", "--duration", "0.5"]) == EXIT_DIVERGED
    out = capsys.readouterr().out
    assert "DIVERGED: t = " in out and "torque limits saturated (share of steps): " in out


def test_run_exit_status_puts_divergence_before_a_fall():
    def result(diverged: bool, fell_at):
        return SimpleNamespace(diverged=diverged, recording=SimpleNamespace(meta={"fell_at": fell_at}))

    assert exit_status(result(False, None)) == EXIT_OK
    assert exit_status(result(False, 1.2)) == EXIT_FELL
    assert exit_status(result(True, 1.2)) == EXIT_DIVERGED
