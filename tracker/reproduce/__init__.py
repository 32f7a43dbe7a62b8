"""Paper reproductions, run by ``tracker reproduce NAME``.

Each reproduction is one module of this package, listed in :data:`REPRODUCTIONS`
(name -> module), that provides:

* ``TITLE``: one line naming the paper and what is reproduced;
* ``run(out: Path, *, quick: bool = False) -> Path``: computes its tables and
  figures, writes them and a ``report.md`` into the folder ``out`` (created if
  needed; figures are linked from the report by file name) and returns the
  report's path. ``quick`` trades resolution for time (tests use it); the
  numbers in ``docs/NAME.md`` come from the full run.

A quick run says so in everything it writes (:func:`mark_quick`): a line under
the title of each markdown page, ``"quick": true`` in each JSON object, a banner
above each figure.

Modules are imported only when run, so ``tracker reproduce --list`` stays fast.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from tracker.errors import ConfigError

#: name -> module under ``tracker.reproduce``, in the order ``--list`` shows them.
REPRODUCTIONS: dict[str, str] = {
    "tan2011": "tracker.reproduce.tan2011",
    "weinstein2008": "tracker.reproduce.weinstein2008",
    "allen2007": "tracker.reproduce.allen2007",
    "vt": "tracker.reproduce.vt",
    "games105": "tracker.reproduce.games105",
}


def names() -> tuple[str, ...]:
    """The reproductions' names, in listing order."""
    return tuple(REPRODUCTIONS)


def load(name: str) -> ModuleType:
    """The module of reproduction ``name``.

    Raises:
        ConfigError: unknown name; the message lists the valid ones.
    """
    try:
        module = REPRODUCTIONS[name]
    except KeyError:
        raise ConfigError(
            f"unknown reproduction {name!r}; valid reproductions are: {', '.join(REPRODUCTIONS)}"
        ) from None
    return importlib.import_module(module)


def quick_note(name: str) -> str:
    """The sentence that marks a ``--quick`` run of reproduction ``name``."""
    return (f"QUICK RUN (tracker reproduce {name} --quick): reduced settings (coarser grids, fewer samples, "
            f"shorter runs); the full run's numbers are in docs/{name}.md")


def run(name: str, out: str | Path, *, quick: bool = False) -> Path:
    """Run reproduction ``name`` into the folder ``out``; returns the report's path."""
    module = load(name)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot create the output folder ({exc.strerror})") from None
    before = _stamps(out)
    report = Path(module.run(out, quick=quick))
    if quick:  # the docs blocks are compared, not read: they stay as written
        mark_quick([f for f, stamp in _stamps(out).items() if before.get(f) != stamp
                    and f.parent.name != "blocks"], quick_note(name))
    return report


def _stamps(folder: Path) -> dict[Path, tuple[int, int]]:
    """Every file under ``folder``: ``(mtime_ns, size)``, to tell the files a run wrote."""
    return {f: (f.stat().st_mtime_ns, f.stat().st_size) for f in folder.rglob("*") if f.is_file()}


def mark_quick(files: list[Path], note: str) -> None:
    """Mark the files of a quick run with ``note``: markdown pages get it as a quoted line under
    their title, JSON objects the keys ``quick`` (true) and ``quick_note``, PNG figures a red
    banner above them (the note's first clause). Other files are left as written."""
    import json

    from tracker.atomic import write_text_atomic

    for f in sorted(files):
        if f.suffix == ".md":
            lines = f.read_text(encoding="utf-8").split("\n")
            at = 1 if lines and lines[0].startswith("# ") else 0
            write_text_atomic(f, "\n".join(lines[:at] + ["", f"> **{note}.**"] + lines[at:]))
        elif f.suffix == ".json":
            data = json.loads(f.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                write_text_atomic(f, json.dumps({"quick": True, "quick_note": note, **data}, indent=2) + "\n")
        elif f.suffix == ".png":
            _banner(f, note.split(":")[0] + ": reduced settings, not the full reproduction")


def _banner(path: Path, note: str, band: int = 24) -> None:
    """Redraw the PNG at ``path`` pixel for pixel under a ``band``-pixel banner reading ``note``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    from tracker.atomic import atomic_target

    image = imread(path)
    h, w = image.shape[:2]
    fig = Figure(figsize=(w / 100, (h + band) / 100), dpi=100)
    FigureCanvasAgg(fig)
    fig.figimage(image, xo=0, yo=0, origin="upper")
    fig.text(0.5, 1 - band / 2 / (h + band), note, ha="center", va="center", fontsize=8, color="#b03a2e",
             weight="bold")
    with atomic_target(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=100, format="png")
