"""Allen et al. 2007's paper law in ``timed_pd``: past the last key, ``min_steps``, tension, the catch.

Numbers are from ``tracker reproduce allen2007`` (docs/allen2007.md); tolerances say how far they may move.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tracker.control.timed_pd import HOLD_STEPS, PAPER_LAW, Keyframes, TimedPDController
from tracker.errors import ConfigError
from tracker.reproduce import allen2007_response as R


@pytest.mark.parametrize("name", ["hinge", "arm"])
@pytest.mark.parametrize("dt", [1e-3, 1 / 60])
def test_the_paper_law_held_past_its_key_stays_bounded_with_the_stable_hold(name, dt):
    r = R.held_past_key(name, dt, hold="stable", min_steps=1)
    assert r["at_key"] < 1e-3  # measured 7.5e-6 .. 2.2e-4
    assert r["max_after"] < 0.1  # measured at most 0.042 rad (1/60 s)
    assert r["end"] < 1e-2  # and decaying


@pytest.mark.parametrize("min_steps", [1, 2])
def test_the_paper_law_as_written_diverges_past_its_key_even_with_the_exact_inertia(min_steps):
    """k_d h/m = 2 ln 10 / min_steps > 2: past explicit PD's bound."""
    r = R.held_past_key("hinge", 1e-3, hold="floor", min_steps=min_steps)
    assert r["max_after"] > 1e6


def test_min_steps_one_never_binds_before_a_key_and_two_only_adds_error():
    from tracker.reproduce.allen2007 import UnitInertia, reach

    one = abs(reach(UnitInertia(), [1.0], 0.3, 1e-3, law="paper", min_steps=1)[0])
    two = abs(reach(UnitInertia(), [1.0], 0.3, 1e-3, law="paper", min_steps=2)[0])
    assert one < 1e-5 < 1e-3 < two  # measured 7.5e-6 and 1.95e-3


def test_the_hold_bound_matches_the_stability_analysis():
    assert R.hold_bound_steps(1.0) == pytest.approx(math.log(10) / 2 * (1 + math.sqrt(2)))  # 2.78
    assert R.hold_bound_steps(R.arm_inertia_ratio()) < HOLD_STEPS  # arm: r = 3.19 needs s > 7.88
    # Jury test of symplectic Euler on m e'' = -k_s e - k_d e' at the stable hold: |eigenvalues| < 1.
    n = math.log(10)
    b, a = 2 * n / HOLD_STEPS, (n / HOLD_STEPS) ** 2
    eig = np.linalg.eigvals(np.array([[1 - a, 1 - b], [-a, 1 - b]]))
    assert np.abs(eig).max() < 1.0


def test_law_paper_sets_the_papers_options_and_rejects_others():
    unit = R.UnitInertia()
    keys = Keyframes(np.ones((1, 1)), np.zeros((1, 1)), np.array([1.0]))
    ctrl = TimedPDController(unit.layout, unit, keys=keys, law="paper")
    assert (ctrl.inertia, ctrl.integration, ctrl.compensation, ctrl.gravity_compensation) == tuple(PAPER_LAW.values())
    with pytest.raises(ConfigError, match="law"):
        TimedPDController(unit.layout, unit, keys=keys, law="papr")
    with pytest.raises(ConfigError, match="hold"):
        TimedPDController(unit.layout, unit, keys=keys, hold="never")


def test_the_tension_response_is_monotone_in_d():
    resp = R.tension_response((0.1, 0.2, 0.4, 0.8))
    ds = [d for d in resp if d is not None]
    assert R.monotone(resp[d]["peak"] for d in ds)  # measured 0.029, 0.061, 0.126, 0.262 rad
    assert R.monotone(-resp[d]["impulse"] for d in ds)  # 1.03, 0.73, 0.48, 0.29 N·m·s
    assert R.monotone(resp[d]["settle"] for d in ds)
    assert all(resp[d]["at_d"] < 1e-4 for d in ds)  # back on the pose by t_c + d (measured 2e-6)


@pytest.mark.slow
def test_a_thrown_basketball_is_caught_at_the_key_time():
    from tracker.reproduce import allen2007_catch as C

    dense = C.catch_run(C.SCHEDULES[-1][1])
    assert dense["caught"] and dense["held_s"] >= 1.0  # measured: held 1.6 s
    assert dense["first_contact_s"] == pytest.approx(C.CATCH_T, abs=0.02)  # 1.302 s, left hand
    assert dense["first_link"] in ("left_hand", "right_hand")
    one = C.catch_run(C.SCHEDULES[0][1])  # one key: on time, but the ball is not held
    assert one["first_contact_s"] == pytest.approx(C.CATCH_T, abs=0.02) and not one["caught"]
