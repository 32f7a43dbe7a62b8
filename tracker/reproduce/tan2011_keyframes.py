"""Tan, Liu & Turk 2011 §4.2 — keyframe interpolation with cross-faded SPD gains, reproduced.

Part of ``tracker reproduce tan2011``: the gain profiles (Fig. 5), the toy mouse
(Fig. 6: spline vs SPD, PD with 10 and 0.005 m_sub) at 1/60 and 1/30 s, and the
humanoid example with p = 2, p = 4 and the linear profile. Writes
``tan2011_fig5.png``, ``tan2011_fig6.png``, ``tan2011_fig6_tail.png`` and
``tan2011_humanoid.png`` and returns the report's markdown.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tracker.keyframes.file import load_keyframes
from tracker.keyframes.profile import GainProfile
from tracker.keyframes.results import compliance, keyframe_metrics
from tracker.keyframes.run import KeyframeOptions, run_keyframes, tail_motion
from tracker.paths import DATA_DIR

MOUSE = DATA_DIR / "keyframes" / "mouse.yaml"
HUMANOID = DATA_DIR / "keyframes" / "humanoid_throw.yaml"
DTS = (1 / 60, 1 / 30)
#: The mouse runs: label, controller, k_p per kg of supported mass.
MOUSE_RUNS = (("SPD, k_p = 130 m_sub", "spd", 130.0), ("PD, k_p = 10 m_sub", "pd", 10.0),
              ("PD, k_p = 0.005 m_sub", "pd", 0.005))
HUMANOID_PROFILES = (("poly p = 2", "poly", 2.0), ("poly p = 4", "poly", 4.0), ("linear", "linear", 1.0))


def _deg(x) -> str:
    return "—" if x is None else f"{np.degrees(x):.1f}"


def _cm(x) -> str:
    return "—" if x is None else f"{x * 100:.1f}"


def plot_fig5(path: Path) -> None:
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    a = np.linspace(0, 1, 201)
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.0), dpi=110, sharey=True)
    for ax, prof in zip(axes, (GainProfile("linear"), GainProfile("poly", 2), GainProfile("poly", 8))):
        wa, wb = prof.weights(a)
        ax.plot(a, wa, color="tab:red", label="k_i / k_p")
        ax.plot(a, wb, color="tab:blue", label="k_i+1 / k_p")
        ax.plot(a, wa + wb, "k--", lw=0.8, label="sum")
        ax.set_title(prof.label(), fontsize=9)
        ax.set_xlabel("α (normalised time between keys)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("gain / k_p")
    axes[0].legend(fontsize=7)
    fig.suptitle("Tan 2011 Fig. 5: gain profiles of the two keyframe servos", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def _mouse_outline(kin, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-view polylines of the mouse at ``q``: body rectangle ``(5, 2)`` and spine+tail ``(14, 2)``."""
    from tracker.scenes.mouse import MouseParams

    p = MouseParams()
    pos, rot = kin.forward(q)
    bx, by, _ = p.body_size
    corners = np.array([[bx / 2, by / 2, 0], [bx / 2, -by / 2, 0], [-bx / 2, -by / 2, 0], [-bx / 2, by / 2, 0],
                        [bx / 2, by / 2, 0]])
    body = pos["body"][0] + rot["body"][0].apply(corners)
    names = [f"tail_{k}" for k in range(p.n_tail)]
    chain = [pos["body"][0] + rot["body"][0].apply([bx / 2 + p.head_radius, 0, 0])]
    chain += [pos[n][0] for n in names]
    chain.append(pos[names[-1]][0] + rot[names[-1]][0].apply([-p.tail_link_length, 0, 0]))
    return body[:, 0:2], np.array(chain)[:, 0:2]


