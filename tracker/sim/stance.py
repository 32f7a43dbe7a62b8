"""Authored standing poses (``data/poses/*.yaml``) turned into a constant :class:`Reference`.

A pose file gives joint angles by name; the rest is solved so the pose can stand on a
free root: each ankle is set so its sole is flat (the foot keeps its zero-pose
orientation), the whole body is leaned about the ankles (root pitch) until the centre
of mass is over the centre of the support polygon (``lean: solve``), and the root is
lowered until the lowest sole touches ``z = 0``. The format is documented in
``data/poses/stand.yaml``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.errors import ConfigError
from tracker.paths import DATA_DIR
from tracker.retarget.reference import Reference
from tracker.yamlsafe import read_yaml_file

#: The built-in stance ``tracker push stand`` tracks.
STAND = DATA_DIR / "poses" / "stand.yaml"
_KEYS = ("kind", "model", "lean", "height", "joints")


def resolve_pose(spec: str | Path) -> Path:
    """``stand`` (the built-in stance) or a pose file path."""
    return STAND if str(spec) == "stand" else Path(spec)


def is_pose_file(path: str | Path) -> bool:
    """Whether ``path`` is a YAML pose file (``kind: pose``) rather than an experiment config."""
    try:  # a FIFO, a device, a folder or a huge file is no pose file (and is never opened)
        data = read_yaml_file(path, "pose", error=ConfigError)
    except ConfigError:
        return False
    return isinstance(data, dict) and data.get("kind") == "pose"


#: How long a pose's constant reference lasts, s (its two frames are this far apart).
POSE_DURATION = 600.0


def load_pose(path: str | Path, fps: float = 1.0 / POSE_DURATION) -> Reference:
    """The stance of pose file ``path`` (cached per file version); see :func:`_load_pose`."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read pose file ({exc.strerror})") from None
    return _load_pose_cached(str(path.resolve()), mtime, float(fps))


@lru_cache(maxsize=8)
def _load_pose_cached(path: str, mtime: float, fps: float) -> Reference:
    del mtime  # part of the cache key only
    return _load_pose(Path(path), fps)


def _load_pose(path: Path, fps: float = 1.0 / POSE_DURATION) -> Reference:
    """The stance of pose file ``path`` as a two-frame constant reference (zero velocity) lasting
    ``1 / fps`` s (default :data:`POSE_DURATION`), so a run or a ball aimed at it has time.

    Raises:
        ConfigError: an unreadable file, an unknown key or joint, a wrong value, or an ankle
            that cannot keep its sole flat within the joint limits.
    """
    from tracker.character.model import load_model

    path = Path(path)
    raw = read_yaml_file(path, "pose", error=ConfigError)  # type, size, nesting and aliases bounded
    if not isinstance(raw, dict) or raw.get("kind") != "pose":
        raise ConfigError(f"{path}: not a pose file (it needs 'kind: pose')")
    for k in raw:
        if k not in _KEYS:
            raise ConfigError(f"{path}: {k}: unknown key (valid: {', '.join(_KEYS)})")
    model = load_model(raw.get("model", "humanoid"))
    lay = model.layout
    q = lay.neutral_q()
    joints = raw.get("joints") or {}
    if not isinstance(joints, dict):
        raise ConfigError(f"{path}: joints: expected a mapping joint -> degrees")
    for name, value in joints.items():
        if name not in lay:
            raise ConfigError(f"{path}: joints.{name}: no such joint in model {model.name!r} "
                              f"(joints: {', '.join(lay.names)})")
        s = lay[name]
        try:
            a = np.radians(np.asarray(value, dtype=float))
        except (TypeError, ValueError):
            a = np.array([np.nan])
        want = (3,) if s.kind == "spherical" else ()
        if a.shape != want or not np.isfinite(a).all():
            raise ConfigError(f"{path}: joints.{name}: expected "
                              f"{'[x, y, z] degrees' if s.kind == 'spherical' else 'one angle in degrees'}, "
                              f"got {value!r}")
        q[s.q] = Rotation.from_rotvec(a).as_quat() if s.kind == "spherical" else a
    lean = raw.get("lean", "solve")
    if lean != "solve" and (isinstance(lean, bool) or not isinstance(lean, (int, float))):
        raise ConfigError(f"{path}: lean: expected 'solve' or degrees, got {lean!r}")
    height = raw.get("height", 0.0)
    if isinstance(height, bool) or not isinstance(height, (int, float)) or not np.isfinite(height) or height < 0:
        raise ConfigError(f"{path}: height: expected metres >= 0 above the ground, got {height!r}")
    q = _solve_stance(model, q, None if lean == "solve" else np.radians(float(lean)), path)
    q[2] += float(height)
    qs = np.stack([q, q])
    return Reference(qs, np.zeros((2, lay.nv)), fps, tuple((s.name, s.kind) for s in lay.joints),
                     model=model.name, source=str(path))


