"""One self-contained HTML page for a result folder or a sweep folder (``tracker report --html``).

The page replays the run in 3D (three.js, vendored and inlined: no network when it is
viewed) from the poses :mod:`tracker.analysis.html_scene` computes, and shows the run's
metrics, report and plots beside the viewer. A sweep folder gets a table of its runs and a
selector that shows each in the viewer. The page honours ``#t=SECONDS`` (show that time,
paused), ``run=KEY`` (a sweep's run), ``ghost=overlay|beside|off``, ``follow=0`` and
``play=1`` in its URL fragment.

Layout of the package data: ``html/page.html`` (the page, with ``<!--TRACKER:name-->``
slots), ``html/viewer.js`` (the viewer module), ``vendor/three/`` (three.js, see its README).
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracker.errors import TrackerError
from tracker.readfile import load_json_bounded, read_bytes_bounded, read_text_bounded, show_path

#: The vendored three.js release (``vendor/three/README.md``).
THREE_VERSION = "0.170.0"
#: Most runs of a sweep whose recordings are embedded (the table lists every run).
DEFAULT_MAX_RUNS = 100
#: Largest plot, report, metrics and summary files read, bytes.
MAX_PNG_BYTES = 16 << 20
MAX_TEXT_BYTES = 4 << 20
_HERE = Path(__file__).resolve().parent
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass
class RunEntry:
    """One run of the page: its name, viewer data (None: nothing to replay, ``note`` says why), side panel."""

    name: str
    scene: dict[str, Any] | None
    panel: str
    note: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass
class Page:
    """What :func:`build_page` made: the HTML text and one line per problem met in a sweep's runs."""

    html: str
    kind: str  # "run" or "sweep"
    runs: int
    problems: list[str] = field(default_factory=list)


def folder_kind(path: str | Path) -> tuple[str, Path]:
    """``("run", folder)`` or ``("sweep", folder)`` for a result folder, its recording.npz, or a sweep folder.

    Raises:
        TrackerError: one line naming ``path``: missing, a file other than a recording, or a folder
            that is neither a run's nor a sweep's.
    """
    p = Path(path)
    shown = show_path(p)
    try:
        if p.is_file() and p.name == "recording.npz":
            return "run", p.parent
        if not p.exists():
            raise TrackerError(f"{shown}: no such result folder")
        if not p.is_dir():
            raise TrackerError(f"{shown}: not a result folder (give the folder that 'tracker run', 'tracker "
                               f"scenario', 'tracker track --out' or 'tracker sweep' wrote)")
        if (p / "recording.npz").exists():
            return "run", p
        if (p / "sweep.yaml").is_file() or (p / "runs").is_dir():
            return "sweep", p
    except OSError as exc:  # a name too long for the system, a folder we may not list
        raise TrackerError(f"{shown}: cannot read ({exc.strerror or exc})") from None
    why = " (a metrics.json but no recording: was the run's outputs.recording off?)" \
        if (p / "metrics.json").is_file() else ""
    raise TrackerError(f"{shown}: no recording.npz in this folder{why}; not a result folder of 'tracker run', "
                       f"'tracker scenario' or 'tracker track --out', nor a sweep folder (runs/)")


# -- side panel: metrics, report, plots ------------------------------------------------------------

def _png_uri(path: Path) -> str:
    data = read_bytes_bounded(path, "plot", MAX_PNG_BYTES)
    if not data.startswith(_PNG_MAGIC):
        raise TrackerError(f"{show_path(path)}: not a PNG image")
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def read_metrics(folder: Path) -> dict[str, Any]:
    """The folder's ``metrics.json`` (``{}`` when there is none).

    Raises:
        TrackerError: the file is unreadable, not JSON, or not an object (one line naming it).
    """
    path = folder / "metrics.json"
    if not path.exists():
        return {}
    data = load_json_bounded(read_text_bounded(path, "metrics", MAX_TEXT_BYTES), show_path(path))
    if not isinstance(data, dict):
        raise TrackerError(f"{show_path(path)}: expected a JSON object of metrics")
    return data


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"  # as in metrics.json
    if isinstance(value, float):
        return f"{value:.6g}"
    if value is None:
        return "-"
    return str(value)


