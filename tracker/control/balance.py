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

The torque is added inside SPD's right-hand side (``SPDController.torques(..., extra=)``),
so the implicit solve sees it. Without a foot on the ground there is nothing to push
against and the feedback is zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tracker.errors import ConfigError

Strategy = Literal["jacobian", "ankle", "hip"]
STRATEGIES: tuple[str, ...] = ("jacobian", "ankle", "hip")
BalanceTarget = Literal["support_center", "initial"]
TARGETS: tuple[str, ...] = ("support_center", "initial")

#: Defaults for our 70 kg humanoid. The slide's kp = 200 N/m, kd = 20 N·s/m "for a 50 kg
#: character" sits on top of a soft tracking servo; ours tracks the stance with the model's
#: stiff SPD gains, which resist the feedback, so the CoM settles where the feedback force
#: balances the servos' deflection: 3.3 cm ahead of the support centre with kp = 1000 N/m,
#: 1.7 cm with 2000, 0.8 cm with 4000 (the authored stance, 30 s at 1/60 and 1/30 s, same
#: numbers at both). 4000 N/m (a 1 cm error -> 40 N, 6 % of the weight) keeps that under 1 cm;
#: the survived push changes little between 2000 and 8000 (docs/games105.md). kd = 0.1 kp s
#: (time constant 0.1 s) keeps the CoM from overshooting.
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
    """

    enabled: bool = True
    kp: float = DEFAULT_KP
    kd: float = DEFAULT_KD
    target: str = "support_center"
    strategy: str = "jacobian"

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
class Contacts:
    """Velocity constraints of the stance feet for SPD's prediction (:func:`solve_constrained`).

    Attributes:
        jac: ``(k, nv)`` rows: each contact point's vertical velocity (the sole may slide or
            spin in the prediction: holding that too closes the loop between the two legs, whose
            stiff servos then fight through it; measured, it halves the survived push).
        unilateral: ``(k,)`` True on the contact-normal rows (the ground only pushes).
        group: ``(k,)`` the foot (index into the support's feet) of each row.
    """

    jac: np.ndarray
    unilateral: np.ndarray
    group: np.ndarray


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
        self.initial_target: np.ndarray | None = None

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
        nv = self.layout.nv
        feet = [f for f in support.feet if f in self.columns]
        c, jc, xf, jlf, jaf = self.character.com_and_point_jacobians(feet, q)
        cdot = jc @ v
        tau = np.zeros(nv)
        force = np.zeros(3)
        if not self.options.enabled or not feet:
            return BalanceTerm(tau, force, c, cdot, np.full(2, np.nan) if not feet else self.target_of(support))
        target = self.target_of(support)
        force[:2] = self.options.kp * (target - c[:2]) - self.options.kd * cdot[:2]
        share = force / len(feet)
        cols = self._cols
        # J̃ᵀ f in closed form (see tilde_jacobian), each foot's share: (J_c,a − J_f,a)ᵀ f + J_ω,aᵀ (f × (c − x_f))
        r = c[None, :] - xf  # (feet, 3)
        fxr = np.cross(share, r)  # (feet, 3)
        tau[cols] = (len(feet) * jc[:, cols] - jlf[:, :, cols].sum(axis=0)).T @ share \
            + np.einsum("fik,fi->k", jaf[:, :, cols], fxr)
        rows, group = [], []
        fop = support.foot_of_point
        for g, foot in enumerate(feet):
            x_foot, jl, ja = xf[g], jlf[g], jaf[g]
            pts = support.points[fop == support.feet.index(foot)]
            # the ground pushes up at each contact point, never pulls: their vertical velocities
            d = pts - x_foot
            rows.append(jl[2][None, :] - d[:, 0:1] * ja[1][None, :] + d[:, 1:2] * ja[0][None, :])
            group += [g] * len(pts)
        jac = np.vstack(rows)
        contacts = Contacts(jac, np.ones(len(jac), dtype=bool), np.array(group))
        return BalanceTerm(tau, force, c, cdot, target, contacts)

    def torques(self, q: np.ndarray, v: np.ndarray, support) -> np.ndarray:
        """``(nv,)`` the generalized force to add to the servo's."""
        return self.term(q, v, support).tau


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


def solve_constrained(a_mat: np.ndarray, rhs: np.ndarray, jac: "np.ndarray | Contacts", unilateral: np.ndarray | None = None,
                      group: np.ndarray | None = None, max_iter: int = 8) -> tuple[np.ndarray, int]:
    """``a`` with ``A a = rhs + Jᵀ λ`` and ``J a = 0`` on the active rows (``A`` SPD ``(n, n)``, ``J`` ``(k, n)``).

    The Schur complement with one Cholesky factorisation: ``λ = −(J A⁻¹ Jᵀ)⁻¹ J A⁻¹ rhs`` (with a
    tiny ridge, so dependent rows, e.g. four coplanar contact normals, are fine). Rows marked
    ``unilateral`` (contact normals) may only push, ``λ >= 0``: the most negative is dropped and
    the solve repeated (an active set); when a group (a foot) has no unilateral row left, its
    other rows (friction) are dropped too. ``A`` is overwritten.

    Returns:
        ``(a, info)``; ``info != 0``: ``A`` is not positive definite.
    """
    from scipy.linalg.lapack import dposv

    if isinstance(jac, Contacts):
        jac, unilateral, group = jac.jac, jac.unilateral, jac.group
    k = jac.shape[0]
    b = np.empty((a_mat.shape[0], k + 1))
    b[:, 0] = rhs
    b[:, 1:] = jac.T
    _, sol, info = dposv(a_mat, b, lower=0, overwrite_a=1, overwrite_b=1)
    if info != 0:
        return rhs, info
    a_free, ainv_jt = sol[:, 0], sol[:, 1:]
    full = jac @ ainv_jt
    target = -(jac @ a_free)
    active = np.ones(k, dtype=bool)
    uni = np.zeros(k, dtype=bool) if unilateral is None else np.asarray(unilateral, dtype=bool)
    lam = np.zeros(k)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        s = full[np.ix_(idx, idx)] if len(idx) < k else full.copy()
        s.flat[::len(idx) + 1] += 1e-10 * max(float(np.trace(s)) / len(idx), 1e-300)  # a ridge
        lam[:] = 0.0
        _, sol_l, info_l = dposv(s, target[idx], lower=0, overwrite_a=1, overwrite_b=0)
        lam[idx] = sol_l if info_l == 0 else np.linalg.lstsq(s, target[idx], rcond=1e-12)[0]
        bad = uni & active & (lam < 0.0)
        if not bad.any():
            break
        worst = int(np.flatnonzero(bad)[np.argmin(lam[bad])])
        active[worst] = False
        if group is not None:
            g = group[worst]
            if not (active & uni & (group == g)).any():
                active[group == g] = False
    else:
        lam[~active] = 0.0
    return a_free + ainv_jt @ lam, 0
