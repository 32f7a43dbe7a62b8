"""The humanoid's URDF generator: an anthropometric 1.75 m / 70 kg humanoid, or one fitted to a subject.

``scripts/build_humanoid.py`` writes ``data/humanoid/humanoid.urdf`` with it;
:mod:`tracker.retarget.fit` builds a humanoid with a source skeleton's segment
lengths (:class:`Segments`) and a given mass from the same code.

Anthropometry
    Segment lengths, mass fractions and centre-of-mass (CM) positions are the
    male values of de Leva (1996), "Adjustments to Zatsiorsky-Seluyanov's
    segment inertia parameters", J. Biomechanics 29(9):1223-1230, Table 4
    (sample stature 1741 mm, mass 73.0 kg), scaled to a stature of 1.75 m and
    a mass of 70 kg (lengths x 1750/1741, masses = fraction x 70 kg). The hand
    runs to the finger tip: its length WJC-DAC3 (187.9 mm) follows from de
    Leva's two hand CM rows (79.00 % of WJC-MET3 = 36.24 % of WJC-DAC3). The
    1741 mm stature not covered by the table's vertical segments (149.6 mm) is
    split into the ankle height (floor to lateral malleolus, 70.0 mm) and the
    neck (suprasternale to mid-gonion, 79.6 mm). Breadths and depths are
    plausible adult values with implied densities of 0.9-1.2 kg/L (the hand
    and foot boxes, which also enclose the air between fingers and toes,
    0.6-0.65 kg/L); the hand box is 45 mm thick so that its smallest moment
    of inertia stays workable at dt = 1/60 s.

Zero pose and axes (the retargeter relies on these)
    World Z up, the character faces +X, +Y is its left. In the zero pose (all
    joint quaternions identity, all angles 0) it stands upright, arms hanging
    at the sides with the palms facing the thighs, feet flat and parallel.
    Every link frame -- and every joint frame -- is aligned with the world
    axes in the zero pose, so every link's world orientation is the identity
    there. The base link ``pelvis`` has its frame at its own centre of mass
    (PyBullet's base frame is the base's inertial frame; here both coincide);
    every other link's frame sits at the joint that connects it to its parent.
    With the pelvis at ``STANDING_ROOT_HEIGHT`` (printed by this script and
    stored as ``standing_root_height`` in ``humanoid.yaml``) the soles of the
    feet are exactly at z = 0.

    Knees: revolute about +Y, ``[0, 2.6]`` rad; a positive angle swings the
    foot backward (-X). Elbows: revolute about -Y, ``[0, 2.6]`` rad; a
    positive angle brings the hanging forearm forward (+X). All other joints
    are spherical (spine_lower, spine_upper, neck, hips, ankles, shoulders,
    wrists): 11 x 3 + 4 x 1 = 37 actuated DOF. Joints, in URDF (= layout)
    order: spine_lower, spine_upper, neck, left_hip, left_knee, left_ankle,
    right_hip, right_knee, right_ankle, left_shoulder, left_elbow, left_wrist,
    right_shoulder, right_elbow, right_wrist.

Shapes and inertia
    Every segment is one box (the head one sphere) of uniform density centred
    at the segment's de Leva CM, so the collision shape, the visual shape and
    the mass distribution agree; each box is as long as its segment.
    Inertia about the CM, in the link axes, for mass ``m``:

    * box ``a x b x c`` (along x, y, z):  Ixx = m (b² + c²) / 12,
      Iyy = m (a² + c²) / 12, Izz = m (a² + b²) / 12;
    * sphere of radius ``r``:  Ixx = Iyy = Izz = 2 m r² / 5.

    Why boxes and not capsules for the limbs: PyBullet's floating-base
    ``calculateMassMatrix`` / ``calculateInverseDynamics`` (``flags=1``, the
    only mode that handles spherical joints) ignore the URDF inertia and
    rebuild each body's inertia from its first collision primitive with
    DeepMimic's formulas. Boxes and spheres come out exact and axis-aligned;
    a capsule is taken to lie along the link's Y axis and its hemispheres get
    a wrong parallel-axis term. With boxes, the simulator (which uses the URDF
    inertia: the adapter loads with ``URDF_USE_INERTIA_FROM_FILE``) and
    PyBullet's dynamics routines describe the same body; the tests in
    ``tests/character`` pin this.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from xml.sax.saxutils import quoteattr

import numpy as np

HEIGHT_M = 1.75
MASS_KG = 70.0
SAMPLE_STATURE_MM = 1741.0
SCALE = HEIGHT_M / (SAMPLE_STATURE_MM / 1000.0)  # metres per sample metre

# de Leva (1996) Table 4, males: length (mm), mass fraction, CM from the first endpoint (fraction).
DE_LEVA_MALE: dict[str, tuple[float, float, float]] = {
    "head": (203.3, 0.0694, 0.5976),  # VERT-MIDG, CM from vertex (head + neck mass)
    "upper_trunk": (170.7, 0.1596, 0.2999),  # SUPR-XYPH, from suprasternale
    "middle_trunk": (215.5, 0.1633, 0.4502),  # XYPH-OMPH, from xiphion
    "lower_trunk": (145.7, 0.1117, 0.6115),  # OMPH-MIDH, from omphalion
    "upper_arm": (281.7, 0.0271, 0.5772),  # SJC-EJC
    "forearm": (268.9, 0.0162, 0.4574),  # EJC-WJC
    "hand": (86.2 * 0.7900 / 0.3624, 0.0061, 0.3624),  # WJC-DAC3 (derived length, see docstring)
    "thigh": (422.2, 0.1416, 0.4095),  # HJC-KJC
    "shank": (434.0, 0.0433, 0.4459),  # KJC-LMAL
    "foot": (258.1, 0.0137, 0.4415),  # HEEL-TTIP, from the heel
}
ANKLE_HEIGHT_MM = 70.0  # floor to lateral malleolus
NECK_MM = SAMPLE_STATURE_MM - ANKLE_HEIGHT_MM - sum(
    DE_LEVA_MALE[k][0] for k in ("shank", "thigh", "lower_trunk", "middle_trunk", "upper_trunk", "head")
)

# Lateral joint offsets and shape breadths (m): adult values, not in de Leva's table.
HIP_Y = 0.085
SHOULDER_Y = 0.19
SHOULDER_BELOW_SUPR = 0.035  # shoulder joint centre below the suprasternale
HEEL_BEHIND_ANKLE = 0.070  # back face of the foot box behind the ankle joint
FOOT_BOX_HEIGHT = 0.06
HEAD_RADIUS = 0.10
# (depth along X, breadth along Y) of each box; its length along the segment comes from the table.
BOX_SECTION: dict[str, tuple[float, float]] = {
    "pelvis": (0.19, 0.28),
    "abdomen": (0.18, 0.26),
    "chest": (0.21, 0.32),
    "upper_arm": (0.085, 0.08),
    "forearm": (0.065, 0.065),
    "hand": (0.085, 0.045),
    "thigh": (0.15, 0.13),
    "shank": (0.09, 0.085),
}

# Limits and efforts of the two hinge types (torque limits match humanoid.yaml).
KNEE_LIMITS = (0.0, 2.6)
ELBOW_LIMITS = (0.0, 2.6)
KNEE_EFFORT = 250.0
ELBOW_EFFORT = 80.0
MAX_JOINT_SPEED = 20.0  # rad/s, URDF bookkeeping only

# RGBA per link: one hue per limb, lighter toward the hand/foot; trunk in blues, skin-tone head.
COLORS: dict[str, tuple[float, float, float, float]] = {
    "pelvis": (0.22, 0.25, 0.35, 1),
    "abdomen": (0.28, 0.40, 0.62, 1),
    "chest": (0.20, 0.45, 0.80, 1),
    "head": (0.93, 0.76, 0.62, 1),
    "left_thigh": (0.15, 0.55, 0.25, 1),
    "left_shin": (0.30, 0.70, 0.35, 1),
    "left_foot": (0.55, 0.85, 0.50, 1),
    "right_thigh": (0.50, 0.25, 0.60, 1),
    "right_shin": (0.65, 0.40, 0.75, 1),
    "right_foot": (0.82, 0.62, 0.90, 1),
    "left_upper_arm": (0.90, 0.45, 0.10, 1),
    "left_forearm": (0.95, 0.62, 0.25, 1),
    "left_hand": (1.00, 0.80, 0.45, 1),
    "right_upper_arm": (0.05, 0.55, 0.55, 1),
    "right_forearm": (0.20, 0.72, 0.70, 1),
    "right_hand": (0.50, 0.88, 0.85, 1),
}


@dataclass(frozen=True)
class Link:
    """One rigid body of the humanoid, in the zero pose (world-aligned frames).

    Attributes:
        name: link name.
        parent: parent link (None for the base).
        joint: name of the joint to the parent (None for the base).
        kind: ``spherical`` or ``revolute`` (None for the base).
        frame: world position of the link frame in the zero pose, sole at z = 0 ``(3,)`` m.
        com: world position of the centre of mass ``(3,)`` m.
        mass: kg.
        shape: ``("box", (a, b, c))`` or ``("sphere", (r,))``, centred at the CM, m.
        axis: revolute axis in the joint frame ``(3,)``.
        limits: revolute ``(lower, upper)`` rad.
        effort: revolute torque limit, N m.
    """

    name: str
    parent: str | None
    joint: str | None
    kind: str | None
    frame: np.ndarray
    com: np.ndarray
    mass: float
    shape: tuple[str, tuple[float, ...]]
    axis: tuple[float, float, float] = (0.0, 0.0, 0.0)
    limits: tuple[float, float] = (0.0, 0.0)
    effort: float = 0.0

    @property
    def inertia(self) -> tuple[float, float, float]:
        """Principal moments about the CM in the link axes ``(Ixx, Iyy, Izz)``, kg m²."""
        kind, dims = self.shape  # dims as written to the URDF (rounded to 1 µm)
        m = self.mass
        if kind == "box":
            a, b, c = dims
            return m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12
        r = dims[0]
        i = 2.0 * m * r * r / 5.0
        return i, i, i


@dataclass(frozen=True)
class Segments:
    """Body dimensions of a humanoid, m and kg (defaults: de Leva's males at 1.75 m / 70 kg).

    Attributes:
        lengths: de Leva segment -> length, m (the keys of :data:`DE_LEVA_MALE`).
        ankle_height: floor to the ankle joint, m.
        neck: suprasternale to the head segment's lower end, m.
        hip_y: half the distance between the hip joints, m.
        hip_x: the hip joints' offset along +X (forward) from the trunk's axis, m.
        shoulder_y: half the distance between the shoulder joints, m.
        shoulder_x: the shoulder joints' offset along +X (forward) from the trunk's axis, m.
        shoulder_below_supr: shoulder joint centre below the neck base (suprasternale), m.
        mass: total mass, kg (split by de Leva's mass fractions).
        breadth: scale of every box's section (depth, breadth), the foot's and the head's size.
    """

    lengths: dict = field(default_factory=lambda: {k: v[0] / 1000.0 * SCALE for k, v in DE_LEVA_MALE.items()})
    ankle_height: float = ANKLE_HEIGHT_MM / 1000.0 * SCALE
    neck: float = NECK_MM / 1000.0 * SCALE
    hip_y: float = HIP_Y
    hip_x: float = 0.0
    shoulder_y: float = SHOULDER_Y
    shoulder_x: float = 0.0
    shoulder_below_supr: float = SHOULDER_BELOW_SUPR
    mass: float = MASS_KG
    breadth: float = 1.0

    @property
    def stature(self) -> float:
        """Floor to vertex in the zero pose, m."""
        keys = ("shank", "thigh", "lower_trunk", "middle_trunk", "upper_trunk", "head")
        return self.ankle_height + self.neck + sum(self.lengths[k] for k in keys)

    def with_(self, **changes) -> "Segments":
        return replace(self, **changes)


DEFAULT_SEGMENTS = Segments()


def segment(key: str, seg: Segments = DEFAULT_SEGMENTS) -> tuple[float, float, float]:
    """``(length m, mass kg, CM fraction from the first endpoint)`` of a de Leva segment."""
    _, frac, cm = DE_LEVA_MALE[key]
    return seg.lengths[key], frac * seg.mass, cm


def build_links(seg: Segments | None = None) -> list[Link]:
    """All 16 links in URDF order (parents first; the joint order fixed for the retargeter).

    ``seg`` gives the body's dimensions and mass (default: the de Leva 1.75 m / 70 kg body).
    """
    seg = seg or DEFAULT_SEGMENTS
    z_ankle = seg.ankle_height
    l_shank, m_shank, c_shank = segment("shank", seg)
    l_thigh, m_thigh, c_thigh = segment("thigh", seg)
    l_lpt, m_lpt, c_lpt = segment("lower_trunk", seg)
    l_mpt, m_mpt, c_mpt = segment("middle_trunk", seg)
    l_upt, m_upt, c_upt = segment("upper_trunk", seg)
    l_head, m_head, c_head = segment("head", seg)
    l_uarm, m_uarm, c_uarm = segment("upper_arm", seg)
    l_farm, m_farm, c_farm = segment("forearm", seg)
    l_hand, m_hand, c_hand = segment("hand", seg)
    l_foot, m_foot, c_foot = segment("foot", seg)
    k = seg.breadth
    section = {name: (d * k, b * k) for name, (d, b) in BOX_SECTION.items()}
    head_radius = HEAD_RADIUS * l_head / segment("head")[0]
    heel_behind = HEEL_BEHIND_ANKLE * l_foot / segment("foot")[0]

    z_knee = z_ankle + l_shank
    z_hip = z_knee + l_thigh  # MIDH
    z_omph = z_hip + l_lpt
    z_xyph = z_omph + l_mpt
    z_supr = z_xyph + l_upt
    z_vert = z_supr + seg.neck + l_head
    assert abs(z_vert - seg.stature) < 1e-9, z_vert
    z_shoulder = z_supr - seg.shoulder_below_supr
    z_elbow = z_shoulder - l_uarm
    z_wrist = z_elbow - l_farm

    v = lambda x, y, z: np.array([x, y, z], dtype=float)  # noqa: E731
    pelvis_com = v(0, 0, z_omph - c_lpt * l_lpt)
    links = [
        Link("pelvis", None, None, None, pelvis_com, pelvis_com, m_lpt, ("box", (*section["pelvis"], l_lpt))),
        Link("abdomen", "pelvis", "spine_lower", "spherical", v(0, 0, z_omph), v(0, 0, z_xyph - c_mpt * l_mpt),
             m_mpt, ("box", (*section["abdomen"], l_mpt))),
        Link("chest", "abdomen", "spine_upper", "spherical", v(0, 0, z_xyph), v(0, 0, z_supr - c_upt * l_upt),
             m_upt, ("box", (*section["chest"], l_upt))),
        Link("head", "chest", "neck", "spherical", v(0, 0, z_supr), v(0, 0, z_vert - c_head * l_head),
             m_head, ("sphere", (head_radius,))),
    ]
    foot_center_x = -heel_behind + l_foot / 2
    hx = seg.hip_x
    for side, sy in (("left", 1.0), ("right", -1.0)):
        y = sy * seg.hip_y
        links += [
            Link(f"{side}_thigh", "pelvis", f"{side}_hip", "spherical", v(hx, y, z_hip),
                 v(hx, y, z_hip - c_thigh * l_thigh), m_thigh, ("box", (*section["thigh"], l_thigh))),
            Link(f"{side}_shin", f"{side}_thigh", f"{side}_knee", "revolute", v(hx, y, z_knee),
                 v(hx, y, z_knee - c_shank * l_shank), m_shank, ("box", (*section["shank"], l_shank)),
                 axis=(0.0, 1.0, 0.0), limits=KNEE_LIMITS, effort=KNEE_EFFORT),
            Link(f"{side}_foot", f"{side}_shin", f"{side}_ankle", "spherical", v(hx, y, z_ankle),
                 v(hx + foot_center_x, y, FOOT_BOX_HEIGHT * k / 2), m_foot,
                 ("box", (l_foot, 0.095 * k, FOOT_BOX_HEIGHT * k))),
        ]
    sx = seg.shoulder_x
    for side, sy in (("left", 1.0), ("right", -1.0)):
        y = sy * seg.shoulder_y
        links += [
            Link(f"{side}_upper_arm", "chest", f"{side}_shoulder", "spherical", v(sx, y, z_shoulder),
                 v(sx, y, z_shoulder - c_uarm * l_uarm), m_uarm, ("box", (*section["upper_arm"], l_uarm))),
            Link(f"{side}_forearm", f"{side}_upper_arm", f"{side}_elbow", "revolute", v(sx, y, z_elbow),
                 v(sx, y, z_elbow - c_farm * l_farm), m_farm, ("box", (*section["forearm"], l_farm)),
                 axis=(0.0, -1.0, 0.0), limits=ELBOW_LIMITS, effort=ELBOW_EFFORT),
            Link(f"{side}_hand", f"{side}_forearm", f"{side}_wrist", "spherical", v(sx, y, z_wrist),
                 v(sx, y, z_wrist - c_hand * l_hand), m_hand, ("box", (*section["hand"], l_hand))),
        ]
    # Round what the URDF stores (µm, g) first, so the inertia written is exactly that of the written shape.
    r = lambda x: round(float(x), 6)  # noqa: E731
    return [Link(lk.name, lk.parent, lk.joint, lk.kind, np.round(lk.frame, 6), np.round(lk.com, 6), r(lk.mass),
                 (lk.shape[0], tuple(r(d) for d in lk.shape[1])), lk.axis, lk.limits, lk.effort) for lk in links]


def standing_root_height(links: list[Link]) -> float:
    """Height of the base (pelvis CM) when the soles are at z = 0 in the zero pose, m."""
    return float(links[0].frame[2])


def _f(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".") if abs(x) > 5e-7 else "0"


def _xyz(v) -> str:
    return " ".join(_f(float(c)) for c in v)


def _geometry(shape: tuple[str, tuple[float, ...]]) -> str:
    kind, dims = shape
    if kind == "box":
        return f'<box size="{_xyz(dims)}"/>'
    return f'<sphere radius="{_f(dims[0])}"/>'


def urdf_text(links: list[Link], header: str | None = None) -> str:
    """The URDF document for ``links`` (``header``: the generator comment's first lines)."""
    frames = {lk.name: lk.frame for lk in links}
    out = [
        '<?xml version="1.0"?>',
        header or ("<!-- GENERATED by scripts/build_humanoid.py: do not edit by hand.\n"
                   f"     Anthropometric humanoid, {HEIGHT_M:.2f} m / {MASS_KG:.0f} kg (de Leva 1996, males)."),
        "     Z up, faces +X, zero pose = standing, arms at the sides; all frames world-aligned in the zero pose.",
        f"     Standing root (pelvis CM) height: {standing_root_height(links):.6f} m. -->",
        '<robot name="tracker_humanoid">',
    ]
    for lk in links:
        rgba = COLORS[lk.name]
        com_local = lk.com - lk.frame
        ixx, iyy, izz = lk.inertia
        out += [
            f'  <link name="{lk.name}">',
            "    <inertial>",
            f'      <origin xyz="{_xyz(com_local)}" rpy="0 0 0"/>',
            f'      <mass value="{_f(lk.mass)}"/>',
            f'      <inertia ixx="{ixx:.12g}" ixy="0" ixz="0" iyy="{iyy:.12g}" iyz="0" izz="{izz:.12g}"/>',
            "    </inertial>",
            "    <visual>",
            f'      <origin xyz="{_xyz(com_local)}" rpy="0 0 0"/>',
            f"      <geometry>{_geometry(lk.shape)}</geometry>",
            f'      <material name={quoteattr(lk.name + "_color")}><color rgba="{_xyz(rgba)}"/></material>',
            "    </visual>",
        ]
        if lk.name == "head":  # a slim visual-only neck between the chest and the head sphere
            neck_len = (lk.com[2] - lk.shape[1][0] + 0.02) - lk.frame[2]
            out += [
                "    <visual>",
                f'      <origin xyz="0 0 {_f(neck_len / 2)}" rpy="0 0 0"/>',
                f'      <geometry><cylinder radius="0.045" length="{_f(neck_len)}"/></geometry>',
                f'      <material name="neck_color"><color rgba="{_xyz(rgba)}"/></material>',
                "    </visual>",
            ]
        out += [
            "    <collision>",
            f'      <origin xyz="{_xyz(com_local)}" rpy="0 0 0"/>',
            f"      <geometry>{_geometry(lk.shape)}</geometry>",
            "    </collision>",
            "  </link>",
        ]
        if lk.parent is not None:
            origin = lk.frame - frames[lk.parent]
            out += [f'  <joint name="{lk.joint}" type="{lk.kind}">',
                    f'    <parent link="{lk.parent}"/>',
                    f'    <child link="{lk.name}"/>',
                    f'    <origin xyz="{_xyz(origin)}" rpy="0 0 0"/>']
            if lk.kind == "revolute":
                out += [f'    <axis xyz="{_xyz(lk.axis)}"/>',
                        f'    <limit lower="{_f(lk.limits[0])}" upper="{_f(lk.limits[1])}" '
                        f'effort="{_f(lk.effort)}" velocity="{_f(MAX_JOINT_SPEED)}"/>']
            out.append("  </joint>")
    out.append("</robot>")
    return "\n".join(out) + "\n"