def metrics_table(metrics: dict[str, Any]) -> str:
    """``metrics.json`` as HTML: scalars in one table, each nested mapping in a collapsible one."""
    if not metrics:
        return ""
    rows, nested = [], []
    for key, value in metrics.items():
        if isinstance(value, dict):
            sub = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(_cell(v))}</td></tr>"
                          for k, v in value.items() if not isinstance(v, (dict, list)))
            nested.append(f"<details><summary>{html.escape(key)}</summary><table>{sub}</table></details>")
        else:
            text = json.dumps(value) if isinstance(value, list) else _cell(value)
            rows.append(f"<tr><td>{html.escape(key)}</td><td>{html.escape(text)}</td></tr>")
    return f"<h3>metrics.json</h3><table class='metrics'>{''.join(rows)}</table>{''.join(nested)}"


_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|!\[([^\]]*)\]\(([^)\s]+)\)|\[([^\]]+)\]\(([^)\s]+)\)")


def _inline(text: str, images: dict[str, str]) -> str:
    """Inline markdown of one line: code, bold, images (embedded when given), links (their text)."""
    out, last = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[last:m.start()]))
        code, bold, alt, src, label, _href = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif bold is not None:
            out.append(f"<b>{html.escape(bold)}</b>")
        elif src is not None:
            uri = images.get(src)
            out.append(f"<img alt='{html.escape(alt, quote=True)}' src='{uri}'>" if uri else
                       f"<i>[{html.escape(alt or src)}]</i>")
        else:
            out.append(f"<u>{html.escape(label)}</u>")  # the file may not be beside the page
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def render_markdown(text: str, images: dict[str, str] | None = None) -> str:
    """The markdown of ``report.md`` as simple HTML: headings, paragraphs, lists, tables, inline marks.

    Args:
        images: file name -> data URI of the images the report shows.
    """
    images = images or {}
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        if not line.strip():
            i += 1
        elif m := re.match(r"(#{1,6})\s+(.*)", line):
            level = min(len(m.group(1)) + 1, 6)  # the page's title is the h1
            out.append(f"<h{level}>{_inline(m.group(2), images)}</h{level}>")
            i += 1
        elif line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-*:?", c) for c in cells):
                    rows.append("<tr>" + "".join(f"<td>{_inline(c, images)}</td>" for c in cells) + "</tr>")
                i += 1
            out.append(f"<table>{''.join(rows)}</table>")
        elif re.match(r"\s*[-*]\s+", line):
            items = []
            while i < len(lines) and re.match(r"\s*[-*]\s+", lines[i]):
                item = re.sub(r"^\s*[-*]\s+", "", lines[i])
                items.append(f"<li>{_inline(item, images)}</li>")
                i += 1
            out.append(f"<ul>{''.join(items)}</ul>")
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not re.match(r"(#{1,6}\s|\s*\||\s*[-*]\s)", lines[i]):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(' '.join(para), images)}</p>")
    return "\n".join(out)


def side_panel(folder: Path, metrics: dict[str, Any]) -> str:
    """The run's report (``report.md``, its plots embedded), the plots it does not show, and ``metrics.json``."""
    pngs = sorted(p for p in folder.glob("*.png") if p.is_file())
    images = {p.name: _png_uri(p) for p in pngs}
    parts = []
    report = folder / "report.md"
    shown: set[str] = set()
    if report.exists():
        text = read_text_bounded(report, "report", MAX_TEXT_BYTES)
        parts.append(f"<div class='report'>{render_markdown(text, images)}</div>")
        shown = {name for name in images if f"]({name})" in text}
    for name, uri in images.items():
        if name not in shown:
            parts.append(f"<figure><img alt='{html.escape(name, quote=True)}' src='{uri}'>"
                         f"<figcaption>{html.escape(name)}</figcaption></figure>")
    parts.append(metrics_table(metrics))
    return "\n".join(parts)


