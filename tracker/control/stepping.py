"""A recovery step for standing balance: when the capture point leaves the feet, step (issue 33, item 3).

**When.** The instantaneous capture point of the linear inverted pendulum (Pratt, Carff, Drakunov &
Goswami 2006, "Capture point: a step toward humanoid push recovery"),

    ξ = c + ċ / ω,   ω = √(g / c_z)       (horizontal components; c the centre of mass),

is where the centre of pressure would have to be for the CoM to come to rest over it. While it is
inside the feet's footprint (the convex hull of both soles' boxes, from the joint angles: the
contact polygon shrinks as a heel lifts, and stepping on that was measured to step where the
ankles would have recovered) the CoM feedback of :mod:`tracker.control.balance` may stop the body.
Outside, it may not: a chest push also turns the body, and the hips can still win, so whether to
step is decided by simulating ahead (:mod:`tracker.sim.recovery`): the character steps only when
standing still would fall, and takes the candidate step that does best.

**Where.** SIMBICON's foot placement (Yin, Loken & van de Panne 2007), ``θ_d = θ_d0 + c_d d + c_v v``,
with its gains from the pendulum: with the centre of pressure held at the stance sole ``p``, ξ leaves
it as ``ξ(t) = p + (ξ₀ − p) e^{ωt}``, so the reference landing point is the capture point predicted
at touch-down plus ``beyond`` m past it,

    L = ξ(T) + beyond · (ξ(T) − p)/|ξ(T) − p|     (c_d = e^{ωT}, c_v = e^{ωT}/ω on the CoM's offset from p),

recomputed each step until ``replan`` of the swing has passed. The look-ahead tries either foot and
offsets of ``offset`` m around L (a candidate is ``(foot, dx, dy)``). The swing sole stays on its own
side of the stance sole (the model's legs do not collide, so a crossover step would pass one leg
through the other); after a push from the side the loaded foot steps out, which people do too.

**How** (each piece measured in ``wip/recovery_step/NOTES.md`` on branch ``wip/recovery-step-3``):

* the swing ankle follows a path lifted ``lift`` m at mid-swing, over its target by ``horizontal``
  of the swing (the foot lags its target by ~10 cm at SPD's gains), by two-bone IK on the current
  pelvis (:func:`tracker.retarget.grounding.solve_leg`), the sole level; the stance leg keeps the
  reference (IK-ing it upright pushed the pelvis up and slid the stance foot);
* during the swing the CoM feedback is off and the weight is fed forward
  (``BalanceOptions(kp=0, kd=0, gravity=True)``): with the feedback on, the pull toward the single
  stance foot rolled and slid it 25 cm;
* a touch-down after ``touch`` of the swing ends it; the legs then hold the angles they landed with
  and the feedback returns, now over both feet.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.control.base import Target
from tracker.errors import ConfigError

G = 9.81  # m/s²


@dataclass(frozen=True)
class StepOptions:
    """Recovery-step settings (``tracker push --strategy step``).

    Attributes:
        swing_time: the planned swing, s.
        lift: the swing ankle's height above its straight path at mid-swing, m.
        horizontal: the fraction of the swing by which the ankle's target is over the landing point.
        beyond: the sole lands this far past the predicted capture point, m.
        max_reach: the landing point's largest horizontal distance from the swing hip, m.
        replan: the fraction of the swing after which the landing point is frozen.
        touch: the fraction of the swing after which a foot on the ground ends it.
        offset: the look-ahead's candidates lie this far apart around the reference landing point, m.
        horizon: how far the look-ahead simulates each candidate (and standing still), s.
        settle: no step in the run's first this many seconds (contacts settling), s.
        rest: no new step within this long of a touch-down, s.
    """

    swing_time: float = 0.25
    lift: float = 0.10
    horizontal: float = 0.6
    beyond: float = 0.05
    max_reach: float = 0.55
    replan: float = 0.6
    touch: float = 0.9
    offset: float = 0.05
    horizon: float = 3.0
    settle: float = 0.2
    rest: float = 0.3

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ConfigError(f"balance.step.{f.name} must be a finite number >= 0, got {value!r}")
        for name in ("swing_time", "max_reach", "horizon", "horizontal"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"balance.step.{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("horizontal", "replan", "touch"):
            if getattr(self, name) > 1:
                raise ConfigError(f"balance.step.{name} is a fraction of the swing, 0 to 1, got {getattr(self, name)!r}")


@dataclass
class StepEvent:
    """One recovery step (``tracker push``'s ``steps``).

    Attributes:
        foot: the swing foot. start: lift-off, s. land: touch-down, s (None if it did not).
        origin: ``(2,)`` the sole's centre before, m. target: ``(2,)`` where it was sent, m.
        landed_at: ``(2,)`` the sole's centre at touch-down, m (None if it did not land).
        capture_point: ``(2,)`` ξ at lift-off, m. candidate: ``(dx, dy)`` the look-ahead's offset, m.
    """

    foot: str
    start: float
    origin: np.ndarray
    target: np.ndarray
    capture_point: np.ndarray
    candidate: tuple[float, float] = (0.0, 0.0)
    land: float | None = None
    landed_at: np.ndarray | None = None

    def to_json(self) -> dict:
        r = lambda a: None if a is None else [round(float(x), 4) for x in a]  # noqa: E731
        return {"foot": self.foot, "start_s": round(self.start, 6),
                "land_s": None if self.land is None else round(self.land, 6),
                "from_m": r(self.origin), "target_m": r(self.target), "landed_m": r(self.landed_at),
                "capture_point_m": r(self.capture_point), "offset_m": r(self.candidate),
                "length_m": None if self.landed_at is None else
                round(float(np.linalg.norm(self.landed_at - self.origin)), 4)}


class RecoveryStep:
    """Takes a recovery step when told to (:meth:`begin`; :mod:`tracker.sim.recovery` decides) and
    holds the posture it lands in (module docstring).

    Args:
        character: :class:`tracker.character.character.Character`.
        options: :class:`StepOptions`.
        chains: foot link -> the actuated joints from the foot to the root, foot first
            (:func:`tracker.control.balance.leg_chains`): ankle, knee (a hinge), hip.
        balance: the simulation's :class:`~tracker.control.balance.BalanceFeedback`: its options are
            switched for the swing.
    """

    def __init__(self, character, options: StepOptions, chains: dict[str, tuple[str, ...]], balance) -> None:
        self.options = options
        self.kin = kin = character.model.kinematics()
        self.layout = lay = character.layout
        if tuple(s.name for s in kin.layout.joints) != tuple(s.name for s in lay.joints):
            raise ConfigError("recovery steps: the model's kinematics and its simulated joints differ")
        self.feet = tuple(chains)
        if len(self.feet) != 2:
            raise ConfigError(f"recovery steps need two feet, the model has {len(self.feet)}")
        self.chains: dict[str, tuple[str, str, str]] = {}
        for foot, joints in chains.items():
            if len(joints) != 3 or lay[joints[1]].kind != "revolute":
                raise ConfigError(f"recovery steps need legs of hip, knee (a hinge) and ankle; {foot!r} has "
                                  f"{', '.join(joints) or 'no joints'}")
            self.chains[foot] = (kin.joint_by_name[joints[2]].child, kin.joint_by_name[joints[1]].child, foot)
        self.limits = character.model.spherical_limits()
        pos, rot = kin.forward(character.model.standing_q())
        self.ankle_height = {f: float(pos[f][0, 2]) for f in self.feet}  # soles at z = 0 standing
        self.foot_zero = {f: rot[f][0] for f in self.feet}
        self.sole: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # centre, rotation, half-size
        for f in self.feet:
            boxes = [sh for sh in kin.shapes[f] if sh.kind == "box"]
            if not boxes:
                raise ConfigError(f"recovery steps need a box sole on foot {f!r}")
            sh = boxes[0]
            self.sole[f] = (np.asarray(sh.origin, float), np.asarray(sh.rotation, float), 0.5 * np.asarray(sh.size, float))
        self.balance = balance
        self.standing = balance.options
        self.swinging = dataclasses.replace(balance.options, kp=0.0, kd=0.0, gravity=True)
        self._leg_idx = {f: self._joint_indices(f, "q") for f in self.feet}
        self._legs_q = np.concatenate([self._leg_idx[f] for f in self.feet])  # both legs, as _with_legs sets them
        self._legs_v = np.concatenate([self._joint_indices(f, "v") for f in self.feet])
        self.reset()

    def reset(self, t: float = 0.0) -> None:
        """Forget the steps taken (a new run, starting at ``t`` s)."""
        self.t_start = float(t)
        self.quiet_until = -math.inf  # the look-ahead found standing still safe until then (tracker.sim.recovery)
        self.events: list[StepEvent] = []
        self.plan: dict | None = None  # the step under way
        self.hold: np.ndarray | None = None  # the legs' angles held after a landing
        self.balance.options = self.standing
        self.balance.pivot_feet = frozenset()

    # -- the look-ahead's view ----------------------------------------------------------------------
    def snapshot(self) -> dict:
        """The step's state (for :mod:`tracker.sim.snapshot`)."""
        return {"events": copy.deepcopy(self.events), "plan": copy.deepcopy(self.plan),
                "hold": None if self.hold is None else self.hold.copy(), "balance": self.balance.options,
                "quiet_until": self.quiet_until, "pivot": self.balance.pivot_feet}

    def restore(self, state: dict) -> None:
        self.quiet_until = state["quiet_until"]
        self.events = copy.deepcopy(state["events"])
        self.plan = copy.deepcopy(state["plan"])
        self.hold = None if state["hold"] is None else state["hold"].copy()
        self.balance.options = state["balance"]
        self.balance.pivot_feet = state["pivot"]

    def sole_corners(self, q: np.ndarray) -> np.ndarray:
        """``(8, 2)`` the corners of both soles' boxes on the ground at ``q`` (their hull is the footprint
        the look-ahead tests the capture point against: :func:`tracker.sim.recovery.footprint`)."""
        pos, rot = self.kin.forward(q)
        pts = []
        for f in self.feet:
            c, r, h = self.sole[f]
            for sx in (-1.0, 1.0):
                for sy in (-1.0, 1.0):
                    pts.append((pos[f][0] + rot[f][0].apply(c + r @ np.array([sx * h[0], sy * h[1], -h[2]])))[:2])
        return np.array(pts)

    @staticmethod
    def capture_point(com: np.ndarray, cdot: np.ndarray) -> np.ndarray:
        """ξ ``(2,)`` of the CoM ``com`` and its velocity ``cdot``."""
        omega = math.sqrt(G / max(float(com[2]), 0.1))
        return np.asarray(com[:2], float) + np.asarray(cdot[:2], float) / omega

    @property
    def busy(self) -> bool:
        """A step is under way."""
        return self.plan is not None

    # -- a step ---------------------------------------------------------------------------------------
    def begin(self, t: float, q: np.ndarray, com: np.ndarray, cdot: np.ndarray, foot: str,
              offset: tuple[float, float] = (0.0, 0.0)) -> None:
        """Lift ``foot`` now, toward the reference landing point moved by ``offset`` ``(dx, dy)`` m."""
        if foot not in self.feet:
            raise ConfigError(f"recovery step: no foot {foot!r} (feet: {', '.join(self.feet)})")
        pos, rot = self.kin.forward(q)
        stance = self.feet[1 - self.feet.index(foot)]
        xi = self.capture_point(com, cdot)
        sole = self._sole(foot, pos, rot)
        self.plan = {"swing": foot, "stance": stance, "t0": t, "a0": pos[foot][0].copy(),
                     "yaw": self._yaw(foot, rot[foot][0]), "offset": np.asarray(offset, float),
                     "sole_offset": pos[foot][0, :2] - sole}
        self.plan["land"] = self._landing(xi, com, self.options.swing_time, pos, rot)
        self.events.append(StepEvent(foot, t, sole, self.plan["land"].copy(), xi.copy(), tuple(float(x) for x in offset)))
        self.hold = None
        self.balance.options = self.swinging
        self.balance.pivot_feet = frozenset((stance,))  # held on its edge too while the other swings

    def update(self, t: float, q: np.ndarray, support, com: np.ndarray, cdot: np.ndarray, target: Target) -> Target:
        """The servo's target this step: ``target`` with the legs' angles replaced while a step is under
        way or held after one."""
        plan = self.plan
        if plan is None:
            return target if self.hold is None else self._with_legs(target, self.hold)
        opt = self.options
        s = (t - plan["t0"]) / opt.swing_time
        pos, rot = self.kin.forward(q)
        if s < opt.replan:
            plan["land"] = self._landing(self.capture_point(com, cdot), com, opt.swing_time * (1.0 - s), pos, rot)
            self.events[-1].target = plan["land"].copy()
        if (plan["swing"] in support.feet and s > opt.touch) or s > 2.0:  # touch-down (or given up)
            ev = self.events[-1]
            if plan["swing"] in support.feet:
                ev.land, ev.landed_at = t, self._sole(plan["swing"], pos, rot)
            self.plan, self.hold = None, q.copy()
            self.balance.options = self.standing
            self.balance.pivot_feet = frozenset(self.feet)
            return self._with_legs(target, self.hold)
        dt = target.t - t if math.isfinite(target.t) and target.t > t else 0.0
        now = self._swing_legs(s, q, target.q)
        if dt <= 0.0:
            return self._with_legs(target, now)
        nxt = self._swing_legs(s + dt / opt.swing_time, q, target.q)
        return self._with_legs(target, nxt, now, self.layout.difference(nxt, now) / dt)

    # -- geometry -------------------------------------------------------------------------------------
    def _yaw(self, foot: str, rot: Rotation) -> float:
        x = (rot * self.foot_zero[foot].inv()).apply([1.0, 0.0, 0.0])
        return math.atan2(x[1], x[0])

    def _sole(self, foot: str, pos, rot) -> np.ndarray:
        """The centre of ``foot``'s sole on the ground ``(2,)``, m."""
        c, r, h = self.sole[foot]
        return (pos[foot][0] + rot[foot][0].apply(c + r @ np.array([0.0, 0.0, -h[2]])))[:2]

    def _landing(self, xi: np.ndarray, com: np.ndarray, remaining: float, pos, rot) -> np.ndarray:
        """Where the swing sole lands: the pendulum's capture point at touch-down, ``beyond`` past it, the
        candidate's offset added, within ``max_reach`` of the swing hip (module docstring)."""
        opt, plan = self.options, self.plan
        p = self._sole(plan["stance"], pos, rot)
        omega = math.sqrt(G / max(float(com[2]), 0.1))
        xi_t = p + (xi - p) * math.exp(omega * max(remaining, 0.0))
        away = xi_t - p
        n = float(np.linalg.norm(away))
        land = xi_t + (opt.beyond * away / n if n > 1e-9 else 0.0) + plan["offset"]
        # the swing sole stays on its own side of the stance sole (the legs do not collide: no crossing)
        yaw = self._yaw(plan["stance"], rot[plan["stance"]][0])
        left = np.array([-math.sin(yaw), math.cos(yaw)])
        side = 1.0 if float(left @ (plan["a0"][:2] - pos[plan["stance"]][0, :2])) >= 0 else -1.0
        lateral = float(left @ (land - p))
        if side * lateral < 0.0:
            land = land - left * lateral
        hip = pos[self.chains[plan["swing"]][0]][0, :2]
        reach = land - hip
        r = float(np.linalg.norm(reach))
        return hip + reach * (opt.max_reach / r) if r > opt.max_reach else land

    def _swing_legs(self, s: float, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray:
        """The reference with the swing leg's angles at swing phase ``s`` (0 lift-off, 1 touch-down)."""
        from tracker.retarget.grounding import solve_leg

        opt, plan = self.options, self.plan
        swing = plan["swing"]
        u = min(max(s, 0.0), 1.0)
        h = min(u / opt.horizontal, 1.0)
        a0 = plan["a0"]
        a1 = np.append(plan["land"] + plan["sole_offset"], self.ankle_height[swing])
        ankle = a0 + (a1 - a0) * (h * h * (3.0 - 2.0 * h))
        ankle[2] += opt.lift * math.sin(math.pi * u)
        if s > 1.0:  # late: reach down for the ground
            ankle[2] -= 0.5 * (s - 1.0) * opt.lift
        legs = q[None].copy()
        level = Rotation.from_euler("z", plan["yaw"]) * self.foot_zero[swing]
        solve_leg(self.kin, legs, self.chains[swing], ankle[None], Rotation.from_quat(level.as_quat()[None]),
                  np.ones(1, dtype=bool), self.limits)
        out = q_ref.copy()
        idx = self._leg_idx[swing]
        out[idx] = legs[0, idx]
        return out

    def _joint_indices(self, foot: str, kind: str) -> np.ndarray:
        names = [self.kin.joint_by_child[k].name for k in self.chains[foot]]
        return np.concatenate([np.arange(getattr(self.layout[n], kind).start, getattr(self.layout[n], kind).stop)
                               for n in names])

    def _with_legs(self, target: Target, legs: np.ndarray, now: np.ndarray | None = None,
                   vel: np.ndarray | None = None) -> Target:
        """``target`` with both legs' angles from ``legs`` at ``t_{n+1}`` (``now`` at ``t_n``, default the
        same) and their velocities ``vel`` (default zero: a posture held)."""
        idx, vidx = self._legs_q, self._legs_v
        now = legs if now is None else now
        q1, v1 = target.q.copy(), target.v.copy()
        q1[idx] = legs[idx]
        v1[vidx] = 0.0 if vel is None else vel[vidx]
        q0 = v0 = None
        if target.q_now is not None:
            q0 = target.q_now.copy()
            q0[idx] = now[idx]
        if target.v_now is not None:
            v0 = target.v_now.copy()
            v0[vidx] = 0.0 if vel is None else vel[vidx]
        return target._replace(q=q1, v=v1, q_now=q0, v_now=v0)
