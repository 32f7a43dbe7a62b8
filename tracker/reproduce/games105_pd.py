"""GAMES105 lecture 10, "Stability of PD control": plain PD under semi-implicit Euler.

The slides step a unit mass under ``f = −k_p x − k_d v`` with semi-implicit Euler::

    v' = v + h(−k_p x − k_d v),   x' = x + h v'   ⇔   [v'; x'] = A [v; x],
    A = [[1 − k_d h, −k_p h], [h(1 − k_d h), 1 − k_p h²]]

and call it stable while every eigenvalue has ``|λ| ≤ 1``. ``A`` is similar (``diag(h, 1)``) to a
matrix of ``a = k_p h²`` and ``b = k_d h`` alone: ``λ² − (2 − a − b) λ + (1 − b) = 0``. Jury's
test on that quadratic gives the region in closed form **(re-derived)**: ``ρ(A) < 1`` exactly when
``a > 0``, ``b ≥ 0`` and ``a + 2b < 4`` (the boundary ``k_p h² + 2 k_d h = 4``; ``λ = −1`` on it).
The slides' "more stable PD" (damping taken at ``v'``) has ``det = 1/(1 + b)``,
``trace = (2 + b − a)/(1 + b)`` and is stable while ``a < 4 + 2b``: damping never destabilises it.

Measured: one PyBullet multibody per ``b`` column, a fixed base with one revolute joint per ``a`` row
(unit inertia about the axis, no gravity, no damping, no velocity clamp), driven by explicit torques
``−k_p x − k_d v`` from the state PyBullet reports. The state is renormalised every
:data:`RENORM` steps (the system is linear), so the growth rate per step, the measured ``ρ``,
comes from the product of the norms over the last :data:`WINDOW` steps without overflow.

On the humanoid: the joint servo ``τ = K(q̄ − q) − D q̇`` linearised about the stance, with no
gravity or velocity products, is ``M q̈ = −K q − D q̇``; with ``D = c K`` (the slide's 200/20 and
our model's gains both have ``c = 0.1 s``) the modes decouple, mode ``i`` being the 1-DOF system
with ``k_p = λ_i``, ``k_d = c λ_i`` (``λ_i`` the generalized eigenvalues of ``(K, M)``), so plain PD
is stable up to the ``h`` where ``λ_max (h² + 2 c h) = 4``.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Steps between renormalisations of the measured state, and the measured window (steps).
RENORM = 10
TRANSIENT = 100
WINDOW = 200
#: The measurement's time step, s (the grid is in ``k_p h²`` and ``k_d h``; ``h`` only scales the gains).
H = 1e-3


def pd_matrix(kp: float, kd: float, h: float) -> np.ndarray:
    """The slides' ``A`` ``(2, 2)`` acting on ``[v, x]`` (unit mass)."""
    return np.array([[1 - kd * h, -kp * h], [h * (1 - kd * h), 1 - kp * h * h]])


def spectral_radius(a: float, b: float) -> float:
    """``ρ(A)`` for ``a = k_p h²``, ``b = k_d h``."""
    return float(np.max(np.abs(np.roots([1.0, -(2.0 - a - b), 1.0 - b]))))


def predicted_stable(a: float, b: float) -> bool:
    """The closed form of the region (module docstring): ``a > 0``, ``b ≥ 0``, ``a + 2b < 4``."""
    return a > 0 and b >= 0 and a + 2 * b < 4


@dataclass(frozen=True)
class Grid:
    """The measured grid.

    Attributes:
        a: ``(na,)`` values of ``k_p h²``; b: ``(nb,)`` values of ``k_d h``.
        rho_pred: ``(na, nb)`` eigenvalue prediction; rho_meas: ``(na, nb)`` measured growth per step.
    """

    a: np.ndarray
    b: np.ndarray
    rho_pred: np.ndarray
    rho_meas: np.ndarray


def _urdf(n: int) -> str:
    links = ['<link name="base"><inertial><mass value="0"/><inertia ixx="0" iyy="0" izz="0" ixy="0" '
             'ixz="0" iyz="0"/></inertial></link>']
    for i in range(n):
        links.append(f'<link name="l{i}"><inertial><origin xyz="0 0 0"/><mass value="1"/><inertia ixx="1" iyy="1" '
                     f'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                     f'<joint name="j{i}" type="continuous"><parent link="base"/><child link="l{i}"/>'
                     f'<origin xyz="{i} 0 0"/><axis xyz="0 0 1"/></joint>')
    return '<?xml version="1.0"?><robot name="pd_grid">' + "".join(links) + "</robot>"


