"""The Zordan–Hodgins gain schedule: servo gains that drop on an impact and blend back (pure numpy).

Every joint tracks with ``k_t``. An impact
at ``t_c`` on a link drops the affected joints (``scope`` ``all``, or
``chain`` = the joints from the hit link up to the root) to ``k_r`` for
``t_e`` seconds; they then blend back to ``k_t`` over ``t_f`` seconds. With
``d = t - t_c`` the time since the joint's latest impact (:func:`zh_profile`)::

    k(d) = k_r                    0 <= d <= t_e
         = B(k_r, k_t, S(s))      s = (d - t_e) / t_f in (0, 1)
         = k_t                    d >= t_e + t_f, and before any impact
    S(s) = 3 s² - 2 s³            smoothstep: S(0) = 0, S(1) = 1, S'(0) = S'(1) = 0

``dk/dt = ∂B/∂S · S'(s) / t_f`` vanishes at both ends of the blend, so the gain
is C¹ there: no jump and no kink where the reaction ends or where tracking
resumes (the drop at ``t_c`` itself is a deliberate step). ``B`` is a log-space
(geometric) blend by default, ``B = k_r^(1-S) · k_t^S``: the servo's natural
frequency ``sqrt(kp/I)`` then rises by equal ratios in equal times, whereas a
linear blend (``blend="linear"``, ``B = k_r + (k_t - k_r) S``) has already
doubled a 10:1 reaction gain at a fifth of ``t_f``, so the joint is stiff again
almost at once. If ``k_r`` or ``k_t`` is 0 the log blend falls back to linear.
Tan's §4.2 profile ``k_i = (1-α)² k``, ``k_{i+1} = (α² + 0.005) k`` (``α`` the
normalised distance to the keyframe; garbled in our OCR copy, and placed under
Table 3) cross-fades two keyframe servos; its slope at ``α = 0`` is ``-2k``, so
it is not C¹ against a constant gain and is not used here.

``kd`` follows ``kp``: ``kd_ratio · kp(t) · dt`` (ratio mode), or the
absolute ``kd`` times ``k(t)/k_t`` (absolute mode), so damping scales with the
gain.

Impacts from contact events. The scenario appends ``{"t", "link", "impulse",
"ball", ...}`` for every step a ball touches the character, so one contact
yields many events. A *contact episode* of a ball is a run of its events with
gaps shorter than ``min_separation`` (s, > dt). Within an episode, the first
event on each link is an impact on that link. So a ball resting in the hands
never restarts the reaction, a volleyball on both forearms in the same step
reacts through both arms, and a ball that leaves and comes back after
``min_separation`` restarts it. Events below ``min_impulse`` (N·s) or on links
the model does not have are ignored.

Wiring into the simulation (the loop calls ``gains_fn(t, base_gains)`` once per
step)::

    schedule = GainSchedule(model, opt.dt, Schedule(k_t=25000, k_r=2500, t_e=0.1, t_f=0.5))
    sim = Simulation(model, reference, opt, gains_fn=schedule.bind(scenario), scenario=scenario)

The bound function reads ``scenario.events`` at each call; the root rows come
from the simulation's ``base_gains`` (so ``SimOptions.root``/``root_kp`` keep
their meaning); joint rows come from the schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from tracker.character.kinematics import Kinematics
from tracker.character.model import Model
from tracker.control.base import Gains
from tracker.control.gains import KD_MODES, SCALINGS, KdMode, RootMode, Scaling, _assemble, _choice, _number, _Table
from tracker.errors import ConfigError

Blend = Literal["log", "linear"]
BLENDS: tuple[str, ...] = ("log", "linear")
SCOPES: tuple[str, ...] = ("all", "chain")
#: Events stamped up to this much after the query time still count (float round-off), s.
TIME_EPS = 1e-9


@dataclass(frozen=True)
class Schedule:
    """Zordan–Hodgins gain schedule.

    Attributes:
        k_t: tracking gain (N·m/rad per kg supported when inertia-scaled).
        k_r: reaction gain, same units.
        t_e: reaction duration, s.
        t_f: recovery (blend back) duration, s.
        scope: ``all`` joints, or the ``chain`` from the hit link to the root.
        enabled: ``False`` keeps ``k_t`` throughout.
    """

    k_t: float = 25000.0
    k_r: float = 2500.0
    t_e: float = 0.1
    t_f: float = 0.5
    scope: Literal["all", "chain"] = "chain"
    enabled: bool = True


# -- the Zordan–Hodgins profile -------------------------------------------------------

def smoothstep(s: np.ndarray | float) -> np.ndarray:
    """``3s² - 2s³`` on ``s`` clipped to [0, 1]: 0 -> 0, 1 -> 1, zero slope at both ends."""
    s = np.clip(np.asarray(s, dtype=float), 0.0, 1.0)
    return s * s * (3.0 - 2.0 * s)


def zh_profile(d: np.ndarray | float, k_t: float, k_r: float, t_e: float, t_f: float,
               blend: Blend = "log") -> np.ndarray:
    """Gain as a function of the time since the latest impact (see the module docstring).

    Args:
        d: time since the impact, s, any shape; ``inf`` or negative = no impact (gives ``k_t``).
        k_t: tracking gain; k_r: reaction gain (same units, >= 0).
        t_e: reaction duration, s; t_f: blend-back duration, s (0: step back to ``k_t``).
        blend: ``log`` (geometric) or ``linear`` interpolation between ``k_r`` and ``k_t``.

    Returns:
        the gain, shaped like ``d``.
    """
    d = np.asarray(d, dtype=float)
    if t_f > 0.0:
        s = (d - t_e) / t_f
    else:
        s = np.where(d > t_e, 1.0, 0.0)
    w = smoothstep(s)
    if blend == "log" and k_r > 0.0 and k_t > 0.0:
        k = k_r * (k_t / k_r) ** w
    else:
        k = k_r + (k_t - k_r) * w
    return np.where(d < 0.0, k_t, k)


# -- impacts ------------------------------------------------------------------------

@dataclass(frozen=True)
class Impact:
    """One impact that started (or restarted) a reaction.

    Attributes:
        t: time of the impact, s.
        link: the hit link.
        ball: the ball's id from the event (``None`` if the event had none).
        impulse: contact impulse magnitude of the first event, N·s (``nan`` if not given).
        joints: the joints whose reaction it (re)started.
    """

    t: float
    link: str
    ball: Any
    impulse: float
    joints: tuple[str, ...]


def _impulse(ev: Mapping) -> float:
    x = ev.get("impulse")
    if x is None:
        return float("nan")
    return float(np.linalg.norm(np.atleast_1d(np.asarray(x, dtype=float))))


# -- the schedule ---------------------------------------------------------------------

class GainSchedule:
    """Zordan–Hodgins gains over time, driven by ball-contact events.

    Args:
        model: the character model.
        dt: physics time step, s.
        schedule: ``k_t``, ``k_r``, ``t_e``, ``t_f``, ``scope``, ``enabled``
            (:class:`Schedule`; ``None``: its defaults).
        scaling: what ``k`` means. ``mass``: per kg supported, ``kp_j = k · m_sup(j)``
            (Tan's Table 3); ``uniform``: ``kp_j = k`` N·m/rad on every joint; ``model``: the
            model's group gains times ``k / k_t0``, ``k_t0`` the ``k_t`` given here (so a run-time
            :meth:`set` of ``k_t`` scales the tracking gains, as a GUI slider expects).
        kd_mode: ``ratio`` (``kd = kd_ratio · kp · dt``) or ``absolute`` (``kd``, default the
            model's, times ``k / k_t0``); ``auto``: absolute for ``scaling="model"``, else ratio.
        kd_ratio: multiple of ``kp·dt``.
        kd: absolute kd at ``k_t`` (see :func:`build_gains`).
        gain_scale: multiplies every joint's kp and kd.
        root_kp, root_kd_ratio, root: root gains used when no ``base_gains`` is passed
            (see :func:`build_gains`).
        torque_limits: clip joint torques to the model's limits.
        blend: ``log`` or ``linear`` blend back to ``k_t``.
        min_separation: seconds without contact between a ball and the character that end a
            contact episode (must exceed ``dt``: contacts are reported once per step).
        min_impulse: events with a smaller impulse magnitude (N·s) are ignored.

    Call it as ``schedule(t, base_gains, events)``, or bind it to a scenario (:meth:`bind`).
    Queries are expected at non-decreasing ``t``; going back in time (a reset) replays the
    events up to the new time.
    """

    def __init__(
        self,
        model: Model,
        dt: float,
        schedule: Schedule | None = None,
        *,
        scaling: Scaling = "mass",
        kd_mode: KdMode = "auto",
        kd_ratio: float = 1.0,
        kd: float | Mapping[str, float] | None = None,
        gain_scale: float = 1.0,
        root_kp: tuple[float, float] = (2.0e5, 2.0e5),
        root_kd_ratio: float = 1.0,
        root: RootMode = "anchored",
        torque_limits: bool = True,
        blend: Blend = "log",
        min_separation: float = 0.1,
        min_impulse: float = 0.0,
    ) -> None:
        self.model = model
        self.dt = _number(dt, "dt", strict=True)
        kin = model.kinematics()
        self._tab = tab = _Table.of(model, kin)
        self.scaling = _choice(scaling, SCALINGS, "scaling")
        mode = _choice(kd_mode, KD_MODES, "kd_mode")
        self.kd_mode = ("absolute" if scaling == "model" else "ratio") if mode == "auto" else mode
        self.kd_ratio = _number(kd_ratio, "kd_ratio")
        self._kd_abs = tab.kd.copy() if kd is None else tab.resolve(kd, "kd", tab.kd)
        tab.root_rows(self.dt, root, root_kp, root_kd_ratio)  # validate now
        self.root_kp, self.root_kd_ratio, self.root = tuple(root_kp), float(root_kd_ratio), root
        self.torque_limits = bool(torque_limits)
        self.blend = _choice(blend, BLENDS, "blend")
        self.min_separation = _number(min_separation, "min_separation")
        if self.min_separation <= self.dt:
            raise ConfigError(f"min_separation must exceed dt = {self.dt:g} s (contacts are reported every step), "
                              f"got {min_separation!r}")
        self.min_impulse = _number(min_impulse, "min_impulse")
        self._params = self._checked(Schedule() if schedule is None else schedule)
        self._k_model = self._params.k_t  # what the model's group gains stand for (scaling="model")
        self._scale = _number(gain_scale, "gain_scale")
        self._chains = {link: self._chain(kin, link) for link in kin.links}
        self._idx = {name: i for i, name in enumerate(tab.names)}
        self.reset()

    # -- parameters ----------------------------------------------------------------
    @staticmethod
    def _checked(s: Schedule) -> Schedule:
        _number(s.k_t, "schedule.k_t", strict=True)
        _number(s.k_r, "schedule.k_r")
        _number(s.t_e, "schedule.t_e")
        _number(s.t_f, "schedule.t_f")
        _choice(s.scope, SCOPES, "schedule.scope")
        if not isinstance(s.enabled, bool):
            raise ConfigError(f"schedule.enabled must be true or false, got {s.enabled!r}")
        return s

    @property
    def params(self) -> Schedule:
        """The current schedule parameters."""
        return self._params

    @property
    def gain_scale(self) -> float:
        return self._scale

    def set(self, *, k_t: float | None = None, k_r: float | None = None, t_e: float | None = None,
            t_f: float | None = None, scope: str | None = None, enabled: bool | None = None,
            gain_scale: float | None = None) -> None:
        """Change parameters at run time (GUI sliders); they apply from the next call.

        ``k_t``, ``k_r``, ``t_e``, ``t_f``, ``enabled`` and ``gain_scale`` also reshape reactions
        under way; ``scope`` applies to the impacts that follow.

        Raises:
            ConfigError: an invalid value (nothing is changed then).
        """
        given = {"k_t": k_t, "k_r": k_r, "t_e": t_e, "t_f": t_f, "scope": scope, "enabled": enabled}
        new = self._checked(replace(self._params, **{k: v for k, v in given.items() if v is not None}))
        scale = self._scale if gain_scale is None else _number(gain_scale, "gain_scale")
        self._params, self._scale = new, scale

    # -- topology --------------------------------------------------------------------
    def _chain(self, kin: Kinematics, link: str) -> tuple[str, ...]:
        out = []
        while link in kin.joint_by_child:
            j = kin.joint_by_child[link]
            if j.name in self._tab.names:
                out.append(j.name)
            link = j.parent
        return tuple(out)

    def chain(self, link: str) -> tuple[str, ...]:
        """Actuated joints from ``link`` up to the root, nearest first (empty for the root link)."""
        try:
            return self._chains[link]
        except KeyError:
            raise ConfigError(f"no link {link!r}; links are: {', '.join(self._chains)}") from None

    # -- events -----------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every impact and event (a new run)."""
        self._t_c = np.full(len(self._tab.names), -np.inf)  # latest impact time per joint
        self._impacts: list[Impact] = []
        self._cursor = 0
        self._events_id: int | None = None
        self._t_last = -np.inf
        self._last_contact: dict[Any, float] = {}
        self._episode_links: dict[Any, set[str]] = {}
        self.n_ignored = 0

    @property
    def impacts(self) -> tuple[Impact, ...]:
        """The impacts so far, in time order."""
        return tuple(self._impacts)

    def update(self, t: float, events: Sequence[Mapping]) -> list[Impact]:
        """Take in the events stamped up to ``t`` (a cumulative, time-ordered list); returns new impacts.

        ``events`` is the scenario's list, which only grows during a run; if it is a different or
        shorter list, or ``t`` went back in time, the schedule resets and replays it up to ``t``.
        """
        if (t < self._t_last - TIME_EPS or len(events) < self._cursor
                or (self._events_id is not None and id(events) != self._events_id)):
            self.reset()
        self._events_id, self._t_last = id(events), max(self._t_last, t)
        new = []
        while self._cursor < len(events):
            ev = events[self._cursor]
            te = float(ev["t"])
            if te > t + TIME_EPS:
                break  # not yet: wait for its time
            self._cursor += 1
            impact = self._take(te, ev)
            if impact is not None:
                new.append(impact)
        return new

    def _take(self, te: float, ev: Mapping) -> Impact | None:
        link = ev.get("link")
        impulse = _impulse(ev)
        if link not in self._chains or impulse < self.min_impulse:
            self.n_ignored += 1
            return None
        ball = ev.get("ball")
        last = self._last_contact.get(ball)
        if last is None or te - last >= self.min_separation - TIME_EPS:
            self._episode_links[ball] = set()  # a new contact episode
        self._last_contact[ball] = te
        seen = self._episode_links[ball]
        if link in seen:
            return None
        seen.add(link)
        joints = self._tab.names if self._params.scope == "all" else self._chains[link]
        for j in joints:
            self._t_c[self._idx[j]] = te
        impact = Impact(te, link, ball, impulse, tuple(joints))
        self._impacts.append(impact)
        return impact

    # -- gains --------------------------------------------------------------------------
    def joint_k(self, t: float) -> dict[str, float]:
        """Scheduled gain ``k(t)`` per joint (per kg with ``scaling="mass"``), from the events taken in."""
        return dict(zip(self._tab.names, map(float, self._k(t))))

    def _k(self, t: float) -> np.ndarray:
        p = self._params
        if not p.enabled:
            return np.full(len(self._tab.names), p.k_t)
        d = np.maximum(t - self._t_c, 0.0)  # -inf t_c -> inf d -> k_t
        return zh_profile(d, p.k_t, p.k_r, p.t_e, p.t_f, self.blend)

    def gains(self, t: float, base_gains: Gains | None = None) -> Gains:
        """Gains at ``t`` from the events already taken in (no event processing).

        Root rows (kp, kd, tau_max) come from ``base_gains`` when given, else from the
        schedule's own root settings.
        """
        tab = self._tab
        k = tab.per_dof(self._k(t))
        if self.scaling == "mass":
            kp = k * tab.m_sup
        elif self.scaling == "uniform":
            kp = k.copy()
        else:
            kp = tab.kp * (k / self._k_model)
        if self.kd_mode == "ratio":
            kd = self.kd_ratio * kp * self.dt
        else:
            kd = self._kd_abs * (k / self._k_model)
        if base_gains is not None and base_gains.nv != tab.layout.nv:
            raise ConfigError(f"base gains have {base_gains.nv} DOFs, the model {tab.layout.nv}")
        return _assemble(tab, self.dt, kp * self._scale, kd * self._scale, self.root_kp, self.root_kd_ratio,
                         self.root, self.torque_limits, base_gains)

    def __call__(self, t: float, base_gains: Gains | None = None, events: Sequence[Mapping] = ()) -> Gains:
        """Take in ``events`` up to ``t`` and return the gains at ``t`` (see :meth:`update`, :meth:`gains`)."""
        self.update(t, events)
        return self.gains(t, base_gains)

    def bind(self, scenario: Any) -> Callable[[float, Gains | None], Gains]:
        """A ``gains_fn(t, base_gains)`` for :class:`tracker.sim.simulation.Simulation`.

        It reads ``scenario.events`` at every call (so a scenario may replace the list on reset).
        """

        def gains_fn(t: float, base_gains: Gains | None = None) -> Gains:
            return self(t, base_gains, getattr(scenario, "events", ()))

        return gains_fn

    # -- display -------------------------------------------------------------------------
    def joint_state(self, t: float) -> dict[str, str]:
        """Per joint: ``tracking``, ``reacting`` (``d <= t_e``) or ``recovering`` (``t_e < d < t_e + t_f``)."""
        p = self._params
        d = t - self._t_c
        out = {}
        for name, dj in zip(self._tab.names, d):
            if not p.enabled or dj < -TIME_EPS or dj >= p.t_e + p.t_f:
                out[name] = "tracking"
            elif dj <= p.t_e:
                out[name] = "reacting"
            else:
                out[name] = "recovering"
        return out

    def state(self, t: float) -> str:
        """``reacting`` if any joint reacts at ``t``, else ``recovering`` if any recovers, else ``tracking``."""
        states = set(self.joint_state(t).values())
        for s in ("reacting", "recovering"):
            if s in states:
                return s
        return "tracking"
