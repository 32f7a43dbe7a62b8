"""Feedback around a free-root track by look-ahead: corrections chosen at the moment of need (issue 33, item 2).

A track from :mod:`tracker.sampling.samcon` is open loop: its PD-target offsets ``Δ(t)`` were found for
one start and no disturbance. Measured on the shipped CMU walk, a push of 0.5 N·s (5 N for 0.1 s)
fells it in 3 of 8 trials: the feet roll on their edges and the servo's stance set changes from
step to step, so a millimetre's difference grows into a different footfall within 0.3 s.

:class:`Reaction` watches a reduced state (:func:`reduced_state`: the pelvis's tilt, heading and
angular velocity, the CoM's horizontal velocity and its place over the feet, in the heading frame)
against the undisturbed run's at each knot of the track (every 0.1 s). While it stays within
``threshold`` (each feature over its :data:`SCALE`), nothing changes: the run is the open-loop
track's, bit for bit. Once it leaves, at every knot the next knot's offsets of the legs and the
waist are corrected: ``samples`` corrections (the first none, the others Gaussian, ``width`` rad
per leg DOF and a third of it for the waist) are each simulated from a saved state over the coming
fragment and ``horizon`` s more, scored by the search's own cost (:mod:`tracker.sampling.cost`, a
fall costing most), and the best is kept. This is SAMCON's step (Liu et al. 2010) taken online,
in the state the disturbance left, as the recovery step (:mod:`tracker.sim.recovery`) takes its
steps; the look-ahead does not know of a push that is still acting.

What was tried first, and why not: linear policies ``δ = M_k (s − s̄_k)`` per fragment, fitted by
regression to the corrections such look-aheads chose on other disturbances (Liu, van de Panne & Yin
2016's guided learning, one pass; 500 decisions): the chosen corrections are not linear in the reduced
state (R² = 0.04 pooled), and the fitted gains changed no outcome (``docs/guide/free_root.md``).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

import numpy as np

from tracker.errors import ConfigError

#: The reduced state's features and the deviation of each that counts as one unit.
FEATURES = ("roll", "pitch", "heading", "roll_rate", "pitch_rate", "yaw_rate", "com_vx", "com_vy",
            "com_over_feet_x", "com_over_feet_y")
SCALE = np.array([0.05, 0.05, 0.1, 0.5, 0.5, 0.5, 0.2, 0.2, 0.05, 0.05])
#: rad: the largest correction of one DOF.
LIMIT = 0.5


@dataclass(frozen=True)
class ReactOptions:
    """How the reaction looks ahead (module docstring): corrections tried per knot, the look-ahead past
    the fragment (s), the corrections' spread (rad, a leg DOF), the reduced state's deviation that starts
    it (in units of :data:`SCALE`) and the seed of its samples."""

    samples: int = 24
    horizon: float = 0.5
    width: float = 0.12
    threshold: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.samples, bool) or not isinstance(self.samples, int) or not 1 <= self.samples <= 1000:
            raise ConfigError(f"react samples must be a whole number from 1 to 1000, got {self.samples!r}")
        for name, lo, hi in (("horizon", 0.0, 5.0), ("width", 0.0, 1.0), ("threshold", 0.0, 1e6)):
            value = getattr(self, name)
            if not (np.isfinite(value) and lo <= value <= hi):
                raise ConfigError(f"react {name} must be from {lo:g} to {hi:g}, got {value!r}")


@dataclass
class Decision:
    """One correction: clip time ``t`` (s), the knot it set, its cost and the uncorrected one's."""

    t: float
    knot: int
    cost: float
    cost_uncorrected: float
    size: float

    def to_json(self) -> dict:
        return {"t": round(self.t, 4), "knot": self.knot, "cost": _finite(self.cost),
                "cost_uncorrected": _finite(self.cost_uncorrected), "size_rad": round(self.size, 4)}


def _finite(x: float):
    return round(float(x), 5) if np.isfinite(x) else None


def reduced_state(character, q: np.ndarray | None = None, v: np.ndarray | None = None) -> np.ndarray:
    """The :data:`FEATURES` ``(10,)`` of the character's state (default: its current one)."""
    import pybullet as p
    from scipy.spatial.transform import Rotation

    if q is None or v is None:
        q, v = character.get_state()
    com, jc = character.com_jacobian(q)
    com_v = jc @ v
    rot = Rotation.from_quat(q[3:7])
    heading = rot.as_euler("zyx")[0]
    to_heading = Rotation.from_euler("z", heading).inv()
    tilt = (to_heading * rot).as_rotvec()
    rate = to_heading.apply(v[3:6])
    vel = to_heading.apply(com_v)
    feet = np.mean([p.getLinkState(character.body_id, character.link_index(f), physicsClientId=character.client_id)[0]
                    for f in character.model.feet], axis=0)
    over = to_heading.apply(com - feet)
    return np.array([tilt[0], tilt[1], heading, rate[0], rate[1], rate[2], vel[0], vel[1], over[0], over[1]])


def deviation(state: np.ndarray, nominal: np.ndarray) -> np.ndarray:
    """``(state − nominal) / SCALE``, the heading's difference wrapped to ``(−π, π]``."""
    d = np.asarray(state, dtype=float) - nominal
    d[2] = (d[2] + np.pi) % (2 * np.pi) - np.pi
    return d / SCALE


