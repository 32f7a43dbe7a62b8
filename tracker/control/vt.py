"""Virtual-trajectory control: a feed-forward ``f0`` plus a soft SPD that yields to contact.

The virtual-trajectory paper (``virtual_trajectory_lcp``, Fig. 1) splits a step
in two. Step 1 computes the generalized force ``f0`` that would move the
actuated DOFs at the desired velocity ``w0`` for one step; step 2 simulates
with a PD around the reference plus ``f0``. ``f0`` carries the motion, so the
PD gains only set how the character gives way when something pushes back
(``../shared/CONTROLLERS.md`` §5). In reduced coordinates, with ``h = dt``,
``M = M(q)``, ``c = c(q, v)`` and ``w0`` the reference velocity at
``t_{n+1}``:

``id`` (reduced inverse dynamics, no contacts)::

    a0 = (w0 − v) / h                       on the actuated DOFs
    M_PP a0_P = −(M_PA a0_A + c_P)          passive DOFs (a free root) move freely
    f0 = M a0 + c,  f0_P = 0

``peek`` (one saved and restored engine step, contacts included): the id force
is applied for one engine step from a ``saveState``; the velocity ``v'`` it
reaches reveals the generalized force of everything the reduced model leaves
out (contacts, balls, the desk), ``g = M (v' − v)/h + c − f_id``; ``f0`` is
then the id solve with ``c − g`` in place of ``c``, so the feed-forward also
pushes through the contacts the peek met. The engine state is then restored
(bit-identical: ``tests/control/test_vt.py``). In free space ``g`` is zero to
rounding and ``peek`` equals ``id``. The engine side of the peek is a :class:`Peek`
handed in by whoever owns the engine (the simulation gives a
:class:`tracker.sim.peek.EnginePeek`), so this module stays pure numpy. The paper enforces ``w0`` with velocity
constraints inside the LCP instead; PyBullet's spherical-joint velocity
motors do not enforce their target (1.5 rad/s off after one step on our
humanoid, welded and without gravity), so the correction is measured rather
than constrained.

``lcp`` (the paper's own method, :mod:`tracker.control.vt_lcp`): both steps are solved with the
contacts, each as one mixed LCP (:mod:`tracker.control.lcp`) stated by the engine adapter
(a :class:`ContactEngine`; the desk scene has one): step 1's joint rows are equalities
``w = w0`` whose forces are ``f0``, step 2's are the PD with offset ``f0``, and its joint forces are
the torque. ``step1="own"`` lets step 1 see only the character's own contacts.

Otherwise step 2 is the project's semi-implicit SPD with ``f0`` added to its implicit
right-hand side (:meth:`SPDController.torques` ``extra=``). If the state lies
on a reference that the integrator reproduces (``q̄ = q ⊕ w0·h``), the SPD
part is zero and the motion is independent of ``K`` and ``D``.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import numpy as np

from tracker.character.layout import Layout
from tracker.control.base import Dynamics, Gains, State, Target, TargetVelocity
from tracker.control.registry import register
from tracker.control.spd import Prediction, SPDController
from tracker.control.vt_lcp import ContactProblem, VTStep, vt_step
from tracker.errors import ConfigError

#: How the feed-forward force is computed.
F0Mode = Literal["id", "peek", "lcp", "none"]
F0_MODES: tuple[str, ...] = ("id", "peek", "lcp", "none")
#: Which contacts ``lcp``'s step 1 sees: all of the world's, or the character's own (and the
#: support of the bodies it touches), not those between two other bodies.
STEP1_SCOPES: tuple[str, ...] = ("all", "own")
#: After the gate says a peek is needed, peek this many more steps before asking it again.
GATE_HOLD = 4
#: Which reference velocity at ``t_{n+1}`` is ``w0``.
W0Mode = Literal["step", "sample"]
W0_MODES: tuple[str, ...] = ("step", "sample")


class Peek(Protocol):
    """One engine step taken and undone, as ``f0 = "peek"`` needs it (:class:`tracker.sim.peek.EnginePeek`)."""

    #: a rewind lent by the simulation loop while it owns the world (None: save and restore every peek).
    rewind: Any

    def velocity_after_step(self, tau: np.ndarray) -> np.ndarray:
        """The body's ``v`` ``(nv,)`` after one control step under ``tau``; the world is then restored."""

    def may_act(self, dt: float) -> bool:
        """Whether anything can push the body during the next step (conservative)."""


