"""The search ``tracker optimize CLIP`` runs on its own: windows slid over the clip, then narrow passes.

One SAMCON pass over a whole clip drifts: its first iteration's chain wanders off the clip in the
first seconds, and the later iterations sample around a chain that is already lost (``docs/samcon.md``,
"Why they drift"). Every clip the project solved by hand was solved by searching a short window
first and growing it, ranking samples with a look-ahead, then narrowing the widths while weighting
the pose more. The schedule does that in a fixed order, each stage justified by the runs in
``docs/samcon.md`` ("One command"):

1. **Windows** (``window`` s, the last ``overlap`` s of each searched again by the next): SAMCON
   (:func:`~tracker.sampling.samcon.samcon`) from the one state the track so far reaches at the
   window's start (``t_begin``), ``iterations`` passes, ``spread`` selection, a look-ahead of
   ``lookahead`` segments for the ``look_keep`` cheapest samples. The search is linear in the clip's
   length: a window never searches what an earlier one committed.
2. **A window that misses the goal over its own span** (its track replayed to the window's end, the
   errors averaged over the window), or falls, is searched again ``escalations`` times with twice the
   samples, kept states and look-aheads (from ``overlap`` further back if it fell); the better of
   the two by :func:`goal_score` over the window is kept. The last window of several is not
   searched again when the whole clip meets the goal with it: no window follows that its drift
   could hand a bad start to, and the goal is the whole clip's.
3. **Replay and goal**: the track is replayed as ``tracker run`` would and measured against the
   goal (standing to the end, mean joint error <= 0.10 rad, mean root error <= 0.15 m).
4. **Narrow passes**, while the goal is not met: one SAMCON iteration over the whole clip around
   the best track, the widths times ``refine_scale``, the pose weighed ``refine_pose[i]``; the best
   track by the goal (:func:`goal_score`) is kept, whatever a pass gives.

The schedule stops when the goal is met, when its stages are done, or before a stage that would
not finish within ``budget_s`` (estimated from the rollouts per second so far; a window searched
again that would not fit is skipped and the next window runs). Everything but
that budget depends on the config and the seed alone (each stage's SAMCON is seeded from the seed
and the stage's index, and rollouts do not depend on the number of workers); a budget that cut the
schedule is said in the result, with the stage count that reproduces it (``max_stages``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tracker.errors import ConfigError
from tracker.sampling.watch import GOAL_JOINT_RAD, GOAL_ROOT_M


@dataclass(frozen=True)
class ScheduleOptions:
    """The schedule's settings (module docstring); the defaults are the measured ones of ``docs/samcon.md``.

    Attributes:
        window: window length, s.
        overlap: the end of each window searched again by the next, s.
        samples, keep, iterations, selection, lookahead, look_keep: each window's SAMCON
            (:class:`~tracker.sampling.samcon.SamconOptions`).
        refine_scale: the narrow passes' half-widths over the defaults.
        refine_pose: the pose weight of each narrow pass, in order.
        escalations: how many times a window that misses the goal over its own span (or falls) is searched
            again with twice the samples, kept states and look-aheads of the search before.
        seed: the random seed.
        budget_s: wall-clock seconds the search may take (None: no limit).
        max_stages: stop after this many stages (None: no limit): reproduces a run the budget cut.
        segment: SAMCON's segment, s.
    """

    window: float = 2.0
    overlap: float = 0.5
    samples: int = 1000
    keep: int = 100
    iterations: int = 2
    selection: str = "spread"
    lookahead: int = 1
    look_keep: int = 200
    refine_scale: float = 0.24
    refine_pose: tuple[float, ...] = (40.0, 80.0)
    escalations: int = 1
    seed: int = 0
    budget_s: float | None = None
    max_stages: int | None = None
    segment: float = 0.1

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the first bad setting."""
        if not (np.isfinite(self.window) and self.window > 0):
            raise ConfigError(f"schedule: window must be a positive time, got {self.window!r}")
        if not (np.isfinite(self.overlap) and 0 <= self.overlap < self.window):
            raise ConfigError(f"schedule: overlap must be in [0, window = {self.window:g}) s, got {self.overlap!r}")
        if not (np.isfinite(self.refine_scale) and self.refine_scale > 0):
            raise ConfigError(f"schedule: refine_scale must be positive, got {self.refine_scale!r}")
        if self.budget_s is not None and not self.budget_s > 0:
            raise ConfigError(f"schedule: the budget must be positive, got {self.budget_s!r} s")
        if self.max_stages is not None and self.max_stages < 1:
            raise ConfigError(f"schedule: max_stages must be >= 1, got {self.max_stages!r}")
        self.samcon(0).check()

    def samcon(self, stage: int, samples: int | None = None, **changes):
        """The SAMCON options of stage ``stage`` (its own seed)."""
        from tracker.sampling.samcon import SamconOptions

        n = self.samples if samples is None else samples
        opt = SamconOptions(segment=self.segment, samples=n, keep=min(n, self.keep * n // self.samples),
                            iterations=self.iterations, seed=int(self.seed) * 1000 + stage,
                            selection=self.selection, lookahead=self.lookahead,
                            look_keep=min(n, self.look_keep * n // self.samples))
        return dataclasses.replace(opt, **changes)


@dataclass
class Stage:
    """One stage done: what it searched and what its track gave.

    Attributes:
        name: ``window``, ``window again`` or ``narrow``.
        t0, t1: the clip times it searched, s.
        rollouts: rollouts it simulated.
        seconds: its wall-clock time, s.
        fell: its search's best chain fell.
        cost: its best chain's cost (its own weights).
        replay: after windows reach the end and after each narrow pass: the replay's goal numbers
            (``fell``, ``fell_at``, ``joint_error_mean_rad``, ``root_error_mean_m``), else None.
        note: what else the stage did (kept or not).
        window: a window search's track replayed to the window's end: its goal numbers over the window.
    """

    name: str
    t0: float
    t1: float
    rollouts: int
    seconds: float
    fell: bool
    cost: float
    replay: dict | None = None
    note: str = ""
    window: dict | None = None


@dataclass
class ScheduleResult:
    """What :func:`run_schedule` found: the track, its replay's goal numbers, and the stages."""

    track: object
    goal: dict
    met: bool
    stages: list[Stage] = field(default_factory=list)
    rollouts: int = 0
    stopped: str = ""  # why it stopped: "goal met", "stages done", "budget", "max_stages"
    resumed: int | None = None  # stages read back from a killed run's folder (None: none)
    times: np.ndarray | None = None
    cost_per_stage: np.ndarray | None = None
    segment_costs: np.ndarray | None = None


def goal_score(goal: dict) -> float:
    """How far a replay is from the goal, for ranking tracks (lower is better; <= 1: met). A fall ranks
    behind every standing track, and later falls before earlier ones."""
    worst = max(goal["joint_error_mean_rad"] / GOAL_JOINT_RAD, goal["root_error_mean_m"] / GOAL_ROOT_M)
    if goal.get("fell"):
        return 1e3 - float(goal.get("fell_at") or 0.0) + worst * 1e-3
    return float(worst)


def goal_met(goal: dict) -> bool:
    return (not goal.get("fell")) and goal["joint_error_mean_rad"] <= GOAL_JOINT_RAD \
        and goal["root_error_mean_m"] <= GOAL_ROOT_M


def windows(t0: float, t1: float, times: np.ndarray, window: float, overlap: float) -> list[tuple[int, int]]:
    """``(first, last)`` boundary indices of ``times`` for the windows slid from ``t0`` to ``t1``: each
    ``window`` s long (on the boundaries), the next starting ``overlap`` s before its end, the last ending
    at ``t1``. Where that would leave a last piece shorter than half a window, the last window is not
    stretched over it (one long window drifts: ``docs/samcon.md``): the span from that window's start
    to the end is spread evenly over as few windows as keep each at most ``window`` s."""
    n = len(times) - 1
    out, a = [], 0
    while True:
        b = max(int(np.argmin(np.abs(times - (times[a] + window)))), a + 1)
        if b >= n:
            out.append((a, n))
            return out
        if times[n] - times[b] < 0.5 * window:
            return out + _even_windows(times, a, window, overlap)
        out.append((a, b))
        a2 = int(np.argmin(np.abs(times - (times[b] - overlap))))
        a = min(max(a2, a + 1), b)


def _even_windows(times: np.ndarray, a: int, window: float, overlap: float) -> list[tuple[int, int]]:
    """Windows from boundary ``a`` to the end spread evenly: as few as cover it with at most ``window`` s each."""
    n = len(times) - 1
    span = float(times[n] - times[a])
    count = max(1, int(np.ceil((span - overlap) / (window - overlap) - 1e-9)))
    length = (span + (count - 1) * overlap) / count
    out = []
    for i in range(count - 1):
        end = float(times[a]) + length  # this window's end, before snapping
        b = max(int(np.argmin(np.abs(times - end))), a + 1)
        out.append((a, b))
        a = min(max(int(np.argmin(np.abs(times - (end - overlap)))), a + 1), b)
    out.append((a, n))
    return out


def run_schedule(cfg, folder: Path, options: ScheduleOptions | None = None, workers: int = 1,
                 backend: str = "local", weights=None, address: str | None = None, log=None,
                 key: str = "") -> ScheduleResult:
    """Run the schedule (module docstring) on ``cfg`` (already started by
    :func:`~tracker.sampling.start.plan_start`), writing each stage's track into ``folder/stages``.

    A killed schedule goes on where it stopped when run again into the same folder: the stages done
    are read back from ``folder/stages/stages.json`` (when it was written for the same ``key``: the
    config and settings) and the stage under way from its SAMCON checkpoint, so the result is the
    uninterrupted one. ``resumed`` in the result says from which stage.
    """
    from tracker.sampling.cost import CostWeights
    from tracker.sampling.pool import RolloutPool
    from tracker.sampling.samcon import DEFAULT_WIDTHS, Checkpoint, samcon, segment_times
    from tracker.sim.offsets import OffsetTrack, load_offsets

    opt = options or ScheduleOptions()
    opt.check()
    base_w = weights or CostWeights(velocity=0.0)
    pools: dict = {}

    def pool_for(w):
        if w not in pools:
            pools[w] = RolloutPool(cfg, workers=workers, backend=backend, weights=w, address=address,
                                   balls=bool(cfg.balls))
        return pools[w]

    stages_dir = folder / "stages"
    stages_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    res = ScheduleResult(track=None, goal={}, met=False)
    searched = dataclasses.replace(opt, budget_s=None, max_stages=None)  # the limits do not change a stage
    key = f"tracker optimize schedule v1\noptions: {searched!r}\nweights: {base_w!r}\n{key}"
    done = _load_done(stages_dir, key)
    res.resumed = len(done) or None
    if done and log is not None:
        log.say(f"resumed from {stages_dir / 'stages.json'}: {len(done)} stages done, going on with stage "
                f"{len(done) + 1}")
    try:
        pool = pool_for(base_w)
        sim = pool.local.sim
        start = pool.initial_state()
        t_end = cfg.clip.start + cfg.duration if cfg.duration is not None else sim.reference.duration
        times = segment_times(start.t, float(t_end), opt.segment, sim.opt.dt)
        track = OffsetTrack.zeros(sim.layout, times, model=sim.model.name, clip=str(sim.reference.source or ""))
        res.times = times
        seg_costs = np.zeros(len(times) - 1)
        stage_costs: list[float] = []
        rate = [0.0, 0.0, 0.0]  # rollouts and seconds so far (the budget's estimates), seconds of stages read back

        def say(text: str) -> None:
            if log is not None:
                log.say(text)

        def fits(rollouts: int, what: str, optional: bool = False) -> bool:
            """Whether the next stage may run; an ``optional`` one (a window searched again) that does not fit
            is skipped and the schedule goes on, any other stops it."""
            if opt.max_stages is not None and len(res.stages) >= opt.max_stages:
                res.stopped = "max_stages"
                say(f"schedule: stopping before {what}: --max-stages {opt.max_stages} reached")
                return False
            if opt.budget_s is None or rate[0] == 0 or len(res.stages) + 1 in done:  # a stage read back costs nothing
                return True
            spent = rate[2] + time.perf_counter() - t_start
            need = rollouts * rate[1] / rate[0]
            if spent + need > opt.budget_s:
                say(f"schedule: {'skipping' if optional else 'stopping before'} {what}: about {need:.0f} s more "
                    f"would pass the budget ({spent:.0f} of {opt.budget_s:.0f} s spent)")
                if not optional:
                    res.stopped = "budget"
                return False
            return True

        def search(name, k0, k1, sopt, w, init) -> tuple[object, Stage]:
            nonlocal seg_costs
            index = len(res.stages) + 1
            file = stages_dir / f"{index:02d}.npz"
            if index in done:  # a resumed schedule: this stage's result, as it was written, its time on the budget
                st, new = Stage(**done[index]["stage"]), load_offsets(file)
                seg_costs = np.array(done[index]["segment_costs"])
                rate[0], rate[1], rate[2] = rate[0] + st.rollouts, rate[1] + st.seconds, rate[2] + st.seconds
            else:
                if log is not None:
                    log.prefix = f"stage {index} ({name} {times[k0]:.2f}-{times[k1]:.2f} s): "
                t0 = time.perf_counter()
                check = Checkpoint(folder / "checkpoint.pkl", f"{key}\nstage {index}: {name} {k0}-{k1} {sopt!r} {w!r}")
                out = samcon(pool_for(w), t_end=float(times[k1]), options=sopt, init=init, watch=log,
                             t_begin=float(times[k0]), checkpoint=check)
                check.remove()
                secs = time.perf_counter() - t0
                rate[0] += out.rollouts
                rate[1] += secs
                st = Stage(name, float(times[k0]), float(times[k1]), int(out.rollouts), secs, bool(out.fell[-1]),
                           float(out.cost_per_iteration[-1]))
                merged = np.array(init.values if init is not None else track.values, dtype=float)
                merged[:k1 + 1] = out.track.values
                seg_costs = np.array(seg_costs)
                seg_costs[:k1] = out.segment_costs[-1][:k1]
                new = track.with_values(merged, meta={"method": "samcon schedule", "seed": opt.seed, "stage": index})
                new.save(file)
            res.rollouts += st.rollouts
            res.stages.append(st)
            stage_costs.append(st.cost)
            return new, st

        def record() -> None:  # the stages done so far, for a killed run to go on from
            _save_done(stages_dir, key, {i + 1: {"stage": dataclasses.asdict(st), "segment_costs": seg_costs.tolist()}
                                         for i, st in enumerate(res.stages)})

        # 1-2: windows slid over the clip
        wins = windows(float(times[0]), float(times[-1]), times, opt.window, opt.overlap)
        longest = max(float(times[b] - times[a]) for a, b in wins)
        say(f"schedule: {len(wins)} window{'s' if len(wins) > 1 else ''} of at most {longest:.2f} s over "
            f"{times[0]:.2f}-{times[-1]:.2f} s, then up to "
            f"{len(opt.refine_pose)} narrow passes until the goal (joint <= {GOAL_JOINT_RAD:.2f} rad, root <= "
            f"{GOAL_ROOT_M:.2f} m, standing)")
        back = max(1, int(round(opt.overlap / opt.segment)))
        for i, (k0, k1) in enumerate(wins):
            sopt = opt.samcon(len(res.stages))
            if not fits(_rollouts(sopt, k1 - k0), f"window {i + 1}"):
                break
            new, st = search("window", k0, k1, sopt, base_w, track if k0 > 0 else _or_none(track))
            st.window = st.window or _window_goal(cfg, new, float(times[k0]), float(times[k1]), stages_dir / "replay")
            record()
            if i == len(wins) - 1 and k0 > 0 and not goal_met(st.window) and not st.window["fell"]:
                st.replay = _goal(cfg, new, stages_dir / "replay")  # the last window: the goal is the whole clip's
                record()
                if goal_met(st.replay):
                    say(f"schedule: window {times[k0]:.2f}-{times[k1]:.2f} s missed the goal over its own span, but the "
                        f"whole clip meets it: not searched again")
            n = opt.samples
            for _ in range(opt.escalations):
                if goal_met(st.window) or (st.replay is not None and goal_met(st.replay)):
                    break
                n *= 2
                k_back = max(0, k0 - back) if st.window["fell"] else k0
                again = opt.samcon(len(res.stages), samples=n)
                if not fits(_rollouts(again, k1 - k_back), f"window {i + 1} again", optional=True):
                    break
                why = "fell" if st.window["fell"] else "missed the goal"
                say(f"schedule: window {times[k0]:.2f}-{times[k1]:.2f} s {why}; searching {times[k_back]:.2f}-"
                    f"{times[k1]:.2f} s again with {again.samples} samples")
                new2, st2 = search("window again", k_back, k1, again, base_w, track if k_back > 0 else _or_none(track))
                st2.window = st2.window or _window_goal(cfg, new2, float(times[k0]), float(times[k1]),
                                                        stages_dir / "replay")
                if goal_score(st2.window) < goal_score(st.window):
                    new, st = new2, st2
                else:
                    st2.note = "not kept: further from the goal over the window than the search before it"
                record()
            track = new
            if res.stopped:
                break
        # 3: replay and goal
        last = res.stages[-1] if res.stages else None
        best, best_goal = track, (last.replay if last is not None and last.replay else
                                  _goal(cfg, track, stages_dir / "replay"))
        if last is not None:
            last.replay = best_goal
            record()
        say(_goal_line("windows", best_goal))
        # 4: narrow passes
        if not goal_met(best_goal) and not res.stopped:
            for pose in opt.refine_pose:
                w = dataclasses.replace(base_w, pose=float(pose))
                sopt = opt.samcon(len(res.stages), iterations=1, widths=tuple(
                    (p, wd * opt.refine_scale) for p, wd in DEFAULT_WIDTHS))
                if not fits(sopt.samples * (len(times) - 1), f"the narrow pass with pose weight {pose:g}"):
                    break
                new, st = search(f"narrow (pose {pose:g})", 0, len(times) - 1, sopt, w, best)
                goal = st.replay or _goal(cfg, new, stages_dir / "replay")
                st.replay = goal
                say(_goal_line(f"narrow pass (pose {pose:g})", goal))
                if goal_score(goal) < goal_score(best_goal):
                    best, best_goal = new, goal
                else:
                    st.note = "not kept: further from the goal than the track it started from"
                record()
                if goal_met(best_goal):
                    break
        res.track, res.goal, res.met = best, best_goal, goal_met(best_goal)
        if not res.stopped:
            res.stopped = "goal met" if res.met else "stages done"
        res.cost_per_stage = np.array(stage_costs)
        res.segment_costs = seg_costs[None, :]
        return res
    finally:
        if log is not None:
            log.prefix = ""
        for p in pools.values():
            p.close()


def _load_done(folder: Path, key: str) -> dict:
    """The stages a killed run of the same ``key`` finished (``{index: record}``), else ``{}``."""
    import json

    try:
        data = json.loads((folder / "stages.json").read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("key") != key:
        return {}
    done = {int(i): rec for i, rec in data.get("stages", {}).items()}
    return {i: rec for i, rec in done.items() if (folder / f"{i:02d}.npz").is_file()}


def _save_done(folder: Path, key: str, stages: dict) -> None:
    from tracker.atomic import write_json_atomic

    write_json_atomic(folder / "stages.json", {"key": key, "stages": {str(i): rec for i, rec in stages.items()}})


def _rollouts(sopt, segments: int) -> int:
    """About how many rollouts a SAMCON search of ``segments`` segments with ``sopt`` simulates."""
    return (sopt.samples + (sopt.look_keep if sopt.lookahead else 0)) * segments * sopt.iterations


def _window_goal(cfg, track, t0: float, t1: float, path: Path) -> dict:
    """``track`` replayed from the start to ``t1``: whether it fell, and the mean joint and root errors over
    ``[t0, t1]`` (the goal's numbers over one window)."""
    from tracker.sampling.watch import boundary_errors

    _, rec = _replay(cfg, track, path, duration=float(t1 - cfg.clip.start))
    span = (rec.t >= t0 - 1e-9) & (rec.t <= t1 + 1e-9) & np.isfinite(rec.q).all(axis=1)
    err = boundary_errors(rec.layout, rec.q[span], rec.q_ref[span]) if span.any() else np.full((1, 2), np.inf)
    fell_at = rec.meta.get("fell_at")
    return {"fell": fell_at is not None or bool(rec.diverged), "fell_at": fell_at,
            "joint_error_mean_rad": float(err[:, 0].mean()), "root_error_mean_m": float(err[:, 1].mean())}


def _or_none(track):
    """A track of zeros is no start (SAMCON from the clip); else the track."""
    return track if np.any(track.values) else None


def _replay(cfg, track, path: Path, duration: float | None = None):
    """``(prep, recording)`` of ``cfg`` run with ``track`` (saved to ``path``.npz) as its offsets, for
    ``duration`` s of clip if given, else as ``cfg`` says."""
    from tracker.experiments.runner import build, simulate

    file = path.with_suffix(".npz")
    track.save(file)
    run_cfg = cfg.replace(controller=dataclasses.replace(cfg.controller, offsets=str(file.resolve())))
    if duration is not None:
        run_cfg = run_cfg.replace(sim=dataclasses.replace(cfg.sim, duration=duration))
    prep = build(run_cfg)
    rec, _ = simulate(prep)
    return prep, rec


def _goal(cfg, track, path: Path) -> dict:
    """The replay's goal numbers for ``track`` (saved to ``path``.npz): ``tracker run``'s metrics."""
    from tracker.experiments.runner import compute_metrics

    prep, rec = _replay(cfg, track, path)
    m = compute_metrics(prep, rec, None, {})
    return {"fell": bool(m.get("fell")), "fell_at": m.get("fell_at_s"),
            "joint_error_mean_rad": float(m["joint_error_mean_rad"]), "root_error_mean_m": float(m["root_error_mean_m"])}


def _goal_line(what: str, goal: dict) -> str:
    state = f"FELL at {goal['fell_at']:.2f} s" if goal.get("fell") else "standing"
    met = "goal met" if goal_met(goal) else "goal not met"
    return (f"schedule: after the {what}: {state}, joint error {goal['joint_error_mean_rad']:.4f} rad, root error "
            f"{goal['root_error_mean_m']:.4f} m ({met})")
