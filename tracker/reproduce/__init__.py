"""Paper reproductions, run by ``tracker reproduce NAME``.

Each reproduction is one module of this package, listed in :data:`REPRODUCTIONS`
(name -> module), that provides:

* ``TITLE``: one line naming the paper and what is reproduced;
* ``run(out: Path, *, quick: bool = False) -> Path``: computes its tables and
  figures, writes them and a ``report.md`` into the folder ``out`` (created if
  needed; figures are linked from the report by file name) and returns the
  report's path. ``quick`` trades resolution for time (tests use it); the
  numbers in ``docs/NAME.md`` come from the full run.

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


def run(name: str, out: str | Path, *, quick: bool = False) -> Path:
    """Run reproduction ``name`` into the folder ``out``; returns the report's path."""
    module = load(name)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot create the output folder ({exc.strerror})") from None
    return Path(module.run(out, quick=quick))
