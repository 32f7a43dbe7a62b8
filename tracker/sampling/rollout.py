"""Rollouts: simulate a window from a saved state with a given offset track; its cost and end state.

A :class:`RolloutWorker` owns one simulation of an experiment config (model, clip, controller,
gains, root, time step; no balls unless asked) and runs :class:`RolloutRequest` s on it::

    worker = RolloutWorker(build(load_config("walk_free.yaml")))
    start = worker.initial_state()                       # the clip's pose at clip.start
    res = worker.rollout(RolloutRequest(start, track, t_end=start.t + 0.1))
    res.cost, res.terms, res.fell, res.end               # res.end: the state at t_end, to go on from

A rollout restores its start state (:mod:`tracker.sim.snapshot`), aims the servo at
``reference ⊕ Δ(t)`` for the request's track (:mod:`tracker.sim.offsets`), steps to ``t_end`` and saves the
end state. It gives, bit for bit, what ``tracker run`` with the same track gives over the same
steps (``tests/sampling/test_rollout.py``), so an optimiser's best rollouts are what the saved
track replays.

States cross processes as ``bullet`` snapshots (portable bytes); a worker restores a start state
from its bytes once and keeps it in engine memory, so the samples that share a start (SAMCON's
many samples per kept state) restore it for about 0.01 ms each instead of 1 ms.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from tracker.errors import SimulationError
from tracker.sampling.ball_cost import ball_specs, ball_term
from tracker.sampling.cost import TERMS, CostWeights, TrackingCost


@dataclass(frozen=True)
class RolloutRequest:
    """One rollout: from ``start`` to clip time ``t_end`` with ``offsets`` (None: aim at the clip).

    Attributes:
        start: a :class:`~tracker.sim.snapshot.Snapshot` of a simulation built like the worker's.
        offsets: :class:`~tracker.sim.offsets.OffsetTrack` or None.
        t_end: clip time to simulate to, s (rounded to whole steps from ``start.t``).
        keep_end: save the end state (``result.end``); False saves the time of samples that are scored only.
        keep_states: return the simulated ``q`` of every step (``result.q``).
        tag: anything the caller wants back with the result (e.g. a sample's index).
        t_look: clip time to go on simulating to after ``t_end``, scored apart (``result.look_cost``);
            the end state, cost and ``fell`` stay those at ``t_end``. None: stop at ``t_end``.
    """

    start: object
    offsets: object | None
    t_end: float
    keep_end: bool = True
    keep_states: bool = False
    tag: object = None
    t_look: float | None = None


@dataclass(frozen=True)
class RolloutResult:
    """What a rollout gave.

    Attributes:
        cost: the total tracking cost (:class:`~tracker.sampling.cost.TrackingCost`); ``inf`` if it diverged.
        terms: the cost's terms (pose, root, end_effector, balance, velocity).
        steps: control steps simulated.
        fell: the free root fell within the window (or had before it).
        diverged: the simulation blew up (``message`` says how).
        end: the end state (a portable snapshot) or None.
        q_end: the simulated ``q`` at the end ``(nq,)``.
        q: every step's ``q`` ``(steps, nq)`` with ``keep_states``, else None.
        tag: the request's tag.
        look_cost: the cost of the steps from ``t_end`` to the request's ``t_look`` (0 without one;
            ``inf`` if they diverged).
    """

    cost: float
    terms: dict
    steps: int
    fell: bool
    diverged: bool
    end: object
    q_end: np.ndarray
    q: np.ndarray | None = None
    tag: object = None
    message: str = ""
    look_cost: float = 0.0


@dataclass
class _Steps:
    """Steps a rollout simulated: what the cost reads, how many of them were fallen, whether it blew up."""

    q: np.ndarray
    q_refs: list
    vs: list
    v_refs: list
    mismatch: list
    fallen: int
    diverged: bool
    message: str
    ball: float = 0.0


@dataclass
class _Cache:
    """Start states restored from bytes, kept in engine memory (least recently used dropped first)."""

    size: int = 32
    items: OrderedDict = field(default_factory=OrderedDict)


class RolloutWorker:
    """Runs rollouts on one simulation of a prepared config.

    Args:
        prep: :class:`~tracker.experiments.runner.Prepared` (``runner.build(config)``).
        weights: the cost's weights.
        technique: engine technique of the end states (``bullet``: portable; ``memory``: this process only).
        balls: launch the config's balls (with its gain schedule).
    """

    def __init__(self, prep, weights: CostWeights | None = None, technique: str = "bullet", balls: bool = False) -> None:
        from tracker.experiments.runner import make_simulation, scenario_of, schedule_of
        from tracker.sim.snapshot import capture

        self.prep = prep
        scenario = scenario_of(prep) if balls else None
        schedule = schedule_of(prep) if scenario is not None else None
        self.sim = make_simulation(prep, scenario=scenario, schedule=schedule)
        self._ball_specs = ball_specs(prep.config) if scenario is not None else ()
        self.cost = TrackingCost(prep.model, weights)
        self._contacts = FootContactReader.of(self.sim)
        self.technique = technique
        self._cache = _Cache()
        # The state the simulation was built in, as `tracker run` starts. Not a second reset(): with balance
        # feedback a reset settles the feet's contact manifolds (World.settle_contacts) on top of whatever the
        # engine holds, so it starts from other contact points than a fresh run, and a search's replay would
        # not be its rollouts (the Bandai walk's replay diverged at 1 s where its search had stood for 3 s).
        self._initial = capture(self.sim, "bullet")

    @property
    def dt(self) -> float:
        return self.sim.opt.dt

    def initial_state(self):
        """The state at the config's start (the clip's pose and velocity at ``clip.start``), as a freshly
        built simulation has it: what ``tracker run`` starts from."""
        from tracker.sim.snapshot import capture, restore

        if self.technique == self._initial.technique:
            return self._initial
        restore(self.sim, self._initial)
        return capture(self.sim, self.technique)

    def _restore(self, start) -> None:
        from tracker.sim.snapshot import capture, restore

        if start.technique != "bullet":  # in-process states restore directly
            restore(self.sim, start)
            return
        key = (hash(start.engine), len(start.engine), start.t)
        cache = self._cache.items
        mem = cache.get(key)
        if mem is not None and mem[0] == start.engine:
            cache.move_to_end(key)
            restore(self.sim, mem[1])  # its Python state is the request's: captured right after restoring it
            return
        restore(self.sim, start)
        cache[key] = (start.engine, capture(self.sim, "memory"))
        while len(cache) > self._cache.size:
            from tracker.sim.snapshot import forget

            _, (_, old) = cache.popitem(last=False)
            forget(self.sim, old)

    def rollout(self, req: RolloutRequest) -> RolloutResult:
        """Simulate ``req`` (class docstring)."""
        from tracker.sim.snapshot import capture

        sim = self.sim
        self._restore(req.start)
        sim.offsets = req.offsets
        if req.offsets is not None:
            req.offsets.check_layout(sim.layout, "rollout")
        n = max(int(round((req.t_end - req.start.t) / self.dt)), 0)
        fell_before = sim.fell_at is not None
        seg = self._simulate(n)
        cost, terms = self._score(seg)
        end = capture(sim, self.technique) if (req.keep_end and not seg.diverged) else None
        q = seg.q
        q_end = q[-1].copy() if len(q) else sim.character.get_state()[0]
        look_cost = 0.0
        if req.t_look is not None and not seg.diverged:
            m = max(int(round((req.t_look - req.start.t) / self.dt)) - n, 0)
            look = self._simulate(m)
            look_cost = self._score(look)[0]
        return RolloutResult(cost, terms, len(q), bool(fell_before or seg.fallen), seg.diverged, end, q_end,
                             q if req.keep_states else None, req.tag, seg.message, look_cost)

    def _simulate(self, n: int) -> _Steps:
        """Step ``n`` times (or until the simulation blows up), keeping what the cost reads."""
        return simulate_steps(self.sim, self._contacts, n, self._ball_specs)

    def _score(self, steps: _Steps) -> tuple[float, dict]:
        """The cost of ``steps``: ``inf`` if they diverged, 0 if there were none."""
        return score_steps(self.cost, steps)

    def run_all(self, requests) -> list[RolloutResult]:
        """Each request in turn (a worker process's share of a batch)."""
        return [self.rollout(r) for r in requests]

    def close(self) -> None:
        self.sim.close()



def simulate_steps(sim, contacts, n: int, ball_specs=()) -> _Steps:
    """Step ``sim`` ``n`` times (or until it blows up), keeping what the cost reads: its rows, the feet's
    contact mismatch (``contacts``, a :class:`FootContactReader` or None), the balls' term at the end
    (``ball_specs``)."""
    qs, q_refs, vs, v_refs, mismatch = [], [], [], [], []
    diverged, message, fallen = False, "", 0
    for _ in range(n):
        try:
            row = sim.step()
        except SimulationError as exc:
            diverged, message = True, str(exc)
            break
        reason = sim._diverged(row)
        if reason:
            diverged, message = True, reason
            break
        qs.append(row["q"])
        q_refs.append(row["q_ref"])
        vs.append(row["v"])
        v_refs.append(row["v_ref"])
        if contacts is not None:
            mismatch.append(contacts.mismatch(sim.t))
        fallen += sim.fell_at is not None
    q = np.array(qs) if qs else np.zeros((0, sim.layout.nq))
    ball = ball_term(sim.scenario, ball_specs, sim.t) if ball_specs and not diverged else 0.0
    return _Steps(q, q_refs, vs, v_refs, mismatch, fallen, diverged, message, ball)


def score_steps(cost: TrackingCost, steps: _Steps) -> tuple[float, dict]:
    """The cost of ``steps`` (:func:`simulate_steps`): ``inf`` if they diverged, 0 if there were none."""
    if steps.diverged or not len(steps.q):
        return (float("inf") if steps.diverged else 0.0), {k: float("nan") for k in TERMS}
    terms = cost.terms(steps.q, np.array(steps.q_refs), np.array(steps.vs), np.array(steps.v_refs),
                       np.array(steps.mismatch) if steps.mismatch else None)
    terms["ball"] = steps.ball
    return cost.total(terms, steps.fallen / len(steps.q)), terms


class FootContactReader:
    """The feet's ground contacts: the engine's now against the clip's labels at a clip time.

    The clip's are the reference's :attr:`~tracker.retarget.reference.Reference.contacts` (from the
    source's heel and toe height and speed, at the nearest frame); the engine's are the contact
    points between each foot and the ground at most :attr:`DEPTH` apart (PyBullet also lists points
    within its contact margin that do not touch yet). Within :attr:`MARGIN` of a change of a foot's
    label either answer is right: the labels come from thresholds on a noisy source, and a
    servo's heel strike or toe-off a frame or two off the clip's is not an error to pay for.
    """

    #: Contact points further apart than this do not count as touching, m.
    DEPTH = 0.002
    #: Time either side of a label change in which the foot's contact is not judged, s.
    MARGIN = 0.04

    def __init__(self, sim, labels: np.ndarray, fps: float, links: tuple[str, ...]) -> None:
        import pybullet as p

        self._p = p
        labels = np.asarray(labels, dtype=bool)
        self._labels, self._fps, self._last = labels, float(fps), len(labels) - 1
        self.judged = _far_from_changes(labels, int(round(self.MARGIN * fps)))
        c = sim.character
        self._cid, self._body, self._ground = c.client_id, c.body_id, sim.world.ground
        self._index = {c.link_index(name): k for k, name in enumerate(links)}

    @classmethod
    def of(cls, sim) -> "FootContactReader | None":
        """The reader of ``sim``'s character and reference, or None without labels or those feet."""
        ref = sim.reference
        labels, links = getattr(ref, "contacts", None), getattr(ref, "CONTACT_LINKS", None)
        if labels is None or links is None or not set(links) <= set(sim.character.link_names):
            return None
        return cls(sim, labels, ref.fps, tuple(links))

    def sim(self) -> np.ndarray:
        """Which feet touch the ground now ``(F,)`` bool."""
        out = np.zeros(len(self._index), dtype=bool)
        for c in self._p.getContactPoints(bodyA=self._body, bodyB=self._ground, physicsClientId=self._cid):
            k = self._index.get(c[3])
            if k is not None and c[8] <= self.DEPTH:
                out[k] = True
        return out

    def frame(self, t: float) -> int:
        """The reference frame nearest clip time ``t`` (held outside the clip)."""
        return min(max(int(round(t * self._fps)), 0), self._last)

    def reference(self, t: float) -> np.ndarray:
        """The clip's labels at clip time ``t`` ``(F,)`` bool."""
        return self._labels[self.frame(t)]

    def mismatch(self, t: float) -> np.ndarray:
        """Which feet's contact now differs from the clip's at clip time ``t`` (judged frames only) ``(F,)`` bool."""
        k = self.frame(t)
        return (self.sim() != self._labels[k]) & self.judged[k]


def _far_from_changes(labels: np.ndarray, margin: int) -> np.ndarray:
    """``(F, K)`` bool: frames more than ``margin`` frames from a change of their column's label."""
    out = np.ones(labels.shape, dtype=bool)
    for k in range(labels.shape[1]):
        for c in np.flatnonzero(labels[1:, k] != labels[:-1, k]):  # the change is between c and c + 1
            out[max(c + 1 - margin, 0):c + 1 + margin, k] = False
    return out
