"""Aiming a ball: the ballistic launch that meets a link of the reference at a clip time.

Aim point ``P``: the target link's frame origin in the reference pose at
``impact_time``, plus ``Launch.offset`` expressed in the link's frame (it turns
with the link; our humanoid's link frames are aligned with the world in the
zero pose, so ``(0.1, 0, 0)`` is 10 cm in front of a link of a character
standing at rest). Link positions come from the model's pure-numpy forward
kinematics on ``reference.sample(t)[0]``.

Moving ball (``speed > 0``): it arrives with velocity ``V = speed · d`` (``d``
the unit approach direction), its centre at ``C = P - r d``, so that its
leading surface point touches ``P`` at ``impact_time``. If ``P`` lies inside
the link's shape, the first contact comes earlier by about depth / closing
speed. Default direction (``Launch.direction=None``): from the character's
front (horizontally along ``-heading``), at the elevation that makes the ball
leave a thrower's hand at ``release_height`` (1.5 m; ``Launch.release_height``, a
config's ``launch.height``) above the ground. A launch that cannot be made says
the nearest flight time and the lowest speed that can. (A
horizontal arrival would mean the ball rose from ``g T²/2`` below the target,
1.77 m for a 0.6 s flight: out of the ground for most targets.)

Ball at rest (``speed == 0``): it lies on the ground in the path of ``P``:
``u`` is the horizontal direction of ``P``'s reference velocity at impact,
``C = P_xy + (sqrt(r² - (P_z - r)²) - δ) u`` and ``C_z = r``, so ``P`` reaches
the ball's surface at ``impact_time`` and is ``δ`` = :data:`REST_OVERLAP`
inside it then. With a step ``dt`` the impact time is moved to the nearest
step state: PyBullet looks for contacts only in step states, and a kicking
foot moves a ball's diameter per step at ``dt = 1/30``; a contact not present
in any state would let the foot pass through the ball.

Ballistics, discrete and exact. PyBullet integrates a free ball with
symplectic Euler (``v += g dt`` then ``x += v dt``, no drag). From the spawn
state ``(x0, v0)``, after ``k`` steps ``v_k = v0 + k g dt`` and
``x_k = x0 + k dt v0 + g dt² k (k+1) / 2``, and within a step the ball moves
on a straight line at ``v_k``. With the impact inside step ``m``,
``t_i = t_s + (m - 1 + β) dt``, ``β ∈ (0, 1]``, require ``x_{m-1} + β dt v_m = C``
and ``v_m = V``; backwards::

    v0 = V - m g dt
    x0 = C - β dt V - (m - 1) dt v0 - g dt² (m - 1) m / 2

Both give ``x0 = C - T V + g k`` with ``k = dt² m (m-1) / 2``. The continuous
parabola (``k = T²/2``, ``dt=None``) would pass ``|g| dt T / 2`` too low in
PyBullet (5 cm for a 0.6 s flight at 1/60 s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.errors import ConfigError, SimulationError
from tracker.scenarios.balls import get_ball
from tracker.scenarios.base import BallPreset, Launch

#: World gravity, m/s² (as :data:`tracker.sim.world.GRAVITY`, without importing PyBullet).
GRAVITY = np.array([0.0, 0.0, -9.81])
#: URDF axes -> our Z-up axes, as the character adapter converts them.
_UP_TO_Z = {"z": Rotation.identity(), "y": Rotation.from_euler("x", 90.0, degrees=True)}
#: The lowest a flying ball's centre may pass, as a fraction of its radius (it may graze the ground).
_GROUND_CLEARANCE = 0.95
#: Default height of the ball's centre at launch when the approach direction is not given, m.
RELEASE_HEIGHT = 1.5
#: How deep the aim point is inside a ball at rest at the impact state, m.
REST_OVERLAP = 0.01


# -- ballistics ------------------------------------------------------------------------

def ballistic_launch(centre: Sequence[float], velocity: Sequence[float], flight_time: float,
                     dt: float | None = None, gravity: Sequence[float] = GRAVITY) -> tuple[np.ndarray, np.ndarray]:
    """Spawn state ``(x0, v0)`` so that a free ball is at ``centre`` with ``velocity`` after ``flight_time``.

    Args:
        centre: ball centre at impact ``(3,)`` m.
        velocity: velocity at impact ``(3,)`` m/s (with ``dt``: the velocity of the step that
            contains the impact, the one PyBullet reports after it).
        flight_time: s, > 0.
        dt: PyBullet's time step for the exact discrete solution (module docstring); ``None``
            for the continuous parabola.
        gravity: ``(3,)`` m/s².

    Returns:
        spawn position ``(3,)`` m and velocity ``(3,)`` m/s.
    """
    c = np.asarray(centre, dtype=float)
    vel = np.asarray(velocity, dtype=float)
    g = np.asarray(gravity, dtype=float)
    if not flight_time > 0:
        raise ValueError(f"flight_time must be positive, got {flight_time}")
    if dt is None:
        v0 = vel - g * flight_time
        return c - vel * flight_time + 0.5 * g * flight_time ** 2, v0
    m, beta = _steps(flight_time, dt)
    v0 = vel - m * g * dt
    x0 = c - beta * dt * vel - (m - 1) * dt * v0 - g * dt * dt * (m - 1) * m / 2
    return x0, v0


def free_flight(x0: Sequence[float], v0: Sequence[float], times: Sequence[float] | float, dt: float | None = None,
                gravity: Sequence[float] = GRAVITY) -> np.ndarray:
    """Centre of a free ball ``times`` s after spawning at ``(x0, v0)``: ``(T, 3)`` m (``(3,)`` for a scalar).

    With ``dt``: PyBullet's symplectic Euler, straight within a step; without: the parabola.
    """
    x0 = np.asarray(x0, dtype=float)
    v0 = np.asarray(v0, dtype=float)
    g = np.asarray(gravity, dtype=float)
    tau = np.asarray(times, dtype=float)
    ts = np.atleast_1d(tau)[:, None]
    if dt is None:
        out = x0 + v0 * ts + 0.5 * g * ts ** 2
    else:
        s = ts / dt
        k = np.floor(s + 1e-9)  # whole steps done
        frac = np.clip(s - k, 0.0, None)
        xk = x0 + k * dt * v0 + g * dt * dt * k * (k + 1) / 2
        out = xk + frac * dt * (v0 + (k + 1) * g * dt)
    return out if tau.ndim else out[0]


def _steps(flight_time: float, dt: float) -> tuple[int, float]:
    """``(m, β)`` with ``flight_time = (m - 1 + β) dt``, ``m ≥ 1``, ``β ∈ (0, 1]``."""
    if not dt > 0:
        raise ValueError(f"dt must be positive, got {dt}")
    s = flight_time / dt
    m = max(int(np.ceil(s - 1e-9)), 1)
    return m, s - (m - 1)


# -- the reference's links ----------------------------------------------------------------

def link_frames(model, reference, link: str, times: Sequence[float], kinematics=None) -> tuple[np.ndarray, Rotation]:
    """World frame of ``link`` in the reference pose at each of ``times``.

    Args:
        model: the character :class:`~tracker.character.model.Model` (for its kinematics and up axis).
        reference: the clip, a :class:`~tracker.retarget.reference.Reference` for ``model``.
        link: link name.
        times: clip times, s.
        kinematics: ``model.kinematics()``, if already built.

    Returns:
        positions ``(T, 3)`` m and orientations (:class:`Rotation` of length ``T``) in our
        Z-up axes, as :meth:`Character.link_pose` reports them for the same pose.
    """
    kin = kinematics if kinematics is not None else model.kinematics()
    if link not in kin.links:
        raise ConfigError(f"model {model.name!r} has no link {link!r}; links: {', '.join(kin.links)}")
    pos, rot = _forward(model, reference, times, kin)
    frame = _UP_TO_Z[model.up_axis]
    r = rot[link] * frame.inv() if model.up_axis != "z" else rot[link]
    return pos[link], r


def link_positions(model, reference, times: Sequence[float], kinematics=None) -> dict[str, np.ndarray]:
    """Every link's frame origin in the reference pose at each of ``times``: link -> ``(T, 3)`` m (our axes)."""
    kin = kinematics if kinematics is not None else model.kinematics()
    return dict(_forward(model, reference, times, kin)[0])


