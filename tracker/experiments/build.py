"""From an experiment config to what a run needs: model, reference, simulation options, gains,
gain schedule and ball scenario (:func:`build`; no PyBullet client yet). :mod:`tracker.experiments.runner`
simulates it and writes the result folder.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracker.errors import ConfigError, TrackerError
from tracker.experiments.config import ExperimentConfig
from tracker.experiments.sources import launches_of, reference_of


@dataclass
class Prepared:
    """Everything a run needs, built from a config (no PyBullet client yet)."""

    config: ExperimentConfig
    model: Any
    reference: Any
    options: Any
    gains: Any
    launches: list = field(default_factory=list)


def build(cfg: ExperimentConfig) -> Prepared:
    """Model, reference, simulation options, gains and ball launches of ``cfg``."""
    from tracker.character.model import load_model
    from tracker.control.gains import build_gains
    from tracker.sim.simulation import SimOptions

    model = load_model(cfg.model)
    clip = cfg.clip
    ref = reference_of(cfg)
    _check_file_times(cfg, ref)
    if clip.start >= ref.duration:
        raise ConfigError(f"{cfg.source or cfg.name}: clip.start: must be before the end of the clip "
                          f"{Path(clip.path).name} ({ref.duration:.3f} s), got {clip.start:g}")
    g, root = cfg.controller.gains, cfg.root
    opt = SimOptions(controller=cfg.controller.name, dt=cfg.sim.dt, root=root.mode,
                     target_velocity=cfg.controller.target_velocity, gain_scale=g.scale,
                     root_kp=(root.kp_linear, root.kp_angular), root_kd_ratio=root.kd_ratio,
                     max_speed=cfg.sim.max_speed, start=clip.start, solver_iterations=cfg.sim.solver_iterations,
                     controller_options=controller_options(cfg), substeps=cfg.sim.substeps,
                     balance=_balance_options(cfg), offsets=_offsets(cfg, model, ref))
    gains = build_gains(model, cfg.sim.dt, k=g.k_t, inertia_scaled=g.inertia_scaling, kd_mode=g.kd_mode,
                        kd_ratio=g.kd_ratio, kd=g.kd, gain_scale=g.scale, root_kp=(root.kp_linear, root.kp_angular),
                        root_kd_ratio=root.kd_ratio, root=root.mode, torque_limits=g.torque_limits)
    launches = launches_of(cfg)
    _plan(launches, ref, model, cfg)  # an impossible launch fails before any file is written
    return Prepared(cfg, model, ref, opt, gains, launches)


def _check_file_times(cfg: ExperimentConfig, ref) -> None:
    """Times given in file time were turned into clip time with the map the reference was made with."""
    for key, record in cfg.file_times.items():
        timing = getattr(ref, "timing", None)
        if timing is None or timing.to_dict() != record["timing"]:
            raise ConfigError(f"{cfg.source or cfg.name}: {key}: given as {record['given']}, but the clip's file "
                              f"frames map to clip time differently now ({record['timing']} when the config was "
                              f"read, {None if timing is None else timing.to_dict()} in the reference); read the "
                              "config again")


def controller_options(cfg: ExperimentConfig) -> tuple[tuple[str, Any], ...]:
    """The controller factory's extra options from the config (its ``controller.<section>``)."""
    if cfg.controller.name == "timed_pd":
        t = cfg.controller.timed
        return (("lookahead", t.lookahead), ("tension", t.tension), ("inertia", t.inertia),
                ("integration", t.integration), ("horizon", t.horizon), ("compensation", t.compensation),
                ("gravity_compensation", t.gravity_compensation), ("min_steps", t.min_steps),
                ("law", "paper" if t.law == "paper" else None), ("hold", t.hold))
    if cfg.controller.name == "vt":
        return (("f0", cfg.controller.vt.f0), ("w0", cfg.controller.vt.w0))
    if cfg.controller.name != "analytic_pd":
        return ()
    a = cfg.controller.analytic
    return (("prediction", a.prediction), ("partition", a.partition), ("damping_ratio", a.damping_ratio),
            ("gain_units", a.gain_units))


