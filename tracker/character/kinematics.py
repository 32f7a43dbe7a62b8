"""Pure-numpy kinematics of a URDF character (no PyBullet).

Parses the URDF's links, joints and collision shapes, and runs forward
kinematics for generalized coordinates ``q`` in the :class:`Layout` order,
vectorised over frames. The retargeter, the metrics and the contact-sheet
plots use it; the PyBullet adapter is the reference it is tested against.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.character.layout import Layout
from tracker.errors import ModelError


@dataclass(frozen=True)
class Shape:
    """A collision shape in its link's frame: ``kind`` box|capsule|sphere|cylinder."""

    kind: str
    size: tuple[float, ...]  # box: (sx, sy, sz); capsule/cylinder: (radius, length); sphere: (radius,)
    origin: np.ndarray  # (3,) m
    rotation: np.ndarray  # (3, 3)

    def sample_points(self) -> np.ndarray:
        """Points on the shape's surface in the link frame ``(P, 3)`` (corners/caps), for ground checks."""
        if self.kind == "box":
            hx, hy, hz = (s / 2 for s in self.size)
            pts = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)])
        elif self.kind in ("capsule", "cylinder"):
            r, length = self.size
            h = length / 2 + (r if self.kind == "capsule" else 0.0)
            ang = np.linspace(0, 2 * np.pi, 8, endpoint=False)
            ring = np.stack([r * np.cos(ang), r * np.sin(ang)], axis=1)
            pts = [np.array([0, 0, h]), np.array([0, 0, -h])]
            for z in (-length / 2, length / 2):
                pts.extend(np.column_stack([ring, np.full(8, z)]))
            pts = np.array(pts)
        else:  # sphere
            r = self.size[0]
            pts = r * np.vstack([np.eye(3), -np.eye(3)])
        return pts @ self.rotation.T + self.origin


@dataclass(frozen=True)
class KJoint:
    name: str
    kind: str  # spherical | revolute | fixed
    parent: str
    child: str
    origin: np.ndarray  # (3,) m, in the parent link frame
    rotation: np.ndarray  # (3, 3) joint frame in the parent link frame
    axis: np.ndarray  # (3,) unit, in the joint frame (revolute)
    lower: float
    upper: float
    effort: float


def _origin(el: ET.Element | None) -> tuple[np.ndarray, np.ndarray]:
    if el is None:
        return np.zeros(3), np.eye(3)
    xyz = np.array([float(x) for x in el.get("xyz", "0 0 0").split()])
    rpy = [float(x) for x in el.get("rpy", "0 0 0").split()]
    return xyz, Rotation.from_euler("xyz", rpy).as_matrix()


#: Largest URDF read, bytes, and most links (and joints) it may have.
MAX_URDF_BYTES = 8 << 20
MAX_LINKS = 1024


def read_urdf(path: Path) -> ET.Element:
    """The ``<robot>`` element of URDF ``path``, every value the program uses checked (:func:`check_urdf`).

    Raises:
        ModelError: one line naming the file (and the link or joint, and the value).
    """
    from tracker.readfile import read_bytes_bounded

    data = read_bytes_bounded(path, "URDF", MAX_URDF_BYTES, ModelError)
    try:
        # pybullet_data's DeepMimic humanoid.urdf ends with a NUL byte; PyBullet ignores it.
        robot = ET.fromstring(data.rstrip(b"\x00\r\n\t "))
    except (ET.ParseError, ValueError, RecursionError) as exc:
        raise ModelError(f"{path}: cannot read URDF ({' '.join(str(exc).split())[:160]})") from None
    problem = check_urdf(robot, path.parent)
    if problem:
        raise ModelError(f"{path}: {problem}")
    return robot


