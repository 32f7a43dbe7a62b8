"""Tinkertoy (Tan 2011 §4.3): SPD keeps stiff constraints stable at large steps; a penalty spring does not."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.scenes.tinkertoy import Polyline, Tinkertoy, accelerations, helix, paper_helix, simulate, valley


def test_the_nearest_point_of_a_polyline():
    line = Polyline(np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0]]))
    assert line.nearest(np.array([0.3, -0.5, 0.2])) == pytest.approx([0.3, 0, 0])
    assert line.nearest(np.array([1.4, 0.6, 0.0])) == pytest.approx([1, 0.6, 0])
    assert line.nearest(np.array([-1.0, 0, 0])) == pytest.approx([0, 0, 0])  # clamped to the end
    assert line.distance(np.array([2.0, 2.0, 0.0])) == pytest.approx(np.hypot(1, 1))


def test_the_helix_points_lie_on_the_cylinder_and_descend():
    h = helix(2400)
    assert h.n_segments == 2400
    assert np.hypot(h.points[:, 0], h.points[:, 1]) == pytest.approx(np.ones(2401))
    assert np.all(np.diff(h.points[:, 2]) < 0)


def test_on_the_constraints_with_no_motion_only_gravity_and_the_springs_act():
    """A exactly on the curve, B exactly r0 below, at rest: SPD's force is the spring's sag toward the
    prediction, so the accelerations are gravity corrected by what the prediction sees (here: nothing)."""
    scene = paper_helix(24)
    q, v = scene.start(0.0)
    for method in ("explicit", "semi_implicit", "penalty"):
        a = accelerations(scene, q, v, 1 / 60, 1e6, 1.5e6 / 60, method)
        assert a == pytest.approx(np.tile([0, 0, -9.81], 2), abs=1e-9)


@pytest.mark.parametrize("segments,dt,method,integrator", [
    (2400, 1 / 30, "explicit", "explicit"),            # the paper's prediction and integrator
    (2400, 1 / 60, "semi_implicit", "symplectic"),     # the project's, PyBullet's integrator
    (24, 1 / 30, "explicit", "explicit"),
    (24, 1 / 60, "explicit", "explicit"),
    (24, 1 / 30, "semi_implicit", "symplectic"),
])
def test_the_helix_stays_bounded_for_a_minute(segments, dt, method, integrator):
    run = simulate(paper_helix(segments), dt, 60.0, kp=1e6, kd_ratio=1.5, method=method, integrator=integrator)
    assert not run.diverged and run.t[-1] == pytest.approx(60.0)
    first, last = run.window_max(0.0, 10.0), run.window_max(50.0, 60.0)
    assert last <= 1.5 * first  # oscillations never accumulate
    assert first <= 0.08  # measured 26-75 mm at 1/30-1/60
    assert run.q[-1, 2] < 0.5  # A did slide down the helix (from 1.96 m to its foot at 0.2 m)


def test_the_bead_in_the_helical_valley_swings_through_the_corners_and_stays_bounded():
    run = simulate(valley(24), 1 / 30, 60.0, method="semi_implicit", integrator="symplectic")
    assert not run.diverged
    assert run.window_max(50.0, 60.0) <= 1.5 * run.window_max(0.0, 10.0)


@pytest.mark.parametrize("dt", [1 / 30, 1 / 60, 1 / 240])
def test_a_penalty_spring_with_the_same_stiffness_diverges(dt):
    run = simulate(paper_helix(2400), dt, 5.0, kp=1e6, kd_ratio=1.5, method="penalty", integrator="symplectic")
    assert run.diverged and run.t.size * dt < 0.5


def test_the_penalty_spring_is_fine_at_a_step_small_enough_for_it():
    """k h^2/m and k_d h/m well below their explicit limits (h = 0.2 ms): the divergence above is the step."""
    run = simulate(Tinkertoy(helix(240)), 2e-4, 0.4, kp=1e6, kd_ratio=1.5, method="penalty",
                   integrator="symplectic")
    assert not run.diverged and run.window_max(0, 0.4) < 0.01
