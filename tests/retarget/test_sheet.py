"""Contact sheets: panels at chosen times (``tracker retarget --sheet-at``), file frames resolved
through the clip's own file-to-clip map."""

from __future__ import annotations

from unittest import mock

import numpy as np

from tests.retarget.conftest import MOCAP_DIR, retarget_parts
from tracker.commands.retarget import _sheet_frames


def test_file_frames_and_clip_times_pick_the_same_panels():
    ref = retarget_parts("cmu_22_25_catch_wallet")[0]  # 5 T-pose frames dropped, 120 fps
    first = ref.timing.first_file_frame
    assert first > 0
    by_file = _sheet_frames((("file_frame", first + 60), ("file_frame", first)), ref, "clip")
    by_clip = _sheet_frames((("clip", 60 / ref.timing.file_fps), ("clip", 0.0)), ref, "clip")
    assert list(by_file) == list(by_clip) == [round(60 / ref.timing.file_fps * ref.fps), 0]


def test_retarget_draws_the_sheet_at_the_given_times(tmp_path):
    from tracker.cli import main

    clip = MOCAP_DIR / "cmu_22_25_catch_wallet.bvh"
    out = tmp_path / "sheet.png"
    with mock.patch("tracker.analysis.sheet.contact_sheet", wraps=None) as sheet:
        assert main(["retarget", str(clip), "--sheet", str(out), "--sheet-at", "0.5,file_frame:125"]) == 0
    frames = sheet.call_args.kwargs["frames"]
    ref = sheet.call_args.args[1]
    assert list(frames) == [round(0.5 * ref.fps), round((125 - ref.timing.first_file_frame) / ref.timing.file_fps * ref.fps)]
    assert isinstance(frames, np.ndarray)


def _under_bone_root(src, dst) -> None:
    """``src`` (a CC_Base clip rooted at CC_Base_Hip) as iClone exports it: under an ``RL_BoneRoot``
    helper root that follows the hips on the floor (its position channels: the hips' x, z; y = 0)."""
    head, motion = src.read_text().split("MOTION", 1)
    lines = head.splitlines()
    assert lines[1].strip() == "ROOT CC_Base_Hip"
    hierarchy = ["HIERARCHY", "ROOT RL_BoneRoot", "{", "  OFFSET 0 0 0",
                 "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
                 "  JOINT CC_Base_Hip", *lines[2:], "}"]
    hip_height = float(lines[3].split()[2])  # the hips' OFFSET, which their root position channels are relative to
    rows = motion.strip("\n").splitlines()
    frames = []
    for row in rows[2:]:
        x, y, z, *rest = row.split()  # the hips' position channels (Y up, cm): the bone root under them
        frames.append(" ".join([x, "0", z, "0 0 0 0", str(float(y) + hip_height), "0", *rest]))
    dst.write_text("\n".join(hierarchy) + "\nMOTION\n" + "\n".join(rows[:2] + frames) + "\n")


def test_a_helper_root_above_the_hips_is_not_drawn_as_a_limb(tmp_path):
    """A CC_Base clip under RL_BoneRoot: the same source bones as without it (no hip-to-floor stick)."""
    from tracker.analysis.sheet import _source_segments, _used_joints
    from tracker.motion.bvh import read_bvh
    from tracker.retarget import load_clip_reference
    from tracker.retarget.joint_map import select_joint_map

    plain = MOCAP_DIR / "cmu_06_01_walk_ccbase.bvh"
    helper = tmp_path / "walk_bone_root.bvh"
    _under_bone_root(plain, helper)
    segments = {}
    for path in (plain, helper):
        motion, ref = read_bvh(path), load_clip_reference(path)
        jmap = select_joint_map(motion.skeleton, ref.quality.get("joint_map") or ref.quality.get("convention"))
        names = {motion.skeleton.names[j] for j in _used_joints(motion, jmap)}
        assert "CC_Base_Hip" in names and "RL_BoneRoot" not in names
        segments[path] = _source_segments(motion, ref, jmap)
    assert segments[helper].shape == segments[plain].shape
    np.testing.assert_allclose(segments[helper], segments[plain], atol=1e-6)  # metres: the same drawing
