"""A sweep's summary: one row per run (``summary.csv``) and the plots its file asks for.

Rows come from each run's ``metrics.json`` (:func:`read_metrics`: a missing, broken or oversized
file is a run without numbers, never an error); plots are ``line``, ``heatmap`` and
``largest_stable`` (:class:`~tracker.experiments.sweep.PlotSpec`).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tracker.atomic import write_text_atomic
from tracker.experiments.schema import show

if TYPE_CHECKING:
    from tracker.experiments.sweep import Sweep

#: The largest metrics.json read back, bytes (a run writes a few kB); a larger one counts as unreadable.
MAX_METRICS_BYTES = 16 * 2 ** 20


def read_metrics(folder: Path) -> tuple[dict | None, str | None]:
    """A run's metrics: ``(metrics, None)`` if its metrics.json holds a non-empty mapping, else
    ``(None, why)``: ``why`` is None without a metrics.json, else one phrase (empty, truncated,
    binary, not a mapping, not a regular file...)."""
    import json
    import stat

    path = folder / "metrics.json"
    try:
        info = path.stat()
    except (OSError, ValueError):  # none, a dangling link, a name too long
        return None, ("its metrics.json is a broken link" if os.path.islink(path) else None)
    if not stat.S_ISREG(info.st_mode):  # a folder, a FIFO (whose read would block)...
        return None, "its metrics.json is not a regular file"
    if info.st_size > MAX_METRICS_BYTES:
        return None, f"its metrics.json is over {MAX_METRICS_BYTES} bytes"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: not JSON, not UTF-8
        what = "empty" if info.st_size == 0 else f"unreadable ({type(exc).__name__})"
        return None, f"its metrics.json is {what}"
    if not isinstance(data, dict) or not data:
        return None, f"its metrics.json holds {show(data, 24)}, not a mapping of metrics"
    return data, None



def metric_value(metrics: dict, dotted: str) -> Any:
    """``metrics["impact"]["peak_deviation_rad"]`` for ``impact.peak_deviation_rad``; None if absent."""
    node: Any = metrics
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, sort_keys=True)
    return str(value)


def collect(sweep: Sweep, folder: Path) -> list[dict]:
    """One row per run in sweep order: ``run``, the parameters, ``finished``, the metrics (None if absent)."""
    rows = []
    for run in sweep.runs:
        rf = folder / "runs" / run.key
        metrics = read_metrics(rf)[0] or {}
        row = {"run": run.key, **dict(run.params), "finished": bool(metrics)}
        for m in sweep.config.metrics:
            row[m] = metric_value(metrics, m) if metrics else None
        if not metrics and (rf / "error.txt").is_file():
            row["status"] = "error"
        rows.append(row)
    return rows


def write_summary(sweep: Sweep, folder: Path) -> Path:
    """``summary.csv``: the rows of :func:`collect` (deterministic: no wall-clock columns)."""
    rows = collect(sweep, folder)
    cols = ["run", *sweep.keys, "finished", *[m for m in sweep.config.metrics if m not in sweep.keys]]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([_cell(row.get(c)) for c in cols])
    return write_text_atomic(folder / "summary.csv", buf.getvalue())


def _num(x: Any) -> float:
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        from tracker.numbers import number_from_text

        try:
            return number_from_text(x)
        except ValueError:
            return math.nan
    return math.nan


def largest_stable(rows: list[dict], x: str, gain: str, hue: str | None) -> dict[Any, list[tuple[float, float]]]:
    """Per hue value: ``[(x, largest gain whose run did not diverge)]`` over the finished runs.

    A gain counts as stable only if every smaller gain at the same x was stable too
    (the boundary, not an island of luck above it).
    """
    out: dict[Any, list[tuple[float, float]]] = {}
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["finished"]:
            groups.setdefault((r.get(hue) if hue else None, r[x]), []).append(r)
    for (h, xv), rs in groups.items():
        best = math.nan
        for r in sorted(rs, key=lambda r: _num(r[gain])):
            if r.get("diverged") is True or r.get("status") == "diverged":
                break
            best = _num(r[gain])
        out.setdefault(h, []).append((_num(xv), best))
    return {h: sorted(v) for h, v in out.items()}


def _axis_values(rows: list[dict], key: str) -> list[tuple[float, str]]:
    """Distinct values of a swept key, numerically sorted, with their labels as written (``1/60``)."""
    seen: dict[float, str] = {}
    for r in rows:
        v = r[key]
        seen.setdefault(_num(v), f"{v:.4g}" if isinstance(v, float) else str(v))
    return sorted(seen.items())


def write_summary_plots(sweep: Sweep, folder: Path) -> list[Path]:
    """The sweep's summary plots as PNG files; returns their paths."""
    if not sweep.config.plots:
        return []
    from matplotlib.figure import Figure

    from tracker.analysis.plots import save_figure

    rows = collect(sweep, folder)
    # Metrics named by plots but not listed in `metrics` are read here.
    for row, run in zip(rows, sweep.runs):
        rf = folder / "runs" / run.key
        if row["finished"]:
            metrics = read_metrics(rf)[0] or {}
            for spec in sweep.config.plots:
                if spec.metric and spec.metric not in row:
                    row[spec.metric] = metric_value(metrics, spec.metric)
            row.setdefault("diverged", metrics.get("diverged"))
            row.setdefault("status", metrics.get("status"))
    paths = []
    all_rows = rows
    for i, spec in enumerate(sweep.config.plots):
        rows = [r for r in all_rows if all(r.get(k) == v for k, v in spec.where.items())]
        fig = Figure(figsize=(6.4, 4.2))
        ax = fig.add_subplot(1, 1, 1)
        name = f"summary_{i}_{spec.kind}_{re.sub(r'[^A-Za-z0-9]+', '_', spec.metric or spec.gain or '')}.png"
        if spec.kind == "largest_stable":
            for h, pts in largest_stable(rows, spec.x, spec.gain, spec.hue).items():
                xs, ys = zip(*pts) if pts else ((), ())
                ax.plot(xs, ys, "o-", label=f"{spec.hue} = {h}" if spec.hue else None)
            ax.set_ylabel(f"largest stable {spec.gain}")
            ax.set_title(f"{sweep.config.name}: largest {spec.gain} that did not diverge", fontsize=9)
        elif spec.kind == "line":
            hues = sorted({r.get(spec.hue) for r in rows}, key=str) if spec.hue else [None]
            for h in hues:
                pts = sorted((_num(r[spec.x]), _num(r.get(spec.metric))) for r in rows
                             if r["finished"] and (spec.hue is None or r.get(spec.hue) == h))
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, "o-", label=f"{spec.hue} = {h}" if spec.hue else None)
            ax.set_ylabel(spec.metric)
            ax.set_title(f"{sweep.config.name}: {spec.metric}", fontsize=9)
        else:
            import numpy as np

            xs = _axis_values(rows, spec.x)
            ys = _axis_values(rows, spec.y)
            grid = np.full((len(ys), len(xs)), np.nan)
            for r in rows:
                if r["finished"]:
                    grid[[y for y, _ in ys].index(_num(r[spec.y])),
                         [x for x, _ in xs].index(_num(r[spec.x]))] = _num(r.get(spec.metric))
            im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(xs)), [label for _, label in xs], rotation=45 if len(xs) > 5 else 0)
            ax.set_yticks(range(len(ys)), [label for _, label in ys])
            fig.colorbar(im, ax=ax, label=spec.metric)
            ax.set_ylabel(spec.y)
            ax.set_title(f"{sweep.config.name}: {spec.metric}", fontsize=9)
        if spec.where:
            ax.set_title(ax.get_title() + " (" + ", ".join(f"{k} = {v}" for k, v in spec.where.items()) + ")",
                         fontsize=9)
        ax.set_xlabel(spec.x)
        if spec.kind != "heatmap":
            if spec.log_x:
                ax.set_xscale("log")
            if spec.log_y:
                ax.set_yscale("log")
            ax.grid(alpha=0.3, which="both")
            if spec.hue:
                ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(save_figure(fig, folder / name))
    return paths
