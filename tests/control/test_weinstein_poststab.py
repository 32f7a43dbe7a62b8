"""Weinstein 2008 §V-VI solves (tracker/control/poststab.py): QR with pivoting, contacts, muscles."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.control.poststab import impulse_solve, muscle_solve, pivoted_solve


def test_pivoted_solve_matches_numpy_on_a_regular_system():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6))
    b = rng.normal(size=6)
    assert np.allclose(pivoted_solve(a, b), np.linalg.solve(a, b), atol=1e-12)


def test_pivoted_solve_gives_the_minimal_norm_solution_of_a_consistent_singular_system():
    rng = np.random.default_rng(1)
    j = rng.normal(size=(9, 4))  # 9 rows on 4 DOFs: A = J Jᵀ (9×9) has rank 4
    a = j @ j.T
    b = a @ rng.normal(size=9)  # consistent
    x = pivoted_solve(a, b)
    assert np.max(np.abs(a @ x - b)) < 1e-10
    assert np.allclose(x, np.linalg.lstsq(a, b, rcond=None)[0], atol=1e-9)


def test_pivoted_solve_meets_an_inconsistent_singular_system_in_least_squares():
    a = np.array([[1.0, 1.0], [1.0, 1.0]])  # rank 1; asks x1 + x2 = 1 and = 3
    x = pivoted_solve(a, np.array([1.0, 3.0]))
    assert x.sum() == pytest.approx(2.0, abs=1e-12)  # the least-squares compromise
    assert x[0] == pytest.approx(x[1], abs=1e-12)  # with the minimal norm


def test_a_contact_that_would_pull_is_dropped_by_the_active_set():
    # Two unit masses along z: a contact under mass 0 (target 0) and a rod between them (v1 − v0 = 0);
    # mass 1 already moves up at 2 m/s, so holding mass 0 on the ground would need a pulling impulse.
    minv = np.eye(2)
    jac = np.array([[1.0, 0.0], [-1.0, 1.0]])
    s = impulse_solve(minv, jac, np.array([0.0, 0.0]), np.array([0.0, 2.0]), normal_of=np.array([0, -1]))
    assert not s.active[0] and s.j[0] == 0.0  # the contact lets go rather than pull
    assert s.v == pytest.approx([1.0, 1.0], abs=1e-12)  # the rod shares the momentum


def test_muscles_reach_an_achievable_target_with_activations_in_bounds_and_saturate_otherwise():
    # One body, 1 DOF (index 0) to move, no constraint rows; three muscles, one pulling the wrong way.
    minv = np.eye(1)
    g = np.array([[1.0, 0.5, -1.0]])
    j_eq = np.eye(1)
    j_con = np.zeros((0, 1))
    s = muscle_solve(minv, j_eq, j_con, g, np.array([1.0]), np.zeros(1), np.array([2.0, 2.0, 2.0]))
    assert s.residual < 1e-9 and s.v[0] == pytest.approx(1.0, abs=1e-12)
    assert np.all(s.jm >= 0) and np.all(s.jm <= 2.0)
    assert s.jm[2] == pytest.approx(0.0, abs=1e-9)  # the antagonist stays off: minimal impulses
    assert s.jm @ s.jm < 1.0  # shared: less than one muscle doing it all
    far = muscle_solve(minv, j_eq, j_con, g, np.array([10.0]), np.zeros(1), np.array([2.0, 2.0, 2.0]))
    assert far.jm == pytest.approx([2.0, 2.0, 0.0], abs=1e-9)  # at the bounds: the closest achievable
    assert far.v[0] == pytest.approx(3.0, abs=1e-9)
