"""Run one experiment config and write its result folder.

:func:`build` turns an :class:`ExperimentConfig` into the model, reference,
gains, gain schedule and ball scenario; :func:`simulate` runs it (optionally
without the balls, for the baseline); :func:`run_experiment` does both runs
when there are balls, computes the metrics and writes::

    <out>/config.yaml        the fully resolved config (loads again as a config)
    <out>/recording.npz      every step (outputs.recording)
    <out>/baseline.npz       the ball-free baseline run (with balls and outputs.recording)
    <out>/*.png, report.md   plots and a one-page report (outputs.plots)
    <out>/video.mp4          reference and simulation side by side (outputs.video)
    <out>/metrics.json       written as soon as the numbers are known: its presence marks a finished run
    <out>/timing.json        wall-clock times (kept out of metrics.json and recording.npz)

The numbers and the recording are written before anything that may fail on
strange values (plots, the video, the report); such a failure is reported in
one line (:attr:`Outcome.problems`, ``timing.json`` and the report) and the
run's exit status stays the simulation's. A result file that cannot be written
at all (a full disk) is a one-line :class:`~tracker.atomic.WriteError` naming
it. Every file but ``timing.json`` holds only deterministic data, so the same
config gives the same files byte for byte. Every file is written atomically.

With ``keep_interrupted`` (the ``tracker run`` command), SIGINT or SIGTERM
during the simulation stops it and keeps what ran: ``recording.npz`` (status
``interrupted``) and ``metrics.json`` with ``"interrupted": true``, no plots
(:attr:`Outcome.interrupted`; the command then exits 130).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracker.atomic import write_json_atomic, write_text_atomic
from tracker.errors import TrackerError
from tracker.experiments.config import ExperimentConfig, dump_config
from tracker.experiments.build import (Prepared, build, check_launches, controller_options,  # noqa: F401  (re-exported)
                                       scenario_of, schedule_of, warm_up)

#: Leading rows of the report and the CLI summary.
SUMMARY_KEYS = ("joint_error_mean_rad", "joint_error_max_rad", "root_error_mean_m", "ee_error_mean_m",
                "torque_saturation", "effort_mean_nm")


@dataclass
class Outcome:
    """The result of :func:`run_experiment`."""

    config: ExperimentConfig
    folder: Path
    recording: Any
    baseline: Any
    metrics: dict
    timing: dict
    files: dict[str, str]
    #: One line per output that could not be written (a plot, the video, the report).
    problems: list[str] = field(default_factory=list)
    #: SIGINT/SIGTERM stopped a simulation: the files hold what ran (``keep_interrupted``).
    interrupted: bool = False

    @property
    def diverged(self) -> bool:
        return bool(self.recording.diverged or (self.baseline is not None and self.baseline.diverged))


# -- simulating ---------------------------------------------------------------------------------


def make_simulation(prep: Prepared, *, scenario=None, schedule=None, gui: bool = False, world=None):
    """The :class:`~tracker.sim.simulation.Simulation` of a prepared config, not yet run.

    Args:
        scenario: the ball scenario (:func:`scenario_of`), or None.
        schedule: the gain schedule (:func:`schedule_of`), or None for the config's constant gains.
        gui: open PyBullet's GUI window.
        world: an already open :class:`~tracker.sim.world.World` to use (e.g. a sized GUI window).
    """
    from tracker.control.registry import create as create_controller
    from tracker.sim.simulation import Simulation

    cfg = prep.config
    gains_fn = schedule.bind(scenario) if schedule is not None else None
    sim = Simulation(prep.model, prep.reference, prep.options, gains_fn=gains_fn, scenario=scenario, gui=gui,
                     world=world)
    sim.base_gains = prep.gains
    sim.gains = prep.gains
    keyframes = getattr(prep.reference, "file", None)
    if keyframes is not None and not keyframes.gravity:  # a keyframe file may switch gravity off
        sim.world.set_gravity((0.0, 0.0, 0.0))
    if cfg.controller.name == "spd" and cfg.controller.prediction != "semi_implicit":
        # Simulation builds SPD with its default prediction; the config asks for another one.
        passive = None
        if cfg.root.mode == "free":
            import numpy as np

            passive = np.zeros(sim.layout.nv, dtype=bool)
            passive[:6] = True
        try:
            sim.controller = create_controller("spd", layout=sim.layout, dynamics=sim.character,
                                               target_velocity=cfg.controller.target_velocity,
                                               prediction=cfg.controller.prediction, passive=passive,
                                               substeps=cfg.sim.substeps)
        except Exception:
            sim.close()
            raise
    return sim


def simulate(prep: Prepared, *, balls: bool = True, gui: bool = False,
             on_step: Callable[[dict], None] | None = None, keep_interrupted: bool = False) -> tuple[Any, dict]:
    """Run the prepared config once.

    Args:
        balls: launch the config's balls (False: the ball-free baseline).
        gui: open PyBullet's GUI window.
        on_step: called with every recorded row (progress bars).
        keep_interrupted: a KeyboardInterrupt ends the run with what ran (:func:`run_simulation`).

    Returns:
        ``(recording, outcome)``: the :class:`~tracker.sim.recording.Recording` and the
        ball scenario's outcome data (empty without balls).
    """
    cfg = prep.config
    scenario = scenario_of(prep) if balls else None
    schedule = schedule_of(prep) if (balls and scenario is not None) else None
    sim = make_simulation(prep, scenario=scenario, schedule=schedule, gui=gui)
    try:
        rec = run_simulation(sim, cfg.duration, on_step=on_step, keep_interrupted=keep_interrupted)
    finally:
        sim.close()
    rec.meta.update(config=cfg.name, balls=bool(balls and prep.launches), schedule=schedule is not None)
    return rec, _ball_outcome(scenario)


def run_simulation(sim, duration: float | None = None, *, progress: bool = False,
                   on_step: Callable[[dict], None] | None = None, keep_interrupted: bool = False):
    """``sim.run(duration)``; with ``keep_interrupted``, a KeyboardInterrupt (SIGINT, or SIGTERM under
    :func:`interrupt_on_sigterm`) ends it early and returns the steps that ran as a recording with
    status ``"interrupted"`` instead of losing them."""
    if not keep_interrupted:
        return sim.run(duration, progress=progress, on_step=on_step)
    rows: list[dict] = []

    def keep(row: dict) -> None:
        rows.append(row)
        if on_step is not None:
            on_step(row)

    wall0 = time.perf_counter()
    try:
        return sim.run(duration, progress=progress, on_step=keep)
    except KeyboardInterrupt:
        t = rows[-1]["t"] if rows else sim.opt.start
        # Simulation.run keeps its rows to itself; the same rows, seen through on_step, make the recording.
        return sim._recording(rows, "interrupted", f"interrupted at t = {t:.3f} s (clip time), after {len(rows)} steps",
                              time.perf_counter() - wall0)


@contextlib.contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """While in the block, SIGTERM raises KeyboardInterrupt in the main thread, as SIGINT does
    (a no-op outside the main thread, where signal handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupt(signum, _frame) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _ball_outcome(scenario) -> dict:
    """``{"balls": [outcome per ball]}`` (first contact, exit velocity, caught/dropped); empty without balls."""
    if scenario is None:
        return {}
    return {"balls": [_plain(o.to_dict()) for o in scenario.outcomes()]}


def _plain(x):
    """Scenario data as JSON-able values (dataclasses, numpy arrays and scalars)."""
    import numpy as np

    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.generic):
        return x.item()
    return x


