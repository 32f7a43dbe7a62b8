"""Pushes on a standing character, and whether it stays up.

A push is a horizontal world force on one link's centre of mass for a while. Its direction
is where it comes *from*, in degrees about +Z from the character's facing direction (+X):
0 from the front (the force points backward, −X), 90 from its left (+Y side, force −Y),
180 from behind, 270 from its right. A fall is an outcome, not an error, as every command
counts it (:mod:`tracker.sim.fall`): a link other than a foot on the ground, the root below
half the stance's height, or thrown off its feet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import tracker.quiet  # noqa: F401
import pybullet as p  # noqa: E402

#: Push directions of the sweep: from the front, the left, behind, the right.
DIRECTIONS: dict[str, float] = {"front": 0.0, "left": 90.0, "back": 180.0, "right": 270.0}


@dataclass(frozen=True)
class Push:
    """One push.

    Attributes:
        force: N (>= 0). duration: s. direction: degrees (see the module docstring).
        link: the pushed link. start: simulated time at which it starts, s.
    """

    force: float = 0.0
    duration: float = 0.2
    direction: float = 0.0
    link: str = "chest"
    start: float = 1.0

    def vector(self) -> np.ndarray:
        """The world force ``(3,)`` N."""
        a = math.radians(self.direction)
        return -self.force * np.array([math.cos(a), math.sin(a), 0.0])

    def apply(self, character, link: int, t: float) -> None:
        """Apply the force on ``link`` (``character.link_index(self.link)``) at its centre of mass for the
        coming step if ``t`` (time on the push's clock, s) is within the push."""
        if self.force > 0 and self.start <= t + 1e-9 < self.start + self.duration:
            c = character
            pos = p.getLinkState(c.body_id, link, physicsClientId=c.client_id)[0] if link >= 0 else \
                p.getBasePositionAndOrientation(c.body_id, physicsClientId=c.client_id)[0]
            p.applyExternalForce(c.body_id, link, self.vector().tolist(), pos, p.WORLD_FRAME,
                                 physicsClientId=c.client_id)


@dataclass
class PushOutcome:
    """What a push did (``--json`` of ``tracker push``).

    Attributes:
        fell: whether the character fell. fell_time_s: when (None if it did not), s.
        com_drift_m: horizontal distance between the CoM at the start and at the end, m.
        max_com_offset_m: the largest horizontal distance of the CoM from where it started, m.
        fell_reason: what touched the ground, or the CoM height.
        t, com: the time ``(T,)`` s and CoM ``(T, 3)`` m of every step (not in the JSON).
        steps: the recovery steps taken (:meth:`tracker.control.stepping.StepEvent.to_json`, times from
            the run's start), with ``--strategy step``; empty otherwise.
    """

    fell: bool
    fell_time_s: float | None
    com_drift_m: float
    max_com_offset_m: float
    duration_s: float
    push: Push
    fell_reason: str = ""
    t: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    com: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)), repr=False)
    steps: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"fell": self.fell, "fell_time_s": self.fell_time_s, "com_drift_m": self.com_drift_m,
                "max_com_offset_m": self.max_com_offset_m, "fell_reason": self.fell_reason,
                "duration_s": self.duration_s, "force_n": self.push.force, "push_duration_s": self.push.duration,
                "direction_deg": self.push.direction, "link": self.push.link, "push_start_s": self.push.start,
                "steps": self.steps}


def run_push(sim, push: Push, duration: float, *, stop_on_fall: bool = True) -> PushOutcome:
    """Simulate ``duration`` s from the simulation's current state, pushing as ``push`` says.

    Args:
        sim: a :class:`tracker.sim.simulation.Simulation` (free root, usually with balance).
        stop_on_fall: stop at the fall (the rest would be lying on the ground).
    """
    c = sim.character
    link = c.link_index(push.link)  # a wrong name is a ModelError naming the links
    dt = sim.opt.dt
    t0 = sim.t
    com0 = c.com_jacobian()[0]
    ts, coms = [t0], [com0]
    fell_at, reason = None, ""
    stepper = getattr(sim, "stepper", None)
    if stepper is not None:  # recovery steps: the look-ahead simulates on with the push acting
        from tracker.sim.recovery import maybe_step

        disturb = lambda: push.apply(c, link, sim.t - t0)  # noqa: E731
    for _ in range(int(round(duration / dt))):
        if stepper is not None:
            maybe_step(sim, disturb)
        push.apply(c, link, sim.t - t0)
        sim.step()
        com = c.com_jacobian()[0]
        ts.append(sim.t)
        coms.append(com)
        if fell_at is None and sim.fell_at is not None:  # tracker.sim.fall: one notion for every command
            fell_at, reason = max(sim.fell_at - t0, 0.0), sim.fall_reason
            if stop_on_fall:
                break
    com = np.array(coms)
    off = np.linalg.norm(com[:, :2] - com0[:2], axis=1)
    steps = [] if stepper is None else [dict(e.to_json(), start_s=round(e.start - t0, 6),
                                             land_s=None if e.land is None else round(e.land - t0, 6))
                                        for e in stepper.events]
    return PushOutcome(fell=fell_at is not None, fell_time_s=None if fell_at is None else round(fell_at, 6),
                       com_drift_m=float(off[-1]), max_com_offset_m=float(off.max()), duration_s=float(ts[-1] - t0),
                       push=push, fell_reason=reason, t=np.array(ts) - t0, com=com, steps=steps)


