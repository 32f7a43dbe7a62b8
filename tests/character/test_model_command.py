"""``tracker model``: table and JSON for both models; a bad model is a one-line error."""

from __future__ import annotations

import json

import pytest

from tracker.cli import main

from .conftest import HUMANOID_JOINTS


def test_model_json_for_our_humanoid(capsys):
    assert main(["model", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert abs(info["total_mass_kg"] - 70.0) < 0.5
    assert info["actuated_dofs"] == 37
    assert [(j["name"], j["type"]) for j in info["joints"]] == list(HUMANOID_JOINTS)
    knee = next(j for j in info["joints"] if j["name"] == "left_knee")
    assert knee["dofs"] == 1 and knee["lower"] == [0.0] and knee["upper"] == [2.6]
    assert knee["supported_mass_kg"] == pytest.approx(3.031 + 0.959)
    spine = info["joints"][0]
    assert spine["name"] == "spine_lower" and spine["dofs"] == 3
    assert spine["supported_mass_kg"] == pytest.approx(70.0 - 7.819 - 2 * (9.912 + 3.031 + 0.959), abs=1e-9)
    for key in ("kp", "kd", "torque_limit", "supported_mass_kg", "link_mass_kg", "lower", "upper"):
        assert all(key in j for j in info["joints"])


def test_model_json_for_deepmimic(capsys):
    assert main(["model", "deepmimic", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["total_mass_kg"] == pytest.approx(45.0001)
    assert info["actuated_dofs"] == 28
    assert info["joints"][0]["name"] == "chest" and info["joints"][0]["supported_mass_kg"] == pytest.approx(22.0)


@pytest.mark.parametrize("model", ["humanoid", "deepmimic"])
def test_model_table_lists_every_joint_and_the_totals(capsys, model):
    assert main(["model", model]) == 0
    out = capsys.readouterr().out
    assert "total mass" in out and "actuated DOF" in out
    assert ("left_knee" in out and "70.000 kg" in out) if model == "humanoid" else ("right_elbow" in out)


def test_unknown_model_is_a_one_line_error(capsys):
    assert main(["model", "robot"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown model 'robot'") and err.count("\n") == 1
