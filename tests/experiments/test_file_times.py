"""Times in configs and on the command line may be given as file time (issue 12, point 5).

``impact_time: 1.25`` is clip time; ``{file: 1.60}`` is seconds in the clip file and
``{file_frame: 96}`` a frame of it (``file:1.60`` / ``file_frame:96`` on the command line).
They become clip time through the retargeter's own map: the file's frame rate (not the
reference's after ``clip.fps`` resampling, not the time step) and the added T-pose it drops.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tracker.cli import main
from tracker.experiments.config import config_to_data, dump_config, load_config
from tracker.experiments.runner import build, simulate
from tracker.motion.bvh import read_bvh
from tracker.retarget import load_clip_reference

from .conftest import MOCAP

CATCH = MOCAP / "cmu_22_25_catch_wallet.bvh"  # an added T-pose: file frames 0-4 dropped; 120 fps, sim at 60 Hz
BANDAI = MOCAP / "bandai_walk_normal_001.bvh"  # 30 fps, resampled to 50 fps, sim at 60 Hz; nothing dropped

BALL = ("{preset: basketball, target_link: left_hand, speed: 9.0, flight_time: 0.25, "
        "direction: [-0.933, 0.315, -0.174], offset: [-0.019, 0.001, -0.066], impact_time: %s}")


def write(tmp_path: Path, name: str, clip: Path, impact: str, extra: str = "", start: str = "0") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"clip: {{path: {clip}, start: {start}{extra}}}\n"
                    "sim: {dt: 1/60, duration: 0.4, substeps: 2}\n"
                    "schedule: {enabled: true, k_r_ratio: 0.05}\n"
                    f"balls: [{BALL % impact}]\n"
                    "outputs: {plots: false, recording: false}\n")
    return path


def run_both(a: Path, b: Path):
    ca, cb = load_config(a), load_config(b)
    out = []
    for cfg in (ca, cb):
        rec, balls = simulate(build(cfg), balls=True)
        out.append((cfg, rec, balls))
    return out


def assert_bit_identical(runs) -> None:
    (ca, ra, ba), (cb, rb, bb) = runs
    assert ca.balls[0].impact_time == cb.balls[0].impact_time  # the same float, not a close one
    assert ca.clip.start == cb.clip.start
    assert np.array_equal(ra.t, rb.t) and np.array_equal(ra.q, rb.q) and np.array_equal(ra.v, rb.v)
    assert np.array_equal(ra.tau, rb.tau) and np.array_equal(ra.balls, rb.balls, equal_nan=True)  # NaN: not launched yet
    assert json.dumps(ba, sort_keys=True) == json.dumps(bb, sort_keys=True)
    assert ba["balls"][0]["first_contact_time"] is not None  # the ball was met: the runs exercise the timing


def test_a_file_frame_runs_bit_identically_to_its_clip_time_on_a_clip_with_a_dropped_t_pose(tmp_path):
    ref = load_clip_reference(CATCH)
    dropped = ref.quality["dropped_frames"]
    assert dropped == 5  # the catch clip's added T-pose and blend (tracker inspect: clip time 0 = file frame 5)
    fps = read_bvh(CATCH).fps  # the file's own rate, 120.00005
    frame, start_frame = 41, 10
    clip_t = (frame - dropped) / fps  # written as its repr: the YAML float is the same float
    by_frame = write(tmp_path, "frame", CATCH, f"{{file_frame: {frame}}}", start=f"{{file_frame: {start_frame}}}")
    by_clip = write(tmp_path, "clip", CATCH, repr(clip_t), start=repr((start_frame - dropped) / fps))
    runs = run_both(by_frame, by_clip)
    assert_bit_identical(runs)
    cfg = runs[0][0]
    assert cfg.file_times["balls.0.impact_time"]["given"] == "{file_frame: 41}"
    assert cfg.file_times["clip.start"]["clip_time_s"] == (start_frame - dropped) / fps
    # the shorthand of the command line and the file-time spelling give the same clip time
    assert load_config(by_clip, ["balls.0.impact_time=file_frame:41"]).balls[0].impact_time == clip_t
    got = load_config(by_clip, [f"balls.0.impact_time={{file: {frame / fps!r}}}"]).balls[0].impact_time
    assert abs(got - clip_t) < 1e-12


def test_a_file_frame_uses_the_files_rate_when_the_clip_is_resampled_and_simulated_at_another(tmp_path):
    fps = read_bvh(BANDAI).fps  # 30.00003 fps; the reference is resampled to 50 fps and simulated at 60 Hz
    assert abs(fps - 30) < 1e-3
    frame = 40
    by_frame = write(tmp_path, "frame", BANDAI, f"{{file_frame: {frame}}}", extra=", fps: 50", start="1.0")
    by_clip = write(tmp_path, "clip", BANDAI, repr(frame / fps), extra=", fps: 50", start="1.0")
    runs = run_both(by_frame, by_clip)
    assert_bit_identical(runs)
    assert runs[0][1].dt == pytest.approx(1 / 60)
    assert build(runs[0][0]).reference.fps == 50.0


def test_a_file_frame_names_the_same_moment_as_inspect_events(tmp_path):
    from tracker.commands.inspect import summarize

    events = summarize(str(CATCH), events=True)["events"]
    late = [e for e in events if e["clip_time_s"] > 0.5][:3]
    cfg_path = write(tmp_path, "x", CATCH, "1.0")
    for e in late:
        cfg = load_config(cfg_path, ["sim.duration=null", f"balls.0.impact_time=file_frame:{e['file_frame']}"])
        assert cfg.balls[0].impact_time == pytest.approx(e["clip_time_s"], abs=1e-12)
        cfg = load_config(cfg_path, ["sim.duration=null", f"balls.0.impact_time={{file: {e['file_time_s']!r}}}"])
        assert cfg.balls[0].impact_time == pytest.approx(e["clip_time_s"], abs=1e-9)


def test_the_resolved_config_says_how_the_time_was_given_and_loads_again_to_the_same_clip_time(tmp_path):
    cfg = load_config(write(tmp_path, "x", CATCH, "{file_frame: 41}"))
    text = dump_config(cfg)
    assert "# balls.0.impact_time: given as {file_frame: 41} (file frame 41, file time" in text
    again = tmp_path / "again.yaml"
    again.write_text(text)
    back = load_config(again)
    assert back.balls[0].impact_time == cfg.balls[0].impact_time and not back.file_times
    assert config_to_data(back)["balls"] == config_to_data(cfg)["balls"]


def test_keep_first_frame_moves_clip_time_zero_back_to_file_frame_0(tmp_path):
    fps = read_bvh(CATCH).fps
    path = write(tmp_path, "x", CATCH, "{file_frame: 41}", extra=", keep_first_frame: true")
    assert load_config(path).balls[0].impact_time == 41 / fps
    assert load_config(path, ["balls.0.impact_time=file_frame:3"]).balls[0].impact_time == 3 / fps


def test_a_saved_reference_keeps_its_files_map_through_resampling(tmp_path):
    npz = tmp_path / "catch.npz"
    assert main(["retarget", str(CATCH), "-o", str(npz), "--fps", "30"]) == 0
    from tracker.retarget.clip_timing import clip_timing

    assert clip_timing(npz) == clip_timing(CATCH)
    assert clip_timing(npz).first_file_frame == 5
    cfg = load_config(write(tmp_path, "x", npz, "{file_frame: 41}"))
    assert cfg.balls[0].impact_time == (41 - 5) / read_bvh(CATCH).fps


BAD = {
    "a frame inside the dropped T-pose": (
        ["--set", "balls.0.impact_time={file_frame: 3}"],
        "balls.0.impact_time: file frame 3 is in the frames retargeting drops (the added T-pose of "
        "cmu_22_25_catch_wallet.bvh: clip time 0 = file frame 5 (file frames 0-4 dropped), 120.00005 fps); give a "
        "time at or after file frame 5, or set clip.keep_first_frame: true to keep them"),
    "a file time inside the dropped T-pose": (
        ["--set", "clip.start=file:0.01"], "clip.start: file time 0.01 s (file frame 1.2) is in the frames "
        "retargeting drops"),
    "a frame after the clip": (
        ["--set", "balls.0.impact_time=file_frame:5000"],
        "balls.0.impact_time: file frame 5000 is after the last frame of cmu_22_25_catch_wallet.bvh (file frame 175,"),
    "a frame that is not whole": (
        ["--set", "balls.0.impact_time={file_frame: 41.5}"], "balls.0.impact_time.file_frame: expected an integer, "
        "got 41.5"),
    "a negative file time": (
        ["--set", "balls.0.impact_time=file:-1"], "balls.0.impact_time.file: must be >= 0 s, got -1"),
    "an unknown time base": (
        ["--set", "balls.0.impact_time={frame: 41}"], "balls.0.impact_time: expected seconds of clip time, "
        "{file: SECONDS} (file time) or {file_frame: N} (a frame of the file), got {frame: 41}"),
    "two bases at once": (
        ["--set", "balls.0.impact_time={file: 1, file_frame: 41}"], "balls.0.impact_time: expected seconds of "
        "clip time"),
    "a file time that lands before the run starts": (
        ["--set", "balls.0.impact_time=file_frame:6", "--set", "clip.start=0.5"], "balls.0.impact_time: must be "
        "after the run starts (clip.start = 0.5 s), got 0.00833333 (given as {file_frame: 6}, clip time "
        "0.00833333 s)"),
    "a keyframe file has no file frames": (
        ["--set", f"clip.path={Path(__file__).resolve().parents[2] / 'data' / 'keyframes' / 'ymca.yaml'}"],
        "balls.0.impact_time: {file_frame: 41}: "),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_a_bad_file_time_is_one_line_naming_the_key_with_status_2(case, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TRACKER_DEBUG", raising=False)
    args, message = BAD[case]
    path = write(tmp_path, "x", CATCH, "{file_frame: 41}")
    out = tmp_path / "results"
    assert main(["run", str(path), *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {message}"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("start, message", [
    ("file_frame:3", "--start file_frame:3: file frame 3 is in the frames retargeting drops"),
    ("file_frame:9999", "--start file_frame:9999: file frame 9999 is after the last frame"),
    ("file_frame:x", "argument --start: 'file_frame:x': file_frame needs a whole number"),
    ("frame:3", "argument --start: 'frame:3': expected seconds of clip time, file:SECONDS"),
])
def test_track_start_takes_file_time_and_refuses_bad_ones(start, message, capsys, monkeypatch):
    monkeypatch.delenv("TRACKER_DEBUG", raising=False)
    try:
        status = main(["track", str(CATCH), "--start", start, "--duration", "0.1"])
    except SystemExit as exc:  # argparse
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_track_start_as_a_file_frame_equals_its_clip_time(capsys):
    fps = read_bvh(CATCH).fps
    assert main(["track", str(CATCH), "--start", "file_frame:65", "--duration", "0.1", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(["track", str(CATCH), "--start", repr((65 - 5) / fps), "--duration", "0.1", "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert a["joint_error_mean_rad"] == b["joint_error_mean_rad"] and a["steps"] == b["steps"]


def test_a_deepmimic_file_has_file_frames_too_whatever_the_model():
    import pybullet_data

    from tracker.retarget.clip_timing import clip_timing

    path = Path(pybullet_data.getDataPath()) / "data" / "motions" / "humanoid3d_walk.txt"
    ref = load_clip_reference(path, model="deepmimic")
    timing = clip_timing(path)
    assert (timing.file_fps, timing.file_frames, timing.first_file_frame) == (ref.fps, ref.n_frames, 0)
    assert timing.resolve("file_frame", 3) == 3 / ref.fps


def test_a_run_refuses_file_times_resolved_with_another_map_than_its_references(tmp_path):
    from tracker.errors import ConfigError

    cfg = load_config(write(tmp_path, "x", CATCH, "{file_frame: 41}"))
    cfg.file_times["balls.0.impact_time"]["timing"] = {**cfg.file_times["balls.0.impact_time"]["timing"],
                                                      "first_file_frame": 0}  # as if the file had changed since
    with pytest.raises(ConfigError, match="balls.0.impact_time: given as {file_frame: 41}, but the clip's file frames"):
        build(cfg)


def test_the_ball_free_baseline_does_not_depend_on_how_the_times_were_spelled(tmp_path):
    from tracker.experiments.runner import baseline_key

    by_frame = load_config(write(tmp_path, "a", CATCH, "{file_frame: 41}", start="{file_frame: 10}"))
    by_clip = load_config(write(tmp_path, "b", CATCH, "0.4", start=repr(by_frame.clip.start)))
    assert by_frame.file_times and not by_clip.file_times
    assert baseline_key(by_frame) == baseline_key(by_clip)  # a sweep over impact times reuses one baseline
