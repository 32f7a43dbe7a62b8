"""Figures of the Weinstein et al. 2008 reproduction (:mod:`tracker.reproduce.weinstein2008`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tracker.control import closed_form as cf
from tracker.scenes import one_dof


def _save(fig, out, name: str, files: list[str]) -> None:
    """Lay out ``fig``, write it to ``out/name`` (110 dpi), close it and list it in ``files``."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    files.append(name)


def classic(out: Path, conv: dict, big: dict, chain: dict, tim: dict, kp: float = 100.0) -> list[str]:
    """Figs. 3, 2/4, 5/6, the PyBullet chains and the timing plot; returns the file names."""
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
    _save(fig, out, "weinstein2008_fig3.png", files)

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
    _save(fig, out, "weinstein2008_fig4.png", files)

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
    _save(fig, out, "weinstein2008_fig6.png", files)

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
    _save(fig, out, "weinstein2008_chains.png", files)

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
    _save(fig, out, "weinstein2008_timing.png", files)
    return files


def _chain_xz(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from tracker.scenes.weinstein_scenes import PLANK, POST_HEIGHT

    ang = np.cumsum(q)
    return (np.concatenate([[0.0], np.cumsum(PLANK[0] * np.cos(ang))]),
            POST_HEIGHT + np.concatenate([[0.0], np.cumsum(-PLANK[0] * np.sin(ang))]))


def _box(ax, centre, size, angle, **kw) -> None:
    c, s = np.cos(angle), np.sin(angle)
    hx, hz = size[0] / 2, size[1] / 2
    pts = np.array([[-hx, -hz], [hx, -hz], [hx, hz], [-hx, hz], [-hx, -hz]])
    rot = np.array([[c, s], [-s, c]])  # a positive hinge angle turns +X down
    xy = pts @ rot.T + [centre[0], centre[2]]
    ax.plot(xy[:, 0], xy[:, 1], **kw)


def impulse_scenes(out: Path, fig1: dict, fig8: dict, mus: dict) -> list[str]:
    """Figs. 1, 8 and 9 (maximal coordinates); returns the file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tracker.scenes.weinstein_scenes import BLOCK

    files = []
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, (name, r) in zip(axes[:2], fig1.items()):
        run = r["run"]
        for k, alpha in ((0, 0.3), (len(run.t) // 10, 0.5), (-1, 1.0)):
            ax.plot(*_chain_xz(run.q[k]), "o-", color="tab:blue", alpha=alpha, ms=3)
            _box(ax, run.x[k, -1], (BLOCK[0], BLOCK[2]), float(np.sum(run.q[k][:r["on"] + 1])), color="tab:brown",
                 alpha=alpha)
        ax.plot(*_chain_xz(np.zeros(run.q.shape[1])), "k--", lw=1)
        ax.set_aspect("equal")
        ax.set_title(f"Fig. 1, block {name}\nfinal error {r['final']:.2g} rad", fontsize=8)
        axes[2].semilogy(run.t, np.maximum(np.abs(run.q).max(axis=1), 1e-16), label=f"block {name}")
    axes[2].set_xlabel("t (s)")
    axes[2].set_ylabel("max joint error (rad)")
    axes[2].legend(fontsize=7)
    _save(fig, out, "weinstein2008_fig1.png", files)

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    ob, ball = fig8["obstruction"], fig8["ball"]
    run = ob["run"]
    k_rel = int(round(ob["release"] / (run.t[1] - run.t[0])))
    for k, col in ((k_rel, "tab:red"), (-1, "tab:blue")):
        axes[0].plot(*_chain_xz(run.q[k]), "o-", color=col, ms=3,
                     label=f"t = {run.t[k]:.2f} s" + (" (obstacle removed)" if k == -1 else " (blocked)"))
    (cx, _, cz), rad = ob["obstacle"]
    axes[0].add_patch(plt.Circle((cx, cz), rad, fill=False, color="k"))
    axes[0].set_aspect("equal")
    axes[0].legend(fontsize=7)
    axes[0].set_title("Fig. 8 top: curling under an immovable sphere", fontsize=8)
    err = np.abs(run.q - ob["target"]).max(axis=1)
    axes[1].semilogy(run.t, np.maximum(err, 1e-16), color="tab:red", label="obstructed, obstacle removed at the line")
    free = np.abs(ob["free_run"].q - ob["target"]).max(axis=1)
    axes[1].semilogy(ob["free_run"].t, np.maximum(free, 1e-16), "k--", label="no obstacle")
    axes[1].axvline(ob["release"], color="gray", lw=0.8)
    brun = ball["run"]
    axes[1].semilogy(brun.t, np.maximum(np.abs(brun.q).max(axis=1), 1e-16), color="tab:green", label="ball hit")
    axes[1].set_xlabel("t (s)")
    axes[1].set_ylabel("max joint error (rad)")
    axes[1].legend(fontsize=7)
    hit = int(round(ball["hit_time"] / (brun.t[1] - brun.t[0])))
    for k, alpha in ((0, 0.3), (hit + 6, 1.0), (hit + 30, 0.6)):
        axes[2].plot(*_chain_xz(brun.q[k]), "o-", color="tab:green", alpha=alpha, ms=3)
    path = brun.x[:hit + 40, -1]
    path = path[path[:, 2] > 1.2]
    axes[2].plot(path[:, 0], path[:, 2], ":", color="tab:orange", label="ball path")
    axes[2].set_aspect("equal")
    axes[2].legend(fontsize=7)
    axes[2].set_title("Fig. 8 bottom: a ball hit and the recovery", fontsize=8)
    _save(fig, out, "weinstein2008_fig8.png", files)

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 3.8))
    r = mus["strong"]
    run = r["run"]
    for j, col in ((0, "tab:blue"), (1, "tab:green")):
        a1.plot(run.t, run.q[:, j], color=col, label=("shoulder" if j == 0 else "elbow") + " (muscles)")
        a1.plot(run.t, [r["target"](t)[0][j] for t in run.t], "--", color=col, lw=0.8, label="analytic target")
        a1.plot(mus["weak"]["run"].t, mus["weak"]["run"].q[:, j], ":", color=col, label="weak muscles")
    a1.set_xlabel("t (s)")
    a1.set_ylabel("hinge angle (rad)")
    a1.legend(fontsize=7)
    a1.set_title("Fig. 9: an arm driven by 5 line-segment muscles swings a mace", fontsize=8)
    for k, name in enumerate(r["names"]):
        a2.plot(run.t[1:], r["activation"][:, k], label=name)
    a2.set_ylim(-0.05, 1.05)
    a2.set_xlabel("t (s)")
    a2.set_ylabel("activation")
    a2.legend(fontsize=7)
    _save(fig, out, "weinstein2008_fig9.png", files)
    return files
