"""Experiment configs: one strict YAML file describes one run.

Sections (every key optional except ``clip.path``; ``tracker run --keys``
lists them all with defaults and units)::

    name: soccer_light            # default: the file name without .yaml
    description: ...
    seed: 0
    model: humanoid               # registered model or model YAML (relative to this file)
    clip: {path, joint_map, ik, fps, start, end, keep_first_frame}
    controller: {name: spd|pd|native|analytic_pd|vt, target_velocity: ref|zero, prediction,
                 gains: {k_t, inertia_scaling, kd_mode, kd_ratio, kd, scale, torque_limits},
                 analytic: {prediction, partition, damping_ratio, gain_units},
                 timed: {lookahead, tension, inertia, integration, horizon, compensation,
                         gravity_compensation, min_steps},
                 vt: {f0: id|peek|none, w0: step|sample}, offsets: FILE}
    root: {mode: anchored|kinematic|free, kp_linear, kp_angular, kd_ratio}
    schedule: {enabled, k_r, k_r_ratio, t_e, t_f, scope, blend, min_separation}
    sim: {dt, substeps, duration, solver_iterations, max_speed}
    balls: [{preset, target_link, impact_time, speed, direction, offset, flight_time, mass}]
    impact: {recover_threshold_rad, hold_s}
    outputs: {plots, video, video_fps, video_size, recording}

Loading is strict (:mod:`tracker.experiments.schema`): an unknown key, a wrong
type, an out-of-range value, a missing file or an unknown name (model, joint
map, gain group, link, ball preset) raises a one-line :class:`ConfigError`
naming the file, the key path, the given value and what is allowed. Relative
paths resolve against the config's folder; the YAML is read by
:mod:`tracker.yamlsafe` (size, nesting and alias expansion bounded, a key
given twice refused). Numbers have physical ranges, shown by ``--keys``.
Times (``clip.start``, ``clip.end``, ``balls[i].impact_time``) are clip time
(seconds from the first frame retargeting keeps) when given as numbers, and the
clip file's own time when given as ``{file: S}`` or ``{file_frame: N}``
(``file:S``, ``file_frame:N`` in ``--set``); :func:`resolve_times` converts
them with the retargeter's map (:mod:`tracker.retarget.timing`) on load.
``--set KEY=VALUE`` overrides (:func:`apply_overrides`; ``balls.0.speed`` or
``balls[0].speed``, values in YAML, ``1e30`` a number) go through the same checks.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from tracker.errors import ConfigError, ModelError, TrackerError
from tracker.experiments.schema import (REQUIRED, Context, FileTime, describe, expand_user, is_file, parse, setting,
                                        show, to_plain)

ControllerName = Literal["spd", "pd", "native", "keyframe_spd", "keyframe_pd", "analytic_pd", "timed_pd", "vt"]
RootModeName = Literal["anchored", "kinematic", "free"]


@dataclass(frozen=True, kw_only=True)
class ClipConfig:
    """The clip to track and how to retarget it."""

    path: str = setting(REQUIRED, "BVH file, saved reference (.npz), DeepMimic motion (.txt), keyframe file "
                        "(.yaml, tracker keyframes) or pose file (.yaml, kind: pose)", path=True)
    joint_map: str | None = setting(None, "joint map: a built-in name or a YAML file; null: detect from joint names")
    ik: Literal["off", "feet", "hands", "both"] = setting("off", "correct feet and/or hands by IK when retargeting")
    fps: float | None = setting(None, "resample the reference to this rate; null: keep the clip's", unit="Hz", gt=0, le=10000)
    start: float = setting(0.0, "when the run starts: clip time, or {file: s} / {file_frame: n} in the file",
                           unit="s", ge=0, le=86400, time=True)
    end: float | None = setting(None, "when the run stops (clip time, or {file: s} / {file_frame: n}); null: the "
                                "clip's end", unit="s", gt=0, le=86400, time=True)
    keep_first_frame: bool = setting(False, "keep an added T-pose first frame (dropped by default when the pose jumps)")


@dataclass(frozen=True, kw_only=True)
class GainsConfig:
    """Servo gains of the actuated joints (the root's are under ``root``); see :func:`tracker.control.gains.build_gains`."""

    k_t: float | None = setting(None, "tracking gain: per kg supported (inertia_scaling) or the same kp on every "
                                "joint; null: the model file's per-group kp", unit="N·m/rad/kg or N·m/rad", ge=0, le=1e7)
    inertia_scaling: bool = setting(True, "with k_t: kp = k_t times the mass the joint supports (Tan 2011, Table 3)")
    kd_mode: Literal["auto", "ratio", "absolute"] = setting(
        "auto", "ratio: kd = kd_ratio·kp·dt; absolute: kd (default the model's); auto: absolute without k_t, else ratio")
    kd_ratio: float = setting(1.0, "kd as a multiple of kp·dt in ratio mode (Tan et al. 2011 use 1)", gt=0, le=100)
    kd: float | dict[str, float] | None = setting(
        None, "absolute kd: one number or per joint/group name; null: the model's", unit="N·m·s/rad", ge=0, le=1e6)
    scale: float = setting(1.0, "multiplies every joint's kp and kd", gt=0, le=1000)
    torque_limits: bool = setting(True, "clip joint torques to the model's limits")


@dataclass(frozen=True, kw_only=True)
class AnalyticPDConfig:
    """Options of ``analytic_pd`` (Weinstein et al. 2008; :mod:`tracker.control.analytic_pd`)."""

    prediction: Literal["doubled", "single"] = setting(
        "doubled", "closed form of the doubled system (reaches the PD solution with k) or the plain one (k/2)")
    partition: bool = setting(False, "free-root partition: needed with root.mode free (approximate under contact)")
    damping_ratio: float = setting(1.0, "zeta in k_v = 2 zeta sqrt(k_p) (1: critical damping)", gt=0)
    gain_units: Literal["torque", "acceleration"] = setting(
        "torque", "torque: k_p = kp / M_kk (the joint's own inertia); acceleration: kp is k_p (1/s²)")


@dataclass(frozen=True, kw_only=True)
class TimedPDConfig:
    """Options of ``timed_pd`` (Allen et al. 2007; :mod:`tracker.control.timed_pd`)."""

    lookahead: float = setting(0.02, "how far ahead on the clip the key is sampled (sets the stiffness)",
                               unit="s", gt=0)
    tension: float | None = setting(None, "after a hit, aim at the clip this long after it, then track again "
                                    "(the paper's d); null: keep tracking", unit="s", gt=0)
    inertia: Literal["full", "composite", "single"] = setting(
        "full", "full: the joint-space mass matrix; composite: each axis's composite inertia (eq. 5-7); "
                "single: the joint's own link (both per DOF, stable on the humanoid only at small steps)")
    integration: Literal["implicit", "explicit"] = setting(
        "implicit", "implicit: the PD law at each DOF's predicted next state; explicit: the paper's")
    horizon: Literal["remaining", "segment"] = setting(
        "remaining", "t-hat: the time remaining to the key, or the segment's length (ablation)")
    compensation: bool = setting(True, "parent-torque compensation (eq. 8-10; composite/single only)")
    gravity_compensation: bool = setting(True, "add the bias forces c(q, v) (composite/single only)")
    min_steps: float = setting(1.0, "floor of t-hat in time steps", ge=1)


@dataclass(frozen=True, kw_only=True)
class VTConfig:
    """Options of the virtual-trajectory controller (``controller.name: vt``)."""

    f0: Literal["id", "peek", "none"] = setting(
        "id", "feed-forward: reduced inverse dynamics (id), one saved and restored engine step with contacts "
        "(peek), or none (plain SPD)")
    w0: Literal["step", "sample"] = setting(
        "step", "desired velocity at t_n+1: the reference's step (q(t_n+1) - q(t_n)) / dt, which free motion "
        "then follows exactly (step), or the reference's own velocity (sample)")


@dataclass(frozen=True, kw_only=True)
class BalanceConfig:
    """CoM balance feedback through the stance feet's Jacobian transpose (GAMES105; :mod:`tracker.control.balance`)."""

    enabled: bool = setting(False, "add the feedback (spd or pd; meant for root.mode: free)")
    kp: float = setting(4000.0, "stiffness on the CoM's horizontal error", unit="N/m", ge=0)
    kd: float = setting(400.0, "damping on the CoM's horizontal velocity", unit="N·s/m", ge=0)
    target: Literal["support_center", "initial"] = setting(
        "support_center", "where the CoM is pulled: the support polygon's centre, or where it started")
    strategy: Literal["jacobian", "ankle", "hip"] = setting(
        "jacobian", "joints that carry the virtual force: every stance-leg joint, the ankles, or the hips")
    gravity: bool = setting(
        False, "also feed forward the joint torques that hold the body's weight on the stance feet (no sag "
        "under the servos' stiffness)")


@dataclass(frozen=True, kw_only=True)
class ControllerConfig:
    """Which servo tracks the reference."""

    name: ControllerName = setting("spd", "stable PD (spd), explicit PD (pd), PyBullet's STABLE_PD_CONTROL "
                                   "(native), Weinstein et al. 2008's analytic PD (analytic_pd), Allen et al. "
                                   "2007's timed PD (timed_pd) or virtual trajectory (vt: feed-forward plus soft "
                                   "SPD); with a keyframe file also keyframe_spd / keyframe_pd (two cross-faded servos)")
    target_velocity: Literal["ref", "zero"] = setting("ref", "servo toward the reference velocity or zero")
    prediction: Literal["semi_implicit", "explicit"] = setting(
        "semi_implicit", "SPD's next-state prediction (spd only; explicit is Tan et al.'s)")
    gains: GainsConfig = setting(GainsConfig(), "joint gains")
    analytic: AnalyticPDConfig = setting(AnalyticPDConfig(), "analytic_pd options (analytic_pd only)")
    timed: TimedPDConfig = setting(TimedPDConfig(), "timed_pd options (timed_pd only)")
    vt: VTConfig = setting(VTConfig(), "virtual-trajectory options (controller vt only)")
    balance: BalanceConfig = setting(BalanceConfig(), "CoM balance feedback (free root)")
    offsets: str | None = setting(None, "offset-track file (.npz, tracker optimize): the servo aims at the "
                                  "clip ⊕ these PD-target offsets (tracker.sampling.offsets)", path=True)


@dataclass(frozen=True, kw_only=True)
class RootConfig:
    """How the character's root (base) is held."""

    mode: RootModeName = setting("anchored", "anchored: SPD-servoed root wrench; kinematic: set to the reference; "
                                 "free: no root force")
    kp_linear: float = setting(2.0e5, "anchored root stiffness, translation", unit="N/m", ge=0, le=1e9)
    kp_angular: float = setting(2.0e5, "anchored root stiffness, rotation", unit="N·m/rad", ge=0, le=1e9)
    kd_ratio: float = setting(1.0, "root kd as a multiple of kp·dt", ge=0, le=100)


@dataclass(frozen=True, kw_only=True)
class ScheduleConfig:
    """Zordan–Hodgins gain schedule: on an impact, affected joints drop to k_r, then blend back to k_t.

    The tracking gain ``k_t`` is ``controller.gains.k_t`` (or the model's gains).
    """

    enabled: bool = setting(False, "schedule the gains on impacts (false: constant tracking gains)")
    k_r: float | None = setting(None, "reaction gain in the units of controller.gains.k_t (needs k_t); "
                                "null: k_r_ratio times the tracking gain", ge=0, le=1e7)
    k_r_ratio: float = setting(0.1, "reaction gain as a fraction of the tracking gain (when k_r is null)", ge=0, le=1)
    t_e: float = setting(0.1, "reaction duration", unit="s", ge=0, le=10)
    t_f: float = setting(0.5, "blend back to the tracking gain over this time", unit="s", ge=0, le=10)
    scope: Literal["chain", "all"] = setting("chain", "joints affected: the chain from the hit link to the root, or all")
    blend: Literal["log", "linear"] = setting("log", "interpolation of the blend back (log: geometric)")
    min_separation: float = setting(0.1, "contact-free time that ends a ball's contact episode (> dt)", unit="s",
                                  gt=0, le=10)


@dataclass(frozen=True, kw_only=True)
class SimConfig:
    """Time stepping."""

    dt: float = setting(1.0 / 60.0, "physics (= control) time step; 1/60 style fractions allowed", unit="s",
                        ge=1e-5, le=0.1, fraction=True)
    substeps: int | None = setting(None, "physics steps per control step (PyBullet steps dt/substeps; fast contacts "
                                   "converge); null: 1, or with balls as many as their impacts need (chosen on "
                                   "load and said: tracker.scenarios.substeps)", ge=1, le=64)
    duration: float | None = setting(None, "seconds to simulate; null: from clip.start to clip.end (or the clip's end)",
                                     unit="s", gt=0, le=3600)
    solver_iterations: int = setting(50, "PyBullet constraint-solver iterations per step", ge=1, le=10000)
    max_speed: float = setting(95.0, "joint or root speed above which the run counts as diverged",
                               unit="rad/s or m/s", gt=0, le=1e4)


@dataclass(frozen=True, kw_only=True)
class BallConfig:
    """One ball launched at the character, aimed at a link at a clip time."""

    preset: str = setting(REQUIRED, "ball preset name (soccer, volleyball, basketball...)")
    target_link: str = setting(REQUIRED, "character link the ball must meet")
    impact_time: float = setting(REQUIRED, "clip time at which the ball meets the link's reference position; or "
                                 "{file: s} / {file_frame: n} in the clip file", unit="s", ge=0, le=86400, time=True)
    speed: float = setting(REQUIRED, "approach speed at impact (0: a stationary ball in the link's path)",
                           unit="m/s", ge=0, le=100)
    direction: tuple[float, float, float] | None = setting(
        None, "direction the ball travels in the world; null: toward the character's front", ge=-1e3, le=1e3)
    offset: tuple[float, float, float] = setting((0.0, 0.0, 0.0), "hit point relative to the link origin", unit="m",
                                                 ge=-10, le=10)
    flight_time: float = setting(0.6, "seconds of flight before impact", unit="s", gt=0, le=10)
    mass: float | None = setting(None, "override the preset's mass", unit="kg", gt=0, le=100)


@dataclass(frozen=True, kw_only=True)
class ImpactConfig:
    """How impact response is measured against the ball-free baseline run."""

    recover_threshold_rad: float = setting(
        0.05, "deviation (max over joints) under which the character counts as recovered", unit="rad", gt=0, le=3.15)
    hold_s: float = setting(0.25, "how long the deviation must stay under the threshold", unit="s", ge=0,
                            le=3600)


@dataclass(frozen=True, kw_only=True)
class OutputsConfig:
    """What the result folder holds besides config.yaml and metrics.json."""

    plots: bool = setting(True, "PNG plots and report.md")
    video: bool = setting(False, "an MP4 rendered offscreen (needs the 'video' extra)")
    video_fps: int = setting(30, "frames per second of the video", ge=1, le=240)
    video_size: tuple[int, int] = setting((640, 360), "video width and height in pixels", ge=16, le=4096)
    recording: bool = setting(True, "recording.npz with every step's state")


@dataclass(frozen=True, kw_only=True)
class ExperimentConfig:
    """One run, fully described. Build with :func:`load_config`."""

    name: str = setting("", "run name, used in result folder names; default: the file name", name=True)
    description: str = setting("", "one line")
    seed: int = setting(0, "seed for anything random (the physics itself is deterministic)", ge=0,
                    le=2**32 - 1)
    model: str = setting("humanoid", "registered model name, model YAML path, or fit (a humanoid fitted to the clip)")
    clip: ClipConfig = setting(REQUIRED, "the clip to track; at least clip.path")
    controller: ControllerConfig = setting(ControllerConfig(), "servo and gains")
    root: RootConfig = setting(RootConfig(), "root handling")
    schedule: ScheduleConfig = setting(ScheduleConfig(), "gain schedule")
    sim: SimConfig = setting(SimConfig(), "time stepping")
    balls: list[BallConfig] = setting([], "balls launched at the character")
    impact: ImpactConfig = setting(ImpactConfig(), "impact response measurement")
    outputs: OutputsConfig = setting(OutputsConfig(), "result files")
    #: The file it was read from (for messages; not a key of the file).
    source: str = dataclasses.field(default="", init=False, compare=False, repr=False)
    #: Times the file gave in file time, by key path (``balls.0.impact_time``): how they were given
    #: and the clip time they became (:func:`resolve_times`); the keys themselves hold clip time.
    file_times: dict = dataclasses.field(default_factory=dict, init=False, compare=False, repr=False)
    #: Why ``sim.substeps`` has its value when the file did not give it (:func:`resolve_substeps`), else "".
    substeps_chosen: str = dataclasses.field(default="", init=False, compare=False, repr=False)

    def replace(self, **changes) -> ExperimentConfig:
        """A copy with some sections replaced (the source file and the file times are kept)."""
        new = dataclasses.replace(self, **changes)
        object.__setattr__(new, "source", self.source)
        object.__setattr__(new, "file_times", self.file_times)
        object.__setattr__(new, "substeps_chosen", self.substeps_chosen)
        return new

    @property
    def duration(self) -> float | None:
        """Seconds to simulate: ``sim.duration``, else ``clip.end - clip.start``, else None (the clip's end)."""
        if self.sim.duration is not None:
            return self.sim.duration
        if self.clip.end is not None:
            return self.clip.end - self.clip.start
        return None


def keys_table() -> str:
    """Every config key with type, default, unit and help, as aligned text."""
    rows = describe(ExperimentConfig)
    width = max(len(r.key) for r in rows)
    out = []
    for r in rows:
        extra = f" [{r.unit}]" if r.unit else ""
        default = f" = {r.default}" if r.default else ""
        limits = f" ({r.range})" if r.range else ""
        out.append(f"{r.key:<{width}}  {r.type}{default}{extra}{limits}: {r.help}")
    return "\n".join(out)


# -- loading -------------------------------------------------------------------------------------


#: Size limit of a config or sweep file (they are a few KB; a keyframe file may pass a larger one).
MAX_CONFIG_BYTES = 1 << 20


def read_yaml(path: str | Path, what: str = "config", max_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """Parse a YAML file safely (:func:`tracker.yamlsafe.read_yaml_file`): size, depth and alias
    expansion bounded, duplicate keys refused; problems become a one-line :class:`ConfigError`."""
    from tracker.yamlsafe import read_yaml_file

    return read_yaml_file(path, what, error=ConfigError, max_bytes=max_bytes)


_INDEX = re.compile(r"\[\s*([0-9]+)\s*\]")


def parse_override(expr: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a dotted key path and a YAML value (``sim.dt=1/30``, ``balls.0.speed=8``).

    List items may also be addressed as ``balls[0].speed``; the value is read like a config value
    (so ``1e30`` is a number, duplicate keys are refused).
    """
    from tracker.yamlsafe import load_yaml_text, show_scalar

    key, sep, text = expr.partition("=")
    key = _INDEX.sub(r".\1", key.strip())
    shown = show_scalar(expr, 80)
    if not sep or not key or any(not part.strip() for part in key.split(".")):
        raise ConfigError(f"--set {shown}: expected KEY=VALUE with a dotted key like sim.dt=1/30")
    key = ".".join(part.strip() for part in key.split("."))
    if len(key) > 200:
        raise ConfigError(f"--set {shown}: the key is longer than 200 characters")
    if len(text) > 10_000:
        raise ConfigError(f"--set {shown}: the value is longer than 10,000 characters")
    value = load_yaml_text(text, f"--set {shown}", error=ConfigError, lines=False) if text.strip() else None
    return key, value


def apply_overrides(raw: Any, overrides: Sequence[str | tuple[str, Any]], source: str | Path,
                    origin: str = "--set") -> tuple[dict, dict[str, str]]:
    """A copy of the raw config mapping with every override applied.

    Args:
        raw: the parsed YAML mapping (not modified).
        overrides: ``"KEY=VALUE"`` strings (value parsed as YAML) or ``(key, value)`` pairs;
            keys are dotted paths, list items addressed by index (``balls.0.speed``).
        source: the config file, for messages.
        origin: how messages name where an override came from (``--set``, a sweep file...).

    Missing mappings along a path are created (the schema then rejects unknown keys with
    their full path).

    Returns:
        ``(raw, {key path: "origin KEY=VALUE"})``.
    """
    import copy

    data = copy.deepcopy(raw) if raw is not None else {}
    if not isinstance(data, dict):
        return data, {}
    done: dict[str, str] = {}
    for item in overrides:
        if isinstance(item, str):
            key, value = parse_override(item)
            expr = item
        else:
            key, value = item
            expr = f"{key}={yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix('...').strip()}"
        expr = expr.replace("\r", "\\r").replace("\n", "\\n")  # messages are one line
        if len(expr) > 100:
            expr = expr[:97] + "..."
        label = f"{origin} {expr}"
        key = _INDEX.sub(r".\1", str(key))
        if any(c.isspace() or not c.isprintable() for c in key):
            raise ConfigError(f"{source}: {show(key)}: a key path has no spaces or control characters "
                              f"[from {label}]")
        parts = key.split(".")
        node: Any = data
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            here = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit():
                    raise ConfigError(f"{source}: {here}: {'.'.join(parts[:i])} is a list; address an item by "
                                      f"index like {'.'.join(parts[:i])}.0 [from {label}]")
                idx = int(part)
                if idx >= len(node):
                    raise ConfigError(f"{source}: {here}: index {idx} is out of range (the list has {len(node)} "
                                      f"item{'s' if len(node) != 1 else ''}) [from {label}]")
                if last:
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    if node.get(part) is None:
                        if parts[i + 1].isdigit():
                            raise ConfigError(f"{source}: {'.'.join(parts[:i + 2])}: index {parts[i + 1]} is out of "
                                              f"range ({here} has no items) [from {label}]")
                        node[part] = {}
                    node = node[part]
            else:
                raise ConfigError(f"{source}: {here}: {'.'.join(parts[:i])} is {show(node)}, not a mapping or list "
                                  f"[from {label}]")
        done[key] = label
    return data, done


def load_config(path: str | Path, overrides: Sequence[str | tuple[str, Any]] = ()) -> ExperimentConfig:
    """Read, override, validate and resolve one experiment config.

    Raises:
        ConfigError: one line naming the file, the key path, the given value and what is allowed.
    """
    path = Path(path)
    raw = read_yaml(path)
    return config_from_data(raw, path, overrides)


def config_from_data(raw: Any, source: str | Path, overrides: Sequence[str | tuple[str, Any]] = (),
                     base_dir: Path | None = None, origin: str = "--set") -> ExperimentConfig:
    """Validate already-parsed YAML data as if it were the file ``source`` (see :func:`apply_overrides`)."""
    source = Path(source)
    if raw is None:
        raise ConfigError(f"{source}: the config is empty (it needs at least clip.path)")
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping of sections (clip, controller, sim...), got {show(raw)}")
    raw, overridden = apply_overrides(raw, overrides, source, origin)
    ctx = Context(source, base_dir, overridden)
    cfg = parse(ExperimentConfig, raw, ctx)
    object.__setattr__(cfg, "source", str(source))
    if not cfg.name:
        stem = "".join(c if (c.isascii() and (c.isalnum() or c in "._-")) else "_" for c in source.stem)
        cfg = cfg.replace(name=stem or "run")
    cfg = resolve_times(cfg, ctx)
    _check_relations(cfg, ctx)
    return resolve_substeps(_check_names(cfg, ctx), ctx)


#: The choices of :func:`resolve_substeps` already said in this process (each is said once).
_SAID: set[tuple[str, str]] = set()


def resolve_substeps(cfg: ExperimentConfig, ctx: Context) -> ExperimentConfig:
    """Give ``sim.substeps`` its value when the config leaves it out: 1 without balls; with balls, as
    many as their impacts need (:mod:`tracker.scenarios.substeps`: a ball and the links near it close
    in by at most a quarter of its radius per physics step), said once on stderr
    (``substeps: N (chosen: ...)``) and in the saved config's header. A config that gives it is
    kept as it is (a run too coarse for its balls is warned about when it starts:
    :meth:`tracker.scenarios.ball_scenario.BallScenario.reset`).

    Choosing reads the clip (retargeted once per process, as :func:`tracker.experiments.runner.build` does).
    """
    if cfg.sim.substeps is not None:
        return cfg
    if not cfg.balls:
        return cfg.replace(sim=dataclasses.replace(cfg.sim, substeps=1))
    import os
    import sys

    from tracker.character.model import load_model
    from tracker.experiments.runner import _reference, launches_of
    from tracker.scenarios.substeps import choose_substeps, impact_speeds

    clip = cfg.clip
    ref = _reference(cfg.model, clip.path, os.path.getmtime(clip.path), clip.joint_map, clip.ik, clip.fps,
                     clip.keep_first_frame)
    model, speeds = load_model(cfg.model), []
    for i, launch in enumerate(launches_of(cfg)):
        try:
            speeds += [dataclasses.replace(sp, ball=i) for sp in impact_speeds([launch], ref, model, cfg.sim.dt,
                                                                                 clip.start)]
        except TrackerError as exc:
            raise ctx.error(f"balls.{i}", str(exc)) from None
    n, why = choose_substeps(speeds, cfg.sim.dt)
    out = cfg.replace(sim=dataclasses.replace(cfg.sim, substeps=n))
    object.__setattr__(out, "substeps_chosen", why)
    said = (str(ctx.source), f"{n}: {why}")
    if said not in _SAID:
        _SAID.add(said)
        print(f"substeps: {n} (chosen: {why})", file=sys.stderr)
    return out


def time_keys(cfg: ExperimentConfig) -> list[tuple[str, Any]]:
    """``(key path, value)`` of every point in time of the config (the ``time=True`` fields)."""
    out: list[tuple[str, Any]] = [("clip.start", cfg.clip.start), ("clip.end", cfg.clip.end)]
    out += [(f"balls.{i}.impact_time", b.impact_time) for i, b in enumerate(cfg.balls)]
    return out


def resolve_times(cfg: ExperimentConfig, ctx: Context) -> ExperimentConfig:
    """Turn the times given in file time (:class:`FileTime`) into clip time.

    The map is the retargeter's own (:func:`tracker.retarget.timing.clip_timing`: the file's
    frame rate and the added T-pose it drops, unless ``clip.keep_first_frame``); resampling
    (``clip.fps``) and the time step do not change it. ``cfg.file_times`` records each one.

    Raises:
        ConfigError: naming the key, for a time inside the dropped frames or after the clip's
            last frame, or a clip file without frames of its own.
    """
    given = [(k, v) for k, v in time_keys(cfg) if isinstance(v, FileTime)]
    if not given:
        return cfg
    from tracker.errors import RetargetError
    from tracker.retarget.timing import clip_timing

    try:
        timing = clip_timing(cfg.clip.path, drop_tpose=not cfg.clip.keep_first_frame)
    except RetargetError as exc:
        raise ctx.error(given[0][0], f"{given[0][1].text()}: {exc}") from None
    name = Path(cfg.clip.path).name
    resolved: dict[str, float] = {}
    records: dict[str, dict] = {}
    for key, spec in given:
        try:
            clip_t = timing.resolve(spec.base, spec.value, name,
                                    "" if cfg.clip.keep_first_frame else "clip.keep_first_frame: true")
        except ValueError as exc:
            raise ctx.error(key, str(exc)) from None
        resolved[key] = clip_t
        file_t = timing.file_time_of_clip_time(clip_t)
        records[key] = {"given": spec.text(), "clip_time_s": clip_t, "file_time_s": file_t,
                        "file_frame": file_t * timing.file_fps, "timing": timing.to_dict()}
        ctx.notes[key] = f"given as {spec.text()}, clip time {clip_t:.6g} s"
    clip = cfg.clip
    if "clip.start" in resolved or "clip.end" in resolved:
        clip = dataclasses.replace(clip, start=resolved.get("clip.start", clip.start),
                                   end=resolved.get("clip.end", clip.end))
    balls = [dataclasses.replace(b, impact_time=resolved[f"balls.{i}.impact_time"])
             if f"balls.{i}.impact_time" in resolved else b for i, b in enumerate(cfg.balls)]
    out = cfg.replace(clip=clip, balls=balls)
    object.__setattr__(out, "file_times", records)
    return out


def _check_relations(cfg: ExperimentConfig, ctx: Context) -> None:
    clip, g = cfg.clip, cfg.controller.gains
    if clip.end is not None and clip.end <= clip.start:
        raise ctx.error("clip.end", f"must be after clip.start ({clip.start:g} s), got {clip.end:g}")
    sch = cfg.schedule
    if sch.k_r is not None and g.k_t is None:
        raise ctx.error("schedule.k_r", "needs controller.gains.k_t (k_r is in its units); with the model's "
                        "group gains give schedule.k_r_ratio instead")
    if sch.k_r is not None and g.k_t is not None and sch.k_r > g.k_t:
        raise ctx.error("schedule.k_r", f"must be <= controller.gains.k_t ({g.k_t:g}), got {sch.k_r:g}")
    if sch.enabled and g.k_t == 0:
        raise ctx.error("controller.gains.k_t", "must be > 0 with the gain schedule enabled, got 0")
    if sch.min_separation <= cfg.sim.dt:
        raise ctx.error("schedule.min_separation", f"must be > sim.dt ({cfg.sim.dt:g} s), got {sch.min_separation:g}")
    w, h = cfg.outputs.video_size
    if w % 2 or h % 2:
        raise ctx.error("outputs.video_size", f"width and height must be even (H.264), got [{w}, {h}]")
    if cfg.controller.name == "native" and cfg.root.mode == "free":
        raise ctx.error("root.mode", "'free' is not available with controller native (it drives the root "
                        "kinematically)", ("anchored", "kinematic"))
    if cfg.controller.name == "analytic_pd" and cfg.root.mode == "free" and not cfg.controller.analytic.partition:
        raise ctx.error("root.mode", "'free' with controller analytic_pd needs the free-root partition "
                        "(controller.analytic.partition: true; approximate under contact)", ("anchored", "kinematic"))
    if cfg.controller.name == "vt" and cfg.controller.vt.f0 == "peek" and cfg.root.mode == "kinematic":
        raise ctx.error("controller.vt.f0", "'peek' needs a simulated root (root.mode anchored or free), "
                        "not 'kinematic'", ("id", "none"))
    if cfg.schedule.enabled and cfg.controller.name == "native":
        raise ctx.error("schedule.enabled", "the gain schedule needs controller spd or pd (native has fixed gains)")
    if cfg.schedule.enabled and cfg.controller.name == "timed_pd":
        raise ctx.error("schedule.enabled", "timed_pd computes its own gains from the time to the key, so the gain "
                        "schedule has nothing to act on; set it false (controller.timed.tension is timed_pd's "
                        "reaction to a hit)")
    for i, b in enumerate(cfg.balls):
        if b.direction is not None and sum(x * x for x in b.direction) < 1e-12:
            raise ctx.error(f"balls.{i}.direction", f"must be a non-zero vector, got {list(b.direction)}")
        if b.impact_time <= clip.start + cfg.sim.dt / 2:
            raise ctx.error(f"balls.{i}.impact_time", f"must be after the run starts (clip.start = {clip.start:g} s), "
                            f"got {b.impact_time:g}")
        if cfg.duration is not None and b.impact_time > clip.start + cfg.duration + 1e-9:
            raise ctx.error(f"balls.{i}.impact_time", f"is after the run ends (at {clip.start + cfg.duration:g} s: "
                            f"clip.start + the duration), got {b.impact_time:g}")
    if cfg.outputs.video and not cfg.outputs.recording:
        pass  # the video is rendered from the in-memory recording; nothing to check


def _check_names(cfg: ExperimentConfig, ctx: Context) -> ExperimentConfig:
    """Names that need the model or a registry: model, joint map, gain groups, links, ball presets."""
    from tracker.character.model import MODELS, load_model

    model_spec = cfg.model
    if model_spec == "fit":  # the humanoid fitted to the clip's skeleton (tracker.character.fit), cached
        from tracker.character.fit import fit_model

        clip = Path(cfg.clip.path).expanduser()
        clip = clip if clip.is_absolute() else ctx.base_dir / clip
        try:
            model_spec = str(fit_model(clip)[0])
        except TrackerError as exc:
            raise ctx.error("model", f"fit: {exc}") from None
        cfg = cfg.replace(model=model_spec)
    if model_spec not in MODELS:
        p = expand_user(model_spec)
        p = p if p.is_absolute() else ctx.base_dir / p
        if p.suffix not in (".yaml", ".yml") or not is_file(p):
            raise ctx.error("model", f"{show(cfg.model)} is not a registered model or a model YAML file",
                            tuple(MODELS) + ("<path to a model .yaml>",))
        model_spec = str(p.resolve())
        cfg = cfg.replace(model=model_spec)
    try:
        model = load_model(model_spec)
    except ModelError as exc:
        raise ctx.error("model", str(exc)) from None

    jm = cfg.clip.joint_map
    if jm is not None:
        from tracker.retarget.joint_map import builtin_maps

        maps = builtin_maps()
        if jm not in maps:
            p = expand_user(jm)
            p = p if p.is_absolute() else ctx.base_dir / p
            if p.suffix not in (".yaml", ".yml") or not is_file(p):
                raise ctx.error("clip.joint_map", f"{show(jm)} is not a built-in joint map or a YAML file",
                                tuple(maps) + ("<path to a joint map .yaml>",))
            cfg = cfg.replace(clip=dataclasses.replace(cfg.clip, joint_map=str(p.resolve())))

    groups = tuple(g.name for g in model.groups)
    joints = model.actuated_joints
    kd = cfg.controller.gains.kd
    for name in kd if isinstance(kd, dict) else ():
        if name not in groups and name not in joints:
            raise ctx.error(f"controller.gains.kd.{name}", f"{show(name)} is not a joint group or joint of model "
                            f"{model.name!r}", tuple(dict.fromkeys(groups + joints)))

    presets = _ball_presets()
    for i, b in enumerate(cfg.balls):
        if presets is not None and b.preset not in presets:
            raise ctx.error(f"balls.{i}.preset", f"{show(b.preset)} is not a ball preset", presets)
        if b.target_link not in model.links:
            raise ctx.error(f"balls.{i}.target_link", f"{show(b.target_link)} is not a link of model "
                            f"{model.name!r}", model.links)
    return cfg


def _ball_presets() -> tuple[str, ...] | None:
    """Registered ball preset names (None if the ball module cannot be imported)."""
    import importlib

    try:
        balls = importlib.import_module("tracker.scenarios.balls")
    except ModuleNotFoundError as exc:
        if exc.name == "tracker.scenarios.balls":
            return None
        raise
    return tuple(balls.ball_names())


def config_to_data(cfg: ExperimentConfig) -> dict:
    """The resolved config as plain data (every key, defaults filled, paths absolute)."""
    return to_plain(cfg)


def dump_config(cfg: ExperimentConfig, header: str = "") -> str:
    """The resolved config as YAML text that :func:`load_config` accepts again."""
    text = yaml.safe_dump(config_to_data(cfg), sort_keys=False, default_flow_style=None, width=100)
    if cfg.file_times:  # the keys hold clip time; say how the file gave them
        notes = [f"{key}: given as {r['given']} (file frame {r['file_frame']:.6g}, file time {r['file_time_s']:.6g} s) "
                 f"= clip time {r['clip_time_s']:.6g} s" for key, r in cfg.file_times.items()]
        header = "\n".join(([header] if header else []) + ["Times are clip time (s); given in file time:"] + notes)
    if cfg.substeps_chosen:  # the file left sim.substeps out
        header = "\n".join(([header] if header else [])
                           + [f"sim.substeps: {cfg.sim.substeps} chosen for the balls: {cfg.substeps_chosen}"])
    if header:
        text = "".join(f"# {line}\n" for line in header.splitlines()) + text
    return text
