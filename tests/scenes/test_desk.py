"""Virtual-trajectory paper: free-space gain independence and Fig. 1 (box pushing) on the desk arm."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.scenes.desk import LARGE_BOX, SMALL_BOX, DeskSettings, reference, run_desk

FREE = DeskSettings(dt=1 / 120, boxes=False)


def test_reference_is_integrator_consistent():
    q, v = reference(1 / 120, 1.0)
    np.testing.assert_allclose(q[1:], q[:-1] + v[1:] / 120, rtol=0, atol=1e-14)


def test_arm_dynamics_match_the_simulator():
    """M and c of the arm predict PyBullet's step: v' = v + dt M⁻¹ (tau − c)."""
    from tracker.scenes.desk import Desk

    with Desk(FREE) as desk:
        arm = desk.arm
        q, v = np.array([0.9, -1.8, 0.7]), np.array([0.5, -1.0, 2.0])
        arm.reset_state(q, v)
        tau = np.array([3.0, -2.0, 0.5])
        arm.apply_torques(tau)
        desk.step()
        _, v1 = arm.get_state()
        expect = v + FREE.dt * np.linalg.solve(arm.mass_matrix(q), tau - arm.bias_forces(q, v))
        np.testing.assert_allclose(v1, expect, rtol=0, atol=1e-10)


@pytest.mark.parametrize("f0", ["id", "peek"])
def test_with_f0_the_gains_do_not_matter_in_free_space(f0):
    soft = run_desk("vt", 110, f0=f0, settings=FREE, duration=1.0)
    stiff = run_desk("vt", 2000, f0=f0, settings=FREE, duration=1.0)
    assert np.abs(soft.q - stiff.q).max() <= 1e-9
    assert np.abs(soft.q - soft.q_ref).max() <= 1e-9  # and the arm is on its reference


def test_without_f0_the_gains_matter_in_free_space():
    soft = run_desk("vt", 110, f0="none", settings=FREE, duration=1.0)
    stiff = run_desk("vt", 2000, f0="none", settings=FREE, duration=1.0)
    assert np.abs(soft.q - stiff.q).max() > 1e-3


@pytest.fixture(scope="module")
def fig1():
    return {k: run_desk("vt", k, f0="id") for k in (110, 2000)} | {"stiff": run_desk("spd", 1e5)}


def test_fig1_stiff_virtual_trajectory_moves_both_boxes(fig1):
    r = fig1[2000]
    assert r.large_x[-1] - LARGE_BOX["x"] > 0.15  # the large box slides (m)
    assert r.small_x[-1] - SMALL_BOX["x"] > 0.3
    assert r.box_force.max() > 0.5 * 9.81 * LARGE_BOX["mass"] * 0.6  # the small box pushes it past static friction
    assert r.penetration.max() < 0.005


def test_fig1_soft_virtual_trajectory_stops_the_hand_at_the_large_box(fig1):
    r = fig1[110]
    assert abs(r.large_x[-1] - LARGE_BOX["x"]) < 0.005  # the large box stays
    gap = (LARGE_BOX["x"] - LARGE_BOX["size"][0] / 2) - (r.small_x + SMALL_BOX["size"][0] / 2)
    assert np.abs(gap[-30:]).min() < 0.01 and r.box_force[-1] > 10.0  # the small box rests against it
    # (pressed off its centre line by the hand, it turns about its touching corner in the last
    # steps, 12 deg at the end: its centre's x alone then reads as a gap of 2.5 cm)
    assert r.hand_ref_x[-1] - r.hand_x[-1] > 0.25  # the hand stopped well short of its reference
    assert r.hand_force[-1] > 10.0  # and keeps pressing
    assert r.penetration.max() < 0.01


def test_fig1_stiff_spd_moves_everything_without_penetrating(fig1):
    r = fig1["stiff"]
    assert r.large_x[-1] - LARGE_BOX["x"] > 0.2
    assert r.penetration.max() < 0.005  # PyBullet's LCP holds the contact even against K = 1e5



def test_fig1_simple_pd_tracks_through_but_hard_contacts_hold():
    """The paper's (a), explicit PD at K = 2000 (at dt = 1/1200 s, where it is stable on the 0.5 kg fist):
    the hand stays near its reference and shoves both boxes, but PyBullet's contacts do not yield,
    so the hand does not sink into the box (the paper's penetration is not reproduced; docs)."""
    r = run_desk("pd", 2000, settings=DeskSettings(dt=1 / 1200))
    assert r.large_x[-1] - LARGE_BOX["x"] > 0.2
    assert r.hand_ref_x[-1] - r.hand_x[-1] < 0.1
    assert r.box_force.max() > 0.6 * 9.81 * LARGE_BOX["mass"]  # past the large box's static friction
    assert r.penetration.max() < 0.006  # millimetres, like every other run