# -- runs and sweeps -------------------------------------------------------------------------------

def run_entry(folder: Path, name: str, max_fps: float) -> RunEntry:
    """A run folder's viewer data and panel.

    Raises:
        TrackerError: a missing or unreadable recording, metrics.json, report or plot (one line naming it).
    """
    from tracker.analysis.html_scene import scene
    from tracker.character.model import load_model
    from tracker.sim.recording import Recording

    rec_path = folder / "recording.npz"
    if not rec_path.exists():
        raise TrackerError(f"{show_path(folder)}: no recording.npz in this folder")
    rec = Recording.load(rec_path).finite_steps()  # a diverged run's last step may hold NaN
    if rec.n_steps == 0:
        raise TrackerError(f"{show_path(rec_path)}: no steps to show (the run {rec.status}"
                           + (f": {rec.message})" if rec.message else ")"))
    model = load_model(rec.meta.get("model") or "humanoid")
    if tuple(model.layout.names) != tuple(n for n, _ in rec.joints):
        raise TrackerError(f"{show_path(rec_path)}: the recording's joints do not match model {model.name!r}")
    config = folder / "config.yaml"
    data = scene(rec, model, config if config.is_file() else None, max_fps)
    metrics = read_metrics(folder)
    return RunEntry(name, data, side_panel(folder, metrics), metrics=metrics)


def sweep_rows(folder: Path) -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of a sweep: ``summary.csv`` when written, else each run folder's ``metrics.json``."""
    summary = folder / "summary.csv"
    runs_dir = folder / "runs"
    found = sorted(p.name for p in runs_dir.iterdir() if p.is_dir()) if runs_dir.is_dir() else []
    cols: list[str] = ["run"]
    rows: list[dict[str, str]] = []
    if summary.exists():
        reader = csv.DictReader(io.StringIO(read_text_bounded(summary, "sweep summary", MAX_TEXT_BYTES)))
        cols = list(reader.fieldnames or ["run"])
        rows = [dict(r) for r in reader if r.get("run")]
    listed = {r.get("run") for r in rows}
    extra = [n for n in found if n not in listed]
    if extra:  # an unfinished sweep (no summary yet) or runs added since
        keys = ("status", "steps", "joint_error_mean_rad", "joint_error_max_rad")
        cols += [k for k in keys if k not in cols]
        for n in extra:
            try:
                m = read_metrics(runs_dir / n)
            except TrackerError:
                m = {"status": "unreadable metrics.json"}
            rows.append({"run": n, **{k: _cell(m.get(k)) for k in keys}})
    return cols, rows


def sweep_entries(folder: Path, max_fps: float, max_runs: int) -> tuple[list[str], list[dict[str, str]],
                                                                       list[RunEntry], list[str]]:
    """The sweep's columns and rows, one entry per run (a broken run: a note, not an error), the problems met."""
    cols, rows = sweep_rows(folder)
    entries, problems = [], []
    for k, row in enumerate(rows):
        name = row["run"]
        run_dir = folder / "runs" / name
        if k >= max_runs:
            entries.append(RunEntry(name, None, "", f"not embedded (the page holds the first {max_runs} runs; "
                                                    f"see --max-runs)"))
            continue
        try:
            entry = run_entry(run_dir, name, max_fps)
        except TrackerError as exc:
            note = " ".join(str(exc).split())
            if "no recording.npz" not in note:
                problems.append(note)
            try:
                panel = side_panel(run_dir, read_metrics(run_dir)) if run_dir.is_dir() else ""
            except TrackerError:
                panel = ""
            entry = RunEntry(name, None, panel, note)
        entries.append(entry)
    if not rows:
        raise TrackerError(f"{show_path(folder)}: a sweep folder without runs (nothing in runs/ and no summary.csv)")
    return cols, rows, entries, problems


