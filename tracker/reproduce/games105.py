"""Reproduce GAMES105 lecture 10 (Libin Liu, "Controlling characters") on our humanoid.

The report is a list of sections (:data:`SECTIONS`), each a function ``(out, quick, facts) ->
markdown`` that writes its figures into ``out``, its numbers as blocks of ``docs/games105.md``
(:func:`tracker.reproduce.blocks.write_block`) and what the claims table needs into ``facts``:

* **PD stability** (:mod:`.games105_pd`): the slides' matrix ``A`` against PyBullet's 1-DOF joint;
* **standing**: the authored stance (``data/poses/stand.yaml``) on a free root, 30 s at 1/60 and
  1/30 s: SPD alone, SPD with the stance constraints and no feedback, with the feedback and no
  constraints, and both (each strategy): fell or not, when, CoM drift;
* **balance gains**: where the CoM settles against kp (the servo's deflection);
* **pushes**: ``configs/sweeps/push.yaml``, 0.2 s pushes on the pelvis and the chest from four
  directions, every strategy and none; the largest push survived and a survival plot;
* **clips**: the catch and the forearm pass on a free root with balance, with and without the ball;
* **SAMCON** (:mod:`.games105_samcon`): a committed track replayed, and the parameters' sources.

The claims table (block ``claims``) is written last, from ``facts``. No search runs here.

Usage: ``tracker reproduce games105 [--out DIR] [--quick] [--check | --write-docs]``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

from tracker.atomic import atomic_target
from tracker.reproduce.blocks import write_block
from tracker.reproduce.games105_claims import claims_markdown

PAGE = "games105.md"

TITLE = ("GAMES105 lecture 10: static balance by CoM feedback through the Jacobian transpose (free root, pushes) "
         "and sampling-based control (SAMCON)")


#: The standing table's rows: (label, BalanceOptions keyword arguments, or None for SPD alone).
STANDING_ROWS: tuple[tuple[str, dict | None], ...] = (
    ("none (SPD alone)", None),
    ("constraints, no feedback", {"kp": 0.0, "kd": 0.0}),
    ("jacobian (constraints + feedback)", {}),
    ("ankle (constraints + feedback)", {"strategy": "ankle"}),
    ("hip (constraints + feedback)", {"strategy": "hip"}),
    ("feedback, no constraints", {"constraints": False}),
)


def _pd(out: Path, quick: bool, facts: dict) -> str:
    from tracker.reproduce import games105_pd as pd

    g = pd.grid(quick)
    limits = pd.humanoid_limits()
    pd.figure(g, out / "games105_pd_stability.png")
    text = pd.markdown(g, limits)
    write_block(out, "pd-stability", text)
    facts["pd"] = dict(zip(("cells", "agree", "err"), pd.agreement(g)), limits=limits)
    return text + "\n\n![PD stability](games105_pd_stability.png)"


def _standing(out: Path, quick: bool, facts: dict) -> str:
    from tracker.control.balance import BalanceOptions
    from tracker.sim.push import Push, run_push
    from tracker.sim.stance import stand_simulation

    seconds = 5.0 if quick else 30.0
    lines = [f"Standing: the authored stance on a free root, {seconds:g} s.", "",
             "| dt | balance | fell | at t (s) | CoM drift (m) | largest CoM offset (m) |", "|---|---|---|---:|---:|---:|"]
    rows = facts["standing"] = {}
    for dt, label in ((1 / 60, "1/60"), (1 / 30, "1/30")):
        for name, kw in STANDING_ROWS:
            sim = stand_simulation(dt=dt, balance=None if kw is None else BalanceOptions(**kw))
            try:
                o = run_push(sim, Push(force=0.0), seconds)
            finally:
                sim.close()
            rows[(label, name)] = o
            at = f"{o.fell_time_s:.3f}" if o.fell else "—"
            lines.append(f"| {label} | {name} | {'FELL' if o.fell else 'no'} | {at} | {o.com_drift_m:.4f} | "
                         f"{o.max_com_offset_m:.4f} |")
    lines.append("\nCoM drift: horizontal distance between the CoM at the start and at the end; a fall is as every "
                 "command counts it (tracker/sim/fall.py): a link other than a foot on the ground, or the root below "
                 "half the stance's height. Constraints: the stance "
                 "contacts held in SPD's prediction; feedback: the CoM force through J̃ᵀ (kp = 4000 N/m, "
                 "kd = 400 N·s/m).")
    text = "\n".join(lines)
    write_block(out, "standing", text)
    return text


def _gains(out: Path, quick: bool, facts: dict) -> str:
    from tracker.control.balance import BalanceOptions
    from tracker.sim.push import Push, run_push
    from tracker.sim.stance import stand_simulation

    kps = (1000.0, 4000.0) if quick else (500.0, 1000.0, 2000.0, 4000.0, 8000.0)
    lines = ["Balance gain: where the CoM settles (1/60 s, 5 s).", "",
             "| kp (N/m) | kd (N·s/m) | fell | CoM drift (m) |", "|---:|---:|---|---:|"]
    facts["gains"] = {}
    for kp in kps:
        sim = stand_simulation(balance=BalanceOptions(kp=kp, kd=0.1 * kp))
        try:
            o = run_push(sim, Push(force=0.0), 5.0)
        finally:
            sim.close()
        facts["gains"][kp] = o
        lines.append(f"| {kp:g} | {0.1 * kp:g} | {'FELL' if o.fell else 'no'} | {o.com_drift_m:.4f} |")
    text = "\n".join(lines)
    write_block(out, "gains", text)
    return text


def _pushes(out: Path, quick: bool, facts: dict) -> str:
    import shutil

    from tracker.analysis.push_plots import write_sweep
    from tracker.paths import CONFIG_DIR
    from tracker.sim.push import load_sweep, run_sweep, survival_table

    settings = load_sweep(CONFIG_DIR / "sweeps" / "push.yaml")
    if quick:
        settings = dataclasses.replace(settings, links=("pelvis",), strategies=("none", "jacobian"),
                                       forces=(0.0, 25.0, 50.0), time=2.5)
    rows = run_sweep(settings)
    table = survival_table(rows)
    write_sweep(out, rows, table)
    if (out / "survival.png").is_file():
        shutil.copyfile(out / "survival.png", out / "games105_survival.png")
    dirs = [d for d, _ in settings.directions]
    lines = [f"Largest 0.2 s push survived (N), dt = {settings.dt:.4f} s.", "",
             "| strategy | link | " + " | ".join(dirs) + " |", "|---|---|" + "---:|" * len(dirs)]
    best = 0.0
    for st in settings.strategies:
        for link in settings.links:
            cells = []
            for d in dirs:
                v = next(r["largest_survived_n"] for r in table
                         if (r["strategy"], r["link"], r["direction"]) == (st, link, d))
                cells.append("falls unpushed" if math.isnan(v) else f"{v:g}")
                best = max(best, 0.0 if math.isnan(v) else v)
            lines.append(f"| {st} | {link} | " + " | ".join(cells) + " |")
    facts["push_best"] = best
    lines.append(f"\nForces tried: {', '.join(f'{f:g}' for f in settings.forces)} N.")
    text = "\n".join(lines)
    write_block(out, "pushes", text)
    return text + "\n\n![survival](games105_survival.png)\n\nEvery push: `survival.csv`; the table: `largest.csv`."


#: The pushes of the recovery-step table (chest, 0.2 s), N, and how long each run goes on, s.
STEP_FORCES = (100.0, 125.0, 150.0, 175.0, 200.0)
STEP_TIME = 5.0


def _step_pushes(out: Path, quick: bool, facts: dict) -> str:
    """Issue 33, item 3: the chest pushes again, with the Jacobian feedback alone and with recovery steps."""
    from tracker.paths import CONFIG_DIR
    from tracker.sim.push import load_sweep, run_sweep

    settings = dataclasses.replace(load_sweep(CONFIG_DIR / "sweeps" / "push.yaml"), links=("chest",),
                                   strategies=("jacobian", "step"), forces=STEP_FORCES, time=STEP_TIME)
    if quick:
        settings = dataclasses.replace(settings, directions=settings.directions[:2], forces=(150.0,))
    rows = run_sweep(settings)
    dirs = [d for d, _ in settings.directions]
    lines = [f"0.2 s pushes on the chest, dt = {settings.dt:.4f} s, {settings.time:g} s simulated (the push at "
             f"{settings.start:g} s): the Jacobian feedback alone, and with recovery steps (`--strategy step`).", "",
             "| push | strategy | " + " | ".join(dirs) + " |", "|---:|---|" + "---|" * len(dirs)]
    for force in settings.forces:
        for st in settings.strategies:
            cells = []
            for d in dirs:
                r = next(r for r in rows if (r["strategy"], r["direction"], r["force_n"]) == (st, d, force))
                n = r["steps"]
                steps = f", {n} step{'s' if n != 1 else ''}" if n else ""
                cells.append(f"falls at {r['fell_time_s']:.2f} s{steps}" if r["fell"] else f"stands{steps}")
            lines.append(f"| {force:g} N | {st} | " + " | ".join(cells) + " |")
    facts["step_pushes"] = rows
    text = "\n".join(lines)
    write_block(out, "step-pushes", text)
    return text


#: The free-root clips with balance: (label, config, overrides).
CLIPS = (("catch + basketball 9 m/s", "basketball_fast"), ("forearm pass + volleyball 15 m/s", "volleyball_fast"))


def _clips(out: Path, quick: bool, facts: dict) -> str:
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, simulate
    from tracker.paths import CONFIG_DIR

    lines = ["`tracker run configs/NAME.yaml --set root.mode=free --set controller.balance.enabled=true` "
             "(the scenarios' own gains and 8 physics substeps), measured now:", "",
             "| clip | ball | status | fell at (s) | simulated (s) |", "|---|---|---|---:|---:|"]
    facts["clips"] = {}
    for label, name in CLIPS:
        sets = ["root.mode=free", "controller.balance.enabled=true"]  # 3 s each: quick too
        for balls in (True, False):
            rec, _ = simulate(build(load_config(CONFIG_DIR / f"{name}.yaml", sets)), balls=balls)
            fell = rec.meta.get("fell_at")
            facts["clips"][(name, balls)] = (rec.status, fell, float(rec.t[-1]))
            lines.append(f"| {label.split(' + ')[0]} | {label.split(' + ')[1] if balls else 'none'} | {rec.status} | "
                         f"{'—' if fell is None else f'{fell:.3f}'} | {float(rec.t[-1]):.3f} |")
    text = "\n".join(lines)
    write_block(out, "clips", text)
    return text


def _samcon(out: Path, quick: bool, facts: dict) -> str:
    from tracker.reproduce import games105_samcon as sc

    r = sc.replay(out / "samcon")
    facts["samcon"] = r
    text = sc.replay_markdown(r)
    write_block(out, "samcon", text)
    params = sc.parameters_markdown()
    write_block(out, "samcon-params", params)
    return text + "\n\n" + params


#: The shipped free-root track the look-ahead feedback is measured on, and the trials' seeds.
REACT_CONFIG = "cmu_02_01_walk"
REACT_SEEDS = (0,)


def _react(out: Path, quick: bool, facts: dict) -> str:
    """Issue 33, item 2: perturbations the search never saw, on the shipped walk, open loop and with
    look-ahead corrections (``tracker perturb --react``)."""
    import os

    from tracker.experiments.build import build
    from tracker.experiments.config import load_config
    from tracker.paths import CONFIG_DIR
    from tracker.sampling.perturb import run_trials, standard_trials, summary
    from tracker.sampling.react import ReactOptions

    config = CONFIG_DIR / "free" / f"{REACT_CONFIG}.yaml"
    prep = build(load_config(config))
    workers = max(1, min(2, os.cpu_count() or 1))
    lines = [f"`tracker perturb configs/free/{REACT_CONFIG}.yaml --seed S --react` (20 balls of 0.45 kg at 8 m/s at "
             "the chest or a leg, 150 N x 0.1 s on the pelvis from each side at 2 times; each trial from the clip's "
             "start to its end):", "",
             "| seed | trials | open loop: stayed up | with look-ahead feedback: stayed up | balls | pushes | "
             "corrections per trial (mean) |", "|---:|---:|---:|---:|---:|---:|---:|"]
    facts["react"] = {}
    for seed in REACT_SEEDS[:1] if quick else REACT_SEEDS:
        trials = standard_trials(prep.reference.duration, seed)
        if quick:
            trials = [t for t in trials if t.kind == "push"]
        undisturbed, outcomes, open_loop = run_trials(prep, trials, ReactOptions(seed=seed), workers)
        r, o = (summary(str(config), seed, undisturbed, xs) for xs in (outcomes, open_loop))
        mean = sum(len(x.reactions) for x in outcomes) / len(outcomes)
        facts["react"][seed] = (o["survived"], r["survived"], r["trials"])
        lines.append(f"| {seed} | {r['trials']} | {o['survived']} | **{r['survived']}** "
                     f"({100 * r['survived'] / r['trials']:.0f} %) | {r['balls_survived']} of {r['balls']} | "
                     f"{r['pushes_survived']} of {r['pushes']} | {mean:.1f} |")
    text = "\n".join(lines)
    write_block(out, "react", text)
    return text


#: The report's sections in order: (title, function).
SECTIONS: list[tuple[str, Callable[[Path, bool, dict], str]]] = [
    ("PD stability under semi-implicit Euler", _pd),
    ("Static balance: standing", _standing),
    ("Static balance: feedback gain", _gains),
    ("Static balance: pushes", _pushes),
    ("Static balance: pushes with a recovery step", _step_pushes),
    ("Static balance: free-root clips", _clips),
    ("Sampling-based control: SAMCON", _samcon),
    ("Sampling-based control: look-ahead feedback on a free-root track", _react),
]


def run(out: Path, *, quick: bool = False) -> Path:
    """Run every section into ``out``, write the claims block and ``report.md``; returns its path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    facts: dict = {}
    body = []
    for title, fn in SECTIONS:
        body += [f"## {title}\n", fn(out, quick, facts), ""]
    claims = claims_markdown(facts)
    write_block(out, "claims", claims)
    parts = [f"# {TITLE}\n", "Numbers from `tracker reproduce games105" + (" --quick" if quick else "") + "`.\n",
             "## Claims\n", claims, ""] + body
    report = out / "report.md"
    with atomic_target(report, suffix=".md") as tmp:
        Path(tmp).write_text("\n".join(parts) + "\n", encoding="utf-8")
    return report
