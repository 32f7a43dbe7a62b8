"""``tracker keyframes`` end to end, the track the loop samples, and a keyframe file as an experiment's clip."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tracker.cli import main
from tracker.keyframes import load_keyframes
from tracker.keyframes.track import KeyframeTrack
from tracker.paths import CONFIG_DIR, DATA_DIR

MOUSE = DATA_DIR / "keyframes" / "mouse.yaml"
HUMANOID = DATA_DIR / "keyframes" / "humanoid_throw.yaml"


def test_the_track_passes_through_every_key_and_holds_the_ends():
    from tracker.analysis.metrics import joint_errors
    from tracker.character.model import load_model

    kf = load_keyframes(HUMANOID)
    track = KeyframeTrack.build(kf, load_model("humanoid"))
    lay = track.layout
    for t, q in zip(track.times, track.key_q):
        got = track.sample(float(t))[0]
        assert joint_errors(lay, got, q).max() < 1e-6  # arccos near 1 resolves ~1e-8 rad
        assert got[0:3] == pytest.approx(q[0:3])
    assert track.sample(track.times[-1] + 0.5)[1] == pytest.approx(np.zeros(lay.nv))
    # a joint a key leaves out keeps its previous value: right_elbow is 10 deg at key 6, unset at none after
    k = list(track.times).index(3.5)
    assert track.key_q[k, lay["right_elbow"].q][0] == pytest.approx(np.radians(10))
    assert track.key_q[k, lay["right_shoulder"].q] == pytest.approx(track.key_q[k - 1, lay["right_shoulder"].q])


def test_the_servos_pull_toward_the_keys_around_the_next_step():
    from tracker.character.model import load_model

    track = KeyframeTrack.build(load_keyframes(HUMANOID), load_model("humanoid"))
    tgt = track.target(0.9)  # between key 1 (0.7 s) and key 2 (1.1 s), alpha = 0.5
    assert tgt.q_a is track.key_q[1] or np.array_equal(tgt.q_a, track.key_q[1])
    assert np.array_equal(tgt.q_b, track.key_q[2])
    assert tgt.w_a[6:] == pytest.approx(0.25) and tgt.w_b[6:] == pytest.approx(0.255)
    assert tgt.w_a[:6] == pytest.approx(0.5) and tgt.w_b[:6] == pytest.approx(0.5)  # anchored root: constant gain


def test_the_command_writes_a_result_folder_with_key_errors(tmp_path, capsys):
    out = tmp_path / "mouse"
    assert main(["keyframes", str(MOUSE), "--dt", "1/30", "--out", str(out)]) == 0
    for name in ("keyframes.yaml", "run.yaml", "recording.npz", "gains.png", "keys.png", "joints.png", "report.md",
                 "metrics.json"):
        assert (out / name).exists(), name
    m = json.loads((out / "metrics.json").read_text())
    assert m["status"] == "ok" and m["keys_reached"] == 5 and len(m["keys"]) == 5
    assert m["key_root_position_error_max_m"] < 0.12
    assert m["secondary_motion"]["peak_rad"] > np.radians(3)
    assert yaml.safe_load((out / "run.yaml").read_text())["dt"] == pytest.approx(1 / 30)
    from tracker.sim.recording import Recording

    rec = Recording.load(out / "recording.npz")
    assert rec.kp[0, 0] > rec.kp[len(rec.t) // 8, 0]  # the summed stiffness dips between keys
    assert "at the keys: root within" in capsys.readouterr().out


def test_a_diverging_run_exits_3_and_keeps_its_folder(tmp_path):
    out = tmp_path / "pd"
    assert main(["keyframes", str(MOUSE), "--controller", "pd", "--kp-per-kg", "10", "--out", str(out)]) == 3
    assert json.loads((out / "metrics.json").read_text())["status"] == "diverged"


@pytest.mark.parametrize("argv,message", [
    (["--power", "0"], "error: --power must be positive, got 0"),
    (["--kp-per-kg", "-1"], "error: --kp-per-kg must be positive, got -1"),
])
def test_bad_options_are_one_line(tmp_path, capsys, argv, message):
    assert main(["keyframes", str(MOUSE), "--out", str(tmp_path / "x")] + argv) == 2
    assert capsys.readouterr().err.strip() == message


def test_an_experiment_can_name_a_keyframe_file_as_its_clip():
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, make_simulation

    cfg = load_config(CONFIG_DIR / "keyframes" / "humanoid_throw.yaml", ["sim.duration=0.3"])
    prep = build(cfg)
    assert isinstance(prep.reference, KeyframeTrack)
    sim = make_simulation(prep)
    try:
        assert sim.controller.name == "keyframe_spd"
        rec = sim.run(0.3)
    finally:
        sim.close()
    assert rec.status == "ok" and rec.n_steps == 18