# -- the result folder --------------------------------------------------------------------------


def default_out_dir(cfg: ExperimentConfig, root: str | Path = "results", now: _dt.datetime | None = None) -> Path:
    """``results/<name>-YYYYmmdd-HHMMSS`` (a suffix ``-2``, ``-3``... if that exists)."""
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{cfg.name}-{stamp}"
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


def compute_metrics(prep: Prepared, rec, baseline, ball_outcome: dict) -> dict:
    """The deterministic metrics of a run (no wall-clock numbers)."""
    from tracker.analysis.metrics import tracking_metrics

    cfg = prep.config
    m = tracking_metrics(rec, prep.model.kinematics(), end_effectors=dict(prep.model.end_effectors),
                         feet=prep.model.feet)
    m.update(name=cfg.name, status=rec.status, message=rec.message,
             controller=cfg.controller.name, dt=cfg.sim.dt, root=cfg.root.mode)
    timing = getattr(prep.reference, "timing", None)
    if timing is not None:  # times in the metrics are clip time; this maps them to the file's frames
        m["clip_timing"] = timing.to_dict()
    if cfg.file_times:
        m["file_times"] = cfg.file_times
    if baseline is not None:
        from tracker.analysis.impact import impact_response

        imp = impact_response(rec, baseline, cfg.impact.recover_threshold_rad, cfg.impact.hold_s)
        imp["baseline_status"] = baseline.status
        imp["baseline_message"] = baseline.message
        imp.update(ball_outcome)
        m["impact"] = imp
    return m


