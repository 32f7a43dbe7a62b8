"""The keyframe file loader: what it accepts, and one exact line for each thing it refuses."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.keyframes.file import KeyframeError, load_keyframes

GOOD = """\
model: humanoid
angles: degrees
euler: XYZ
root: anchored
keys:
  - t: 0.0
    pose: {left_knee: 30, left_shoulder: [10, 20, 30]}
  - t: 0.5
    root: {position: [0.1, 0, 1.0], orientation: {rotvec: [0, 0, 90]}}
    pose: {neck: {euler: [0, 0, 45], order: zyx}}
    velocity: {left_knee: 90, root: {linear: [1, 0, 0]}}
"""


def write(tmp_path, text: str, name: str = "keys.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_good_file_is_read_in_radians_and_quaternions(tmp_path):
    kf = load_keyframes(write(tmp_path, GOOD))
    assert kf.model == "humanoid" and kf.root == "anchored" and len(kf.keys) == 2
    k0, k1 = kf.keys
    assert k0.joints["left_knee"] == pytest.approx(np.radians(30))
    want = Rotation.from_euler("XYZ", [10, 20, 30], degrees=True)
    assert (Rotation.from_quat(k0.joints["left_shoulder"]) * want.inv()).magnitude() < 1e-12
    assert k1.root_position.tolist() == [0.1, 0.0, 1.0]
    assert Rotation.from_quat(k1.root_orientation).as_rotvec() == pytest.approx([0, 0, np.pi / 2])
    neck = Rotation.from_quat(k1.joints["neck"]).as_euler("zyx", degrees=True)
    assert neck == pytest.approx([0, 0, 45])
    assert k1.velocities["left_knee"] == pytest.approx(np.pi / 2)
    assert k1.root_linear.tolist() == [1.0, 0.0, 0.0]
    assert kf.kp_per_kg == 130.0 and kf.kd_ratio == 10.0 and kf.profile == "poly" and kf.power == 2.0


def test_the_shipped_examples_load():
    from tracker.paths import DATA_DIR

    files = sorted((DATA_DIR / "keyframes").glob("*.yaml"))
    assert len(files) >= 2
    for f in files:
        assert len(load_keyframes(f).keys) >= 5


KEYS = """
keys:
  - t: 0
  - t: 1
