"""How stiff a keyframed motion is, and why explicit PD on a light chain blows up (Tan 2011 §4.2).

Three measurements:

* :func:`push_response`: push one link for a short while and return the pose
  trajectory; compared with the unpushed run, the largest deviation is the
  motion's compliance (a stiff motion moves less). ``(T, nq)``.
* :func:`secondary_motion` (in :mod:`tracker.keyframes.run`, ``tail_motion``):
  how far the joints no key moves swing.
* :func:`explicit_pd_margin`: the stability margin of an explicit PD servo
  integrated by symplectic Euler (PyBullet). For one DOF of mass ``m``,
  ``a = k_p h²/m`` and ``b = k_d h/m``, the step
  ``v' = v − h (k_p q + k_d v)/m``, ``q' = q + h v'`` has the characteristic
  polynomial ``z² − (2 − a − b) z + (1 − b)``, stable iff ``a + 2b < 4`` and
  ``b < 2`` (Jury). On a chain with ``K_d ∝ K_p`` the same holds for every
  eigenvalue of ``M⁻¹(K_p h² + 2 K_d h)``: an ill-conditioned ``M`` (a chain of
  light links) has eigenvalues far above its diagonal's, so a gain that is
  stable joint by joint is not stable for the chain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracker.keyframes.file import KeyframeFile
from tracker.keyframes.run import KeyframeOptions, build_simulation

#: ``a + 2b`` above this, explicit PD under symplectic Euler diverges.
EXPLICIT_LIMIT = 4.0


@dataclass(frozen=True)
class Margin:
    """Stability of explicit PD under symplectic Euler.

    Attributes:
        coupled: largest eigenvalue of ``M⁻¹(K_p h² + 2 K_d h)`` (stable below 4).
        diagonal: the same joint by joint, ``max_j (k_p,j h² + 2 k_d,j h) / M_jj``.
        condition: condition number of ``M``.
    """

    coupled: float
    diagonal: float
    condition: float

    @property
    def stable(self) -> bool:
        return self.coupled < EXPLICIT_LIMIT


def explicit_pd_margin(M: np.ndarray, kp: np.ndarray, kd: np.ndarray, dt: float) -> Margin:
    """The :class:`Margin` of explicit PD gains ``kp, kd (n,)`` on mass matrix ``M (n, n)`` at step ``dt`` s.

    Exact for one DOF and for ``kd ∝ kp``; inputs are not modified.
    """
    M = np.asarray(M, dtype=float)
    stiff = np.asarray(kp, dtype=float) * dt * dt + 2.0 * np.asarray(kd, dtype=float) * dt
    coupled = float(np.linalg.eigvals(np.linalg.solve(M, np.diag(stiff))).real.max())
    return Margin(coupled, float((stiff / np.diag(M)).max()), float(np.linalg.cond(M)))


def chain_margin(kf: KeyframeFile, opts: KeyframeOptions, joints: slice = slice(6, None)) -> Margin:
    """The :class:`Margin` of ``kf``'s gains under ``opts`` on the DOFs ``joints`` (default: every joint
    below a free root), with the mass matrix at the first key."""
    sim, _, gains = build_simulation(kf, opts)
    try:
        q, _ = sim.character.get_state()
        M = sim.character.mass_matrix(q)
    finally:
        sim.close()
    return explicit_pd_margin(M[joints, joints], gains.kp[joints], gains.kd[joints], opts.dt)


def push_response(kf: KeyframeFile, opts: KeyframeOptions, until: float, link: str | None = None,
                  force: tuple[float, float, float] = (0.0, 0.0, 0.0), start: float = 0.0,
                  duration: float = 0.0) -> np.ndarray:
    """Poses ``(T, nq)`` of ``T = round(until/dt)`` steps, with a world ``force`` (N) on ``link``'s centre
    of mass from ``start`` for ``duration`` s (no push if ``link`` is None)."""
    sim, _, _ = build_simulation(kf, opts)
    qs = []
    try:
        for _ in range(int(round(until / opts.dt))):
            if link is not None and start <= sim.t + 1e-9 < start + duration:
                sim.character.apply_link_force(link, np.asarray(force, dtype=float))
            qs.append(sim.step()["q"])
    finally:
        sim.close()
    return np.array(qs)
