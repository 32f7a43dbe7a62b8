"""data/mocap: the captured excerpts the track library is solved on are what their README says, and retarget
with no map (bones followed, feet on the floor, no warning)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracker.motion.bvh import read_bvh
from tracker.retarget import load_clip_reference

MOCAP = Path(__file__).resolve().parents[2] / "data" / "mocap"
README = (MOCAP / "README.md").read_text()
#: file -> (first, last, frames in the source) from the README's table ("whole file" rows: first 0)
ROWS = {m[1]: m.groups()[1:] for m in re.finditer(r"^\| `([\w.]+\.bvh)` \|.*?\| (?:(\d+)\.\.(\d+) of (\d+)|the whole file \((\d+))",
                                           README, flags=re.M)}


def test_every_file_is_in_the_readme_and_every_row_is_a_file():
    assert set(ROWS) == {p.name for p in MOCAP.glob("*.bvh")}
    assert len(ROWS) >= 4


@pytest.mark.parametrize("name", sorted(ROWS))
def test_an_excerpt_has_the_frames_its_row_says_and_retargets_without_a_map(name):
    first, last, total, whole = ROWS[name]
    kept = int(whole) if whole else int(last) - int(first) + 1
    if not whole:
        assert 0 <= int(first) <= int(last) < int(total)
    motion = read_bvh(MOCAP / name)
    assert motion.n_frames == kept
    assert abs(motion.fps - 120.0) < 1e-3
    q = load_clip_reference(MOCAP / name).quality
    assert q["bone_cos_min"] >= 0.5 and q["foot_float_median_m"] <= 0.01
    assert not q["warnings"], q["warnings"]
