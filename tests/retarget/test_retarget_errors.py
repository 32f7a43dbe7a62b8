"""Retargeting errors a user can cause: one clear line and exit status 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tracker.cli import main
from tracker.errors import RetargetError
from tracker.motion.bvh import read_bvh
from tracker.motion.bvh_write import write_bvh
from tracker.motion.motion import Motion
from tracker.motion.skeleton import Skeleton
from tests.retarget.conftest import MOCAP_DIR

KICK = MOCAP_DIR / "cmu_10_01_soccer_kick.bvh"


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _robot_skeleton_bvh(tmp_path):
    sk = Skeleton(names=("base", "arm", "gripper"), parents=np.array([-1, 0, 1]),
                  offsets=np.array([[0, 0, 0.0], [0, 0, 0.3], [0, 0, 0.3]]),
                  channels=(("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"),
                            ("Zrotation", "Yrotation", "Xrotation"), ("Zrotation", "Yrotation", "Xrotation")))
    rot = np.zeros((3, 3, 4))
    rot[..., 3] = 1
    m = Motion(sk, 30.0, np.repeat(sk.offsets[None], 3, axis=0), rot)
    path = tmp_path / "robot.bvh"
    write_bvh(m, path)
    return path


def test_a_skeleton_that_is_no_humanoid_is_refused_naming_what_is_missing(tmp_path, capsys):
    path = _robot_skeleton_bvh(tmp_path)
    code, out, err = _run(capsys, "retarget", str(path))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "not a humanoid skeleton: a single chain of 3 joints" in err
    assert "--map" in err and "Traceback" not in err


def test_a_user_map_naming_missing_joints_names_them(tmp_path, capsys):
    user_map = tmp_path / "mine.yaml"
    text = (MOCAP_DIR.parent.parent / "main" / "tracker" / "retarget" / "joint_maps" / "cmu_mb.yaml")
    from tracker.paths import JOINT_MAP_DIR

    body = (JOINT_MAP_DIR / "cmu_mb.yaml").read_text().replace("LeftForeArm", "LeftElbowBone")
    user_map.write_text(body)
    code, out, err = _run(capsys, "retarget", str(KICK), "--map", str(user_map))
    assert code == 2
    assert "LeftElbowBone" in err and "mine.yaml" in err
    assert err.count("\n") == 1


def test_a_map_with_an_unknown_key_is_rejected(tmp_path, capsys):
    from tracker.paths import JOINT_MAP_DIR

    user_map = tmp_path / "typo.yaml"
    user_map.write_text((JOINT_MAP_DIR / "cmu_mb.yaml").read_text().replace("detect:", "detcet:"))
    code, _, err = _run(capsys, "retarget", str(KICK), "--map", str(user_map))
    assert code == 2 and "detcet" in err


def test_a_clip_with_one_frame_is_refused(tmp_path, capsys):
    m = read_bvh(KICK)
    one = Motion(m.skeleton, m.fps, m.translations[5:6], m.rotations[5:6])
    path = tmp_path / "one.bvh"
    write_bvh(one, path)
    code, _, err = _run(capsys, "retarget", str(path))
    assert code == 2
    assert "1 frame" in err and "at least 2" in err


def test_unknown_builtin_map_name_lists_choices(capsys):
    code, _, err = _run(capsys, "retarget", str(KICK), "--map", "cmu_typo")
    assert code == 2 and "cmu_mb" in err


def test_json_report_has_the_documented_keys(tmp_path, capsys):
    out_path = tmp_path / "kick.npz"
    code, out, _ = _run(capsys, "retarget", str(KICK), "--json", "-o", str(out_path))
    assert code == 0
    rep = json.loads(out)
    for key in ("convention", "frames", "fps", "bone_cos_mean", "bone_cos_min", "ee_error_mean_m",
                "foot_penetration_max_m", "clamped_frames"):
        assert key in rep
    assert rep["convention"] == "cmu_mb"
    assert out_path.exists()


def test_a_saved_reference_loads_back_identically(tmp_path):
    from tracker.retarget import Reference, load_clip_reference

    ref = load_clip_reference(KICK)
    path = ref.save(tmp_path / "r.npz")
    back = Reference.load(path)
    assert np.array_equal(back.q, ref.q) and np.array_equal(back.v, ref.v)
    assert back.fps == ref.fps and back.joints == ref.joints
    assert back.quality["convention"] == "cmu_mb"


def test_a_non_reference_npz_is_a_clear_error(tmp_path):
    from tracker.retarget import Reference

    path = tmp_path / "x.npz"
    np.savez(path, a=np.zeros(3))
    with pytest.raises(RetargetError, match="not a tracker reference"):
        Reference.load(path)