def check_urdf(robot: ET.Element, folder: Path) -> str:
    """What is wrong with a parsed URDF, or ``""``.

    Links: unique non-empty names; an ``<inertial>`` with a finite mass > 0 kg and a finite,
    positive-definite inertia; origins of 3 finite numbers; collision and visual shapes of finite
    positive sizes; mesh files that exist (relative to the URDF's ``folder``). Joints: unique
    names; a parent and a child that are links; no link the child of two joints, nor of itself;
    an axis of 3 finite numbers, not zero; limits that are numbers (not NaN), lower <= upper.
    """
    if robot.tag != "robot":
        return f"the root element is <{robot.tag}>, not <robot>"
    links, joints = robot.findall("link"), robot.findall("joint")
    if not links or len(links) > MAX_LINKS or len(joints) > MAX_LINKS:
        return f"{len(links)} links and {len(joints)} joints (1 to {MAX_LINKS} links expected)"
    names: set[str] = set()
    for link in links:
        name = link.get("name") or ""
        if not name:
            return "a <link> without a name"
        if name in names:
            return f"link {name!r} is given twice"
        names.add(name)
        problem = _link_problem(link, folder)
        if problem:
            return f"link {name!r}: {problem}"
    joint_names: set[str] = set()
    children: set[str] = set()
    for j in joints:
        name = j.get("name") or ""
        if not name:
            return "a <joint> without a name"
        if name in joint_names:
            return f"joint {name!r} is given twice"
        joint_names.add(name)
        ends = {}
        for end in ("parent", "child"):
            el = j.find(end)
            ends[end] = el.get("link") if el is not None else None
            if not ends[end]:
                return f"joint {name!r}: no <{end} link=...>"
            if ends[end] not in names:
                return f"joint {name!r}: {end} link {ends[end]!r} is not a link of the URDF"
        if ends["child"] in children or ends["child"] == ends["parent"]:
            return f"joint {name!r}: link {ends['child']!r} is the child of two joints or of itself"
        children.add(ends["child"])
        problem = _joint_problem(j)
        if problem:
            return f"joint {name!r}: {problem}"
    return ""


def _numbers(text: str | None, n: int, what: str, positive: bool = False) -> str:
    """What is wrong with ``text`` as ``n`` finite numbers (positive ones), or ``""``."""
    try:
        values = [float(x) for x in (text or "").split()]
    except ValueError:
        values = []
    if len(values) != n or not np.isfinite(values).all() or (positive and min(values) <= 0):
        kind = "positive finite numbers" if positive else "finite numbers"
        return f"{what} {(text or '')[:60]!r} is not {n} {kind}" if n > 1 else \
            f"{what} {(text or '')[:60]!r} is not a {kind[:-1]}"
    return ""


def _origin_problem(parent: ET.Element, what: str) -> str:
    el = parent.find("origin")
    if el is None:
        return ""
    return _numbers(el.get("xyz", "0 0 0"), 3, f"{what} origin xyz") or \
        _numbers(el.get("rpy", "0 0 0"), 3, f"{what} origin rpy")


def _link_problem(link: ET.Element, folder: Path) -> str:
    inertial = link.find("inertial")
    if inertial is None:
        return "no <inertial> (a mass and an inertia)"
    mass = inertial.find("mass")
    if mass is None:
        return "<inertial> has no <mass>"
    problem = _numbers(mass.get("value"), 1, "mass", positive=True) or _origin_problem(inertial, "inertial")
    if problem:
        return problem + " (kg)" if problem.startswith("mass") else problem
    el = inertial.find("inertia")
    if el is None:
        return "<inertial> has no <inertia>"
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    text = " ".join(el.get(k, "0") for k in keys)
    problem = _numbers(text, 6, "inertia (ixx ixy ixz iyy iyz izz)")
    if problem:
        return problem
    xx, xy, xz, yy, yz, zz = (float(el.get(k, "0")) for k in keys)
    if np.linalg.eigvalsh(np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])).min() <= 0:
        return f"inertia ({text}) is not positive definite (kg m^2)"
    for part in link.findall("collision") + link.findall("visual"):
        problem = _origin_problem(part, part.tag) or _geometry_problem(part.find("geometry"), folder)
        if problem:
            return f"{part.tag}: {problem}"
    return ""