def sweep_table(cols: list[str], rows: list[dict[str, str]], entries: list[RunEntry]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for k, (row, e) in enumerate(zip(rows, entries)):
        cells = "".join(f"<td>{html.escape(_short(row.get(c, '')))}</td>" for c in cols)
        mark = "" if e.scene is not None else " class='noview'"
        body.append(f"<tr data-run='{k}'{mark}>{cells}</tr>")
    return f"<table id='sweep-table'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _short(text: str) -> str:
    try:
        return f"{float(text):.5g}" if re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", text or "") else (text or "")
    except ValueError:
        return text


# -- the page ---------------------------------------------------------------------------------------

def _js_uri(path: Path) -> str:
    return "data:text/javascript;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _json_script(element_id: str, value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return f"<script type='application/json' id='{element_id}'>{text}</script>"


def assemble(title: str, subtitle: str, entries: list[RunEntry], table: str = "") -> str:
    """The page's HTML from its runs (the viewer shows the first with a scene)."""
    vendor = _HERE / "vendor" / "three"
    importmap = json.dumps({"imports": {"three": _js_uri(vendor / "three.module.min.js"),
                                        "three/addons/controls/OrbitControls.js": _js_uri(vendor / "OrbitControls.js")}})
    index, scripts, panels = [], [], []
    for k, e in enumerate(entries):
        index.append({"name": e.name, "scene": f"scene-{k}" if e.scene is not None else None, "note": e.note})
        if e.scene is not None:
            scripts.append(_json_script(f"scene-{k}", e.scene))
        panels.append(f"<template id='panel-{k}'>{e.panel}</template>")
    slots = {
        "title": html.escape(title), "subtitle": html.escape(subtitle), "sweep": table,
        "importmap": f"<script type='importmap'>{importmap}</script>",
        "data": _json_script("runs", index) + "\n" + "\n".join(scripts), "panels": "\n".join(panels),
        "viewer": (_HERE / "html" / "viewer.js").read_text(), "three_version": THREE_VERSION,
    }
    page = (_HERE / "html" / "page.html").read_text()
    return re.sub(r"<!--TRACKER:(\w+)-->", lambda m: slots[m.group(1)], page)


def build_page(path: str | Path, max_fps: float = 60.0, max_runs: int = DEFAULT_MAX_RUNS) -> Page:
    """The HTML page of a result folder (or its recording.npz) or a sweep folder.

    Raises:
        TrackerError: not a result or sweep folder; a run's recording, metrics, report or plot unreadable.
    """
    kind, folder = folder_kind(path)
    if kind == "run":
        entry = run_entry(folder, folder.name, max_fps)
        scene = entry.scene or {}
        m = entry.metrics
        subtitle = (f"{m.get('name', folder.name)}: model {scene.get('model')}, controller {m.get('controller', '?')}, "
                    f"root {m.get('root', '?')}, {scene.get('frames')} frames at {scene.get('fps', 0):.4g} fps, "
                    f"status {scene.get('status')}")
        return Page(assemble(f"tracker: {folder.name}", subtitle, [entry]), "run", 1)
    cols, rows, entries, problems = sweep_entries(folder, max_fps, max_runs)
    shown = sum(e.scene is not None for e in entries)
    subtitle = f"sweep of {len(entries)} runs ({shown} with a recording to replay); pick a run in the table"
    page = assemble(f"tracker sweep: {folder.name}", subtitle, entries, sweep_table(cols, rows, entries))
    return Page(page, "sweep", len(entries), problems)


def write_page(path: str | Path, out: str | Path | None = None, **options: Any) -> tuple[Path, Page]:
    """Build the page of ``path`` (see :func:`build_page`) and write it atomically to ``out``
    (default: ``report.html`` in the result or sweep folder)."""
    from tracker.atomic import atomic_target

    page = build_page(path, **options)
    target = Path(out) if out is not None else folder_kind(path)[1] / "report.html"
    with atomic_target(target, suffix=".html") as tmp:
        tmp.write_text(page.html, encoding="utf-8")
    return target, page
