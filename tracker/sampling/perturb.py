"""Perturbation trials on a free-root track: balls and pushes the search never saw, and who stays up.

A trial runs an experiment config (a free root on its offset track) from the clip's start to its end
with one disturbance:

* ``ball``: a ball of :data:`BALL_MASS` kg thrown from the character's front at :data:`BALL_SPEED`
  m/s, aimed at a link (the chest, a thigh or a shin) at a clip time (:class:`~tracker.experiments.
  config.BallConfig`, launched as every scenario's balls are);
* ``push``: :data:`PUSH_FORCE` N for :data:`PUSH_DURATION` s on the pelvis from one of the four
  sides (:mod:`tracker.sim.push`'s directions).

:func:`standard_trials` draws issue 33's set for a seed: 20 balls at random times and links, and
the four push sides at 2 random times each. Times are drawn from :data:`EARLIEST` s after the start
to :data:`SETTLE` s before the clip's end, so that a fall the disturbance causes happens inside the
clip (on the shipped walks a fall comes 1.1–1.5 s after the hit). A trial's outcome is whether the
character fell before the clip's end (:mod:`tracker.sim.fall`'s one notion), when, and its mean root
error from the disturbance on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tracker.errors import ConfigError

BALL_MASS = 0.45
BALL_SPEED = 8.0
BALL_LINKS = ("chest", "left_thigh", "right_thigh", "left_shin", "right_shin")
PUSH_FORCE = 150.0
PUSH_DURATION = 0.1
PUSH_LINK = "pelvis"
PUSH_SIDES = ("front", "left", "back", "right")
EARLIEST = 0.3
SETTLE = 1.2


@dataclass(frozen=True)
class Trial:
    """One disturbance: ``kind`` ``ball`` or ``push``, at clip ``time`` s, on ``link``; a push's
    ``side`` (front, left, back, right)."""

    kind: str
    time: float
    link: str
    side: str = ""

    def label(self) -> str:
        return f"{self.kind} {self.link}{' from the ' + self.side if self.side else ''} at {self.time:.2f} s"


@dataclass(frozen=True)
class TrialOutcome:
    """What a trial did: ``fell``, ``fell_at`` (clip time, s) and ``root_error`` (mean, m, from the
    disturbance to the end or the fall)."""

    trial: Trial
    fell: bool
    fell_at: float | None
    root_error: float
    reactions: tuple = ()

    def to_json(self) -> dict:
        out = {"kind": self.trial.kind, "time": round(self.trial.time, 4), "link": self.trial.link,
               "side": self.trial.side, "fell": self.fell,
               "fell_at": None if self.fell_at is None else round(self.fell_at, 4),
               "root_error_m": round(self.root_error, 4)}
        if self.reactions:
            out["reactions"] = [d.to_json() for d in self.reactions]
        return out


def trial_window(duration: float, start: float = 0.0) -> tuple[float, float]:
    """The clip times trials are drawn from; a :class:`ConfigError` if the clip is too short."""
    lo, hi = start + EARLIEST, start + duration - SETTLE
    if hi <= lo:
        raise ConfigError(f"perturbation trials need a clip of at least {EARLIEST + SETTLE:.1f} s "
                          f"after its start, this one has {duration:.2f} s")
    return lo, hi


def standard_trials(duration: float, seed: int, balls: int = 20, push_times: int = 2,
                    start: float = 0.0) -> list[Trial]:
    """``balls`` ball trials at random times and links, then ``push_times`` pushes from each side."""
    lo, hi = trial_window(duration, start)
    rng = np.random.default_rng((seed, 33))
    out = [Trial("ball", float(t), str(BALL_LINKS[k]))
           for t, k in zip(rng.uniform(lo, hi, balls), rng.integers(0, len(BALL_LINKS), balls))]
    for side in PUSH_SIDES:
        out += [Trial("push", float(t), PUSH_LINK, side) for t in rng.uniform(lo, hi, push_times)]
    return out


def undisturbed_nominal(prep) -> np.ndarray:
    """The reduced states of ``prep``'s track run undisturbed, at its knots (what :mod:`tracker.sampling.react`
    compares against)."""
    from tracker.experiments.runner import make_simulation
    from tracker.sampling.react import nominal_states

    sim = make_simulation(prep)
    try:
        return nominal_states(sim)
    finally:
        sim.close()


def run_trial(prep, trial: Trial | None, react=None, nominal: np.ndarray | None = None) -> TrialOutcome:
    """Run ``prep`` (a built free-root config with an offset track, no balls) to the clip's end with
    ``trial``'s disturbance (None: none); ``react``, a :class:`~tracker.sampling.react.ReactOptions`: with
    look-ahead corrections against ``nominal`` (:func:`undisturbed_nominal`, computed if None)."""
    import math

    from tracker.experiments.build import scenario_of
    from tracker.experiments.runner import make_simulation
    from tracker.experiments.sources import launches_of
    from tracker.sim.push import DIRECTIONS, Push

    cfg = prep.config
    track = prep.options.offsets
    if track is None or cfg.root.mode != "free":
        raise ConfigError(f"{cfg.source or cfg.name}: perturbation trials need root.mode: free and "
                          "controller.offsets (a shipped track's config)")
    scenario = None
    if trial is not None and trial.kind == "ball":
        from tracker.experiments.config import BallConfig

        ball = BallConfig(preset="soccer", mass=BALL_MASS, target_link=trial.link, impact_time=round(trial.time, 6),
                          speed=BALL_SPEED)
        cfg = dataclasses.replace(cfg, balls=(ball,))
        prep = dataclasses.replace(prep, config=cfg, launches=launches_of(cfg))
        scenario = scenario_of(prep)
    if react is not None and nominal is None:
        nominal = undisturbed_nominal(prep)
    sim = make_simulation(prep, scenario=scenario)
    reaction = None
    try:
        if react is not None:
            from tracker.sampling.react import Reaction

            reaction = Reaction(sim, react, nominal)
        c = sim.character
        ref = prep.reference
        end = cfg.clip.start + cfg.duration if cfg.duration is not None else ref.duration
        push = link = None
        if trial is not None and trial.kind == "push":  # on the clip's clock (start: the trial's time)
            push = Push(PUSH_FORCE, PUSH_DURATION, DIRECTIONS[trial.side], trial.link, trial.time)
            link = c.link_index(trial.link)
        errs = []
        t_from = trial.time if trial is not None else sim.t
        for _ in range(int(round((end - sim.t) / sim.opt.dt))):
            if reaction is not None:
                reaction.before_step()
            if push is not None:
                push.apply(c, link, sim.t)
            row = sim.step()
            if row["t"] >= t_from - 1e-9:
                errs.append(math.dist(row["q"][0:3], row["q_ref"][0:3]))
            if sim.fell_at is not None:
                break
    finally:
        sim.close()
    return TrialOutcome(trial, sim.fell_at is not None, sim.fell_at, float(np.mean(errs)) if errs else 0.0,
                        tuple(reaction.decisions) if reaction is not None else ())


def summary(config: str, seed: int, undisturbed, outcomes: list) -> dict:
    """``perturb.json``: the counts and every trial."""
    balls = [o for o in outcomes if o.trial.kind == "ball"]
    pushes = [o for o in outcomes if o.trial.kind == "push"]
    up = lambda xs: sum(not o.fell for o in xs)  # noqa: E731
    return {"config": config, "seed": seed, "trials": len(outcomes), "survived": up(outcomes),
            "balls": len(balls), "balls_survived": up(balls), "pushes": len(pushes), "pushes_survived": up(pushes),
            "undisturbed_fell": undisturbed.fell, "outcomes": [o.to_json() for o in outcomes]}


_PREP = None  # the built config, for forked trial workers


def _trial(index: int, trial, react, nominal):
    return index, run_trial(_PREP, trial, react, nominal), (run_trial(_PREP, trial) if react is not None else None)


def run_trials(prep, trials: list, react, workers: int = 1, show=None) -> tuple:
    """``(undisturbed, outcomes, open-loop outcomes or [])`` of ``trials`` on ``prep`` (with ``react``'s
    corrections, and then each also open loop), ``workers`` processes; ``show(k, n, outcome, open_loop)``
    as each finishes, in trial order."""
    global _PREP
    from tracker.experiments.backends import parallel_map

    _PREP = prep
    nominal = undisturbed_nominal(prep) if react is not None else None
    undisturbed = run_trial(prep, None, react, nominal)
    done, shown = {}, 0
    for index, outcome, open_loop in parallel_map(_trial, [(k, t, react, nominal) for k, t in enumerate(trials)],
                                                  workers):
        done[index] = (outcome, open_loop)
        while shown in done and show is not None:
            show(shown, len(trials), *done[shown])
            shown += 1
    outcomes = [done[k][0] for k in range(len(trials))]
    open_loop = [done[k][1] for k in range(len(trials))] if react is not None else []
    return undisturbed, outcomes, open_loop
