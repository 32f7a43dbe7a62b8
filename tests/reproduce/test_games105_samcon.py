"""``tracker reproduce games105``'s SAMCON section: the committed track (data/samcon/kick_1s) replays and stands."""

from __future__ import annotations

import json
import re

from tracker.reproduce.games105 import SECTIONS, _samcon
from tracker.reproduce.games105_samcon import TRACK_DIR


def test_the_committed_track_replays_standing_and_the_section_writes_its_blocks(tmp_path) -> None:
    assert ("Sampling-based control: SAMCON", _samcon) in SECTIONS
    assert "tracker optimize data/motions/kick.bvh" in (TRACK_DIR / "README.md").read_text()
    facts: dict = {}
    text = _samcon(tmp_path, quick=True, facts=facts)
    record = json.loads((TRACK_DIR / "optimize.json").read_text())
    costs = [float(c) for c in re.findall(r"^\| \d \| ([0-9.e+-]+) \|$", text, flags=re.M)]
    assert len(costs) == 2 and costs[1] <= costs[0]
    assert all(abs(a - b) < 1e-3 * b for a, b in zip(record["cost_per_iteration"], costs))
    track = facts["samcon"]["track"]
    assert track["fell_at"] is None and track["status"] == "ok"
    assert "| the committed track | no |" in text
    # the replay is the search's own: its root error is what the search's replay measured (0.0412 m)
    assert abs(track["root_error_mean_m"] - 0.0412) < 5e-4
    assert (tmp_path / "blocks" / "samcon.md").is_file() and (tmp_path / "blocks" / "samcon-params.md").is_file()
    params = (tmp_path / "blocks" / "samcon-params.md").read_text()
    assert "| segment length |" in params and "not read" in params