def _geometry_problem(geom: ET.Element | None, folder: Path) -> str:
    if geom is None or len(geom) == 0:
        return ""
    g = geom[0]
    if g.tag == "box":
        return _numbers(g.get("size"), 3, "box size", positive=True)
    if g.tag in ("capsule", "cylinder"):
        return _numbers(g.get("radius"), 1, f"{g.tag} radius", positive=True) or \
            _numbers(g.get("length"), 1, f"{g.tag} length", positive=True)
    if g.tag == "sphere":
        return _numbers(g.get("radius"), 1, "sphere radius", positive=True)
    if g.tag == "mesh":
        name = g.get("filename") or ""
        rel = name[len("package://"):] if name.startswith("package://") else name
        if not name or not (folder / rel).is_file():
            return f"mesh file {name[:160]!r} does not exist (looked in {folder})"
        if g.get("scale") is not None:
            return _numbers(g.get("scale"), 3, "mesh scale", positive=True)
    return ""


def _joint_problem(j: ET.Element) -> str:
    problem = _origin_problem(j, "joint")
    if problem:
        return problem
    ax = j.find("axis")
    if ax is not None:
        problem = _numbers(ax.get("xyz"), 3, "axis xyz")
        if problem:
            return problem
        if np.linalg.norm([float(a) for a in ax.get("xyz").split()]) < 1e-9:
            return f"axis xyz {ax.get('xyz')!r} is zero (a joint needs a direction)"
    lim = j.find("limit")
    if lim is not None:
        values = {}
        for key, default in (("lower", "-inf"), ("upper", "inf"), ("effort", "inf")):
            try:
                values[key] = float(lim.get(key, default))
            except ValueError:
                values[key] = float("nan")
            if np.isnan(values[key]):
                return f"limit {key} {lim.get(key, '')[:40]!r} is not a number"
        if values["lower"] > values["upper"]:
            return f"limit lower {values['lower']:g} is above upper {values['upper']:g}"
    return ""


