"""Simulate a keyframe file: two cross-faded servos (Tan 2011 §4.2) or the spline, and measure it.

:func:`build_simulation` sets up the loop of :mod:`tracker.sim.simulation` with
the :class:`~tracker.keyframes.track.KeyframeTrack` as its source, the
keyframe gains ``k_p = kp_per_kg · m_sub`` and ``k_d = kd_ratio · k_p · dt``
(the paper's 130 and 10 by default; ``m_sub`` is the mass a DOF supports, the
whole mass on a ``keyed`` root) and ``keyframe_spd`` or ``keyframe_pd``.
:func:`key_errors` measures the pose at each key time; :func:`tail_motion`
the secondary motion of unkeyed joints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.control.base import Gains
from tracker.errors import ConfigError
from tracker.keyframes.file import KeyframeFile
from tracker.keyframes.profile import GainProfile
from tracker.keyframes.track import KeyframeTrack

#: ``--controller`` name -> registered controller.
CONTROLLERS = {"spd": "keyframe_spd", "pd": "keyframe_pd", "timed": "timed_pd"}


@dataclass(frozen=True)
class KeyframeOptions:
    """How to run a keyframe file (``None``: the file's value).

    Attributes:
        controller: ``spd`` or ``pd`` (two servos each).
        dt: time step, s.
        profile: ``poly`` or ``linear``.
        power: exponent of ``poly``.
        kp_per_kg: kp per kg of supported mass.
        kd_ratio: kd as a multiple of ``kp·dt``.
    """

    controller: str = "spd"
    dt: float = 1.0 / 60.0
    profile: str | None = None
    power: float | None = None
    kp_per_kg: float | None = None
    kd_ratio: float | None = None

    def resolved(self, kf: KeyframeFile) -> "KeyframeOptions":
        if self.controller not in CONTROLLERS:
            raise ConfigError(f"keyframe controller {self.controller!r} is not one of: {', '.join(CONTROLLERS)}")
        if not (np.isfinite(self.dt) and self.dt > 0):
            raise ConfigError(f"time step must be positive, got {self.dt!r}")
        out = replace(
            self,
            profile=self.profile or kf.profile,
            power=kf.power if self.power is None else self.power,
            kp_per_kg=kf.kp_per_kg if self.kp_per_kg is None else self.kp_per_kg,
            kd_ratio=kf.kd_ratio if self.kd_ratio is None else self.kd_ratio,
        )
        if not out.kp_per_kg > 0 or not out.kd_ratio >= 0:
            raise ConfigError(f"keyframe gains must be positive: kp_per_kg {out.kp_per_kg!r}, "
                              f"kd_ratio {out.kd_ratio!r}")
        GainProfile(out.profile, out.power)  # validates
        return out


def keyframe_gains(kf: KeyframeFile, character, opts: KeyframeOptions, root_gains: Gains | None = None) -> Gains:
    """``kp = kp_per_kg · m_sub``, ``kd = kd_ratio · kp · dt`` per DOF ``(nv,)``; model torque limits.

    A ``keyed`` root gets ``kp_per_kg`` times the whole mass on all six DOFs (no
    limit); an ``anchored`` root keeps ``root_gains``' base entries.
    """
    kp = opts.kp_per_kg * character.supported_mass_vector()
    if kf.gain_scale:
        lay = character.layout
        kp *= lay.per_dof({n: kf.gain_scale.get(n, 1.0) for n in lay.names}, base=1.0)
    kd = opts.kd_ratio * kp * opts.dt
    tau_max = character.torque_limit_vector()
    tau_max[0:6] = np.inf
    if kf.root == "anchored" and root_gains is not None:
        kp[0:6], kd[0:6] = root_gains.kp[0:6], root_gains.kd[0:6]
    return Gains(kp, kd, tau_max)


def build_simulation(kf: KeyframeFile, opts: KeyframeOptions = KeyframeOptions(), *, world=None, gui: bool = False):
    """The loop for ``kf``: returns ``(Simulation, KeyframeTrack, Gains)``.

    ``world`` defaults to a new headless PyBullet world with the file's gravity.
    """
    from tracker.character.model import load_model
    from tracker.sim.simulation import Simulation, SimOptions
    from tracker.sim.world import World, WorldSettings

    opts = opts.resolved(kf)
    model = load_model(kf.model)
    track = KeyframeTrack.build(kf, model, GainProfile(opts.profile, opts.power))
    if world is None:
        world = World(WorldSettings(dt=opts.dt), gui=gui)
    if not kf.gravity:
        world.set_gravity((0.0, 0.0, 0.0))
    if opts.controller == "timed":  # Allen et al. 2007: each key met at its time (tracker.control.timed_pd)
        from tracker.control.timed_pd import Keyframes

        keys = Keyframes(track.key_q, track.key_v, track.times)
        sim_opts = SimOptions(controller="timed_pd", dt=opts.dt, root="anchored", target_velocity="ref",
                              start=0.0, controller_options=(("keys", keys),))
    else:
        sim_opts = SimOptions(controller=CONTROLLERS[opts.controller], dt=opts.dt, root="anchored",
                              target_velocity="zero", start=0.0)
    sim = Simulation(model, track, sim_opts, world=world)
    gains = keyframe_gains(kf, sim.character, opts, sim.base_gains)
    sim.gains_fn = lambda t, base, g=gains: g
    sim.gains = gains
    return sim, track, gains


# -- measurements ---------------------------------------------------------------------------


def _rows_at(rec, times: np.ndarray) -> np.ndarray:
    """Index of the recorded step closest to each time (-1 if the run stopped before it)."""
    if rec.n_steps == 0:
        return np.full(len(times), -1)
    idx = np.abs(rec.t[None, :] - np.asarray(times)[:, None]).argmin(axis=1)
    ok = np.abs(rec.t[idx] - times) <= 0.5 * rec.dt + 1e-9
    return np.where(ok, idx, -1)


def pose_error(layout, q: np.ndarray, q_key: np.ndarray) -> dict:
    """Root position (m) and orientation (rad) error, mean and max joint error (rad) of ``q`` vs ``q_key``."""
    from tracker.analysis.metrics import joint_errors

    je = joint_errors(layout, q[None], q_key[None])[0] if layout.joints else np.zeros(1)
    rot = Rotation.from_quat(q[3:7]) * Rotation.from_quat(q_key[3:7]).inv()
    return {"root_position_m": float(np.linalg.norm(q[0:3] - q_key[0:3])),
            "root_orientation_rad": float(rot.magnitude()),
            "joint_mean_rad": float(je.mean()), "joint_max_rad": float(je.max())}


def key_errors(rec, track: KeyframeTrack) -> list[dict]:
    """The simulated pose's error at each key time (after the first key); ``None`` fields if not reached.

    Also ``closest_m`` / ``closest_lag_s``: the root's closest pass by the key position within half
    an interval either side of the key time, and when (relative to the key time).
    """
    out = []
    rows = _rows_at(rec, track.times)
    for k, (t, i) in enumerate(zip(track.times, rows)):
        if k == 0:
            continue
        row = {"key": k, "t": float(t)}
        if i < 0:
            row.update({"root_position_m": None, "root_orientation_rad": None,
                        "joint_mean_rad": None, "joint_max_rad": None})
        else:
            row.update(pose_error(track.layout, rec.q[i], track.key_q[k]))
        # Closest pass of the root by the key's position within half an interval either side: how
        # late (or early) the key is met, if at all.
        lo = t - 0.5 * (t - track.times[k - 1])
        hi = t + 0.5 * ((track.times[k + 1] - t) if k + 1 < len(track.times) else track.file.hold)
        near = (rec.t >= lo - 1e-9) & (rec.t <= hi + 1e-9)
        if near.any():
            d = np.linalg.norm(rec.q[near, 0:3] - track.key_q[k, 0:3], axis=1)
            j = int(np.argmin(d))
            row["closest_m"], row["closest_lag_s"] = float(d[j]), float(rec.t[near][j] - t)
        else:
            row["closest_m"] = row["closest_lag_s"] = None
        out.append(row)
    return out


def key_spacing(track: KeyframeTrack) -> np.ndarray:
    """Root distance from each key to the previous one ``(K-1,)`` m (the scale for key errors)."""
    return np.linalg.norm(np.diff(track.key_q[:, 0:3], axis=0), axis=1)


def unkeyed_joints(track: KeyframeTrack) -> tuple[str, ...]:
    """Joints that every key leaves at the same value (the mouse's tail)."""
    return tuple(s.name for s in track.layout.joints if np.ptp(track.key_q[:, s.q], axis=0).max() == 0)


def tail_motion(rec, track: KeyframeTrack, joints: tuple[str, ...] | None = None) -> dict:
    """Secondary motion of joints the keys leave at one value: largest deflection from the keyed
    value (rad) during the keyed motion, and its decay after the last key.

    Returns ``peak_rad`` (max over the joints and the keyed span), ``at_last_key_rad``,
    ``end_rad`` (at the end of the hold) and ``decay`` (end / at last key).
    """
    from tracker.analysis.metrics import joint_errors

    lay = track.layout
    names = joints or unkeyed_joints(track)
    if not names or rec.n_steps == 0:
        return {"joints": list(names), "peak_rad": 0.0, "at_last_key_rad": 0.0, "end_rad": 0.0, "decay": 0.0}
    cols = [k for k, s in enumerate(lay.joints) if s.name in names]
    held = np.broadcast_to(track.key_q[-1], rec.q.shape)
    dev = joint_errors(lay, rec.q, held)[:, cols].max(axis=1)
    last = int(_rows_at(rec, track.times[-1:])[0])
    if last < 0:  # no step within dt/2 of the last key: the first step after it, or the run's last step
        # (a key before the first step's end, or a run that stopped early); never NaN in metrics.json
        after = np.flatnonzero(rec.t >= track.times[-1])
        last = int(after[0]) if after.size else rec.n_steps - 1
    peak = float(dev[: last + 1].max())
    at_last = float(dev[last])
    end = float(dev[-1])
    return {"joints": list(names), "peak_rad": peak, "at_last_key_rad": at_last, "end_rad": end,
            "decay": end / at_last if at_last > 0 else 0.0}


def spline_tail_motion(track: KeyframeTrack, dt: float, joints: tuple[str, ...] | None = None) -> float:
    """Largest deflection (rad) of those joints in the cubic-spline interpolation (the paper: none)."""
    from tracker.analysis.metrics import joint_errors

    lay = track.layout
    names = joints or unkeyed_joints(track)
    if not names:
        return 0.0
    cols = [k for k, s in enumerate(lay.joints) if s.name in names]
    ts = np.arange(0.0, track.duration + 1e-9, dt)
    q = np.array([track.sample(t)[0] for t in ts])
    return float(joint_errors(lay, q, np.broadcast_to(track.key_q[0], q.shape))[:, cols].max())


def run_keyframes(kf: KeyframeFile, opts: KeyframeOptions = KeyframeOptions(), *, progress: bool = False):
    """Simulate ``kf`` to the end of its hold; returns ``(Recording, KeyframeTrack, Gains)``."""
    sim, track, gains = build_simulation(kf, opts)
    try:
        rec = sim.run(track.duration, progress=progress)
    finally:
        sim.close()
    return rec, track, gains