def _forward(model, reference, times: Sequence[float], kin) -> tuple[dict, dict]:
    """The model's forward kinematics at the reference's poses at ``times`` (positions in our axes)."""
    q = np.array([reference.sample(float(t))[0] for t in np.atleast_1d(times)])
    frame = _UP_TO_Z[model.up_axis]
    if model.up_axis != "z":  # our axes -> the URDF's, as the adapter loads a Y-up model
        lay = kin.layout
        q[:, 3:7] = (Rotation.from_quat(q[:, 3:7]) * frame).as_quat()
        for idx in lay.sph_q:
            q[:, idx] = (frame.inv() * Rotation.from_quat(q[:, idx]) * frame).as_quat()
    return kin.forward(q)


def aim_point(model, reference, link: str, t: float, offset: Sequence[float] = (0.0, 0.0, 0.0),
              kinematics=None) -> tuple[np.ndarray, np.ndarray]:
    """The aim point ``P`` (link origin + offset in the link frame) at clip time ``t``.

    Returns:
        ``P`` ``(3,)`` m and its reference velocity ``(3,)`` m/s (central difference over one frame).
    """
    h = 0.5 / reference.fps
    pos, rot = link_frames(model, reference, link, [t - h, t, t + h], kinematics)
    pts = pos + rot.apply(np.asarray(offset, dtype=float))
    return pts[1], (pts[2] - pts[0]) / (2 * h)


