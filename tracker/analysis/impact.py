"""Impact response: how far a ball pushes the character off its ball-free motion, and for how long.

DESIGN.md's definition: compare the run with the ball against the same run
without it (the *baseline*, same config, same time steps). The per-joint
deviation at step ``n`` is the geodesic angle between the two runs' local
rotations of a joint (``|Δθ|`` for revolute joints), rad. The *deviation* is
its maximum over the joints (a hit bends the struck chain, and a mean over 15
joints would dilute it); its mean over the joints is reported too.
"""

from __future__ import annotations

import numpy as np

from tracker.analysis.metrics import joint_errors


def deviation(rec, baseline) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-step deviation of ``rec`` from ``baseline`` over the steps both have.

    Returns:
        ``(t (N,) s, max over joints (N,) rad, per joint (N, J) rad)``.
    """
    n = min(rec.n_steps, baseline.n_steps)
    if n == 0:
        return np.zeros(0), np.zeros(0), np.zeros((0, len(rec.joints)))
    per_joint = joint_errors(rec.layout, rec.q[:n], baseline.q[:n])
    return np.asarray(rec.t[:n]), per_joint.max(axis=1), per_joint


def recovery_time(t: np.ndarray, dev: np.ndarray, start: float, threshold: float, hold: float) -> float | None:
    """Seconds from ``start`` until ``dev`` falls under ``threshold`` and stays there.

    "Stays" means for ``hold`` seconds or until the end of the run, whichever
    comes first. A deviation that never reaches ``threshold`` after ``start``
    recovers at once (0 s); otherwise counting starts at its peak (a deviation
    that has not yet grown is not a recovery).

    Returns:
        the time in s, or None if the deviation never settles.
    """
    after = np.flatnonzero(t >= start - 1e-12)
    if after.size == 0:
        return None
    if dev[after].max() < threshold:
        return 0.0
    peak = after[int(np.argmax(dev[after]))]
    below = dev < threshold
    for i in range(peak, len(t)):
        if not below[i]:
            continue
        window = (t >= t[i] - 1e-12) & (t <= t[i] + hold + 1e-12)
        if below[window].all():
            return float(t[i] - start)
    return None


#: How long the deviation must stay under the threshold to count as recovered, s (the ball issue's 0.25 s).
RECOVER_HOLD_S = 0.25
#: The deviation (max over joints) under which the character counts as recovered, rad.
RECOVER_THRESHOLD_RAD = 0.05

#: The impact keys at the top level of ``tracker scenario/run --json``: scripts read them.
HEADLINE_KEYS = ("impact_time_s", "impact_link", "peak_deviation_rad", "recovery_time_s", "ball_exit_speed_m_s",
                 "caught")


def headline(metrics: dict) -> dict:
    """The named impact keys from a run's metrics (``None`` where there is no ball or no contact).

    ``impact_time_s`` and ``impact_link``: the first contact of any ball with the character;
    ``peak_deviation_rad`` and ``recovery_time_s``: the impact response (max over joints,
    against the ball-free run); ``ball_exit_speed_m_s``, ``caught``: ball 0's outcome (every
    ball's is under ``impact.balls``).
    """
    imp = metrics.get("impact") or {}
    balls = [b for b in imp.get("balls") or [] if isinstance(b, dict)]
    touched = [b for b in balls if b.get("first_contact_time") is not None]
    first = min(touched, key=lambda b: b["first_contact_time"]) if touched else None
    ball0 = balls[0] if balls else {}
    return {
        "impact_time_s": None if first is None else first["first_contact_time"],
        "impact_link": None if first is None else first.get("first_contact_link"),
        "peak_deviation_rad": imp.get("peak_deviation_rad"),
        "recovery_time_s": imp.get("time_to_recover_s"),
        "ball_exit_speed_m_s": ball0.get("exit_speed"),
        "caught": ball0.get("caught") if balls else None,
    }


def impact_response(rec, baseline, threshold: float = RECOVER_THRESHOLD_RAD, hold: float = RECOVER_HOLD_S) -> dict:
    """Impact-response metrics of ``rec`` (with balls) against ``baseline`` (without).

    Keys: ``impacts`` (number of contact events), ``first_impact_s`` (clip time
    or None), ``peak_deviation_rad`` (max over joints) and ``peak_time_s`` (after the first
    impact, or over the whole run if the ball never touched), ``peak_deviation_by_joint``,
    ``peak_mean_deviation_rad`` (mean over joints), ``peak_root_deviation_m``,
    ``time_to_recover_s`` (None: not recovered; None too if nothing hit), ``recovered``,
    ``recover_threshold_rad``, ``recover_hold_s``.
    """
    t, dev, per_joint = deviation(rec, baseline)
    events = list(rec.events or [])
    first = min((float(e["t"]) for e in events), default=None)
    out: dict = {"impacts": len(events), "first_impact_s": first, "recover_threshold_rad": float(threshold),
                 "recover_hold_s": float(hold)}
    if len(t) == 0:
        out.update(peak_deviation_rad=None, peak_time_s=None, peak_mean_deviation_rad=None, peak_root_deviation_m=None,
                   peak_deviation_by_joint={}, time_to_recover_s=None, recovered=False)
        return out
    start = first if first is not None else float(t[0])
    window = t >= start - 1e-12
    if not window.any():
        window[:] = True
    k = int(np.flatnonzero(window)[np.argmax(dev[window])])
    n = len(t)
    root = np.linalg.norm(rec.q[:n, 0:3] - baseline.q[:n, 0:3], axis=1) if rec.layout.has_base else np.zeros(n)
    rt = recovery_time(t, dev, start, threshold, hold) if first is not None else None
    out.update(
        peak_deviation_rad=float(dev[k]), peak_time_s=float(t[k]),
        peak_mean_deviation_rad=float(per_joint[window].mean(axis=1).max()),
        peak_root_deviation_m=float(root[window].max()),
        peak_deviation_by_joint={name: float(per_joint[window, j].max()) for j, (name, _) in enumerate(rec.joints)},
        time_to_recover_s=rt, recovered=rt is not None,
    )
    return out
