"""GAMES105's toy problem: least squares, CMA-ES and L-BFGS agree, and the closed form checks them (issue 20)."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.sampling.toy import (ToyProblem, exact_targets, solve_closed_form, solve_cma, solve_lbfgs,
                                  solve_least_squares)

PROBLEMS = [ToyProblem(), ToyProblem(n_steps=40, h=0.05, kp=300.0, kd=30.0, w=1e-2, n_knots=10)]


@pytest.mark.parametrize("prob", PROBLEMS, ids=["lecture", "stiff"])
def test_three_solvers_agree_within_1e_6_relative_cost(prob):
    ls, cma_, lb = solve_least_squares(prob), solve_cma(prob, seed=3), solve_lbfgs(prob)
    for s in (cma_, lb):
        assert abs(s.cost - ls.cost) <= 1e-6 * ls.cost, (s.method, s.cost, ls.cost)
    assert cma_.evaluations > 100  # it searched by rollouts, it was not handed the answer
    assert ls.cost < 0.2 * prob.cost(np.zeros(prob.n_knots))  # and the optimum tracks far better than no targets


@pytest.mark.parametrize("prob", PROBLEMS, ids=["lecture", "stiff"])
def test_closed_form_is_the_optimum(prob):
    cf, ls = solve_closed_form(prob), solve_least_squares(prob)
    np.testing.assert_allclose(cf.theta, ls.theta, rtol=1e-7, atol=1e-9)
    assert np.abs(prob.gradient(cf.theta)).max() < 1e-9 * max(1.0, np.abs(cf.theta).max())
    rng = np.random.default_rng(0)
    for _ in range(20):  # a strict minimum: any step away costs more
        d = rng.normal(size=prob.n_knots) * 1e-3
        assert prob.cost(cf.theta + d) > cf.cost


def test_gradient_matches_finite_differences():
    prob = PROBLEMS[0]
    theta = np.random.default_rng(2).normal(size=prob.n_knots)
    eps = 1e-6
    fd = np.array([(prob.cost(theta + eps * e) - prob.cost(theta - eps * e)) / (2 * eps) for e in np.eye(prob.n_knots)])
    np.testing.assert_allclose(prob.gradient(theta), fd, rtol=1e-6, atol=1e-7)


def test_without_regularisation_the_inverse_dynamics_targets_follow_sin_exactly():
    prob = ToyProblem(w=0.0, n_knots=60)
    xbar = exact_targets(prob)
    x = prob.simulate(xbar)[0]
    np.testing.assert_allclose(x, np.sin(prob.times), atol=1e-12)
    ls = solve_least_squares(prob)  # and least squares finds those very targets
    np.testing.assert_allclose(prob.targets(ls.theta)[0], xbar, atol=1e-9)
    assert ls.cost < 1e-20


def test_bad_knot_count_is_refused():
    with pytest.raises(ValueError, match="n_knots"):
        ToyProblem(n_steps=10, n_knots=11)
