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
                         gravity_compensation, min_steps, law, hold},
                 vt: {f0: id|peek|none, w0: step|sample}, offsets: FILE}
    root: {mode: anchored|kinematic|free, kp_linear, kp_angular, kd_ratio}
    schedule: {enabled, k_r, k_r_ratio, t_e, t_f, scope, blend, min_separation}
    sim: {dt, substeps, duration, solver_iterations, max_speed}
    balls: [{preset, target_link, impact_time, speed, direction, offset, flight_time, mass, shift, exit_speed}]
    launch: {height}
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
(``file:S``, ``file_frame:N`` in ``--set``); :func:`~tracker.experiments.resolve.resolve_times`
converts them with the retargeter's map (:mod:`tracker.retarget.timing`) on load.
``--set KEY=VALUE`` overrides (:mod:`tracker.experiments.overrides`; ``balls.0.speed`` or
``balls[0].speed``, values in YAML, ``1e30`` a number) go through the same checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from tracker.errors import ConfigError
from tracker.experiments.overrides import apply_overrides
from tracker.experiments.resolve import check_names, check_relations, resolve_substeps, resolve_times
from tracker.experiments.schema import REQUIRED, Context, describe, parse, setting, show, to_plain
from tracker.yamlsafe import read_yaml_file

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
    law: Literal["ours", "paper"] = setting(
        "ours", "ours: the options above; paper: Allen et al.'s own law (composite inertia, explicit, parent "
                "compensation, no gravity compensation), overriding inertia/integration/compensation")
    hold: Literal["stable", "floor"] = setting(
        "stable", "past the last key: stable (t-hat held at 10 steps, bounded) or floor (t-hat at min_steps: "
                  "the paper as written, which diverges with the explicit law)")


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
                                  "clip ⊕ these PD-target offsets (tracker.sim.offsets)", path=True)


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
    shift: tuple[float, float, float] = setting((0.0, 0.0, 0.0), "moves the hit point in the world, after offset: "
                                                "where a free-root character's link passes, not the clip's "
                                                "(scripts/aim_shift.py measures it on a replay)", unit="m",
                                                ge=-10, le=10)
    mass: float | None = setting(None, "override the preset's mass", unit="kg", gt=0, le=100)
    exit_speed: float | None = setting(
        None, "the speed the ball should leave the character with; tracker optimize then scores the ball: "
        "first contact on target_link, this exit speed (null: the search does not score it)", unit="m/s", ge=0, le=100)


@dataclass(frozen=True, kw_only=True)
class LaunchConfig:
    """How the balls are thrown."""

    height: float = setting(1.5, "height of a ball's centre at launch when its direction is null (thrown from "
                            "the character's front, arriving at whatever angle that takes)", unit="m", gt=0, le=20)


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
    launch: LaunchConfig = setting(LaunchConfig(), "how the balls are thrown")
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


def load_config(path: str | Path, overrides: Sequence[str | tuple[str, Any]] = ()) -> ExperimentConfig:
    """Read, override, validate and resolve one experiment config.

    Raises:
        ConfigError: one line naming the file, the key path, the given value and what is allowed.
    """
    path = Path(path)
    raw = read_yaml_file(path, "config", error=ConfigError, max_bytes=MAX_CONFIG_BYTES)
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
    check_relations(cfg, ctx)
    return resolve_substeps(check_names(cfg, ctx), ctx)


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
