"""Every reader checks what it reads (issue 34, item 1): hostile files end in one line and exit 2.

Recordings (``tracker replay``), saved references (``tracker track``/``run``/``optimize``), offset
tracks, special and long paths (FIFOs, ``/dev/zero``, folders, names over 255 bytes) and model
URDFs, each malformed the way an independent campaign of hostile inputs found them to crash, hang
or fail with an internal error. Every case must exit with status 2 and one line on stderr starting
``error:`` that names the file, without a traceback. Cases that could block (a FIFO, a device)
run in a subprocess with a timeout; the others run ``tracker.cli.main`` in-process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tracker.character.model import load_model
from tracker.cli import EXIT_BAD_INPUT, main
from tracker.errors import ConfigError as _Err
from tracker.sim.recording import write_npz

ROOT = Path(__file__).resolve().parents[1]
KICK = str(ROOT / "data" / "motions" / "kick.bvh")
HUMANOID_YAML = ROOT / "data" / "humanoid" / "humanoid.yaml"
HUMANOID_URDF = ROOT / "data" / "humanoid" / "humanoid.urdf"
PUSH_SWEEP = ROOT / "configs" / "sweeps" / "push.yaml"
#: Seconds a subprocess case may take before it counts as a hang (start-up is ~1 s).
HANG_S = 60
T = 6  # rows of the hand-made recording
LAYOUT = load_model("humanoid").layout


def cli(argv: list[str], capsys, monkeypatch) -> tuple[int, str]:
    """``tracker ARGV`` in-process without a display: (exit status, stderr)."""
    monkeypatch.delenv("DISPLAY", raising=False)
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def cli_subprocess(argv: list[str], cwd: Path) -> tuple[int, str]:
    """``python -m tracker ARGV`` in a child process that must end within :data:`HANG_S` s."""
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    r = subprocess.run([sys.executable, "-m", "tracker", *map(str, argv)], capture_output=True, text=True,
                       timeout=HANG_S, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    return r.returncode, r.stderr


def assert_one_line_naming(status: int, err: str, *names: str) -> str:
    """Exit 2, one line ``error: ...`` on stderr naming each of ``names``; the line."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == EXIT_BAD_INPUT, (status, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# -- hand-made files --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def layout():
    return LAYOUT


def recording_arrays(layout) -> dict:
    """The arrays of a valid 6-step recording of the humanoid standing still, one ball."""
    q = np.tile(layout.neutral_q(), (T, 1))
    zeros = np.zeros((T, layout.nv))
    balls = np.full((T, 1, 3), np.nan)
    balls[3:] = [2.0, 0.0, 1.0]  # the ball exists from step 3 (NaN before, as the simulator writes)
    return dict(
        kind="tracker.recording", dt=1 / 60, joint_names=np.array(layout.names),
        joint_kinds=np.array([s.kind for s in layout.joints]), t=np.arange(1, T + 1) / 60, q=q, v=zeros,
        q_ref=q, v_ref=zeros, tau=zeros, kp=np.full((T, layout.nv), 100.0), tau_max=np.full(layout.nv, 100.0),
        balls=balls, events=json.dumps([{"t": 0.05, "link": "chest", "impulse": 1.0}]),
        meta=json.dumps({"model": "humanoid"}), status="ok", message="",
    )


def reference_arrays(layout) -> dict:
    """The arrays of a valid 30-frame reference of the humanoid standing still."""
    f = 30
    q = np.tile(layout.neutral_q(), (f, 1))
    q[:, 2] = 0.987885
    return dict(q=q, v=np.zeros((f, layout.nv)), fps=np.float64(30.0), joint_names=np.array(layout.names),
                joint_kinds=np.array([s.kind for s in layout.joints]), model="humanoid", source="hand-made",
                quality="{}", kind="tracker.reference", contacts=np.ones((f, 2), dtype=bool))


