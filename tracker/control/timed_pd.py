"""Timed keyframe PD of Allen, Chu, Shapiro & Faloutsos 2007 ("On the Beat!").

Every control step each DOF gets critically damped PD gains computed from the
inertia it moves and the time ``t̂`` it has to reach its keyframe
``(q̂, ŵ, t̂_k)``, so that the animator says *when* a pose is reached::

    λ = t̂ / n,   n = −ln(1 − f) = ln 10 for f = 0.9  (90 % of the error gone in t̂)
    k_s = m / λ²,   k_d = 2 m / λ
    τ = k_s (q̂ ⊖ q) + k_d (ŵ − w)                                       (paper eq. 4)

``m`` is the composite moment of inertia of everything outboard of the joint
about its axis (eq. 5-7, :mod:`tracker.character.composite`; the same number as
``M_kk``), per axis for ball joints. Parent-torque compensation (eq. 8-10) adds
to each joint ``m_i (a_i · ŝ_i)`` for the angular acceleration ``a_i`` that its
ancestors' torques impart.

Decisions (``../shared/CONTROLLERS.md`` §4, measured in ``tracker reproduce allen2007``):

* ``t̂`` is the time *remaining* to the keyframe, floored at ``min_steps`` control
  steps (default 1). Before a key the time remaining is at least one step at every
  control step, so a floor of one step never changes the approach; a floor of two
  (``../shared/CONTROLLERS.md``'s note) stiffens nothing but leaves error at the key
  (measured in ``tracker reproduce allen2007``). The paper's wording also reads as
  the segment's whole length; that leaves ``(1 + n) e^{−n} = 0.33`` of the error at
  the key and is kept as ``horizon="segment"``, an ablation.
* Past the last key (``hold``). With ``t̂`` floored at ``s`` steps the explicit law's
  per-step damping is ``k_d h / m = 2n/s`` and stiffness ``k_s h² / m = n²/s²``;
  symplectic Euler on ``m ë = −k_s e − k_d ė`` is stable iff ``k_d h/m < 2`` and
  ``4 − k_s h²/m − 2 k_d h/m > 0``. If the inertia used is ``r`` times the one the
  joint moves with, both gains scale by ``r`` and the bound becomes
  ``s > (n r / 2)(1 + √(1 + 1/r))``: 2.78 steps with the exact inertia (``r = 1``).
  A floor of one step (``k_d h/m = 2n = 4.6``) or two (``n = 2.3``) held for ever
  diverges even then (``hold="floor"``, the paper as written). ``hold="stable"``
  (default): past the last key there is no deadline left, so ``t̂`` stops
  shrinking at :data:`HOLD_STEPS` ``= 10`` steps: ``k_d h/m = 0.46`` and
  ``k_s h²/m = 0.053`` with the exact inertia, stable for ``r < 4.1``. On a chain
  ``r`` is at most the largest eigenvalue of ``D^½ M⁻¹ D^½`` (``D = diag M``),
  3.2 on the two-link arm (bound ``s > 7.9``). A longer hold (the last segment's
  length) is stable too but lets the joint drift with the velocity it arrives
  with (measured in ``tracker reproduce allen2007``).
* ``law="paper"`` is the paper's law as printed: composite inertia, parent
  compensation, explicit, no gravity compensation (:data:`PAPER_LAW`).
* ``integration="explicit"`` is the paper's law. ``"implicit"`` (default)
  evaluates it at each DOF's predicted next state, ``τ = [k_s (q̂ ⊖ (q ⊕ w h)) +
  k_d (ŵ − w)] / (1 + (k_d h + k_s h²)/m_own)``: a per-DOF division, no linear
  solve. ``m_own`` is the joint's own link inertia, a lower bound of the inertia
  a DOF actually moves when its neighbours move too (the composite inertia is
  the upper bound). Near a key the explicit law's ``k_d h / m`` passes explicit
  PD's stability bound; on the humanoid even the composite inertia is 30-90×
  the effective inertia of the spine DOFs (a light pelvis between heavy
  subtrees), and the explicit law runs away within two steps at any step size
  (``tracker reproduce allen2007``).
* ``inertia="full"`` (default) replaces the per-DOF inertia by the joint-space
  mass matrix, ``τ = M(q)(k̃_s e + k̃_d ė) + c`` with the same timed gains in
  acceleration units: a product, still no solve. The paper's per-DOF estimates
  (``"composite"``, eq. 5-7, and ``"single"``) are reproduced on the 2-link arm and
  on the humanoid at small steps; at the tool's usual 1/60-1/30 s they run away
  on the humanoid, so the default is the exact inertia (Allen et al. name the
  O(n³) simultaneous solution as the accurate alternative, §7).
* ``gravity_compensation`` (default on) adds the bias forces ``c(q, w)`` so that
  keys are met under gravity; the paper has none and notes that keys "may not
  be reached precisely". The 2-link reproduction runs without gravity, as the
  paper's examples do.
* The loop's gain schedule is ignored (the gains are computed); its torque
  limits clip, and a clipped DOF raises the "not strong enough" flag for the
  key being aimed at (:attr:`TimedPDController.weak`).

Keys come from a :class:`KeySource`: :class:`Keyframes` (fixed, timed poses) or
:class:`ClipKeys` (the reference a ``lookahead`` ahead, the paper's §5.3). After
a hit at ``t_c`` with ``tension = d`` seconds (§5.3.1), the key is the clip at
``t_c + d`` until that time, then tracking resumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

import numpy as np

from tracker.character.layout import Layout
from tracker.control.base import Gains, State, Target, actuation_mask
from tracker.control.lie import StepError
from tracker.control.registry import register
from tracker.errors import ConfigError

#: ``n`` for ``f = 0.9``: the number of time constants that remove 90 % of the error.
N_TIME_CONSTANTS = math.log(10.0)

Horizon = Literal["remaining", "segment", "constant"]
HORIZONS: tuple[str, ...] = ("remaining", "segment", "constant")
Integration = Literal["implicit", "explicit"]
INTEGRATIONS: tuple[str, ...] = ("implicit", "explicit")
InertiaModel = Literal["composite", "single", "full"]
INERTIAS: tuple[str, ...] = ("composite", "single", "full")
Hold = Literal["stable", "floor"]
HOLDS: tuple[str, ...] = ("stable", "floor")
#: ``t̂`` past the last key, in control steps, for ``hold="stable"``: stable for an inertia overestimate
#: ``r < 4.1`` (module notes).
HOLD_STEPS = 10.0
#: The paper's per-joint law (Allen et al. eq. 4-10), selected by ``law="paper"``.
PAPER_LAW: dict = {"inertia": "composite", "integration": "explicit", "compensation": True,
                   "gravity_compensation": False}


def timed_gains(m: np.ndarray | float, t_hat: float, f: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
    """Critically damped gains that remove the fraction ``f`` of an error in ``t_hat`` seconds.

    Args:
        m: moment(s) of inertia about the axes, kg·m² (``(n,)`` or scalar).
        t_hat: time to the keyframe, s (> 0).
        f: fraction of the error removed in ``t_hat``.

    Returns:
        ``(k_s, k_d)``: ``m/λ²`` N·m/rad and ``2m/λ`` N·m·s/rad with ``λ = t̂ / −ln(1−f)``.
    """
    lam = t_hat / -math.log(1.0 - f)
    m = np.asarray(m, dtype=float)
    return m / (lam * lam), 2.0 * m / lam


class Key(NamedTuple):
    """A physical keyframe: pose ``q`` ``(nq,)``, velocity ``v`` ``(nv,)``, time ``t`` (s).

    ``index`` numbers the keys of a :class:`Keyframes` (``-1`` for a clip's moving key);
    ``start`` is when the segment toward it began (the previous key's time), s.
    """

    q: np.ndarray
    v: np.ndarray
    t: float
    index: int
    start: float


class KeySource(Protocol):
    """Where the keyframes come from."""

    def next_key(self, t: float) -> Key:
        """The key to aim at from time ``t`` (the first one after ``t``; the last one once past it)."""
        ...


@dataclass(frozen=True, eq=False)
class Keyframes:
    """Fixed keyframes ``(q_k, v_k, t_k)``, times strictly increasing.

    Attributes:
        q: ``(K, nq)`` poses; v: ``(K, nv)`` velocities; t: ``(K,)`` times, s.
        names: ``K`` labels (for reports), optional.
    """

    q: np.ndarray
    v: np.ndarray
    t: np.ndarray
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        if t.ndim != 1 or len(t) == 0:
            raise ConfigError("keyframes: need at least one key time")
        if not np.isfinite(t).all():
            raise ConfigError("keyframes: key times must be finite")
        if (t < 0).any():
            raise ConfigError(f"keyframes: key {int(np.argmax(t < 0))} is at t = {t[t < 0][0]:g} s, before t = 0")
        d = np.diff(t)
        if (d <= 0).any():
            k = int(np.argmax(d <= 0)) + 1
            what = "at the same time as" if d[k - 1] == 0 else "before"
            raise ConfigError(f"keyframes: key {k} (t = {t[k]:g} s) is {what} key {k - 1} (t = {t[k - 1]:g} s); "
                              "keys must be in strictly increasing time")
        for name, a in (("q", self.q), ("v", self.v)):
            a = np.array(a, dtype=float)
            if a.ndim != 2 or a.shape[0] != len(t):
                raise ConfigError(f"keyframes: {name} must have one row per key, got shape {a.shape}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        t.setflags(write=False)
        object.__setattr__(self, "t", t)

    def next_key(self, t: float) -> Key:
        k = int(np.searchsorted(self.t, t + 1e-9, side="right"))
        k = min(k, len(self.t) - 1)
        start = float(self.t[k - 1]) if k > 0 else 0.0
        return Key(self.q[k], self.v[k], float(self.t[k]), k, start)


class ClipKeys:
    """Tracking a clip (Allen et al. §5.3): the key is the reference ``lookahead`` seconds ahead.

    Args:
        reference: anything with ``sample(t) -> (q, v)`` (a :class:`~tracker.retarget.reference.Reference`).
        lookahead: s, > 0; how far ahead the key is sampled (it sets the tracking stiffness).
    """

    def __init__(self, reference, lookahead: float) -> None:
        if not lookahead > 0:
            raise ConfigError(f"timed_pd lookahead must be > 0 s, got {lookahead!r}")
        self.reference = reference
        self.lookahead = float(lookahead)

    def next_key(self, t: float) -> Key:
        tk = t + self.lookahead
        q, v = self.reference.sample(tk)
        return Key(q, v, tk, -1, t)


@register("timed_pd")
class TimedPDController:
    """Allen et al. 2007's timed PD (module notes).

    Args:
        layout: the q/v layout.
        dynamics: provides ``joint_inertia(q)``, ``parent_compensation(tau, inertia)``
            and ``bias_forces(q, v)`` (:class:`~tracker.character.character.Character`,
            :class:`~tracker.sim.pendulum.TwoLinkPendulum`).
        keys: the keyframes; default: ``ClipKeys(reference, lookahead)``.
        reference: the clip the loop follows (used when ``keys`` is not given and for the tension key).
        lookahead: s, the key's distance ahead on a clip.
        horizon: ``"remaining"`` (time to the key), ``"segment"`` (the segment's length; ablation) or
            ``"constant"`` (``constant_time`` always: plain critically damped PD with fixed timing, the
            hand-tuned baseline of the paper's YMCA example).
        constant_time: s, ``t̂`` of ``horizon="constant"``.
        integration: ``"implicit"`` or ``"explicit"`` (module notes).
        inertia: ``"composite"`` (eq. 5-7), ``"single"`` (each joint's child link alone; ablation) or
            ``"full"``: full inverse dynamics, ``τ = M(q) (k̃_s e + k̃_d ė) + c`` with the same timing
            in acceleration units (the reference point of the paper's accuracy; no compensation needed).
        compensation: parent-torque compensation (eq. 8-10).
        gravity_compensation: add the bias forces ``c(q, w)``.
        tension: s; after a hit, aim at the clip this long after it (None: keep tracking).
        min_steps: floor of ``t̂`` in control steps.
        hold: past the last key: ``"stable"`` (``t̂`` = :data:`HOLD_STEPS` steps, or ``min_steps`` if more)
            or ``"floor"`` (``t̂`` = ``min_steps`` steps; the paper as written, diverges with the
            explicit law).
        law: ``"paper"`` sets :data:`PAPER_LAW` (overriding those four options); ``None`` keeps them.
        record: keep :attr:`gain_trace`, the stiffness every step (for the paper's Figs. 2 and 5).
        f: fraction of the error removed by the key time.
        passive: DOFs that get no force (e.g. a free root).
        target_velocity: ``"ref"`` (aim at the key's velocity) or ``"zero"``.
    """

    name = "timed_pd"

    def __init__(
        self,
        layout: Layout,
        dynamics,
        *,
        keys: KeySource | None = None,
        reference=None,
        lookahead: float = 0.02,
        horizon: Horizon = "remaining",
        constant_time: float = 0.1,
        integration: Integration = "implicit",
        inertia: InertiaModel = "full",
        compensation: bool = True,
        gravity_compensation: bool = True,
        tension: float | None = None,
        min_steps: float = 1.0,
        hold: Hold = "stable",
        law: str | None = None,
        record: bool = False,
        f: float = 0.9,
        passive: np.ndarray | None = None,
        target_velocity: str = "ref",
    ) -> None:
        if law is not None:
            if law != "paper":
                raise ConfigError(f"timed_pd law {law!r} is not one of: paper (or none)")
            inertia, integration = PAPER_LAW["inertia"], PAPER_LAW["integration"]
            compensation, gravity_compensation = PAPER_LAW["compensation"], PAPER_LAW["gravity_compensation"]
        for what, value, allowed in (("horizon", horizon, HORIZONS), ("integration", integration, INTEGRATIONS),
                                     ("inertia", inertia, INERTIAS), ("hold", hold, HOLDS), ("target_velocity", target_velocity,
                                                                      ("ref", "zero"))):
            if value not in allowed:
                raise ConfigError(f"timed_pd {what} {value!r} is not one of: {', '.join(allowed)}")
        if not 0.0 < f < 1.0:
            raise ConfigError(f"timed_pd f must be in (0, 1), got {f!r}")
        if not min_steps >= 1.0:
            raise ConfigError(f"timed_pd min_steps must be >= 1, got {min_steps!r}")
        if not constant_time > 0:
            raise ConfigError(f"timed_pd constant_time must be > 0 s, got {constant_time!r}")
        if tension is not None and not tension > 0:
            raise ConfigError(f"timed_pd tension must be > 0 s, got {tension!r}")
        if keys is None:
            if reference is None:
                raise ConfigError("timed_pd needs keyframes or a reference clip to follow")
            keys = ClipKeys(reference, lookahead)
        self.layout = layout
        self.dynamics = dynamics
        self.keys = keys
        self.reference = reference
        self.horizon, self.integration, self.inertia = horizon, integration, inertia
        self.constant_time = float(constant_time)
        self.compensation, self.gravity_compensation = bool(compensation), bool(gravity_compensation)
        self.tension = tension
        self.min_steps, self.f, self.hold = float(min_steps), float(f), hold
        #: ``(t, k_s (nv,))`` every step when ``record``: the stiffness in N·m/rad (for ``inertia="full"``
        #: the acceleration gain times ``M_kk``, the same units).
        self.gain_trace: list | None = [] if record else None
        self.target_velocity = target_velocity
        self.mask = actuation_mask(layout.nv, passive)
        self._step_error = StepError(layout)
        self._hold: Key | None = None  # the tension key after a hit
        self._impacts_seen = 0
        self._scenario = None
        #: key index (-1 for clip keys: the key time, rounded to 1 ms) -> joint names whose torque was clipped.
        self.weak: dict = {}
        #: The last key aimed at and its time remaining (for the window and reports).
        self.last_key: Key | None = None
        self.last_t_hat: float = math.nan

    # -- perturbation response (§5.3.1) -----------------------------------------------------------
    def bind(self, scenario) -> None:
        """Watch ``scenario.events`` (contacts: dicts with ``"t"``) for hits that start the tension response."""
        self._scenario = scenario

    def on_impact(self, t: float) -> None:
        """A hit at ``t``: aim at the clip at ``t + tension`` until then (no-op without tension)."""
        if self.tension is None or self.reference is None:
            return
        tk = t + self.tension
        q, v = self.reference.sample(tk)
        self._hold = Key(q, v, tk, -1, t)

    def _poll_impacts(self, t: float) -> None:
        events = getattr(self._scenario, "events", None)
        if not events or len(events) == self._impacts_seen:
            return
        new = events[self._impacts_seen:]
        self._impacts_seen = len(events)
        if self._hold is None or self._hold.t <= t:  # a hit during a response does not restart it
            self.on_impact(float(new[0]["t"]))

    def key_at(self, t: float) -> Key:
        """The key aimed at from time ``t``."""
        if self._scenario is not None:
            self._poll_impacts(t)
        if self._hold is not None:
            if t < self._hold.t - 1e-9:
                return self._hold
            self._hold = None
        return self.keys.next_key(t)

    # -- the servo --------------------------------------------------------------------------------
    def torques(self, state: State, target: Target, gains: Gains, dt: float) -> np.ndarray:
        """Generalized forces ``(nv,)`` for the step ``t_n -> t_n + dt`` (``t_n = target.t − dt``)."""
        q, v = state
        t = _target_time(target) - dt
        key = self.key_at(t)
        if self.horizon == "remaining":
            span = key.t - t
        elif self.horizon == "segment":
            span = key.t - key.start
        else:
            span = self.constant_time
        if self.hold == "stable" and key.index >= 0 and key.t <= t + 1e-9:  # past the last key: no deadline
            span = HOLD_STEPS * dt
        t_hat = max(span, self.min_steps * dt)
        v_err = (key.v - v) if self.target_velocity == "ref" else -np.asarray(v, dtype=float)
        if self.inertia == "full":
            ks, kd = timed_gains(1.0, t_hat, self.f)
            acc = self._pd(ks, kd, 1.0, key.q, q, v, v_err, dt)
            mass = self.dynamics.mass_matrix(q)
            tau = mass @ acc + self.dynamics.bias_forces(q, v)  # inverse dynamics
            if self.gain_trace is not None:
                self.gain_trace.append((t, ks * np.diag(mass).copy()))
        else:
            ji = self.dynamics.joint_inertia(q)
            m = ji.moment if self.inertia == "composite" else ji.own
            m = np.where(m > 0.0, m, 1e-12)
            ks, kd = timed_gains(m, t_hat, self.f)
            if self.gain_trace is not None:
                self.gain_trace.append((t, np.array(ks, dtype=float)))
            # The implicit law divides by the joint's own link inertia: a lower bound of the inertia it
            # moves when its neighbours move too (module notes).
            tau = self._pd(ks, kd, np.where(ji.own > 0.0, ji.own, 1e-12), key.q, q, v, v_err, dt)
            if self.compensation:
                tau = self.dynamics.parent_compensation(tau, ji)
            if self.gravity_compensation:
                tau = tau + self.dynamics.bias_forces(q, v)
        tau *= self.mask
        if gains.limited:
            clipped = np.abs(tau) > gains.tau_max
            if clipped.any():
                self._flag(key, clipped)
                np.clip(tau, -gains.tau_max, gains.tau_max, out=tau)
        self.last_key, self.last_t_hat = key, float(key.t - t)
        return tau

    def _pd(self, ks, kd, m, q_key, q, v, v_err, dt) -> np.ndarray:
        """The PD law, explicit or at each DOF's predicted next state (module notes)."""
        if self.integration == "implicit":
            return (ks * self._step_error(q_key, q, v, dt) + kd * v_err) / (1.0 + (kd * dt + ks * dt * dt) / m)
        return ks * self._step_error(q_key, q, v, 0.0) + kd * v_err

    def _flag(self, key: Key, clipped: np.ndarray) -> None:
        k = key.index if key.index >= 0 else round(key.t, 3)
        names = self.weak.setdefault(k, set())
        for s in self.layout.joints:
            if clipped[s.v].any():
                names.add(s.name)
        if clipped[: (6 if self.layout.has_base else 0)].any():
            names.add("root")


def _target_time(target: Target) -> float:
    t = getattr(target, "t", None)
    if t is None or not math.isfinite(t):
        raise ConfigError("timed_pd needs the loop to give the target's time (Target.t)")
    return float(t)
