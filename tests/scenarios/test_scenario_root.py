"""``tracker scenario NAME --root free`` (issue 33, item 4): the scenario on a free root, with the anchored
run's fall, ball outcome, peak deviation and recovery time beside the free one's."""

from __future__ import annotations

import json
import re

from tracker.cli import EXIT_FELL, EXIT_OK, main


def test_a_free_root_scenario_reports_the_anchored_run_beside_it(tmp_path, capsys):
    out = tmp_path / "free"
    status = main(["scenario", "soccer_light", "--root", "free", "--set", "sim.duration=2.0", "--out", str(out)])
    m = json.loads((out / "metrics.json").read_text())
    assert m["root"] == "free" and status == (EXIT_FELL if m["fell"] else EXIT_OK)
    other = m["compared"]
    assert other["root"] == "anchored" and other["fell"] is False and other["fell_at_s"] is None
    ball = other["impact"]["balls"][0]
    assert ball["first_contact_link"] == "right_foot" and ball["outcome"] == "kicked"
    assert other["impact"]["recovered"] is True
    text = (out / "report.md").read_text()
    table = text.split("## Against the anchored root", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| ([^|]+) \| ([^|]+ \| [^|]+) \|$", table, re.M))
    assert set(rows) >= {" ", "fell", "ball 0: first contact", "ball 0: exit speed", "peak deviation",
                         "time to recover"} - {" "}
    assert rows["ball 0: first contact"].split(" | ")[1].startswith("right_foot at clip time 1.396 s")
    assert rows["fell"].split(" | ")[1] == "no"


def test_an_anchored_scenario_has_nothing_beside_it(tmp_path, capsys):
    out = tmp_path / "anchored"
    assert main(["scenario", "volleyball_slow", "--root", "anchored", "--set", "sim.duration=2.0", "--out", str(out)]) == EXIT_OK
    assert "compared" not in json.loads((out / "metrics.json").read_text())
    assert "## Against the" not in (out / "report.md").read_text()


def test_a_free_root_scenario_runs_its_shipped_variant_beside_the_anchored_scenario(tmp_path, capsys):
    """With configs/free/NAME.yaml shipped, --root free runs it (its own track, step and gains) and the compared
    run is the anchored scenario as configured (configs/NAME.yaml), not the variant re-rooted."""
    from tracker.commands.scenario import free_config

    assert free_config("volleyball_slow") is not None
    out = tmp_path / "free"
    assert main(["scenario", "volleyball_slow", "--root", "free", "--out", str(out)]) == EXIT_OK
    m = json.loads((out / "metrics.json").read_text())
    assert m["root"] == "free" and m["fell"] is False and m["dt"] == 1 / 120  # the shipped variant's step
    assert "offsets:" in (out / "config.yaml").read_text() and "data/tracks/volleyball_slow" in (out / "config.yaml").read_text()
    mine, other = m["impact"]["balls"][0], m["compared"]["impact"]["balls"][0]
    assert m["compared"]["root"] == "anchored" and m["compared"]["fell"] is False
    assert mine["first_contact_link"] == other["first_contact_link"] == "left_forearm"
    assert abs(mine["exit_speed"] - other["exit_speed"]) <= max(0.25 * other["exit_speed"], 1.0)
