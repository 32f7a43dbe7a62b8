"""``tracker optimize``: search an offset track for a config, then replay it as ``tracker run`` does.

:func:`optimize` settles the clip's start onto the floor, or moves it to its first planted frame
(:mod:`tracker.sampling.start`), runs SAMCON
(:func:`~tracker.sampling.samcon.samcon`) or the per-segment CMA-ES
(:func:`~tracker.sampling.samcon.cma_segments`) on a :class:`~tracker.sampling.pool.RolloutPool`, and
writes into the output folder::

    offsets.npz            the offset track (tracker.sim.offsets; controller.offsets of a config)
    optimize.json          method, settings, cost per iteration and per segment, segment times, rollouts
    cost_per_iteration.png, cost_per_segment.png
    optimize.md            the optimisation's report (settings, costs, the replay beside the plain servo)
    reference.npz          only when the clip's first frame hovered: the lowered clip the replay tracks
    checkpoint.pkl(.key)   while searching: the state after the last segment; the same command, killed and
                           run again, goes on from it (and ends with the uninterrupted result)
    config.yaml, metrics.json, recording.npz, plots, report.md    the replay: tracker run of the config
                           with controller.offsets = offsets.npz (the same keys as tracker run; metrics.json
                           also holds ``baseline``: the same metrics of the plain servo, offsets null)
    timing.json            wall-clock times (solve, replay)

Everything but ``timing.json`` depends on the config and the settings (seed included) alone.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tracker.atomic import write_json_atomic, write_text_atomic
from tracker.errors import ConfigError

METHODS = ("samcon", "cma")
#: ``init`` that starts SAMCON from the plain servo (no offsets): the result is never costlier than it.
PLAIN = "plain"


@dataclass
class OptimizeOutcome:
    """What :func:`optimize` did: the search's result, the replay's outcome and the plain-SPD baseline."""

    result: object
    replay: object
    plain: dict
    folder: Path
    timing: dict


#: What a bare clip is optimised with (``docs/samcon.md``, "Settings"): a free root; SPD whose prediction holds
#: the planted feet (the balance feedback's stance constraints with zero feedback gains: without them SPD
#: predicts a free-falling body and its stance knees give way, the walk replaying 10-17 cm crouched) and
#: that feeds forward the torques holding the weight on them (``gravity``: no sag); three times the model's
#: gains (torque limits kept); 1/120 s control steps, each four physics steps (1/480 s): with one, the box heel of
#: this stiff servo sinks 5-10 cm into the ground on one contact point at heel strikes, and searches found tracks
#: that walked with their feet in the floor (the Bandai walk's first step: 8 cm at 1/120 s, 2 cm at 1/240 s, under
#: 2 mm at 1/480 s; ``foot_penetration_*`` in metrics.json).
CLIP_SETTINGS = {
    "root": {"mode": "free"},
    "controller": {"gains": {"scale": 3.0}, "balance": {"enabled": True, "kp": 0.0, "kd": 0.0, "gravity": True}},
    "sim": {"dt": 1.0 / 120.0, "substeps": 4},
}


def clip_config(source) -> dict:
    """The raw config ``tracker optimize CLIP`` optimises for a clip file ``source`` (a :class:`~pathlib.Path`):
    :data:`CLIP_SETTINGS` (``--set``/``--dt`` override it)."""
    import copy

    raw = {"name": source.stem, "clip": {"path": str(source.resolve())}}
    raw.update(copy.deepcopy(CLIP_SETTINGS))
    return raw


def optimize(cfg, out: str | Path, method: str = "samcon", options=None, workers: int = 1, backend: str = "local",
             progress: bool = False, header: str = "", weights=None, init: str | Path | None = None,
             log=None, address: str | None = None, schedule=None) -> OptimizeOutcome:
    """Search, write and replay (module docstring).

    ``schedule``: a :class:`~tracker.sampling.schedule.ScheduleOptions`: run the whole schedule
    (:mod:`tracker.sampling.schedule`: windows, then narrow passes until the goal) instead of one search;
    ``options`` and ``init`` are then not used (give None).

    ``address``: a running Ray cluster's ``HOST:PORT`` (``backend="ray"``; default ``RAY_ADDRESS``, else a
    local one is started).

    ``init``: an offset-track file to start SAMCON from (:func:`~tracker.sampling.samcon.samcon`'s ``init``), or
    :data:`PLAIN` (the plain servo: no offsets).
    ``log``: a :class:`~tracker.sampling.watch.SearchLog` that shows the search (a bar on a terminal, else a
    line per window) and says where it started and what it resumed; None: ``progress`` draws a bar, or nothing.

    Raises:
        ConfigError: unknown method, bad settings, a clip the model cannot stand in at its start nor at its
            first planted frame, an ``init`` track that is not a readable track for this model or is given to ``cma``.
    """
    from tracker.experiments.runner import open_result_folder
    from tracker.sampling.pool import RolloutPool
    from tracker.sampling.samcon import SamconOptions, cma_segments, samcon, segment_times
    from tracker.sampling.start import plan_start
    from tracker.sampling.watch import SearchLog

    if method not in METHODS:
        raise ConfigError(f"method {method!r} is not one of: {', '.join(METHODS)}")
    if schedule is not None:
        if init is not None or options is not None or method != "samcon":
            raise ConfigError("optimize: a schedule sets its own searches (no --init, --method or search settings)")
        schedule.check()
        options = schedule.samcon(0)
    opt = options or SamconOptions()
    opt.check()
    start, prep = plan_start(cfg)  # the start settled onto the floor, or moved to the first planted frame
    cfg = start.config

    init_track, init_key = None, ""
    if init is not None:
        import hashlib

        from tracker.sim.offsets import load_offsets

        if method != "samcon":
            raise ConfigError(f"--init {init}: only --method samcon starts from an offset track")
        if init == PLAIN:  # the plain servo: no offsets anywhere, carried as the best chain so far
            from tracker.sim.offsets import OffsetTrack

            init_track = OffsetTrack.zeros(prep.model.layout, [cfg.clip.start], model=prep.model.name,
                                           clip=str(cfg.clip.path))
            init_key = PLAIN
        else:
            init_track = load_offsets(init)
            init_track.check_layout(prep.model.layout, str(init))
            init_key = hashlib.sha256(Path(init).read_bytes()).hexdigest()

    t_end = cfg.clip.start + cfg.duration if cfg.duration is not None else prep.reference.duration
    segment_times(cfg.clip.start, t_end, opt.segment, cfg.sim.dt)  # a bad segment length fails before any file
    folder = open_result_folder(out)
    if start.reference is not None:
        start.reference.save(folder / "reference.npz")
        cfg = start.with_reference_at((folder / "reference.npz").resolve())
    if log is None and progress:
        log = SearchLog(bar=True)
    for note in start.notes():
        if log is not None:
            log.say(note)
    timing: dict = {}
    from tracker.experiments.config import dump_config
    from tracker.sampling.samcon import Checkpoint

    if schedule is not None:
        return _optimize_schedule(cfg, folder, schedule, workers, backend, weights, address, log, header, start)
    # the search launches the config's balls in every rollout, as the replay does
    pool = RolloutPool(cfg, workers=workers, backend=backend, weights=weights, address=address,
                       balls=bool(cfg.balls))

    # What the search depends on: the config, the method and its settings (not the workers).
    key = f"method: {method}\noptions: {opt!r}\nweights: {pool.weights!r}\n{dump_config(cfg)}"
    if init_track is not None:
        key = f"init: sha256 {init_key}\n{key}"
    checkpoint = Checkpoint(folder / "checkpoint.pkl", key)
    if log is not None:
        checkpoint.announce = lambda state: log.say(_resumed(checkpoint.path, method, opt, state))
    if log is not None:
        log.begin()
    t0 = time.perf_counter()
    try:
        run = samcon if method == "samcon" else cma_segments
        extra = {"init": init_track} if init_track is not None else {}
        res = run(pool, options=opt, checkpoint=checkpoint, watch=log, **extra)
    finally:
        if log is not None:
            log.close()
        pool.close()
    timing["solve_s"] = time.perf_counter() - t0
    timing["resumed_from"] = checkpoint.resumed  # None: searched from the start
    res.track.save(folder / "offsets.npz")
    checkpoint.remove()  # the search is done; its results are written below
    write_json_atomic(folder / "optimize.json", {
        "method": method, "workers_do_not_change_results": True, "weights": dataclasses.asdict(pool.weights),
        "options": {k: (list(map(list, v)) if k == "widths" else v) for k, v in dataclasses.asdict(opt).items()},
        "cost_per_iteration": res.cost_per_iteration.tolist(), "segment_costs": res.segment_costs.tolist(),
        "segment_times": res.times.tolist(), "rollouts": int(res.rollouts), "fell": list(res.fell),
        "init": (init if init == PLAIN else str(Path(init).resolve())) if init is not None else None,
        "start": {"clip_start_s": cfg.clip.start, "settled_m": start.settled_m, "moved_from_s": start.moved_from,
                  "file_frame": start.file_frame}})
    _plots(folder, res, method)
    outcome, plain = _replay_beside_plain(cfg, folder, header, log, timing)
    write_text_atomic(folder / "optimize.md", _report(cfg, method, opt, res, outcome.metrics, plain, timing, init,
                                                      start.notes()))
    return OptimizeOutcome(res, outcome, plain, folder, timing)


def _replay_beside_plain(cfg, folder: Path, header: str, log, timing: dict):
    """The plain servo's run (the baseline) and the replay of ``folder/offsets.npz`` as ``tracker run`` does it;
    writes ``metrics.json`` (with ``baseline``) and ``timing.json``. Returns ``(the replay's outcome, plain)``."""
    from tracker.experiments.runner import run_experiment

    if log is not None:
        log.say("baseline: the plain servo (no offsets, the same settings) ...")
    plain_cfg = cfg.replace(controller=dataclasses.replace(cfg.controller, offsets=None))
    plain, baseline = _baseline(plain_cfg)
    replay_cfg = cfg.replace(controller=dataclasses.replace(cfg.controller, offsets=str((folder / "offsets.npz").resolve())))
    if log is not None:
        log.say("replay: tracker run with the offsets ...")
    t0 = time.perf_counter()
    outcome = run_experiment(replay_cfg, folder, header=header)
    timing.update(outcome.timing)
    timing["replay_s"] = time.perf_counter() - t0
    outcome.metrics["baseline"] = baseline
    write_json_atomic(folder / "metrics.json", outcome.metrics)
    write_json_atomic(folder / "timing.json", timing)
    return outcome, plain


def _optimize_schedule(cfg, folder: Path, schedule, workers, backend, weights, address, log, header, start):
    """:func:`optimize` with a schedule: run it, write its files, replay beside the plain servo."""
    from tracker.experiments.config import dump_config
    from tracker.sampling.samcon import SamconResult
    from tracker.sampling.schedule import run_schedule

    if log is not None:
        log.begin()
    t0 = time.perf_counter()
    try:
        sres = run_schedule(cfg, folder, schedule, workers=workers, backend=backend, weights=weights, address=address,
                            log=log, key=dump_config(cfg))
    finally:
        if log is not None:
            log.close()
    timing = {"solve_s": time.perf_counter() - t0, "resumed_from": sres.resumed}
    sres.track.save(folder / "offsets.npz")
    res = SamconResult(sres.track, sres.cost_per_stage, sres.segment_costs, tuple(st.fell for st in sres.stages),
                       sres.rollouts, sres.times)
    write_json_atomic(folder / "optimize.json", {
        "method": "samcon schedule", "workers_do_not_change_results": True,
        "weights": dataclasses.asdict(weights) if weights is not None else None,
        "schedule": {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(schedule).items()},
        "stages": [dataclasses.asdict(st) for st in sres.stages], "stopped": sres.stopped, "goal_met": sres.met,
        "goal": sres.goal, "rollouts": int(sres.rollouts), "segment_times": sres.times.tolist(),
        "cost_per_stage": sres.cost_per_stage.tolist(),
        "start": {"clip_start_s": cfg.clip.start, "settled_m": start.settled_m, "moved_from_s": start.moved_from,
                  "file_frame": start.file_frame}})
    _plots(folder, res, "schedule")
    outcome, plain = _replay_beside_plain(cfg, folder, header, log, timing)
    write_text_atomic(folder / "optimize.md", _schedule_report(cfg, schedule, sres, outcome.metrics, plain, timing,
                                                               start.notes()))
    return OptimizeOutcome(res, outcome, plain, folder, timing)


#: The metrics of the plain servo put beside the result's in ``metrics.json`` (``baseline``).
BASELINE_SKIP = ("name", "clip_timing", "file_times", "impact", "message")


def _baseline(cfg) -> tuple[dict, dict]:
    """The plain servo (``cfg`` without offsets): ``(how it ended, for plain_outcome; its metrics)``."""
    from tracker.experiments.runner import build, compute_metrics, simulate

    prep = build(cfg)
    rec, _ = simulate(prep)
    plain = {"fell_at": rec.meta.get("fell_at"), "fall_reason": rec.meta.get("fall_reason", ""), "status": rec.status,
             "diverged_at": float(rec.t[-1]) if rec.diverged and len(rec.t) else None,
             "height_share": _height_share(rec)}
    metrics = {k: v for k, v in compute_metrics(prep, rec, None, {}).items() if k not in BASELINE_SKIP}
    metrics["fell_at"] = plain["fell_at"]
    return plain, metrics


def _resumed(path: Path, method: str, opt, state: dict) -> str:
    """``resumed from PATH (iteration k of n)``, for samcon, ``(segment k of n ...)`` for cma."""
    if method == "samcon":
        it = min(int(state.get("iteration", 0)) + 1, opt.iterations)
        return f"resumed from {path} (iteration {it} of {opt.iterations}), at segment {int(state['segment']) + 1}"
    return (f"resumed from {path} (segment {int(state['segment']) + 1}: the segments before it done, "
            f"{opt.iterations} generations each)")


def _plots(folder: Path, res, method: str) -> None:
    from matplotlib.figure import Figure

    from tracker.analysis.plots import save_figure

    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(np.arange(1, len(res.cost_per_iteration) + 1), res.cost_per_iteration, "o-")
    ax.set_xlabel({"samcon": "iteration", "schedule": "stage (each with its own weights)"}.get(method,
                                                                                            "CMA-ES generation"))
    ax.set_ylabel("best chain's cost (sum over segments)")
    ax.set_title(f"{method}: cost per iteration", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, folder / "cost_per_iteration.png")
    fig = Figure(figsize=(6.4, 4.0))
    ax = fig.add_subplot(1, 1, 1)
    mids = 0.5 * (res.times[:-1] + res.times[1:])
    for i, row in enumerate(res.segment_costs):
        label = "the last search's best chain" if method == "schedule" else f"iteration {i + 1}"
        ax.plot(mids, row, "o-", ms=3, label=label, alpha=0.4 + 0.6 * (i + 1) / len(res.segment_costs))
    ax.set_xlabel("clip time (segment centre), s")
    ax.set_ylabel("segment cost")
    ax.set_yscale("log")
    ax.set_title(f"{method}: the best chain's cost per segment", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, folder / "cost_per_segment.png")


def _widths_note(opt) -> str:
    """``half-widths ... decay ...`` for the report when they are not the defaults, else ``""``."""
    from tracker.sampling.samcon import SamconOptions

    default = SamconOptions()
    if tuple(opt.widths) == default.widths and opt.decay == default.decay:
        return ""
    if [p for p, _ in opt.widths] == [p for p, _ in default.widths]:
        widths = " / ".join(f"{w:.3g}" for _, w in opt.widths) + " rad (legs / trunk / others)"
    else:
        widths = ", ".join(f"{w:.3g} rad for {p!r}" for p, w in opt.widths)
    return f"half-widths {widths}, decay {opt.decay:g}, "


def plain_outcome(plain: dict) -> str:
    """How the servo fared without the offsets: ``FELL at t = …``, ``DIVERGED at t = …`` (with how high
    the pelvis still was, when known: a servo that blows up while the body goes down) or ``did not fall``."""
    if plain.get("fell_at") is not None:
        why = plain.get("fall_reason")
        return f"FELL at t = {plain['fell_at']:.2f} s" + (f" ({why})" if why else "")
    if plain.get("diverged_at") is not None:
        share = plain.get("height_share")
        where = f" (pelvis at {100 * share:.0f} % of the clip's height)" if share is not None else ""
        return f"DIVERGED at t = {plain['diverged_at']:.2f} s{where}"
    return "did not fall"


def _height_share(rec) -> float | None:
    """The free root's height over the clip's at the last finite step of ``rec`` (None: no base or no step)."""
    if not rec.layout.has_base:
        return None
    good = np.flatnonzero(np.isfinite(rec.q).all(axis=1) & (np.abs(rec.q_ref[:, 2]) > 1e-9))
    return float(rec.q[good[-1], 2] / rec.q_ref[good[-1], 2]) if len(good) else None


def _report(cfg, method: str, opt, res, metrics: dict, plain: dict, timing: dict, init=None, notes=()) -> str:
    source = cfg.clip.path if not notes or not str(cfg.clip.path).endswith("reference.npz") else "the lowered clip"
    lines = [f"# {method}: {Path(source).name}", "", *[f"{n[0].upper()}{n[1:]}." for n in notes],
             *([""] if notes else []),
             f"Window {res.times[0]:.3f}-{res.times[-1]:.3f} s in {len(res.times) - 1} segments of {opt.segment:g} s; "
             f"{opt.samples} samples per segment and iteration, "
             + (f"keep {opt.keep} ({opt.selection}), {opt.iterations} iterations, " if method == "samcon"
                else f"{opt.iterations} CMA-ES generations per segment, ")
             + (f"look-ahead {opt.lookahead} segments, " if getattr(opt, "lookahead", 0) else "")
             + (("started from the plain servo (no offsets), " if init == PLAIN else f"started from {init}, ")
                if init is not None else "")
             + _widths_note(opt)
             + f"seed {opt.seed}; "
             f"{res.rollouts} rollouts in {timing['solve_s']:.1f} s.", "",
             "| iteration | cost |", "|---:|---:|"]
    lines += [f"| {i + 1} | {c:.5g} |" for i, c in enumerate(res.cost_per_iteration)]
    lines += _beside_plain(metrics, plain, "", "iteration")
    return "\n".join(lines)


def _schedule_report(cfg, schedule, sres, metrics: dict, plain: dict, timing: dict, notes=()) -> str:
    """``optimize.md`` of a schedule: its settings, a row per stage, the replay beside the plain servo."""
    from tracker.sampling.watch import GOAL_JOINT_RAD, GOAL_ROOT_M

    source = cfg.clip.path if not notes or not str(cfg.clip.path).endswith("reference.npz") else "the lowered clip"
    stopped = {"goal met": "the goal was met", "stages done": "every stage was done, the goal not met",
               "budget": f"the next stage would have passed the budget of {schedule.budget_s or 0:.0f} s "
                         f"(`--max-stages {len(sres.stages)}` reproduces this result)",
               "max_stages": f"--max-stages {schedule.max_stages} was reached"}.get(sres.stopped, sres.stopped)
    lines = [f"# samcon schedule: {Path(source).name}", "", *[f"{n[0].upper()}{n[1:]}." for n in notes],
             *([""] if notes else []),
             f"Windows of {schedule.window:g} s (the last {schedule.overlap:g} s of each searched again by the next), "
             f"{schedule.samples} samples per {schedule.segment:g} s segment and iteration, keep {schedule.keep} "
             f"({schedule.selection}), {schedule.iterations} iterations, look-ahead {schedule.lookahead} segment(s) "
             f"for the {schedule.look_keep} cheapest; then narrow passes (half-widths x {schedule.refine_scale:g}, "
             f"pose weights {', '.join(f'{p:g}' for p in schedule.refine_pose)}) until the goal (standing, joint "
             f"error <= {GOAL_JOINT_RAD:.2f} rad, root error <= {GOAL_ROOT_M:.2f} m); seed {schedule.seed}. "
             f"{sres.rollouts} rollouts in {timing['solve_s']:.1f} s"
             + (f" this run, resumed after stage {sres.resumed} ({sum(st.seconds for st in sres.stages):.1f} s "
                f"with the stages read back)" if sres.resumed else "") + f". Stopped: {stopped}.", "",
             "Over the window: the stage's track replayed from the start to the window's end, its errors averaged over "
             "the window; whole clip: the track replayed to the end.", "",
             "| stage | search | clip time, s | rollouts | time, s | over the window: fell, joint error rad, root "
             "error m | whole clip: fell, joint error rad, root error m | note |", "|---:|---|---|---:|---:|---|---|---|"]
    for i, st in enumerate(sres.stages):
        lines.append(f"| {i + 1} | {st.name} | {st.t0:.2f}-{st.t1:.2f} | {st.rollouts} | {st.seconds:.1f} | "
                     f"{_goal_cell(st.window)} | {_goal_cell(st.replay)} | {st.note} |")
    lines += _beside_plain(metrics, plain, ", the best stage's track", "stage")
    return "\n".join(lines)


def _goal_cell(goal: dict | None) -> str:
    """``no, 0.0912, 0.104`` (or ``at 1.23 s, ...``) for a stage's goal numbers; ``""`` for none."""
    if not goal:
        return ""
    fell = f"at {goal['fell_at']:.2f} s" if goal.get("fell") and goal.get("fell_at") is not None else \
        ("yes" if goal.get("fell") else "no")
    return f"{fell}, {goal['joint_error_mean_rad']:.4f}, {goal['root_error_mean_m']:.4f}"


def _beside_plain(metrics: dict, plain: dict, which: str, unit: str) -> list[str]:
    """``optimize.md``'s closing lines: the replay beside the plain servo, and the two cost plots."""
    base = metrics.get("baseline", {})
    nan = float("nan")
    return ["", f"Replay (tracker run with controller.offsets = offsets.npz{which}) beside the plain servo (the same "
            "settings, controller.offsets = null; `baseline` in metrics.json):", "",
            "| | with the offsets | plain servo |", "|---|---:|---:|",
            f"| fell | {metrics.get('fell')} | {base.get('fell')} |",
            f"| joint error mean, rad | {metrics.get('joint_error_mean_rad', nan):.4f} | "
            f"{base.get('joint_error_mean_rad', nan):.4f} |",
            f"| root position error mean, m | {metrics.get('root_error_mean_m', nan):.4f} | "
            f"{base.get('root_error_mean_m', nan):.4f} |", "",
            f"The plain servo: {plain_outcome(plain)}.",
            "", f"![cost per {unit}](cost_per_iteration.png)", "",
            "![cost per segment](cost_per_segment.png)", ""]