def reacting_dofs(character, track) -> tuple[np.ndarray, np.ndarray]:
    """The track's DOFs a reaction corrects, and their weights (1 for the legs, 1/3 for the waist): every
    joint from a foot to the root, and the root's other child joints (the waist)."""
    from tracker.control.balance import leg_chains

    legs = {j for chain in leg_chains(character).values() for j in chain}
    base = character.link_names[0]
    waist = {j for j, child in character._child_of_joint.items()
             if character._parent_link.get(child) == base and j not in legs}
    starts = np.concatenate([[0], np.cumsum(np.asarray(track.dofs, dtype=int))])
    dofs, weights = [], []
    for i, name in enumerate(track.joints):
        if name in legs or name in waist:
            idx = np.arange(starts[i], starts[i + 1])
            dofs.append(idx)
            weights.append(np.full(len(idx), 1.0 if name in legs else 1.0 / 3.0))
    if not dofs:
        raise ConfigError("react: the model has no leg joints between its feet and its root to correct")
    return np.concatenate(dofs), np.concatenate(weights)


def nominal_states(sim) -> np.ndarray:
    """The reduced state ``(K, 10)`` at each of the track's knots (``sim.offsets``), simulated from ``sim``'s
    current state without any disturbance; ``sim`` is put back as it was (bit-identical). A knot already
    passed or past the clip's end is NaN."""
    from tracker.sim.snapshot import capture, forget, restore

    track = sim.offsets
    times = [float(t) for t in track.times]
    out = np.full((len(times), len(SCALE)), np.nan)
    snap = capture(sim, "memory")
    try:
        end = sim.reference.duration
        for k, t in enumerate(times):
            if t > end + 1e-9:
                break
            while sim.t < t - 1e-9:
                sim.step()
            if abs(sim.t - t) < 1e-6:
                out[k] = reduced_state(sim.character)
    finally:
        restore(sim, snap)
        forget(sim, snap)
    return out


@dataclass
class Reaction:
    """Look-ahead corrections of ``sim``'s track (module docstring). Call :meth:`before_step` before every
    step; ``nominal`` is :func:`nominal_states` of the undisturbed run (give it when the simulation itself
    holds a disturbance to come, e.g. a ball: its own run would count the hit as the track's)."""

    sim: object
    options: ReactOptions = field(default_factory=ReactOptions)
    nominal: np.ndarray | None = None
    weights: object = None
    decisions: list = field(default_factory=list)

    def __post_init__(self) -> None:
        from tracker.sampling.cost import CostWeights, TrackingCost
        from tracker.sampling.rollout import FootContactReader

        sim = self.sim
        if sim.offsets is None or sim.opt.root != "free":
            raise ConfigError("react needs a free root on an offset track (controller.offsets)")
        self.track = sim.offsets
        self.times = [float(t) for t in self.track.times]
        self.values = np.array(self.track.values, dtype=float, copy=True)
        self.dofs, self.spread = reacting_dofs(sim.character, self.track)
        if self.nominal is None:
            self.nominal = nominal_states(sim)
        self.cost = TrackingCost(sim.model, self.weights or CostWeights(velocity=0.0))
        self.contacts = FootContactReader.of(sim)
        self.reacting = False

    def before_step(self) -> Decision | None:
        """At a knot whose reduced state is off the undisturbed run's, choose and set the next knot's
        correction; returns the :class:`Decision` (None where nothing was decided)."""
        sim = self.sim
        k = bisect_left(self.times, sim.t - 1e-6)
        if k + 1 >= len(self.times) or abs(self.times[k] - sim.t) > 1e-6 or k >= len(self.nominal):
            return None
        if not np.isfinite(self.nominal[k]).all() or sim.fell_at is not None:
            return None
        off = np.abs(deviation(reduced_state(sim.character), self.nominal[k])).max()
        if off <= self.options.threshold:
            return None
        self.reacting = True
        decision = self._decide(k)
        self.decisions.append(decision)
        return decision

    def _decide(self, k: int) -> Decision:
        from tracker.sampling.rollout import score_steps, simulate_steps
        from tracker.sim.snapshot import capture, forget, restore

        sim, opt = self.sim, self.options
        rng = np.random.default_rng((opt.seed, k))
        n = int(round((self.times[k + 1] - sim.t + opt.horizon) / sim.opt.dt))
        n = max(min(n, int(round((sim.reference.duration - sim.t) / sim.opt.dt))), 1)
        snap = capture(sim, "memory")
        best, best_cost, zero_cost = np.zeros(len(self.dofs)), np.inf, np.inf
        try:
            for j in range(opt.samples):
                delta = (np.zeros(len(self.dofs)) if j == 0
                         else np.clip(opt.width * self.spread * rng.standard_normal(len(self.dofs)), -LIMIT, LIMIT))
                values = self.values.copy()
                values[k + 1, self.dofs] += delta
                restore(sim, snap)
                sim.offsets = self.track.with_values(values)
                cost = score_steps(self.cost, simulate_steps(sim, self.contacts, n))[0]
                if j == 0:
                    zero_cost = cost
                if cost < best_cost:
                    best, best_cost = delta, cost
        finally:
            restore(sim, snap)
            forget(sim, snap)
        self.values[k + 1, self.dofs] += best
        sim.offsets = self.track.with_values(self.values.copy())
        return Decision(sim.t, k + 1, best_cost, zero_cost, float(np.abs(best).max()))
