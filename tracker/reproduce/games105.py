"""Reproduce GAMES105 lecture 10 (Libin Liu, "Controlling characters") on our humanoid.

The report is a list of sections (:data:`SECTIONS`), each a function ``(out, quick) ->
markdown`` that writes its own figures into ``out``; later issues (sampling-based control,
SAMCON) add theirs to the list. The balance section:

* **standing**: the authored stance (``data/poses/stand.yaml``) on a free root, tracked by
  SPD with and without the CoM feedback, 30 s at 1/60 and 1/30 s: fell or not, when, CoM drift;
* **balance gains**: where the CoM settles against kp (the servo's deflection);
* **pushes**: ``configs/sweeps/push.yaml``, 0.2 s pushes on the pelvis and the chest from
  four directions, every strategy and none; the largest push survived and a survival plot.

The sampling-based control section (issue 20) runs SAMCON briefly on the CMU walk's first second.

Usage: ``tracker reproduce games105 [--out DIR] [--quick]``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

from tracker.atomic import atomic_target

TITLE = ("GAMES105 lecture 10: static balance by CoM feedback through the Jacobian transpose (free root, pushes) "
         "and sampling-based control (SAMCON)")


def _standing(out: Path, quick: bool) -> str:
    from tracker.control.balance import BalanceOptions
    from tracker.sim.push import Push, run_push
    from tracker.sim.stance import stand_simulation

    seconds = 5.0 if quick else 30.0
    lines = [f"### Standing: the authored stance on a free root, {seconds:g} s\n",
             "| dt | feedback | fell | at t (s) | CoM drift (m) | largest CoM offset (m) |", "|---|---|---|---:|---:|---:|"]
    for dt, label in ((1 / 60, "1/60"), (1 / 30, "1/30")):
        for name, bal in (("none (SPD alone)", None), ("jacobian", BalanceOptions()),
                          ("ankle", BalanceOptions(strategy="ankle")), ("hip", BalanceOptions(strategy="hip"))):
            sim = stand_simulation(dt=dt, balance=bal)
            try:
                o = run_push(sim, Push(force=0.0), seconds)
            finally:
                sim.close()
            at = f"{o.fell_time_s:.3f}" if o.fell else "—"
            lines.append(f"| {label} | {name} | {'FELL' if o.fell else 'no'} | {at} | {o.com_drift_m:.4f} | "
                         f"{o.max_com_offset_m:.4f} |")
    lines.append("\nCoM drift: horizontal distance between the CoM at the start and at the end; a fall is a link "
                 "other than a foot on the ground or the CoM below half its height.")
    return "\n".join(lines)


def _gains(out: Path, quick: bool) -> str:
    from tracker.control.balance import BalanceOptions
    from tracker.sim.push import Push, run_push
    from tracker.sim.stance import stand_simulation

    kps = (1000.0, 4000.0) if quick else (500.0, 1000.0, 2000.0, 4000.0, 8000.0)
    lines = ["### Balance gain: where the CoM settles (1/60 s, 5 s)\n",
             "| kp (N/m) | kd (N·s/m) | fell | CoM drift (m) |", "|---:|---:|---|---:|"]
    for kp in kps:
        sim = stand_simulation(balance=BalanceOptions(kp=kp, kd=0.1 * kp))
        try:
            o = run_push(sim, Push(force=0.0), 5.0)
        finally:
            sim.close()
        lines.append(f"| {kp:g} | {0.1 * kp:g} | {'FELL' if o.fell else 'no'} | {o.com_drift_m:.4f} |")
    lines.append("\nThe servos resist the feedback, so the CoM settles where the two balance; kp = 4000 N/m (the "
                 "default) keeps that under 1 cm.")
    return "\n".join(lines)


def _pushes(out: Path, quick: bool) -> str:
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
    dirs = [d for d, _ in settings.directions]
    lines = [f"### Pushes: largest 0.2 s push survived (N), dt = {settings.dt:.4f} s\n",
             "| strategy | link | " + " | ".join(dirs) + " |", "|---|---|" + "---:|" * len(dirs)]
    for s in settings.strategies:
        for link in settings.links:
            cells = []
            for d in dirs:
                v = next(r["largest_survived_n"] for r in table
                         if (r["strategy"], r["link"], r["direction"]) == (s, link, d))
                cells.append("falls unpushed" if math.isnan(v) else f"{v:g}")
            lines.append(f"| {s} | {link} | " + " | ".join(cells) + " |")
    lines.append(f"\nForces tried: {', '.join(f'{f:g}' for f in settings.forces)} N. ![survival](survival.png)\n\n"
                 "Every push: `survival.csv`; the table: `largest.csv`.")
    return "\n".join(lines)


def _samcon(out: Path, quick: bool) -> str:
    """A short SAMCON run (issue 20): the CMU walk's first second on a free root, no root force.

    The settings are ``tracker optimize``'s for a bare clip (stance-held SPD with the weight fed forward, three
    times the model's gains, 1/120 s in 4 substeps) with fewer samples; the full runs on the three goal clips
    are in ``docs/samcon.md``.
    """
    from tracker.experiments.config import config_from_data
    from tracker.paths import DATA_DIR, REPO_DIR
    from tracker.sampling.optimize import clip_config, optimize, plain_outcome
    from tracker.sampling.samcon import SamconOptions

    clip = REPO_DIR.parent / "shared" / "mocap" / "cmu_02_01_walk.bvh"
    note = ""
    if not clip.is_file():  # anyone can run this: the project's own clip stands in for the shared capture
        note = f"({clip} is not here: the project's authored `data/motions/kick.bvh` instead.)\n\n"
        clip = DATA_DIR / "motions" / "kick.bvh"
    duration, opt = ((0.5, SamconOptions(samples=32, keep=4, iterations=2, seed=0)) if quick
                     else (1.0, SamconOptions(samples=300, keep=30, iterations=2, seed=0)))
    cfg = config_from_data(clip_config(clip), out / f"{clip.stem}.yaml", [f"sim.duration={duration!r}"],
                           origin="option")
    res = optimize(cfg, out / "samcon", options=opt, workers=1 if quick else 2)
    m, plain = res.replay.metrics, plain_outcome(res.plain)
    lines = [f"### SAMCON: `{clip.name}`, the first {duration:g} s on a free root\n", note,
             f"`tracker optimize {clip.name} --duration {duration:g} --samples {opt.samples} --keep {opt.keep} "
             f"--iterations {opt.iterations}`: {res.result.rollouts} rollouts in {res.timing['solve_s']:.1f} s.\n",
             "| iteration | best chain's cost |", "|---:|---:|"]
    lines += [f"| {i + 1} | {c:.4g} |" for i, c in enumerate(res.result.cost_per_iteration)]
    lines += ["", "| run | fell | mean joint error (rad) | mean root error (m) |", "|---|---|---:|---:|",
              f"| the optimised track replayed | {m['fell']} | {m['joint_error_mean_rad']:.4f} | "
              f"{m['root_error_mean_m']:.4f} |",
              f"| the same servo without offsets | {plain.replace('did not fall', 'no')} | | |",
              "", "![cost per segment](samcon/cost_per_segment.png)", "",
              "The whole clips (CMU walk, Bandai walk, CMU kick; the goal of issue 20) and their solve times: "
              "`docs/samcon.md`."]
    return "\n".join(lines)


#: The report's sections in order: (title, function). Later issues append theirs.
SECTIONS: list[tuple[str, Callable[[Path, bool], str]]] = [
    ("Static balance: standing", _standing),
    ("Static balance: feedback gain", _gains),
    ("Static balance: pushes", _pushes),
    ("Sampling-based control: SAMCON", _samcon),
]


def run(out: Path, *, quick: bool = False) -> Path:
    """Run every section into ``out`` and write ``report.md``; returns its path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parts = [f"# {TITLE}\n", "Numbers from `tracker reproduce games105" + (" --quick" if quick else "") + "`.\n"]
    for title, fn in SECTIONS:
        parts.append(f"## {title}\n")
        parts.append(fn(out, quick))
        parts.append("")
    report = out / "report.md"
    with atomic_target(report, suffix=".md") as tmp:
        Path(tmp).write_text("\n".join(parts) + "\n", encoding="utf-8")
    return report
