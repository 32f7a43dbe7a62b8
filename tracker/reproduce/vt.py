"""Reproduce the virtual-trajectory poster: both steps solved with the contacts, Fig. 1, free space.

Every number of ``docs/virtual_trajectory.md`` is a block written here
(:func:`tracker.reproduce.blocks.write_block`); the figures are written into ``out``
(``vt_free_space.png``, ``vt_fig1.png``, ``vt_humanoid.png``). Sections:

* **free space** (PyBullet, no boxes): with ``f0`` (``id``, ``peek``, ``lcp``) K = 110 and 2000 give
  the same motion, without it they do not;
* **Fig. 1 in the LCP world** (:mod:`tracker.scenes.desk_lcp`, the paper's kind of engine: the
  step is one MLCP with the contacts): ``vt`` ``lcp`` with step 1 seeing every contact or only the
  arm's own, ``vt`` ``id`` and SPD without ``f0``;
* **Fig. 1 in PyBullet's world** (:mod:`tracker.scenes.desk`): the paper's simple PD, stiff SPD,
  ``vt`` with the contact-blind ``id``, the measured ``peek`` and the LCP model's ``lcp``;
* **box masses**: the large box's masses for which (b) and (c) both hold;
* **Fig. 1(a)** with compliant contacts: does the simple PD penetrate where vt does not;
* **the LCP solves**: complementarity of every solve of the Fig. 1 runs, and each against scipy's QP;
* **the humanoid**: shared clips at a low gain with ``f0`` against SPD, and the six ball scenarios
  with ``vt`` at low gains and no gain schedule against SPD with the schedule.

The claims table (block ``claims``) is written last.

Usage: ``tracker reproduce vt [--out DIR] [--quick] [--check | --write-docs]``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from tracker.atomic import atomic_target
from tracker.reproduce.blocks import write_block
from tracker.reproduce.vt_setup import (K_SOFT, K_STIFF, LCP_RUNS, MASSES, PB_RUNS, PD_DT, STIFFNESSES,
                                        holds_b, holds_c, last_contact)
from tracker.reproduce.vt_setup import travel as _travel

TITLE = "Virtual trajectory (poster): both steps solved with the contacts (MLCP), Fig. 1 box pushing, free space"
#: docs/ page holding the blocks.
PAGE = "virtual_trajectory.md"

K_LOW, K_REACT, K_TRACK = 2.5, 250.0, 25000.0
SCENARIOS = ("soccer_light", "soccer_heavy", "volleyball_slow", "volleyball_fast", "basketball_slow",
             "basketball_fast")
CLIPS = ("cmu_02_01_walk.bvh", "cmu_10_01_soccer_kick.bvh", "bandai_punch_normal_001.bvh")
CLIP_SECONDS = 4.0


def _mocap_dir() -> Path:
    from tracker.paths import REPO_DIR

    return REPO_DIR.parent / "shared" / "mocap"


def _row(label: str, r, extra: str = "") -> str:
    small, large, short = _travel(r)
    touch = np.flatnonzero(r.hand_force > 0)
    pre = touch[0] if touch.size else len(r.t)
    pre_err = float(np.abs(r.q[:pre] - r.q_ref[:pre]).max()) if pre else 0.0
    last = last_contact(r)
    return (f"| {label} | {small:.3f} | {large:.3f} | {short:.3f} | "
            f"{'to the end' if last is None else f'{last:.2f}'} | {r.hand_force.max():.0f} | "
            f"{r.box_force.max():.0f} | {r.penetration.max() * 1000:.1f} | {pre_err:.4f} |{extra}")


_HEAD = ("| run | small box travel (m) | large box travel (m) | hand behind its reference at the end (m) | "
         "arm presses a box until (s) | peak arm–box force (N) | peak box–box force (N) | max hand penetration (mm) | "
         "max joint error before contact (rad) |")
_ALIGN = "|---|---:|---:|---:|---:|---:|---:|---:|---:|"


# -- sections -------------------------------------------------------------------------------------------


def free_space(out: Path, quick: bool, facts: dict) -> str:
    from tracker.scenes.desk import DURATION, DeskSettings, run_desk

    s = DeskSettings(dt=1 / 120, boxes=False)
    duration = 1.0 if quick else DURATION
    rows, runs = [], {}
    for f0 in ("id", "peek", "lcp", "none"):
        soft = run_desk("vt", K_SOFT, f0=f0, settings=s, duration=duration)
        stiff = run_desk("vt", K_STIFF, f0=f0, settings=s, duration=duration)
        runs[f0] = (soft, stiff)
        diff = float(np.abs(soft.q - stiff.q).max())
        facts[f"free_{f0}"] = diff
        rows.append(f"| {f0} | {diff:.2e} | {np.abs(soft.q - soft.q_ref).max():.2e} | "
                    f"{np.abs(stiff.q - stiff.q_ref).max():.2e} |")
    table = "\n".join([f"The desk arm without boxes (PyBullet), dt = 1/120 s, kd = K·dt, {duration:g} s of the "
                       "hand's sweep.", "",
                       f"| f0 | max \\|q(K={K_SOFT:g}) − q(K={K_STIFF:g})\\| (rad) | max error K={K_SOFT:g} | "
                       f"max error K={K_STIFF:g} |", "|---|---:|---:|---:|", *rows])
    write_block(out, "free", table)
    from tracker.reproduce.vt_plots import plot_free

    plot_free(runs, out / "vt_free_space.png", K_SOFT, K_STIFF)
    return table + "\n\n![free space](vt_free_space.png)"


def fig1_lcp(out: Path, quick: bool, facts: dict) -> str:
    from tracker.scenes.desk_lcp import run_desk_lcp

    runs, solves = {}, {}
    for label, ctrl, k, f0, step1 in LCP_RUNS:
        solves[label] = []
        runs[label] = run_desk_lcp(ctrl, k, f0=f0, step1=step1, solves=solves[label])
    facts["lcp_runs"], facts["lcp_solves"] = runs, solves
    table = "\n".join([_HEAD, _ALIGN] + [_row(label, r) for label, r in runs.items()])
    write_block(out, "fig1_lcp", table)
    from tracker.reproduce.vt_plots import plot_fig1

    plot_fig1(runs, [LCP_RUNS[k][0] for k in (0, 1, 3, 5)], out / "vt_fig1.png")
    return table + "\n\n![Fig. 1](vt_fig1.png)"


def fig1_pybullet(out: Path, quick: bool, facts: dict) -> str:
    from tracker.scenes.desk import DeskSettings, run_desk

    runs = {label: run_desk(ctrl, k, f0=f0, settings=DeskSettings(dt=dt), options=opts)
            for label, ctrl, k, f0, dt, opts in PB_RUNS}
    facts["pb_runs"] = runs
    rows = []
    for label, r in runs.items():
        model = (f" {np.median(r.model_error):.3f} / {r.model_error.max():.1f} |" if r.model_error.size else " — |")
        rows.append(_row(label, r, model))
    table = "\n".join([_HEAD[:-1] + "| LCP model's hinge-velocity error, median / max (rad/s) |",
                       _ALIGN + "---:|", *rows])
    write_block(out, "fig1_pybullet", table)
    return table


def window(out: Path, quick: bool, facts: dict) -> str:
    from tracker.scenes.desk import DeskSettings
    from tracker.scenes.desk_lcp import run_desk_lcp

    masses = MASSES[::2] if quick else MASSES
    rows, hold = [], []
    for m in masses:
        soft = run_desk_lcp("vt", K_SOFT, f0="lcp", step1="own", settings=DeskSettings(large_mass=m))
        stiff = run_desk_lcp("vt", K_STIFF, f0="lcp", step1="own", settings=DeskSettings(large_mass=m))
        b, c = holds_b(stiff), holds_c(soft)
        if b and c:
            hold.append(m)
        rows.append(f"| {m:g} | {0.6 * m * 9.81:.0f} | {_travel(stiff)[1]:.3f} | {'✔' if b else '✘'} | "
                    f"{_travel(soft)[1]:.3f} | {_travel(soft)[2]:.3f} | {'✔' if c else '✘'} |")
    facts["window"] = (min(hold), max(hold)) if hold else None
    facts["masses"] = masses
    table = "\n".join(["| large box (kg) | force to slide it (N) | K = 2000: large box travel (m) | (b) | "
                       "K = 110: large box travel (m) | K = 110: hand behind (m) | (c) |",
                       "|---:|---:|---:|---|---:|---:|---|", *rows])
    write_block(out, "window", table)
    return table


def soft_contacts(out: Path, quick: bool, facts: dict) -> str:
    from tracker.scenes.desk import DeskSettings, run_desk

    rows, pen = [], {}
    for ks in STIFFNESSES:
        for label, ctrl, k, dt in (("simple PD, K = 2000, dt = 1/1200 s", "pd", K_STIFF, PD_DT),
                                   ("vt id, K = 2000", "vt", K_STIFF, 1 / 120),
                                   ("vt id, K = 110", "vt", K_SOFT, 1 / 120)):
            r = run_desk(ctrl, k, f0="id", settings=DeskSettings(dt=dt, contact_stiffness=ks))
            pen[(ks, ctrl, k)] = r.penetration.max() * 1000
            rows.append(f"| {ks:g} | {label} | {r.penetration.max() * 1000:.1f} | {r.hand_force.max():.0f} | "
                        f"{_travel(r)[1]:.3f} |")
    facts["soft_pen"] = pen
    table = "\n".join(["| contact stiffness (N/m) | run | max hand penetration (mm) | peak arm–box force (N) | "
                       "large box travel (m) |", "|---:|---|---:|---:|---:|", *rows])
    write_block(out, "soft", table)
    return table


def lcp_check(out: Path, quick: bool, facts: dict) -> str:
    """Every solve of the LCP-world runs: complementarity, and the QP at the solution's friction bounds."""
    from scipy.optimize import minimize

    from tracker.control.lcp import bounds

    rows, worst_qp, n_all, worst_err = [], 0.0, 0, 0.0
    for label, sols in facts["lcp_solves"].items():
        err = np.array([s.error for s in sols]) if sols else np.zeros(1)
        qp = 0.0
        for s in sols[::max(1, len(sols) // (4 if quick else 12))]:  # scipy is slow: a sample per run
            a, b, lo, hi, nof, mu = s.problem
            lo2, hi2 = bounds(lo, hi, s.x, nof, mu)
            scale = 1.0 + np.abs(s.x).max()
            fix = lambda v: None if not np.isfinite(v) else float(v)
            res = minimize(lambda x: 0.5 * x @ a @ x + b @ x, s.x * 0.0, jac=lambda x: a @ x + b,
                           method="L-BFGS-B", bounds=[(fix(u), fix(v)) for u, v in zip(lo2, hi2)],
                           options=dict(ftol=1e-16, gtol=1e-10, maxiter=20000))
            obj = lambda x: 0.5 * x @ a @ x + b @ x
            # the solution is the QP's optimum: scipy's objective is no lower (to its own tolerance)
            qp = max(qp, (obj(s.x) - obj(res.x)) / scale)
        worst_qp, n_all = max(worst_qp, qp), n_all + len(sols)
        worst_err = max(worst_err, float(err.max()))
        rows.append(f"| {label} | {len(sols)} | {err.max():.1e} | {int((err > 1e-5).sum())} | {qp:.1e} |")
    facts["lcp_err"], facts["lcp_qp"], facts["lcp_n"] = worst_err, worst_qp, n_all
    own = [s.error for k, v in facts["lcp_solves"].items() if "own" in k for s in v]
    facts["lcp_err_own"] = max(own) if own else 0.0
    table = "\n".join(["| run | solves with contacts | max complementarity error (m/s, rad/s) | "
                       "solves over 1e-5 | QP objective above scipy's (sampled, relative) |",
                       "|---|---:|---:|---:|---:|", *rows])
    write_block(out, "lcp_check", table)
    return table


def humanoid(out: Path, quick: bool, facts: dict) -> str:
    from tracker.reproduce.vt_humanoid import track

    names = CLIPS[:1] if quick else CLIPS
    seconds = 1.0 if quick else CLIP_SECONDS
    labels = (f"vt id, k_t {K_LOW:g}", f"vt peek, k_t {K_LOW:g}", f"SPD, k_t {K_LOW:g}", f"SPD, k_t {K_TRACK:g}")
    specs = (("vt", K_LOW, "id"), ("vt", K_LOW, "peek"), ("spd", K_LOW, "id"), ("spd", K_TRACK, "id"))
    path0 = _mocap_dir() / names[0]
    if path0.exists():
        track(path0, "vt", K_LOW, 0.1)  # warm-up: the first run pays the imports
    rows, data = [], {}
    for name in names:
        path = _mocap_dir() / name
        if not path.exists():
            continue
        cells = [track(path, ctrl, k, seconds, f0=f0) for ctrl, k, f0 in specs]
        data[name] = dict(zip(labels, cells))
        rows.append(f"| {name} | " + " | ".join(f"{c['err']:.4f} / {c['err_max']:.3f}"
                                                  + ("" if c["status"] == "ok" else " (diverged)") for c in cells)
                    + " |")
    table = "\n".join([f"Anchored root, dt = 1/60 s, gains per kg supported, kd = kp·dt, the first {seconds:g} s. "
                       "Mean / max joint error (rad).", "",
                       "| clip | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels), *rows])
    write_block(out, "humanoid", table)
    facts["clips"] = data
    return table


def balls(out: Path, quick: bool, facts: dict) -> str:
    from tracker.reproduce.vt_humanoid import scenario
    from tracker.reproduce.vt_plots import plot_humanoid

    names = SCENARIOS[:1] if quick else SCENARIOS
    soft = lambda k: [f"controller.gains.k_t={k:g}", "schedule.enabled=false", f"schedule.k_r={k:g}"]
    data, rows = {}, []
    for name in names:
        data[name] = {
            "SPD + schedule": scenario(name, []),
            f"vt id, k_t {K_REACT:g}, no schedule": scenario(name, ["controller.name=vt"] + soft(K_REACT)),
            f"vt id, k_t {K_LOW:g}, no schedule": scenario(name, ["controller.name=vt"] + soft(K_LOW)),
        }
        for lab, d in data[name].items():
            rec = f"{d['recover']:.3f}" if d["recovered"] else "not recovered"
            speed = "—" if d["exit_speed"] is None else f"{d['exit_speed']:.2f}"
            rows.append(f"| {name} | {lab} | {d['peak']:.3f} | {d['peak_mean']:.3f} | {rec} | {speed} | "
                        f"{d['caught'] if d['caught'] is not None else '—'} |")
    table = "\n".join([f"Each config as shipped (SPD, k_t = {K_TRACK:g}/kg, Zordan–Hodgins schedule) against vt "
                       f"without a schedule at k_t = {K_REACT:g}/kg (the schedule's reaction gain) and {K_LOW:g}/kg. "
                       "Peak deviation from the ball-free run of the same controller (rad), time to recover (s), "
                       "the ball's exit speed (m/s) and whether it was caught.", "",
                       "| scenario | run | peak deviation | peak mean deviation | recover (s) | ball exit speed | "
                       "caught |", "|---|---|---:|---:|---:|---:|---|", *rows])
    write_block(out, "balls", table)
    plot_humanoid(facts.get("clips", {}), data, out / "vt_humanoid.png")
    return table + "\n\n![humanoid](vt_humanoid.png)"


SECTIONS = (
    ("1. Free space: with f0 the gains do not change the motion", free_space),
    ("2. Fig. 1 in the LCP world (the paper's engine)", fig1_lcp),
    ("3. The humanoid: shared clips", humanoid),
    ("4. The humanoid: the six ball scenarios", balls),
    ("5. Fig. 1 in PyBullet's world", fig1_pybullet),
    ("6. The large box's mass", window),
    ("7. Fig. 1(a) with compliant contacts", soft_contacts),
    ("8. The LCP solves", lcp_check),
)


def run(out: Path, *, quick: bool = False) -> Path:
    """Run every section into ``out``, write the claims block and ``report.md``; returns its path."""
    from tracker.reproduce.vt_claims import claims_markdown

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    facts: dict = {}
    body = []
    for title, fn in SECTIONS:
        t0 = time.perf_counter()
        body += [f"## {title}\n", fn(out, quick, facts), ""]
        facts.setdefault("seconds", {})[title] = time.perf_counter() - t0
    claims = claims_markdown(facts)
    write_block(out, "claims", claims)
    parts = [f"# {TITLE}\n", "Numbers from `tracker reproduce vt" + (" --quick" if quick else "") + "`.\n",
             "## Claims\n", claims, ""] + body
    report = out / "report.md"
    with atomic_target(report, suffix=".md") as tmp:
        Path(tmp).write_text("\n".join(parts) + "\n", encoding="utf-8")
    return report
