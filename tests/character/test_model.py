"""Model files: registry, strict validation, and the generated humanoid URDF (no PyBullet needed)."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from tracker.character.model import MODELS, available_models, load_model, register_model
from tracker.errors import ModelError

from .conftest import HUMANOID_JOINTS, HUMANOID_LINKS, REPO

HUMANOID_YAML = REPO / "data" / "humanoid" / "humanoid.yaml"


def _builder():
    """scripts/build_humanoid.py as a module."""
    spec = importlib.util.spec_from_file_location("build_humanoid", REPO / "scripts" / "build_humanoid.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses need the module registered
    spec.loader.exec_module(module)
    return module


def _write_variant(tmp_path: Path, edit) -> Path:
    """A copy of humanoid.yaml next to a copy of its URDF, changed by ``edit(dict)``."""
    data = yaml.safe_load(HUMANOID_YAML.read_text())
    edit(data)
    (tmp_path / "humanoid.urdf").write_bytes((REPO / "data" / "humanoid" / "humanoid.urdf").read_bytes())
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# -- registry ---------------------------------------------------------------------

def test_registry_knows_both_models_and_loads_by_name_or_path():
    assert available_models()[:2] == ("humanoid", "deepmimic")
    by_name = load_model("humanoid")
    by_path = load_model(str(HUMANOID_YAML))
    assert by_name.name == by_path.name == "humanoid"
    assert by_name.layout.names == by_path.layout.names
    assert load_model().name == "humanoid"  # the default
    assert load_model(by_name) is by_name


def test_registry_refuses_duplicates_and_unknown_names():
    with pytest.raises(ValueError, match="already registered"):
        register_model("humanoid", HUMANOID_YAML)
    with pytest.raises(ModelError, match="unknown model 'robot'.*humanoid, deepmimic"):
        load_model("robot")
    assert set(MODELS) >= {"humanoid", "deepmimic"}


# -- strict validation ----------------------------------------------------------------

@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(colour="red"), r"model\.yaml: colour: unknown key \(valid: name, urdf,"),
    (lambda d: d.pop("feet"), r"model\.yaml: feet: missing required key"),
    (lambda d: d["groups"]["hips"].update(joints=["left_hip", "left_hipp"]),
     r"groups\.hips\.joints\[1\]: 'left_hipp' matches no actuated joint \(valid: spine_lower, .*right_wrist\)"),
    (lambda d: d["groups"]["hips"].update(joints=["left_hip"]), r"groups: joints in no group: right_hip"),
    (lambda d: d["groups"]["neck"].update(joints=["neck", "spine_lower"]),
     r"groups\.neck\.joints\[1\]: joint 'spine_lower' is already in group 'spine'"),
    (lambda d: d["groups"]["hips"].update(kp="stiff"), r"groups\.hips\.kp: expected a number, got 'stiff'"),
    (lambda d: d["groups"]["hips"].update(torque_limit=0), r"groups\.hips\.torque_limit: must be > 0"),
    (lambda d: d["groups"]["hips"].update(gain=3), r"groups\.hips\.gain: unknown key \(valid: joints, kp, kd"),
    (lambda d: d["groups"]["hips"].update(joints=["("]), r"groups\.hips\.joints\[0\]: invalid pattern"),
    (lambda d: d.update(feet=["left_foot", "left_toe"]),
     r"feet\[1\]: 'left_toe' is not a link of the URDF \(valid: pelvis, abdomen,"),
    (lambda d: d["end_effectors"].update(left_hand="left_palm"), r"end_effectors\.left_hand: 'left_palm' is not a link"),
    (lambda d: d["joint_limits"].update(left_knee={"lower": [0, 0, 0], "upper": [1, 1, 1]}),
     r"joint_limits\.left_knee: 'left_knee' is revolute; its limits come from the URDF \(valid: spine_lower,"),
    (lambda d: d["joint_limits"].update(tail={"lower": [0, 0, 0], "upper": [1, 1, 1]}),
     r"joint_limits\.tail: 'tail' is not a joint of the URDF"),
    (lambda d: d["joint_limits"]["neck"].update(lower=[0, 0]), r"joint_limits\.neck\.lower: expected a list of 3"),
    (lambda d: d["joint_limits"]["neck"].update(lower=[1, 0, 0], upper=[0, 1, 1]),
     r"joint_limits\.neck: lower \[1\.0, 0\.0, 0\.0\] exceeds upper"),
    (lambda d: d.update(self_collision="always"), r"self_collision: 'always' is not allowed \(valid: off,"),
    (lambda d: d.update(up_axis="x"), r"up_axis: 'x' is not allowed \(valid: z, y\)"),
    (lambda d: d.update(urdf="missing.urdf"), r"urdf: URDF file '.*missing\.urdf' does not exist"),
    (lambda d: d.update(standing_root_height=-1), r"standing_root_height: must be > 0"),
    (lambda d: d.update(use_inertia_from_file="yes"), r"use_inertia_from_file: expected true or false"),
])
def test_invalid_model_files_name_the_file_key_and_value(tmp_path, edit, match):
    path = _write_variant(tmp_path, edit)
    with pytest.raises(ModelError, match=match) as info:
        load_model(str(path))
    assert str(info.value).startswith(str(path))


def test_yaml_syntax_error_gives_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nurdf: [unclosed\nfeet: []\n")
    with pytest.raises(ModelError, match=r"broken\.yaml:\d+: invalid YAML"):
        load_model(str(path))


def test_group_patterns_are_regular_expressions_over_whole_names():
    model = load_model("humanoid")
    assert model.group_of("left_hip").joints == ("left_hip", "right_hip")
    assert model.group_of("spine_upper").name == "spine"
    assert model.group_of("right_wrist").torque_limit == 30.0
    lo, hi = model.spherical_limits()["left_shoulder"]
    assert lo.shape == hi.shape == (3,) and not lo.flags.writeable


def test_deepmimic_model_resolves_pybullet_data_and_is_y_up():
    model = load_model("deepmimic")
    assert model.urdf.name == "humanoid.urdf" and "pybullet_data" in str(model.urdf)
    assert (model.up_axis, model.global_scaling, model.use_inertia_from_file) == ("y", 0.25, False)
    assert model.feet == ("left_ankle", "right_ankle")
    assert model.group_of("right_knee").kp == 500.0 and model.group_of("right_elbow").torque_limit == 60.0


# -- the generated humanoid ---------------------------------------------------------------

def test_urdf_on_disk_is_what_the_builder_generates():
    builder = _builder()
    assert (REPO / "data" / "humanoid" / "humanoid.urdf").read_text() == builder.urdf_text(builder.build_links())


def test_model_file_standing_height_matches_the_builder():
    builder = _builder()
    assert load_model("humanoid").standing_root_height == pytest.approx(
        builder.standing_root_height(builder.build_links()), abs=1e-6)


def test_humanoid_names_order_and_mass():
    model = load_model("humanoid")
    assert tuple((s.name, s.kind) for s in model.layout.joints) == HUMANOID_JOINTS
    assert model.links == HUMANOID_LINKS and model.base_link == "pelvis"
    kin = model.kinematics()
    assert kin.total_mass == pytest.approx(70.0, abs=1e-6)
    # de Leva mass fractions x 70 kg
    for link, frac in (("head", 0.0694), ("left_thigh", 0.1416), ("right_shin", 0.0433), ("left_hand", 0.0061),
                       ("pelvis", 0.1117), ("abdomen", 0.1633), ("chest", 0.1596)):
        assert kin.masses[link] == pytest.approx(frac * 70.0, abs=1e-6)


def test_every_urdf_frame_is_world_aligned_and_hinges_have_the_agreed_axes():
    root = ET.parse(REPO / "data" / "humanoid" / "humanoid.urdf").getroot()
    for origin in root.iter("origin"):
        assert origin.get("rpy") == "0 0 0"
    axes = {j.get("name"): j.find("axis").get("xyz") for j in root.findall("joint") if j.find("axis") is not None}
    assert axes == {"left_knee": "0 1 0", "right_knee": "0 1 0", "left_elbow": "0 -1 0", "right_elbow": "0 -1 0"}


def test_urdf_inertias_are_those_of_its_collision_shapes():
    """Uniform boxes and a sphere: I = m(b²+c²)/12 ... and 2mr²/5, each centred at the link's CM."""
    root = ET.parse(REPO / "data" / "humanoid" / "humanoid.urdf").getroot()
    for link in root.findall("link"):
        inertial, collision = link.find("inertial"), link.find("collision")
        m = float(inertial.find("mass").get("value"))
        i = inertial.find("inertia")
        got = np.array([float(i.get(k)) for k in ("ixx", "iyy", "izz")])
        assert all(float(i.get(k)) == 0.0 for k in ("ixy", "ixz", "iyz"))
        assert inertial.find("origin").get("xyz") == collision.find("origin").get("xyz")
        geom = collision.find("geometry")[0]
        if geom.tag == "box":
            a, b, c = (float(x) for x in geom.get("size").split())
            want = m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        else:
            r = float(geom.get("radius"))
            want = np.full(3, 0.4 * m * r * r)
        assert np.allclose(got, want, rtol=1e-10), link.get("name")


def test_soles_are_at_z0_when_the_pelvis_is_at_the_standing_height():
    model = load_model("humanoid")
    kin = model.kinematics()
    q = model.standing_q()
    assert kin.lowest_point(q, list(model.feet))[0] == pytest.approx(0.0, abs=1e-9)
    others = [link for link in model.links if link not in model.feet]
    assert kin.lowest_point(q, others)[0] > 0.05
