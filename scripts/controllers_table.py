"""The controller comparison table and plot from a finished ``configs/sweeps/controllers.yaml`` sweep.

Reads ``summary.csv`` (deterministic metrics) and each run's ``timing.json`` (wall clock: cost per
step; not shown for diverged runs, whose few steps are dominated by set-up), prints a markdown table
(the one in docs/guide/tracking.md) and writes ``controllers.png`` into the sweep folder.

Usage: ``python scripts/controllers_table.py results/sweeps/controllers``
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

SCENES = {"cmu_02_01_walk": "walk", "cmu_10_01_soccer_kick": "kick", "kick.bvh": "soccer ball",
          "forearm_pass": "volleyball"}


def _scene(path: str) -> str:
    return next((v for k, v in SCENES.items() if k in path), Path(path).stem)


def rows(folder: Path) -> list[dict]:
    out = []
    with open(folder / "summary.csv", newline="") as f:
        for r in csv.DictReader(f):
            timing = json.loads((folder / "runs" / r["run"] / "timing.json").read_text())
            steps = int(float(r["steps"] or 0))
            out.append({"controller": r["controller.name"], "dt": r["sim.dt"], "scene": _scene(r["clip.path"]),
                        "mean": r["joint_error_mean_rad"], "max": r["joint_error_max_rad"],
                        "diverged": r["diverged"].lower() == "true",
                        "ms": 1e3 * timing["sim_s"] / steps if steps else float("nan"),
                        "peak": r.get("impact.peak_deviation_rad", ""), "recover": r.get("impact.time_to_recover_s", "")})
    return out


def _f(x: str, fmt: str = "{:.4f}") -> str:
    try:
        return fmt.format(float(x))
    except (TypeError, ValueError):
        return "—"


def table(rs: list[dict]) -> str:
    lines = ["| scene | dt | controller | mean err (rad) | max err (rad) | diverged | ms/step | impact peak (rad) "
             "| recovery (s) |", "|---|---|---|---:|---:|---|---:|---:|---:|"]
    order = list(SCENES.values())
    for r in sorted(rs, key=lambda r: (order.index(r["scene"]) if r["scene"] in order else len(order),
                                       -float(r["dt"].split("/")[1]) if "/" in r["dt"] else float(r["dt"]),
                                       r["controller"])):
        cost = "—" if r["diverged"] else f"{r['ms']:.2f}"
        lines.append(f"| {r['scene']} | {r['dt']} | {r['controller']} | {_f(r['mean'], '{:.2g}')} | {_f(r['max'], '{:.3f}')} | "
                     f"{'yes' if r['diverged'] else 'no'} | {cost} | {_f(r['peak'], '{:.3f}')} | "
                     f"{_f(r['recover'], '{:.2f}')} |")
    return "\n".join(lines)


def plot(rs: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenes = [s for s in SCENES.values() if any(r["scene"] == s for r in rs)]
    fig, axes = plt.subplots(1, len(scenes), figsize=(4 * len(scenes), 3.5), sharey=True)
    for ax, scene in zip(axes, scenes):
        for ctrl in ("pd", "spd", "native", "analytic_pd", "vt"):
            pts = sorted((1.0 / eval(r["dt"]) if "/" not in r["dt"] else float(r["dt"].split("/")[1]),
                          float(r["mean"]) if r["mean"] else float("nan"), r["diverged"])
                         for r in rs if r["scene"] == scene and r["controller"] == ctrl)
            if not pts:
                continue
            hz = [p[0] for p in pts]
            ax.plot(hz, [p[1] for p in pts], "o-", label=ctrl)
            for h, e, d in pts:
                if d:
                    ax.plot([h], [e], "kx", ms=10)
        ax.set_xscale("log", base=2)
        ax.set_xticks([30, 60, 120], ["30", "60", "120"])
        ax.set_yscale("log")
        ax.set_xlabel("control rate (Hz)")
        ax.set_title(scene)
    axes[0].set_ylabel("mean joint error (rad); x = diverged")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(argv[0])
    rs = rows(folder)
    print(table(rs))
    plot(rs, folder / "controllers.png")
    print(f"\nwrote {folder / 'controllers.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