def heading(reference, t: float) -> np.ndarray:
    """Horizontal unit vector the character faces at clip time ``t`` (its base's +X), ``(3,)``."""
    fwd = Rotation.from_quat(reference.sample(float(t))[0][3:7]).apply([1.0, 0.0, 0.0])
    fwd[2] = 0.0
    n = np.linalg.norm(fwd)
    return fwd / n if n > 1e-9 else np.array([1.0, 0.0, 0.0])


# -- plans ---------------------------------------------------------------------------------

from tracker.arrays import frozen as _frozen  # noqa: E402


@dataclass(frozen=True, eq=False)
class LaunchPlan:
    """A solved launch: where and when to spawn the ball so it meets the aim point.

    Attributes:
        launch: the request.
        preset: the ball (with ``launch.mass`` applied).
        spawn_time: clip time at which the ball appears, s (on the simulation's step grid).
        impact_time: planned clip time of impact, s.
        position: spawn centre ``(3,)`` m.
        velocity: spawn velocity ``(3,)`` m/s.
        aim_point: ``P`` at impact ``(3,)`` m.
        impact_centre: planned ball centre at impact ``(3,)`` m.
        impact_velocity: planned ball velocity at impact ``(3,)`` m/s.
        dt: step the trajectory was solved for, s (``None``: continuous).
    """

    launch: Launch
    preset: BallPreset
    spawn_time: float
    impact_time: float
    position: np.ndarray
    velocity: np.ndarray
    aim_point: np.ndarray
    impact_centre: np.ndarray
    impact_velocity: np.ndarray
    dt: float | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spawn_time", float(self.spawn_time))
        object.__setattr__(self, "impact_time", float(self.impact_time))
        for name in ("position", "velocity", "aim_point", "impact_centre", "impact_velocity"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def link(self) -> str:
        return self.launch.target_link

    @property
    def stationary(self) -> bool:
        """A ball at rest on the ground."""
        return self.launch.speed == 0

    def centre_at(self, t: float | Sequence[float]) -> np.ndarray:
        """Planned centre at clip time(s) ``t`` ≥ ``spawn_time`` in free flight: ``(3,)`` or ``(T, 3)`` m."""
        tau = np.asarray(t, dtype=float) - self.spawn_time
        if self.stationary:
            return np.broadcast_to(self.position, tau.shape + (3,)).copy()
        return free_flight(self.position, self.velocity, tau, self.dt)

    def to_dict(self) -> dict:
        """JSON-able summary."""
        return {"ball": self.preset.name, "mass": self.preset.mass, "link": self.link,
                "spawn_time": self.spawn_time, "impact_time": self.impact_time, "speed": self.launch.speed,
                "position": self.position.tolist(), "velocity": self.velocity.tolist(),
                "aim_point": self.aim_point.tolist(), "impact_centre": self.impact_centre.tolist(),
                "impact_velocity": self.impact_velocity.tolist()}


def check_launch(launch: Launch) -> None:
    """Validate a :class:`Launch`'s numbers. Raises :class:`ConfigError` naming the field."""
    what = f"launch of {launch.ball!r} at {launch.target_link!r}"
    get_ball(launch.ball, launch.mass)
    if not (np.isfinite(launch.speed) and launch.speed >= 0):
        raise ConfigError(f"{what}: speed must be >= 0 m/s, got {launch.speed}")
    if not (np.isfinite(launch.flight_time) and launch.flight_time > 0):
        raise ConfigError(f"{what}: flight_time must be > 0 s, got {launch.flight_time}")
    if not np.isfinite(launch.impact_time):
        raise ConfigError(f"{what}: impact_time must be a number of seconds, got {launch.impact_time}")
    off = np.asarray(launch.offset, dtype=float)
    if off.shape != (3,) or not np.isfinite(off).all():
        raise ConfigError(f"{what}: offset must be 3 numbers (m, link frame), got {launch.offset!r}")
    shift = np.asarray(launch.shift, dtype=float)
    if shift.shape != (3,) or not np.isfinite(shift).all():
        raise ConfigError(f"{what}: shift must be 3 numbers (m, world), got {launch.shift!r}")
    if launch.direction is not None:
        d = np.asarray(launch.direction, dtype=float)
        if d.shape != (3,) or not np.isfinite(d).all() or np.linalg.norm(d) < 1e-9:
            raise ConfigError(f"{what}: direction must be a non-zero 3-vector, got {launch.direction!r}")
    if launch.release_height is not None and not (np.isfinite(launch.release_height) and launch.release_height > 0):
        raise ConfigError(f"{what}: release_height must be > 0 m, got {launch.release_height}")


def solve_launch(launch: Launch, point: np.ndarray, point_velocity: np.ndarray, facing: np.ndarray,
                 spawn_time: float, dt: float | None, release_height: float = RELEASE_HEIGHT,
                 impact_time: float | None = None) -> LaunchPlan:
    """Plan a launch given the aim point ``P`` at the impact time (module docstring).

    Args:
        launch: the request.
        point: ``P`` ``(3,)`` m.
        point_velocity: ``P``'s velocity ``(3,)`` m/s (for a ball at rest: the foot's path).
        facing: the character's horizontal heading ``(3,)`` (default approach: ``-facing``).
        spawn_time: clip time of the spawn, s (< impact time).
        dt: PyBullet step, s (``None``: continuous parabola).
        release_height: launch height of the centre when ``launch.direction`` is ``None`` and
            ``launch.release_height`` is ``None``, m.
        impact_time: when ``P`` is met, s (default ``launch.impact_time``).

    Raises:
        SimulationError: the launch cannot be made (ball under the ground, link out of reach).
    """
    check_launch(launch)
    preset = get_ball(launch.ball, launch.mass)
    r = preset.radius
    t_i = float(launch.impact_time if impact_time is None else impact_time)
    what = f"launch of {preset.name} at {launch.target_link} (impact at t = {t_i:.3f} s clip time)"
    flight = t_i - spawn_time
    if not flight > 1e-9:
        raise SimulationError(f"{what}: the ball would have to appear at t = {spawn_time:.3f} s (clip time), "
                              f"not before its impact; choose a later impact_time")
    P = np.asarray(point, dtype=float)
    if launch.release_height is not None:
        release_height = float(launch.release_height)
    if launch.speed == 0:
        u = np.array([point_velocity[0], point_velocity[1], 0.0])
        u = u / np.linalg.norm(u) if np.linalg.norm(u) > 1e-6 else np.asarray(facing, dtype=float)
        dz = P[2] - r
        if abs(dz) >= r:
            raise SimulationError(f"{what}: the aim point passes {P[2]:.3f} m above the ground, out of reach "
                                  f"of a ball at rest (radius {r} m); give the ball a speed or another time")
        centre = np.array([P[0], P[1], r]) + (np.sqrt(r * r - dz * dz) - REST_OVERLAP) * u
        return LaunchPlan(launch, preset, spawn_time, t_i, centre, np.zeros(3), P, centre, np.zeros(3), dt)
    try:
        x0, v0, centre, vel = _moving(launch, P, facing, r, t_i, flight, dt, release_height, what)
    except _Infeasible as e:
        advice = _nearest_feasible(launch, P, facing, r, t_i, flight, dt, release_height)
        raise SimulationError(f"{e}; {advice}") from None
    return LaunchPlan(launch, preset, spawn_time, t_i, x0, v0, P, centre, vel, dt)


class _Infeasible(SimulationError):
    """A moving ball's launch that its speed, flight time and launch height cannot make."""


def _moving(launch: Launch, P: np.ndarray, facing: np.ndarray, r: float, t_i: float, flight: float,
            dt: float | None, release_height: float, what: str) -> tuple[np.ndarray, ...]:
    """Spawn position, spawn velocity, impact centre and impact velocity ``(3,)`` each of a moving
    ball (:func:`solve_launch`). Raises :class:`_Infeasible` without advice."""
    if launch.direction is None:
        d = _front_direction(P, -np.asarray(facing, dtype=float), launch.speed, r, flight, dt, release_height, what)
    else:
        d = np.asarray(launch.direction, dtype=float)
        d = d / np.linalg.norm(d)
    vel = launch.speed * d
    centre = P - r * d
    if centre[2] < r * _GROUND_CLEARANCE:
        raise _Infeasible(f"{what}: the ball's centre would be {centre[2]:.3f} m high at impact, "
                          f"inside the ground; aim higher or approach from above")
    x0, v0 = ballistic_launch(centre, vel, flight, dt)
    n = max(int(np.ceil(flight / (dt or flight / 50))), 1)
    path = free_flight(x0, v0, np.linspace(0.0, flight, n + 1), dt)
    low = int(np.argmin(path[:, 2]))
    if path[low, 2] < r * _GROUND_CLEARANCE:
        raise _Infeasible(f"{what}: the ball would fly below the ground (centre {path[low, 2]:.2f} m high at "
                          f"t = {t_i - flight + flight * low / n:.3f} s clip time)")
    return x0, v0, centre, vel


#: Longest flight time :func:`_nearest_feasible` proposes, s; its step, s.
_MAX_SUGGESTED_FLIGHT, _FLIGHT_STEP = 3.0, 0.01
#: A proposed flight time must also work this much longer: the spawn moves onto the step grid, s.
_GRID_SLACK = 1.0 / 30.0


def _nearest_feasible(launch: Launch, P: np.ndarray, facing: np.ndarray, r: float, t_i: float, flight: float,
                      dt: float | None, release_height: float) -> str:
    """Advice for an infeasible moving launch: the nearest flight_time that works at its speed
    and the lowest speed that works with its flight time (each only if there is one)."""
    def works(speed: float, f: float) -> bool:
        try:
            _moving(replace(launch, speed=speed), P, facing, r, t_i, f, dt, release_height, "")
        except _Infeasible:
            return False
        return True

    tips = []
    grid = np.arange(1, int(round(_MAX_SUGGESTED_FLIGHT / _FLIGHT_STEP)) + 1) * _FLIGHT_STEP
    for f in sorted(grid, key=lambda f: (abs(f - flight), f)):
        if all(works(launch.speed, f + s) for s in (0.0, _GRID_SLACK / 2, _GRID_SLACK)):
            tips.append(f"flight_time {f:.2f} s at {launch.speed:g} m/s")
            break
    top = 100.0  # the config's largest speed
    if launch.direction is None and launch.speed < top and works(top, flight):
        lo, hi = launch.speed, top
        while hi - lo > 0.01:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if works(mid, flight) else (mid, hi)
        fast = np.ceil(hi * 10.0 - 1e-9) / 10.0
        tips.append(f"speed {fast:.1f} m/s with this flight time ({flight:.2f} s)")
    where = " or ".join(tips) if tips else "none with this speed or flight time"
    if tips and not tips[0].startswith("flight_time"):
        where += f" (no flight_time up to {_MAX_SUGGESTED_FLIGHT:g} s works at {launch.speed:g} m/s)"
    other = ("give a direction or another launch height (launch.height)" if launch.direction is None
             else "another direction")
    return f"nearest feasible: {where}; or {other}"


def _front_direction(P: np.ndarray, towards: np.ndarray, speed: float, r: float, flight: float, dt: float | None,
                     release_height: float, what: str) -> np.ndarray:
    """Unit arrival direction along horizontal ``towards`` whose launch point is ``release_height`` high.

    From ``x0_z = C_z - T V_z + g_z k`` (module docstring) with ``C = P - r d``; a few
    fixed-point steps settle ``d_z`` (``r d_z`` changes ``C_z`` by centimetres).
    """
    h = np.array([towards[0], towards[1], 0.0])
    h = h / np.linalg.norm(h)
    if dt is None:
        k = flight * flight / 2
    else:
        m, _ = _steps(flight, dt)
        k = dt * dt * m * (m - 1) / 2
    dz = 0.0
    for _ in range(50):
        vz = (P[2] - r * dz - release_height + GRAVITY[2] * k) / flight
        if abs(vz) >= speed:
            raise _Infeasible(f"{what}: a ball at {speed:g} m/s cannot fly {flight:.2f} s from "
                              f"{release_height:g} m high to the target")
        new = vz / speed
        if abs(new - dz) < 1e-13:
            break
        dz = new
    return np.sqrt(1.0 - dz * dz) * h + np.array([0.0, 0.0, dz])


def plan_launch(launch: Launch, reference, model, dt: float | None = None, start: float = 0.0,
                kinematics=None, release_height: float = RELEASE_HEIGHT, substeps: int = 1) -> LaunchPlan:
    """Solve ``launch`` against the reference clip.

    The spawn is put on the simulation's step grid ``start + k dt`` (the last grid time at or
    before ``impact_time - flight_time``, but not before ``start``), so the ball is exactly where
    the plan says at every step; the flight lasts ``flight_time`` to ``flight_time + dt``, or less
    if the run starts later.

    Args:
        launch: the request.
        reference: the clip the character tracks.
        model: the character model (kinematics and axes).
        dt: simulation step, s (``None``: continuous parabola, spawn at ``impact_time - flight_time``).
        start: clip time at which the simulation starts, s.
        kinematics: ``model.kinematics()``, if already built.
        release_height: launch height when ``launch.direction`` and ``launch.release_height`` are ``None``, m.
        substeps: physics steps per simulation step: the flight is solved for PyBullet's step
            ``dt / substeps`` (the spawn stays on the ``dt`` grid); None: 1 (a config whose
            ``sim.substeps`` is still to be chosen, :mod:`tracker.scenarios.substeps`).
    """
    check_launch(launch)
    t_i = float(launch.impact_time)
    if dt is None:
        spawn = t_i - launch.flight_time
    else:
        k = max(int(np.floor((t_i - launch.flight_time - start) / dt + 1e-6)), 0)
        spawn = start + k * dt
    if t_i > reference.duration + 1e-9:
        raise SimulationError(f"launch of {launch.ball} at {launch.target_link}: impact_time {t_i:.3f} s (clip time) is after "
                              f"the clip's end ({reference.duration:.3f} s)")
    if launch.speed == 0 and dt is not None:  # meet the link in a step state (module docstring)
        t_i = start + round((t_i - start) / dt) * dt
    P, Pdot = aim_point(model, reference, launch.target_link, t_i, launch.offset, kinematics)
    P = P + np.asarray(launch.shift, dtype=float)
    h = None if dt is None else dt / (substeps or 1)
    return solve_launch(launch, P, Pdot, heading(reference, t_i), spawn, h, release_height, t_i)
