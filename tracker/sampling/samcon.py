"""SAMCON: sampling-based motion control (Liu et al. 2010, 2015), on rollouts from saved states.

The clip window ``[t_0, t_K]`` is cut into segments of ``segment`` seconds; the PD-target offsets
``Δ`` are piecewise linear on the segment boundaries (an :class:`~tracker.sim.offsets.OffsetTrack`
with one knot per boundary, ``Δ(t_0) = 0``). One iteration walks the segments in order:

1. **Samples.** Each kept start state of segment ``k`` (one at ``k = 0``: the clip's pose) gets an
   equal share of ``samples`` rollouts; each draws the knot at ``t_{k+1}`` uniformly in a box
   around the previous iteration's solution, ``Δ_{k+1} = μ_{k+1} + w ⊙ u``, ``u ~ U(−1, 1)``, with
   per-DOF half-widths ``w`` (:class:`SamconOptions.widths`) shrunk by ``decay`` each iteration; the
   knot at ``t_k`` is the one its start state's chain ended with, so the track stays continuous.
2. **Simulation.** Each sample is a rollout of segment ``k`` from its start state
   (:mod:`.rollout`, in parallel through :mod:`.pool`), scored by the tracking cost
   (:mod:`.cost`: pose, root, end effectors, balance; a fallen sample pays a penalty).
3. **Selection.** ``keep`` samples become the next segment's start states: with ``selection =
   "elite"`` those of lowest segment cost (Liu et al. 2010 keep the best of each segment's
   samples); with ``"spread"`` the cheapest and others spread over the cheaper 60 % of the costs
   (:func:`spread_select`), so that start states which pay now and gain later survive a segment.
4. **Backtracking.** At the last segment the sample of lowest accumulated cost (the sum of its
   chain's segment costs) is followed back to ``t_0``: its knots are the iteration's track.

Iterations re-sample around the last best track (Liu et al. 2015's refinement of the sampling
distribution around the previous solution, in its simplest form: the mean moves, the box
shrinks). The best chain of the previous iteration is carried along as one of the kept states of
every segment (never displaced, its rollouts deterministic), so an iteration's best cost is never
worse than the last one's.
A search may start from an earlier track (``init``): it is the first iteration's mean and is
carried the same way, so the search never ends costlier than that track.

Everything random comes from ``numpy.random.default_rng((seed, iteration, segment))`` drawn in this
process in request order, and rollouts are deterministic and returned in request order, so a
result depends on the seed alone, not on the number of workers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tracker.errors import ConfigError
from tracker.sim.offsets import OffsetTrack, layout_joints
from tracker.sampling.rollout import RolloutRequest

#: Default sampling half-widths by joint-name pattern (rad), first match wins (``docs/samcon.md``).
DEFAULT_WIDTHS: tuple[tuple[str, float], ...] = (
    (r"hip|knee|ankle|foot|thigh|shin", 0.4),
    (r"spine|pelvis|chest|abdomen|torso|lumbar|back", 0.1),
    (r".*", 0.05),
)


#: How a segment's kept start states are chosen (:class:`SamconOptions`).
SELECTIONS = ("elite", "spread")


@dataclass(frozen=True)
class SamconOptions:
    """SAMCON's settings.

    Attributes:
        segment: segment length, s (Liu et al. 2010: 0.1 s); a whole number of control steps.
        samples: rollouts per segment (over all kept start states).
        keep: start states kept per segment (the best samples).
        iterations: passes over the whole window.
        widths: ``(joint-name regex, half-width rad)`` pairs, first match wins.
        decay: the half-widths' factor per iteration.
        seed: the random seed.
        selection: ``"elite"`` (the ``keep`` cheapest) or ``"spread"`` (:func:`spread_select`).
        lookahead: segments each sample is simulated on past its own, aimed at the previous
            iteration's knots (none yet in the first: the clip), whose cost is added to the sample's
            for ranking only; 0: rank by the segment's cost alone (SAMCON's). Each look-ahead
            segment costs as much simulation as the sample's own.
        look_keep: with ``lookahead``, look ahead only for the ``look_keep`` samples of lowest segment
            cost (a second batch from their end states), the others ranked behind them by their own
            cost, so ``spread`` may still keep some (``docs/samcon.md``, "One command"); 0: every
            sample looks ahead, in the same rollout.
    """

    segment: float = 0.1
    samples: int = 2000
    keep: int = 200
    iterations: int = 3
    widths: tuple[tuple[str, float], ...] = DEFAULT_WIDTHS
    decay: float = 0.7
    seed: int = 0
    selection: str = "elite"
    lookahead: int = 0
    look_keep: int = 0

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the first bad setting."""
        for name in ("samples", "keep", "iterations", "seed", "lookahead", "look_keep"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ConfigError(f"samcon: {name} must be a whole number, got {v!r}")
        if self.samples < 1:
            raise ConfigError(f"samcon: samples must be >= 1, got {self.samples}")
        if not 1 <= self.keep <= self.samples:
            raise ConfigError(f"samcon: keep must be in [1, samples = {self.samples}], got {self.keep}")
        if self.iterations < 1:
            raise ConfigError(f"samcon: iterations must be >= 1, got {self.iterations}")
        if self.seed < 0:
            raise ConfigError(f"samcon: seed must be >= 0, got {self.seed}")
        if self.lookahead < 0:
            raise ConfigError(f"samcon: lookahead must be >= 0 segments, got {self.lookahead}")
        if self.look_keep < 0:
            raise ConfigError(f"samcon: look_keep must be >= 0 samples, got {self.look_keep}")
        if not (np.isfinite(self.segment) and self.segment > 0):
            raise ConfigError(f"samcon: segment must be a positive time, got {self.segment!r}")
        if self.selection not in SELECTIONS:
            raise ConfigError(f"samcon: selection must be one of {', '.join(SELECTIONS)}, got {self.selection!r}")
        if not (np.isfinite(self.decay) and 0 < self.decay <= 1):
            raise ConfigError(f"samcon: decay must be in (0, 1], got {self.decay!r}")
        for pattern, w in self.widths:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ConfigError(f"samcon: width pattern {pattern!r} is not a regular expression ({exc})") from None
            if not (np.isfinite(w) and 0 <= w <= np.pi):
                raise ConfigError(f"samcon: width of {pattern!r} must be in [0, π] rad, got {w!r}")


@dataclass
class _Node:
    """A kept sample: its chain's last knot value, costs, end state and parent (for backtracking)."""

    knot: np.ndarray
    cost: float
    total: float
    end: object
    parent: "_Node | None"
    fell: bool = False
    incumbent: bool = False
    rank: float = 0.0  # what the selection orders by: the segment's cost plus its look-ahead's
    q_end: np.ndarray | None = None  # the end state's q until the errors below are read from it
    err: np.ndarray | None = None  # the chain's joint and root errors summed over its boundaries, and their count

@dataclass(frozen=True)
class SamconResult:
    """What :func:`samcon` found.

    Attributes:
        track: the best chain's offset track (knots at the segment boundaries).
        cost_per_iteration: the best chain's accumulated cost after each iteration ``(I,)``.
        segment_costs: the best chain's cost per segment after each iteration ``(I, K)``.
        fell: whether the best chain fell (per iteration).
        rollouts: rollouts simulated.
        times: segment boundaries, clip time, s ``(K + 1,)``.
    """

    track: OffsetTrack
    cost_per_iteration: np.ndarray
    segment_costs: np.ndarray
    fell: tuple[bool, ...]
    rollouts: int
    times: np.ndarray
    meta: dict = field(default_factory=dict)


def widths_vector(layout, widths: tuple[tuple[str, float], ...]) -> np.ndarray:
    """Per actuated DOF half-width ``(D,)`` rad from ``(regex, width)`` pairs (first match; no match: 0)."""
    names, dofs = layout_joints(layout)
    out = []
    for name, n in zip(names, dofs):
        w = next((float(width) for pattern, width in widths if re.search(pattern, name)), 0.0)
        out += [w] * int(n)
    return np.array(out)


def segment_times(t0: float, t1: float, segment: float, dt: float) -> np.ndarray:
    """Boundaries from ``t0`` to ``t1`` every ``segment`` s, each on a whole control step; the last is ``t1``'s step.

    The times are the simulation's own clock values (``t += dt`` from ``t0``, as
    :class:`~tracker.sim.simulation.Simulation` counts), so a segment's last target falls exactly on
    its end knot and a replayed track gives the rollouts' steps bit for bit.

    Raises:
        ConfigError: a segment shorter than one step, or a window shorter than one segment.
    """
    steps = int(round(segment / dt))
    if steps < 1:
        raise ConfigError(f"samcon: segment {segment:g} s is shorter than one time step ({dt:g} s)")
    total = int(round((t1 - t0) / dt))
    if total < steps:
        raise ConfigError(f"samcon: the window ({t1 - t0:.3f} s) is shorter than one segment ({segment:g} s)")
    ks = list(range(0, total, steps))
    if total - ks[-1] < steps / 2 and len(ks) > 1:
        ks[-1] = total  # a short last piece joins the one before it
    else:
        ks.append(total)
    clock, t = [], float(t0)
    for n in range(total + 1):
        if n in ks:
            clock.append(t)
        t += dt
    return np.array(clock)


def samcon(pool, t_end: float | None = None, options: SamconOptions | None = None,
           progress=None, checkpoint=None, init: OffsetTrack | None = None, watch=None,
           t_begin: float | None = None) -> SamconResult:
    """Run SAMCON on ``pool``'s config from its start to ``t_end`` (module docstring).

    Args:
        pool: a :class:`~tracker.sampling.pool.RolloutPool` (config, workers, cost weights).
        t_end: clip time to stop at (default: the config's end).
        options: :class:`SamconOptions`.
        progress: ``progress(iteration, segment, n_segments, best_cost)`` after each segment, or None.
        checkpoint: a :class:`Checkpoint`: the search's state is written after every segment, and a
            search that finds one of the same config and settings goes on from it. The random numbers
            depend on ``(seed, iteration, segment)`` only, so the result is the uninterrupted one.
        init: an offset track to start from (a previous search's, for the same model), read at this
            search's segment boundaries (``Δ(t_0) = 0`` kept): the first iteration samples around it,
            with the full widths, and carries it as the best chain so far, so the result's cost is
            never above the track's own by this search's cost. None: start from the clip (zeros).
        watch: ``watch(status)`` after each segment with a :class:`~tracker.sampling.watch.SearchStatus`
            (the best chain's cost and errors, the windows done), or None.
        t_begin: search only the segments from the boundary nearest this clip time on (a sliding
            window's start); the segments before it replay ``init``'s knots, one deterministic
            rollout each, and their end state is every iteration's one start state. Needs ``init``.
            None: from the start.
    """
    opt = options or SamconOptions()
    opt.check()
    worker = pool.local
    sim = worker.sim
    lay, dt = sim.layout, sim.opt.dt
    start = pool.initial_state()
    ref = sim.reference
    if t_end is None:
        cfg = pool.config
        t_end = cfg.clip.start + cfg.duration if cfg.duration is not None else ref.duration
    times = segment_times(start.t, float(t_end), opt.segment, dt)
    n_seg = len(times) - 1
    base = OffsetTrack.zeros(lay, times, model=sim.model.name, clip=str(ref.source or ""))
    width = widths_vector(lay, opt.widths)
    mean = np.zeros((n_seg + 1, base.n_dofs))  # knot values around which the next iteration samples
    incumbent: list[_Node] | None = None  # the best chain so far, one node per segment
    if init is not None:
        init.check_layout(lay, "init")
        mean[1:] = np.array([init.at(float(t)) for t in times[1:]])
        incumbent = [_Node(knot, 0.0, 0.0, None, None) for knot in mean[1:]]
    costs, seg_costs, fell, rollouts = [], [], [], 0
    k_begin, prefix = 0, [_Node(np.zeros(base.n_dofs), 0.0, 0.0, start, None)]
    if t_begin is not None and t_begin > times[0] + 0.5 * dt:
        if init is None:
            raise ConfigError("samcon: a window that starts after the clip's start (t_begin) needs an init track")
        k_begin = int(np.argmin(np.abs(times - float(t_begin))))
        if k_begin >= n_seg:
            raise ConfigError(f"samcon: t_begin {t_begin:.3f} s leaves no segment before {times[-1]:.3f} s")
        prefix = _replay_prefix(pool, base, times, mean, k_begin, lay, ref, watch is not None)
        rollouts += k_begin
    it0, k0, kept = 0, k_begin, None
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        it0, k0, kept, incumbent = saved["iteration"], saved["segment"], saved["kept"], saved["incumbent"]
        mean, costs, seg_costs, fell, rollouts = (saved["mean"], saved["costs"], saved["segment_costs"],
                                                  saved["fell"], saved["rollouts"])
    inline_look = 0 if opt.look_keep else opt.lookahead  # look_keep: the look-ahead is a second batch
    for it in range(it0, opt.iterations):
        w = width * opt.decay ** it
        if not (it == it0 and k0 > k_begin):
            kept = [_fresh(prefix[-1])]
        for k in range(k0 if it == it0 else k_begin, n_seg):
            rng = np.random.default_rng((opt.seed, it, k))
            per = [opt.samples // len(kept) + (i < opt.samples % len(kept)) for i in range(len(kept))]
            requests, parents, knots = [], [], []
            for node, n in zip(kept, per):
                u = rng.uniform(-1.0, 1.0, size=(n, base.n_dofs))
                for j in range(n):
                    knot = mean[k + 1] + w * u[j]
                    requests.append(_request(base, k, node.knot, knot, node.end, times, mean, inline_look))
                    parents.append(node)
                    knots.append(knot)
            inc_node = None
            if incumbent is not None:  # the last best chain, carried as it was (deterministic)
                prev = kept[0] if k == k_begin else next(n for n in kept if n.incumbent)
                knot = incumbent[k].knot
                requests.append(_request(base, k, prev.knot, knot, prev.end, times, mean, inline_look))
                parents.append(prev)
                knots.append(knot)
                inc_node = len(requests) - 1
            results = pool.run(requests)
            rollouts += len(results)
            ranks = [r.cost + r.look_cost for r in results]
            if opt.lookahead and opt.look_keep and k + 1 < n_seg:
                ranks, looked = _look_ahead(pool, base, k, results, knots, inc_node, times, mean, opt)
                rollouts += len(looked)
            nodes = [_Node(kn, r.cost, par.total + r.cost, r.end, par, r.fell or par.fell, i == inc_node,
                           rank, r.q_end if watch is not None else None)
                     for i, (r, par, kn, rank) in enumerate(zip(results, parents, knots, ranks))
                     if np.isfinite(r.cost)]
            if not nodes:
                raise ConfigError(f"samcon: every sample of segment {k} ({times[k]:.2f}-{times[k + 1]:.2f} s) "
                                  "diverged; try smaller widths or a smaller time step")
            order = sorted(range(len(nodes)), key=lambda i: (nodes[i].rank, i))
            last = k == n_seg - 1
            if last:
                chosen = [nodes[i] for i in order]
            elif opt.selection == "spread":
                chosen = [nodes[order[j]] for j in spread_select([nodes[i].rank for i in order], opt.keep)]
            else:
                chosen = [nodes[i] for i in order[:opt.keep]]
            inc = next((n for n in nodes if n.incumbent), None)
            if inc is not None and not any(n.incumbent for n in chosen):
                chosen = chosen[:-1] + [inc] if len(chosen) >= opt.keep and not last else chosen + [inc]
            for old in kept:
                old.end = None  # a start state no longer kept: its chain keeps only knots and costs
            kept = chosen
            if progress is not None:
                progress(it, k, n_seg, min(n.total for n in kept))
            if watch is not None:
                _read_errors(lay, ref, float(times[k + 1]), kept)
                top = min(kept, key=lambda n: (n.total, not n.incumbent))
                watch(_status("samcon", opt, it, k, times, top.total, top.err, rollouts, k_begin))
            if checkpoint is not None and not last:
                checkpoint.save(dict(iteration=it, segment=k + 1, kept=kept, incumbent=incumbent, mean=mean,
                                     costs=costs, segment_costs=seg_costs, fell=fell, rollouts=rollouts))
        best = min(kept, key=lambda n: (n.total, not n.incumbent))
        chain = _backtrack(best)
        incumbent = chain
        mean = np.vstack([np.zeros(base.n_dofs)] + [n.knot for n in chain])
        costs.append(best.total)
        seg_costs.append([n.cost for n in chain])
        fell.append(bool(best.fell))
        for n in chain:
            n.end = None
        if checkpoint is not None:
            checkpoint.save(dict(iteration=it + 1, segment=k_begin, kept=None, incumbent=incumbent, mean=mean,
                                 costs=costs, segment_costs=seg_costs, fell=fell, rollouts=rollouts))
    track = base.with_values(mean, meta={"method": "samcon", "seed": opt.seed, "segment": opt.segment,
                                         "samples": opt.samples, "keep": opt.keep, "iterations": opt.iterations,
                                         "decay": opt.decay, "selection": opt.selection,
                                         "cost": float(costs[-1])})
    return SamconResult(track, np.array(costs), np.array(seg_costs), tuple(fell), rollouts, times)


class Checkpoint:
    """The search's state after each segment, in one file, for a killed run to go on from.

    The state (kept start states with their chains, the best chain, costs) is pickled to ``path``
    atomically; ``path`` + ``.key`` holds the text of what it is for (config, method, settings,
    format version), and a checkpoint is read only when that text matches: a checkpoint of
    another config or other settings is ignored (and overwritten). Read only checkpoints this
    tool wrote into a result folder of yours (pickle runs code from the file it reads).
    """

    VERSION = 2

    def __init__(self, path, key: str) -> None:
        from pathlib import Path

        self.path = Path(path)
        self.key = f"tracker samcon checkpoint v{self.VERSION}\n{key}"
        #: what :meth:`load` found: ``{"iteration": i, "segment": k}`` (SAMCON) or ``{"segment": k}`` (cma)
        self.resumed: dict | None = None
        #: called with the loaded state when a search goes on from the checkpoint (None: nothing said)
        self.announce = None

    def load(self) -> dict | None:
        import pickle

        key_path = self.path.with_name(self.path.name + ".key")
        try:
            if key_path.read_text() != self.key:
                return None
            with open(self.path, "rb") as f:
                state = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ValueError):
            return None  # no checkpoint, or a broken one: start from the beginning
        self.resumed = {k: state[k] for k in ("iteration", "segment") if k in state}
        if self.announce is not None:
            self.announce(state)
        return state

    def save(self, state: dict) -> None:
        import pickle

        from tracker.atomic import atomic_target

        with atomic_target(self.path) as tmp:
            with open(tmp, "wb") as f:
                pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        with atomic_target(self.path.with_name(self.path.name + ".key")) as tmp:
            tmp.write_text(self.key)

    def remove(self) -> None:
        for p in (self.path, self.path.with_name(self.path.name + ".key")):
            p.unlink(missing_ok=True)


def _request(base: OffsetTrack, k: int, knot0: np.ndarray, knot1: np.ndarray, start, times: np.ndarray,
             mean: np.ndarray, lookahead: int = 0) -> RolloutRequest:
    """Segment ``k``'s rollout: the track's knots ``k`` and ``k+1`` only (its other knots do not act in it),
    and with ``lookahead`` the next segments' knots of ``mean``, simulated past ``times[k + 1]`` and
    scored apart (:attr:`RolloutRequest.t_look`)."""
    last = min(k + 1 + lookahead, len(times) - 1)
    values = np.array(mean[k:last + 1], dtype=float)
    values[0], values[1] = knot0, knot1
    track = OffsetTrack(base.joints, base.dofs, base.times[k:last + 1], values, base.model, base.clip)
    t_look = float(times[last]) if last > k + 1 else None
    return RolloutRequest(start, track, float(times[k + 1]), t_look=t_look)


def spread_select(costs, keep: int, share: float = 0.6, power: float = 6.0) -> list[int]:
    """Indices of ``keep`` of ``costs`` (sorted ascending) spread over their cheaper ``share``.

    The selection of the public SAMCON reimplementation's "improving" variant (``liangpan99/SamCon``,
    after Liu et al. 2015): the dearest ``1 - share`` are dropped and the ``i``-th kept sample is the
    one nearest ``c_min + (c_max - c_min)(i / keep)^power`` over the rest, so most kept states are
    among the cheapest and a few reach up the cost range. Each sample is taken once here (the next
    unused one when the nearest is taken; the reimplementation may take a sample twice).
    """
    costs = np.asarray(costs, dtype=float)
    n = len(costs)
    if keep >= n:
        return list(range(n))
    pool = max(keep, int(np.ceil(share * n)))
    lo, hi = costs[0], costs[pool - 1]
    taken, out = np.zeros(pool, bool), []
    for i in range(keep):
        target = lo + (hi - lo) * (i / keep) ** power
        j = int(np.clip(np.searchsorted(costs[:pool], target), 0, pool - 1))
        if j > 0 and abs(costs[j - 1] - target) <= abs(costs[j] - target):
            j -= 1
        if taken[j]:  # the nearest is taken: the next free one up the costs, else the last free one below
            free = np.flatnonzero(~taken)
            j = int(free[free > j][0]) if (free > j).any() else int(free[-1])
        taken[j] = True
        out.append(j)
    return sorted(out)


def _read_errors(layout, ref, t: float, nodes: list[_Node]) -> None:
    """Add each node's boundary errors at clip time ``t`` (from its ``q_end``, then dropped) to its parent's."""
    from tracker.sampling.watch import boundary_errors

    fresh = [n for n in nodes if n.q_end is not None]
    errs = boundary_errors(layout, np.array([n.q_end for n in fresh]), ref.sample(t)[0]) if fresh else []
    for n, e in zip(fresh, errs):
        before = getattr(n.parent, "err", None)
        n.err = (before if before is not None else np.zeros(3)) + np.array([e[0], e[1], 1.0])
        n.q_end = None


def _status(method: str, opt, it: int, k: int, times: np.ndarray, cost: float, err, rollouts: int,
            k_begin: int = 0):
    """The :class:`~tracker.sampling.watch.SearchStatus` after iteration ``it``'s segment ``k`` (a window from
    segment ``k_begin``: the segments before it are not searched, nor counted in the windows done and left)."""
    from tracker.sampling.watch import SearchStatus

    n_seg = len(times) - 1
    per = n_seg - k_begin  # segments searched per iteration
    je, re_ = (err[0] / err[2], err[1] / err[2]) if err is not None and err[2] > 0 else (float("nan"),) * 2
    return SearchStatus(method, it, opt.iterations, k, n_seg, float(times[k]), float(times[k + 1]), float(cost),
                        float(je), float(re_), int(rollouts),
                        (it * per + k - k_begin if method == "samcon" else k * opt.iterations + it) + 1,
                        opt.iterations * per)


def _fresh(node: _Node) -> _Node:
    """A copy of a window's start node to keep (the kept nodes' end states are dropped as the search moves on)."""
    return _Node(node.knot, node.cost, node.total, node.end, node.parent, node.fell, err=node.err)


def _replay_prefix(pool, base: OffsetTrack, times: np.ndarray, mean: np.ndarray, k_begin: int, layout, ref,
                   errors: bool) -> list[_Node]:
    """The chain of ``mean``'s knots over segments ``0 .. k_begin - 1``, one rollout each in this process
    (deterministic: the same end state as the rollouts of a search), from the start node on."""
    worker = pool.local
    node = _Node(np.zeros(base.n_dofs), 0.0, 0.0, pool.initial_state(), None)
    chain = [node]
    for k in range(k_begin):
        r = worker.rollout(_request(base, k, mean[k], mean[k + 1], node.end, times, mean))
        if not np.isfinite(r.cost):
            raise ConfigError(f"samcon: the track being extended diverges in segment {k} "
                              f"({times[k]:.2f}-{times[k + 1]:.2f} s)")
        node = _Node(mean[k + 1], r.cost, node.total + r.cost, r.end, node, r.fell or node.fell, False, r.cost,
                     r.q_end if errors else None)
        if errors:
            _read_errors(layout, ref, float(times[k + 1]), [node])
        chain.append(node)
    return chain


def _look_ahead(pool, base: OffsetTrack, k: int, results, knots, inc_node, times: np.ndarray, mean: np.ndarray,
                opt: SamconOptions) -> tuple[list[float], list[int]]:
    """Ranks of segment ``k``'s samples with :attr:`SamconOptions.look_keep`: the ``look_keep`` cheapest (and the
    carried best chain's) simulated on over the next ``lookahead`` segments from their end states, aimed at
    ``mean``; the others ranked behind them by their own cost. Returns ``(ranks, the indices that looked ahead)``."""
    finite = [i for i, r in enumerate(results) if np.isfinite(r.cost)]
    top = sorted(finite, key=lambda i: (results[i].cost, i))[:opt.look_keep]
    if inc_node is not None and inc_node in finite and inc_node not in top:
        top.append(inc_node)
    last = min(k + 1 + opt.lookahead, len(times) - 1)
    requests = []
    for i in top:
        values = np.array(mean[k + 1:last + 1], dtype=float)
        values[0] = knots[i]
        track = OffsetTrack(base.joints, base.dofs, base.times[k + 1:last + 1], values, base.model, base.clip)
        requests.append(RolloutRequest(results[i].end, track, float(times[last]), keep_end=False))
    look = {i: r.cost for i, r in zip(top, pool.run(requests))}
    finite_looks = [c for c in look.values() if np.isfinite(c)]
    behind = max(finite_looks, default=0.0)  # who did not look ahead ranks after everyone who did
    failed = 2.0 * behind + 1e3  # a look-ahead that diverged: after those too
    ranks = [r.cost + (look[i] if np.isfinite(look[i]) else failed) if i in look else r.cost + behind
             for i, r in enumerate(results)]
    return ranks, top


def _backtrack(node: _Node) -> list[_Node]:
    chain = []
    while node is not None and node.parent is not None:
        chain.append(node)
        node = node.parent
    return chain[::-1]


def cma_segments(pool, t_end: float | None = None, options: SamconOptions | None = None,
                 progress=None, checkpoint: Checkpoint | None = None, watch=None) -> SamconResult:
    """The ``cma`` method: CMA-ES (Hansen's ``cma``) on each segment's end knot in turn.

    Segment by segment from the clip's start, CMA-ES searches the knot at ``t_{k+1}`` for
    ``options.iterations`` generations of ``samples`` rollouts each (at least 2; SAMCON's meaning of
    ``samples``: rollouts per segment and iteration, so ``samples × iterations × segments`` in all), in the
    coordinates ``knot = w ⊙ x`` (``w`` the sampling half-widths; DOFs of width 0 stay at 0) from
    ``x = 0`` with step size 0.5; the best rollout ever seen ends the segment and starts the next
    (a greedy chain: one start state per segment, where SAMCON keeps ``keep``).
    ``cost_per_iteration[g]`` is the chain's cost with each segment's best after generation ``g``.
    Seeded by ``(seed, segment)``; deterministic whatever the number of workers; ``checkpoint``
    as :func:`samcon` (written after every segment); ``watch`` as :func:`samcon`, after every generation.
    """
    import cma

    opt = options or SamconOptions()
    opt.check()
    sim = pool.local.sim
    lay, dt = sim.layout, sim.opt.dt
    start = pool.initial_state()
    if t_end is None:
        cfg = pool.config
        t_end = cfg.clip.start + cfg.duration if cfg.duration is not None else sim.reference.duration
    times = segment_times(start.t, float(t_end), opt.segment, dt)
    n_seg = len(times) - 1
    base = OffsetTrack.zeros(lay, times, model=sim.model.name, clip=str(sim.reference.source or ""))
    width = widths_vector(lay, opt.widths)
    active = np.flatnonzero(width > 0)
    popsize = max(2, opt.samples)
    knots = np.zeros((n_seg + 1, base.n_dofs))
    best_by_gen = np.zeros((opt.iterations, n_seg))
    fell, rollouts, state, k0 = False, 0, start, 0
    chain_err = np.zeros(3)  # the chain's boundary errors, summed, and their count (watch)
    saved = checkpoint.load() if checkpoint is not None else None
    if saved is not None:
        k0, knots, best_by_gen, fell, rollouts, state = (saved["segment"], saved["knots"], saved["best_by_gen"],
                                                         saved["fell"], saved["rollouts"], saved["state"])
        chain_err = saved.get("chain_err", chain_err)
    for k in range(k0, n_seg):
        es = cma.CMAEvolutionStrategy(np.zeros(len(active)), 0.5, {
            "seed": int(opt.seed) * 100_003 + k + 1, "popsize": popsize, "verbose": -9, "maxiter": opt.iterations,
            "tolfun": 0, "tolx": 0, "tolstagnation": opt.iterations + 1, "tolflatfitness": opt.iterations + 1})
        best = None
        for g in range(opt.iterations):
            xs = es.ask()
            cand = []
            for x in xs:
                knot = np.zeros(base.n_dofs)
                knot[active] = width[active] * np.asarray(x)
                cand.append(knot)
            results = pool.run([_request(base, k, knots[k], c, state, times, knots) for c in cand])
            rollouts += len(results)
            es.tell(xs, [r.cost if np.isfinite(r.cost) else 1e30 for r in results])
            for i, r in enumerate(results):
                if np.isfinite(r.cost) and (best is None or r.cost < best[0]):
                    best = (r.cost, cand[i], r)
            best_by_gen[g, k] = best[0] if best is not None else np.inf
            if progress is not None:
                progress(g, k, n_seg, best_by_gen[g, :k + 1].sum())
            if watch is not None and best is not None:
                node = _Node(best[1], best[0], 0.0, None, None, q_end=best[2].q_end)
                _read_errors(lay, sim.reference, float(times[k + 1]), [node])
                watch(_status("cma", opt, g, k, times, best_by_gen[g, :k + 1].sum(), chain_err + node.err, rollouts))
        if best is None:
            raise ConfigError(f"cma: every sample of segment {k} ({times[k]:.2f}-{times[k + 1]:.2f} s) diverged")
        knots[k + 1] = best[1]
        state = best[2].end
        fell = fell or best[2].fell
        if watch is not None:
            node = _Node(best[1], best[0], 0.0, None, None, q_end=best[2].q_end)
            _read_errors(lay, sim.reference, float(times[k + 1]), [node])
            chain_err = chain_err + node.err
        if checkpoint is not None:
            checkpoint.save(dict(segment=k + 1, knots=knots, best_by_gen=best_by_gen, fell=fell,
                                 rollouts=rollouts, state=state, chain_err=chain_err))
    track = base.with_values(knots, meta={"method": "cma", "seed": opt.seed, "segment": opt.segment,
                                          "samples": opt.samples, "iterations": opt.iterations,
                                          "popsize": popsize, "cost": float(best_by_gen[-1].sum())})
    return SamconResult(track, best_by_gen.sum(axis=1), best_by_gen, tuple([fell] * opt.iterations), rollouts, times)
