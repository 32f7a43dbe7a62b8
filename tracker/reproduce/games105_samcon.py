"""GAMES105 lecture 10's SAMCON part in ``tracker reproduce games105``: a committed track, replayed.

A search does not run inside the reproduction (minutes of rollouts): ``data/samcon/kick_1s/`` holds
the offset track of one search, ``offsets.npz``, its record ``optimize.json`` and, in ``README.md``,
the one command that made both. The reproduction replays the track as ``tracker run`` would (free
root, the bare-clip settings of :data:`tracker.sampling.optimize.CLIP_SETTINGS`) and the same servo
without it, and prints the search's record beside the replay. It also writes the table of SAMCON's
parameters against Liu et al.'s papers from the code's own defaults (:func:`parameters_markdown`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tracker.paths import DATA_DIR

#: The committed search: its folder, the clip and the window it covers.
TRACK_DIR = DATA_DIR / "samcon" / "kick_1s"
CLIP = DATA_DIR / "motions" / "kick.bvh"
DURATION = 1.0


def _config(out: Path, offsets: Path | None):
    from tracker.experiments.config import config_from_data
    from tracker.sampling.optimize import clip_config

    sets = [f"sim.duration={DURATION!r}", "outputs.plots=false"]
    if offsets is not None:
        sets.append(f"controller.offsets={offsets}")
    return config_from_data(clip_config(CLIP), out / f"{CLIP.stem}.yaml", sets, origin="option")


def replay(out: Path) -> dict:
    """Replay the committed track and the servo without it: ``{"track": metrics, "plain": metrics, "record": json}``."""
    from tracker.experiments.runner import build, compute_metrics, simulate

    result = {"record": json.loads((TRACK_DIR / "optimize.json").read_text(encoding="utf-8"))}
    for key, offsets in (("track", TRACK_DIR / "offsets.npz"), ("plain", None)):
        prep = build(_config(out, offsets))
        rec, _ = simulate(prep)
        m = compute_metrics(prep, rec, None, {})
        m["fell_at"] = rec.meta.get("fell_at")
        m["status"] = rec.status
        result[key] = m
    return result


def _fell(m: dict) -> str:
    return "no" if m.get("fell_at") is None else f"FELL at {m['fell_at']:.3f} s"


def replay_markdown(r: dict) -> str:
    """The ``samcon`` block."""
    rec, t, p = r["record"], r["track"], r["plain"]
    o = rec["options"]
    lines = [f"Search record (`data/samcon/kick_1s/optimize.json`): {o['samples']} samples per segment, "
             f"{o['keep']} kept, {o['iterations']} iterations, segments of {o['segment']:g} s, seed {o['seed']}; "
             f"{rec['rollouts']} rollouts.", "",
             "| iteration | best chain's cost |", "|---:|---:|"]
    lines += [f"| {i + 1} | {c:.4g} |" for i, c in enumerate(rec["cost_per_iteration"])]
    lines += ["", f"Replayed now, `{CLIP.name}`, the first {DURATION:g} s on a free root:", "",
              "| run | fell | mean joint error (rad) | mean root error (m) |", "|---|---|---:|---:|",
              f"| the committed track | {_fell(t)} | {t['joint_error_mean_rad']:.4f} | {t['root_error_mean_m']:.4f} |",
              f"| the same servo without offsets | {_fell(p)} | {p['joint_error_mean_rad']:.4f} | "
              f"{p['root_error_mean_m']:.4f} |"]
    return "\n".join(lines)


def parameters_markdown() -> str:
    """The ``samcon-params`` block: our defaults (read from the code) against Liu et al. 2010 and 2015."""
    from tracker.sampling.cost import CostWeights
    from tracker.sampling.samcon import SamconOptions

    o, w = SamconOptions(), CostWeights()
    widths = ", ".join(f"`{p}` {v:g}" for p, v in o.widths)
    ours_cost = (f"pose {w.pose:g}, root {w.root:g}, end effectors {w.end_effector:g}, balance {w.balance:g}, "
                 f"root velocity {w.velocity:g}, contacts {w.contact:g}, fallen {w.fall:g}")
    rows = [  # [L] the lecture's SAMCON slides, [C] ../shared/CONTROLLERS.md §7, [R] liangpan99/SamCon's reading
        ("what is sampled", "offsets to the reference's PD targets, sampled per segment, the best kept, the best "
         "chain backtracked [L, C]", "the same loop, sampling around the previous solution [R]",
         "offsets to the PD targets, piecewise linear between segment boundaries, uniform box per DOF", "—"),
        ("segment length", "short segments, ~0.1 s [C]; the paper's value not read", "not read", f"{o.segment:g} s",
         "—"),
        ("samples / kept per segment", "not read", "not read", f"{o.samples} / {o.keep}",
         "ours: 200/20 never got the CMU walk past 1.3 s, 1000/100 did (docs/samcon.md)"),
        ("sampling half-widths (rad)", "uniform window per DOF [R]; values not read", "not read", widths,
         "ours: legs at 0.2-0.3 rad fell on our walks, 0.4 stood (docs/samcon.md)"),
        ("cost terms", "pose, root, end effectors, balance [C]; weights not read", "not read", ours_cost,
         "root velocity, contacts and falls are ours (docs/samcon.md, \"What it took\")"),
        ("selection", "the best samples of each segment [L: \"sample selection\"]", "samples spread over the "
         "costs, not only the cheapest [R]", f"`{o.selection}` (default); `spread` as an option", "—"),
        ("iterations / shrinking", "—", "re-sample around the previous solution [R]",
         f"{o.iterations} iterations, half-widths × {o.decay:g} each", "ours: the simplest form of [R]'s reading"),
    ]
    lines = ["| parameter | Liu et al. 2010 | Liu et al. 2015 | ours (code defaults) | where we differ, why |",
             "|---|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    return "\n".join(lines)
