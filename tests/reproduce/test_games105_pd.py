"""GAMES105's PD stability (tracker/reproduce/games105_pd.py): PyBullet's 1-DOF joint against the slides' A."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.reproduce.games105_pd import measure, pd_matrix, predicted_stable, spectral_radius


@pytest.mark.parametrize("a, b", [(0.3, 0.0), (1.0, 0.5), (3.5, 0.1), (0.2, 1.9), (2.0, 1.2)])
def test_the_closed_form_spectral_radius_is_that_of_the_slides_matrix(a, b) -> None:
    h = 0.01
    rho = np.max(np.abs(np.linalg.eigvals(pd_matrix(a / h**2, b / h, h))))
    assert spectral_radius(a, b) == pytest.approx(rho, abs=1e-9)


def test_measured_divergence_changes_side_exactly_at_the_eigenvalue_boundary() -> None:
    # on each k_d h, one k_p h² 0.05 inside the boundary a + 2b = 4 and one 0.05 outside it
    b = np.array([0.2, 0.8, 1.5])
    a = np.array([-0.05, 0.05])  # offsets from 4 - 2b, per column below
    rho = np.array([[measure(np.array([4 - 2 * bk + da]), np.array([bk]))[0, 0] for bk in b] for da in a])
    for k, bk in enumerate(b):
        inside, outside = 4 - 2 * bk - 0.05, 4 - 2 * bk + 0.05
        assert predicted_stable(inside, bk) and not predicted_stable(outside, bk)
        assert rho[0, k] < 1.0, (bk, rho[0, k])   # decays inside
        assert rho[1, k] > 1.0, (bk, rho[1, k])   # diverges outside
        assert rho[0, k] == pytest.approx(spectral_radius(inside, bk), abs=1e-2)  # the window sees the norm of a rotating state
        assert rho[1, k] == pytest.approx(spectral_radius(outside, bk), abs=1e-2)  # the window sees the norm of a rotating state


def test_damping_alone_diverges_past_kd_h_of_two() -> None:
    rho = measure(np.array([0.05]), np.array([1.9, 2.1]))
    assert rho[0, 0] < 1.0 < rho[0, 1]
