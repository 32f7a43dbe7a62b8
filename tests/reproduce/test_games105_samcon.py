"""``tracker reproduce games105``'s SAMCON section in quick mode: a short search that stands (issue 20)."""

from __future__ import annotations

import json
import re

from tracker.reproduce.games105 import SECTIONS, _samcon


def test_the_samcon_section_runs_a_short_search_whose_track_stands(tmp_path):
    assert ("Sampling-based control: SAMCON", _samcon) in SECTIONS
    text = _samcon(tmp_path, quick=True)
    costs = [float(c) for c in re.findall(r"^\| \d \| ([0-9.e+-]+) \|$", text, flags=re.M)]
    assert len(costs) == 2 and costs[1] <= costs[0], text
    info = json.loads((tmp_path / "samcon" / "optimize.json").read_text())
    assert all(abs(a - b) < 1e-3 * b for a, b in zip(info["cost_per_iteration"], costs))  # the table shows 4 digits
    metrics = json.loads((tmp_path / "samcon" / "metrics.json").read_text())
    assert metrics["fell"] is False and metrics["root"] == "free"
    assert (tmp_path / "samcon" / "cost_per_segment.png").is_file()
    assert "| the optimised track replayed | False |" in text
