"""Tan, Liu & Turk 2011, §3.4: PD against SPD on a two-link pendulum.

The experiment, as far as the paper states it: two hinge joints track
``q1(t) = cos t``, ``q2(t) = cos t + 1`` with ``kd = kp·dt``, four servo
formulations (PD, PD with reference velocity, SPD, SPD with reference
velocity), ``kp`` in 30, 300, 3000, 30000 (Tables 1-2) and the largest stable
time step for ``kp = 3·10^i`` (Figure 4). What the OCR'd paper leaves
unreadable is pinned down from its own numbers:

* ``dt = 1/60`` s: at high gain SPD lags the reference by exactly one step, so
  ``||e||_∞ = max |cos t − cos(t − dt)| ≈ dt`` = 0.0167.
* One period, ``t_n = n·dt < 2π`` (N = 377 steps), and
  ``||e||_2 = sqrt(Σ_n e_n²)`` per DOF: the one-step lag gives
  ``dt·sqrt(N/2)`` = 0.229, the paper's 0.2293.
* Explicit (forward) Euler, as the paper says; its toy example's two-step
  convergence holds only with it.
* PD servos toward ``q̄(t_n)`` (the paper's eq. 1 and 4), SPD toward
  ``q̄(t_{n+1})`` (eq. 5). The tables confirm it: PD fed ``q̄(t_{n+1})`` fits
  them clearly worse (see ``tracker reproduce tan2011``).
* The pendulum starts on the reference, ``q = (1, 2)``, ``v = 0``.

The pendulum's masses and lengths are not given. We use gravity 9.81 m/s²,
unit lengths and point masses at the link tips, with ``m1 = 0.68`` kg and
``m2 = 0.22`` kg fitted (least squares on log errors) to the 16 cells of the
lowest-gain row ``kp = 30`` only; every other cell is a prediction.
:func:`fit_masses` redoes that fit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from tracker.control import registry
from tracker.control.base import Gains, Target
from tracker.sim.pendulum import Integrator, PendulumParams, TwoLinkPendulum

#: The paper's time step for Tables 1-2, s.
PAPER_DT = 1.0 / 60.0
#: Duration of one tracking run: one period of the reference, s.
PAPER_DURATION = 2.0 * math.pi
#: Proportional gains of Tables 1-2 (the text's values; the OCR'd row labels read 10^i).
PAPER_KP = (30.0, 300.0, 3000.0, 30000.0)
#: Gains of Figure 4: ``3·10^i``, i = 1..6.
FIGURE4_KP = tuple(3.0 * 10.0**i for i in range(1, 7))
#: Figure 4's cap on the time step: the reference is sampled at 30 fps.
FIGURE4_DT_CAP = 1.0 / 30.0

#: Formulation -> (controller name, target velocity).
FORMULATIONS: dict[str, tuple[str, str]] = {
    "PD": ("pd", "zero"),
    "PD with ref. velocity": ("pd", "ref"),
    "SPD": ("spd", "zero"),
    "SPD with ref. velocity": ("spd", "ref"),
}

#: Tables 1 and 2: (formulation, kp) -> (DOF1 ||e||_∞, DOF1 ||e||_2,
#: DOF2 ||e||_∞, DOF2 ||e||_2) in rad; ``None`` where the paper reports NA
#: (the simulation diverged).
PAPER_TABLES: dict[tuple[str, float], tuple[float, float, float, float] | None] = {
    ("PD", 30.0): (0.4630, 4.0542, 0.2094, 1.8177),
    ("PD", 300.0): (0.0598, 0.5188, 0.0364, 0.2826),
    ("PD", 3000.0): None,
    ("PD", 30000.0): None,
    ("PD with ref. velocity", 30.0): (0.4585, 4.0317, 0.2048, 1.7778),
    ("PD with ref. velocity", 300.0): (0.0505, 0.4658, 0.0225, 0.1601),
    ("PD with ref. velocity", 3000.0): None,
    ("PD with ref. velocity", 30000.0): None,
    ("SPD", 30.0): (0.3164, 3.1939, 0.1049, 1.0817),
    ("SPD", 300.0): (0.0312, 0.4047, 0.0244, 0.2466),
    ("SPD", 3000.0): (0.0174, 0.2301, 0.0174, 0.2294),
    ("SPD", 30000.0): (0.0167, 0.2293, 0.0167, 0.2295),
    ("SPD with ref. velocity", 30.0): (0.3210, 3.1955, 0.1198, 1.0652),
    ("SPD with ref. velocity", 300.0): (0.0297, 0.3451, 0.0082, 0.0964),
    ("SPD with ref. velocity", 3000.0): (0.0023, 0.0330, 0.0008, 0.0087),
    ("SPD with ref. velocity", 30000.0): (0.0001, 0.0016, 0.0003, 0.0017),
}
#: Column names of one table row.
CELL_NAMES = ("DOF1 |e|inf", "DOF1 |e|2", "DOF2 |e|inf", "DOF2 |e|2")

#: Our pendulum (see the module docstring for how it was chosen).
PAPER_PARAMS = PendulumParams.point_masses(m1=0.68, m2=0.22, l1=1.0, l2=1.0, g=9.81)

#: A run counts as diverged once a joint is this far from the reference, rad.
DIVERGENCE_RAD = math.pi


def reference(t: float) -> tuple[np.ndarray, np.ndarray]:
    """The reference ``q̄(t) = (cos t, cos t + 1)`` and ``v̄(t)``, each ``(2,)``."""
    c, s = math.cos(t), math.sin(t)
    return np.array([c, c + 1.0]), np.array([-s, -s])


@dataclass(frozen=True, eq=False)
class TrackingResult:
    """Errors of one tracking run.

    Attributes:
        errors: ``q(t_n) − q̄(t_n)`` for the steps simulated, ``(N, 2)`` rad.
        diverged: a joint left the reference by more than :data:`DIVERGENCE_RAD`
            (or went non-finite); ``errors`` stops there.
    """

    errors: np.ndarray
    diverged: bool

    @property
    def e_inf(self) -> np.ndarray:
        """``max_n |e_n|`` per DOF, ``(2,)`` rad."""
        return np.abs(self.errors).max(axis=0)

    @property
    def e_2(self) -> np.ndarray:
        """``sqrt(Σ_n e_n²)`` per DOF, ``(2,)`` rad."""
        return np.sqrt((self.errors**2).sum(axis=0))

    def cells(self) -> tuple[float, float, float, float] | None:
        """The four table cells (DOF1 ∞, DOF1 2, DOF2 ∞, DOF2 2), ``None`` if diverged."""
        if self.diverged:
            return None
        ei, e2 = self.e_inf, self.e_2
        return (float(ei[0]), float(e2[0]), float(ei[1]), float(e2[1]))


def make_controller(pendulum: TwoLinkPendulum, formulation: str, prediction: str = "explicit"):
    """The registered controller for one of :data:`FORMULATIONS`."""
    name, target_velocity = FORMULATIONS[formulation]
    options = {"prediction": prediction} if name == "spd" else {}
    return registry.create(
        name,
        layout=pendulum.layout,
        dynamics=pendulum,
        target_velocity=target_velocity,
        **options,
    )


def track(
    formulation: str,
    kp: float,
    dt: float = PAPER_DT,
    *,
    pendulum: TwoLinkPendulum | None = None,
    duration: float = PAPER_DURATION,
    integrator: Integrator = "explicit",
    prediction: str = "explicit",
    pd_target: str = "current",
    kd_ratio: float = 1.0,
) -> TrackingResult:
    """Track the reference for ``duration`` seconds from ``q̄(0)``, ``v = 0``.

    Args:
        formulation: a key of :data:`FORMULATIONS`.
        kp: proportional gain (both joints), N·m/rad; ``kd = kd_ratio·kp·dt``.
        dt: time step, s.
        pendulum: defaults to one with :data:`PAPER_PARAMS`.
        duration: simulated time; steps ``t_n = n·dt < duration``.
        integrator: ``"explicit"`` (paper) or ``"semi_implicit"`` (PyBullet).
        prediction: SPD's next-state prediction (see :mod:`tracker.control.spd`).
        pd_target: ``"current"`` feeds PD ``q̄(t_n)`` (paper), ``"next"``
            ``q̄(t_{n+1})`` like SPD.
        kd_ratio: ``kd / (kp·dt)``.
    """
    pend = pendulum or TwoLinkPendulum(PAPER_PARAMS)
    ctrl = make_controller(pend, formulation, prediction)
    gains = Gains.critical_ratio(kp, dt, nv=2, ratio=kd_ratio)
    next_target = ctrl.name == "spd" or pd_target == "next"
    n_steps = int(math.ceil(duration / dt - 1e-9))
    q, v = reference(0.0)[0], np.zeros(2)
    errors = np.empty((n_steps, 2))
    for n in range(n_steps):
        t = n * dt
        q_ref = reference(t)[0]
        e = q - q_ref
        errors[n] = e
        if not (np.abs(e) <= DIVERGENCE_RAD).all():  # also catches NaN
            return TrackingResult(errors[: n + 1], True)
        target = Target(*(reference(t + dt) if next_target else reference(t)))
        tau = ctrl.torques((q, v), target, gains, dt)
        q, v = pend.step(q, v, tau, dt, integrator)
    return TrackingResult(errors, False)


def tables(
    pendulum: TwoLinkPendulum | None = None,
    kps: Iterable[float] = PAPER_KP,
    **kwargs,
) -> dict[tuple[str, float], tuple[float, float, float, float] | None]:
    """Our Tables 1-2: ``(formulation, kp) -> cells or None`` (diverged)."""
    return {
        (f, kp): track(f, kp, pendulum=pendulum, **kwargs).cells()
        for f in FORMULATIONS
        for kp in kps
    }


@dataclass(frozen=True)
class Agreement:
    """How our tables compare with the paper's.

    Attributes:
        matched: numeric cells within ``rtol`` of the paper's value.
        total: numeric cells in the paper (48).
        na_agree: we diverge exactly where the paper reports NA.
        rtol: the relative tolerance used.
    """

    matched: int
    total: int
    na_agree: bool
    rtol: float


def agreement(
    ours: dict[tuple[str, float], tuple[float, float, float, float] | None],
    rtol: float = 0.2,
) -> Agreement:
    """Count numeric cells within ``rtol`` and check the NA pattern."""
    matched = total = 0
    na_agree = True
    for key, paper in PAPER_TABLES.items():
        got = ours[key]
        if (paper is None) != (got is None):
            na_agree = False
        if paper is None:
            continue
        total += len(paper)
        if got is not None:
            matched += sum(abs(g - p) <= rtol * p for g, p in zip(got, paper, strict=True))
    return Agreement(matched, total, na_agree, rtol)


def is_stable(
    controller: str,
    kp: float,
    dt: float,
    *,
    pendulum: TwoLinkPendulum | None = None,
    duration: float = PAPER_DURATION,
    integrator: Integrator = "explicit",
    prediction: str = "explicit",
) -> bool:
    """Whether ``controller`` (``"pd"``/``"spd"``, zero target velocity) tracks
    the reference for ``duration`` without leaving it by more than
    :data:`DIVERGENCE_RAD`, with ``kd = kp·dt``."""
    formulation = "PD" if controller == "pd" else "SPD"
    res = track(
        formulation,
        kp,
        dt,
        pendulum=pendulum,
        duration=duration,
        integrator=integrator,
        prediction=prediction,
    )
    return not res.diverged


def largest_stable_dt(
    controller: str,
    kp: float,
    *,
    cap: float = FIGURE4_DT_CAP,
    rtol: float = 0.01,
    **kwargs,
) -> float:
    """Largest stable time step up to ``cap`` (Figure 4), to relative precision ``rtol``.

    Steps down from ``cap`` by factors of 2 to the first stable ``dt``, then
    bisects (geometrically) between it and the unstable step above it.
    Returns ``cap`` when ``cap`` itself is stable.
    """
    if is_stable(controller, kp, cap, **kwargs):
        return cap
    hi = cap
    lo = cap / 2.0
    while not is_stable(controller, kp, lo, **kwargs):
        hi, lo = lo, lo / 2.0
        if lo < 1e-7:
            return 0.0
    while hi / lo > 1.0 + rtol:
        mid = math.sqrt(lo * hi)
        if is_stable(controller, kp, mid, **kwargs):
            lo = mid
        else:
            hi = mid
    return lo


def fit_masses(
    lengths: tuple[float, float] = (1.0, 1.0),
    kp: float = PAPER_KP[0],
    start: tuple[float, float] = (0.5, 0.3),
) -> tuple[float, float]:
    """Point masses ``(m1, m2)`` minimising the squared log ratio of our
    ``kp`` row (16 cells) to the paper's; the rest of the setup is fixed."""
    from scipy.optimize import minimize

    def cost(x: np.ndarray) -> float:
        m1, m2 = np.exp(x)
        pend = TwoLinkPendulum(PendulumParams.point_masses(m1, m2, *lengths))
        total = 0.0
        for f in FORMULATIONS:
            got = track(f, kp, pendulum=pend).cells()
            paper = PAPER_TABLES[(f, kp)]
            if got is None:
                return 1e3
            total += sum(math.log(g / p) ** 2 for g, p in zip(got, paper, strict=True))
        return total

    res = minimize(
        cost, np.log(start), method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-6}
    )
    m1, m2 = np.exp(res.x)
    return float(m1), float(m2)
