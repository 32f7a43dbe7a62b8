"""Static balance by centre-of-mass feedback through the Jacobian transpose (GAMES105, lecture 10).

While the joints track a standing pose (SPD), a *virtual* horizontal force on the
centre of mass pulls its ground projection toward the centre of the support polygon::

    f = kp (c̄ − c) − kd ċ        (horizontal components; c̄ the target, ċ = J_c v)

and is realised by joint torques of equal power, ``fᵀ ċ = τᵀ v``.

**Floating base.** The root is not actuated, so ``τ = J_cᵀ f`` over all of ``v`` would ask
for a root wrench nobody supplies. What the joints can do is push against a foot that
stays put: with a stance foot fixed, ``J_f v = 0`` for its spatial Jacobian
``J_f = [J_f,r | J_f,a]`` (root columns ``r``, joint columns ``a``), so the root velocity
follows the joints, ``v_r = −J_f,r⁻¹ J_f,a v_a``, and the CoM moves with

    ċ = J̃ v_a,   J̃ = J_c,a − J_c,r J_f,r⁻¹ J_f,a,

whence ``τ_a = J̃ᵀ f`` (``f · ċ = τ_a · v_a`` for every motion that keeps the foot in
place; ``tests/control/test_balance.py`` checks it). ``J_f,r`` is always invertible (it is
``[[I, −[x_f − P]×], [0, I]]``). This is the slide's "path from the stance foot to the
pelvis", whose joints turn against the tree's parent → child direction: ``J̃`` gets that
sign right by construction rather than by flipping axes. In double support ``f`` is split
equally between the feet in contact, each foot's share mapped through its own ``J̃``.

**Strategies** (``strategy``): which joints of each stance leg carry ``J̃ᵀ f``:
``jacobian`` every joint from the feet to the root (ankles, knees, hips), ``ankle`` the
ankles only and ``hip`` the hips only (the lecture's two simple baselines, with the same
virtual force). Joints off the stance legs (arms, spine) get nothing: they keep tracking.

**Planted feet in SPD's prediction.** On a free root SPD's implicit solve predicts a body in
free fall: a joint's error seems to be corrected by swinging the light limb below it (the
foot about the ankle, the shin about the knee), so a stiff servo gives almost none of the
torque that holds the body up, and an added balance torque is absorbed the same way (the
acceleration changes by ``(M + K)⁻¹ τ_b``, not ``M⁻¹ τ_b``). Measured on the authored stance
at 1/60 s: it sinks and tips over 1.1 s after release, with or without feedback. So the
feedback also hands SPD the stance feet as constraints of its prediction
(``SPDController.torques(..., constraints=)``, solved by :func:`solve_constrained`): the
vertical velocity of every contact point is held at zero, unilaterally (the ground only
pushes; a point that would have to pull is dropped), so a sole flat on the ground is held
level and one on its toe edge may pivot about it. The servo then sees the body's inertia
behind the ankles, knees and hips, holds the weight, and the balance torque moves the body
instead of the feet. (Holding the soles' sliding and spin too closes the loop between the
two legs, whose stiff servos then fight through it: it halved the survived push.) This needs the engine's contacts to be
complete from the first step: PyBullet adds one contact point per box per step, so the run
starts by settling the manifolds (:meth:`tracker.sim.world.World.settle_contacts`).

A held point the engine does not hold is worse than none: the prediction then counts on the
ground to take the ankle servo's torque, the stiff servo's force goes out explicitly, and the
light foot (1 kg, 0.001 kg·m² about its long axis) spins up in a step or two (the free-root CMU
walk reached PyBullet's 100 rad/s clamp at 0.05 s). So the rows are the contacts the next step
will use: the support is read after a fresh collision detection
(:func:`tracker.sim.support.support_of`; after a step PyBullet's points are where the feet touched
at its start), a foot the engine touches on a point or an edge only is not a stance foot
(:data:`PLANTED_AREA`), and a body that also lies on another link (it
fell) has none. With torque limits the contact set is fixed while the limits are solved
(:meth:`tracker.control.spd.SPDController._limit`): re-choosing it inside every pass made the two
active sets chase each other.

The torque is added inside SPD's right-hand side (``SPDController.torques(..., extra=)``),
so the implicit solve sees it. Without a foot on the ground there is nothing to push
against and the feedback is zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tracker.arrays import frozen
from tracker.character.jacobians import _com_and_points
from tracker.character.rigid_body import _jit, _kernel_input
from tracker.control.contact_solve import (Contacts, _ones, held_contacts,  # noqa: F401  (re-exported)
                                           solve_constrained)
from tracker.errors import ConfigError

Strategy = Literal["jacobian", "ankle", "hip"]
STRATEGIES: tuple[str, ...] = ("jacobian", "ankle", "hip")
BalanceTarget = Literal["support_center", "initial"]
TARGETS: tuple[str, ...] = ("support_center", "initial")

#: Defaults for our 70 kg humanoid. The lecture gives no number for this force: its slide on the CoM
#: feedback says the gains "need to tune manually". (The "k_p = 200, k_d = 20 for a 50kg character"
#: of an earlier slide are *joint-servo* gains, ``τ = k_p(q̄ − q) − k_d q̇`` in N·m/rad, the same kind as
#: our model's 100-1000 N·m/rad with k_d = 0.1 k_p; they say nothing about a force on the CoM in N/m.)
#: Ours were tuned by measurement: the stiff SPD servos resist the feedback, so the CoM settles where
#: the feedback force balances the servos' deflection: 3.3 cm ahead of the support centre with
#: kp = 1000 N/m, 1.7 cm with 2000, 0.8 cm with 4000 (the authored stance, 5 s at 1/60 s;
#: docs/games105.md, "Balance gain"). 4000 N/m (a 1 cm error -> 40 N, 6 % of the weight) keeps that
#: under 1 cm; kd = 0.1 kp s (time constant 0.1 s) keeps the CoM from overshooting.
DEFAULT_KP = 4000.0
DEFAULT_KD = 400.0


@dataclass(frozen=True)
class BalanceOptions:
    """Balance feedback settings (the experiment YAML's ``controller.balance``).

    Attributes:
        enabled: add the feedback.
        kp: N/m on the horizontal CoM error.
        kd: N·s/m on the horizontal CoM velocity.
        target: ``support_center`` (the support polygon's centroid, as the lecture) or
            ``initial`` (the CoM's ground projection when the run starts).
        strategy: ``jacobian``, ``ankle`` or ``hip`` (see the module docstring).
        gravity: add the static torques that hold the body's weight on the stance contacts
            (:func:`gravity_torques`): SPD then needs no position error to carry the body, and a
            free-root character no longer sags by ``τ/kp`` at every leg joint.
        constraints: hand the stance contacts to SPD's prediction (the module docstring). False
            leaves the servo's prediction in free fall, to measure what the feedback does without
            them (``docs/games105.md``, the standing table); ``kp = kd = 0`` with ``constraints``
            measures the constraints without the feedback.
    """

    enabled: bool = True
    kp: float = DEFAULT_KP
    kd: float = DEFAULT_KD
    target: str = "support_center"
    strategy: str = "jacobian"
    gravity: bool = False
    constraints: bool = True
    step: object | None = None  # a tracker.control.stepping.StepOptions: recovery steps (tracker push --strategy step)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"balance strategy {self.strategy!r} is not one of: {', '.join(STRATEGIES)}")
        if self.target not in TARGETS:
            raise ConfigError(f"balance target {self.target!r} is not one of: {', '.join(TARGETS)}")
        for name in ("kp", "kd"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ConfigError(f"balance {name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class BalanceTerm:
    """One step's feedback, for recording and drawing.

    Attributes:
        tau: ``(nv,)`` generalized force added to the servo's.
        force: ``(3,)`` the virtual force on the CoM, N (z = 0).
        com: ``(3,)`` the CoM, m. com_velocity: ``(3,)`` m/s. target: ``(2,)`` m.
        constraints: the stance feet's contacts SPD's prediction holds (:class:`Contacts`), or None
            without contact.
    """

    tau: np.ndarray
    force: np.ndarray
    com: np.ndarray
    com_velocity: np.ndarray
    target: np.ndarray
    constraints: Contacts | None = None


class BalanceFeedback:
    """Maps the CoM error to joint torques through the stance feet's ``J̃ᵀ``.

    Args:
        character: anything with ``layout``, ``model.feet``, ``com_jacobian(q)``,
            ``point_jacobian(link, q=q)`` and the leg chains (:func:`leg_chains`), e.g.
            :class:`tracker.character.character.Character`.
        options: :class:`BalanceOptions`.
        chains: foot link -> the actuated joints from that foot to the root, foot first
            (default: read from ``character``).
    """

    def __init__(self, character, options: BalanceOptions, chains: dict[str, tuple[str, ...]] | None = None) -> None:
        self.character = character
        self.options = options
        self.layout = lay = character.layout
        chains = chains if chains is not None else leg_chains(character)
        self.chains = chains
        picked: list[str] = []
        for foot, joints in chains.items():
            if not joints:
                raise ConfigError(f"foot {foot!r} has no actuated joint between it and the root")
            picked += {"jacobian": joints, "ankle": joints[:1], "hip": joints[-1:]}[options.strategy]
        # Every foot's J̃ over the joints of all legs: in double support a motion that keeps both feet
        # still moves both legs, and only the full columns keep fᵀ ċ = τᵀ v for such motions.
        cols = np.unique(np.concatenate([np.arange(lay[j].v.start, lay[j].v.stop) for j in picked]))
        self.columns: dict[str, np.ndarray] = {foot: cols for foot in chains}
        # legs are usually one block of v: a slice indexes it without copies (this runs every step)
        contiguous = len(cols) and cols[-1] - cols[0] + 1 == len(cols)
        self._cols = slice(int(cols[0]), int(cols[-1]) + 1) if contiguous else cols
        self._colmask = np.zeros(lay.nv, dtype=np.bool_)
        self._colmask[cols] = True
        self.initial_target: np.ndarray | None = None
        #: feet that count as stance feet on an edge too (two contact points or more): a recovery step's
        #: stance foot and the feet it landed on (tracker.control.stepping)
        self.pivot_feet: frozenset[str] = frozenset()
        self._zero_v = np.zeros(lay.nv)
        self._stance: dict[tuple[tuple[str, ...], int], tuple[str, ...]] = {}  # (feet on the ground, stance_mask) -> stance feet
        # the compiled one-call path needs a tracker.character.Character's kernels
        self._direct = hasattr(character, "jacobian_kernel_input")

    def reset(self, q: np.ndarray) -> None:
        """Remember the CoM's ground projection at the start (``target: initial``)."""
        self.initial_target = np.array(self.character.com_jacobian(q)[0][:2])

    def target_of(self, support) -> np.ndarray:
        """The ground point ``(2,)`` the CoM is pulled toward."""
        if self.options.target == "initial" and self.initial_target is not None:
            return self.initial_target
        return np.asarray(support.center, dtype=float)

    def term(self, q: np.ndarray, v: np.ndarray, support) -> BalanceTerm:
        """The feedback at state ``(q, v)`` over ``support`` (:class:`tracker.sim.support.Support`)."""
        # Fallen (a hand, a knee, the pelvis on the ground too): the feet are not the body's support,
        # and a prediction that held them alone would be missing the contacts that are. (Measured with
        # an earlier rule set, the free-root kick lying on the ground spun a wrist to the speed clamp
        # 4 s after the fall; with the final rules the kick's wrist peaks at 82 rad/s with this, 76
        # without: no divergence either way.)
        stance = 0 if support.others else stance_mask(support)
        if self.pivot_feet and not support.others:
            for i, f in enumerate(support.feet):
                if f in self.pivot_feet and np.count_nonzero(support.foot_of_point == i) >= 2:
                    stance |= 1 << i
        key = (support.feet, stance)
        feet = self._stance.get(key)
        if feet is None:  # the feet on the ground that can be stance feet (cached: this runs every step)
            feet = self._stance[key] = tuple(f for i, f in enumerate(support.feet)
                                             if f in self.columns and stance >> i & 1)
        # the kernels' inputs always of one kind (writable, or read-only as the support's arrays):
        # numba compiles a signature per combination, seconds each on a cold cache
        v = _kernel_input(v, self.layout.nv, "v")
        if not self.options.enabled or not feet:
            c, jc = self.character.com_jacobian(q)
            return BalanceTerm(np.zeros(self.layout.nv), np.zeros(3), c, jc @ v,
                               np.full(2, np.nan) if support.empty else self.target_of(support))
        target = np.array(self.target_of(support), dtype=float)  # a fresh writable (2,)
        if len(feet) == len(support.feet):  # every foot on the ground is a stance foot (the usual case)
            pts, pfoot = support.points, support.foot_of_point
        else:
            remap = np.array([feet.index(f) if f in feet else -1 for f in support.feet], dtype=np.int64)
            pfoot = remap[support.foot_of_point]
            keep = pfoot >= 0
            pts, pfoot = frozen(support.points[keep], float), frozen(pfoot[keep], np.int64)
        kp, kd = float(self.options.kp), float(self.options.kd)
        direct = self.character.jacobian_kernel_input(feet) if self._direct else None
        if direct is not None:  # one compiled call: kinematics, Jacobians and the feedback
            tree, bodies = direct
            c, tau, force, cdot, jac = _term_kernel(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv,
                                                    bodies, v, kp, kd, target, self._colmask, pts, pfoot)
        else:
            c, jc, xf, jlf, jaf = self.character.com_and_point_jacobians(feet, q)
            tau, force, cdot, jac = _feedback(c, jc, xf, jlf, jaf, v, kp, kd, target, self._colmask, pts, pfoot)
        contacts = Contacts(jac, _ones(len(jac)), pfoot) if self.options.constraints else None
        if self.options.gravity:
            tau = tau + gravity_torques(self.character.bias_forces(q, self._zero_v), jac)
        return BalanceTerm(tau, force, c, cdot, target, contacts)

    def torques(self, q: np.ndarray, v: np.ndarray, support) -> np.ndarray:
        """``(nv,)`` the generalized force to add to the servo's."""
        return self.term(q, v, support).tau


def gravity_torques(g: np.ndarray, jac: np.ndarray) -> np.ndarray:
    """The joint torques ``(nv,)`` (0 on the root's six) that hold a body still on its contacts.

    Statics of ``M a + g = τ + Jᵀ λ`` at ``a = 0`` with no root force: the contact forces ``λ ≥ 0``
    (vertical, one per row of ``jac``, ``(k, nv)``, the root's six columns first) must carry the
    root's rows of the gravity force ``g`` ``(nv,)``, ``J_rᵀ λ = g_r`` (the weight and its moments:
    solvable while the CoM is over the contacts); the joints then need ``τ_j = g_j − J_jᵀ λ``.
    Of the many ``λ`` (eight sole corners, three equations) the least-norm one, which spreads the
    weight over the points and changes smoothly as they come and go; when it would pull on a point
    (the CoM near the support's edge), non-negative least squares instead: then, and with the CoM
    outside the contacts' span, ``λ`` is the closest support the ground can give and the root's rest
    is left to the servos (the body tips, as it would). (Non-negative least squares alone picks a
    corner solution that jumps between points from step to step: the authored stance fell at 1/60 s.)
    """
    tau = np.zeros_like(g)
    if len(jac) == 0:
        return tau
    a = jac[:, :6].T
    lam = np.linalg.lstsq(a, g[:6], rcond=1e-10)[0]
    if lam.min() < 0.0:
        from scipy.optimize import nnls

        lam = nnls(np.ascontiguousarray(a), g[:6])[0]
    tau[6:] = g[6:] - jac[:, 6:].T @ lam
    return tau


#: A foot is a stance foot while its contact points span a triangle of at least this area (m²):
#: the sole flat on the ground (a box sole's corners span 100 times this). On one point or an edge
#: (a heel or toe edge, a sole rolling onto its side, PyBullet's transient first or last manifold
#: points) the ground holds no moment about that point or line and the foot rolls about it; held
#: in SPD's prediction it hands the stiff ankle servo the body's weight through the corner, and on
#: the free-root walks the ankles spun up to 85-88 rad/s with single points held, 47-67 rad/s with
#: edges held (twice the 38 rad/s without balance); with this rule 35-37 rad/s.
PLANTED_AREA = 1e-4


def stance_mask(support, min_area: float = PLANTED_AREA) -> int:
    """Which of ``support.feet`` (:class:`tracker.sim.support.Support`) can be stance feet: bit ``i`` set
    when foot ``i``'s contact points span a triangle of at least ``min_area`` m² (the sole flat)."""
    mask = 0
    for i in range(len(support.feet)):
        if _largest_triangle(support.points, support.foot_of_point == i) >= min_area:
            mask |= 1 << i
    return mask


@_jit
def _largest_triangle(pts, sel):
    """The largest ground-plane triangle area, m², of the points ``pts`` ``(k, 3)`` where ``sel`` ``(k,)``
    (0 with fewer than three, or all on a line)."""
    idx = np.flatnonzero(sel)
    m = idx.shape[0]
    best = 0.0
    for a in range(m):
        ax, ay = pts[idx[a], 0], pts[idx[a], 1]
        for b in range(a + 1, m):
            bx, by = pts[idx[b], 0] - ax, pts[idx[b], 1] - ay
            for c in range(b + 1, m):
                area = 0.5 * abs(bx * (pts[idx[c], 1] - ay) - by * (pts[idx[c], 0] - ax))
                if area > best:
                    best = area
    return best


def contact_rows(character, q: np.ndarray, v: np.ndarray, dt: float, contacts) -> Contacts | None:
    """SPD's prediction rows of the character's contacts with static geometry other than its feet.

    A falling or lying body rests on a hand, a knee, the pelvis; a servo whose prediction does not
    see such a contact plans its torques for a body in free fall, and the engine's contact then
    acts on the light link behind the servo's back (the free-root grid of
    ``tests/sim/test_fall_never_diverges.py``: wrists at 96-100 rad/s after falls). Each contact point
    becomes one unilateral row along its normal, held at the velocity level: the point's normal
    velocity after the step, ``n·J (v + a dt)``, is at least ``−max(gap, 0)/dt`` (a point still
    ``gap`` m away may come that close; one touching or inside may not approach further, and the
    engine's push out of a penetration is not counted on), so an approaching hand is stopped within
    the step and a resting one held; a row that would have to pull is dropped (:func:`solve_constrained`).
    No friction: rows holding sliding are equalities the engine's bounded friction does not keep
    (measured with sticking rows at these contacts too: 147 of the grid's 216 runs diverged). The
    rows are the servo's view; the engine's solve also holds the joints at its prediction while
    they act (:meth:`tracker.sim.world.World.hold_velocities`).

    Args:
        character: :class:`tracker.character.character.Character` (``jacobian_kernel_input`` or
            ``com_and_point_jacobians``, ``link_name``).
        q, v: the state ``(nq,)``, ``(nv,)``.
        dt: the control step, s.
        contacts: :class:`tracker.sim.support.GroundContacts` (links, points, normals, gaps), or None.

    Returns:
        :class:`Contacts` with one row per point, groups ``-1, -2, ...``, or None without contacts.
    """
    if contacts is None or not len(contacts.links):
        return None
    links, which = np.unique(np.asarray(contacts.links, dtype=np.int64), return_inverse=True)
    names = tuple(character.link_name(int(k)) for k in links)
    v = _kernel_input(v, len(v), "v")
    direct = character.jacobian_kernel_input(names) if hasattr(character, "jacobian_kernel_input") else None
    if direct is not None:
        tree, bodies = direct
        _, _, xs, jl, ja = _com_and_points(tree.itab, tree.ftab, _kernel_input(q, tree.nq, "q"), tree.nv, bodies)
    else:
        _, _, xs, jl, ja = character.com_and_point_jacobians(names, q)
    rows, goal = _normal_rows(xs, jl, ja, which.astype(np.int64), np.ascontiguousarray(contacts.points, dtype=float),
                              np.ascontiguousarray(contacts.normals, dtype=float),
                              np.ascontiguousarray(contacts.gaps, dtype=float), v, float(dt))
    m = len(rows)
    return Contacts(rows, _ones(m), frozen(-1 - np.arange(m), np.int64), frozen(goal, float))


@_jit
def _normal_rows(xs, jl, ja, which, points, normals, gaps, v, dt):
    """``(rows (m, nv), goal (m,))`` of :func:`contact_rows`: each point's normal velocity row
    ``nᵀ J_lin + (d × n)ᵀ J_ang`` (``d`` from its link's centre of mass) and the acceleration that
    stops its approach."""
    m, nv = points.shape[0], jl.shape[2]
    rows = np.empty((m, nv))
    goal = np.empty(m)
    for t in range(m):
        g = which[t]
        n0, n1, n2 = normals[t, 0], normals[t, 1], normals[t, 2]
        d0, d1, d2 = points[t, 0] - xs[g, 0], points[t, 1] - xs[g, 1], points[t, 2] - xs[g, 2]
        c0, c1, c2 = d1 * n2 - d2 * n1, d2 * n0 - d0 * n2, d0 * n1 - d1 * n0
        vn = 0.0
        for k in range(nv):
            r = (n0 * jl[g, 0, k] + n1 * jl[g, 1, k] + n2 * jl[g, 2, k]
                 + c0 * ja[g, 0, k] + c1 * ja[g, 1, k] + c2 * ja[g, 2, k])
            rows[t, k] = r
            vn += r * v[k]
        goal[t] = (-max(gaps[t], 0.0) / dt - vn) / dt
    return rows, goal


def tilde_jacobian(character, q: np.ndarray, foot: str, cols: np.ndarray, jc: np.ndarray | None = None) -> np.ndarray:
    """``J̃ = J_c,a − J_c,r J_f,r⁻¹ J_f,a`` ``(3, len(cols))``: the CoM velocity per joint velocity
    in ``cols`` while ``foot`` stays fixed (root columns 0..5).

    With the root's columns ``J_f,r = [[I, −[x_f − P]×], [0, I]]`` and ``J_c,r = [I, −[c − P]×]``
    (``P`` the base's centre of mass) this is ``J_c,a − J_f,a + (c − x_f) × J_ω,a`` column by
    column: the CoM's velocity relative to the foot point with the foot's rotation taken out.
    :class:`BalanceFeedback` uses that form; this one solves, as the derivation reads.
    """
    if jc is None:
        jc = character.com_jacobian(q)[1]
    _, jl, ja = character.point_jacobian(foot, q=q)
    jf = np.vstack([jl, ja])
    return jc[:, cols] - jc[:, :6] @ np.linalg.solve(jf[:, :6], jf[:, cols])


def leg_chains(character) -> dict[str, tuple[str, ...]]:
    """Foot link -> actuated joints from the foot up to the root, foot first (e.g. ankle, knee, hip)."""
    parent_of = character._parent_link
    joint_of = {child: joint for joint, child in character._child_of_joint.items()}
    base = character.link_names[0]
    out = {}
    for foot in character.model.feet:
        joints, link = [], foot
        while link != base:
            j = joint_of[link]
            if j in character.layout:
                joints.append(j)
            link = parent_of[link]
        out[foot] = tuple(joints)
    return out


@_jit
def _feedback(c, jc, xf, jlf, jaf, v, kp, kd, target, colmask, pts, pfoot):
    """The per-step arithmetic of :meth:`BalanceFeedback.term`, compiled (it is ~40 small numpy
    operations otherwise, more than the step's physics): ``(tau, force, cdot, contact rows)``."""
    nv = jc.shape[1]
    nf = xf.shape[0]
    cdot = np.zeros(3)
    for i in range(3):
        acc = 0.0
        for k in range(nv):
            acc += jc[i, k] * v[k]
        cdot[i] = acc
    force = np.zeros(3)
    force[0] = kp * (target[0] - c[0]) - kd * cdot[0]
    force[1] = kp * (target[1] - c[1]) - kd * cdot[1]
    f0, f1, f2 = force[0] / nf, force[1] / nf, force[2] / nf
    tau = np.zeros(nv)
    for g in range(nf):
        # J̃ᵀ f in closed form (see tilde_jacobian): (J_c,a − J_f,a)ᵀ f + J_ω,aᵀ (f × (c − x_f))
        r0, r1, r2 = c[0] - xf[g, 0], c[1] - xf[g, 1], c[2] - xf[g, 2]
        m0, m1, m2 = f1 * r2 - f2 * r1, f2 * r0 - f0 * r2, f0 * r1 - f1 * r0
        for k in range(nv):
            if colmask[k]:
                tau[k] += ((jc[0, k] - jlf[g, 0, k]) * f0 + (jc[1, k] - jlf[g, 1, k]) * f1
                           + (jc[2, k] - jlf[g, 2, k]) * f2 + jaf[g, 0, k] * m0 + jaf[g, 1, k] * m1
                           + jaf[g, 2, k] * m2)
    # the ground pushes up at each contact point, never pulls: their vertical velocities
    n = pts.shape[0]
    rows = np.empty((n, nv))
    for t in range(n):
        g = pfoot[t]
        d0, d1 = pts[t, 0] - xf[g, 0], pts[t, 1] - xf[g, 1]
        for k in range(nv):
            rows[t, k] = jlf[g, 2, k] - d0 * jaf[g, 1, k] + d1 * jaf[g, 0, k]
    return tau, force, cdot, rows


@_jit
def _term_kernel(itab, ftab, q, nv, bodies, v, kp, kd, target, colmask, pts, pfoot):
    """:func:`tracker.character.jacobians.com_and_point_jacobians` and :func:`_feedback` in one call
    (one dispatch instead of two, no Jacobians handed back): ``(c, tau, force, cdot, contact rows)``."""
    com, jc, xs, jl, ja = _com_and_points(itab, ftab, q, nv, bodies)
    tau, force, cdot, rows = _feedback(com, jc, xs, jl, ja, v, kp, kd, target, colmask, pts, pfoot)
    return com, tau, force, cdot, rows
