"""Metrics of a run, defined once (DESIGN.md) and reused by tests, results and benchmarks."""

from __future__ import annotations

import numpy as np

from tracker.character.layout import Layout

EE_LINKS = ("left_hand", "right_hand", "left_foot", "right_foot", "head")


def joint_errors(layout: Layout, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray:
    """Per-step, per-joint tracking error ``(N, J)`` rad.

    Spherical joints: geodesic angle of ``q_ref⁻¹ q``; revolute: ``|Δθ|``.
    """
    q = np.atleast_2d(q)
    q_ref = np.atleast_2d(q_ref)
    out = np.zeros((len(q), len(layout.joints)))
    for k, s in enumerate(layout.joints):
        if s.kind == "spherical":
            dot = np.abs(np.sum(q[:, s.q] * q_ref[:, s.q], axis=1)).clip(max=1.0)
            out[:, k] = 2 * np.arccos(dot)
        else:
            out[:, k] = np.abs(q[:, s.q.start] - q_ref[:, s.q.start])
    return out


def position_errors(kin, q: np.ndarray, q_ref: np.ndarray, end_effectors=None) -> dict[str, np.ndarray]:
    """World distance ``(N,)`` m between simulated and reference link origins, plus ``root``.

    Args:
        end_effectors: name -> link (a model's ``end_effectors``); default our humanoid's links.
    """
    pos, _ = kin.forward(q)
    pos_r, _ = kin.forward(q_ref)
    out = {"root": np.linalg.norm(q[:, 0:3] - q_ref[:, 0:3], axis=1)}
    ees = end_effectors or {name: name for name in EE_LINKS}
    for name, link in ees.items():
        if link in pos:
            out[name] = np.linalg.norm(pos[link] - pos_r[link], axis=1)
    return out


def tracking_metrics(rec, kin=None, fall_height: float = 0.5, end_effectors=None, feet=None) -> dict:
    """The metrics of a :class:`~tracker.sim.recording.Recording` as a JSON-able dict.

    Keys: ``joint_error_mean_rad``, ``joint_error_max_rad``, ``joint_error_by_joint``,
    ``root_error_mean_m``, ``ee_error_mean_m`` (with ``kin``), ``torque_saturation``
    (fraction of actuated DOF-steps at the limit), ``effort_mean_nm`` (mean |tau|
    over actuated DOFs), ``diverged``, ``fell``, ``fell_at_s`` and ``fall_reason`` (the
    simulation's verdict, :mod:`tracker.sim.fall`; a recording without one: root below
    ``fall_height`` times its reference height), ``steps``, ``sim_time_s``; with ``kin`` and ``feet`` (foot links) also
    ``foot_penetration_max_m`` and ``foot_penetration_p95_m``: how deep the feet's collision
    shapes went below the ground (z = 0), the deepest and the 95th percentile over the steps
    (a contact solver that lets a foot sink centimetres is not physics to trust).
    """
    lay = rec.layout
    n = rec.n_steps
    out: dict = {"steps": int(n), "sim_time_s": float(n * rec.dt), "diverged": bool(rec.diverged)}
    if n == 0:
        out.update(joint_error_mean_rad=float("nan"), joint_error_max_rad=float("nan"),
                   root_error_mean_m=float("nan"), fell=False)
        return out
    good = np.isfinite(rec.q).all(axis=1)
    q, q_ref = rec.q[good], rec.q_ref[good]
    err = joint_errors(lay, q, q_ref)
    out["joint_error_mean_rad"] = float(err.mean()) if err.size else float("nan")
    out["joint_error_max_rad"] = float(err.max()) if err.size else float("nan")
    out["joint_error_by_joint"] = {s.name: float(err[:, k].mean()) for k, s in enumerate(lay.joints)}
    out["root_error_mean_m"] = float(np.linalg.norm(q[:, 0:3] - q_ref[:, 0:3], axis=1).mean())
    if kin is not None:
        pe = position_errors(kin, q, q_ref, end_effectors)
        out["ee_error_mean_m"] = float(np.mean([pe[k].mean() for k in pe if k != "root"]))
        out["ee_error_by_link"] = {k: float(v.mean()) for k, v in pe.items() if k != "root"}
        feet = [f for f in feet or () if f in kin.shapes]
        if feet:
            depth = np.maximum(-kin.lowest_point(q, feet), 0.0)
            out["foot_penetration_max_m"] = float(depth.max())
            out["foot_penetration_p95_m"] = float(np.percentile(depth, 95))
    act = slice(6, None) if lay.has_base else slice(None)
    tau = rec.tau[good][:, act]
    lim = rec.tau_max[act]
    finite = np.isfinite(lim)
    sat = np.abs(tau[:, finite]) >= lim[finite] * (1 - 1e-6)
    out["torque_saturation"] = float(sat.mean()) if sat.size else 0.0
    out["effort_mean_nm"] = float(np.abs(tau).mean()) if tau.size else 0.0
    meta = getattr(rec, "meta", None) or {}
    if "fell_at" in meta:  # the simulation's own verdict (tracker.sim.fall: one notion of a fall)
        out["fell"] = meta["fell_at"] is not None
        out["fell_at_s"] = meta["fell_at"]
        out["fall_reason"] = meta.get("fall_reason", "") or ""
    else:  # a recording without it (an older file): the root-height rule alone
        out["fell"] = bool(np.any(q[:, 2] < fall_height * q_ref[:, 2]))
    return out


def link_speeds(kin, q: np.ndarray, dt: float, link: str) -> np.ndarray:
    """World speed ``(N,)`` m/s of ``link``'s origin along a trajectory ``q`` ``(N, nq)`` (central differences)."""
    pos, _ = kin.forward(q)
    return np.linalg.norm(np.gradient(pos[link], dt, axis=0), axis=1)


def contact_speed_drop(kin, rec, baseline, link: str, t_contact: float, window: float = 0.1) -> float:
    """How much slower ``link`` moves than in the ball-free ``baseline`` just after a contact, m/s.

    The largest ``baseline speed - speed`` over ``[t_contact, t_contact + window]``: the
    kicking foot's loss of speed when it meets the ball (Tan 2011: the leg "slows down
    suddenly the moment it collides" with a heavy ball).
    """
    n = min(rec.n_steps, baseline.n_steps)
    if n < 3:
        return 0.0
    s = link_speeds(kin, rec.q[:n], rec.dt, link)
    b = link_speeds(kin, baseline.q[:n], rec.dt, link)
    sel = (rec.t[:n] >= t_contact - 1e-9) & (rec.t[:n] <= t_contact + window + 1e-9)
    return float(np.max(b[sel] - s[sel])) if sel.any() else 0.0
