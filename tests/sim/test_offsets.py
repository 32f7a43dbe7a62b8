"""Offset tracks: reference ⊕ Δ(t), their file, and bit-identical replay by 'tracker run' and the window (issue 20)."""

from __future__ import annotations

import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tracker.character.model import load_model
from tracker.cli import main
from tracker.errors import ConfigError
from tracker.sim.offsets import FORMAT, OffsetTrack, load_offsets
from tracker.sim.recording import Recording, write_npz

ROOT = Path(__file__).resolve().parents[2]
WALK = (ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve()


@lru_cache(maxsize=None)
def layout():
    return load_model("humanoid").layout


def random_track(seed: int = 0, scale: float = 0.08, t0: float = 0.0, t1: float = 0.6, knots: int = 7) -> OffsetTrack:
    lay = layout()
    rng = np.random.default_rng(seed)
    base = OffsetTrack.zeros(lay, np.linspace(t0, t1, knots), model="humanoid", clip=WALK.name)
    return base.with_values(rng.normal(0.0, scale, base.values.shape), meta={"made_by": "test", "seed": seed})


def test_plus_is_the_layouts_integrate_and_delta_is_piecewise_linear_and_zero_outside():
    lay = layout()
    track = random_track(1)
    rng = np.random.default_rng(2)
    q = lay.neutral_q()
    q[3:7] = [0.1, -0.2, 0.3, 0.9]
    q[3:7] /= np.linalg.norm(q[3:7])
    for s in lay.joints:
        if s.kind == "spherical":
            r = rng.normal(size=4)
            q[s.q] = r / np.linalg.norm(r)
        else:
            q[s.q] = rng.uniform(-0.5, 0.5)
    t = 0.23  # between knots 2 (0.2 s) and 3 (0.3 s)
    a = (t - 0.2) / 0.1
    delta = (1 - a) * track.values[2] + a * track.values[3]
    np.testing.assert_allclose(track.at(t), delta, rtol=1e-12, atol=1e-15)
    full = np.zeros(lay.nv)
    full[6:] = delta
    np.testing.assert_allclose(track.apply(lay, q, t), lay.integrate(q, full, 1.0), atol=1e-12)
    # and the difference back gives Δ: the offset is a child-frame rotation vector per spherical joint
    np.testing.assert_allclose(lay.difference(track.apply(lay, q, t), q)[6:], delta, atol=1e-10)
    np.testing.assert_array_equal(track.at(0.0), track.values[0])
    np.testing.assert_array_equal(track.at(0.6), track.values[-1])
    for t_out in (-0.01, 0.61, 5.0):
        assert not track.at(t_out).any()
        assert track.apply(lay, q, t_out) is q


def test_file_round_trip_is_exact_and_deterministic(tmp_path):
    track = random_track(3)
    a, b = track.save(tmp_path / "a.npz"), track.save(tmp_path / "b.npz")
    assert a.read_bytes() == b.read_bytes()
    back = load_offsets(a)
    assert back.joints == track.joints and back.model == "humanoid" and back.clip == WALK.name
    np.testing.assert_array_equal(back.values, track.values)
    np.testing.assert_array_equal(back.times, track.times)
    np.testing.assert_array_equal(back.dofs, track.dofs)
    assert back.meta == {"made_by": "test", "seed": 3}


def _write(path: Path, **changes) -> Path:
    track = random_track(4)
    arrays = dict(format=FORMAT, version=np.int64(1), model="humanoid", clip="walk", joints=np.array(track.joints),
                  dofs=track.dofs, times=track.times, values=track.values, meta="{}")
    for k, v in changes.items():
        if v is None:
            del arrays[k]
        else:
            arrays[k] = v
    write_npz(path, arrays)
    return path


BAD = {
    "format": ({"format": "tracker.recording"}, "not an offset-track file"),
    "no format": ({"format": None}, "not an offset-track file"),
    "version": ({"version": np.int64(2)}, "format version 2; this tracker reads version 1"),
    "no values": ({"values": None}, "lacks values"),
    "shape": ({"values": np.zeros((7, 5))}, "values has shape (7, 5), expected (7, 37)"),
    "nan": ({"values": np.full((7, 37), np.nan)}, "value at knot 0, DOF 0 is not finite"),
    "huge": ({"values": np.full((7, 37), 9.0)}, "offsets are at most 2π"),
    "times": ({"times": np.array([0, 0.1, 0.1, 0.3, 0.4, 0.5, 0.6])}, "knot 2 is at 0.1 s after 0.1 s"),
    "dofs": ({"dofs": np.full(15, 2)}, "has 2 DOFs; expected 3 (spherical) or 1 (revolute)"),
    "text dofs": ({"dofs": np.array(["a"] * 15)}, "dofs must be numbers"),
    "meta": ({"meta": "{not json"}, "meta is not JSON"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_are_one_line_naming_the_file(tmp_path, case):
    changes, message = BAD[case]
    path = _write(tmp_path / "bad.npz", **changes)
    with pytest.raises(ConfigError) as err:
        load_offsets(path)
    text = str(err.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_not_a_file_or_not_npz(tmp_path):
    with pytest.raises(ConfigError, match="no such offset-track file"):
        load_offsets(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"PK not a zip")
    with pytest.raises(ConfigError, match="not an offset-track file"):
        load_offsets(tmp_path / "junk.npz")


def test_a_track_for_another_model_names_the_joint():
    track = random_track(5)
    other = OffsetTrack(("pelvis_x",) + track.joints[1:], track.dofs, track.times, track.values)
    with pytest.raises(ConfigError, match="joint 0 is 'pelvis_x', the model's is"):
        other.check_layout(layout(), "x.npz")


def _config(tmp_path: Path, offsets: Path | None, name: str = "replay") -> Path:
    text = (f"name: {name}\nclip: {{path: {WALK}}}\nroot: {{mode: free}}\nsim: {{dt: 1/60, duration: 0.5}}\n"
            "outputs: {plots: false}\n")
    if offsets is not None:
        text += f"controller: {{offsets: {offsets}}}\n"
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_tracker_run_replays_an_offset_track_bit_identically_across_processes(tmp_path):
    track_path = random_track(6).save(tmp_path / "walk.offsets.npz")
    cfg = _config(tmp_path, track_path)
    outs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        res = subprocess.run([sys.executable, "-m", "tracker", "run", str(cfg), "--out", str(out)],
                             capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert res.returncode in (0, 4), res.stderr
        outs.append(out)
    assert (outs[0] / "recording.npz").read_bytes() == (outs[1] / "recording.npz").read_bytes()
    # in this process too, and the offsets really moved the character
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, simulate

    rec, _ = simulate(build(load_config(cfg)))
    saved = Recording.load(outs[0] / "recording.npz")
    np.testing.assert_array_equal(rec.q, saved.q)
    np.testing.assert_array_equal(rec.tau, saved.tau)
    plain, _ = simulate(build(load_config(_config(tmp_path, None, "plain"))))
    assert np.abs(plain.q - rec.q).max() > 1e-3
    np.testing.assert_array_equal(plain.q_ref, rec.q_ref)  # the recording's reference stays the clip
    assert f"offsets: {track_path}" in (outs[0] / "config.yaml").read_text()  # the resolved config names it


def test_the_window_plays_the_same_offset_run(tmp_path):
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, simulate
    from tracker.viewer.playback import build_session

    cfg = load_config(_config(tmp_path, random_track(7).save(tmp_path / "o.npz")))
    rec, _ = simulate(build(cfg))
    session = build_session(cfg)
    try:
        q = np.array([session.step()["q"] for _ in range(len(rec.t))])
    finally:
        session.sim.close()
    np.testing.assert_array_equal(q, rec.q)


def test_config_errors_are_one_line_exit_2(tmp_path, capsys):
    bad = _write(tmp_path / "bad.npz", version=np.int64(9))
    cfg = _config(tmp_path, bad)
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "controller.offsets" in err[0] and "format version 9" in err[0]
    missing = tmp_path / "cfg2.yaml"
    missing.write_text(f"clip: {{path: {WALK}}}\ncontroller: {{offsets: nowhere.npz}}\n")
    assert main(["run", str(missing), "--out", str(tmp_path / "out2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "controller.offsets" in err[0] and "nowhere.npz" in err[0]
