"""Figures of :mod:`tracker.reproduce.vt`."""

from __future__ import annotations

from pathlib import Path


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_free(runs: dict, path: Path, k_soft: float, k_stiff: float) -> None:
    """Shoulder angle in free space, K soft and stiff, with ``lcp`` f0 and without f0."""
    import numpy as np

    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, f0 in zip(axes, ("lcp", "none")):
        soft, stiff = runs[f0]
        ax.plot(soft.t, soft.q_ref[:, 0], "k:", label="reference")
        ax.plot(soft.t, soft.q[:, 0], label=f"K = {k_soft:g}")
        ax.plot(stiff.t, stiff.q[:, 0], "--", label=f"K = {k_stiff:g}")
        ax.set_title(f"shoulder, f0 = {f0} (max |Δq| = {np.abs(soft.q - stiff.q).max():.1e} rad)")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("rad")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_fig1(runs: dict, shown: list[str], path: Path) -> None:
    """Hand and boxes against time, and the contact forces, for the runs ``shown``."""
    plt = _plt()
    fig, axes = plt.subplots(2, len(shown), figsize=(4.4 * len(shown), 6.4), sharex=True)
    for col, label in enumerate(shown):
        r = runs[label]
        ax = axes[0, col]
        ax.plot(r.t, r.hand_ref_x, "k:", label="hand reference")
        ax.plot(r.t, r.hand_x, label="hand tip")
        ax.plot(r.t, r.small_x, label="small box")
        ax.plot(r.t, r.large_x, label="large box")
        ax.set_title(label.replace(", K", "\nK"), fontsize=9)
        ax.set_ylabel("x (m)")
        ax.legend(fontsize=7)
        ax = axes[1, col]
        ax.plot(r.t, r.hand_force, label="arm–box")
        ax.plot(r.t, r.box_force, label="box–box")
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylabel("normal force (N)")
        ax.set_xlabel("t (s)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_humanoid(clip_rows: dict, scen: dict, path: Path) -> None:
    """Bars: mean joint error per clip (log scale) and peak deviation per ball scenario."""
    import numpy as np

    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, data, key, ylabel in ((axes[0], clip_rows, "err", "mean joint error (rad)"),
                                  (axes[1], scen, "peak", "peak deviation (rad)")):
        names = list(data)
        if not names:
            continue
        labels = list(data[names[0]])
        width = 0.8 / len(labels)
        for i, lab in enumerate(labels):
            ax.bar(np.arange(len(names)) + i * width, [data[n][lab][key] for n in names], width, label=lab)
        ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2)
        ax.set_xticklabels([n.replace(".bvh", "")[:18] for n in names], rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
    axes[0].set_yscale("log")
    axes[0].set_title("clips: mean joint error")
    axes[1].set_title("ball scenarios: peak deviation")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
