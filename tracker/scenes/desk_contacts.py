"""The desk scene one step ahead as a :class:`~tracker.control.vt_lcp.ContactProblem` (vt's ``f0 = lcp``).

The engine adapter between PyBullet and the LCP of :mod:`tracker.control.vt_lcp`. The scene is
planar (the arm's hinges and the boxes' sliding all lie in the desk's plane), so the problem's
generalized velocities are the arm's three hinge rates, then ``(vx, vy, ωz)`` of each box:

* mass: ``M(q)`` of the arm (PyBullet's ``calculateMassMatrix``), ``diag(m, m, Izz)`` per box;
* force: ``−c(q, v)`` on the arm, nothing on the boxes in the plane (gravity is normal to it);
* contact rows from ``getClosestPoints`` within ``MARGIN`` (this step's geometry, not the last
  step's manifold), one normal and one tangent row at each end of where the two outlines' facing
  sides overlap (a face on a face resists turning; a corner: the closest point), normal projected
  on the plane: arm–box rows are ``CHARACTER``,
  box–box rows ``BETWEEN``; a gap ``d > 0`` may close within the step (``w_n >= −d/h``), an
  overlap is pushed out at ``ERP`` per step;
* each box's friction on the desk: ``SUPPORT`` rows on ``vx``, ``vy`` bounded by ``μ m g``
  and on ``ωz`` by ``μ m g · 0.38 √(a b)`` (the mean distance from the centre of an ``a × b``
  face is about ``0.38 √(a b)``, exact for a square: a stated approximation);
* friction coefficients as PyBullet combines them: the product of the pair's.
"""

from __future__ import annotations

import numpy as np

from tracker.quiet import quiet_stdio  # noqa: F401  (imports pybullet silently first)

import pybullet as p  # noqa: E402

from tracker.control.vt_lcp import BETWEEN, CHARACTER, SUPPORT, ContactProblem  # noqa: E402

MARGIN = 0.02  # m: pairs closer than this get rows
ERP = 0.2  # fraction of an overlap pushed out per step
G = 9.81


