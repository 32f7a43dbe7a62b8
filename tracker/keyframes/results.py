"""The result folder of ``tracker keyframes``: metrics, plots (gains over time like Tan 2011 Fig. 5) and a report.

Folder layout (every file written atomically, ``metrics.json`` last)::

    keyframes.yaml    the keyframe file as given
    run.yaml          the resolved options (controller, dt, profile, power, gains)
    recording.npz     every step (``kp`` holds the summed stiffness of the two servos);
                      ``tracker replay`` plays it, the spline interpolation as the ghost
    gains.png         the two servos' gains and their sum over time (Fig. 5)
    keys.png          the root's path from above: keys, spline, simulated
    joints.png        the most moving joints: simulated vs spline, keys marked
    report.md         what ran and the pose error at each key
    metrics.json      the numbers (deterministic)
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import yaml

from tracker.atomic import write_json_atomic, write_text_atomic
from tracker.keyframes.run import (KeyframeOptions, key_errors, key_spacing, spline_tail_motion,
                                   tail_motion, unkeyed_joints)
from tracker.keyframes.track import KeyframeTrack


def effective_recording(rec, track: KeyframeTrack, model_spec: str):
    """The recording with ``kp`` = the two servos' summed stiffness per step, and the model's path in meta."""
    if rec.n_steps:
        w = np.array([np.add(*track.weights(float(t))) for t in rec.t])
        kp = rec.kp * w
    else:
        kp = rec.kp
    meta = {**rec.meta, "model": model_spec, "keyframes": track.source,
            "profile": track.profile.label()}
    return dataclasses.replace(rec, kp=kp, meta=meta)


def compliance(track: KeyframeTrack) -> float:
    """Mean summed gain of the joints between the first and the last key, as a fraction of ``k_p``."""
    ts = np.linspace(track.times[0], track.times[-1], 2001)
    wa, wb = track.weight_curves(ts)
    return float(np.mean(wa + wb))


def keyframe_metrics(rec, track: KeyframeTrack, opts: KeyframeOptions) -> dict:
    """Status, the pose error at each key, secondary motion of unkeyed joints, compliance."""
    keys = key_errors(rec, track)
    spacing = key_spacing(track)
    for row, d in zip(keys, spacing):
        e = row["root_position_m"]
        row["root_miss_ratio"] = None if (e is None or d <= 1e-9) else e / d
    reached = [k for k in keys if k["root_position_m"] is not None]

    def worst(field: str):
        vals = [k[field] for k in reached if k[field] is not None]
        return max(vals) if vals else None

    m = {
        "status": rec.status, "message": rec.message, "steps": rec.n_steps, "dt": opts.dt,
        "controller": opts.controller, "profile": track.profile.kind, "power": track.profile.power,
        "kp_per_kg": opts.kp_per_kg, "kd_ratio": opts.kd_ratio,
        "keys_reached": len(reached), "keys": keys,
        "key_root_position_error_max_m": worst("root_position_m"),
        "key_root_orientation_error_max_rad": worst("root_orientation_rad"),
        "key_joint_error_max_rad": worst("joint_max_rad"),
        "key_joint_error_mean_rad": (float(np.mean([k["joint_mean_rad"] for k in reached])) if reached else None),
        "key_root_miss_ratio_max": worst("root_miss_ratio"),
        "compliance": compliance(track),
    }
    fixed = unkeyed_joints(track)
    if fixed:
        m["secondary_motion"] = {**tail_motion(rec, track, fixed),
                                 "spline_peak_rad": spline_tail_motion(track, opts.dt, fixed)}
    if rec.n_steps:
        from tracker.analysis.metrics import joint_errors

        keyed = rec.t <= track.times[-1] + 1e-9
        if track.layout.joints and keyed.any():
            err = joint_errors(rec.layout, rec.q[keyed], rec.q_ref[keyed])
            m["spline_deviation_mean_rad"] = float(err.mean())
            m["spline_deviation_max_rad"] = float(err.max())
    return m


# -- plots -------------------------------------------------------------------------------------


def plot_gains(track: KeyframeTrack, path: Path, title: str = "") -> Path:
    """Fig. 5: the servo toward the previous key, toward the next, and their sum, in units of k_p."""
    from matplotlib.figure import Figure

    from tracker.analysis.plots import save_figure

    ts = np.linspace(0.0, track.duration, 1500)
    wa, wb = track.weight_curves(ts)
    fig = Figure(figsize=(8, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(ts, wa, color="tab:red", label="k_i (toward the previous key)")
    ax.plot(ts, wb, color="tab:blue", label="k_i+1 (toward the next key)")
    ax.plot(ts, wa + wb, color="black", lw=0.9, ls="--", label="sum")
    for t in track.times:
        ax.axvline(t, color="gray", lw=0.6, alpha=0.6)
    ax.set_xlabel("time (s); keys at the grey lines")
    ax.set_ylabel("gain / k_p")
    ax.set_title(f"Keyframe gains, {track.profile.label()} (Tan 2011 Fig. 5){' — ' + title if title else ''}",
                 fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return save_figure(fig, path)


def plot_root_path(rec, track: KeyframeTrack, path: Path, title: str = "") -> Path:
    """The root seen from above: key positions, the cubic spline and the simulated path."""
    from matplotlib.figure import Figure

    from tracker.analysis.plots import save_figure

    fig = Figure(figsize=(5.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    ts = np.linspace(0.0, track.duration, 600)
    sp = np.array([track.sample(t)[0][0:3] for t in ts])
    ax.plot(sp[:, 0], sp[:, 1], color="tab:orange", lw=1, label="cubic spline of the keys")
    if rec.n_steps:
        ax.plot(rec.q[:, 0], rec.q[:, 1], color="tab:blue", lw=1.4, label="simulated")
    k = track.key_q
    ax.plot(k[:, 0], k[:, 1], "o", color="tab:red", label="keys")
    for i, (x, y) in enumerate(k[:, 0:2]):
        ax.annotate(f"{i}: {track.times[i]:g} s", (x, y), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(f"Root path{' — ' + title if title else ''}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_joints(rec, track: KeyframeTrack, path: Path, n: int = 4, title: str = "") -> Path:
    """The ``n`` joints that move most: simulated vs spline angle (rotation angle for spherical joints)."""
    from matplotlib.figure import Figure

    from tracker.analysis.plots import joint_angles, save_figure

    fig = Figure(figsize=(8, 1.9 * max(n, 1) + 0.6))
    lay = track.layout
    if rec.n_steps and lay.joints:
        spread = {s.name: float(np.ptp(rec.q[:, s.q], axis=0).max()) for s in lay.joints}
        names = sorted(spread, key=spread.get, reverse=True)[:n]
    else:
        names = []
    for i, name in enumerate(names):
        ax = fig.add_subplot(len(names), 1, i + 1)
        sim, ref, labels = joint_angles(rec, name)
        for c in range(sim.shape[1]):
            ax.plot(rec.t, sim[:, c], lw=1.2, label=f"simulated {labels[c]}" if c == 0 else None)
            ax.plot(rec.t, ref[:, c], lw=0.8, ls="--", label="spline" if c == 0 else None)
        for tk in track.times:
            ax.axvline(tk, color="gray", lw=0.6, alpha=0.6)
        ax.set_ylabel(f"{name} (rad)", fontsize=8)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7, loc="upper right")
            ax.set_title(f"Most moving joints{' — ' + title if title else ''}", fontsize=9)
    if names:
        fig.axes[-1].set_xlabel("time (s); keys at the grey lines")
    fig.tight_layout()
    return save_figure(fig, path)


# -- report and folder ---------------------------------------------------------------------------


def _f(x, scale: float = 1.0, digits: int = 3) -> str:
    return "—" if x is None else f"{x * scale:.{digits}f}"


def report_markdown(m: dict, track: KeyframeTrack, files: dict[str, str]) -> str:
    lines = [f"# Keyframes: {Path(track.source).name}\n",
             f"{track.file.description}\n" if track.file.description else "",
             f"Model `{track.model}`, {len(track.times)} keys over {track.times[-1]:g} s (+{track.file.hold:g} s "
             f"hold), root {track.file.root}, gravity {'on' if track.file.gravity else 'off'}. Controller: two "
             f"{m['controller'].upper()} servos, k_p = {m['kp_per_kg']:g}·m_sub, k_d = {m['kd_ratio']:g}·k_p·dt, "
             f"dt = {m['dt']:.5g} s, profile {track.profile.label()} (mean summed gain between the first and last "
             f"key: {m['compliance']:.3f} k_p).\n",
             f"Status: **{m['status']}**{' — ' + m['message'] if m['message'] else ''}; {m['steps']} steps.\n",
             "## Pose error at each key\n",
             "| key | t (s) | root position (cm) | miss / spacing | root orientation (deg) | joints mean (deg) "
             "| joints max (deg) |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for k in m["keys"]:
        lines.append(f"| {k['key']} | {k['t']:g} | {_f(k['root_position_m'], 100, 2)} "
                     f"| {_f(k['root_miss_ratio'], 1, 2)} "
                     f"| {_f(k['root_orientation_rad'], 180 / np.pi, 1)} | {_f(k['joint_mean_rad'], 180 / np.pi, 2)} "
                     f"| {_f(k['joint_max_rad'], 180 / np.pi, 2)} |")
    sm = m.get("secondary_motion")
    if sm:
        lines += ["", "## Secondary motion of the joints no key moves\n",
                  f"{len(sm['joints'])} joints ({', '.join(sm['joints'][:4])}"
                  f"{'…' if len(sm['joints']) > 4 else ''}): "
                  f"largest deflection {np.degrees(sm['peak_rad']):.2f} deg while keyed (cubic spline: "
                  f"{np.degrees(sm['spline_peak_rad']):.2f} deg), {np.degrees(sm['at_last_key_rad']):.2f} deg at "
                  f"the last key, {np.degrees(sm['end_rad']):.3f} deg at the end of the hold."]
    lines += ["", "## Figures\n"] + [f"![{k}]({v})" for k, v in files.items() if v.endswith(".png")]
    return "\n".join(line for line in lines if line is not None) + "\n"


def write_results(folder: Path, rec, track: KeyframeTrack, opts: KeyframeOptions, model_spec: str) -> tuple[dict, dict]:
    """Write the result folder; returns ``(metrics, files)``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json").unlink(missing_ok=True)
    shutil.copyfile(track.source, folder / "keyframes.yaml")
    write_text_atomic(folder / "run.yaml", yaml.safe_dump(
        {"keyframes": str(Path(track.source).resolve()), "model": model_spec,
         **{k: v for k, v in dataclasses.asdict(opts).items()}}, sort_keys=False))
    rec = effective_recording(rec, track, model_spec)
    rec.save(folder / "recording.npz")
    title = f"{Path(track.source).stem}, {opts.controller}, dt 1/{1 / opts.dt:.0f}"
    files = {"keyframes": "keyframes.yaml", "options": "run.yaml", "recording": "recording.npz"}
    plot_gains(track, folder / "gains.png", title)
    files["gains"] = "gains.png"
    plot_root_path(rec, track, folder / "keys.png", title)
    files["keys"] = "keys.png"
    if track.layout.joints:
        plot_joints(rec, track, folder / "joints.png", title=title)
        files["joints"] = "joints.png"
    m = keyframe_metrics(rec, track, opts)
    files["report"] = "report.md"
    write_text_atomic(folder / "report.md", report_markdown(m, track, files))
    files["metrics"] = "metrics.json"
    write_json_atomic(folder / "metrics.json", m)
    return m, files
