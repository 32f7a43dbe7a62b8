"""Sweeps: one base config, a grid (and zipped lists) of overrides, one result folder per run.

A sweep file::

    name: stability
    description: largest stable gain against time step, PD and SPD
    base: ../tracking/demo_wave_spd.yaml     # relative to this file
    set:                                     # overrides every run gets
      sim.duration: 1.0
      outputs.plots: false
    grid:                                    # cartesian product, first key slowest
      controller.name: [pd, spd]
      sim.dt: [1/120, 1/60, 1/30]
    zip:                                     # lists of equal length, varied together (crossed with the grid)
      balls.0.speed: [4, 8]
      balls.0.mass: [0.3, 0.6]
    metrics: [diverged, joint_error_mean_rad, impact.peak_deviation_rad]   # summary.csv columns
    plots:
      - {x: sim.dt, metric: joint_error_mean_rad, hue: controller.name}     # a metric against a parameter
      - {x: sim.dt, y: controller.gains.scale, metric: diverged}           # heat map over two parameters
      - {kind: largest_stable, x: sim.dt, gain: controller.gains.scale, hue: controller.name}

A sweep has at most :data:`MAX_RUNS` runs, counted before any is built. Every
value of the grid is checked when the file is read (``--list`` too: a few runs in
full, the other values against their key's type and range, so it answers at
once), and every run's config before any run starts. A run's folder under the
sweep's output folder is named by its parameters (``name=pd__dt=1_60``: stable,
filesystem safe; a name over :data:`MAX_KEY_BYTES` bytes is cut and ends in a
hash of the whole name). A run is finished when its ``metrics.json`` holds a
mapping of metrics, so running the sweep again skips finished runs and a killed
sweep resumes; an empty, truncated, binary or non-mapping ``metrics.json``
counts as unfinished and its run is redone. ``summary.csv``
(one row per run, in grid order, parameters then metrics; no wall-clock
columns) and the summary plots are written at the end. Backends: ``local``
(worker processes) and ``ray`` (``ray.init()``: a local Ray instance, or the
cluster named by ``RAY_ADDRESS``; the output folder must then be shared).
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
import os
import re
import shutil
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tracker.atomic import write_json_atomic, write_text_atomic
from tracker.errors import ConfigError, TrackerError
from tracker.experiments.config import config_from_data, dump_config
from tracker.experiments.backends import parallel_map, require_ray
from tracker.experiments.schema import REQUIRED, Context, convert, parse, setting, show
from tracker.experiments.sweep_summary import read_metrics, write_summary, write_summary_plots
from tracker.yamlsafe import read_yaml_file

DEFAULT_METRICS = ("status", "diverged", "fell", "steps", "joint_error_mean_rad", "joint_error_max_rad",
                   "root_error_mean_m", "ee_error_mean_m", "torque_saturation")
#: The most runs a sweep may have (the grid's product times the zipped lists' length), counted before
#: any run is built: split a larger study into several sweeps.
MAX_RUNS = 10_000
#: The longest run folder name, bytes (filesystems allow 255): a longer one is cut, and ends in ``~`` and
#: 16 hex digits of the whole name's SHA-256 (still unique and stable, so a resumed sweep finds it).
MAX_KEY_BYTES = 200
#: How many runs :func:`load_sweep` validates in full (run 0, then the first run with each grid value);
#: the other values are checked against their key's type and range alone, and :func:`check_runs`
#: validates every run before any starts.
FULL_CHECKS = 16
#: The longest path the system takes, bytes (Linux PATH_MAX, the terminating NUL included).
PATH_MAX = 4096


@dataclass(frozen=True, kw_only=True)
class PlotSpec:
    """One summary plot."""

    kind: Literal["line", "heatmap", "largest_stable"] = setting(
        "line", "line: metric against x (a line per hue); heatmap: metric over x and y; "
        "largest_stable: the largest 'gain' that did not diverge, against x (a line per hue)")
    x: str = setting(REQUIRED, "swept key on the horizontal axis")
    y: str | None = setting(None, "swept key on the vertical axis (heatmap)")
    hue: str | None = setting(None, "swept key: one line per value (line, largest_stable)")
    metric: str | None = setting(None, "metric to show (dotted for nested ones, e.g. impact.peak_deviation_rad)")
    gain: str | None = setting(None, "swept gain key (largest_stable)")
    where: dict[str, Any] = setting({}, "only the runs whose swept keys have these values, e.g. {controller.name: spd}")
    log_x: bool = setting(False, "logarithmic x axis")
    log_y: bool = setting(False, "logarithmic y axis (line, largest_stable)")


@dataclass(frozen=True, kw_only=True)
class SweepConfig:
    """A sweep file. Build with :func:`load_sweep`."""

    name: str = setting("", "sweep name (default: the file name); the default output is results/sweeps/<name>",
                        name=True)
    description: str = setting("", "one line")
    base: str = setting(REQUIRED, "the experiment config every run starts from", path=True)
    set: dict[str, Any] = setting({}, "overrides every run gets (key path -> value)")
    grid: dict[str, list[Any]] = setting({}, "key path -> values; runs are the cartesian product (with the zipped "
                                         f"lists, at most {MAX_RUNS} runs)")
    zip: dict[str, list[Any]] = setting({}, "key path -> values of one common length, varied together")
    metrics: list[str] = setting(list(DEFAULT_METRICS), "summary.csv metric columns (dotted for nested metrics)")
    plots: list[PlotSpec] = setting([], "summary plots")


@dataclass(frozen=True)
class Run:
    """One run of a sweep: its parameters (in sweep order) and folder name."""

    params: tuple[tuple[str, Any], ...]
    key: str

    @property
    def overrides(self) -> list[tuple[str, Any]]:
        return list(self.params)


@dataclass(frozen=True)
class Sweep:
    """A validated sweep: the file, its settings, the base config data and every run."""

    path: Path
    config: SweepConfig
    base_raw: dict
    runs: tuple[Run, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.config.grid) + tuple(self.config.zip)

    def fixed(self) -> list[tuple[str, Any]]:
        return list(self.config.set.items())

    def run_config(self, run: Run):
        """The run's validated :class:`ExperimentConfig`."""
        return config_from_data(self.base_raw, self.config.base, self.fixed() + run.overrides,
                                origin=f"sweep {self.path.name} run {run.key}:")


