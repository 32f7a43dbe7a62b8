"""The tracking cost of a rollout: pose, root, end effectors and balance, as SAMCON scores samples.

Liu et al. 2010 score a simulated segment against the clip by four terms (their §4.2), which we
take over, each a mean over the window's steps of a squared error:

* ``pose``: mean over joints of the squared joint error (geodesic angle for spherical joints), rad²;
* ``root``: squared root orientation error (geodesic angle, rad²) plus squared root position error (m²);
* ``end_effector``: mean over the model's end effectors of their squared world position error, m²;
* ``balance``: squared horizontal error of the centre of mass *relative to the feet's midpoint*
  (the simulated one against the clip's), m²: what keeps a character over its support.

To these we add, as the public PyBullet reimplementation of SAMCON does (its CoM term holds the CoM's
velocity), a fifth:

* ``velocity``: squared error of the root's linear velocity (world frame), m²/s²: a sample that
  ends where the clip is but slower or faster is in trouble a segment later. (Added for the Bandai
  walk, whose kept samples fall behind the clip; it did not save that walk, and on the CMU walk
  weight 0 tracks better: ``docs/samcon.md``, ``--weights velocity=0``.)

and two of ours:

* ``ball``: for each ball whose config gives an ``exit_speed`` (the search launches the config's balls
  in its rollouts), at the window's end: 1 if the ball's first contact was on another link than its
  target, or if the planned impact is :data:`~tracker.sampling.ball_cost.GRACE` s past and the target
  has not touched it; once it has, the exit speed's error relative to the wanted one (at most 1).
  From :data:`~tracker.sampling.ball_cost.LEAD` s before the impact until then, an untouched ball
  scores the target's aim point's gap to it over :data:`~tracker.sampling.ball_cost.REACH` (at most
  1): the search sees a kick come closer before it connects. Earlier windows score 0, and a miss
  keeps scoring in every later window, as a fall does.
  Weight 10: a missed ball costs about as much as tracking 0.3 rad worse for the window.
* ``contact``: the share of (step, foot) pairs whose ground contact differs from the clip's (the
  reference's contact labels, :attr:`~tracker.retarget.reference.Reference.contacts`, against the
  engine's foot contacts after the step; :class:`~tracker.sampling.rollout.FootContactReader`), in
  [0, 1]. A swing foot that scuffs the floor or strikes early costs nothing in the other terms while
  it happens (the joints are where the clip's are, a centimetre above the floor), yet it shortens
  the step, and every later segment pays for the lag. 0 for a reference without labels (a DeepMimic
  file, keyframes). Weight 0 by default: on the Bandai walk weight 2 halved the mismatches but not
  the lag (``docs/samcon.md``, "Why they drift").

``pose``, ``root`` and ``velocity`` are means over every step of the window; ``end_effector`` and ``balance``
are taken at the window's last step, the state a SAMCON segment hands on (Liu et al. score a
sample by its end state), because they need forward kinematics (about 2 ms a frame here, against
0.5-1 ms a simulation step); the clip's side of them is computed once per time and cached.

The total is ``Σ w_k · term_k``. A rollout whose free root fell (root below ``fall_height`` of the
clip's) adds ``fall`` per fallen step's share, so any standing sample beats any fallen one.
The weights are ours (the papers' are for other characters and units): pose and root 10, end
effectors 4, balance 10, so that a rollout that tracks to 0.1 rad and 0.1 m root pays as much for
them as for 0.15 m end-effector and 0.1 m balance errors, and velocity 1. With pose and root at 1
the kept samples crouched and drifted (the CMU walk replayed 0.18 rad, 0.21 m, on one physics step
per control step); at 10, with velocity 0 and ``--selection spread``, it replays at 0.093 rad,
0.108 m on sound contacts (``docs/samcon.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.analysis.metrics import joint_errors


@dataclass(frozen=True)
class CostWeights:
    """Weights of the cost terms (module docstring)."""

    pose: float = 10.0
    root: float = 10.0
    end_effector: float = 4.0
    balance: float = 10.0
    velocity: float = 1.0
    contact: float = 0.0
    ball: float = 10.0
    fall: float = 100.0


TERMS = ("pose", "root", "end_effector", "balance", "velocity", "contact", "ball")


class TrackingCost:
    """Scores simulated states against the clip's for one model.

    Args:
        model: the character model (its kinematics, end effectors and feet).
        weights: :class:`CostWeights`.
    """

    def __init__(self, model, weights: CostWeights | None = None) -> None:
        self.weights = weights or CostWeights()
        self.kin = model.kinematics()
        self.layout = self.kin.layout
        links = list(self.kin.links)
        self.end_effectors = [link for link in dict(model.end_effectors).values() if link in links]
        self.feet = [f for f in model.feet if f in links]
        self._masses = np.array([self.kin.masses[link] for link in links])
        self._links = links
        self._ref_cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}
        self._frames = [Rotation.from_matrix(j.rotation).as_quat() for j in self.kin.joints]
        self._qslices = [self.layout[j.name].q if j.kind != "fixed" else None for j in self.kin.joints]
        # the same constants as Python floats for _forward (the joints' frames, origins and axes)
        self._joint_consts = [(j, tuple(frame.tolist()), qs, tuple(np.asarray(j.origin, float).tolist()),
                               tuple(np.asarray(j.axis, float).tolist()) if j.kind == "revolute" else None)
                              for j, frame, qs in zip(self.kin.joints, self._frames, self._qslices)]
        self._link_consts = [(link, m, tuple(np.asarray(self.kin.inertial_origin[link], float).tolist()))
                             for link, m in zip(links, self._masses.tolist())]
        self._root_origin = tuple(np.asarray(self.kin.inertial_origin[self.kin.root], float).tolist())
        self._mass = self._masses.sum()

    def forward(self, q: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """Link frame origins (link -> ``(3,)`` m) and the centre of mass ``(3,)`` of one state ``(nq,)``.

        The same frames as :meth:`tracker.character.kinematics.Kinematics.forward` (a test pins it),
        by plain quaternion products on Python floats (:meth:`_forward`): about 60x faster for one state
        than its batched scipy form.
        """
        pos, com = self._forward(q)
        return {link: np.array(p) for link, p in pos.items()}, com

    def _forward(self, q: np.ndarray) -> tuple[dict[str, tuple], np.ndarray]:
        """:meth:`forward` with the origins as tuples. Python float arithmetic throughout: the same IEEE
        operations in the same order as on numpy scalars (bit for bit), at a fraction of their cost;
        the root's norm, ``sin`` and ``cos`` are numpy's, as they were."""
        kin = self.kin
        qf = q.tolist()
        rot = {kin.root: tuple(_unit(q[3:7]).tolist())}
        x = _rotate(rot[kin.root], self._root_origin)
        pos = {kin.root: (qf[0] - x[0], qf[1] - x[1], qf[2] - x[2])}
        for j, frame, qs, origin, axis in self._joint_consts:
            pr, pp = rot[j.parent], pos[j.parent]
            if j.kind == "spherical":
                local = qf[qs]
            elif j.kind == "revolute":
                half = 0.5 * qf[qs][0]
                s, c = float(np.sin(half)), float(np.cos(half))
                local = (axis[0] * s, axis[1] * s, axis[2] * s, c)
            else:
                local = _IDENTITY
            x = _rotate(pr, origin)
            pos[j.child] = (pp[0] + x[0], pp[1] + x[1], pp[2] + x[2])
            rot[j.child] = _qmul(_qmul(pr, frame), local)
        cx = cy = cz = 0  # sum()'s start, as before
        for link, m, io in self._link_consts:
            p, x = pos[link], _rotate(rot[link], io)
            cx, cy, cz = cx + m * (p[0] + x[0]), cy + m * (p[1] + x[1]), cz + m * (p[2] + x[2])
        return pos, np.array([cx, cy, cz]) / self._mass

    def _points(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(end effectors (E, 3), CoM minus the feet's midpoint (3,))`` of one state ``(nq,)``."""
        pos, com = self._forward(q)
        ee = np.array([pos[e] for e in self.end_effectors]).reshape(-1, 3)
        rel = com - (np.mean([pos[f] for f in self.feet], axis=0) if self.feet else 0.0)
        return ee, rel

    def _ref_points(self, q_ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key = q_ref.tobytes()
        hit = self._ref_cache.get(key)
        if hit is None:
            if len(self._ref_cache) > 100_000:
                self._ref_cache.clear()
            hit = self._ref_cache[key] = self._points(q_ref)
        return hit

    def terms(self, q: np.ndarray, q_ref: np.ndarray, v: np.ndarray | None = None,
              v_ref: np.ndarray | None = None, contact_mismatch: np.ndarray | None = None) -> dict[str, float]:
        """The terms for states ``q`` ``(N, nq)`` against ``q_ref`` ``(N, nq)`` (module docstring); the
        velocity term needs the velocities ``v``, ``v_ref`` ``(N, nv)`` (0 without them or a fixed base),
        the contact term whether each foot's contact differs from the clip's ``(N, F)`` bool (0 without)."""
        q, q_ref = np.atleast_2d(q), np.atleast_2d(q_ref)
        vel = 0.0
        if v is not None and v_ref is not None and self.layout.has_base:
            dv = np.atleast_2d(v)[:, 0:3] - np.atleast_2d(v_ref)[:, 0:3]
            vel = float((dv ** 2).sum(axis=1).mean())
        pose = float((joint_errors(self.layout, q, q_ref) ** 2).mean())
        root = 0.0
        if self.layout.has_base:
            ang = (Rotation.from_quat(q_ref[:, 3:7]).inv() * Rotation.from_quat(q[:, 3:7])).magnitude()
            root = float((ang ** 2 + ((q[:, 0:3] - q_ref[:, 0:3]) ** 2).sum(axis=1)).mean())
        ee_s, rel_s = self._points(q[-1])
        ee_r, rel_r = self._ref_points(q_ref[-1])
        ee = float(((ee_s - ee_r) ** 2).sum(axis=1).mean()) if len(ee_s) else 0.0
        bal = float(((rel_s - rel_r)[:2] ** 2).sum()) if self.feet else 0.0
        contact = 0.0
        if contact_mismatch is not None and np.size(contact_mismatch):
            contact = float(np.mean(contact_mismatch))
        return {"pose": pose, "root": root, "end_effector": ee, "balance": bal, "velocity": vel, "contact": contact}

    def total(self, terms: dict[str, float], fallen_share: float = 0.0) -> float:
        """``Σ w_k · term_k`` plus the fall penalty times the share of fallen steps."""
        w = self.weights
        return float(w.pose * terms["pose"] + w.root * terms["root"] + w.end_effector * terms["end_effector"]
                     + w.balance * terms["balance"] + w.velocity * terms.get("velocity", 0.0)
                     + w.contact * terms.get("contact", 0.0) + w.ball * terms.get("ball", 0.0)
                     + w.fall * fallen_share)


_IDENTITY = (0.0, 0.0, 0.0, 1.0)


def _unit(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=float) / np.linalg.norm(a)


def _qmul(a, b) -> tuple[float, float, float, float]:
    """Hamilton product of two xyzw quaternions (scalar arithmetic: numpy's per-call cost dominates at this size)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + bw * ax + ay * bz - az * by, aw * by + bw * ay + az * bx - ax * bz,
            aw * bz + bw * az + ax * by - ay * bx, aw * bw - ax * bx - ay * by - az * bz)


def _rotate(a, x) -> tuple[float, float, float]:
    """``x`` rotated by the unit xyzw quaternion ``a``: ``x + w t + u × t`` with ``t = 2 u × x``."""
    ux, uy, uz, w = a
    x0, x1, x2 = x
    t0, t1, t2 = 2.0 * (uy * x2 - uz * x1), 2.0 * (uz * x0 - ux * x2), 2.0 * (ux * x1 - uy * x0)
    return (x0 + w * t0 + uy * t2 - uz * t1, x1 + w * t1 + uz * t0 - ux * t2, x2 + w * t2 + ux * t1 - uy * t0)
