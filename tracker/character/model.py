"""Character models: a model YAML (groups, gains, limits, contacts) plus its URDF.

A model is named (``humanoid``, our anthropometric character and the default;
``deepmimic``, PyBullet's DeepMimic humanoid) or given as a path to a model
YAML. Loading validates strictly: an unknown key, a wrong type, or a joint or
link name that is not in the URDF raises :class:`ModelError` naming the file,
the key path and the offending value, with the valid choices.

Model file keys (``data/humanoid/humanoid.yaml`` documents each one):

``name``, ``description``, ``urdf`` (relative to the YAML, or
``pybullet_data:<path>`` inside PyBullet's data directory), ``up_axis``
(``z`` or ``y``; a ``y`` URDF is turned Z-up by the adapter),
``global_scaling``, ``use_inertia_from_file``, ``match_dynamics_inertia``
(set each link's simulated inertia to the one PyBullet's dynamics routines
derive from its first collision shape), ``self_collision`` (``off``,
``exclude_parent``, ``exclude_all_parents``), ``lateral_friction``,
``standing_root_height`` (m), ``groups`` (name -> ``{joints, kp, kd,
torque_limit, damping}``; every actuated joint in exactly one group; ``joints``
entries are names or regular expressions matched against whole names;
``damping`` is the passive viscous joint damping, N·m·s/rad, default 0),
``joint_limits`` (spherical joint -> ``{lower: [x, y, z], upper: [x, y, z]}``,
bounds of the rotation vector in the joint's frame, rad), ``end_effectors``
(name -> link), ``feet`` and ``ground_contact_links`` (links).

This module does not need PyBullet: the URDF is parsed with
:class:`tracker.character.kinematics.Kinematics`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from tracker.character.kinematics import Kinematics, read_urdf
from tracker.character.layout import Layout
from tracker.errors import ModelError
from tracker.paths import HUMANOID_DIR
from tracker.yamlsafe import read_yaml_file

DEFAULT_MODEL = "humanoid"
PYBULLET_DATA_PREFIX = "pybullet_data:"
SELF_COLLISION_MODES = ("off", "exclude_parent", "exclude_all_parents")
UP_AXES = ("z", "y")

_REQUIRED = ("name", "urdf", "standing_root_height", "groups", "end_effectors", "feet", "ground_contact_links")
_OPTIONAL: dict[str, Any] = {
    "description": "",
    "up_axis": "z",
    "global_scaling": 1.0,
    "use_inertia_from_file": True,
    "match_dynamics_inertia": False,
    "self_collision": "off",
    "lateral_friction": 0.9,
    "joint_limits": {},
}
_GROUP_KEYS = ("joints", "kp", "kd", "torque_limit")
_GROUP_OPTIONAL = ("damping",)
_LIMIT_KEYS = ("lower", "upper")

#: Registered model names -> model YAML path.
MODELS: dict[str, Path] = {}


def register_model(name: str, path: str | Path) -> None:
    """Register a model YAML under ``name``; a duplicate name is refused."""
    if name in MODELS:
        raise ValueError(f"model {name!r} is already registered ({MODELS[name]})")
    MODELS[name] = Path(path)


register_model("humanoid", HUMANOID_DIR / "humanoid.yaml")
register_model("deepmimic", HUMANOID_DIR / "deepmimic.yaml")


def available_models() -> tuple[str, ...]:
    """Names of the registered models."""
    return tuple(MODELS)


@dataclass(frozen=True)
class JointGroup:
    """Default servo settings shared by a set of joints.

    Attributes:
        name: group name.
        joints: the actuated joints it covers, in layout order.
        kp: proportional gain, N·m/rad.
        kd: derivative gain, N·m·s/rad.
        torque_limit: per-DOF torque limit, N·m.
        damping: passive viscous joint damping, N·m·s/rad (PyBullet joint damping, applied explicitly).
    """

    name: str
    joints: tuple[str, ...]
    kp: float
    kd: float
    torque_limit: float
    damping: float = 0.0


@dataclass(frozen=True)
class Model:
    """A validated character model.

    Attributes:
        name: model name.
        path: the model YAML.
        urdf: the resolved URDF path.
        description: one line.
        up_axis: ``"z"`` or ``"y"`` (the URDF's up axis; both face +X).
        global_scaling: length scale applied when loading the URDF.
        use_inertia_from_file: load with ``URDF_USE_INERTIA_FROM_FILE``.
        match_dynamics_inertia: after loading, give every link the inertia that
            ``calculateMassMatrix(flags=1)`` assumes (from its first collision shape).
        self_collision: one of :data:`SELF_COLLISION_MODES`.
        lateral_friction: friction coefficient of every link.
        standing_root_height: base height, m, with the feet flat on z = 0 in the zero pose.
        groups: joint groups, each actuated joint in exactly one.
        joint_limits: spherical joint -> ``(lower (3,), upper (3,))`` rotation-vector bounds, rad.
        end_effectors: name -> link.
        feet: foot links.
        ground_contact_links: links allowed to touch the ground.
        base_link: the URDF's root link.
        links: every link name (base first, then URDF joint order).
        joints: every URDF joint ``(name, kind, parent link, child link)`` in file order, fixed ones included.
        layout: the q/v/tau layout of the actuated joints (URDF order).
    """

    name: str
    path: Path
    urdf: Path
    description: str
    up_axis: str
    global_scaling: float
    use_inertia_from_file: bool
    match_dynamics_inertia: bool
    self_collision: str
    lateral_friction: float
    standing_root_height: float
    groups: tuple[JointGroup, ...]
    joint_limits: Mapping[str, tuple[np.ndarray, np.ndarray]]
    end_effectors: Mapping[str, str]
    feet: tuple[str, ...]
    ground_contact_links: tuple[str, ...]
    base_link: str
    links: tuple[str, ...]
    joints: tuple[tuple[str, str, str, str], ...]
    layout: Layout

    @property
    def actuated_joints(self) -> tuple[str, ...]:
        """Actuated joint names in layout order."""
        return self.layout.names

    def group_of(self, joint: str) -> JointGroup:
        """The group that holds ``joint``."""
        for g in self.groups:
            if joint in g.joints:
                return g
        raise ModelError(f"{self.path}: no group holds joint {joint!r} (joints: {', '.join(self.actuated_joints)})")

    def kinematics(self) -> Kinematics:
        """Pure-numpy kinematics of the URDF, in the URDF's own axes, scaled by ``global_scaling``."""
        return Kinematics(self.urdf, scale=self.global_scaling)

    def spherical_limits(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Spherical joint -> ``(lower (3,), upper (3,))`` rotation-vector bounds, rad (given joints only)."""
        return dict(self.joint_limits)

    def standing_q(self) -> np.ndarray:
        """The zero pose with the base at the standing height above the origin, ``(nq,)``."""
        q = self.layout.neutral_q()
        q[2] = self.standing_root_height
        return q


def resolve_urdf(spec: str, yaml_path: Path) -> Path:
    """The URDF path of a model file's ``urdf`` entry."""
    if spec.startswith(PYBULLET_DATA_PREFIX):
        import pybullet_data  # the data package only; no simulator

        return Path(pybullet_data.getDataPath()) / spec[len(PYBULLET_DATA_PREFIX):]
    path = Path(spec)
    return path if path.is_absolute() else (yaml_path.parent / path)


def load_model(spec: "str | Path | Model" = DEFAULT_MODEL) -> Model:
    """Load and validate a model by registered name or YAML path.

    Raises:
        ModelError: unknown name, unreadable file, or invalid content.
    """
    if isinstance(spec, Model):
        return spec
    key = str(spec)
    if key in MODELS:
        path = MODELS[key]
    else:
        path = Path(key)
        if path.suffix not in (".yaml", ".yml") or not os.path.exists(path):  # exists: False for a name too long
            raise ModelError(
                f"unknown model {key!r}: give a model name ({', '.join(MODELS)}) or a path to a model YAML"
            )
    return _parse(path)


# -- parsing -------------------------------------------------------------------

class _Ctx:
    """Error helper: every message starts with the file and the key path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, msg: str, valid=None) -> ModelError:
        text = f"{self.path}: {key}: {msg}" if key else f"{self.path}: {msg}"
        if valid is not None:
            text += f" (valid: {', '.join(str(v) for v in valid)})"
        return ModelError(text)

    def mapping(self, value, key: str) -> dict:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}")
        return value

    def keys(self, value: dict, key: str, required, optional=()) -> None:
        allowed = tuple(required) + tuple(optional)
        for k in value:
            if k not in allowed:
                raise self.fail(f"{key}.{k}" if key else str(k), "unknown key", allowed)
        for k in required:
            if k not in value:
                raise self.fail(f"{key}.{k}" if key else k, "missing required key")

    def number(self, value, key: str, minimum: float | None = None, strict: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise self.fail(key, f"expected a number, got {value!r}")
        if minimum is not None and (value < minimum or (strict and value == minimum)):
            raise self.fail(key, f"must be {'>' if strict else '>='} {minimum}, got {value!r}")
        return float(value)

    def string(self, value, key: str, choices=None) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {value!r}")
        if choices is not None and value not in choices:
            raise self.fail(key, f"{value!r} is not allowed", choices)
        return value

    def name_list(self, value, key: str, valid: tuple[str, ...], what: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(key, f"expected a non-empty list of {what} names, got {value!r}")
        for i, v in enumerate(value):
            if v not in valid:
                raise self.fail(f"{key}[{i}]", f"{v!r} is not a {what} of the URDF", valid)
        return tuple(value)


def _parse(path: Path) -> Model:
    ctx = _Ctx(path)
    # a regular file of at most 1 MiB (a FIFO, a device or a folder refused unopened), nesting bounded
    raw = read_yaml_file(path, "model", error=ModelError)
    data = ctx.mapping(raw, "")
    ctx.keys(data, "", _REQUIRED, _OPTIONAL)
    d = {**_OPTIONAL, **data}

    name = ctx.string(d["name"], "name")
    description = ctx.string(d["description"], "description")
    urdf = resolve_urdf(ctx.string(d["urdf"], "urdf"), path)
    if not os.path.exists(urdf):  # anything else (a FIFO, a folder...) is refused by Kinematics' reader
        raise ctx.fail("urdf", f"URDF file {str(urdf)!r} does not exist")
    up_axis = ctx.string(d["up_axis"], "up_axis", UP_AXES)
    scaling = ctx.number(d["global_scaling"], "global_scaling", 0.0, strict=True)
    for flag in ("use_inertia_from_file", "match_dynamics_inertia"):
        if not isinstance(d[flag], bool):
            raise ctx.fail(flag, f"expected true or false, got {d[flag]!r}")
    self_collision = ctx.string(d["self_collision"], "self_collision", SELF_COLLISION_MODES)
    friction = ctx.number(d["lateral_friction"], "lateral_friction", 0.0)
    standing = ctx.number(d["standing_root_height"], "standing_root_height", 0.0, strict=True)

    kin = Kinematics(urdf, scale=scaling)
    layout = kin.layout
    links = kin.links
    joint_kinds = {j.name: j.kind for j in kin.joints}
    actuated = layout.names

    groups = _parse_groups(ctx, d["groups"], actuated)
    limits = _parse_limits(ctx, d["joint_limits"], joint_kinds)
    ee_raw = ctx.mapping(d["end_effectors"], "end_effectors")
    if not ee_raw:
        raise ctx.fail("end_effectors", "expected at least one end effector")
    end_effectors = {}
    for ee, link in ee_raw.items():
        if not isinstance(ee, str):
            raise ctx.fail(f"end_effectors.{ee}", "end-effector names must be strings")
        if link not in links:
            raise ctx.fail(f"end_effectors.{ee}", f"{link!r} is not a link of the URDF", links)
        end_effectors[ee] = link
    feet = ctx.name_list(d["feet"], "feet", links, "link")
    ground = ctx.name_list(d["ground_contact_links"], "ground_contact_links", links, "link")

    # URDF joints in file order (Kinematics keeps them topologically sorted; its layout is file order).
    by_name = {j.name: j for j in kin.joints}
    order = [n for n in _urdf_joint_order(urdf) if n in by_name]
    joints = tuple((n, by_name[n].kind, by_name[n].parent, by_name[n].child) for n in order)
    return Model(
        name=name, path=path, urdf=urdf, description=description, up_axis=up_axis,
        global_scaling=scaling, use_inertia_from_file=d["use_inertia_from_file"],
        match_dynamics_inertia=d["match_dynamics_inertia"],
        self_collision=self_collision, lateral_friction=friction, standing_root_height=standing,
        groups=groups, joint_limits=MappingProxyType(limits), end_effectors=MappingProxyType(end_effectors),
        feet=feet, ground_contact_links=ground, base_link=kin.root,
        links=(kin.root,) + tuple(j[3] for j in joints), joints=joints, layout=layout,
    )


def _urdf_joint_order(urdf: Path) -> list[str]:
    return [j.get("name") for j in read_urdf(urdf).findall("joint")]


def _parse_groups(ctx: _Ctx, raw, actuated: tuple[str, ...]) -> tuple[JointGroup, ...]:
    groups_raw = ctx.mapping(raw, "groups")
    if not groups_raw:
        raise ctx.fail("groups", "expected at least one group")
    owner: dict[str, str] = {}
    parsed = []
    for gname, spec in groups_raw.items():
        key = f"groups.{gname}"
        spec = ctx.mapping(spec, key)
        ctx.keys(spec, key, _GROUP_KEYS, _GROUP_OPTIONAL)
        patterns = spec["joints"]
        if not isinstance(patterns, list) or not patterns:
            raise ctx.fail(f"{key}.joints", f"expected a non-empty list of joint names or patterns, got {patterns!r}")
        members: list[str] = []
        for i, pat in enumerate(patterns):
            if not isinstance(pat, str):
                raise ctx.fail(f"{key}.joints[{i}]", f"expected a joint name or pattern, got {pat!r}")
            try:
                rx = re.compile(pat)
            except re.error as exc:
                raise ctx.fail(f"{key}.joints[{i}]", f"invalid pattern {pat!r} ({exc})") from None
            hits = [j for j in actuated if rx.fullmatch(j)]
            if not hits:
                raise ctx.fail(f"{key}.joints[{i}]", f"{pat!r} matches no actuated joint", actuated)
            for j in hits:
                if j in owner and owner[j] != gname:
                    raise ctx.fail(f"{key}.joints[{i}]", f"joint {j!r} is already in group {owner[j]!r}")
                owner[j] = gname
                if j not in members:
                    members.append(j)
        kp = ctx.number(spec["kp"], f"{key}.kp", 0.0)
        kd = ctx.number(spec["kd"], f"{key}.kd", 0.0)
        tau = ctx.number(spec["torque_limit"], f"{key}.torque_limit", 0.0, strict=True)
        damping = ctx.number(spec.get("damping", 0.0), f"{key}.damping", 0.0)
        ordered = tuple(j for j in actuated if j in members)
        parsed.append(JointGroup(str(gname), ordered, kp, kd, tau, damping))
    missing = [j for j in actuated if j not in owner]
    if missing:
        raise ctx.fail("groups", f"joints in no group: {', '.join(missing)}")
    return tuple(parsed)


def _parse_limits(ctx: _Ctx, raw, joint_kinds: dict[str, str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    limits_raw = ctx.mapping(raw, "joint_limits")
    spherical = tuple(n for n, k in joint_kinds.items() if k == "spherical")
    out = {}
    for jname, spec in limits_raw.items():
        key = f"joint_limits.{jname}"
        if jname not in joint_kinds:
            raise ctx.fail(key, f"{jname!r} is not a joint of the URDF", spherical)
        if joint_kinds[jname] != "spherical":
            raise ctx.fail(key, f"{jname!r} is {joint_kinds[jname]}; its limits come from the URDF", spherical)
        spec = ctx.mapping(spec, key)
        ctx.keys(spec, key, _LIMIT_KEYS)
        bounds = []
        for b in _LIMIT_KEYS:
            v = spec[b]
            if not isinstance(v, list) or len(v) != 3:
                raise ctx.fail(f"{key}.{b}", f"expected a list of 3 numbers [x, y, z], got {v!r}")
            arr = np.array([ctx.number(x, f"{key}.{b}[{i}]") for i, x in enumerate(v)])
            arr.setflags(write=False)
            bounds.append(arr)
        if np.any(bounds[0] > bounds[1]):
            raise ctx.fail(key, f"lower {bounds[0].tolist()} exceeds upper {bounds[1].tolist()}")
        out[jname] = (bounds[0], bounds[1])
    return out
