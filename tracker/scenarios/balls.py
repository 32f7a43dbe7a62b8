"""Ball presets (a registry) and ball bodies in a PyBullet client.

Presets carry official masses and radii (FIFA size 5, FIVB indoor, FIBA size 7)
and contact parameters chosen so that the balls behave like the real ones in
*our* world: PyBullet multiplies the restitutions (and the friction
coefficients) of the two bodies in a contact, and the world's ground has
restitution 1 (:mod:`tracker.sim.world`), so ``restitution`` here is the ball's
coefficient against the ground. The character's links have restitution 0, so
ball–body contacts are inelastic in the normal direction (the body, not the
ball, absorbs the bounce; the ball still leaves with the limb's velocity).

Restitution values are PyBullet parameters, not textbook coefficients: with
the ball's CCD sphere (below) and ``dt`` = 1/30..1/60 s a drop rebounds
slightly higher than the nominal coefficient predicts (the contact resolves
after the step's gravity). They are calibrated on the official drop tests:

- basketball (FIBA): dropped from 1.8 m (ball bottom), must rebound to
  1.2–1.4 m (ball top). ``restitution = 0.73`` rebounds to 1.29–1.37 m.
- soccer ball (FIFA Quality Pro): dropped from 2 m (ball bottom), rebounds to
  1.35–1.55 m (ball bottom); ``0.81`` rebounds to 1.42–1.52 m.

Rolling friction is PyBullet's (a lever arm, m): the resisting torque is
``c · N`` with ``c = rolling_friction · ground_friction`` (Bullet combines
``r_a f_b + r_b f_a``; the ground's own rolling friction is 0). For a
dimensionless rolling-resistance coefficient ``C_rr`` take ``c = C_rr · r``.

The ball is a maximal-coordinate rigid body (not a one-link multibody) so that
Bullet's continuous collision detection works: at 15 m/s a ball moves 0.25 m
per 1/60 s step, more than a forearm is thick, and without CCD it can pass
through a limb between two steps. Its inertia is the hollow sphere's
``I = 2/3 m r²`` (all three balls are air-filled shells; the medicine ball is
thick-walled rubber, approximated the same way), set explicitly because
PyBullet computes a solid sphere's ``2/5 m r²`` from the shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from tracker.errors import ConfigError
from tracker.scenarios.base import BallPreset
from tracker.quiet import quiet_stdio  # imports pybullet silently first

import pybullet as p  # noqa: E402  (after the silent import)

#: name -> preset. Fill it with :func:`register_ball`.
BALLS: dict[str, BallPreset] = {}

#: CCD sphere radius as a fraction of the ball radius: the ball may sink this
#: much less than its radius into a body before CCD stops it (1.1–1.2 cm).
CCD_FRACTION = 0.9


def register_ball(factory: Callable[[], BallPreset]) -> Callable[[], BallPreset]:
    """Decorator: register the preset ``factory()`` returns under its ``name``.

    Raises:
        ValueError: if a different preset already has that name.
    """
    preset = factory()
    old = BALLS.get(preset.name)
    if old is not None and old != preset:
        raise ValueError(f"ball preset {preset.name!r} is already registered with other values")
    BALLS[preset.name] = preset
    return factory


def ball_names() -> tuple[str, ...]:
    """Registered preset names, sorted."""
    return tuple(sorted(BALLS))


def get_ball(name: str, mass: float | None = None) -> BallPreset:
    """The preset ``name``, optionally with another ``mass`` (kg).

    Raises:
        ConfigError: unknown name (the message lists the valid ones) or a non-positive mass.
    """
    try:
        preset = BALLS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown ball {name!r}; valid balls: {', '.join(ball_names())}") from None
    if mass is None:
        return preset
    if not (isinstance(mass, (int, float)) and np.isfinite(mass) and mass > 0):
        raise ConfigError(f"ball {name!r}: mass must be a positive number of kg, got {mass!r}")
    return replace(preset, mass=float(mass))


def hollow_sphere_inertia(mass: float, radius: float) -> float:
    """Moment of inertia of a thin spherical shell about any diameter, ``2/3 m r²`` (kg·m²)."""
    return 2.0 / 3.0 * mass * radius * radius


# -- the presets -------------------------------------------------------------------

@register_ball
def soccer() -> BallPreset:
    """FIFA size 5: circumference 68–70 cm, 410–450 g (FIFA Laws of the Game, law 2).

    Restitution: FIFA Quality Pro rebound (see the module docstring). Rolling
    friction 0.005 m ≈ ``C_rr`` 0.045 on grass.
    """
    return BallPreset("soccer", mass=0.43, radius=0.11, restitution=0.81, lateral_friction=0.6,
                      rolling_friction=0.005, spinning_friction=0.002, colour=(0.95, 0.95, 0.95, 1.0))


@register_ball
def soccer_heavy() -> BallPreset:
    """The paper's "very heavy" soccer ball: a 4 kg rubber medicine ball of size 5.

    Commercial rubber medicine balls of 3–5 kg have a 22–23 cm diameter, so a
    4 kg ball of the soccer ball's radius is a real object, and at 9.3x the
    mass it stops a kicking foot visibly (Tan et al. 2011, §4.1). Dead-ish
    rubber: restitution 0.45, grippy (0.8), rolls poorly (0.01 m).
    """
    return BallPreset("soccer_heavy", mass=4.0, radius=0.11, restitution=0.45, lateral_friction=0.8,
                      rolling_friction=0.01, spinning_friction=0.005, colour=(0.25, 0.2, 0.18, 1.0))


@register_ball
def volleyball() -> BallPreset:
    """FIVB indoor: circumference 65–67 cm (r 0.105 m), 260–280 g, 0.30–0.325 kg/cm².

    FIVB gives no rebound test; 0.72 (nominal 0.75–0.78 in the sim) is what
    pressurised volleyballs measure on a hard floor. Smooth synthetic leather:
    friction 0.5; indoor floor: rolling 0.002 m.
    """
    return BallPreset("volleyball", mass=0.27, radius=0.105, restitution=0.72, lateral_friction=0.5,
                      rolling_friction=0.002, spinning_friction=0.001, colour=(0.98, 0.85, 0.2, 1.0))


@register_ball
def basketball() -> BallPreset:
    """FIBA size 7: circumference 74.9–78 cm (r 0.12 m), 567–650 g.

    Restitution: the FIBA drop test (module docstring). Pebbled leather is
    grippy (0.8), hardwood rolling 0.002 m.
    """
    return BallPreset("basketball", mass=0.62, radius=0.12, restitution=0.73, lateral_friction=0.8,
                      rolling_friction=0.002, spinning_friction=0.001, colour=(0.9, 0.45, 0.1, 1.0))


# -- the paper's six variants --------------------------------------------------------

@dataclass(frozen=True)
class BallVariant:
    """One of Tan et al.'s six ball examples: a preset and its approach speed.

    Attributes:
        name: variant name (also the scenario config's name).
        ball: preset name.
        speed: approach speed at impact, m/s (0: a ball at rest in the foot's path).
        note: why this speed.
    """

    name: str
    ball: str
    speed: float
    note: str


#: The six variants of Tan et al. 2011 §4.1 (light/heavy are presets, slow/fast are speeds).
VARIANTS: dict[str, BallVariant] = {v.name: v for v in (
    BallVariant("soccer_light", "soccer", 0.0, "a regulation ball at rest, kicked"),
    BallVariant("soccer_heavy", "soccer_heavy", 0.0, "a 4 kg medicine ball at rest, kicked"),
    BallVariant("volleyball_slow", "volleyball", 6.0, "a free ball / easy pass arrives at 5-8 m/s"),
    BallVariant("volleyball_fast", "volleyball", 15.0, "a served ball arrives at 15-20 m/s"),
    BallVariant("basketball_slow", "basketball", 4.0, "a soft two-handed toss"),
    BallVariant("basketball_fast", "basketball", 9.0, "a hard chest pass arrives at 8-10 m/s"),
)}


def get_variant(name: str) -> BallVariant:
    """The variant ``name``. Raises :class:`ConfigError` listing the valid names."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown ball variant {name!r}; valid variants: {', '.join(VARIANTS)}") from None


# -- bodies ------------------------------------------------------------------------

def spawn_ball(client: int, preset: BallPreset, position: Sequence[float],
               velocity: Sequence[float] = (0.0, 0.0, 0.0), angular_velocity: Sequence[float] = (0.0, 0.0, 0.0),
               ccd: bool = True) -> int:
    """Create a ball body in PyBullet client ``client`` and return its body id.

    Args:
        client: a connected PyBullet client.
        preset: mass, radius and contact parameters.
        position: centre, world, m ``(3,)``.
        velocity: linear velocity, m/s ``(3,)``.
        angular_velocity: rad/s ``(3,)``.
        ccd: continuous collision detection with a sphere of ``CCD_FRACTION · r``; contacts at a
            positive distance are ignored by the solver (``contactProcessingThreshold = 0``), which
            keeps Bullet's speculative contacts from eating the bounce.

    The hollow-sphere inertia is set with ``changeDynamics`` (with the mass in the same call:
    PyBullet zeroes a rigid body's mass otherwise). PyBullet applies a changed inertia to a
    maximal-coordinate body's world inertia tensor at the end of its first step; a ball spawned
    in free flight (or at rest) feels no torque in that step. Sleeping is disabled, no
    damping, no air drag.
    """
    pos = _vec3(position, "position")
    vel = _vec3(velocity, "velocity")
    ang = _vec3(angular_velocity, "angular_velocity")
    m, r = float(preset.mass), float(preset.radius)
    if not (m > 0 and r > 0):
        raise ConfigError(f"ball {preset.name!r}: mass and radius must be positive, got {m} kg, {r} m")
    with quiet_stdio():
        col = p.createCollisionShape(p.GEOM_SPHERE, radius=r, physicsClientId=client)
        vis = p.createVisualShape(p.GEOM_SPHERE, radius=r, rgbaColor=list(preset.colour), physicsClientId=client)
        body = p.createMultiBody(m, col, vis, pos.tolist(), useMaximalCoordinates=True, physicsClientId=client)
    inertia = hollow_sphere_inertia(m, r)
    p.changeDynamics(
        body, -1, mass=m, localInertiaDiagonal=[inertia] * 3, restitution=preset.restitution,
        lateralFriction=preset.lateral_friction, rollingFriction=preset.rolling_friction,
        spinningFriction=preset.spinning_friction, linearDamping=0.0, angularDamping=0.0,
        activationState=p.ACTIVATION_STATE_DISABLE_SLEEPING, physicsClientId=client)
    if ccd:
        p.changeDynamics(body, -1, ccdSweptSphereRadius=CCD_FRACTION * r, contactProcessingThreshold=0.0,
                         physicsClientId=client)
    p.resetBaseVelocity(body, vel.tolist(), ang.tolist(), physicsClientId=client)
    return body


def remove_ball(client: int, body: int) -> None:
    """Remove a ball body (no-op if the client is gone)."""
    if p.isConnected(client):
        p.removeBody(body, physicsClientId=client)


def ball_state(client: int, body: int) -> tuple[np.ndarray, np.ndarray]:
    """Centre position ``(3,)`` m and linear velocity ``(3,)`` m/s of a ball body."""
    pos = p.getBasePositionAndOrientation(body, physicsClientId=client)[0]
    vel = p.getBaseVelocity(body, physicsClientId=client)[0]
    return np.array(pos, dtype=float), np.array(vel, dtype=float)


def _vec3(x: Sequence[float], what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.isfinite(a).all():
        raise ValueError(f"{what} must be 3 finite numbers, got {x!r}")
    return a