#: The strategies a sweep compares; ``none`` is the stance tracked by SPD without feedback.
SWEEP_STRATEGIES: tuple[str, ...] = ("none", "jacobian", "ankle", "hip")
#: Every strategy a sweep file may name: those and ``step`` (the Jacobian feedback with recovery steps).
ALL_SWEEP_STRATEGIES: tuple[str, ...] = SWEEP_STRATEGIES + ("step",)


@dataclass(frozen=True)
class SweepSettings:
    """A grid of pushes (``configs/sweeps/push.yaml``; units: N, s, degrees, m).

    Attributes:
        pose: pose file or ``stand``. dt: time step. time: simulated seconds per run.
        start: push start, s. duration: push length, s. links: pushed links.
        directions: name -> degrees. strategies: ``none`` and/or balance strategies.
        forces: the push sizes tried, N (increasing). kp, kd: the feedback gains.
    """

    pose: str = "stand"
    dt: float = 1.0 / 60.0
    time: float = 4.0
    start: float = 1.0
    duration: float = 0.2
    links: tuple[str, ...] = ("pelvis", "chest")
    directions: tuple[tuple[str, float], ...] = tuple(DIRECTIONS.items())
    strategies: tuple[str, ...] = SWEEP_STRATEGIES
    forces: tuple[float, ...] = tuple(float(f) for f in range(0, 301, 25))
    kp: float | None = None
    kd: float | None = None


#: Bounds of a push sweep file's numbers: time step (s), times and durations (s), any other value,
#: and the forces per sweep (each force is a run per direction and strategy).
MIN_DT, MAX_DT = 1e-5, 0.1
MAX_TIME_S = 3600.0
SWEEP_MAX_VALUE = 1e7
SWEEP_MAX_FORCES = 1000


def load_sweep(path) -> SweepSettings:
    """Read a push sweep file (strict: unknown keys and bad values are one-line ConfigErrors)."""
    from pathlib import Path

    from tracker.numbers import number_from_text

    def show(value) -> str:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."

    from tracker.control.balance import STRATEGIES
    from tracker.errors import ConfigError
    from tracker.yamlsafe import read_yaml_file

    path = Path(path)
    # a regular file of at most 1 MiB (a FIFO or /dev/zero refused unopened), nesting and aliases bounded
    raw = read_yaml_file(path, "push sweep", error=ConfigError)
    if not isinstance(raw, dict) or raw.get("kind") != "push_sweep":
        raise ConfigError(f"{path}: not a push sweep file (it needs 'kind: push_sweep')")
    keys = {f for f in SweepSettings.__dataclass_fields__} | {"kind", "description"}
    for k in raw:
        if k not in keys:
            raise ConfigError(f"{path}: {k}: unknown key (valid: {', '.join(sorted(keys))})")

    def num(key, value, lo=0.0, hi=SWEEP_MAX_VALUE):
        try:
            x = number_from_text(value) if isinstance(value, str) else float(value)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            raise ConfigError(f"{path}: {key}: expected a number, got {show(value)}") from None
        if isinstance(value, bool) or not np.isfinite(x) or not lo <= x <= hi:
            raise ConfigError(f"{path}: {key}: expected a number from {lo:g} to {hi:g}, got {show(value)}")
        return x

    kw = {}
    for k in ("dt", "time", "start", "duration", "kp", "kd"):
        if k in raw:
            kw[k] = num(k, raw[k], hi={"dt": MAX_DT, "time": MAX_TIME_S, "start": MAX_TIME_S,
                                       "duration": MAX_TIME_S}.get(k, SWEEP_MAX_VALUE))
    if "dt" in kw and kw["dt"] < MIN_DT:
        raise ConfigError(f"{path}: dt: must be at least {MIN_DT:g} s, got {kw['dt']:g}")
    if "pose" in raw:
        kw["pose"] = str(raw["pose"]) if raw["pose"] == "stand" else str((path.parent / raw["pose"]).resolve())
    if "links" in raw:
        kw["links"] = tuple(str(x) for x in raw["links"])
    if "directions" in raw:
        if not isinstance(raw["directions"], dict):
            raise ConfigError(f"{path}: directions: expected a mapping name -> degrees")
        kw["directions"] = tuple((str(k), num(f"directions.{k}", v, -360.0)) for k, v in raw["directions"].items())
    if "strategies" in raw:
        bad = [s for s in raw["strategies"] if s not in ("none",) + STRATEGIES + ("step",)]
        if bad:
            raise ConfigError(f"{path}: strategies: {bad[0]!r} is not one of: none, {', '.join(STRATEGIES)}, step")
        kw["strategies"] = tuple(raw["strategies"])
    if "forces" in raw:
        f = raw["forces"]
        if isinstance(f, dict) and set(f) == {"start", "stop", "step"}:
            a, b, st = (num(f"forces.{k}", f[k]) for k in ("start", "stop", "step"))
            if st <= 0:
                raise ConfigError(f"{path}: forces.step: must be > 0")
            if (b - a) / st + 1 > SWEEP_MAX_FORCES:
                raise ConfigError(f"{path}: forces: {int((b - a) / st + 1)} forces, more than {SWEEP_MAX_FORCES}")
            kw["forces"] = tuple(float(x) for x in np.arange(a, b + 0.5 * st, st))
        elif isinstance(f, list) and f:
            if len(f) > SWEEP_MAX_FORCES:
                raise ConfigError(f"{path}: forces: {len(f)} forces, more than {SWEEP_MAX_FORCES}")
            kw["forces"] = tuple(sorted(num("forces", x) for x in f))
        else:
            raise ConfigError(f"{path}: forces: expected a list of newtons or {{start, stop, step}}")
    return SweepSettings(**kw)


