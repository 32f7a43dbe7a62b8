"""PNG plots of a recording: joint error, gains, reference against simulated angles, ball paths.

Matplotlib's object API with the Agg canvas (no pyplot state, no display).
Each ``plot_*`` function writes one file atomically and returns its path;
:func:`write_plots` writes the set a result folder gets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy.spatial.transform import Rotation

from tracker.analysis.impact import deviation
from tracker.analysis.metrics import joint_errors
from tracker.atomic import atomic_target

IMPACT_STYLE = {"color": "tab:red", "lw": 0.9, "ls": "--", "alpha": 0.8}
#: Smallest span of the ball-height axis, m (about a ball's diameter): a resting or rolling
#: ball's nanometre wobble stays a flat line instead of filling the panel like a bounce.
MIN_HEIGHT_SPAN = 0.2


def plain_axes(fig: Figure) -> None:
    """Tick labels as plain numbers: no ``1e-7+1.0998e-1`` offset or scientific notation on linear axes
    (a ball resting at 0.10999 m reads 0.11, not an offset from it)."""
    from matplotlib.ticker import ScalarFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, ScalarFormatter):
                fmt.set_useOffset(False)
                fmt.set_scientific(False)


def save_figure(fig: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write ``fig`` as PNG through a temporary file renamed into place (axes in plain numbers)."""
    path = Path(path)
    plain_axes(fig)
    FigureCanvasAgg(fig)
    with atomic_target(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    return path


def impact_marks(events: list, gap: float = 0.1) -> list[tuple[float, str]]:
    """Start of each contact episode: ``(t, link)`` for the first event of a ball after ``gap`` s without one."""
    last: dict = {}
    out = []
    for ev in sorted(events or [], key=lambda e: float(e["t"])):
        t, ball = float(ev["t"]), ev.get("ball")
        if ball not in last or t - last[ball] >= gap:
            out.append((t, str(ev.get("link", ""))))
        last[ball] = t
    return out


def _mark_impacts(ax, marks: list[tuple[float, str]], label: bool = True) -> None:
    for i, (t, link) in enumerate(marks):
        ax.axvline(t, **IMPACT_STYLE, label="impact" if (label and i == 0) else None)


def _title(rec) -> str:
    meta = rec.meta or {}
    bits = [str(meta.get(k)) for k in ("config", "controller", "root") if meta.get(k)]
    bits.append(f"dt = {rec.dt:.4g} s")
    if rec.diverged:
        bits.append("DIVERGED")
    return ", ".join(bits)


def plot_joint_error(rec, path: str | Path, baseline=None) -> Path:
    """Mean and max joint error over time (and the deviation from the baseline), impacts marked."""
    fig = Figure(figsize=(8, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    if rec.n_steps:
        err = joint_errors(rec.layout, rec.q, rec.q_ref)
        ax.plot(rec.t, err.mean(axis=1), label="mean over joints")
        ax.plot(rec.t, err.max(axis=1), lw=0.8, alpha=0.8, label="max over joints")
        if baseline is not None:
            t, dev, _ = deviation(rec, baseline)
            ax.plot(t, dev, color="tab:purple", label="deviation from the ball-free run (max over joints)")
    _mark_impacts(ax, impact_marks(rec.events))
    fell = (getattr(rec, "meta", None) or {}).get("fell_at")
    if fell is not None:  # tracker.sim.fall
        ax.axvline(fell, color="black", ls="-.", lw=1.4, label=f"fell at {fell:.2f} s")
    ax.set_xlabel("clip time (s)")
    ax.set_ylabel("joint error (rad)")
    ax.set_title(f"Tracking error — {_title(rec)}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return save_figure(fig, path)


def plot_gains(rec, path: str | Path) -> Path:
    """Stiffness ``kp`` of every actuated joint over time (log scale), impacts marked."""
    fig = Figure(figsize=(8, 4))
    ax = fig.add_subplot(1, 1, 1)
    lay = rec.layout
    changing = []
    for s in lay.joints:
        kp = rec.kp[:, s.v.start] if rec.n_steps else np.zeros(0)
        moves = kp.size and kp.max() > kp.min() * (1 + 1e-9)
        if moves:
            changing.append(s.name)
        ax.plot(rec.t, kp, lw=1.2 if moves else 0.7, alpha=1.0 if moves else 0.5,
                label=s.name if moves else None)
    _mark_impacts(ax, impact_marks(rec.events))
    if rec.n_steps and np.all(rec.kp[:, 6:] > 0):
        ax.set_yscale("log")
    ax.set_xlabel("clip time (s)")
    ax.set_ylabel("kp (N·m/rad)")
    note = "scheduled joints labelled" if changing else "constant gains"
    ax.set_title(f"Joint stiffness ({note}) — {_title(rec)}", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    if ax.get_legend_handles_labels()[1]:
        ax.legend(fontsize=7, ncol=3, loc="lower right")
    fig.tight_layout()
    return save_figure(fig, path)


def most_deviated(rec, n: int = 4) -> list[str]:
    """The ``n`` joints with the largest mean tracking error, largest first."""
    if rec.n_steps == 0:
        return [s.name for s in rec.layout.joints[:n]]
    good = np.isfinite(rec.q).all(axis=1)
    err = joint_errors(rec.layout, rec.q[good], rec.q_ref[good]).mean(axis=0)
    order = np.argsort(-err, kind="stable")[:n]
    return [rec.layout.joints[k].name for k in order]


def joint_angles(rec, name: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Simulated and reference angle of joint ``name``: ``(sim (N, k), ref (N, k), labels)``.

    Spherical joints give the rotation vector of the local rotation (x, y, z; rad), revolute ones the angle.
    """
    s = rec.layout[name]
    if s.kind == "spherical":
        def rv(q):
            out = np.full((len(q), 3), np.nan)
            ok = np.isfinite(q).all(axis=1) & (np.linalg.norm(q, axis=1) > 0)
            if ok.any():
                out[ok] = Rotation.from_quat(q[ok]).as_rotvec()
            return out

        return rv(rec.q[:, s.q]), rv(rec.q_ref[:, s.q]), ["x", "y", "z"]
    return rec.q[:, s.q], rec.q_ref[:, s.q], ["angle"]


def plot_joint_angles(rec, path: str | Path, joints: list[str] | None = None, n: int = 4) -> Path:
    """Reference (dashed) against simulated (solid) angles of the most deviated joints."""
    joints = joints or most_deviated(rec, n)
    fig = Figure(figsize=(8, 1.9 * len(joints) + 0.6))
    axes = [fig.add_subplot(len(joints), 1, i + 1) for i in range(len(joints))]
    colours = ["tab:blue", "tab:orange", "tab:green"]
    marks = impact_marks(rec.events)
    for ax, name in zip(axes, joints):
        sim, ref, labels = joint_angles(rec, name)
        for k, lab in enumerate(labels):
            ax.plot(rec.t, sim[:, k], color=colours[k], lw=1.1, label=f"{lab} simulated")
            ax.plot(rec.t, ref[:, k], color=colours[k], lw=1.0, ls="--", label=f"{lab} reference")
        _mark_impacts(ax, marks, label=False)
        ax.set_ylabel(f"{name}\n(rad)", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=len(labels), loc="upper right")
    axes[-1].set_xlabel("clip time (s)")
    axes[0].set_title(f"Most deviated joints: reference (dashed) vs simulated — {_title(rec)}", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_balls(rec, path: str | Path) -> Path | None:
    """Ball paths: side view (x, z), top view (x, y) with the character's root, and height over time."""
    balls = rec.balls
    if balls is None or balls.ndim != 3 or balls.shape[1] == 0 or rec.n_steps == 0:
        return None
    fig = Figure(figsize=(10, 3.6))
    side, top, height = (fig.add_subplot(1, 3, i + 1) for i in range(3))
    root = rec.q[:, 0:3]
    n = min(len(balls), len(root))
    for b in range(balls.shape[1]):
        xyz = balls[:n, b]
        ok = np.isfinite(xyz).all(axis=1)
        side.plot(xyz[ok, 0], xyz[ok, 2], label=f"ball {b}")
        top.plot(xyz[ok, 0], xyz[ok, 1], label=f"ball {b}")
        height.plot(rec.t[:n][ok], xyz[ok, 2], label=f"ball {b} height")
    side.plot(root[:n, 0], root[:n, 2], color="k", lw=1, label="character root")
    top.plot(root[:n, 0], root[:n, 1], color="k", lw=1, label="character root")
    for t, link in impact_marks(rec.events):
        k = min(int(np.searchsorted(rec.t, t)), n - 1)
        for b in range(balls.shape[1]):
            if np.isfinite(balls[k, b]).all():
                side.plot(balls[k, b, 0], balls[k, b, 2], "x", color="tab:red")
                top.plot(balls[k, b, 0], balls[k, b, 1], "x", color="tab:red")
    _mark_impacts(height, impact_marks(rec.events))
    z = balls[:n, :, 2][np.isfinite(balls[:n, :, 2])]
    if z.size and float(np.ptp(z)) < MIN_HEIGHT_SPAN:
        low = max(0.5 * (float(z.min()) + float(z.max()) - MIN_HEIGHT_SPAN), min(0.0, float(z.min())))
        height.set_ylim(low, low + MIN_HEIGHT_SPAN)
    side.set(xlabel="x (m)", ylabel="z (m)", title="side view")
    top.set(xlabel="x (m)", ylabel="y (m)", title="top view")
    height.set(xlabel="clip time (s)", ylabel="z (m)", title="ball height")
    side.set_aspect("equal", adjustable="datalim")
    top.set_aspect("equal", adjustable="datalim")
    for ax in (side, top, height):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Ball trajectories (x = impacts) — {_title(rec)}", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def write_plots(folder: str | Path, rec, baseline=None, top: int = 4) -> dict[str, str]:
    """The result folder's plots; returns ``{name: file name}`` of those written."""
    folder = Path(folder)
    out = {
        "joint_error": plot_joint_error(rec, folder / "joint_error.png", baseline).name,
        "gains": plot_gains(rec, folder / "gains.png").name,
        "joint_angles": plot_joint_angles(rec, folder / "joint_angles.png", n=top).name,
    }
    balls = plot_balls(rec, folder / "balls.png")
    if balls is not None:
        out["balls"] = balls.name
    return out