def measure(a_values: np.ndarray, b_values: np.ndarray, h: float = H, x0: float = 1e-3) -> np.ndarray:
    """Measured growth per step ``(na, nb)`` of PyBullet's 1-DOF joint under explicit PD."""
    from tracker.quiet import quiet_stdio

    with quiet_stdio():
        import pybullet as p
        cid = p.connect(p.DIRECT)
    na, nb = len(a_values), len(b_values)
    try:
        p.setGravity(0, 0, 0, physicsClientId=cid)
        p.setTimeStep(h, physicsClientId=cid)
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "grid.urdf"
            path.write_text(_urdf(na))
            bodies = [p.loadURDF(str(path), basePosition=[0, 3 * k, 0], useFixedBase=True,
                                 flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=cid) for k in range(nb)]
        joints = list(range(na))
        for body in bodies:
            for j in joints:
                p.changeDynamics(body, j, linearDamping=0, angularDamping=0, jointDamping=0,
                                 maxJointVelocity=1e30, physicsClientId=cid)
                p.resetJointState(body, j, x0, 0.0, physicsClientId=cid)
            p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * na, physicsClientId=cid)
        kp = np.asarray(a_values, float) / h ** 2
        kd = np.asarray(b_values, float) / h
        log_norm = np.zeros((na, nb))
        start = np.zeros((na, nb))
        for n in range(1, TRANSIENT + WINDOW + 1):
            for k, body in enumerate(bodies):
                s = p.getJointStates(body, joints, physicsClientId=cid)
                x, v = np.array([r[0] for r in s]), np.array([r[1] for r in s])
                p.setJointMotorControlArray(body, joints, p.TORQUE_CONTROL, forces=list(-kp * x - kd[k] * v),
                                            physicsClientId=cid)
            p.stepSimulation(physicsClientId=cid)
            if n % RENORM == 0:
                for k, body in enumerate(bodies):
                    s = p.getJointStates(body, joints, physicsClientId=cid)
                    x, v = np.array([r[0] for r in s]), np.array([r[1] for r in s])
                    norm = np.hypot(x, h * v) / x0
                    norm = np.where(norm > 0, norm, 1e-300)
                    log_norm[:, k] += np.log(norm)
                    for j in joints:
                        p.resetJointState(body, j, x[j] / norm[j], v[j] / norm[j], physicsClientId=cid)
                if n == TRANSIENT:
                    start = log_norm.copy()
    finally:
        p.disconnect(cid)
    return np.exp((log_norm - start) / WINDOW)


def grid(quick: bool) -> Grid:
    """Predict and measure over the ``(k_p h², k_d h)`` grid."""
    # half-way between the boundary's values, so that no cell sits on it (there ρ = 1 exactly)
    a = np.arange(0.0625, 5.0, 0.25 if quick else 0.125)
    b = np.arange(0.1, 2.6, 0.4 if quick else 0.2)
    pred = np.array([[spectral_radius(ai, bi) for bi in b] for ai in a])
    return Grid(a, b, pred, measure(a, b))


def boundary_rows(g: Grid) -> list[str]:
    """Table rows: for each ``b``, the measured last stable and first diverging ``a`` against ``4 − 2b``."""
    rows = []
    for k, b in enumerate(g.b):
        div = g.rho_meas[:, k] > 1 + 1e-6
        last_ok = g.a[~div].max() if (~div).any() else math.nan
        later = div & (g.a > last_ok) if (~div).any() else div
        first_bad = g.a[later].min() if later.any() else math.nan
        pred = 4 - 2 * b
        rows.append(f"| {b:.2f} | {pred:.2f} | {_f(last_ok)} | {_f(first_bad)} | "
                    f"{'yes' if (last_ok < pred or math.isnan(last_ok)) and (first_bad > pred or math.isnan(first_bad)) else 'NO'} |")
    return rows


def _f(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3f}"


def agreement(g: Grid) -> tuple[int, int, float]:
    """``(cells, cells where the measured divergence (ρ_meas > 1) is the closed form's (a + 2b ≥ 4),
    max |ρ_meas − ρ_pred|)``."""
    meas = g.rho_meas > 1 + 1e-6
    pred = ~np.array([[predicted_stable(ai, bi) for bi in g.b] for ai in g.a])
    return int(meas.size), int((meas == pred).sum()), float(np.max(np.abs(g.rho_meas - g.rho_pred)))


