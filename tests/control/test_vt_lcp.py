"""The virtual-trajectory steps solved with the contacts: the MLCP solve against scipy's QP, step 2
without contacts = SPD + f0, and Fig. 1 (b)/(c) in the LCP-simulated desk."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from tracker.control.lcp import bounds, complementarity_error, solve_mlcp
from tracker.control.spd import SPDController
from tracker.control.vt import VTController
from tracker.control.vt_lcp import SUPPORT, ContactProblem, vt_step
from tracker.errors import ConfigError


def _random_lcp(rng: np.random.Generator, r: int = 9, n: int = 6):
    """``A = J M⁻¹ Jᵀ h`` of a random world, ``b``, and a mix of free, normal and bounded rows."""
    m = rng.normal(size=(n, n))
    mass = m @ m.T + n * np.eye(n)
    jac = rng.normal(size=(r, n))
    a = jac @ np.linalg.solve(mass, jac.T) / 60 + 1e-6 * np.eye(r)
    b = rng.normal(size=r)
    lo = np.r_[np.full(3, -np.inf), np.zeros(3), np.full(3, -0.5)]
    hi = np.r_[np.full(3, np.inf), np.full(3, np.inf), np.full(3, 0.5)]
    return a, b, lo, hi


def _qp(a, b, lo, hi):
    """scipy's answer to ``min ½ xᵀA x + bᵀx, lo <= x <= hi``."""
    res = minimize(lambda x: 0.5 * x @ a @ x + b @ x, np.zeros(b.size), jac=lambda x: a @ x + b,
                   method="L-BFGS-B", bounds=list(zip(np.where(np.isfinite(lo), lo, None),
                                                      np.where(np.isfinite(hi), hi, None))),
                   options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    return res.x


@pytest.mark.parametrize("seed", range(6))
def test_the_mlcp_solution_is_complementary_and_is_scipys_qp_optimum(seed):
    rng = np.random.default_rng(seed)
    a, b, lo, hi = _random_lcp(rng)
    sol = solve_mlcp(a, b, lo, hi)
    assert sol.error < 1e-9
    w = a @ sol.x + b
    normal = slice(3, 6)
    assert np.all(sol.x[normal] >= 0) and np.all(w[normal] >= -1e-9)
    np.testing.assert_allclose(sol.x[normal] * w[normal], 0.0, atol=1e-9)  # eq. 15: wᵀλ = 0
    np.testing.assert_allclose(w[:3], 0.0, atol=1e-9)  # equality rows
    x_qp = _qp(a, b, lo, hi)
    obj = lambda x: 0.5 * x @ a @ x + b @ x
    assert obj(sol.x) <= obj(x_qp) + 1e-9 * (1 + abs(obj(x_qp)))  # at least as good as scipy's
    np.testing.assert_allclose(sol.x, x_qp, atol=1e-4 * (1 + np.abs(x_qp).max()))


def test_friction_bounds_that_follow_the_normal_force_are_a_qp_fixed_point():
    """With friction rows, the solution is the QP optimum for the bounds its own normal forces set."""
    rng = np.random.default_rng(11)
    a, b, lo, hi = _random_lcp(rng)
    nof = np.array([-1, -1, -1, -1, -1, -1, 3, 4, 5])
    mu = np.r_[np.zeros(6), np.full(3, 0.4)]
    sol = solve_mlcp(a, b, lo, hi, normal_of=nof, mu=mu)
    assert sol.error < 1e-9
    lo2, hi2 = bounds(lo, hi, sol.x, nof, mu)
    np.testing.assert_allclose(sol.x, _qp(a, b, lo2, hi2), atol=1e-4 * (1 + np.abs(sol.x).max()))
    assert complementarity_error(a, b, sol.x + 0.01, lo, hi, nof, mu) > 1e-3  # the check sees a wrong x


def test_step_two_without_contacts_is_spd_plus_the_inverse_dynamics_f0(rng):
    nv = 3
    m = rng.normal(size=(nv, nv))
    mass = m @ m.T + nv * np.eye(nv)
    bias = rng.normal(size=nv)
    v = rng.normal(size=nv)
    w0 = rng.normal(size=nv)
    e = rng.normal(0, 0.1, nv)
    kp, kd, h = np.array([110.0, 2000.0, 500.0]), np.array([1.0, 16.0, 4.0]), 1 / 120
    empty = ContactProblem(mass, -bias, v, np.zeros((0, nv)), np.zeros(0), np.zeros(0), np.zeros(0, int),
                           np.zeros(0), np.zeros(0), np.zeros(0, int), np.zeros(0), nv)
    res = vt_step(empty, np.arange(nv), w0, e, kp, kd, h)
    np.testing.assert_allclose(res.f0, mass @ (w0 - v) / h + bias, rtol=1e-9, atol=1e-9)
    # SPD: (M + D h + K h²) a = K (e − v h) + D (w0 − v) + f0 − c, tau = f0 + K (e − v h − a h²) + D (w0 − v − a h)
    acc = np.linalg.solve(mass + np.diag(kd * h + kp * h * h), kp * (e - v * h) + kd * (w0 - v) + res.f0 - bias)
    expect = res.f0 + kp * (e - v * h - acc * h * h) + kd * (w0 - v - acc * h)
    np.testing.assert_allclose(res.tau, expect, rtol=1e-9, atol=1e-9)


def test_the_own_scope_keeps_the_characters_contacts_and_its_boxs_support():
    nv, n = 3, 9  # arm, small box, large box
    jac = np.zeros((6, n))
    jac[0, [0, 3]] = 1.0          # arm–small normal
    jac[1, [1, 4]] = 1.0          # its friction
    jac[2, [3, 6]] = 1.0          # small–large normal
    jac[3, 3], jac[4, 6], jac[5, 7] = 1.0, 1.0, 1.0  # supports: small x, large x, large y
    kind = np.array([0, 0, 1, SUPPORT, SUPPORT, SUPPORT])
    p = ContactProblem(np.eye(n), np.zeros(n), np.zeros(n), jac, np.zeros(6), np.full(6, np.inf),
                       np.array([-1, 0, -1, -1, -1, -1]), np.r_[0.0, 0.3, np.zeros(4)], np.zeros(6), kind,
                       np.zeros(6), nv)
    own = p.only_character()
    np.testing.assert_array_equal(own.jac, jac[[0, 1, 3]])
    np.testing.assert_array_equal(own.normal_of, [-1, 0, -1])


def test_lcp_needs_an_engine_that_states_the_contacts(humanoid_like_layout):
    from tests.control.conftest import FixedDynamics

    lay = humanoid_like_layout
    dyn = FixedDynamics(np.eye(lay.nv), np.zeros(lay.nv))
    with pytest.raises(ConfigError, match="f0 'lcp' needs an engine"):
        VTController(lay, dyn, f0="lcp")
    with pytest.raises(ConfigError, match="step1 'some' is not one of: all, own"):
        VTController(lay, dyn, step1="some")
    assert SPDController  # the step-2 comparison above is against SPD's formula


def _travel(r):
    from tracker.scenes.desk import LARGE_BOX, SMALL_BOX

    return r.small_x[-1] - SMALL_BOX["x"], r.large_x[-1] - LARGE_BOX["x"], r.hand_ref_x[-1] - r.hand_x[-1]


def test_step_one_with_the_characters_contacts_reproduces_fig1c_and_fig1b():
    """K = 110: the hand pushes the small box, stops against the large one, which stays (Fig. 1(c));
    K = 2000: both boxes move (Fig. 1(b)); f0 from step 1 solved with the arm's contacts, every
    step's two solves complementary to 1e-5 m/s."""
    from tracker.scenes.desk_lcp import run_desk_lcp

    soft = run_desk_lcp("vt", 110.0, f0="lcp", step1="own")
    small, large, short = _travel(soft)
    assert small > 0.05 and abs(large) < 1e-3 and short > 0.1
    assert soft.hand_force.max() > 0 and soft.lcp_error.max() < 1e-5
    stopped = (soft.t > 1.3) & (soft.t < 2.0)  # from the small box meeting the large one
    assert soft.hand_force[stopped].min() > 100.0  # the hand presses, stopped (it slides off later; docs)
    assert np.ptp(soft.hand_x[stopped]) < 0.01
    assert np.abs(soft.f0).max() > np.abs(soft.f0[:100]).max()  # f0 saw the small box (it grew on contact)
    stiff = run_desk_lcp("vt", 2000.0, f0="lcp", step1="own")
    small, large, short = _travel(stiff)
    assert small > 0.3 and large > 0.2 and short < 0.05
    assert stiff.lcp_error.max() < 1e-5


def test_step_one_with_every_contact_pushes_the_large_box_whatever_the_gain():
    """The literal reading (step 1 sees the small box against the large one): the joints' equality
    rows w = w0 carry both boxes, so K = 110 moves the large box like K = 2000 (Fig. 1(c) fails)."""
    from tracker.scenes.desk_lcp import run_desk_lcp

    r = run_desk_lcp("vt", 110.0, f0="lcp", step1="all")
    small, large, short = _travel(r)
    assert large > 0.2 and abs(short) < 0.01
