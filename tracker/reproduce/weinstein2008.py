"""Reproduce Weinstein, Teran & Fedkiw 2008 (analytic PD with inverse-dynamics feedback).

The paper has no tables; its claims and figures are reproduced as numbers and
plots, with the project's ``analytic_pd`` controller
(:mod:`tracker.control.analytic_pd`), its closed forms
(:mod:`tracker.control.closed_form`) and two small scenes
(:mod:`tracker.scenes.one_dof`, :mod:`tracker.scenes.plank_chain`):

1. the closed forms satisfy the ODE in all three damping regimes;
2. plain gains converge to PD with ``k/2``, doubled gains to ``k``, first order
   in the step (Fig. 3); at steps of 0.5 and 1 s analytic PD removes almost all
   the error in one step while explicit PD diverges (Figs. 2, 4);
3. a joint under gravity: PD sags, analytic PD reaches the target (Figs. 5, 6);
4. plank chains reach and hold a horizontal and a curled target from one final
   pose; a block on the tip is carried when it is part of the inverse dynamics
   and sags the chain when it is not (Figs. 1, 7);
5. stiffness sets the timing: from rest to 10 % error in ``3.890/√k_p``;
6. on the humanoid: each joint's per-step error equals its analytic
   prediction without contact, and the shared walk and kick are tracked next
   to SPD at 1/60 and 1/30 s.

Usage: ``tracker reproduce weinstein2008 [--out DIR] [--quick]``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tracker.control import closed_form as cf
from tracker.scenes import one_dof

TITLE = "Weinstein, Teran & Fedkiw 2008: analytic PD with inverse-dynamics feedback (Figs. 1-7)"

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "mocap"
#: The shared walk and kick, then other takes and skeletons (CMU-MB, Bandai, CC_Base).
HUMANOID_CLIPS = ("cmu_02_01_walk", "cmu_10_01_soccer_kick", "cmu_10_05_soccer_kick", "bandai_kick_normal_001",
                  "bandai_walk_normal_001", "cmu_06_01_walk_ccbase")


# -- the experiments (each returns plain data; the tests call them with small settings) ----------


def ode_residuals(n: int = 201) -> dict[str, float]:
    """Max ``|Ë + k_v Ė + k_p E|`` (complex-step derivatives) per regime, over ``t`` in [0, 1] s."""
    out = {}
    t = np.linspace(0.0, 1.0, n)
    eps = 1e-30
    for name, (kp, kv) in {"over": (100.0, 30.0), "critical": (100.0, 20.0), "under": (100.0, 5.0)}.items():
        worst = 0.0
        for e0, de0 in ((1.0, 0.0), (-0.3, 4.0)):
            e, de = cf.solve(e0, de0, kp, kv, t)
            dde = np.imag(cf.solve(e0, de0, kp, kv, t + 1j * eps)[1]) / eps
            worst = max(worst, float(np.max(np.abs(dde + kv * de + kp * e))))
        out[name] = worst
    return out


def convergence_orders(kp: float = 100.0, steps: tuple[float, ...] = (0.01, 0.005, 0.0025, 0.00125)) -> dict:
    """Errors against PD with ``k/2`` (plain) and ``k`` (doubled), and the observed orders."""
    kv = float(cf.critical_kv(kp))
    out = {"steps": list(steps)}
    for name, doubled in (("plain", False), ("doubled", True)):
        err = one_dof.convergence(kp, kv, list(steps), 1.0, doubled=doubled)
        out[name] = err
        out[name + "_order"] = [float(np.log2(err[i] / err[i + 1])) for i in range(len(err) - 1)]
    # Plain gains against PD with the full k: no convergence (the error stays O(1)).
    out["plain_vs_k"] = [float(np.max(np.abs(one_dof.analytic_pd_run(kp, kv, h, 1.0, doubled=False)[1]
                                             - cf.solve(1.0, 0.0, kp, kv, np.arange(int(round(1 / h)) + 1) * h)[0])))
                         for h in steps]
    return out


def large_steps(kp: float = 100.0) -> dict:
    """Error after one step and after 5 s at h = 0.5 and 1 s: analytic PD against explicit PD."""
    kv = float(cf.critical_kv(kp))
    out = {}
    for h in (0.5, 1.0):
        _, th, _ = one_dof.analytic_pd_run(kp, kv, h, 5.0)
        _, pd, _ = one_dof.pd_run(kp, kv, h, 5.0)
        out[h] = {"analytic_first": float(abs(th[1])), "analytic_end": float(abs(th[-1])),
                  "pd_first": float(abs(pd[1])), "pd_end": float(abs(pd[-1]))}
    return out


def gravity_joint(k1: float = 100.0, dt: float = 1 / 60, duration: float = 5.0) -> dict:
    """PD's sag against analytic PD's final error for the 1 kg, 1 m joint held horizontal."""
    _, pd = one_dof.gravity_joint_run("pd", k1, dt, duration)
    _, an = one_dof.gravity_joint_run("analytic", k1, dt, duration)
    _, an_from = one_dof.gravity_joint_run("analytic", k1, dt, duration, theta0=-0.5)
    return {"pd_sag": float(-pd[-1]), "pd_sag_theory": one_dof.pd_sag(k1), "analytic_end": float(abs(an[-1])),
            "analytic_max": float(np.max(np.abs(an))), "analytic_from_below_end": float(abs(an_from[-1]))}


def chains(n: int = 5, dt: float = 1 / 60, duration: float = 4.0, kp: float = 100.0, block: float = 3.0) -> dict:
    """Plank chains: final and held errors for the horizontal and curled targets, and with a block."""
    from tracker.scenes import plank_chain as pc

    out = {}
    hold_from = int(round(0.6 * duration / dt))
    cases = {
        "horizontal": dict(target=pc.horizontal_target(n)),
        "curled": dict(target=pc.curled_target(n)),
        "block in the inverse dynamics": dict(target=pc.horizontal_target(n), block_mass=block, block_in_model=True),
        "block not in the inverse dynamics": dict(target=pc.horizontal_target(n), block_mass=block,
                                                  block_in_model=False),
        "explicit PD, horizontal": dict(target=pc.horizontal_target(n), controller="pd"),
    }
    for name, kw in cases.items():
        r = pc.run_chain(n, kp=kp, dt=dt, duration=duration, **kw)
        err = r.q - r.target
        finite = np.isfinite(err).all()
        miss = np.abs(err[1:] - r.predicted) if np.isfinite(r.predicted).all() else np.array([np.inf])
        out[name] = {"final": float(np.max(np.abs(err[-1]))) if finite else float("inf"),
                     "held": float(np.max(np.abs(err[hold_from:]))) if finite else float("inf"),
                     "prediction_miss": float(np.max(miss)) if finite else float("inf"),
                     "run": r}
    return out


def timing(kps: tuple[float, ...] = (25.0, 100.0, 400.0), dt: float = 1 / 480, chain_n: int = 5,
           chain: bool = True) -> dict:
    """Time from rest to 10 % error: closed form, the 1-DOF scheme and every joint of a chain."""
    rows = []
    for kp in kps:
        kv = float(cf.critical_kv(kp))
        exact = cf.time_to_fraction(kp, kv)
        dur = 3.0 * exact
        t, th, _ = one_dof.analytic_pd_run(kp, kv, dt, dur)
        scheme = float(t[np.argmax(np.abs(th) <= 0.1)])
        row = {"kp": kp, "formula": cf.T10_CRITICAL / np.sqrt(kp), "closed_form": exact, "scheme": scheme}
        if chain:
            from tracker.scenes import plank_chain as pc

            q0 = np.full(chain_n, 0.4)
            r = pc.run_chain(chain_n, pc.horizontal_target(chain_n), kp=kp, dt=dt, duration=dur, q0=q0)
            frac = np.abs(r.q) / 0.4
            row["chain"] = [float(r.t[np.argmax(frac[:, j] <= 0.1)]) for j in range(chain_n)]
        rows.append(row)
    return {"dt": dt, "rows": rows}


def humanoid(quick: bool = False) -> dict:
    """Per-step prediction miss without contact, and walk/kick errors of analytic PD beside SPD."""
    import pybullet as p

    from tracker.analysis.metrics import tracking_metrics
    from tracker.character.model import load_model
    from tracker.control.base import Gains
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation

    model = load_model("humanoid")
    out: dict = {"exact": {}, "tracking": []}
    ref = load_clip_reference(MOCAP / "cmu_10_01_soccer_kick.bvh")
    for dt in (1 / 60, 1 / 30):
        sim = Simulation(model, ref, SimOptions(controller="analytic_pd", dt=dt, start=1.0))
        try:
            p.removeBody(sim.world.ground, physicsClientId=sim.world.client)  # no contact
            g = sim.base_gains
            sim.base_gains = sim.gains = Gains(g.kp, g.kd, None)
            worst = 0.0
            for _ in range(30 if quick else 120):
                row = sim.step()
                err = sim.layout.difference(row["q"], row["q_ref"])
                worst = max(worst, float(np.max(np.abs(err - sim.controller.predicted_error))))
        finally:
            sim.close()
        out["exact"][round(1 / dt)] = worst
    for clip in HUMANOID_CLIPS[:2] if quick else HUMANOID_CLIPS:
        ref = load_clip_reference(MOCAP / f"{clip}.bvh")
        for dt in (1 / 60, 1 / 30):
            for ctrl in ("spd", "analytic_pd"):
                sim = Simulation(model, ref, SimOptions(controller=ctrl, dt=dt))
                try:
                    rec = sim.run(1.0 if quick else None)
                finally:
                    sim.close()
                m = tracking_metrics(rec, model.kinematics())
                out["tracking"].append({"clip": clip, "hz": round(1 / dt), "controller": ctrl,
                                        "mean": m["joint_error_mean_rad"], "max": m["joint_error_max_rad"],
                                        "diverged": rec.diverged,
                                        "clipped": rec.meta.get("analytic_pd_clipped_steps", "")})
    return out


# -- figures and report --------------------------------------------------------------------------


def _figures(out: Path, conv: dict, big: dict, chain: dict, tim: dict, kp: float = 100.0) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kv = float(cf.critical_kv(kp))
    files = []
    # Fig. 3: plain and doubled gains at a medium step, against the exact PD solutions.
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    h = 0.02
    tt = np.linspace(0, 1, 400)
    for doubled, col, s in ((False, "tab:red", 0.5), (True, "tab:blue", 1.0)):
        t, th, _ = one_dof.analytic_pd_run(kp, kv, h, 1.0, doubled=doubled)
        a1.plot(t, th, color=col, label=f"analytic PD, {'doubled' if doubled else 'plain'} gains, h = {h}")
        a1.plot(tt, cf.solve(1.0, 0.0, s * kp, s * kv, tt)[0], "k--" if doubled else "k:",
                label=f"exact PD with {'k' if doubled else 'k/2'}")
    a1.set_xlabel("t (s)")
    a1.set_ylabel("error E")
    a1.set_title(f"Fig. 3: k_p = {kp:g} /s², critical")
    a1.legend(fontsize=7)
    a2.loglog(conv["steps"], conv["plain"], "o-", color="tab:red", label="plain vs PD(k/2)")
    a2.loglog(conv["steps"], conv["doubled"], "s-", color="tab:blue", label="doubled vs PD(k)")
    a2.loglog(conv["steps"], conv["plain_vs_k"], "^-", color="gray", label="plain vs PD(k): no convergence")
    a2.set_xlabel("h (s)")
    a2.set_ylabel("max |error|")
    a2.set_title("first order in h")
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "weinstein2008_fig3.png", dpi=110)
    plt.close(fig)
    files.append("weinstein2008_fig3.png")

    # Figs. 2/4: a medium and extremely large steps.
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(tt * 3, cf.solve(1.0, 0.0, kp, kv, tt * 3)[0], "k-", label="exact PD")
    for hh, st in ((0.1, "o-"), (0.5, "s--"), (1.0, "d:")):
        t, th, _ = one_dof.analytic_pd_run(kp, kv, hh, 3.0)
        ax.plot(t, th, st, color="tab:blue", label=f"analytic PD, h = {hh} s")
    t, pd, _ = one_dof.pd_run(kp, kv, 0.1, 3.0)
    ax.plot(t[:4], pd[:4], "x-", color="tab:red", label="explicit PD, h = 0.1 s (diverges)")
    ax.set_ylim(-1.5, 1.5)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("error E")
    ax.set_title(f"Figs. 2/4: large steps (k_p = {kp:g} /s²)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "weinstein2008_fig4.png", dpi=110)
    plt.close(fig)
    files.append("weinstein2008_fig4.png")

    # Figs. 5/6: the joint under gravity.
    fig, ax = plt.subplots(figsize=(7, 4))
    for method, col in (("pd", "tab:red"), ("analytic", "tab:blue")):
        for th0, ls in ((0.0, "-"), (-0.5, "--")):
            t, th = one_dof.gravity_joint_run(method, 100.0, 1 / 60, 3.0, theta0=th0)
            ax.plot(t, th, ls, color=col, label=f"{'PD' if method == 'pd' else 'analytic PD'}, from {th0:g} rad")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("angle from horizontal (rad)")
    ax.set_title("Figs. 5/6: 1 kg at 1 m under gravity, k1 = 100 N·m/rad")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "weinstein2008_fig6.png", dpi=110)
    plt.close(fig)
    files.append("weinstein2008_fig6.png")

    # Figs. 1/7: the chains' final poses and tip paths.
    from tracker.scenes.plank_chain import PLANK, POST_HEIGHT

    names = [k for k in chain if not k.startswith("explicit")]
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.6))
    for ax, name in zip(axes, names):
        r = chain[name]["run"]
        for k, alpha in ((0, 0.3), (len(r.t) // 8, 0.5), (-1, 1.0)):
            ang = np.cumsum(r.q[k])
            xs = np.concatenate([[0.0], np.cumsum(PLANK[0] * np.cos(ang))])
            zs = POST_HEIGHT + np.concatenate([[0.0], np.cumsum(-PLANK[0] * np.sin(ang))])
            ax.plot(xs, zs, "o-", color="tab:blue", alpha=alpha, ms=3)
        ang = np.cumsum(r.target)
        ax.plot(np.concatenate([[0.0], np.cumsum(PLANK[0] * np.cos(ang))]),
                POST_HEIGHT + np.concatenate([[0.0], np.cumsum(-PLANK[0] * np.sin(ang))]), "k--", lw=1)
        ax.plot(r.tip[:, 0], r.tip[:, 2], ":", color="gray", lw=1)
        ax.set_aspect("equal")
        ax.set_title(f"{name}\nfinal error {chain[name]['final']:.2g} rad", fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "weinstein2008_chains.png", dpi=110)
    plt.close(fig)
    files.append("weinstein2008_chains.png")

    # Timing: 10 % time against k_p.
    fig, ax = plt.subplots(figsize=(6, 4))
    kps = np.array([r["kp"] for r in tim["rows"]])
    kk = np.geomspace(kps.min() / 2, kps.max() * 2, 50)
    ax.loglog(kk, cf.T10_CRITICAL / np.sqrt(kk), "k-", label="3.890/√k_p")
    ax.loglog(kps, [r["scheme"] for r in tim["rows"]], "o", color="tab:blue", label=f"1-DOF scheme, h = 1/{round(1 / tim['dt'])}")
    if "chain" in tim["rows"][0]:
        ax.loglog(kps, [max(r["chain"]) for r in tim["rows"]], "x", color="tab:green", ms=9, label="chain joints (max)")
    ax.set_xlabel("k_p (1/s²)")
    ax.set_ylabel("time to 10 % error (s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "weinstein2008_timing.png", dpi=110)
    plt.close(fig)
    files.append("weinstein2008_timing.png")
    return files


def run(out: Path, *, quick: bool = False) -> Path:
    """Run every experiment, write the figures and ``report.md`` into ``out``; returns the report."""
    from tracker.atomic import atomic_target

    out = Path(out)
    res = ode_residuals()
    conv = convergence_orders()
    big = large_steps()
    grav = gravity_joint()
    chain = chains(duration=2.5 if quick else 4.0)
    tim = timing(dt=1 / 240 if quick else 1 / 480, chain=True)
    hum = humanoid(quick=quick)
    files = _figures(out, conv, big, chain, tim)

    L = [f"# {TITLE}", "", "Generated by `tracker reproduce weinstein2008" + (" --quick" if quick else "") + "`. "
         "The paper has no tables; each claim is reproduced as numbers (see `docs/weinstein2008.md`).", ""]
    L += ["## Closed forms (§III)", "", "| regime | max ODE residual |", "|---|---:|"]
    L += [f"| {k} | {v:.1e} |" for k, v in res.items()]
    L += ["", "## Plain and doubled gains (Fig. 3), k_p = 100 /s², critical", "",
          "| h (s) | plain vs PD(k/2) | doubled vs PD(k) | plain vs PD(k) |", "|---:|---:|---:|---:|"]
    for i, h in enumerate(conv["steps"]):
        L.append(f"| {h:g} | {conv['plain'][i]:.2e} | {conv['doubled'][i]:.2e} | {conv['plain_vs_k'][i]:.2e} |")
    L += ["", f"Observed orders (log2 of successive ratios): plain {', '.join(f'{x:.3f}' for x in conv['plain_order'])}; "
          f"doubled {', '.join(f'{x:.3f}' for x in conv['doubled_order'])}.", "", f"![Fig. 3]({files[0]})", ""]
    L += ["## Extremely large steps (Figs. 2, 4), k_p = 100 /s²", "",
          "| h (s) | analytic PD after 1 step | after 5 s | explicit PD after 1 step | after 5 s |",
          "|---:|---:|---:|---:|---:|"]
    for h, r in big.items():
        L.append(f"| {h:g} | {r['analytic_first']:.2e} | {r['analytic_end']:.1e} | {r['pd_first']:.3g} | "
                 f"{r['pd_end']:.3g} |")
    L += ["", f"![Figs. 2/4]({files[1]})", ""]
    L += ["## A joint under gravity (Figs. 5, 6): 1 kg at 1 m, I = 1 kg·m², horizontal target, k1 = 100 N·m/rad",
          "", f"PD sags by {grav['pd_sag']:.4f} rad (equilibrium k1·e = m·g·l·cos e: {grav['pd_sag_theory']:.4f}); "
          f"analytic PD ends {grav['analytic_end']:.1e} rad from the target (starting on it: it never leaves it, "
          f"max {grav['analytic_max']:.1e}; starting 0.5 rad below: {grav['analytic_from_below_end']:.1e}).", "",
          f"![Figs. 5/6]({files[2]})", ""]
    L += ["## Plank chains (Figs. 1, 7): 5 planks, gravity, PyBullet, k_p = 100 /s², h = 1/60 s, one final pose", "",
          "| case | final max joint error (rad) | held (last 40 %) | per-step prediction miss |", "|---|---:|---:|---:|"]
    for name, r in chain.items():
        L.append(f"| {name} | {r['final']:.2e} | {r['held']:.2e} | {r['prediction_miss']:.1e} |")
    L += ["", f"![chains]({files[3]})", ""]
    L += [f"## Stiffness sets the timing: rest to 10 % error (h = 1/{round(1 / tim['dt'])} s)", "",
          "| k_p (1/s²) | 3.890/√k_p | closed form | 1-DOF scheme | chain joints (min-max) |", "|---:|---:|---:|---:|---:|"]
    for r in tim["rows"]:
        ch = f"{min(r['chain']):.4f}-{max(r['chain']):.4f}" if "chain" in r else ""
        L.append(f"| {r['kp']:g} | {r['formula']:.4f} | {r['closed_form']:.4f} | {r['scheme']:.4f} | {ch} |")
    L += ["", f"![timing]({files[4]})", ""]
    L += ["## On the humanoid", "", "Per-step error minus each joint's analytic prediction, no contact (ground "
          "removed), torque limits off: " + ", ".join(f"{hz} Hz: {v:.1e}" for hz, v in hum["exact"].items()) + ".", "",
          "| clip | Hz | controller | mean joint error (rad) | max | diverged | clipped steps |",
          "|---|---:|---|---:|---:|---|---:|"]
    for r in hum["tracking"]:
        L.append(f"| {r['clip']} | {r['hz']} | {r['controller']} | {r['mean']:.4f} | {r['max']:.4f} | "
                 f"{'yes' if r['diverged'] else 'no'} | {r['clipped']} |")
    L.append("")
    report = out / "report.md"
    with atomic_target(report) as tmp:
        Path(tmp).write_text("\n".join(L))
    return report