"""

BROKEN = [
    ("empty", "", "{f}: the file is empty (it needs model and keys)"),
    ("not a mapping", "- 1\n- 2\n", "{f}: expected a mapping, got [1, 2]"),
    ("unknown top key", "model: humanoid\nspeed: 2\n" + KEYS,
     "{f}: speed: unknown key (valid: model, keys, description, angles, euler, root, gravity, hold, gains, profile)"),
    ("missing keys", "model: humanoid\n", "{f}: keys: missing required key"),
    ("unknown model", "model: robot\n" + KEYS,
     "{f}: model: 'robot' is neither a model name (humanoid, deepmimic) nor a model YAML file"),
    ("one key", "model: humanoid\nkeys:\n  - t: 0\n", "{f}: keys: expected a list of at least 2 keys, got [{{'t': 0}}]"),
    ("bad unit", "model: humanoid\nangles: grad\n" + KEYS, "{f}: angles: 'grad' is not one of: degrees, radians"),
    ("bad euler", "model: humanoid\neuler: XXY\n" + KEYS,
     "{f}: euler: 'XXY' is not an Euler order (three of x, y, z, no axis twice in a row; upper case intrinsic, "
     "lower case extrinsic, e.g. XYZ or zyx)"),
    ("times not increasing", "model: humanoid\nkeys:\n  - t: 0\n  - t: 1\n  - t: 1\n",
     "{f}: keys[2].t: times must increase strictly: 1 s after 1 s"),
    ("negative start", "model: humanoid\nkeys:\n  - t: -1\n  - t: 1\n", "{f}: keys[0].t: must be >= 0, got -1"),
    ("time not a number", "model: humanoid\nkeys:\n  - t: soon\n  - t: 1\n",
     "{f}: keys[0].t: expected a number, got 'soon'"),
    ("unknown joint", "model: humanoid\nkeys:\n  - t: 0\n    pose: {left_elbo: 10}\n  - t: 1\n",
     "{f}: keys[0].pose.left_elbo: no joint 'left_elbo' in the model (joints: "),
    ("spherical given one number", "model: humanoid\nkeys:\n  - t: 0\n    pose: {neck: 10}\n  - t: 1\n",
     "{f}: keys[0].pose.neck: expected Euler angles [a, b, c], {{euler: [...], order: ...}} or {{rotvec: [...]}}, "
     "got 10"),
    ("revolute given a list", "model: humanoid\nkeys:\n  - t: 0\n  - t: 1\n    pose: {left_knee: [1, 2, 3]}\n",
     "{f}: keys[1].pose.left_knee: expected a number, got [1, 2, 3]"),
    ("euler of two", "model: humanoid\nkeys:\n  - t: 0\n    pose: {neck: [1, 2]}\n  - t: 1\n",
     "{f}: keys[0].pose.neck: expected a list of 3 numbers, got [1, 2]"),
    ("rotvec with order", "model: humanoid\nkeys:\n  - t: 0\n    pose: {neck: {rotvec: [0, 0, 1], order: xyz}}\n"
     "  - t: 1\n", "{f}: keys[0].pose.neck.order: unknown key (valid: rotvec)"),
    ("root position of two", "model: humanoid\nkeys:\n  - t: 0\n    root: {position: [0, 1]}\n  - t: 1\n",
     "{f}: keys[0].root.position: expected a list of 3 numbers, got [0, 1]"),
    ("unknown key field", "model: humanoid\nkeys:\n  - t: 0\n    ease: in\n  - t: 1\n",
     "{f}: keys[0].ease: unknown key (valid: t, pose, root, velocity)"),
    ("bad root mode", "model: humanoid\nroot: floating\n" + KEYS, "{f}: root: 'floating' is not one of: keyed, anchored"),
    ("gravity not a flag", "model: humanoid\ngravity: maybe\n" + KEYS, "{f}: gravity: expected true or false, got 'maybe'"),
    ("negative power", "model: humanoid\nprofile: {power: -2}\n" + KEYS, "{f}: profile.power: must be > 0, got -2"),
    ("bad profile", "model: humanoid\nprofile: {kind: cubic}\n" + KEYS,
     "{f}: profile.kind: 'cubic' is not one of: poly, linear"),
    ("gain scale matching nothing", "model: humanoid\ngains: {scale: {tail: 0.1}}\n" + KEYS,
     "{f}: gains.scale.tail: matches no joint of the model (joints: "),
    ("velocity of an unknown joint", "model: humanoid\nkeys:\n  - t: 0\n    velocity: {tail: 1}\n  - t: 1\n",
     "{f}: keys[0].velocity.tail: no joint 'tail' in the model (joints: "),
    ("an experiment config", "clip: {path: clip.bvh}\n",
     "{f}: this is an experiment config, not a keyframe file (run it with 'tracker run')"),
    ("invalid yaml", "model: [humanoid\n", "{f}:2: invalid YAML (did not find expected ',' or ']')"),
]


@pytest.mark.parametrize("text,message", [(t, m) for _, t, m in BROKEN], ids=[n for n, _, _ in BROKEN])
def test_a_broken_file_gives_one_exact_line(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(KeyframeError) as err:
        load_keyframes(path)
    got = str(err.value)
    want = message.format(f=path)
    assert "\n" not in got
    if want.endswith("(joints: "):
        assert got.startswith(want)
    else:
        assert got == want


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(KeyframeError, match=r"nope\.yaml: no such keyframe file"):
        load_keyframes(tmp_path / "nope.yaml")


def test_the_cli_prints_one_line_and_exits_2(tmp_path, capsys):
    from tracker.cli import main

    path = write(tmp_path, "model: humanoid\nkeys:\n  - t: 0\n    pose: {left_elbo: 10}\n  - t: 1\n")
    assert main(["keyframes", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: keys[0].pose.left_elbo: no joint")