def largest_survived(forces: np.ndarray, fell: np.ndarray) -> float:
    """The largest push of a sweep below which every push was survived, N (0 if even the first fell;
    NaN if the character fell without any push)."""
    forces, fell = np.asarray(forces, float), np.asarray(fell, bool)
    order = np.argsort(forces)
    forces, fell = forces[order], fell[order]
    if len(forces) and forces[0] == 0.0 and fell[0]:
        return float("nan")
    best = 0.0
    for f, x in zip(forces, fell):
        if x:
            break
        best = f
    return float(best)


def run_sweep(settings: SweepSettings, progress=None) -> list[dict]:
    """Every (strategy, link, direction, force) of ``settings``; one row each (a dict)."""
    from tracker.control.balance import DEFAULT_KD, DEFAULT_KP, BalanceOptions
    from tracker.sim.stance import stand_simulation

    rows = []
    for strategy in settings.strategies:
        if strategy == "none":
            bal = None
        else:  # "step": the Jacobian feedback with recovery steps (tracker.control.stepping)
            from tracker.control.stepping import StepOptions

            bal = BalanceOptions(kp=DEFAULT_KP if settings.kp is None else settings.kp,
                                 kd=DEFAULT_KD if settings.kd is None else settings.kd,
                                 strategy="jacobian" if strategy == "step" else strategy,
                                 step=StepOptions() if strategy == "step" else None)
        for link in settings.links:
            for dname, deg in settings.directions:
                for force in settings.forces:
                    # a fresh world per push: a reset world keeps contact caches from the last run
                    sim = stand_simulation(settings.pose, dt=settings.dt, balance=bal)
                    try:
                        out = run_push(sim, Push(force=force, duration=settings.duration, direction=deg, link=link,
                                                 start=settings.start), settings.time)
                    finally:
                        sim.close()
                    rows.append({"strategy": strategy, "link": link, "direction": dname, "direction_deg": deg,
                                 "force_n": force, "fell": out.fell, "fell_time_s": out.fell_time_s,
                                 "max_com_offset_m": round(out.max_com_offset_m, 6), "steps": len(out.steps)})
                    if progress is not None:
                        progress(rows[-1])
    return rows


def survival_table(rows: list[dict]) -> list[dict]:
    """Per (strategy, link, direction): the largest push survived (:func:`largest_survived`)."""
    keys = sorted({(r["strategy"], r["link"], r["direction"]) for r in rows},
                  key=lambda k: (ALL_SWEEP_STRATEGIES.index(k[0]) if k[0] in ALL_SWEEP_STRATEGIES else 9, k[1], k[2]))
    out = []
    for s, link, d in keys:
        sel = [r for r in rows if (r["strategy"], r["link"], r["direction"]) == (s, link, d)]
        out.append({"strategy": s, "link": link, "direction": d,
                    "largest_survived_n": largest_survived([r["force_n"] for r in sel], [r["fell"] for r in sel])})
    return out