#: What :func:`compared_run` keeps of the other run's metrics (and of its ``impact``).
COMPARED_KEYS = ("root", "status", "fell", "fell_at_s", "fall_reason", "joint_error_mean_rad", "root_error_mean_m")
COMPARED_IMPACT_KEYS = ("peak_deviation_rad", "peak_time_s", "peak_root_deviation_m", "recovered", "time_to_recover_s",
                        "balls")


def compared_run(cfg: ExperimentConfig, root_mode: str, other: ExperimentConfig | None = None) -> dict:
    """``cfg`` run again with ``root.mode: root_mode`` (its balls and its ball-free baseline), or the
    config ``other`` as it is: its fall, tracking and impact numbers, to stand beside the run's own
    (``tracker scenario NAME --root free`` puts the anchored scenario's beside the free one's)."""
    if other is None:
        other = cfg.replace(root=dataclasses.replace(cfg.root, mode=root_mode))
    prep = build(other)
    rec, outcome = simulate(prep)
    baseline, _ = simulate(prep, balls=False)
    m = compute_metrics(prep, rec, baseline, outcome)
    out = {k: m.get(k) for k in COMPARED_KEYS}
    imp = m.get("impact") or {}
    out["impact"] = {k: imp.get(k) for k in COMPARED_IMPACT_KEYS}
    return out


def open_result_folder(out: str | Path, clear: bool = False) -> Path:
    """Create the result folder ``out`` (one-line error if it cannot be) and drop an earlier run's
    ``metrics.json``: a folder is not "finished" while a new run writes into it. ``clear``: first
    remove every file an earlier run wrote there (:func:`tracker.outdir.clear_run_files`, ``--force``)."""
    from tracker.outdir import check_path, clear_run_files, make_out

    folder = make_out(check_path(out, "--out"))
    if clear:
        clear_run_files(folder)
    (folder / "metrics.json").unlink(missing_ok=True)
    return folder


