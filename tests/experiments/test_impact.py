"""Impact response against the ball-free baseline: deviation, peak, recovery time (synthetic recordings)."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.analysis.impact import deviation, impact_response, recovery_time
from tracker.sim.recording import Recording

JOINTS = (("a", "revolute"), ("b", "revolute"))


def recording(angles: np.ndarray, events=(), dt: float = 0.01) -> Recording:
    """A base at rest plus two revolute joints at ``angles (N, 2)`` rad."""
    n = len(angles)
    q = np.zeros((n, 9))
    q[:, 2] = 1.0
    q[:, 6] = 1.0  # identity base quaternion
    q[:, 7:] = angles
    v = np.zeros((n, 8))
    return Recording(dt=dt, joints=JOINTS, t=dt * np.arange(1, n + 1), q=q, v=v, q_ref=q, v_ref=v,
                     tau=v, kp=v, tau_max=np.full(8, np.inf), events=list(events))


def test_recovery_time_counts_from_the_start_until_the_deviation_stays_under_the_threshold():
    t = np.arange(0, 2.0, 0.01)
    dev = np.where(t < 1.0, 0.0, 0.3 * np.exp(-(t - 1.0) / 0.1))  # peak at t = 1, decays with tau 0.1 s
    # exp(-d/0.1) < 0.05/0.3  <=>  d > 0.1 ln 6 = 0.1792 s; on the 10 ms grid the first such step is 0.18 s.
    assert recovery_time(t, dev, start=1.0, threshold=0.05, hold=0.2) == pytest.approx(0.18, abs=1e-9)
    # A deviation that dips under the threshold and rises again has not recovered at the dip.
    dev2 = dev.copy()
    dev2[(t > 1.3) & (t < 1.4)] = 0.2
    assert recovery_time(t, dev2, start=1.0, threshold=0.05, hold=0.2) == pytest.approx(0.40, abs=1e-9)
    # Never settling: None. Never exceeding the threshold: 0.
    assert recovery_time(t, np.where(t < 1.0, 0.0, 0.3), 1.0, 0.05, 0.2) is None
    assert recovery_time(t, dev * 0.1, 1.0, 0.05, 0.2) == 0.0


def test_impact_response_compares_with_the_baseline_per_joint():
    n = 100
    base = np.zeros((n, 2))
    hit = base.copy()
    hit[50:60, 1] = 0.2  # joint b knocked 0.2 rad off for 0.1 s after the impact at step 50 (t = 0.51)
    events = [{"t": 0.505, "link": "x", "ball": 0}, {"t": 0.515, "link": "x", "ball": 0}]
    m = impact_response(recording(hit, events), recording(base), threshold=0.05, hold=0.2)
    assert m["impacts"] == 2 and m["first_impact_s"] == 0.505
    assert m["peak_deviation_rad"] == pytest.approx(0.2, abs=1e-12)
    assert m["peak_mean_deviation_rad"] == pytest.approx(0.1, abs=1e-12)
    assert m["peak_deviation_by_joint"] == pytest.approx({"a": 0.0, "b": 0.2}, abs=1e-12)
    assert m["peak_time_s"] == pytest.approx(0.51)
    assert m["recovered"] and m["time_to_recover_s"] == pytest.approx(0.61 - 0.505, abs=1e-9)
    _, dev, per_joint = deviation(recording(hit), recording(base))
    assert dev.shape == (n,) and per_joint.shape == (n, 2)


def test_a_ball_that_never_touched_reports_no_recovery_and_a_diverged_run_is_cut_to_the_common_steps():
    base = np.zeros((80, 2))
    m = impact_response(recording(base[:40]), recording(base))
    assert m["impacts"] == 0 and m["first_impact_s"] is None and m["time_to_recover_s"] is None
    assert m["peak_deviation_rad"] == 0.0
