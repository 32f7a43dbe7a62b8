"""Keyframe files: a strict YAML loader (Tan, Liu & Turk 2011 §4.2 sources).

A keyframe file names a character model, then lists keys, each a time and a
pose by joint name. Example (``data/keyframes/humanoid_wave.yaml`` is a
complete one)::

    model: humanoid            # a registered model, or a model YAML path relative to this file
    angles: degrees            # degrees | radians: every angle and angular rate in the file
    euler: XYZ                 # default Euler order (scipy's: upper case intrinsic, lower case extrinsic)
    root: anchored             # keyed: the root follows the keys with the keyframe gains
                               # anchored: the loop's stiff anchored-root gains hold it on its keyed pose
    gravity: true              # false: no gravity (a toy on a frictionless table)
    hold: 1.0                  # seconds simulated after the last key, s
    gains: {kp_per_kg: 130, kd_ratio: 10}   # kp = kp_per_kg · supported mass, kd = kd_ratio · kp · dt
                               # optional scale: {joint name or regex: factor} multiplies those joints' kp and kd
    profile: {kind: poly, power: 2}         # poly | linear (see tracker.keyframes.profile)
    keys:
      - t: 0.0
        root: {position: [0, 0, 0.99], orientation: [0, 0, 0]}   # both optional
        pose:
          left_shoulder: [80, 0, 0]          # spherical: Euler angles in ``euler`` order,
          right_shoulder: {euler: [-80, 0, 0], order: xyz}       # or with their own order,
          neck: {rotvec: [0, 20, 0]}         # or a rotation vector (its length is the angle)
          left_knee: 30                      # revolute: one angle
        velocity:                            # optional; zero when left out
          left_knee: 90                      # angle units per second
          root: {linear: [0.5, 0, 0], angular: [0, 0, 0]}
      - t: 0.8
        pose: {left_knee: 0}                 # a joint left out keeps its previous value

The first key's missing joints are at the model's zero pose and its missing
root is the model's standing pose. Times are seconds, strictly increasing and
at least 1e-4 s apart, the first ``>= 0``; the last key plus the hold is at most
3600 s (:data:`MAX_DURATION`). Gains have upper ends (:data:`MAX_KP_PER_KG`...)
and every other number a magnitude of at most 1e6. Every problem raises
:class:`KeyframeError` with one line ``FILE: key.path: what is wrong``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.errors import ConfigError

ANGLE_UNITS = ("degrees", "radians")
ROOT_MODES = ("keyed", "anchored")
PROFILE_KINDS = ("poly", "linear")
_TOP_REQUIRED = ("model", "keys")
_TOP_OPTIONAL = ("description", "angles", "euler", "root", "gravity", "hold", "gains", "profile")
_KEY_REQUIRED = ("t",)
_KEY_OPTIONAL = ("pose", "root", "velocity")
#: The paper's gains (§4.2): kp = 130 m_sub, kd = 10 kp dt.
DEFAULT_KP_PER_KG = 130.0
DEFAULT_KD_RATIO = 10.0
#: The longest run a file may ask for: the last key's time plus the hold, s (as an experiment's sim.duration).
MAX_DURATION = 3600.0
#: The closest two keys may be, s (ten steps of the smallest time step, 1e-5 s).
MIN_KEY_SPACING = 1e-4
#: Upper ends of the gains: kp per kg, kd ratio, a joint's gain factor, the profile's power.
MAX_KP_PER_KG = 1e5
MAX_KD_RATIO = 1e3
MAX_GAIN_FACTOR = 1e3
MAX_POWER = 100.0
#: The largest magnitude of any other number (angles, positions, velocities).
MAX_MAGNITUDE = 1e6


class KeyframeError(ConfigError):
    """A keyframe file is invalid (file, key path, what is wrong)."""


@dataclass(frozen=True, eq=False)
class Key:
    """One key as written (angles already in radians, rotations as xyzw quaternions).

    Attributes:
        t: time, s.
        joints: joint -> angle (revolute, rad) or quaternion ``(4,)`` xyzw (spherical).
        root_position: ``(3,)`` m, or None (keep the previous key's).
        root_orientation: ``(4,)`` xyzw, or None (keep the previous key's).
        velocities: joint -> rate (rad/s) or angular velocity ``(3,)`` rad/s in the joint frame.
        root_linear, root_angular: ``(3,)`` m/s and rad/s (world frame), or None (zero).
    """

    t: float
    joints: Mapping[str, Any] = field(default_factory=dict)
    root_position: np.ndarray | None = None
    root_orientation: np.ndarray | None = None
    velocities: Mapping[str, Any] = field(default_factory=dict)
    root_linear: np.ndarray | None = None
    root_angular: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class KeyframeFile:
    """A validated keyframe file.

    Attributes:
        path: the file.
        model: the model spec as resolved (registered name or absolute YAML path).
        keys: the keys in time order.
        root: ``keyed`` or ``anchored``.
        gravity: whether gravity acts.
        hold: seconds simulated after the last key.
        kp_per_kg: kp per kg of supported mass, N·m/rad/kg (N/m/kg on the root).
        kd_ratio: kd as a multiple of ``kp·dt``.
        profile: ``poly`` or ``linear``.
        power: the poly profile's exponent.
        description: free text.
        gain_scale: joint -> factor on its kp and kd (joints not listed: 1).
    """

    path: Path
    model: str
    keys: tuple[Key, ...]
    root: str = "anchored"
    gravity: bool = True
    hold: float = 1.0
    kp_per_kg: float = DEFAULT_KP_PER_KG
    kd_ratio: float = DEFAULT_KD_RATIO
    profile: str = "poly"
    power: float = 2.0
    description: str = ""
    gain_scale: Mapping[str, float] = field(default_factory=dict)

    @property
    def times(self) -> np.ndarray:
        """Key times ``(K,)`` s."""
        return np.array([k.t for k in self.keys])

    @property
    def duration(self) -> float:
        """Last key time plus the hold, s."""
        return self.keys[-1].t + self.hold


def is_keyframe_data(raw: Any) -> bool:
    """Whether parsed YAML looks like a keyframe file (a mapping with ``keys`` and ``model``)."""
    return isinstance(raw, dict) and "keys" in raw and "clip" not in raw


def is_keyframe_file(path: str | Path) -> bool:
    """Whether ``path`` is a YAML file holding keyframes (cheap: parses the YAML only)."""
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml") or not path.is_file():
        return False
    try:
        from tracker.yamlsafe import read_yaml_file

        return is_keyframe_data(read_yaml_file(path))
    except ConfigError:
        return False


class _Ctx:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, msg: str) -> KeyframeError:
        return KeyframeError(f"{self.path}: {key}: {msg}" if key else f"{self.path}: {msg}")

    def mapping(self, value: Any, key: str) -> dict:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a mapping, got {_show(value)}")
        for k in value:
            if not isinstance(k, str):
                raise self.fail(key, f"keys must be names, got {_show(k)}")
        return value

    def keys(self, value: dict, key: str, required: tuple, optional: tuple) -> None:
        allowed = required + optional
        for k in value:
            if k not in allowed:
                raise self.fail(_join(key, k), f"unknown key (valid: {', '.join(allowed)})")
        for k in required:
            if k not in value:
                raise self.fail(_join(key, k), "missing required key")

    def number(self, value: Any, key: str, minimum: float | None = None, strict: bool = False,
               maximum: float = MAX_MAGNITUDE) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a number, got {_show(value)}")
        if isinstance(value, int) and abs(value) > 2 ** 63:  # float() of a huge integer overflows
            raise self.fail(key, f"{_show(value)} is out of range (magnitude over {MAX_MAGNITUDE:g})")
        if not np.isfinite(value):
            raise self.fail(key, f"expected a number, got {_show(value)}")
        if minimum is not None and (value < minimum or (strict and value == minimum)):
            raise self.fail(key, f"must be {'>' if strict else '>='} {minimum:g}, got {value!r}")
        if value > maximum:
            raise self.fail(key, f"must be <= {maximum:g}, got {value!r}")
        if abs(value) > MAX_MAGNITUDE:
            raise self.fail(key, f"{value!r} is out of range (magnitude over {MAX_MAGNITUDE:g})")
        return float(value)

    def vector(self, value: Any, key: str, n: int = 3) -> np.ndarray:
        if not isinstance(value, list) or len(value) != n:
            raise self.fail(key, f"expected a list of {n} numbers, got {_show(value)}")
        return np.array([self.number(x, f"{key}[{i}]") for i, x in enumerate(value)])

    def choice(self, value: Any, key: str, choices: tuple[str, ...]) -> str:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(key, f"{_show(value)} is not one of: {', '.join(choices)}")
        return value

    def flag(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {_show(value)}")
        return value


def _join(key: str, sub: Any) -> str:
    return f"{key}.{sub}" if key else str(sub)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _euler_order(ctx: _Ctx, value: Any, key: str) -> str:
    ok = (isinstance(value, str) and len(value) == 3 and (set(value) <= set("xyz") or set(value) <= set("XYZ"))
          and value[0] != value[1] and value[1] != value[2])
    if not ok:
        raise ctx.fail(key, f"{_show(value)} is not an Euler order (three of x, y, z, no axis twice in a row; "
                            "upper case intrinsic, lower case extrinsic, e.g. XYZ or zyx)")
    return value


def _rotation(ctx: _Ctx, value: Any, key: str, order: str, scale: float) -> np.ndarray:
    """A rotation given as Euler angles (list or ``{euler, order}``) or ``{rotvec}`` -> xyzw."""
    if isinstance(value, list):
        return Rotation.from_euler(order, ctx.vector(value, key) * scale).as_quat()
    if isinstance(value, dict):
        ctx.mapping(value, key)
        if "rotvec" in value:
            ctx.keys(value, key, ("rotvec",), ())
            return Rotation.from_rotvec(ctx.vector(value["rotvec"], _join(key, "rotvec")) * scale).as_quat()
        ctx.keys(value, key, ("euler",), ("order",))
        own = _euler_order(ctx, value["order"], _join(key, "order")) if "order" in value else order
        return Rotation.from_euler(own, ctx.vector(value["euler"], _join(key, "euler")) * scale).as_quat()
    raise ctx.fail(key, f"expected Euler angles [a, b, c], {{euler: [...], order: ...}} or {{rotvec: [...]}}, "
                        f"got {_show(value)}")


def _model_spec(ctx: _Ctx, value: Any) -> tuple[str, Any]:
    from tracker.character.model import MODELS, load_model
    from tracker.errors import ModelError

    if not isinstance(value, str) or not value:
        raise ctx.fail("model", f"expected a model name ({', '.join(MODELS)}) or a model YAML path, got {_show(value)}")
    spec = value
    if value not in MODELS:
        path = Path(value)
        if not path.is_absolute():
            path = ctx.path.parent / path
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            raise ctx.fail("model", f"{value!r} is neither a model name ({', '.join(MODELS)}) nor a model YAML file")
        spec = str(path.resolve())
    try:
        return spec, load_model(spec)
    except ModelError as exc:
        raise ctx.fail("model", str(exc)) from None


def parse_keyframes(raw: Any, path: str | Path) -> KeyframeFile:
    """Validate parsed YAML as the keyframe file ``path`` (see the module docstring)."""
    path = Path(path)
    ctx = _Ctx(path)
    if raw is None:
        raise ctx.fail("", "the file is empty (it needs model and keys)")
    data = ctx.mapping(raw, "")
    if "clip" in data and "keys" not in data:
        raise ctx.fail("", "this is an experiment config, not a keyframe file (run it with 'tracker run')")
    ctx.keys(data, "", _TOP_REQUIRED, _TOP_OPTIONAL)
    spec, model = _model_spec(ctx, data["model"])
    units = ctx.choice(data.get("angles", "degrees"), "angles", ANGLE_UNITS)
    scale = np.pi / 180.0 if units == "degrees" else 1.0
    order = _euler_order(ctx, data.get("euler", "XYZ"), "euler")
    root = ctx.choice(data.get("root", "anchored"), "root", ROOT_MODES)
    gravity = ctx.flag(data.get("gravity", True), "gravity")
    hold = ctx.number(data.get("hold", 1.0), "hold", 0.0, maximum=MAX_DURATION)
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ctx.fail("description", f"expected text, got {_show(description)}")
    gains = ctx.mapping(data.get("gains", {}), "gains")
    ctx.keys(gains, "gains", (), ("kp_per_kg", "kd_ratio", "scale"))
    kp_per_kg = ctx.number(gains.get("kp_per_kg", DEFAULT_KP_PER_KG), "gains.kp_per_kg", 0.0, strict=True,
                           maximum=MAX_KP_PER_KG)
    kd_ratio = ctx.number(gains.get("kd_ratio", DEFAULT_KD_RATIO), "gains.kd_ratio", 0.0, maximum=MAX_KD_RATIO)
    prof = ctx.mapping(data.get("profile", {}), "profile")
    ctx.keys(prof, "profile", (), ("kind", "power"))
    kind = ctx.choice(prof.get("kind", "poly"), "profile.kind", PROFILE_KINDS)
    power = ctx.number(prof.get("power", 2.0), "profile.power", 0.0, strict=True, maximum=MAX_POWER)

    kinds = {s.name: s.kind for s in model.layout.joints}
    gain_scale = _gain_scale(ctx, gains.get("scale", {}), kinds)
    raw_keys = data["keys"]
    if not isinstance(raw_keys, list) or len(raw_keys) < 2:
        raise ctx.fail("keys", f"expected a list of at least 2 keys, got {_show(raw_keys)}")
    keys = []
    for i, rk in enumerate(raw_keys):
        keys.append(_parse_key(ctx, rk, f"keys[{i}]", kinds, order, scale))
        if i == 0 and keys[0].t < 0:
            raise ctx.fail("keys[0].t", f"must be >= 0, got {keys[0].t:g}")
        if i > 0 and not keys[i].t > keys[i - 1].t:
            raise ctx.fail(f"keys[{i}].t", f"times must increase strictly: {keys[i].t:g} s after {keys[i - 1].t:g} s")
        if i > 0 and keys[i].t - keys[i - 1].t < MIN_KEY_SPACING:
            raise ctx.fail(f"keys[{i}].t", f"keys must be at least {MIN_KEY_SPACING:g} s apart: {keys[i].t!r} s is "
                                           f"{keys[i].t - keys[i - 1].t:.3g} s after {keys[i - 1].t!r} s")
    if keys[-1].t + hold > MAX_DURATION:
        raise ctx.fail("hold", f"the run would last {keys[-1].t + hold:g} s (the last key at {keys[-1].t:g} s plus "
                               f"the hold of {hold:g} s), over {MAX_DURATION:g} s")
    return KeyframeFile(path=path, model=spec, keys=tuple(keys), root=root, gravity=gravity, hold=hold,
                        kp_per_kg=kp_per_kg, kd_ratio=kd_ratio, profile=kind, power=power,
                        description=description, gain_scale=MappingProxyType(gain_scale))


def _gain_scale(ctx: _Ctx, raw: Any, kinds: dict[str, str]) -> dict[str, float]:
    """``{name or regex: factor}`` -> joint -> factor; every entry must match a joint."""
    import re

    ctx.mapping(raw, "gains.scale")
    out: dict[str, float] = {}
    for pattern, value in raw.items():
        key = f"gains.scale.{pattern}"
        factor = ctx.number(value, key, 0.0, maximum=MAX_GAIN_FACTOR)
        try:
            rx = re.compile(pattern)
        except re.error as exc:
            raise ctx.fail(key, f"not a joint name or regular expression ({exc})") from None
        hits = [n for n in kinds if rx.fullmatch(n)]
        if not hits:
            raise ctx.fail(key, f"matches no joint of the model (joints: {', '.join(kinds)})")
        for n in hits:
            out[n] = factor
    return out


def _parse_key(ctx: _Ctx, rk: Any, key: str, kinds: dict[str, str], order: str, scale: float) -> Key:
    ctx.mapping(rk, key)
    ctx.keys(rk, key, _KEY_REQUIRED, _KEY_OPTIONAL)
    t = ctx.number(rk["t"], _join(key, "t"), maximum=MAX_DURATION)
    joints: dict[str, Any] = {}
    pose = ctx.mapping(rk.get("pose", {}) or {}, _join(key, "pose"))
    for name, value in pose.items():
        jk = _join(key, f"pose.{name}")
        if name not in kinds:
            raise ctx.fail(jk, f"no joint {name!r} in the model (joints: {', '.join(kinds)})")
        if kinds[name] == "revolute":
            joints[name] = ctx.number(value, jk) * scale
        else:
            joints[name] = _rotation(ctx, value, jk, order, scale)
    pos = orn = None
    if "root" in rk:
        rr = ctx.mapping(rk["root"], _join(key, "root"))
        ctx.keys(rr, _join(key, "root"), (), ("position", "orientation"))
        if "position" in rr:
            pos = ctx.vector(rr["position"], _join(key, "root.position"))
        if "orientation" in rr:
            orn = _rotation(ctx, rr["orientation"], _join(key, "root.orientation"), order, scale)
    vel: dict[str, Any] = {}
    lin = ang = None
    rv = ctx.mapping(rk.get("velocity", {}) or {}, _join(key, "velocity"))
    for name, value in rv.items():
        vk = _join(key, f"velocity.{name}")
        if name == "root":
            ctx.mapping(value, vk)
            ctx.keys(value, vk, (), ("linear", "angular"))
            if "linear" in value:
                lin = ctx.vector(value["linear"], _join(vk, "linear"))
            if "angular" in value:
                ang = ctx.vector(value["angular"], _join(vk, "angular")) * scale
        elif name not in kinds:
            raise ctx.fail(vk, f"no joint {name!r} in the model (joints: {', '.join(kinds)})")
        elif kinds[name] == "revolute":
            vel[name] = ctx.number(value, vk) * scale
        else:
            vel[name] = ctx.vector(value, vk) * scale
    return Key(t=t, joints=MappingProxyType(joints), root_position=pos, root_orientation=orn,
               velocities=MappingProxyType(vel), root_linear=lin, root_angular=ang)


def load_keyframes(path: str | Path) -> KeyframeFile:
    """Read and validate a keyframe file.

    Raises:
        KeyframeError: one line naming the file, the key path and what is wrong
            (a missing or unreadable file, invalid YAML included).
    """
    from tracker.yamlsafe import read_yaml_file

    path = Path(path)
    try:
        raw = read_yaml_file(path, what="keyframe")
    except KeyframeError:
        raise
    except ConfigError as exc:
        raise KeyframeError(str(exc)) from None
    return parse_keyframes(raw, path)