def run_experiment(cfg: ExperimentConfig, out: str | Path, *, video: bool | None = None, gui: bool = False,
                   progress: bool = False, header: str = "", clear: bool = False,
                   keep_interrupted: bool = False, compare_root: str | None = None,
                   compare_config: ExperimentConfig | None = None) -> Outcome:
    """Run ``cfg`` (and its ball-free baseline when it has balls) and write the result folder.

    Args:
        out: the result folder (created).
        video: render the MP4 (default: ``cfg.outputs.video``).
        gui: show the run in PyBullet's GUI (the baseline runs headless).
        progress: tqdm progress bars on stderr.
        header: comment lines written at the top of config.yaml (provenance).
        clear: remove an earlier run's files from ``out`` first (once the config has been built).
        keep_interrupted: SIGINT/SIGTERM during a simulation keep what ran (module docstring).
        compare_root: also run the config with this ``root.mode`` (with its own ball-free baseline) and put
            its fall, ball outcome, peak deviation and recovery time beside this run's (``metrics.json``'s
            ``compared``, a table in ``report.md``); only for a config with balls and another root mode.
        compare_config: with ``compare_root``, the config to compare against as it is (its own root mode,
            time step and gains: the anchored scenario beside its free-root variant), not ``cfg`` re-rooted.

    Raises:
        TrackerError: a bad config or clip; a missing optional extra (video) before anything runs;
            a result file that cannot be written (:class:`~tracker.atomic.WriteError`).
    """
    want_video = cfg.outputs.video if video is None else video
    if want_video:
        from tracker.analysis.video import require_video_extra

        require_video_extra()
    if want_video != cfg.outputs.video:
        cfg = cfg.replace(outputs=dataclasses.replace(cfg.outputs, video=want_video))
    timing: dict = {}
    t0 = time.perf_counter()
    prep = build(cfg)
    timing["build_s"] = time.perf_counter() - t0
    folder = open_result_folder(out, clear=clear)
    write_text_atomic(folder / "config.yaml", dump_config(cfg, header))

    with interrupt_on_sigterm() if keep_interrupted else contextlib.nullcontext():
        rec, ball_outcome = _timed_sim(prep, True, gui, progress, "run" if not prep.launches else "with balls",
                                       timing, "sim_s", keep_interrupted)
        baseline = None
        if prep.launches and rec.status != "interrupted":
            key = baseline_key(cfg)
            baseline = _BASELINES.get(key)
            if baseline is None:
                baseline, _ = _timed_sim(prep, False, False, progress, "baseline", timing, "baseline_s",
                                         keep_interrupted)
                if baseline.status != "interrupted":
                    _BASELINES.clear()  # keep one: sweeps over ball settings reuse it run after run
                    _BASELINES[key] = baseline
            else:
                timing["baseline_s"] = 0.0
                timing["baseline_reused"] = True
    stopped = next((r for r in (rec, baseline) if r is not None and r.status == "interrupted"), None)
    if stopped is not None:
        return _write_interrupted(folder, prep, rec, baseline, ball_outcome, stopped, timing)
    # The numbers and the recording first: whatever fails after them (a plot, the video, the
    # report) is reported in one line and in the report, and loses nothing already written.
    metrics = compute_metrics(prep, rec, baseline, ball_outcome)
    if compare_root is not None and compare_root != cfg.root.mode and prep.launches:
        t0 = time.perf_counter()
        metrics["compared"] = compared_run(cfg, compare_root, compare_config)
        timing["compared_s"] = time.perf_counter() - t0
    files: dict[str, str] = {"config": "config.yaml", "metrics": "metrics.json", "timing": "timing.json"}
    problems: list[str] = []
    if cfg.outputs.recording:
        files.update(_save_recordings(folder, rec, baseline))
    write_json_atomic(folder / "metrics.json", metrics)
    if cfg.outputs.plots:
        t0 = time.perf_counter()
        files.update(_write_plots(folder, rec, baseline, problems))
        timing["plots_s"] = time.perf_counter() - t0
    if want_video:
        t0 = time.perf_counter()
        try:
            from tracker.analysis.video import write_video

            write_video(folder / "video.mp4", rec, prep.model, fps=cfg.outputs.video_fps,
                        size=cfg.outputs.video_size, ball_radii=ball_radii(cfg), progress=progress)
            files["video"] = "video.mp4"
        except Exception as exc:  # noqa: BLE001 - the run's results are written; say what is missing
            problems.append(problem_line("video.mp4", exc))
        timing["video_s"] = time.perf_counter() - t0
    if cfg.outputs.plots:
        try:
            _write_report(folder / "report.md", cfg, metrics, files, problems)
            files["report"] = "report.md"
        except Exception as exc:  # noqa: BLE001
            problems.append(problem_line("report.md", exc))
    sim_time = rec.n_steps * rec.dt
    timing["realtime_factor"] = sim_time / timing["sim_s"] if timing["sim_s"] > 0 else None
    if problems:
        timing["problems"] = problems
    write_json_atomic(folder / "timing.json", timing)
    return Outcome(cfg, folder, rec, baseline, metrics, timing, files, problems)


def _save_recordings(folder: Path, rec, baseline) -> dict[str, str]:
    """``recording.npz`` (and ``baseline.npz`` when there is one): the files written, by role."""
    rec.save(folder / "recording.npz")
    if baseline is None:
        return {"recording": "recording.npz"}
    baseline.save(folder / "baseline.npz")
    return {"recording": "recording.npz", "baseline": "baseline.npz"}


def _write_interrupted(folder: Path, prep: Prepared, rec, baseline, ball_outcome: dict, stopped,
                       timing: dict) -> Outcome:
    """What ran before SIGINT/SIGTERM: the recording(s) so far and metrics.json marked ``interrupted``
    (no plots, video or report: the user asked to stop)."""
    cfg = prep.config
    during = "baseline" if stopped is baseline else "run"
    # An interrupted baseline is shorter than the run: no impact response against it.
    metrics = compute_metrics(prep, rec, None, ball_outcome if stopped is rec else {})
    metrics.update(interrupted=True, interrupted_during=during, status="interrupted",
                   message=stopped.message + ("" if during == "run" else " in the ball-free baseline"))
    files: dict[str, str] = {"config": "config.yaml", **_save_recordings(folder, rec, baseline)}
    write_json_atomic(folder / "metrics.json", metrics)
    files["metrics"] = "metrics.json"
    timing["interrupted"] = True
    write_json_atomic(folder / "timing.json", timing)
    files["timing"] = "timing.json"
    return Outcome(cfg, folder, rec, baseline, metrics, timing, files, [], interrupted=True)