def _balance_options(cfg: ExperimentConfig):
    """The config's balance feedback (:class:`tracker.control.balance.BalanceOptions`), None when off."""
    b = cfg.controller.balance
    if not b.enabled:
        return None
    if cfg.controller.name not in ("spd", "pd"):
        raise ConfigError(f"{cfg.source or cfg.name}: controller.balance: needs controller spd or pd, "
                          f"not {cfg.controller.name!r}")
    from tracker.control.balance import BalanceOptions

    return BalanceOptions(enabled=True, kp=b.kp, kd=b.kd, target=b.target, strategy=b.strategy, gravity=b.gravity)


def _offsets(cfg: ExperimentConfig, model, ref):
    """The config's offset track (:mod:`tracker.sim.offsets`), checked against the model; None without."""
    path = cfg.controller.offsets
    if path is None:
        return None
    from tracker.sim.offsets import load_offsets

    if getattr(ref, "target", None) is not None:
        raise ConfigError(f"{cfg.source or cfg.name}: controller.offsets: needs a clip, not a keyframe file")
    where = f"{cfg.source or cfg.name}: controller.offsets"
    try:
        track = load_offsets(path)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    track.check_layout(model.layout, f"{where}: {path}")
    return track


def _plan(launches: list, ref, model, cfg: ExperimentConfig) -> None:
    if launches:
        from tracker.scenarios.launch import plan_launch

        kin = model.kinematics()
        for i, launch in enumerate(launches):
            try:
                plan_launch(launch, ref, model, cfg.sim.dt, cfg.clip.start, kin, substeps=cfg.sim.substeps)
            except TrackerError as exc:
                raise ConfigError(f"{cfg.source or cfg.name}: balls.{i}: {exc}") from None


def warm_up(cfg: ExperimentConfig) -> None:
    """Import the simulation modules and retarget the config's clip (cached), ahead of many runs."""
    import importlib

    for module in ("tracker.analysis.metrics", "tracker.control.gains", "tracker.sim.simulation"):
        importlib.import_module(module)
    reference_of(cfg)


def check_launches(cfg: ExperimentConfig) -> None:
    """Plan the config's ball launches against its clip (cheap; the reference is cached).

    Raises:
        TrackerError: a launch that cannot be made (ball below the ground, out of reach...).
    """
    if not cfg.balls:
        return
    from tracker.character.model import load_model

    ref = reference_of(cfg)
    _plan(launches_of(cfg), ref, load_model(cfg.model), cfg)


def schedule_of(prep: Prepared):
    """The :class:`~tracker.control.schedule.GainSchedule` of the config (None when disabled)."""
    cfg = prep.config
    if not cfg.schedule.enabled:
        return None
    from tracker.control.schedule import GainSchedule, Schedule

    g, s, root = cfg.controller.gains, cfg.schedule, cfg.root
    if g.k_t is None:  # the model's group gains, scaled by k/k_t
        k_t, scaling = 1.0, "model"
        k_r = s.k_r_ratio
    else:
        k_t, scaling = g.k_t, ("mass" if g.inertia_scaling else "uniform")
        k_r = s.k_r if s.k_r is not None else s.k_r_ratio * g.k_t
    return GainSchedule(prep.model, cfg.sim.dt, Schedule(k_t=k_t, k_r=k_r, t_e=s.t_e, t_f=s.t_f, scope=s.scope),
                        scaling=scaling, kd_mode=g.kd_mode, kd_ratio=g.kd_ratio, kd=g.kd, gain_scale=g.scale,
                        root_kp=(root.kp_linear, root.kp_angular), root_kd_ratio=root.kd_ratio, root=root.mode,
                        torque_limits=g.torque_limits, blend=s.blend, min_separation=s.min_separation)


def scenario_of(prep: Prepared):
    """A ball scenario for the config's launches (None without balls)."""
    if not prep.launches:
        return None
    from tracker.scenarios.ball_scenario import BallScenario

    return BallScenario(prep.launches, release_height=prep.config.launch.height)