def write_result(folder: Path, arrays: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_npz(folder / "recording.npz", arrays)
    return folder


def huge_header_npz(path: Path, good: dict, name: str) -> Path:
    """``good`` with array ``name``'s header claiming 10^6 x 10^6 values (and the zip its size)."""
    write_npz(path, {k: v for k, v in good.items() if k != name})
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr(f"{name}.npy", buf.getvalue() + b"\0" * 64)
    return path


def truncated(path: Path, data: bytes) -> Path:
    path.write_bytes(data[: len(data) // 2])
    return path


def corrupted(path: Path, data: bytes) -> Path:
    """``data`` with bytes in the middle of the compressed streams overwritten (a bad sector)."""
    b = bytearray(data)
    mid = len(b) // 3
    b[mid:mid + 40] = b"\xa5" * 40
    path.write_bytes(bytes(b))
    return path


# -- the shared checks (tracker.readfile) -----------------------------------------------------

def test_an_npz_over_its_value_budget_is_refused_before_it_is_read(tmp_path):
    """10^6 zeros compress to a few kB: the file is small, the arrays are not."""
    from tracker.readfile import load_npz_checked

    path = tmp_path / "big.npz"
    np.savez_compressed(path, a=np.zeros(10**6))
    assert path.stat().st_size < 10_000
    with pytest.raises(_Err) as info:
        load_npz_checked(path, "test", max_bytes=1 << 20, max_elements=1000, error=_Err)
    assert str(info.value).startswith(f"{path}: not a test file (array 'a' takes the file past 1,000 values")
    assert load_npz_checked(path, "test", 1 << 20, 10**6, _Err)["a"].shape == (10**6,)


def test_an_npz_of_many_entries_or_pickles_is_refused(tmp_path):
    from tracker.readfile import MAX_NPZ_MEMBERS, load_npz_checked

    many = tmp_path / "many.npz"
    np.savez(many, **{f"a{i}": np.zeros(1) for i in range(MAX_NPZ_MEMBERS + 1)})
    with pytest.raises(_Err, match="65 entries, more than the 64"):
        load_npz_checked(many, "test", 1 << 20, 1000, _Err)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, a=np.array([{"x": 1}], dtype=object))
    with pytest.raises(_Err, match="array 'a': an array of object"):
        load_npz_checked(pickled, "test", 1 << 20, 1000, _Err)


def test_json_depth_counts_brackets_outside_strings_only():
    from tracker.readfile import json_depth, load_json_bounded

    assert json_depth('{"a": [1, {"b": "[[[[{{"}]}') == 3
    assert json_depth('["\\", "\\"]') == 1  # escaped backslashes close their strings
    with pytest.raises(_Err, match="x is JSON nested 65 levels deep, more than 64"):
        load_json_bounded("[" * 65 + "]" * 65, "x", error=_Err)
    assert json_depth(json.dumps(load_json_bounded("[" * 64 + "]" * 64, "x", error=_Err))) == 64


# -- recordings: tracker replay ---------------------------------------------------------------

def _bad_recordings(layout) -> dict[str, tuple[dict, str]]:
    """name -> (arrays changed from the valid ones, a word the message must hold)."""
    good = recording_arrays(layout)
    q_nan = good["q"].copy()
    q_nan[2, 10] = np.nan
    q_zero_quat = good["q"].copy()
    q_zero_quat[1, 3:7] = 0.0
    return {
        "balls (T, 3)": ({"balls": np.zeros((T, 3))}, "balls"),
        "balls a scalar": ({"balls": np.float64(1.0)}, "balls"),
        "100,000 balls": ({"balls": np.zeros((T, 100_000, 3))}, "balls"),
        "balls infinite": ({"balls": np.full((T, 1, 3), np.inf)}, "balls"),
        "q with NaN": ({"q": q_nan}, "q"),
        "q one row": ({"q": good["q"][:1]}, "q"),
        "q too few columns": ({"q": good["q"][:, :10]}, "q"),
        "q a zero quaternion": ({"q": q_zero_quat}, "q"),
        "dt an array": ({"dt": np.full(3, 1 / 60)}, "dt"),
        "dt zero": ({"dt": np.float64(0.0)}, "dt"),
        "dt NaN": ({"dt": np.float64(np.nan)}, "dt"),
        "t decreasing": ({"t": good["t"][::-1].copy()}, "t"),
        "meta a list": ({"meta": json.dumps([1, 2])}, "meta"),
        "meta deeply nested": ({"meta": "[" * 100_000 + "]" * 100_000}, "meta"),
        "meta model not text": ({"meta": json.dumps({"model": 3})}, "meta"),
        "events an array": ({"events": np.zeros((T, 2))}, "events"),
        "events a mapping": ({"events": json.dumps({"t": 1})}, "events"),
        "event without a time": ({"events": json.dumps([{"link": "chest"}])}, "events"),
        "kp of another width": ({"kp": np.ones((T, 5))}, "kp"),
        "tau_max of another width": ({"tau_max": np.ones(3)}, "tau_max"),
        "no steps": ({k: good[k][:0] for k in ("t", "q", "v", "q_ref", "v_ref", "tau", "kp", "balls")}, "steps"),
        "unknown joint kind": ({"joint_kinds": np.array(["ball"] * len(layout.names))}, "joint"),
        "status unknown": ({"status": "exploded"}, "status"),
    }


def test_a_valid_hand_made_recording_gets_as_far_as_the_display(tmp_path, layout, capsys, monkeypatch):
    folder = write_result(tmp_path / "good", recording_arrays(layout))
    status, err = cli(["replay", folder], capsys, monkeypatch)
    assert_one_line_naming(status, err, "no display")


def test_a_recording_diverged_in_its_last_step_is_read(tmp_path, layout):
    from tracker.sim.recording import Recording

    arrays = recording_arrays(layout)
    arrays["q"] = arrays["q"].copy()
    arrays["q"][-1, 0] = np.nan  # the simulator keeps the step that diverged
    arrays.update(status="diverged", message="t = 0.1 s: the state is not finite")
    rec = Recording.load(write_result(tmp_path / "div", arrays) / "recording.npz")
    assert rec.diverged and rec.n_steps == T


def test_a_recording_of_a_held_ball_s_many_contact_events_is_read(tmp_path, layout):
    """A ball held in the hands is one contact event per link and step: thousands (the free-root basketball's
    recording has 4000, 1.9 MB of text), read back; a text past the events' bound is still refused."""
    from tracker.errors import SimulationError
    from tracker.sim.recording import MAX_EVENTS_CHARS, Recording

    event = {"t": 0.05, "link": "left_hand", "impulse": 0.01, "position": [0.5166213352463315] * 3,
             "normal": [0.3010880943703208] * 3, "impulse_vector": [0.11665290555223558] * 3}
    arrays = recording_arrays(layout)
    arrays["events"] = json.dumps([event] * 8000)
    assert len(arrays["events"]) > 1 << 21
    rec = Recording.load(write_result(tmp_path / "held", arrays) / "recording.npz")
    assert len(rec.events) == 8000
    arrays["events"] = "[" + " " * MAX_EVENTS_CHARS + "]"
    with pytest.raises(SimulationError, match="events: text of"):
        Recording.load(write_result(tmp_path / "huge", arrays) / "recording.npz")


@pytest.mark.parametrize("case", list(_bad_recordings(LAYOUT)))
def test_replay_refuses_a_malformed_recording_in_one_line(case, tmp_path, layout, capsys, monkeypatch):
    change, word = _bad_recordings(layout)[case]
    folder = write_result(tmp_path / "bad", recording_arrays(layout) | change)
    status, err = cli(["replay", folder], capsys, monkeypatch)
    line = assert_one_line_naming(status, err, str(folder / "recording.npz"))
    assert word in line.split("recording.npz", 1)[1], line  # the field, after the file


def test_replay_of_balls_shaped_t_by_3_ends_in_one_line_not_a_segfault(tmp_path, layout):
    """The crash of the issue: a (T, 3) balls array reached PyBullet's GUI and killed the process."""
    folder = write_result(tmp_path / "seg", recording_arrays(layout) | {"balls": np.zeros((T, 3))})
    status, err = cli_subprocess(["replay", folder, "--frames", "2"], tmp_path)
    assert_one_line_naming(status, err, str(folder), "balls")


def test_replay_refuses_truncated_corrupt_and_huge_recordings(tmp_path, layout, capsys, monkeypatch):
    good = write_result(tmp_path / "good", recording_arrays(layout)) / "recording.npz"
    data = good.read_bytes()
    for name, make in (("trunc", lambda p: truncated(p, data)), ("corrupt", lambda p: corrupted(p, data)),
                       ("huge", lambda p: huge_header_npz(p, recording_arrays(layout), "q"))):
        (tmp_path / name).mkdir()
        path = make(tmp_path / name / "recording.npz")
        status, err = cli(["replay", path], capsys, monkeypatch)
        assert "no display" not in assert_one_line_naming(status, err, str(path)), name


# -- saved references: tracker track / run / optimize ----------------------------------------

def _bad_references(layout) -> dict[str, tuple[dict, str]]:
    good = reference_arrays(layout)
    q = good["q"]

    def q_with(rows, cols, value):
        out = q.copy()
        out[rows, cols] = value
        return out

    v_nan = good["v"].copy()
    v_nan[4, 7] = np.nan
    return {
        "fps zero": ({"fps": np.float64(0.0)}, "fps"),
        "fps NaN": ({"fps": np.float64(np.nan)}, "fps"),
        "fps an array": ({"fps": np.full(4, 30.0)}, "fps"),
        "fps negative": ({"fps": np.float64(-30.0)}, "fps"),
        "q NaN": ({"q": q_with(3, 12, np.nan)}, "q"),
        "q a zero joint quaternion": ({"q": q_with(5, slice(7, 11), 0.0)}, "quaternion"),
        "q a zero base quaternion": ({"q": q_with(0, slice(3, 7), 0.0)}, "quaternion"),
        "q a quaternion of norm 2": ({"q": q_with(2, slice(3, 7), [0.0, 0.0, 0.0, 2.0])}, "quaternion"),
        "v NaN": ({"v": v_nan}, "v"),
        "v infinite": ({"v": np.full_like(good["v"], np.inf)}, "v"),
        "q of another width": ({"q": q[:, :20]}, "q"),
        "v of other frames": ({"v": good["v"][:3]}, "v"),
        "no frames": ({"q": q[:0], "v": good["v"][:0], "contacts": good["contacts"][:0]}, "frame"),
        "contacts not booleans": ({"contacts": np.ones((30, 2))}, "contacts"),
        "contacts of another shape": ({"contacts": np.ones((30, 3), dtype=bool)}, "contacts"),
        "quality deeply nested": ({"quality": "[" * 50_000 + "]" * 50_000}, "quality"),
        "quality a list": ({"quality": "[1]"}, "quality"),
        "an object array": ({"model": np.array([None], dtype=object)}, "model"),
    }


def test_a_valid_hand_made_reference_is_read(tmp_path, layout):
    from tracker.retarget.reference import Reference

    path = tmp_path / "ref.npz"
    write_npz(path, reference_arrays(layout))
    ref = Reference.load(path)
    assert ref.n_frames == 30 and ref.fps == 30.0 and ref.contacts.all()


def test_a_reference_with_tiny_quaternion_errors_is_read_normalised(tmp_path, layout):
    from tracker.retarget.reference import Reference

    arrays = reference_arrays(layout)
    arrays["q"] = arrays["q"].copy()
    arrays["q"][:, 3:7] *= 1 + 5e-4  # within the 1e-3 tolerance: normalised
    path = tmp_path / "ref.npz"
    write_npz(path, arrays)
    ref = Reference.load(path)
    assert ref.n_frames == 30 and ref.fps == 30.0
    np.testing.assert_allclose(np.linalg.norm(ref.q[:, 3:7], axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("case", list(_bad_references(LAYOUT)))
def test_track_refuses_a_malformed_reference_in_one_line(case, tmp_path, layout, capsys, monkeypatch):
    arrays = reference_arrays(layout)
    change, word = _bad_references(layout)[case]
    path = tmp_path / "ref.npz"
    np.savez(path, **(arrays | change))  # pickles the object array, as a hostile writer may
    status, err = cli(["track", path], capsys, monkeypatch)
    line = assert_one_line_naming(status, err, str(path))
    assert word in line.split(str(path), 1)[1], line  # the field, after the file


def test_track_run_and_optimize_refuse_truncated_corrupt_and_huge_references(tmp_path, layout, capsys, monkeypatch):
    good = tmp_path / "good.npz"
    write_npz(good, reference_arrays(layout))
    data = good.read_bytes()
    bad = {"trunc": truncated(tmp_path / "trunc.npz", data), "corrupt": corrupted(tmp_path / "corrupt.npz", data),
           "huge": huge_header_npz(tmp_path / "huge.npz", reference_arrays(layout), "q")}
    np.savez(tmp_path / "fps0.npz", **(reference_arrays(layout) | {"fps": np.float64(0.0)}))
    bad["fps0"] = tmp_path / "fps0.npz"
    for name, path in bad.items():
        status, err = cli(["track", path], capsys, monkeypatch)
        assert_one_line_naming(status, err, str(path))
        config = tmp_path / f"{name}.yaml"
        config.write_text(f"clip: {{path: {path}}}\n")
        status, err = cli(["run", config, "--out", tmp_path / "out"], capsys, monkeypatch)
        assert_one_line_naming(status, err, str(path))
        status, err = cli(["optimize", path, "--out", tmp_path / "opt"], capsys, monkeypatch)
        assert_one_line_naming(status, err, str(path))


# -- offset tracks ------------------------------------------------------------------------------

def _offsets_file(tmp_path: Path, layout, **change) -> Path:
    from tracker.sim.offsets import OffsetTrack

    path = tmp_path / "offsets.npz"
    OffsetTrack.zeros(layout, [0.0, 0.5, 1.0], model="humanoid", clip="kick.bvh").save(path)
    if change:
        arrays = dict(np.load(path)) | change
        write_npz(path, arrays)
    return path


@pytest.mark.parametrize("change,word", [
    ({"meta": "[" * 100_000 + "]" * 100_000}, "meta"),
    ({"meta": '{"a": ' * 100 + "1" + "}" * 100}, "meta"),  # valid JSON, 100 deep
    ({"meta": "[1, 2]"}, "meta"),
    ({"times": np.array([0.0, np.nan, 1.0])}, "knot time"),
    ({"version": np.full(3, 1)}, "version"),
    ({"format": np.array(["tracker.offsets"] * 2)}, "format"),
])
def test_load_offsets_refuses_malformed_fields_in_one_line(change, word, tmp_path, layout):
    from tracker.errors import ConfigError
    from tracker.sim.offsets import load_offsets

    path = _offsets_file(tmp_path, layout, **change)
    with pytest.raises(ConfigError) as info:
        load_offsets(path)
    assert str(path) in str(info.value) and word in str(info.value) and "\n" not in str(info.value)


def test_optimize_init_refuses_truncated_huge_and_nested_offset_tracks(tmp_path, layout, capsys, monkeypatch):
    good = _offsets_file(tmp_path, layout)
    data = good.read_bytes()
    cases = [truncated(tmp_path / "trunc.npz", data), corrupted(tmp_path / "corrupt.npz", data),
             huge_header_npz(tmp_path / "huge.npz", dict(np.load(good)), "values")]
    deep = tmp_path / "deep.npz"
    write_npz(deep, dict(np.load(good)) | {"meta": "[" * 100_000 + "]" * 100_000})
    cases.append(deep)
    for path in cases:
        status, err = cli(["optimize", KICK, "--init", path, "--out", tmp_path / "o"], capsys, monkeypatch)
        assert_one_line_naming(status, err, str(path))


# -- special and long paths ----------------------------------------------------------------------

@pytest.fixture()
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv", [
    ["run", "{fifo}"],
    ["push", "{fifo}"],
    ["retarget", KICK, "--map", "{fifo}", "-o", "{tmp}/r.npz"],
    ["retarget", KICK, "--map", "/dev/zero", "-o", "{tmp}/r.npz"],
    ["push", "stand", "--sweep", "/dev/zero"],
    ["push", "stand", "--sweep", "{fifo}"],
    ["run", "/dev/zero"],
    ["track", "{fifo_npz}"],
    ["replay", "{fifo_npz}"],
    ["model", "{fifo}"],
    ["optimize", KICK, "--init", "{fifo_npz}"],
], ids=["run-fifo", "push-fifo", "map-fifo", "map-dev-zero", "push-sweep-dev-zero", "push-sweep-fifo",
        "run-dev-zero", "track-fifo", "replay-fifo", "model-fifo", "optimize-init-fifo"])
def test_fifos_and_devices_are_refused_by_type_without_blocking(argv, fifo, tmp_path):
    fifo_npz = tmp_path / "pipe.npz"
    os.mkfifo(fifo_npz)
    argv = [a.format(fifo=fifo, tmp=tmp_path, fifo_npz=fifo_npz) for a in argv]
    named = next(a for a in argv if a in (str(fifo), "/dev/zero", str(fifo_npz)))
    status, err = cli_subprocess(argv, tmp_path)
    line = assert_one_line_naming(status, err, named)
    assert re.search(r"is a (named pipe|character device)", line.replace(str(tmp_path), "")), line


def test_a_folder_as_joint_map_is_refused_by_type(tmp_path, capsys, monkeypatch):
    status, err = cli(["retarget", KICK, "--map", tmp_path, "-o", tmp_path / "r.npz"], capsys, monkeypatch)
    assert "is a folder" in assert_one_line_naming(status, err, str(tmp_path)).replace(str(tmp_path), "")


def test_a_huge_joint_map_is_refused_by_size(tmp_path, capsys, monkeypatch):
    path = tmp_path / "map.yaml"
    with open(path, "wb") as fh:
        fh.truncate(64 << 20)  # sparse: 64 MiB of zeros
    status, err = cli(["retarget", KICK, "--map", path, "-o", tmp_path / "r.npz"], capsys, monkeypatch)
    assert "larger than the 1 MiB limit" in assert_one_line_naming(status, err, str(path))


LONG = "x" * 300  # one name of 300 bytes: ENAMETOOLONG on Linux (255 at most)


@pytest.mark.parametrize("argv", [
    ["run", "{long}.yaml"],
    ["push", "{long}.yaml"],
    ["push", "stand", "--sweep", "{long}.yaml"],
    ["track", "{long}.npz"],
    ["replay", "{long}.npz"],
    ["retarget", KICK, "--map", "{long}.yaml", "-o", "{tmp}/r.npz"],
    ["optimize", KICK, "--init", "{long}.npz"],
    ["model", "{long}.yaml"],
], ids=["run", "push", "push-sweep", "track", "replay", "map", "optimize-init", "model"])
def test_names_over_255_bytes_are_one_line_errors(argv, tmp_path, capsys, monkeypatch):
    long = tmp_path / LONG
    argv = [a.format(long=long, tmp=tmp_path) for a in argv]
    status, err = cli(argv, capsys, monkeypatch)
    suffix = next(a for a in argv if LONG in a).rsplit(".", 1)[1]
    assert_one_line_naming(status, err, f"{LONG[:20]}.{suffix}")  # the name, maybe shortened in the middle


# -- model files: tracker model ------------------------------------------------------------------

def _model_with_urdf(tmp_path: Path, edit) -> tuple[Path, Path]:
    """A copy of the humanoid model whose URDF is ``edit(text)``; (model YAML, URDF)."""
    urdf = tmp_path / "bad.urdf"
    urdf.write_text(edit(HUMANOID_URDF.read_text()))
    text = HUMANOID_YAML.read_text().replace("urdf: humanoid.urdf", f"urdf: {urdf}")
    model = tmp_path / "bad.yaml"
    model.write_text(text)
    return model, urdf


def _first(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)
    return edit


CHEST_LINK = '<link name="chest">'
_INERTIAL = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/></inertial>'
LOOP = (f'<link name="a">{_INERTIAL}</link><link name="b">{_INERTIAL}</link>'  # a -> b -> a, off the tree
        '<joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint>')
BAD_URDFS = {
    "mass not a number": (_first('<mass value="7.819"/>', '<mass value="heavy"/>'), "mass"),
    "mass NaN": (_first('<mass value="7.819"/>', '<mass value="nan"/>'), "mass"),
    "mass infinite": (_first('<mass value="11.431"/>', '<mass value="inf"/>'), "mass"),
    "mass negative": (_first('<mass value="11.431"/>', '<mass value="-2"/>'), "mass"),
    "mass zero": (_first('<mass value="11.431"/>', '<mass value="0"/>'), "mass"),
    "mass missing": (_first('<mass value="11.431"/>', ''), "mass"),
    "inertia zero": (_first('ixx="0.0650596062144"', 'ixx="0"'), "inertia"),
    "inertia negative": (_first('iyy="0.0374976312144"', 'iyy="-0.03"'), "inertia"),
    "inertia not positive definite": (_first('ixy="0"', 'ixy="5"'), "inertia"),
    "inertia NaN": (_first('izz="0.0746062916667"', 'izz="nan"'), "inertia"),
    "joint axis zero": (_first('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), "axis"),
    "joint axis not numbers": (_first('<axis xyz="0 1 0"/>', '<axis xyz="0 one 0"/>'), "axis"),
    "missing mesh": (_first('<geometry><box size="0.19 0.28 0.146453"/></geometry>',
                            '<geometry><mesh filename="meshes/pelvis.stl"/></geometry>'), "mesh"),
    "duplicate link": (_first(CHEST_LINK, '<link name="abdomen">'), "abdomen"),
    "duplicate joint": (_first('<joint name="spine_upper"', '<joint name="spine_lower"'), "spine_lower"),
    "joint to a missing link": (_first('<child link="chest"/>', '<child link="torso"/>'), "torso"),
    "joint without a child": (_first('<child link="chest"/>', ''), "child"),
    "a loop of links": (_first("</robot>", LOOP + "</robot>"), "loop"),
    "box size not numbers": (_first('<box size="0.19 0.28 0.146453"/>', '<box size="0.19 wide"/>'), "size"),
    "origin not numbers": (_first('<origin xyz="0 0 0.089556" rpy="0 0 0"/>', '<origin xyz="0 0 up"/>'),
                           "origin"),
}


@pytest.mark.parametrize("case", list(BAD_URDFS))
def test_model_refuses_a_bad_urdf_naming_the_file_and_the_value(case, tmp_path, capsys, monkeypatch):
    edit, word = BAD_URDFS[case]
    model, urdf = _model_with_urdf(tmp_path, edit)
    status, err = cli(["model", model], capsys, monkeypatch)
    line = assert_one_line_naming(status, err, str(urdf))
    assert word in line.split(str(urdf), 1)[1], line  # the link or joint and the value, after the file


def test_a_fifo_as_urdf_is_refused_by_type(tmp_path):
    os.mkfifo(tmp_path / "pipe.urdf")
    model = tmp_path / "m.yaml"
    model.write_text(HUMANOID_YAML.read_text().replace("urdf: humanoid.urdf", f"urdf: {tmp_path / 'pipe.urdf'}"))
    status, err = cli_subprocess(["model", model], tmp_path)
    line = assert_one_line_naming(status, err, str(tmp_path / "pipe.urdf"))
    assert "is a named pipe" in line.replace(str(tmp_path), ""), line


def test_the_shipped_models_pass_the_urdf_checks(capsys, monkeypatch):
    from tracker.character.model import available_models, load_model

    for name in available_models():
        assert load_model(name).layout.nq > 7
