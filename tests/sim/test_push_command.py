"""``tracker push``: outcomes in JSON, falls as outcomes (exit 0), bad options one line and exit 2."""

from __future__ import annotations

import json

import pytest

from tracker.cli import main


def test_push_json_has_the_outcome_keys(capsys):
    assert main(["push", "stand", "--force", "20", "--link", "pelvis", "--time", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("fell", "fell_time_s", "com_drift_m", "max_com_offset_m"):
        assert key in out
    assert out["fell"] is False and out["fell_time_s"] is None
    assert 0.0 <= out["com_drift_m"] <= out["max_com_offset_m"] < 0.2


def test_a_fall_is_reported_kept_and_exits_4_as_every_fall_does(capsys, tmp_path):
    assert main(["push", "stand", "--strategy", "none", "--time", "3", "--out", str(tmp_path)]) == 4
    text = capsys.readouterr().out
    assert "FELL at t = " in text
    data = json.loads((tmp_path / "push.json").read_text())
    assert data["fell"] is True and data["fell_time_s"] > 0
    assert (tmp_path / "com.png").stat().st_size > 0


@pytest.mark.parametrize("argv, needle", [
    (["--strategy", "knee"], "--strategy: 'knee' is not one of: jacobian, ankle, hip, none, step"),
    (["--target", "moon"], "balance target 'moon'"),
    (["--force", "-5"], "--force: must be >= 0"),
    (["--dt", "abc"], "--dt: expected a number"),
    (["--link", "tail"], "no link 'tail'"),
])
def test_bad_options_are_one_line_and_exit_2(capsys, argv, needle):
    assert main(["push", "stand", "--time", "0.1"] + argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1


def test_a_stance_without_a_foot_on_the_ground_is_refused(capsys, tmp_path):
    pose = tmp_path / "air.yaml"
    pose.write_text("kind: pose\nmodel: humanoid\nheight: 0.2\njoints: {left_knee: 20, right_knee: 20}\n")
    assert main(["push", str(pose), "--time", "0.1"]) == 2
    err = capsys.readouterr().err
    assert "balance needs a foot on the ground at t = 0" in err and err.count("\n") == 1


def test_a_pose_file_with_an_unknown_joint_is_one_line(capsys, tmp_path):
    pose = tmp_path / "bad.yaml"
    pose.write_text("kind: pose\njoints: {left_tail: 20}\n")
    assert main(["push", str(pose)]) == 2
    assert "joints.left_tail: no such joint" in capsys.readouterr().err


def test_a_push_sweep_writes_its_table_and_plot(capsys, tmp_path):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("kind: push_sweep\ndt: 1/30\ntime: 1.5\nlinks: [chest]\ndirections: {front: 0}\n"
                     "strategies: [jacobian]\nforces: [0, 10]\n")
    assert main(["push", "stand", "--sweep", str(sweep), "--out", str(tmp_path / "out"), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table == [{"strategy": "jacobian", "link": "chest", "direction": "front", "largest_survived_n": 10.0}]
    for name in ("survival.csv", "largest.csv", "survival.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    sweep.write_text("kind: push_sweep\nstrategies: [knee]\n")
    assert main(["push", "stand", "--sweep", str(sweep)]) == 2


def test_direction_takes_a_sides_name_or_degrees(capsys):
    import json

    from tracker.cli import main

    assert main(["push", "stand", "--direction", "Left", "--time", "0.2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["direction_deg"] == 90.0
    assert main(["push", "stand", "--direction", "270", "--time", "0.2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["direction_deg"] == 270.0
    with pytest.raises(SystemExit) as exc:  # argparse
        main(["push", "stand", "--direction", "sideways"])
    assert exc.value.code == 2 and "one of: front, left, back, right" in capsys.readouterr().err
