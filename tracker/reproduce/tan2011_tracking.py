"""Tan, Liu & Turk 2011 §3.4 — Figures 2-3 (tracking error over time per DOF) and the headline of
Tables 1-2 split into the cells the pendulum's masses were fitted to and the others.

Part of ``tracker reproduce tan2011``; the pendulum and its setup are :mod:`tracker.sim.tan2011`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tracker.sim import tan2011 as T

#: The masses were fitted to this row of both tables (4 formulations x 2 DOFs x 2 norms = 16 cells).
FITTED_KP = T.PAPER_KP[0]
COLOURS = {30.0: "tab:blue", 300.0: "tab:orange", 3000.0: "tab:green", 30000.0: "tab:red"}


@dataclass(frozen=True)
class Split:
    """Cells within ``rtol`` of the paper: among the fitted row, among the rest, and in all."""

    fitted: int
    fitted_total: int
    unfitted: int
    unfitted_total: int
    rtol: float

    @property
    def matched(self) -> int:
        return self.fitted + self.unfitted

    @property
    def total(self) -> int:
        return self.fitted_total + self.unfitted_total


def split_agreement(ours: dict, rtol: float = 0.2, fitted_kp: float = FITTED_KP) -> Split:
    """Numeric cells of the paper within ``rtol`` of ``ours``, split by whether their kp was fitted.

    ``ours``: ``(formulation, kp) -> cells or None`` (:func:`tracker.sim.tan2011.tables`); a diverged
    run matches none of its cells; cells the paper gives as NA are not counted.
    """
    counts = {True: [0, 0], False: [0, 0]}
    for key, paper in T.PAPER_TABLES.items():
        if paper is None:
            continue
        got, c = ours[key], counts[key[1] == fitted_kp]
        c[1] += len(paper)
        if got is not None:
            c[0] += sum(abs(g - p) <= rtol * p for g, p in zip(got, paper, strict=True))
    return Split(counts[True][0], counts[True][1], counts[False][0], counts[False][1], rtol)


def headline_markdown(ours: dict, next_pd: dict) -> tuple[str, dict]:
    """The split headline (markdown) and its numbers."""
    s20, s10, n20 = split_agreement(ours, 0.2), split_agreement(ours, 0.1), split_agreement(next_pd, 0.2)
    na = T.agreement(ours, 0.2).na_agree
    text = "\n".join([
        "| cells | within 20 % | within 10 % | with PD fed q̄(tₙ₊₁), within 20 % |", "|---|---:|---:|---:|",
        f"| kp = {FITTED_KP:g} (the masses were fitted to them) | {s20.fitted}/{s20.fitted_total} | "
        f"{s10.fitted}/{s10.fitted_total} | {n20.fitted}/{n20.fitted_total} |",
        f"| kp = 300, 3000, 30000 (predicted) | {s20.unfitted}/{s20.unfitted_total} | "
        f"{s10.unfitted}/{s10.unfitted_total} | {n20.unfitted}/{n20.unfitted_total} |",
        f"| all | {s20.matched}/{s20.total} | {s10.matched}/{s10.total} | {n20.matched}/{n20.total} |", "",
        f"Predicted cells within 20% of the paper: **{s20.unfitted}/{s20.unfitted_total}** (the kp = "
        f"{FITTED_KP:g} cells the masses were fitted to: {s20.fitted}/{s20.fitted_total}; "
        f"{s20.matched}/{s20.total} in all, a count that includes the fitted ones). "
        f"Divergence exactly where the paper reports NA: **{'yes' if na else 'no'}**.",
    ])
    return text, {"split20": s20, "split10": s10, "na_agree": na}


def error_series() -> dict[tuple[str, float], T.TrackingResult]:
    """Every formulation at every paper kp, explicit Euler at 1/60 s: ``(formulation, kp) -> result``."""
    return {(f, kp): T.track(f, kp) for f in T.FORMULATIONS for kp in T.PAPER_KP}


def figures23_markdown(series: dict) -> tuple[str, dict]:
    """When PD leaves the reference (by π rad) at the high gains; SPD's error over the last half period."""
    rows = ["| formulation | kp | leaves the reference at (s) | DOF1 RMS error, 2nd half (rad) "
            "| DOF2 RMS error, 2nd half (rad) |", "|---|---:|---|---:|---:|"]
    facts = {}
    for (f, kp), r in series.items():
        e = r.errors
        at = f"{(len(e) - 1) * T.PAPER_DT:.2f}" if r.diverged else "—"
        late = e[len(e) // 2:]
        rms = np.sqrt((late ** 2).mean(axis=0)) if not r.diverged else (math.nan, math.nan)
        facts[(f, kp)] = dict(diverged=r.diverged, at=(len(e) - 1) * T.PAPER_DT, rms=rms)
        cells = " | ".join("—" if r.diverged else f"{x:.4f}" for x in rms)
        rows.append(f"| {f} | {kp:g} | {at} | {cells} |")
    return "\n".join(rows), facts


def plot_figures23(series: dict, out: Path) -> None:
    """``tan2011_fig2.png`` (DOF 1) and ``tan2011_fig3.png`` (DOF 2): error against time, PD dashed,
    SPD solid, one colour per kp; left without, right with the reference velocity (as the paper's)."""
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    for dof, name in ((0, "tan2011_fig2.png"), (1, "tan2011_fig3.png")):
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), dpi=110, sharey=True)
        for ax, (pd, spd, title) in zip(axes, (("PD", "SPD", "without reference velocity"),
                                               ("PD with ref. velocity", "SPD with ref. velocity",
                                                "with reference velocity"))):
            for f, style in ((pd, "--"), (spd, "-")):
                for kp in T.PAPER_KP:
                    e = series[(f, kp)].errors[:, dof]
                    t = np.arange(len(e)) * T.PAPER_DT
                    ax.plot(t, e, style, color=COLOURS[kp], lw=1.0,
                            label=f"{f.split(' ')[0]} kp={kp:g}" + (" (diverges)" if series[(f, kp)].diverged else ""))
            ax.set_ylim(-0.6, 0.6)
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("time (s)")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel(f"error of DOF {dof + 1} (rad)")
        axes[1].legend(fontsize=6, ncol=2, loc="lower right")
        fig.suptitle(f"Tan 2011 Fig. {dof + 2}: tracking error at DOF {dof + 1}, PD (dashed) vs SPD (solid), "
                     "dt = 1/60 s", fontsize=10)
        fig.tight_layout()
        save_figure(fig, out / name, dpi=110)
        plt.close(fig)
