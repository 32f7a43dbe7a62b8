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