class ContactEngine(Protocol):
    """The world one step ahead as an LCP, as ``f0 = "lcp"`` needs it
    (:class:`tracker.scenes.desk_contacts.DeskContacts`)."""

    def contact_problem(self, dt: float) -> ContactProblem:
        """The character, the bodies nearby and the contact rows now (:class:`ContactProblem`)."""


class _OneStepCache:
    """``mass_matrix`` / ``bias_forces`` of the current step, computed once for f0 and SPD.

    Returns the stored values when asked again for the very same ``q`` (and ``v``) arrays.
    """

    def __init__(self, dynamics: Dynamics) -> None:
        self.dynamics = dynamics
        self._q = self._v = None
        self._m = self._c = None

    def set(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self._q, self._v = q, v
        self._m = self.dynamics.mass_matrix(q)
        self._c = self.dynamics.bias_forces(q, v)
        return self._m, self._c

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return self._m if q is self._q else self.dynamics.mass_matrix(q)

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self._c if (q is self._q and v is self._v) else self.dynamics.bias_forces(q, v)


@register("vt")
class VTController:
    """``tau = f0 + SPD(K, D)`` (virtual-trajectory control).

    Args:
        layout: the q/v layout.
        dynamics: ``mass_matrix(q)`` and ``bias_forces(q, v)`` in ``v``'s order.
        target_velocity: SPD's velocity target, ``"ref"`` or ``"zero"``.
        prediction: SPD's next-state prediction (default ``semi_implicit``).
        passive: DOFs without servo or feed-forward force (bool ``(nv,)`` or indices).
        f0: ``"id"`` (default), ``"peek"``, ``"lcp"`` (both steps solved with the contacts as one MLCP
            each, :mod:`tracker.control.vt_lcp`; needs a :class:`ContactEngine`; torque limits are not
            applied) or ``"none"`` (plain SPD, for comparisons).
        step1: for ``lcp``: the contacts step 1 sees, ``"all"`` (default) or ``"own"``
            (:meth:`ContactProblem.only_character`); step 2 always sees all.
        w0: ``"step"`` (default): ``w0 = (q̄_{n+1} ⊖ q̄_n) / dt``, the velocity at
            ``t_{n+1}`` that carries the reference from ``t_n`` to ``t_{n+1}`` under
            PyBullet's symplectic Euler (needs ``target.q_now``; without it ``sample`` is
            used): free motion then follows the reference's positions whatever the gains,
            mocap jitter included; ``"sample"``: the reference's own velocity at ``t_{n+1}``,
            ``target.v`` (at k_t = 2.5/kg, mean joint error with ``sample`` against ``step``:
            Bandai walk 0.024 vs 0.0032 rad, CMU kick 0.011 vs 0.0019, Bandai punch 0.030 vs
            0.0055; on the CMU walk, whose stance foot meets the ground, 0.016 vs 0.018;
            ``tracker reproduce vt``). Either way SPD's
            velocity target is ``w0`` too, so the PD acts around the same virtual trajectory.
        gate: for ``peek``: skip the peek in steps where nothing can touch the character
            (:meth:`_engine_may_act`; the skipped peek's force would be zero to rounding). Once
            it says a peek is needed, the next ``GATE_HOLD`` steps peek without asking. Off with
            ``substeps > 1`` (then a peek is not zero in free air: it corrects id over the substeps).
        engine: for ``peek``: the engine's :class:`Peek` at the simulated body (the simulation
            hands a :class:`tracker.sim.peek.EnginePeek`, whose ``substeps`` are the control step's).
        root: the simulation's root mode; ``peek`` refuses ``kinematic`` (the base is
            re-set to the reference every step, so a peeked step says nothing about it).
        substeps: physics steps per control step: SPD's prediction spans them, and ``peek``
            takes all of them (the control step the real one will be), not one physics step.

    Raises:
        ConfigError: unknown ``f0`` mode; ``peek`` without an engine or with a kinematic root.
    """

    name = "vt"

    def __init__(
        self,
        layout: Layout,
        dynamics: Dynamics,
        *,
        target_velocity: TargetVelocity = "ref",
        prediction: Prediction = "semi_implicit",
        passive: np.ndarray | None = None,
        f0: F0Mode = "id",
        w0: W0Mode = "step",
        gate: bool = True,
        engine: Peek | None = None,
        root: str | None = None,
        substeps: int = 1,
        step1: str = "all",
    ) -> None:
        if f0 not in F0_MODES:
            raise ConfigError(f"controller vt: f0 mode {f0!r} is not one of: {', '.join(F0_MODES)}")
        if w0 not in W0_MODES:
            raise ConfigError(f"controller vt: w0 mode {w0!r} is not one of: {', '.join(W0_MODES)}")
        if f0 == "peek":
            if root == "kinematic":
                raise ConfigError("controller vt: f0 'peek' needs a simulated root (root anchored or free), "
                                  "not 'kinematic'")
            if engine is None:
                raise ConfigError("controller vt: f0 'peek' needs the simulated character (a PyBullet body)")
        if f0 == "lcp" and not hasattr(engine, "contact_problem"):
            raise ConfigError("controller vt: f0 'lcp' needs an engine that states the contacts as an LCP "
                              "(contact_problem; the desk scene's DeskContacts)")
        if step1 not in STEP1_SCOPES:
            raise ConfigError(f"controller vt: step1 {step1!r} is not one of: {', '.join(STEP1_SCOPES)}")
        self.layout = layout
        self.f0_mode = f0
        self.w0_mode = w0
        self._cache = _OneStepCache(dynamics)
        self.spd = SPDController(layout, self._cache, target_velocity=target_velocity,
                                 prediction=prediction, passive=passive, substeps=substeps)
        self.dynamics = dynamics
        self.mask = self.spd.mask
        self._passive = np.flatnonzero(self.mask == 0.0)
        self._active = np.flatnonzero(self.mask != 0.0)
        #: the last feed-forward force ``(nv,)`` (for recording and tests).
        self.last_f0 = np.zeros(layout.nv)
        #: peek only when the engine can add a force this step (``False``: every step). With
        #: substeps a peek also corrects id's M and c held over the physics steps, which is not
        #: zero in free air, so there every step peeks.
        self.gate = bool(gate) and int(substeps) == 1
        #: steps peeked and steps skipped by the gate.
        self.peeks = self.skips = 0
        self._gate_hold = 0  # steps to peek without asking the gate
        self._engine = engine if f0 in ("peek", "lcp") else None
        self.step1 = step1
        #: the last step's two MLCP solves (``lcp`` only).
        self.last_lcp: VTStep | None = None
        self._zero_v = np.zeros(layout.nv)

    def feedforward(self, q: np.ndarray, v: np.ndarray, w0: np.ndarray, dt: float,
                    m: np.ndarray, c: np.ndarray, tau_max: np.ndarray | None = None) -> np.ndarray:
        """Reduced inverse dynamics ``f0`` ``(nv,)`` driving the actuated DOFs to ``w0`` in one step.

        Args:
            q, v: the state; ``w0`` ``(nv,)`` the desired velocity at ``t_{n+1}``; ``dt`` s.
            m, c: ``M(q)`` ``(nv, nv)`` and the bias force to compensate ``(nv,)``.
            tau_max: torque limits ``(nv,)``. ``f0`` is affine in the demanded acceleration
                (``f0(s) = f0(0) + s (f0(1) − f0(0))`` for the acceleration ``s·(w0 − v)/dt``), so
                where a joint's ``f0`` would exceed its limit the whole demand is scaled by the
                largest ``s <= 1`` that fits, rather than clipping that joint alone: the root's
                share (an unlimited wrench) then still agrees with what the joints can do.
        """
        f1 = self._inverse_dynamics((np.asarray(w0, dtype=float) - v) / dt, m, c)
        if tau_max is None or not np.isfinite(tau_max).any():
            return f1
        lim = np.isfinite(tau_max) & (self.mask != 0.0)
        if np.all(np.abs(f1[lim]) <= tau_max[lim]):
            return f1
        f0 = self._inverse_dynamics(np.zeros_like(v, dtype=float), m, c)
        d = f1 - f0
        s = 1.0
        for k in np.flatnonzero(lim & (np.abs(f1) > tau_max)):
            if abs(f0[k]) >= tau_max[k]:
                s = 0.0
                break
            bound = (np.sign(d[k]) * tau_max[k] - f0[k]) / d[k]  # where f0 + s·d meets the limit
            s = min(s, max(bound, 0.0))
        return f0 + s * d

    def _inverse_dynamics(self, a: np.ndarray, m: np.ndarray, c: np.ndarray) -> np.ndarray:
        """``M a + c`` with the passive DOFs' accelerations solved so that their force is zero."""
        a = np.array(a, dtype=float)
        if self._passive.size:
            pa, ac = self._passive, self._active
            rhs = -(m[np.ix_(pa, ac)] @ a[ac] + c[pa])
            a[pa] = np.linalg.solve(m[np.ix_(pa, pa)], rhs)
        f0 = m @ a
        f0 += c
        if self._passive.size:
            f0[self._passive] = 0.0
        return f0

    def _peek(self, q: np.ndarray, v: np.ndarray, f_id: np.ndarray, dt: float) -> np.ndarray:
        """Generalized environment force ``g`` ``(nv,)`` seen by one saved-and-restored step under ``f_id``."""
        v1 = self._engine.velocity_after_step(f_id)
        m, c = self._cache._m, self._cache._c
        return m @ ((v1 - v) / dt) + c - f_id

    def use_rewind(self, rewind) -> None:
        """Let ``peek`` go back by a :class:`~tracker.sim.state.Rewind` (None: save and restore every peek).

        The simulation loop lends one while it alone steps the world and records every step.
        """
        if self._engine is not None:
            self._engine.rewind = rewind

    def report(self) -> dict:
        """Counts for the recording's meta: steps peeked and skipped by the gate."""
        return {"vt_peeks": self.peeks, "vt_peek_skips": self.skips} if self.f0_mode == "peek" else {}

    def _gate_open(self, dt: float) -> bool:
        """Peek this step? The gate is asked only :data:`GATE_HOLD` steps after it last said yes.

        Peeking is never wrong, only dearer; asking costs a quarter of a peek on the humanoid
        (link speeds, distances), and where it said yes (a foot near the ground) it says yes again
        in the next steps, so it is not asked then.
        """
        if self._gate_hold > 0:
            self._gate_hold -= 1
            return True
        if self._engine_may_act(dt):
            self._gate_hold = GATE_HOLD
            return True
        return False

    def _engine_may_act(self, dt: float) -> bool:
        """Whether the engine can push the character during the next step (:meth:`Peek.may_act`)."""
        return self._engine.may_act(dt)

    def torques(self, state: State, target: Target, gains: Gains, dt: float) -> np.ndarray:
        """``f0 + SPD`` generalized forces ``(nv,)`` for the step ``t_n -> t_n + dt``."""
        q, v = state
        w0 = self.desired_velocity(target, dt)
        m, c = self._cache.set(q, v)
        if self.f0_mode == "lcp":
            return self._lcp_torques(q, target, w0, gains, dt)
        if self.f0_mode == "none":
            f0 = None
            self.last_f0 = np.zeros(self.layout.nv)
        else:
            lim = gains.tau_max if gains.limited else None
            f0 = self.feedforward(q, v, w0, dt, m, c, lim)
            if self.f0_mode == "peek":
                if not self.gate or self._gate_open(dt):
                    self.peeks += 1
                    g = self._peek(q, v, f0, dt)
                    f0 = self.feedforward(q, v, w0, dt, m, c - g, lim)
                else:
                    self.skips += 1
            self.last_f0 = f0
        q_now, v_now = (target[2], target[3]) if len(target) > 3 else (None, None)
        return self.spd.torques(State(q, v), Target(target[0], w0, q_now, v_now), gains, dt, extra=f0)

    def _lcp_torques(self, q: np.ndarray, target: Target, w0: np.ndarray, gains: Gains, dt: float) -> np.ndarray:
        """Step 1 and step 2 solved with the engine's contacts (:func:`~tracker.control.vt_lcp.vt_step`)."""
        world = self._engine.contact_problem(dt)
        seen = world.only_character() if self.step1 == "own" else world
        e = self.layout.difference(np.asarray(target[0], dtype=float), q)
        last = self.last_lcp
        warm = (last.step1.x, last.step2.x) if last is not None else (None, None)
        res = vt_step(world, self._active, w0, e, np.asarray(gains.kp), np.asarray(gains.kd), dt,
                      step1=seen, warm=warm)
        self.last_lcp = res
        self.last_f0 = res.f0
        return res.tau

    def desired_velocity(self, target: Target, dt: float) -> np.ndarray:
        """``w0`` ``(nv,)``: the reference velocity at ``t_{n+1}`` (see ``w0`` in the class docstring)."""
        q_now = target[2] if len(target) > 2 else None  # a Target, or a plain (q, v) pair
        if self.w0_mode == "step" and q_now is not None:
            # q̄_{n+1} ⊖ q̄_n: SPD's vectorised step error with zero velocity (no Rotation objects)
            return self.spd._step_error(target[0], q_now, self._zero_v, 0.0) / dt
        return np.asarray(target[1], dtype=float)

