"""GAMES105 lecture 10's toy trajectory optimisation: a PD-driven point mass tracking ``sin t``.

A unit point mass under a PD servo toward the target ``x̄_n``, integrated by semi-implicit Euler
with step ``h``::

    v_{n+1} = v_n + h (k_p (x̄_n − x_n) − k_d v_n)
    x_{n+1} = x_n + h v_{n+1}

from ``x_0 = sin 0 = 0``, ``v_0 = cos 0 = 1``. The control is the target trajectory, piecewise
linear on ``M`` knots spread evenly over the control times ``t_0 … t_{N−1}`` (the lecture's
collocation; ``M = N`` gives one free target per step): ``x̄ = P θ`` with ``P`` ``(N, M)``. The
objective is the lecture's::

    J(θ) = Σ_{n=1..N} (sin t_n − x_n)² + w Σ_{n=0..N−1} x̄_n²

The dynamics are linear, so ``x = x_free + G x̄`` (``G`` lower triangular, the response of the
positions to each target) and ``J`` is quadratic in ``θ``: the problem is linear least squares,
``min ‖[G P; √w P] θ − [y − x_free; 0]‖²``. Four solvers:

* :func:`solve_least_squares` — that stacked system by ``numpy.linalg.lstsq`` (SVD);
* :func:`solve_closed_form` — the normal equations ``(PᵀGᵀGP + w PᵀP) θ = PᵀGᵀ(y − x_free)`` by
  Cholesky; with ``w = 0`` and ``M = N`` also :func:`exact_targets`, the targets that make the mass
  follow ``sin`` exactly (inverse dynamics of the servo), whose cost is zero;
* :func:`solve_cma` — Hansen's CMA-ES (the ``cma`` package), derivative-free, only rollouts;
* :func:`solve_lbfgs` — SciPy's L-BFGS-B with the exact gradient ``2 PᵀGᵀ(x − y) + 2w PᵀP θ``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ToyProblem:
    """The point-mass problem.

    Attributes:
        n_steps: ``N``, control steps (positions ``x_1 … x_N`` are scored).
        h: time step, s.
        kp: servo stiffness, 1/s² (unit mass).
        kd: servo damping, 1/s.
        w: weight of the targets' magnitude ``Σ x̄²``.
        n_knots: ``M``, knots of the piecewise-linear target trajectory (2 <= M <= N).
    """

    n_steps: int = 60
    h: float = 0.1
    kp: float = 60.0
    kd: float = 8.0
    w: float = 1e-3
    n_knots: int = 12
    _g: np.ndarray = field(init=False, repr=False, compare=False)
    _p: np.ndarray = field(init=False, repr=False, compare=False)
    _free: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (2 <= self.n_knots <= self.n_steps):
            raise ValueError(f"n_knots must be in [2, n_steps], got {self.n_knots}")
        n = self.n_steps
        free = self.simulate(np.zeros((1, n)))[0]
        g = self.simulate(np.eye(n)) - free  # column j: the positions' response to a unit target at step j
        tc = self.h * np.arange(n)
        knots = np.linspace(tc[0], tc[-1], self.n_knots)
        p = np.stack([np.interp(tc, knots, np.eye(self.n_knots)[k]) for k in range(self.n_knots)], axis=1)
        for name, a in (("_g", g.T), ("_p", p), ("_free", free)):
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @property
    def times(self) -> np.ndarray:
        """``t_1 … t_N``, s, ``(N,)``: the times the positions are scored at."""
        return self.h * np.arange(1, self.n_steps + 1)

    @property
    def goal(self) -> np.ndarray:
        """``sin t_n``, ``(N,)``."""
        return np.sin(self.times)

    @property
    def interpolation(self) -> np.ndarray:
        """``P`` ``(N, M)``: targets at the control times from the knot values."""
        return self._p

    def simulate(self, targets: np.ndarray) -> np.ndarray:
        """Positions ``x_1 … x_N`` ``(B, N)`` under targets ``x̄_0 … x̄_{N−1}`` ``(B, N)`` (a batch)."""
        targets = np.atleast_2d(np.asarray(targets, dtype=float))
        b = targets.shape[0]
        x, v = np.zeros(b), np.ones(b)
        out = np.empty((b, self.n_steps))
        for n in range(self.n_steps):
            v = v + self.h * (self.kp * (targets[:, n] - x) - self.kd * v)
            x = x + self.h * v
            out[:, n] = x
        return out

    def targets(self, theta: np.ndarray) -> np.ndarray:
        """Targets ``(B, N)`` of knot values ``θ`` ``(B, M)`` or ``(M,)``."""
        return np.atleast_2d(theta) @ self._p.T

    def cost(self, theta: np.ndarray) -> np.ndarray | float:
        """``J(θ)`` by simulation; ``θ`` ``(M,)`` gives a float, ``(B, M)`` a ``(B,)`` array."""
        th = np.asarray(theta, dtype=float)
        xbar = self.targets(th)
        x = self.simulate(xbar)
        j = ((self.goal - x) ** 2).sum(axis=1) + self.w * (xbar ** 2).sum(axis=1)
        return float(j[0]) if th.ndim == 1 else j

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """``∇J(θ)`` ``(M,)``, exact (the dynamics are linear)."""
        xbar = self.targets(theta)[0]
        x = self._free + self._g @ xbar
        return 2.0 * self._p.T @ (self._g.T @ (x - self.goal) + self.w * xbar)


@dataclass(frozen=True)
class Solution:
    """A solver's answer: knot values ``theta`` ``(M,)``, their cost and how many simulations it took."""

    method: str
    theta: np.ndarray
    cost: float
    evaluations: int