def _solve_stance(model, q: np.ndarray, lean: float | None, path: Path) -> np.ndarray:
    """Flat soles, the lean, and the root height of pose ``q`` (a private PyBullet client)."""
    import pybullet as p

    from tracker.character.character import Character
    from tracker.quiet import quiet_stdio

    with quiet_stdio():
        cid = p.connect(p.DIRECT)
    try:
        with quiet_stdio():
            char = Character.load(cid, model)
        feet = model.feet
        ankles = {f: _joint_of(char, f) for f in feet}
        shins = {f: char._parent_link[f] for f in feet}
        zero = char.link_poses(list(feet) + list(shins.values()))
        # Ankle at zero: foot = shin * J (J the joint frame's fixed rotation); flat again: q_a = J⁻¹ S⁻¹ F0.
        rel = {f: Rotation.from_quat(zero[shins[f]][1]).inv() * Rotation.from_quat(zero[f][1]) for f in feet}
        lay = char.layout

        def pose(theta: float) -> tuple[np.ndarray, float, np.ndarray]:
            x = q.copy()
            x[3:7] = Rotation.from_euler("y", theta).as_quat()
            for f in feet:
                x[lay[ankles[f]].q] = Rotation.identity().as_quat() if lay[ankles[f]].kind == "spherical" else 0.0
            char.reset_state(x)
            poses = char.link_poses(list(shins.values()))
            for f in feet:
                s = lay[ankles[f]]
                if s.kind != "spherical":
                    raise ConfigError(f"{path}: the ankle {ankles[f]!r} is not a ball joint; cannot flatten the sole")
                x[s.q] = (rel[f].inv() * Rotation.from_quat(poses[shins[f]][1]).inv()
                          * Rotation.from_quat(zero[f][1])).as_quat()
            char.reset_state(x)
            lo = np.array([p.getAABB(char.body_id, char.link_index(f), physicsClientId=cid)[0] for f in feet])
            hi = np.array([p.getAABB(char.body_id, char.link_index(f), physicsClientId=cid)[1] for f in feet])
            centre = ((lo + hi) / 2.0).mean(axis=0)[:2]
            return x, float(lo[:, 2].min()), char.center_of_mass()[:2] - centre

        theta = 0.0 if lean is None else lean
        x, low, err = pose(theta)
        if lean is None:  # secant on the CoM's forward offset
            t0, e0 = theta, err[0]
            t1 = 0.02
            for _ in range(30):
                x, low, err = pose(t1)
                if abs(err[0]) < 1e-7 or err[0] == e0:
                    break
                t0, t1, e0 = t1, t1 - err[0] * (t1 - t0) / (err[0] - e0), err[0]
            theta = t1
        for f in feet:
            rv = Rotation.from_quat(x[lay[ankles[f]].q]).as_rotvec()
            lim = model.spherical_limits().get(ankles[f])
            if lim is not None and ((rv < lim[0] - 1e-9).any() or (rv > lim[1] + 1e-9).any()):
                raise ConfigError(f"{path}: joint {ankles[f]}: the flat-sole angle {np.degrees(rv).round(1)} deg "
                                  f"is outside its limits")
        margin = _aabb_margin(p, char, cid)
        x[2] -= low - margin
        return x
    finally:
        p.disconnect(cid)


def _joint_of(char, link: str) -> str:
    """The actuated joint whose child is ``link``."""
    for joint, child in char._child_of_joint.items():
        if child == link and joint in char.layout:
            return joint
    raise ConfigError(f"link {link!r} has no actuated joint")


def _aabb_margin(p, char, cid: int) -> float:
    """How far PyBullet's AABB of the feet reaches below the soles (its collision margin), m: the
    lowest foot AABB in the model's zero pose, whose soles are at ``z = 0`` by definition."""
    char.reset_state(char.standing_q())
    return min(p.getAABB(char.body_id, char.link_index(f), physicsClientId=cid)[0][2] for f in char.model.feet)


def stand_simulation(pose: str | Path = "stand", *, dt: float = 1.0 / 60.0, balance=None, gui: bool = False):
    """A free-root :class:`~tracker.sim.simulation.Simulation` tracking a pose file (default the built-in
    stance) with SPD and the model's gains; ``balance`` a
    :class:`~tracker.control.balance.BalanceOptions` or None (no feedback)."""
    from tracker.character.model import load_model
    from tracker.sim.simulation import SimOptions, Simulation

    ref = load_pose(resolve_pose(pose))
    return Simulation(load_model(ref.model), ref, SimOptions(dt=dt, root="free", balance=balance), gui=gui)