class DeskContacts:
    """``contact_problem(dt)`` for :class:`~tracker.scenes.desk.Desk` (the ``engine`` of ``vt``'s ``lcp``).

    Args:
        desk: the scene, with its boxes.
    """

    def __init__(self, desk) -> None:
        self.desk = desk
        self.spec = spec = desk.spec
        self.boxes = [b for b in (desk.small, desk.large) if b is not None]
        cid = desk.client_id
        self.masses = [p.getDynamicsInfo(b, -1, physicsClientId=cid)[0] for b in self.boxes]
        self.sizes = spec["box_sizes"][:len(self.boxes)]
        self.mu_box_desk = spec["friction"] * spec["desk_friction"]
        self.mu_pair = spec["friction"] * spec["friction"]
        self.rewind = None  # the Peek protocol's attribute; the LCP does not step the engine
        #: the last problem stated (:meth:`contact_problem`).
        self.last: ContactProblem | None = None

    def contact_problem(self, dt: float) -> ContactProblem:
        """The world now: ``(3 + 3·boxes)`` velocities, the contact and support rows."""
        desk, arm, cid = self.desk, self.desk.arm, self.desk.client_id
        q, v = arm.get_state()
        nb = len(self.boxes)
        n = 3 + 3 * nb
        mass = np.zeros((n, n))
        force = np.zeros(n)
        vel = np.zeros(n)
        mass[:3, :3] = arm.mass_matrix(q)
        force[:3] = -arm.bias_forces(q, v)
        vel[:3] = v
        centres = []
        for k, (b, m, (a, w, _)) in enumerate(zip(self.boxes, self.masses, self.sizes)):
            i = 3 + 3 * k
            mass[i:i + 3, i:i + 3] = np.diag([m, m, m * (a * a + w * w) / 12.0])
            lin, ang = p.getBaseVelocity(b, physicsClientId=cid)
            vel[i:i + 3] = (lin[0], lin[1], ang[2])
            centres.append(np.array(p.getBasePositionAndOrientation(b, physicsClientId=cid)[0][:2]))
        joints = self._joint_positions(q)
        rows: list[tuple] = []  # (jac, lo, hi, normal_of offset, mu, w_target, kind, gap)

        def point_jac(body: int, link: int, point: np.ndarray) -> np.ndarray:
            """``(2, n)``: the plane velocity of ``point`` fixed to ``body``'s ``link``."""
            jac = np.zeros((2, n))
            if body == arm.body_id:
                for j in range(link + 1):
                    r = point - joints[j]
                    jac[:, j] = (-r[1], r[0])
            else:
                k = self.boxes.index(body)
                r = point - centres[k]
                jac[:, 3 + 3 * k:6 + 3 * k] = [[1.0, 0.0, -r[1]], [0.0, 1.0, r[0]]]
            return jac

        def pair(body_a: int, body_b: int, kind: int) -> None:
            for c in p.getClosestPoints(body_a, body_b, MARGIN, physicsClientId=cid):
                normal = np.array(c[7][:2])  # on B, towards A
                if np.linalg.norm(normal) < 1e-6:
                    continue
                normal /= np.linalg.norm(normal)
                tangent = np.array([-normal[1], normal[0]])
                depth = c[8]
                target = -depth / dt if depth > 0 else -ERP * depth / dt
                link = c[3]
                for point in self._patch(np.array(c[6][:2]), normal, depth,
                                         self._rect(body_a, link, q, joints, centres),
                                         self._rect(body_b, -1, q, joints, centres)):
                    rel = point_jac(body_a, link, point) - point_jac(body_b, -1, point)
                    rows.append((normal @ rel, 0.0, np.inf, -1, 0.0, target, kind, depth))
                    rows.append((tangent @ rel, 0.0, 0.0, 1, self.mu_pair, 0.0, kind, np.nan))  # bounded by the row above

        for b in self.boxes:
            pair(arm.body_id, b, CHARACTER)
        if nb == 2:
            pair(self.boxes[1], self.boxes[0], BETWEEN)
        for k, (m, (a, w, _)) in enumerate(zip(self.masses, self.sizes)):
            limit = self.mu_box_desk * m * G
            for axis, lim in ((0, limit), (1, limit), (2, limit * 0.38 * np.sqrt(a * w))):
                jac = np.zeros(n)
                jac[3 + 3 * k + axis] = 1.0
                rows.append((jac, -lim, lim, -1, 0.0, 0.0, SUPPORT, np.nan))
        r = len(rows)
        jac = np.array([row[0] for row in rows]).reshape(r, n)
        normal_of = np.array([k - row[3] if row[3] > 0 else -1 for k, row in enumerate(rows)], dtype=int)
        self.last = ContactProblem(
            mass=mass, force=force, v=vel, jac=jac, lo=np.array([row[1] for row in rows], dtype=float),
            hi=np.array([row[2] for row in rows], dtype=float), normal_of=normal_of,
            mu=np.array([row[4] for row in rows], dtype=float),
            w_target=np.array([row[5] for row in rows], dtype=float),
            kind=np.array([row[6] for row in rows], dtype=int),
            gap=np.array([row[7] for row in rows], dtype=float), nv=3)
        return self.last

    def _rect(self, body: int, link: int, q: np.ndarray, joints: list[np.ndarray],
              centres: list[np.ndarray]) -> np.ndarray:
        """The corners ``(4, 2)`` of a link's or a box's outline in the plane."""
        spec = self.spec
        if body == self.desk.arm.body_id:
            yaw = float(np.sum(q[:link + 1]))
            if link < len(spec["links"]) - 1:
                half = np.array([spec["links"][link][1] / 2, spec["link_width"] / 2])
                centre = joints[link] + half[0] * np.array([np.cos(yaw), np.sin(yaw)])
            else:
                half, centre = np.array(spec["fist"][:2]) / 2, joints[link]
        else:
            k = self.boxes.index(body)
            orn = p.getBasePositionAndOrientation(body, physicsClientId=self.desk.client_id)[1]
            yaw = p.getEulerFromQuaternion(orn)[2]
            half, centre = np.array(self.sizes[k][:2]) / 2, centres[k]
        rot = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
        signs = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]])
        return centre + (signs * half) @ rot.T

    @staticmethod
    def _patch(point_b: np.ndarray, normal: np.ndarray, depth: float, rect_a: np.ndarray,
               rect_b: np.ndarray) -> list[np.ndarray]:
        """The contact's points in the plane: the two ends of where the outlines' facing sides
        overlap along the tangent (a face on a face resists turning), else the closest point."""
        tangent = np.array([-normal[1], normal[0]])
        tol = abs(depth) + 0.01
        near_b = rect_b[np.abs((rect_b - point_b) @ normal) <= tol]
        near_a = rect_a[np.abs((rect_a - point_b) @ normal - depth) <= tol]
        if len(near_a) < 2 or len(near_b) < 2:
            return [point_b]
        ua, ub = near_a @ tangent, near_b @ tangent
        lo, hi = max(ua.min(), ub.min()), min(ua.max(), ub.max())
        if hi - lo < 1e-3:
            return [point_b]
        base = point_b - (point_b @ tangent) * tangent
        return [base + lo * tangent, base + hi * tangent]

    def _joint_positions(self, q: np.ndarray) -> list[np.ndarray]:
        """The hinges' ``(x, y)`` in the plane, shoulder first."""
        links = self.spec["links"]
        a = np.cumsum(q)
        out = [np.asarray(self.spec["shoulder"], dtype=float)]
        for k in range(len(links) - 1):
            out.append(out[-1] + links[k][1] * np.array([np.cos(a[k]), np.sin(a[k])]))
        return out