def solve_least_squares(prob: ToyProblem) -> Solution:
    """The stacked least-squares system, by SVD."""
    gp = prob._g @ prob._p
    a = np.vstack([gp, np.sqrt(prob.w) * prob._p])
    b = np.concatenate([prob.goal - prob._free, np.zeros(prob.n_steps)])
    theta = np.linalg.lstsq(a, b, rcond=None)[0]
    return Solution("least_squares", theta, prob.cost(theta), 1)


def solve_closed_form(prob: ToyProblem) -> Solution:
    """The normal equations, by Cholesky (the Hessian ``2(PᵀGᵀGP + w PᵀP)`` is positive definite)."""
    from scipy.linalg import cho_factor, cho_solve

    gp = prob._g @ prob._p
    hess = gp.T @ gp + prob.w * prob._p.T @ prob._p
    theta = cho_solve(cho_factor(hess), gp.T @ (prob.goal - prob._free))
    return Solution("closed_form", theta, prob.cost(theta), 1)


def exact_targets(prob: ToyProblem) -> np.ndarray:
    """Targets ``(N,)`` that make the mass follow ``sin`` exactly: the servo's inverse dynamics.

    ``x̄_n = x_n + (v_{n+1} − (1 − h k_d) v_n) / (h k_p)`` with ``x_n = sin t_n`` and the velocities
    the integrator implies, ``v_{n+1} = (x_{n+1} − x_n) / h`` (``v_0 = 1``).
    """
    t = prob.h * np.arange(prob.n_steps + 1)
    x = np.sin(t)
    v = np.concatenate([[1.0], np.diff(x) / prob.h])
    return x[:-1] + (v[1:] - (1.0 - prob.h * prob.kd) * v[:-1]) / (prob.h * prob.kp)


def solve_cma(prob: ToyProblem, seed: int = 1, sigma0: float = 0.5, max_evaluations: int = 200_000) -> Solution:
    """CMA-ES (Hansen's ``cma``) from ``θ = 0``, a population simulated as one batch per generation."""
    import cma

    es = cma.CMAEvolutionStrategy(np.zeros(prob.n_knots), sigma0, {
        "seed": seed, "verbose": -9, "tolfun": 1e-15, "tolfunhist": 1e-15, "tolx": 1e-13,
        "maxfevals": max_evaluations, "tolstagnation": 10_000})
    while not es.stop():
        pop = es.ask()
        es.tell(pop, list(prob.cost(np.array(pop))))
    theta = np.asarray(es.result.xbest, dtype=float)
    return Solution("cma", theta, prob.cost(theta), int(es.result.evaluations))


def solve_lbfgs(prob: ToyProblem) -> Solution:
    """SciPy's L-BFGS-B from ``θ = 0`` with the exact gradient."""
    from scipy.optimize import minimize

    n_eval = [0]

    def fun(theta):
        n_eval[0] += 1
        return prob.cost(theta), prob.gradient(theta)

    res = minimize(fun, np.zeros(prob.n_knots), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 20_000, "maxcor": 30})
    return Solution("lbfgs", np.asarray(res.x), prob.cost(res.x), n_eval[0])