# -- loading ------------------------------------------------------------------------------------


def load_sweep(path: str | Path) -> Sweep:
    """Read and validate a sweep file and every run's config.

    Raises:
        ConfigError: one line naming the file, the key path and the problem (for a run: which run).
    """
    path = Path(path)
    raw = read_yaml_file(path, "sweep")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping with base, grid, zip... got {show(raw)}")
    ctx = Context(path)
    cfg = parse(SweepConfig, raw, ctx)
    if not cfg.name:
        cfg = dataclasses.replace(cfg, name=re.sub(r"[^A-Za-z0-9._-]", "_", path.stem) or "sweep")
    for section in ("grid", "zip"):
        for k, values in getattr(cfg, section).items():
            if not values:
                raise ctx.error(f"{section}.{k}", "expected a non-empty list of values")
            if k in cfg.set:
                raise ctx.error(f"{section}.{k}", "is also under 'set'; give each key in one place")
    both = set(cfg.grid) & set(cfg.zip)
    if both:
        raise ctx.error(f"zip.{sorted(both)[0]}", "is also in the grid; give each key in one place")
    lengths = {k: len(v) for k, v in cfg.zip.items()}
    if len(set(lengths.values())) > 1:
        raise ctx.error("zip", "lists must have one common length, got "
                        + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
    n_zip = next(iter(lengths.values()), 1)
    n_runs = math.prod(len(v) for v in cfg.grid.values()) * n_zip
    if n_runs > MAX_RUNS:  # counted from the lists' lengths: no run is built
        sizes = [str(len(v)) for v in cfg.grid.values()] + ([f"{n_zip} zipped"] if lengths else [])
        raise ctx.error("grid" if cfg.grid else "zip", f"{n_runs} runs ({' x '.join(sizes)}) is over the limit of "
                        f"{MAX_RUNS}; split the sweep into smaller ones")
    keys = tuple(cfg.grid) + tuple(cfg.zip)
    for i, spec in enumerate(cfg.plots):
        _check_plot(spec, keys, ctx, f"plots.{i}")
    base_raw = read_yaml_file(cfg.base)
    if not isinstance(base_raw, dict):
        raise ConfigError(f"{cfg.base}: expected a mapping of sections (clip, controller, sim...), got {show(base_raw)}")
    base_raw.setdefault("name", cfg.name)
    runs = tuple(_runs(cfg, ctx))
    sweep = Sweep(path, cfg, base_raw, runs)
    _check_values(sweep)  # every run is validated in full by check_runs, before any starts
    return sweep


def _check_values(sweep: Sweep) -> None:
    """Validate run 0 and the first run with each grid value in full (up to :data:`FULL_CHECKS`
    runs, in run order), and every other grid value against its key's type and range alone
    (microseconds each: reading a sweep of :data:`MAX_RUNS` runs validates :data:`FULL_CHECKS` configs,
    not thousands, which took minutes).
    """
    cfg = sweep.config
    # (keys, values) per axis of the run order: each grid key, then the zipped keys together
    axes = [((k,), [(v,) for v in vs]) for k, vs in cfg.grid.items()]
    if cfg.zip:
        axes.append((tuple(cfg.zip), list(zip(*cfg.zip.values()))))
    strides, n = [], 1
    for _, vals in reversed(axes):  # the last axis varies fastest (see _runs)
        strides.insert(0, n)
        n *= len(vals)
    # the first run with value i of an axis: i on that axis, the first value on every other
    firsts = sorted({0} | {i * stride for stride, (_, vals) in zip(strides, axes) for i in range(1, len(vals))})
    checked = set(firsts[:FULL_CHECKS])
    for index in firsts[:FULL_CHECKS]:
        sweep.run_config(sweep.runs[index])
    for stride, (keys, vals) in zip(strides, axes):
        for i, group in enumerate(vals):
            if i * stride not in checked:
                for key, value in zip(keys, group):
                    _check_value(sweep, sweep.runs[i * stride], key, value)


def _check_value(sweep: Sweep, run: Run, key: str, value: Any) -> None:
    """``value`` against the type and range of the config key ``key`` (``balls.0.speed``); a key path
    the schema does not resolve here (a joint name under a mapping...) is left to the full checks."""
    found = _field_at(key)
    if found is None:
        return
    tp, meta = found
    label = f"sweep {sweep.path.name} run {run.key}: {key}={show(value)}"
    convert(tp, value, Context(sweep.config.base, overridden={key: label}), key, meta)


def _field_at(key: str) -> tuple[Any, Any] | None:
    """The schema type and field metadata of an experiment config key path, or None."""
    import typing

    from tracker.experiments.config import ExperimentConfig

    tp: Any = ExperimentConfig
    meta: Any = {}
    for part in re.sub(r"\[\s*([0-9]+)\s*\]", r".\1", key.strip()).split("."):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(args) == 1:
            tp = args[0]  # X | None
        if dataclasses.is_dataclass(tp):
            fields = {f.name: f for f in dataclasses.fields(tp) if f.init}
            if part not in fields:
                return None
            tp, meta = _hints(tp)[part], fields[part].metadata
        elif typing.get_origin(tp) is list and part.isdigit():
            tp = typing.get_args(tp)[0]
        else:
            return None
    return tp, meta


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    import typing

    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _check_plot(spec: PlotSpec, keys: tuple[str, ...], ctx: Context, where: str) -> None:
    need = {"line": ("x", "metric"), "heatmap": ("x", "y", "metric"), "largest_stable": ("x", "gain")}[spec.kind]
    for attr in need:
        if getattr(spec, attr) is None:
            raise ctx.error(f"{where}.{attr}", f"required for a {spec.kind} plot")
    for attr in ("x", "y", "hue", "gain"):
        v = getattr(spec, attr)
        if v is not None and v not in keys:
            raise ctx.error(f"{where}.{attr}", f"{show(v)} is not a swept key", keys)
    for k in spec.where:
        if k not in keys:
            raise ctx.error(f"{where}.where.{k}", f"{show(k)} is not a swept key", keys)


def _runs(cfg: SweepConfig, ctx: Context) -> list[Run]:
    grid_keys, zip_keys = list(cfg.grid), list(cfg.zip)
    shorts = _short_names(grid_keys + zip_keys)
    # each value's folder-name fragment once, not once per run
    grid = list(itertools.product(*[[(v, f"{shorts[k]}={_fmt(v)}") for v in vs] for k, vs in cfg.grid.items()]))
    zipped = (list(zip(*[[(v, f"{shorts[k]}={_fmt(v)}") for v in vs] for k, vs in cfg.zip.items()]))
              if zip_keys else [()])
    runs, seen = [], {}
    for g in grid:  # product() of no lists: one empty tuple
        for z in zipped:
            params = tuple(zip(grid_keys + zip_keys, (v for v, _ in g + z)))
            key = _folder_name("__".join(text for _, text in g + z) or "base")
            if key in seen:
                raise ctx.error("grid", f"runs {show(seen[key])} and {show(dict(params))} get the same folder name {show(key)}; "
                                "make the values distinct")
            seen[key] = dict(params)
            runs.append(Run(params, key))
    return runs


def _folder_name(key: str) -> str:
    """``key``, or if it is over :data:`MAX_KEY_BYTES` bytes long (UTF-8) its beginning, ``~`` and 16 hex
    digits of its SHA-256: a grid value as long as a file path still makes a folder the system accepts,
    the same folder on every invocation (the sweep resumes), and ``~`` marks it (no value gives one)."""
    raw = key.encode()
    if len(raw) <= MAX_KEY_BYTES:
        return key
    import hashlib

    head = raw[: MAX_KEY_BYTES - 17].decode("utf-8", "ignore").rstrip("_")
    return f"{head}~{hashlib.sha256(raw).hexdigest()[:16]}"


def _short_names(keys: list[str]) -> dict[str, str]:
    """Last path component of each key, or the whole key where that is ambiguous."""
    last = [k.split(".")[-1] for k in keys]
    return {k: (s if last.count(s) == 1 else k) for k, s in zip(keys, last)}


def _fmt(value: Any) -> str:
    """A value as a stable, filesystem-safe folder-name fragment."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    elif isinstance(value, (int, str)):
        text = str(value)
    else:
        text = show(value)
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", text).strip("_") or "_"


# -- running ------------------------------------------------------------------------------------


def _run_one(sweep_path: str, run_key: str, folder: str) -> tuple[str, str, str]:
    """Worker entry: load the sweep, run one run into ``folder``; returns ``(key, status, message)``."""
    sweep = _load_cached(sweep_path)
    run = next(r for r in sweep.runs if r.key == run_key)
    try:
        from tracker.experiments.runner import run_experiment

        cfg = sweep.run_config(run)
        out = run_experiment(cfg, folder, header=f"Run {run.key} of sweep {sweep.path}")
        return run.key, out.recording.status, out.recording.message
    except TrackerError as exc:
        Path(folder).mkdir(parents=True, exist_ok=True)
        write_text_atomic(Path(folder) / "error.txt", f"{exc}\n")
        return run.key, "error", str(exc)


_SWEEPS: dict[tuple[str, float], Sweep] = {}


def _load_cached(path: str) -> Sweep:
    key = (path, os.path.getmtime(path))
    if key not in _SWEEPS:
        _SWEEPS[key] = load_sweep(path)
    return _SWEEPS[key]


@dataclass
class SweepResult:
    """What :func:`run_sweep` did."""

    folder: Path
    ran: list[str]
    skipped: list[str]
    failed: dict[str, str]
    summary: Path
    plots: list[Path]
    seconds: float


def is_finished(folder: Path) -> bool:
    """A run is finished when its metrics.json (written last, atomically) holds a mapping of metrics;
    an empty, truncated, binary or non-mapping one (a full disk, a copy cut short) does not count."""
    return read_metrics(folder)[0] is not None


def run_sweep(sweep: Sweep, out: str | Path | None = None, workers: int = 1, backend: str = "local",
              progress: bool = False, log=None) -> SweepResult:
    """Run every unfinished run of ``sweep`` and write ``summary.csv`` and the summary plots.

    Args:
        out: the sweep's folder (default ``results/sweeps/<name>``).
        workers: parallel runs (local: processes; ray: CPUs requested for a local instance).
        backend: ``local`` or ``ray``.
        progress: a tqdm bar on stderr.
        log: ``log(text)`` for one-line notes (default: nothing).
    """
    if backend not in ("local", "ray"):
        raise ConfigError(f"backend {backend!r} is not one of: local, ray")
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")
    if backend == "ray":
        require_ray()
    log = log or (lambda _text: None)
    t0 = time.perf_counter()
    folder = Path(out) if out is not None else Path("results") / "sweeps" / sweep.config.name
    runs_dir = folder / "runs"
    _check_path_lengths(sweep, runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / "sweep.yaml", sweep.path.read_text())
    check_runs(sweep)
    todo, skipped = [], []
    for run in sweep.runs:
        rf = runs_dir / run.key
        metrics, why = read_metrics(rf)
        if why:
            log(f"run {run.key}: {why}; running it again")
        if metrics is not None:
            if _same_config(rf, sweep.run_config(run)):
                # a kill after metrics.json (written first) can leave a later file's temporary
                from tracker.atomic import remove_stale_temporaries

                remove_stale_temporaries(rf)
                skipped.append(run.key)
                continue
            log(f"run {run.key}: its config changed since it ran; running it again")
        if rf.is_symlink() or rf.is_file():  # not a run folder at all
            rf.unlink()
        elif rf.exists():  # an unfinished or stale run: start it from an empty folder
            shutil.rmtree(rf)
        todo.append(run)
    bar = None
    if progress:
        from tqdm import tqdm

        tqdm.monitor_interval = 0  # no monitor thread: worker processes are forked while the bar is shown
        bar = tqdm(total=len(sweep.runs), initial=len(skipped), unit="run", desc=sweep.config.name)
    results: dict[str, tuple[str, str]] = {}
    try:
        sweep_path = str(sweep.path.resolve())
        jobs = [(sweep_path, r.key, str((runs_dir / r.key).resolve())) for r in todo]
        if todo:  # workers forked from here start with the sweep and the retargeted clip in memory
            _SWEEPS[(sweep_path, os.path.getmtime(sweep_path))] = sweep
            from tracker.experiments.runner import warm_up

            warm_up(sweep.run_config(todo[0]))
        gen = parallel_map(_run_one, jobs, workers, backend)
        for key, status, message in gen:
            results[key] = (status, message)
            if bar is not None:
                bar.update(1)
                if status != "ok":
                    bar.set_postfix_str(f"{key}: {status}", refresh=False)
    finally:
        if bar is not None:
            bar.close()
    failed = {k: m for k, (s, m) in results.items() if s == "error"}
    summary = write_summary(sweep, folder)
    plots = write_summary_plots(sweep, folder)
    return SweepResult(folder, [r.key for r in todo], skipped, failed, summary, plots, time.perf_counter() - t0)


def _check_path_lengths(sweep: Sweep, runs_dir: Path) -> None:
    """Refuse an output folder whose run folders' files would have a path the system does not take."""
    where = os.path.abspath(runs_dir)
    for part in Path(where).parts:
        if len(os.fsencode(part)) > 255:
            raise ConfigError(f"--out {show(str(runs_dir))}: a folder name is over 255 bytes ({show(part)})")
    longest = max(len(r.key.encode()) for r in sweep.runs)
    # a run folder, then a file name and its temporary's (.recording.npz.XXXXXXXX.npz) inside it
    need = len(os.fsencode(where)) + 1 + longest + 1 + 40
    if need >= PATH_MAX:
        raise ConfigError(f"--out {show(str(runs_dir))}: the runs' files would have paths of {need} bytes, over the "
                          f"system's limit of {PATH_MAX}; choose a shorter output folder")


def check_runs(sweep: Sweep) -> None:
    """Plan every run's ball launches before any run starts.

    Raises:
        ConfigError: ``<sweep file>: run <key>: <why the launch cannot be made>``.
    """
    from tracker.experiments.runner import check_launches

    for run in sweep.runs:
        try:
            check_launches(sweep.run_config(run))
        except TrackerError as exc:
            raise ConfigError(f"{sweep.path}: run {run.key}: {exc}") from None


def _same_config(folder: Path, cfg) -> bool:
    path = folder / "config.yaml"
    if not path.is_file():
        return True  # nothing to compare with; trust metrics.json

    def strip(text: str) -> str:  # the header comments hold provenance, not settings
        return "".join(line + "\n" for line in text.splitlines() if not line.startswith("#"))

    try:
        return strip(path.read_text()) == strip(dump_config(cfg))
    except (OSError, ValueError):  # unreadable, not UTF-8: not the config it ran with, so run it again
        return False


def print_summary(result: SweepResult, sweep: Sweep, out=sys.stdout) -> None:
    """A few lines on what ran."""
    print(f"{sweep.config.name}: {len(sweep.runs)} runs ({len(result.ran)} ran, {len(result.skipped)} already "
          f"finished) in {result.seconds:.1f} s", file=out)
    for key, msg in result.failed.items():
        print(f"  run {key} failed: {msg}", file=out)
    print(f"wrote {result.summary}" + "".join(f", {p.name}" for p in result.plots), file=out)


def save_timing(result: SweepResult) -> None:
    """Wall-clock time of the last invocation, next to (not in) summary.csv."""
    write_json_atomic(result.folder / "timing.json", {"seconds": result.seconds, "ran": len(result.ran),
                                                     "skipped": len(result.skipped)})