def plot_fig6(rec, track, path: Path, times: tuple[float, ...]) -> None:
    """Fig. 6: mice drawn from above at ``times``: the keys (red), the spline (left) and SPD (right)."""
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure
    from tracker.character.model import load_model

    kin = load_model(track.file.model).kinematics()
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), dpi=110, sharex=True, sharey=True)
    for ax, title, source in ((axes[0], "cubic spline of the keys", "spline"), (axes[1], "SPD, p = 2", "spd")):
        for kq in track.key_q:
            body, chain = _mouse_outline(kin, kq)
            ax.plot(*body.T, color="tab:red", lw=1.0)
            ax.plot(*chain.T, color="tab:red", lw=1.0)
        for t in times:
            if source == "spline":
                q = track.sample(t)[0]
            else:
                q = rec.q[int(np.argmin(np.abs(rec.t - t)))]
            body, chain = _mouse_outline(kin, q)
            ax.plot(*body.T, color="tab:blue", lw=1.3)
            ax.plot(*chain.T, color="tab:blue", lw=1.3)
            ax.annotate(f"{t:.2f} s", chain[-1], fontsize=6, color="tab:blue")
        ax.set_title(title, fontsize=9)
        ax.set_aspect("equal")
        ax.grid(alpha=0.3)
        ax.set_xlabel("x (m)")
    axes[0].set_ylabel("y (m)")
    fig.suptitle("Tan 2011 Fig. 6: toy mouse from above; keys red, in-betweens blue", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def plot_tail(runs: dict, track, path: Path) -> None:
    """Tail bend (sum of the tail joint angles) over time, SPD at both steps, keys marked."""
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=110)
    for (label, rec) in runs.items():
        ax.plot(rec.t, np.degrees(rec.q[:, 7:].sum(axis=1)), label=label)
    ax.axhline(0, color="gray", ls="--", lw=1, label="cubic spline (rigid tail)")
    for t in track.times:
        ax.axvline(t, color="gray", lw=0.6, alpha=0.6)
    ax.set_xlabel("time (s); keys at the grey lines, the root stops at the last")
    ax.set_ylabel("tail bend, tip vs body (deg)")
    ax.set_title("Toy mouse: secondary motion of the tail", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def claims_table(claims: dict, spacing: np.ndarray) -> str:
    """The paper's four claims about the mouse beside what we measure at each time step."""
    cols = list(claims)
    rows = ["| the paper (§4.2) | " + " | ".join(f"ours, dt = {c} s" for c in cols) + " |",
            "|---|" + "---|" * len(cols)]

    def cells(fn) -> str:
        return " | ".join(fn(claims[c]) for c in cols)

    def spline(c):
        return f"largest tail bend {np.degrees(c[('spd', 130.0)][1]['secondary_motion']['spline_peak_rad']):.2f}°"

    def secondary(c):
        rec, m, _ = c[("spd", 130.0)]
        sm = m["secondary_motion"]
        tip = np.degrees(np.abs(rec.q[:, 7:].sum(axis=1)).max())
        return (f"each tail joint bends up to {np.degrees(sm['peak_rad']):.1f}° (tip vs body {tip:.0f}°); "
                f"{np.degrees(sm['at_last_key_rad']):.1f}° when the root stops → "
                f"{np.degrees(sm['end_rad']):.2f}° 1.5 s later")

    def explodes(c):
        rec, _, _ = c[("pd", 10.0)]
        return f"{rec.status} at {rec.n_steps * rec.dt:.2f} s" + (f" ({rec.message.split(': ', 1)[-1]})"
                                                                   if rec.diverged else "")

    def misses(c):
        rec, _, keys = c[("pd", 0.005)]
        ratio = [k["root_position_m"] / d for k, d in zip(keys, spacing)]
        tail = f"; diverges at {rec.n_steps * rec.dt:.2f} s (the tail)" if rec.diverged else ""
        return (f"at {len(keys)} key times the root is {min(k['root_position_m'] for k in keys) * 100:.0f}–"
                f"{max(k['root_position_m'] for k in keys) * 100:.0f} cm off, {min(ratio):.1f}–{max(ratio):.1f}× "
                f"the distance between keys{tail}")

    def meets(c):
        _, _, keys = c[("spd", 130.0)]
        lags = [k["closest_lag_s"] for k in keys[:-1]]
        return (f"root within {max(k['root_position_m'] for k in keys) * 100:.1f} cm of every key at its time "
                f"(≤ {max(k['root_position_m'] / d for k, d in zip(keys, spacing)):.2f}× the spacing); passes "
                f"within {max(k['closest_m'] for k in keys) * 100:.1f} cm of each, {min(lags):.2f}–{max(lags):.2f} s "
                f"late (k_d/k_p = 10 dt)")

    rows += [f"| cubic-spline interpolation: 'the tail appears rigid' | {cells(spline)} |",
             f"| SPD: 'realistic secondary motion on the tail' | {cells(secondary)} |",
             f"| PD, k_p = 10 m_sub: 'explodes quickly' | {cells(explodes)} |",
             f"| PD, k_p = 0.005 m_sub: 'does not meet the keyframes at the specified time' | {cells(misses)} |",
             f"| SPD: 'keyframes are well satisfied' | {cells(meets)} |"]
    return "\n".join(rows)


def mouse_section(out: Path) -> tuple[list, dict]:
    kf = load_keyframes(MOUSE)
    rows = ["| dt | interpolation | status | root error at key times (cm) | closest pass (cm), lag (s) "
            "| orientation error (deg) | tail: largest bend of a joint (deg) | at last key → end of hold (deg) |",
            "|---|---|---|---:|---:|---:|---:|---:|"]
    spd_runs, spd_track, spd_rec = {}, None, None
    claims: dict[str, dict] = {}
    for dt in DTS:
        step = f"1/{round(1 / dt)}"
        c = claims[step] = {}
        for label, ctrl, kp in MOUSE_RUNS:
            rec, track, _ = run_keyframes(kf, KeyframeOptions(ctrl, dt, kp_per_kg=kp))
            m = keyframe_metrics(rec, track, KeyframeOptions(ctrl, dt, "poly", 2.0, kp, kf.kd_ratio))
            keys = [k for k in m["keys"] if k["root_position_m"] is not None]
            c[(ctrl, kp)] = (rec, m, keys)
            if ctrl == "spd":
                spd_runs[f"SPD, dt = {step} s"] = rec
                if dt == DTS[0]:
                    spd_track, spd_rec = track, rec
                sm0 = m["secondary_motion"]["spline_peak_rad"]
                rows.append(f"| {step} | cubic spline | — | 0 (by construction) | — | 0 | {_deg(sm0)} | — |")
            status = "ok" if rec.status == "ok" else f"diverged at {rec.n_steps * dt:.2f} s"
            err = ", ".join(_cm(k["root_position_m"]) for k in keys) or "—"
            close = ", ".join(f"{_cm(k['closest_m'])} @ {k['closest_lag_s']:+.2f}" for k in keys
                              if k["closest_m"] is not None) or "—"
            ori = ", ".join(_deg(k["root_orientation_rad"]) for k in keys) or "—"
            sm = m["secondary_motion"]
            after = (f"{_deg(sm['at_last_key_rad'])} → {np.degrees(sm['end_rad']):.2f}"
                     if rec.status == "ok" else "—")
            rows.append(f"| {step} | {label} | {status} | {err} | {close} | {ori} | {_deg(sm['peak_rad'])} | {after} |")
    plot_fig6(spd_rec, spd_track, out / "tan2011_fig6.png", (0.4, 1.15, 1.8, 2.5, 3.2, 3.8))
    plot_tail(spd_runs, spd_track, out / "tan2011_fig6_tail.png")
    spacing = np.linalg.norm(np.diff(spd_track.key_q[:, 0:3], axis=0), axis=1)
    # The paper's own gains on the tail too (no 0.01 scale): how rigid SPD keeps it.
    rec130, track130, _ = run_keyframes(dataclasses.replace(kf, gain_scale={}), KeyframeOptions("spd", DTS[0]))
    stiff = tail_motion(rec130, track130)["peak_rad"]
    facts = {"claims": claims, "spacing": spacing, "tail_paper_rad": stiff}
    setup = "\n".join([
        "Our mouse (the paper gives no sizes): a 30 g body, a 14.4 cm tail of 12 links of 0.5 g joined by "
        "vertical hinges (`python -m tracker.scenes.mouse`); gravity off (a frictionless table); 6 root keys "
        f"over 3.5 s: a dash, a left turn, a dash, a U-turn, a stop (key spacing {spacing.min() * 100:.0f}–"
        f"{spacing.max() * 100:.0f} cm), then 1.5 s of hold; `data/keyframes/mouse.yaml`. Only the root is keyed; "
        "every key leaves the tail straight, so the tail's servos pull it straight with the same cross-faded "
        "gains, scaled by 0.01: at the paper's 130 m_sub the light tail is as rigid under SPD as under the spline "
        f"(largest bend {np.degrees(stiff):.2f}° at 1/60 s). Key errors are at keys 1–5; 'closest pass' is the "
        "root's nearest approach to "
        "each key position within half an interval of the key time, and when.\n", *rows])
    return [(None, "### The toy mouse (Fig. 6)\n"), ("mouse-claims", claims_table(claims, spacing)),
            ("mouse", setup), (None, "![Fig. 6](tan2011_fig6.png)\n\n![Tail](tan2011_fig6_tail.png)\n")], facts


def plot_humanoid(runs: dict, track, path: Path, joints=("right_elbow", "left_knee", "right_shoulder")) -> None:
    """The same joints under each profile, the spline and the keys (rotation angle for spherical joints)."""
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    lay = track.layout
    ts = np.linspace(0, track.duration, 600)
    spline = np.array([track.sample(t)[0] for t in ts])

    def angle(q: np.ndarray, name: str) -> np.ndarray:
        s = lay[name]
        if s.kind == "revolute":
            return np.degrees(q[:, s.q.start])
        return np.degrees(2 * np.arccos(np.clip(np.abs(q[:, s.q.stop - 1]), 0, 1)))

    fig, axes = plt.subplots(len(joints), 1, figsize=(8, 2.3 * len(joints)), dpi=110, sharex=True)
    for ax, name in zip(axes, joints):
        for label, rec in runs.items():
            ax.plot(rec.t, angle(rec.q, name), lw=1.2, label=label)
        ax.plot(ts, angle(spline, name), "k--", lw=0.8, label="cubic spline")
        ax.plot(track.times, angle(track.key_q, name), "o", color="tab:red", label="keys")
        ax.set_ylabel(f"{name} (deg)", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=3, loc="upper right")
    axes[0].set_title("Humanoid keyframes: two SPD servos per DOF under each gain profile", fontsize=9)
    axes[-1].set_xlabel("time (s)")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


#: A push on the humanoid's right hand halfway between keys 4 and 5 (α = 0.5): N, s, s; and the arm joints.
HUMANOID_PUSH = ((0.0, 10.0, 0.0), 2.65, 0.1)
ARM = ("right_shoulder", "right_elbow", "right_wrist")
WRISTS = ("left_wrist", "right_wrist")


def humanoid_section(out: Path, quick: bool) -> tuple[list, dict]:
    from tracker.analysis.metrics import joint_errors
    from tracker.keyframes.stiffness import push_response

    kf = load_keyframes(HUMANOID)
    runs, track, facts = {}, None, {}
    force, start, duration = HUMANOID_PUSH
    rows = ["| profile | mean summed gain between keys (k_p) | joint error at the keys, mean / max (deg) "
            "| deviation from the spline while keyed, mean (deg) | wrists (never keyed): largest swing (deg) "
            "| push: right arm's largest deviation (deg) | fastest joint (rad/s) | status |",
            "|---|---:|---:|---:|---:|---:|---:|---|"]
    for label, kind, power in HUMANOID_PROFILES[: 2 if quick else 3]:
        opts = KeyframeOptions("spd", 1 / 60, kind, power)
        rec, track, _ = run_keyframes(kf, opts)
        runs[label] = rec
        m = keyframe_metrics(rec, track, opts.resolved(kf))
        wrist = np.degrees(tail_motion(rec, track, WRISTS)["peak_rad"])
        pushed = push_response(kf, opts, start + 0.6, "right_hand", force, start, duration)
        cols = [k for k, s in enumerate(track.layout.joints) if s.name in ARM]
        push = np.degrees(joint_errors(track.layout, pushed, rec.q[: len(pushed)])[:, cols].max())
        speed = float(np.abs(rec.v[:, 6:]).max())
        facts[label] = dict(wrist=wrist, push=push, speed=speed,
                            deviation=np.degrees(m["spline_deviation_mean_rad"]))
        rows.append(f"| {label} | {compliance(track):.3f} | {np.degrees(m['key_joint_error_mean_rad']):.2f} / "
                    f"{np.degrees(m['key_joint_error_max_rad']):.1f} | "
                    f"{np.degrees(m['spline_deviation_mean_rad']):.2f} | {wrist:.2f} | {push:.2f} | {speed:.2f} | "
                    f"{rec.status} |")
    plot_humanoid(runs, track, out / "tan2011_humanoid.png")
    text = "\n".join([
        "`data/keyframes/humanoid_throw.yaml`: 8 key poses over 4.2 s (rest, wind-up, throw, follow-through, "
        "one-leg balance, wave, rest), anchored root, gravity on, dt = 1/60 s, k_p = 130 m_sub, k_d = 10 k_p dt. "
        "A higher p lowers the gains between keys; linear keeps them at k_p throughout. Push: "
        f"{force[1]:g} N sideways on the right hand for {duration:g} s from t = {start:g} s (α = 0.5 between keys "
        "4 and 5), deviation of the right shoulder, elbow and wrist from the same profile's unpushed run.\n",
        *rows])
    return [(None, "### The humanoid example\n"), ("humanoid", text),
            (None, "![Humanoid](tan2011_humanoid.png)\n")], facts


def section(out: Path, quick: bool = False) -> tuple[list, dict]:
    """The §4.2 part of the report as ``[(block name or None, markdown)]`` and its facts; figures into ``out``."""
    from tracker.reproduce import tan2011_mouse as M

    plot_fig5(out / "tan2011_fig5.png")
    kf = load_keyframes(MOUSE)
    mouse, mfacts = mouse_section(out)
    gains_md, gains = M.paper_gains(kf)
    pd_md, pd = M.pd_small(kf)
    stiff_md, stiff = M.mouse_stiffness(kf, {})
    human, hfacts = humanoid_section(out, quick)
    parts = [
        (None, "## §4.2 Keyframe interpolation with cross-faded SPD gains\n"),
        ("keyframes", "Two SPD servos per DOF, toward the previous and the next key, zero target velocity, gains "
         "k_i = (1−α)^p k_p and k_i+1 = (α^p + 0.005) k_p (`tracker/control/keyframe_spd.py`; one SPD with the "
         "summed gains toward the gain-weighted target to 1e-13 N·m on scalar DOFs, "
         "`tests/keyframes/test_two_servos.py`). The paper: k_p = 130 m_sub, k_d = 10 k_p Δt."),
        (None, "![Fig. 5](tan2011_fig5.png)\n"),
        *mouse,
        (None, "### The mouse at the paper's gains, and when it meets its keys\n"), ("mouse-gains", gains_md),
        (None, "### PD at 0.005 m_sub: why it diverges\n"), ("mouse-pd", pd_md),
        (None, "### Linear against polynomial blending: how stiff\n"), ("mouse-stiffness", stiff_md),
        *human,
    ]
    return parts, {"mouse": mfacts, "gains": gains, "pd": pd, "stiff": stiff, "humanoid": hfacts}
