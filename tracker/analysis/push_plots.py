"""Tables and the survival plot of a push sweep (:func:`tracker.sim.push.run_sweep`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from tracker.atomic import write_text_atomic

_STYLE = {"none": ("0.5", ":"), "jacobian": ("C0", "-"), "ankle": ("C1", "--"), "hip": ("C2", "-.")}


def _csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write_sweep(folder: str | Path, rows: list[dict], table: list[dict]) -> list[Path]:
    """``survival.csv`` (every push), ``largest.csv`` (largest survived push) and ``survival.png``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = [write_text_atomic(folder / "survival.csv", _csv(rows)),
           write_text_atomic(folder / "largest.csv", _csv(table))]
    out.append(plot_survival(rows, folder / "survival.png"))
    return out


def plot_survival(rows: list[dict], path: str | Path) -> Path:
    """Stood (1) or fell (0) against push size, one panel per (link, direction), a line per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    links = list(dict.fromkeys(r["link"] for r in rows))
    dirs = list(dict.fromkeys(r["direction"] for r in rows))
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    fig, axes = plt.subplots(len(links), len(dirs), figsize=(3.2 * len(dirs), 2.4 * len(links)), squeeze=False,
                             sharex=True, sharey=True)
    for i, link in enumerate(links):
        for j, d in enumerate(dirs):
            ax = axes[i, j]
            for k, s in enumerate(strategies):
                sel = sorted((r for r in rows if (r["link"], r["direction"], r["strategy"]) == (link, d, s)),
                             key=lambda r: r["force_n"])
                f = np.array([r["force_n"] for r in sel])
                stood = np.array([0.0 if r["fell"] else 1.0 for r in sel]) + 0.04 * (k - len(strategies) / 2)
                color, ls = _STYLE.get(s, (f"C{k + 3}", "-"))
                ax.step(f, stood, where="mid", color=color, ls=ls, label=s)
            ax.set_title(f"{link}, from the {d}", fontsize=9)
            ax.set_yticks([0, 1], ["fell", "stood"])
            if i == len(links) - 1:
                ax.set_xlabel("push (N, 0.2 s)" if rows else "push (N)")
    axes[0, -1].legend(fontsize=7, loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)