class Kinematics:
    """Kinematic tree of a URDF.

    Attributes:
        root: name of the root (base) link.
        joints: actuated and fixed joints in topological order.
        layout: :class:`Layout` of the non-fixed joints in URDF order.
    """

    def __init__(self, urdf_path: str | Path, scale: float = 1.0) -> None:
        path = Path(urdf_path)
        robot = read_urdf(path)
        self.path = path
        self.masses: dict[str, float] = {}
        self.inertial_origin: dict[str, np.ndarray] = {}
        self.shapes: dict[str, list[Shape]] = {}
        for link in robot.findall("link"):
            name = link.get("name")
            inertial = link.find("inertial")
            mass = 0.0
            io = np.zeros(3)
            if inertial is not None:
                m = inertial.find("mass")
                mass = float(m.get("value")) if m is not None else 0.0
                io = _origin(inertial.find("origin"))[0] * scale
            self.masses[name] = mass
            self.inertial_origin[name] = io
            shapes = []
            for col in link.findall("collision"):
                xyz, rot = _origin(col.find("origin"))
                geom = col.find("geometry")
                if geom is None or len(geom) == 0:
                    continue
                g = geom[0]
                if g.tag == "box":
                    size = tuple(float(s) * scale for s in g.get("size").split())
                elif g.tag in ("capsule", "cylinder"):
                    size = (float(g.get("radius")) * scale, float(g.get("length")) * scale)
                elif g.tag == "sphere":
                    size = (float(g.get("radius")) * scale,)
                else:
                    continue
                shapes.append(Shape(g.tag, size, xyz * scale, rot))
            self.shapes[name] = shapes
        raw = []
        for j in robot.findall("joint"):
            kind = j.get("type")
            kind = {"continuous": "revolute"}.get(kind, kind)
            if kind not in ("spherical", "revolute", "fixed"):
                raise ModelError(f"{path}: joint {j.get('name')!r} has unsupported type {kind!r}")
            xyz, rot = _origin(j.find("origin"))
            ax = j.find("axis")
            axis = np.array([float(a) for a in ax.get("xyz").split()]) if ax is not None else np.array([1.0, 0, 0])
            lim = j.find("limit")
            lower = float(lim.get("lower", "-inf")) if lim is not None else -np.inf
            upper = float(lim.get("upper", "inf")) if lim is not None else np.inf
            effort = float(lim.get("effort", "inf")) if lim is not None else np.inf
            raw.append(KJoint(j.get("name"), kind, j.find("parent").get("link"), j.find("child").get("link"),
                              xyz * scale, rot, axis / np.linalg.norm(axis), lower, upper, effort))
        children = {j.child for j in raw}
        roots = [n for n in self.masses if n not in children]
        if len(roots) != 1:
            raise ModelError(f"{path}: expected one root link, found {roots}")
        self.root = roots[0]
        # topological order (parents first), keeping URDF order among siblings
        order, frontier = [], [self.root]
        while frontier:
            link = frontier.pop(0)
            for j in raw:
                if j.parent == link:
                    order.append(j)
                    frontier.append(j.child)
        if len(order) != len(raw):  # with one parent per link, only a loop stays out of the tree
            loose = [j.name for j in raw if j not in order]
            raise ModelError(f"{path}: joints {', '.join(map(repr, loose[:5]))} are not connected to the root "
                             f"link {self.root!r} (a loop of links?)")
        self.joints: tuple[KJoint, ...] = tuple(order)
        self.joint_by_child = {j.child: j for j in self.joints}
        self.joint_by_name = {j.name: j for j in self.joints}
        self.layout = Layout.build([(j.name, j.kind) for j in raw if j.kind != "fixed"])

    @property
    def links(self) -> tuple[str, ...]:
        return (self.root,) + tuple(j.child for j in self.joints)

    @cached_property
    def total_mass(self) -> float:
        return float(sum(self.masses.values()))

    def link_parent(self, link: str) -> str | None:
        j = self.joint_by_child.get(link)
        return j.parent if j else None

    def forward(self, q: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, Rotation]]:
        """World frames of every link for ``q`` of shape ``(nq,)`` or ``(F, nq)``.

        The base entries of ``q`` give the base link's *inertial* frame (as in
        PyBullet); the returned frames are the URDF link frames.

        Returns:
            ``(positions, rotations)``: dicts link -> ``(F, 3)`` m and link ->
            :class:`Rotation` of length ``F``.
        """
        q = np.atleast_2d(q)
        lay = self.layout
        base_rot = Rotation.from_quat(q[:, 3:7])
        pos = {self.root: q[:, 0:3] - base_rot.apply(self.inertial_origin[self.root])}
        rot = {self.root: base_rot}
        for j in self.joints:
            pr, pp = rot[j.parent], pos[j.parent]
            frame = pr * Rotation.from_matrix(j.rotation)
            if j.kind == "spherical":
                local = Rotation.from_quat(q[:, lay[j.name].q])
            elif j.kind == "revolute":
                local = Rotation.from_rotvec(q[:, lay[j.name].q] * j.axis)
            else:
                local = Rotation.identity(len(q))
            pos[j.child] = pp + pr.apply(j.origin)
            rot[j.child] = frame * local
        return pos, rot

    def zero_pose_positions(self) -> dict[str, np.ndarray]:
        """Link-frame origins in the zero pose with the base link frame at the origin. ``(3,)`` m each."""
        q = self.layout.neutral_q()
        q[0:3] = self.inertial_origin[self.root]
        pos, _ = self.forward(q)
        return {k: v[0] for k, v in pos.items()}

    def lowest_point(self, q: np.ndarray, links: list[str]) -> np.ndarray:
        """Lowest world z over the collision shapes of ``links`` per frame, ``(F,)`` m."""
        pos, rot = self.forward(q)
        low = np.full(len(np.atleast_2d(q)), np.inf)
        for link in links:
            m = rot[link].as_matrix()  # (F, 3, 3)
            for shape in self.shapes[link]:
                if shape.kind in ("capsule", "sphere"):
                    # exact: lowest point of a swept sphere is its lowest centre minus the radius
                    half = shape.size[1] / 2 if shape.kind == "capsule" else 0.0
                    ends = np.array([[0, 0, half], [0, 0, -half]]) @ shape.rotation.T + shape.origin
                    z = (m[:, 2, :] @ ends.T) + pos[link][:, 2:3] - shape.size[0]
                else:
                    pts = shape.sample_points()  # (P, 3)
                    z = (m[:, 2, :] @ pts.T) + pos[link][:, 2:3]
                low = np.minimum(low, z.min(axis=1))
        return low
