"""Reproduce Tan, Liu & Turk 2011: §3.4 (Tables 1-2, Figures 2-4) on the two-link pendulum, §4.1-4.3.

Runs the project's own ``pd`` and ``spd`` controllers on the analytic pendulum of
:mod:`tracker.sim.pendulum` (setup and the choices the paper leaves open:
:mod:`tracker.sim.tan2011`), and writes into the output folder

* ``report.md``: the paper's numbers beside ours, opening with the claims table
  (:mod:`tracker.reproduce.tan2011_claims`);
* ``blocks/*.md``: the same numbers as the blocks of ``docs/tan2011.md``
  (:mod:`tracker.reproduce.blocks`), and ``page_skeleton.md``, the page as the run lays it out;
* ``tan2011_fig2.png`` ... ``tan2011_fig7.png``, ``tan2011_humanoid.png``: the figures.

It also compares the integrator/prediction pairings of SPD at 1/60 and 1/30 s
and repeats the SPD runs on a PyBullet pendulum. Figures 2-3 and the split headline are
:mod:`tracker.reproduce.tan2011_tracking`; §4.1 at 33 ms :mod:`tracker.reproduce.tan2011_balls`;
§4.2 (keyframes, toy mouse, humanoid; Figures 5-6) :mod:`tracker.reproduce.tan2011_keyframes` and
:mod:`tracker.reproduce.tan2011_mouse`; §4.3 (tinkertoy; Figure 7) :mod:`tracker.reproduce.tan2011_constraints`.

Usage: ``tracker reproduce tan2011 [--out DIR] [--quick] [--check | --write-docs]``.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

from tracker.atomic import atomic_target
from tracker.sim import tan2011 as T
from tracker.sim.pendulum import TwoLinkPendulum, pendulum_urdf

TITLE = ("Tan, Liu & Turk 2011: SPD vs PD on the two-link pendulum (§3.4 Tables 1-2, Figure 4), "
         "keyframes (§4.2, Figures 5-6), tinkertoy constraints (§4.3, Figure 7)")


def _fmt(x: float | None) -> str:
    return "NA" if x is None else f"{x:.4f}"


def _ratio(ours: float | None, paper: float | None) -> str:
    if ours is None or paper is None:
        return "—"
    return f"{ours / paper:.2f}"


def tables_markdown(ours: dict) -> str:
    """Tables 1 (DOF 1) and 2 (DOF 2): ours, paper, ratio for both norms."""
    out = []
    for dof, title in ((0, "Table 1 — first DOF"), (1, "Table 2 — second DOF")):
        out.append(f"### {title}\n")
        out.append(
            "| formulation | kp | ‖e‖∞ ours | ‖e‖∞ paper | ratio | ‖e‖₂ ours | ‖e‖₂ paper | ratio |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for f in T.FORMULATIONS:
            for kp in T.PAPER_KP:
                o, p = ours[(f, kp)], T.PAPER_TABLES[(f, kp)]
                cells = []
                for k in (2 * dof, 2 * dof + 1):
                    ov = None if o is None else o[k]
                    pv = None if p is None else p[k]
                    cells += [_fmt(ov), _fmt(pv), _ratio(ov, pv)]
                out.append(f"| {f} | {kp:g} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def figure4(kps=T.FIGURE4_KP) -> tuple[np.ndarray, np.ndarray]:
    """Largest stable dt for PD and SPD (explicit Euler, kd = kp·dt), each ``(len(kps),)`` s."""
    pd = np.array([T.largest_stable_dt("pd", kp) for kp in kps])
    spd = np.array([T.largest_stable_dt("spd", kp) for kp in kps])
    return pd, spd


def figure4_markdown(kps, pd, spd) -> str:
    out = [
        "| kp | PD largest stable dt (s) | PD dt·√kp | SPD largest stable dt (s) |",
        "|---:|---:|---:|---:|",
    ]
    for kp, a, b in zip(kps, pd, spd, strict=True):
        capped = " (cap)" if a >= T.FIGURE4_DT_CAP else ""
        out.append(
            f"| {kp:.0e} | {a:.5f}{capped} | {a * math.sqrt(kp):.3f} | {b:.5f}"
            + (" (cap)" if b >= T.FIGURE4_DT_CAP else "")
            + " |"
        )
    free = pd < T.FIGURE4_DT_CAP
    if free.sum() >= 2:
        slope = np.polyfit(np.log(np.array(kps)[free]), np.log(pd[free]), 1)[0]
        out.append(f"\nPD below the cap: log-log slope {slope:.3f} (1/√kp is −0.5).")
    return "\n".join(out)


def plot_figure4(kps, pd, spd, path: Path) -> None:
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    fig, ax = plt.subplots(figsize=(5.5, 4.0), dpi=120)
    ax.loglog(kps, pd, "o-", color="tab:red", label="PD")
    ax.loglog(kps, spd, "s-", color="tab:blue", label="SPD")
    ax.axhline(
        T.FIGURE4_DT_CAP, color="gray", ls="--", lw=0.8, label="1/30 s (reference at 30 fps)"
    )
    free = pd < T.FIGURE4_DT_CAP
    if free.any():
        c = float(np.median(pd[free] * np.sqrt(np.array(kps)[free])))
        k = np.geomspace(min(kps), max(kps), 50)
        ax.loglog(k, c / np.sqrt(k), ":", color="tab:red", lw=0.8, label=f"{c:.2f}/√kp")
    ax.set_xlabel("proportional gain kp (N·m/rad), kd = kp·dt")
    ax.set_ylabel("largest stable time step (s)")
    ax.set_title("Tan et al. 2011, Fig. 4 (two-link pendulum)")
    ax.set_ylim(1e-4, 0.1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def integrator_markdown() -> str:
    """SPD with reference velocity: each integrator with each prediction, high gains."""
    combos = [
        ("explicit", "explicit"),
        ("explicit", "semi_implicit"),
        ("semi_implicit", "explicit"),
        ("semi_implicit", "semi_implicit"),
    ]
    kps = (300.0, 3e3, 3e4, 3e5, 3e6)
    out = [
        "max over both DOFs of ‖e‖∞ (rad) for SPD with reference velocity, "
        "kd = kp·dt, one period:\n",
        "| integrator | SPD prediction | dt | " + " | ".join(f"kp={k:.0e}" for k in kps) + " |",
        "|---|---|---|" + "---:|" * len(kps),
    ]
    for integ, pred in combos:
        for dt in (1 / 60, 1 / 30):
            row = []
            for kp in kps:
                r = T.track("SPD with ref. velocity", kp, dt, integrator=integ, prediction=pred)
                row.append("diverged" if r.diverged else f"{r.e_inf.max():.5f}")
            out.append(f"| {integ} | {pred} | 1/{round(1 / dt)} | " + " | ".join(row) + " |")
    return "\n".join(out)


class BulletPendulum:
    """The same pendulum in PyBullet: ``mass_matrix``, ``bias_forces`` and ``step``
    from the engine (symplectic Euler), for the cross-check."""

    def __init__(self, params) -> None:
        from tracker.quiet import quiet_stdio

        with quiet_stdio():  # PyBullet's banner
            import pybullet as p

        self._p = p
        self.layout = TwoLinkPendulum(params).layout
        self._cid = p.connect(p.DIRECT)
        with tempfile.TemporaryDirectory() as d:
            urdf = Path(d) / "pendulum.urdf"
            urdf.write_text(pendulum_urdf(params))
            self._body = p.loadURDF(
                str(urdf),
                useFixedBase=True,
                flags=p.URDF_USE_INERTIA_FROM_FILE,
                physicsClientId=self._cid,
            )
        p.setGravity(0, 0, -params.g, physicsClientId=self._cid)
        for j in range(2):
            p.changeDynamics(
                self._body,
                j,
                linearDamping=0,
                angularDamping=0,
                jointDamping=0,
                maxJointVelocity=1e4,
                physicsClientId=self._cid,
            )
        p.setJointMotorControlArray(
            self._body, [0, 1], p.VELOCITY_CONTROL, forces=[0, 0], physicsClientId=self._cid
        )
        self._dt: float | None = None

    def close(self) -> None:
        self._p.disconnect(self._cid)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return np.array(
            self._p.calculateMassMatrix(self._body, list(map(float, q)), physicsClientId=self._cid)
        )

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.array(
            self._p.calculateInverseDynamics(
                self._body,
                list(map(float, q)),
                list(map(float, v)),
                [0.0, 0.0],
                physicsClientId=self._cid,
            )
        )

    def step(self, q, v, tau, dt, integrator="semi_implicit"):
        if integrator != "semi_implicit":
            raise ValueError("PyBullet integrates semi-implicitly")
        p = self._p
        if dt != self._dt:
            p.setPhysicsEngineParameter(fixedTimeStep=dt, numSubSteps=0, physicsClientId=self._cid)
            self._dt = dt
        for j in range(2):
            p.resetJointState(self._body, j, float(q[j]), float(v[j]), physicsClientId=self._cid)
        p.setJointMotorControlArray(
            self._body,
            [0, 1],
            p.TORQUE_CONTROL,
            forces=list(map(float, tau)),
            physicsClientId=self._cid,
        )
        p.stepSimulation(physicsClientId=self._cid)
        st = p.getJointStates(self._body, [0, 1], physicsClientId=self._cid)
        return np.array([s[0] for s in st]), np.array([s[1] for s in st])


def pybullet_markdown() -> str:
    """SPD (semi-implicit prediction) on PyBullet's pendulum vs the analytic one."""
    try:
        bullet = BulletPendulum(T.PAPER_PARAMS)
    except ImportError:
        return "PyBullet is not installed: cross-check skipped."
    try:
        worst = 0.0
        rows = [
            "| formulation | kp | DOF1 ‖e‖∞ PyBullet | analytic | DOF2 ‖e‖∞ PyBullet | analytic |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for f in ("SPD", "SPD with ref. velocity"):
            for kp in T.PAPER_KP:
                kw = dict(integrator="semi_implicit", prediction="semi_implicit")
                a = T.track(f, kp, pendulum=bullet, **kw).cells()
                b = T.track(f, kp, **kw).cells()
                worst = max(worst, max(abs(x - y) for x, y in zip(a, b, strict=True)))
                rows.append(f"| {f} | {kp:g} | {a[0]:.5f} | {b[0]:.5f} | {a[2]:.5f} | {b[2]:.5f} |")
    finally:
        bullet.close()
    rows.append(f"\nLargest difference over all 32 cells: {worst:.2e} rad.")
    return "\n".join(rows)


def run(out: Path, *, quick: bool = False, fit: bool = False) -> Path:
    """Write ``report.md``, the docs blocks (:mod:`tracker.reproduce.blocks`) and the figures (2-7) into
    ``out``; returns the report's path.

    ``quick`` uses every other kp of Figure 4, two ball scenarios, two humanoid profiles and skips the
    PyBullet cross-check; ``fit`` redoes the fit of the two masses to the kp = 30 row.
    """
    from tracker.reproduce import tan2011_balls, tan2011_constraints, tan2011_keyframes
    from tracker.reproduce import tan2011_tracking as TR
    from tracker.reproduce.blocks import write_block
    from tracker.reproduce.tan2011_claims import claims_markdown

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    p = T.PAPER_PARAMS
    n_steps = math.ceil(T.PAPER_DURATION / T.PAPER_DT)
    setup = ("Generated by `tracker reproduce tan2011`. Setup (see `tracker/sim/tan2011.py`): "
             f"explicit Euler, dt = 1/60 s, one period (N = {n_steps} steps), start on the "
             "reference with zero velocity, kd = kp·dt, PD toward q̄(tₙ), SPD toward q̄(tₙ₊₁); "
             f"point masses m1 = {p.m1} kg, m2 = {p.m2} kg on massless links l1 = {p.l1} m, "
             f"l2 = {p.l2} m, g = {p.g} m/s² (masses fitted to the kp = 30 row only). "
             "‖e‖∞ = maxₙ|eₙ|, ‖e‖₂ = √Σₙ eₙ².")
    if fit:
        m1, m2 = T.fit_masses()
        setup += f"\n\nRefit of the masses to the kp = 30 row: m1 = {m1:.4f} kg, m2 = {m2:.4f} kg."
    facts: dict = {}
    ours = T.tables()
    headline, hf = TR.headline_markdown(ours, T.tables(pd_target="next"))
    facts.update(split=hf["split20"], na_agree=hf["na_agree"])
    series = TR.error_series()
    fig23, facts["fig23"] = TR.figures23_markdown(series)
    TR.plot_figures23(series, out)

    kps = T.FIGURE4_KP[::2] if quick else T.FIGURE4_KP
    pd, spd = figure4(kps)
    free = pd < T.FIGURE4_DT_CAP
    facts["fig4_slope"] = (float(np.polyfit(np.log(np.array(kps)[free]), np.log(pd[free]), 1)[0])
                           if free.sum() >= 2 else float("nan"))
    facts["spd_capped"], facts["n_fig4"] = int((spd >= T.FIGURE4_DT_CAP).sum()), len(kps)
    balls, facts["balls"] = tan2011_balls.section(quick)
    kf_parts, facts["keyframes"] = tan2011_keyframes.section(out, quick=quick)
    c_parts, facts["constraints"] = tan2011_constraints.section(out, quick=quick)

    parts = [
        (None, "# Tan, Liu & Turk 2011 — reproduction (§3.4 pendulum, §4.1 ball scenarios, §4.2 keyframes, "
               "§4.3 constraints)\n"),
        ("claims", claims_markdown(facts)),
        ("setup", setup),
        (None, "## Tables 1–2\n"), ("tables", tables_markdown(ours)),
        (None, "### How many cells agree\n"), ("headline", headline),
        (None, "## Figures 2–3 — tracking error over time\n"),
        ("fig23", "Every formulation at every kp of Tables 1–2 (explicit Euler, dt = 1/60 s, one period). "
                  "The error's RMS over the second half of the period, after the start-up transient:\n\n" + fig23),
        (None, "![Figure 2](tan2011_fig2.png)\n\n![Figure 3](tan2011_fig3.png)\n"),
        (None, "## Figure 4 — largest stable time step\n"),
        ("fig4", "Stable = tracks one period without leaving the reference by more than π rad; "
                 "time steps capped at 1/30 s (the reference is sampled at 30 fps).\n\n"
         + figure4_markdown(kps, pd, spd)),
        (None, "![Figure 4](tan2011_fig4.png)\n"),
        (None, "## SPD prediction vs integrator\n"),
        ("integrator", "The paper predicts q' = q ⊕ v·dt (explicit Euler). PyBullet integrates semi-implicitly "
                       "(q' = q ⊕ v'·dt), for which the consistent prediction adds Kp·dt² to the implicit mass "
                       '(`prediction="semi_implicit"`).\n\n' + integrator_markdown()),
    ]
    if not quick:
        parts += [(None, "## Cross-check on a PyBullet pendulum\n"),
                  ("pybullet", "SPD with the semi-implicit prediction, stepped by PyBullet vs by the analytic "
                               "model:\n\n" + pybullet_markdown())]
    parts += [(None, "## §4.1 The ball scenarios at the paper's 33 ms\n"),
              ("balls", tan2011_balls.PROSE + " Peak deviation: the largest joint angle between the run and the same run without the ball.\n\n"
               + balls),
              *kf_parts, *c_parts]
    for name, text in parts:
        if name:
            write_block(out, name, text)
    report = out / "report.md"
    with atomic_target(report) as tmp:
        tmp.write_text("\n".join(text.rstrip("\n") + "\n" for _, text in parts))
    plot_figure4(kps, pd, spd, out / "tan2011_fig4.png")
    (out / "page_skeleton.md").write_text(skeleton(parts))
    return report


def skeleton(parts: list) -> str:
    """docs/tan2011.md as the run lays it out: the static text and each block between its markers."""
    lines = []
    for name, text in parts:
        if name:
            lines += [f"<!-- reproduce tan2011 {name} -->", "", text.strip("\n"), "",
                      f"<!-- /reproduce tan2011 {name} -->", ""]
        else:
            lines += [text.strip("\n"), ""]
    return "\n".join(lines)