def humanoid_limits() -> list[tuple[str, float, float, float, str]]:
    """``(gains, total mass kg, λ_max 1/s², largest stable h s, the joint that moves most in that mode)`` for plain
    PD on the humanoid (module docstring): the slide's ``k_p = 200, k_d = 20`` on every joint DOF, and the
    model's own gains."""
    from scipy.linalg import eigh

    from tracker.sim.offsets import layout_joints
    from tracker.sim.stance import stand_simulation

    sim = stand_simulation()
    try:
        m = np.asarray(sim.character.mass_matrix())  # at the current state: the stance
        kp_model, kd_model = np.asarray(sim.gains.kp), np.asarray(sim.gains.kd)
        mass = float(sim.character.total_mass)
        names, dofs = layout_joints(sim.layout)
    finally:
        sim.close()
    out = []
    joint = np.zeros(len(kp_model), dtype=bool)
    joint[6:] = True
    for label, kp, kd in (("slide: 200 / 20 on every joint DOF", np.where(joint, 200.0, 0.0),
                           np.where(joint, 20.0, 0.0)),
                          ("the model's own (100-1000 / 10-100)", np.where(joint, kp_model, 0.0),
                           np.where(joint, kd_model, 0.0))):
        c = float(np.max(kd[joint] / kp[joint]))
        w, vec = eigh(np.diag(kp), m)
        lam = float(w[-1])
        h = (-c * lam + math.sqrt((c * lam) ** 2 + 4 * lam)) / lam  # λ (h² + 2 c h) = 4
        dof_names = [n for n, k in zip(names, dofs) for _ in range(int(k))]
        out.append((label, mass, lam, h, dof_names[int(np.argmax(np.abs(vec[6:, -1])))]))
    return out


def figure(g: Grid, path: Path) -> None:
    """Measured ``ρ`` over the grid with the predicted boundary ``a + 2b = 4`` (and SPD's ``a = 4 + 2b``)."""
    from matplotlib.figure import Figure

    from tracker.analysis.plots import save_figure

    fig = Figure(figsize=(6.4, 5.0))
    ax = fig.add_subplot(1, 1, 1)
    bb, aa = np.meshgrid(g.b, g.a)
    stable = g.rho_meas <= 1 + 1e-6
    ax.scatter(bb[stable], aa[stable], s=14, c="#2e86c1", label="measured: decays (ρ ≤ 1)")
    ax.scatter(bb[~stable], aa[~stable], s=14, c="#c0392b", marker="x", label="measured: diverges (ρ > 1)")
    line = np.linspace(0, g.b.max(), 50)
    ax.plot(line, 4 - 2 * line, "k-", lw=1.5, label="eigenvalues of A: k_p h² + 2 k_d h = 4")
    ax.plot(line, 4 + 2 * line, "k--", lw=1, label="implicit damping (slides' \"more stable PD\"): k_p h² = 4 + 2 k_d h")
    ax.set_xlabel("k_d h")
    ax.set_ylabel("k_p h²")
    ax.set_ylim(0, g.a.max() + 0.2)
    ax.set_title("Plain PD under semi-implicit Euler: PyBullet 1-DOF joint vs the slides' matrix A", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path)


def markdown(g: Grid, limits) -> str:
    """The ``pd-stability`` block."""
    cells, agree, err = agreement(g)
    lines = [f"Grid: k_p h² from {g.a[0]:g} to {g.a[-1]:g} ({len(g.a)} values), k_d h from {g.b[0]:g} to "
             f"{g.b[-1]:g} ({len(g.b)} values), h = {H * 1e3:g} ms, {TRANSIENT + WINDOW} steps from x = 1 mrad; "
             f"measured ρ = growth per step over the last {WINDOW}.", "",
             "| k_d h | predicted boundary k_p h² = 4 − 2 k_d h | last measured stable k_p h² | first measured "
             "diverging k_p h² | boundary between them? |", "|---:|---:|---:|---:|---|"]
    lines += boundary_rows(g)
    lines += ["", f"Measured and predicted stability agree on {agree} of {cells} cells; largest |ρ measured − ρ of A| "
              f"= {err:.1e}.", "",
              "| plain PD on our humanoid (stance, linearised) | mass (kg) | largest mode λ_max of M⁻¹K (1/s²) | "
              "stable up to h (ms) | that mode moves most |", "|---|---:|---:|---:|---|"]
    lines += [f"| {label} | {mass:.1f} | {lam:.4g} | {1e3 * h:.3f} | {joint} |" for label, mass, lam, h, joint in limits]
    return "\n".join(lines)