def problem_line(what: str, exc: BaseException) -> str:
    """One line saying which output could not be written and why (cut to a readable length)."""
    text = " ".join(str(exc).split())
    if len(text) > 160:
        text = text[:157] + "..."
    kind = "" if isinstance(exc, TrackerError) else f"{type(exc).__name__}: "
    return f"{what} not written ({kind}{text})"


def _write_plots(folder: Path, rec, baseline, problems: list[str]) -> dict[str, str]:
    """Each plot on its own, so that one that fails (a diverged run's values) costs only itself."""
    try:
        from tracker.analysis import plots
    except Exception as exc:  # noqa: BLE001 - matplotlib itself (MPLBACKEND=bogus): no plot at all
        problems.append(problem_line("plots (joint_error.png, gains.png, joint_angles.png, balls.png)", exc))
        return {}

    jobs = [("joint_error", lambda p: plots.plot_joint_error(rec, p, baseline)),
            ("gains", lambda p: plots.plot_gains(rec, p)),
            ("joint_angles", lambda p: plots.plot_joint_angles(rec, p, n=4)),
            ("balls", lambda p: plots.plot_balls(rec, p))]
    out = {}
    for name, plot in jobs:
        try:
            path = plot(folder / f"{name}.png")
        except Exception as exc:  # noqa: BLE001
            problems.append(problem_line(f"{name}.png", exc))
            continue
        if path is not None:
            out[name] = Path(path).name
    return out


def _write_report(path: Path, cfg: ExperimentConfig, metrics: dict, files: dict[str, str],
                  problems: list[str]) -> None:
    from tracker.analysis.report import report_markdown

    text = report_markdown(cfg, metrics, files)
    if problems:
        text += "\n## Problems\n\nThe run's numbers and recording are complete; these outputs are not:\n\n"
        text += "".join(f"- {p}\n" for p in problems)
    write_text_atomic(path, text)


#: The last ball-free baseline, by :func:`baseline_key` (the physics is deterministic, so reusing it
#: gives the same numbers as running it again).
_BASELINES: dict[str, Any] = {}


def baseline_key(cfg: ExperimentConfig) -> str:
    """What the ball-free run depends on: the config without balls, schedule, names or outputs."""
    from tracker.experiments.config import ImpactConfig, OutputsConfig, ScheduleConfig

    plain = cfg.replace(name="run", description="", balls=[], schedule=ScheduleConfig(), impact=ImpactConfig(),
                        outputs=OutputsConfig())
    object.__setattr__(plain, "file_times", {})  # how times were spelled does not change the run
    return dump_config(plain) + f"# clip mtime {os.path.getmtime(cfg.clip.path)}"


def _timed_sim(prep: Prepared, balls: bool, gui: bool, progress: bool, desc: str, timing: dict, key: str,
               keep_interrupted: bool = False):
    cfg = prep.config
    bar = None
    on_step = None
    if progress:
        from tqdm import tqdm

        dur = cfg.duration if cfg.duration is not None else prep.reference.duration - cfg.clip.start
        bar = tqdm(total=max(int(round(dur / cfg.sim.dt)), 0), unit="step", leave=False,
                   desc=f"{desc}, clip time {cfg.clip.start:.2f}-{cfg.clip.start + dur:.2f} s")

        def on_step(_row: dict) -> None:
            bar.update(1)

    t0 = time.perf_counter()
    try:
        result = simulate(prep, balls=balls, gui=gui, on_step=on_step, keep_interrupted=keep_interrupted)
    finally:
        if bar is not None:
            bar.close()
    timing[key] = time.perf_counter() - t0
    return result


def ball_radii(cfg: ExperimentConfig) -> tuple[float, ...]:
    """Radius of each configured ball, m (from its preset)."""
    from tracker.scenarios.balls import get_ball

    return tuple(float(get_ball(b.preset, b.mass).radius) for b in cfg.balls)
