"""What a validated experiment config still needs from the clip, the model and the registries.

:func:`resolve_times` turns times given in file time into clip time; :func:`check_relations`
checks keys against each other; :func:`check_names` checks the names that need the model or a
registry (model, joint map, gain groups, links, ball presets) and resolves their paths;
:func:`resolve_substeps` chooses ``sim.substeps`` for the balls when the file leaves it out.
Each raises a one-line :class:`~tracker.errors.ConfigError` naming the file and the key.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracker.errors import ModelError, TrackerError
from tracker.experiments.schema import Context, FileTime, expand_user, is_file, show

if TYPE_CHECKING:
    from tracker.experiments.config import ExperimentConfig

#: The choices of :func:`resolve_substeps` already said in this process (each is said once).
_SAID: set[tuple[str, str]] = set()


def resolve_substeps(cfg: ExperimentConfig, ctx: Context) -> ExperimentConfig:
    """Give ``sim.substeps`` its value when the config leaves it out: 1 without balls; with balls, as
    many as their impacts need (:mod:`tracker.scenarios.substeps`: a ball and the links near it close
    in by at most a quarter of its radius per physics step), said once on stderr
    (``substeps: N (chosen: ...)``) and in the saved config's header. A config that gives it is
    kept as it is (a run too coarse for its balls is warned about when it starts:
    :meth:`tracker.scenarios.ball_scenario.BallScenario.reset`).

    Choosing reads the clip (retargeted once per process: :func:`tracker.experiments.sources.reference_of`).
    """
    if cfg.sim.substeps is not None:
        return cfg
    if not cfg.balls:
        return cfg.replace(sim=dataclasses.replace(cfg.sim, substeps=1))
    import sys

    from tracker.character.model import load_model
    from tracker.experiments.sources import launches_of, reference_of
    from tracker.scenarios.substeps import choose_substeps, impact_speeds

    clip = cfg.clip
    ref = reference_of(cfg)
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

    The map is the retargeter's own (:func:`tracker.retarget.clip_timing.clip_timing`: the file's
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
    from tracker.retarget.clip_timing import clip_timing

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


def check_relations(cfg: ExperimentConfig, ctx: Context) -> None:
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


def check_names(cfg: ExperimentConfig, ctx: Context) -> ExperimentConfig:
    """Names that need the model or a registry: model, joint map, gain groups, links, ball presets."""
    from tracker.character.model import MODELS, load_model

    model_spec = cfg.model
    if model_spec == "fit":  # the humanoid fitted to the clip's skeleton (tracker.retarget.fit), cached
        from tracker.retarget.fit import fit_for_clip

        clip = Path(cfg.clip.path).expanduser()
        clip = clip if clip.is_absolute() else ctx.base_dir / clip
        try:
            model_spec = str(fit_for_clip(clip)[0])
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
