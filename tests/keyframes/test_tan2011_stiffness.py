"""Tan 2011 §4.2 measured: the explicit-PD margin, linear vs polynomial stiffness on the mouse, PD at 0.005 m_sub."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.keyframes.file import load_keyframes
from tracker.keyframes.run import KeyframeOptions
from tracker.keyframes.stiffness import EXPLICIT_LIMIT, chain_margin, explicit_pd_margin
from tracker.paths import DATA_DIR

MOUSE = DATA_DIR / "keyframes" / "mouse.yaml"


def _spectral_radius(a: float, b: float) -> float:
    """One DOF, unit mass, h = 1: v' = v − (a q + b v), q' = q + v' as a 2x2 map of (q, v)."""
    step = np.array([[1 - a, 1 - b], [-a, 1 - b]])
    return float(np.abs(np.linalg.eigvals(step)).max())


@pytest.mark.parametrize("a", [1e-4, 0.05, 0.5, 1.0, 2.0, 3.5])
@pytest.mark.parametrize("b", [0.0, 0.01, 0.2, 1.0, 1.5, 1.9])
def test_the_one_dof_margin_is_the_symplectic_euler_stability_boundary(a: float, b: float) -> None:
    m = explicit_pd_margin(np.eye(1), np.array([a]), np.array([b]), dt=1.0)
    assert m.coupled == pytest.approx(a + 2 * b, rel=1e-12)
    stable = _spectral_radius(a, b) <= 1 + 1e-9  # b = 0: undamped, on the unit circle
    if abs(a + 2 * b - EXPLICIT_LIMIT) > 1e-6:  # away from the boundary the margin decides
        assert stable == (m.coupled < EXPLICIT_LIMIT and b < 2)


def test_an_ill_conditioned_chain_has_a_coupled_margin_far_above_its_diagonal() -> None:
    M = np.array([[1.0, 0.999], [0.999, 1.0]])  # two nearly rigidly coupled DOFs
    kp, kd = np.array([1.0, 1.0]), np.array([0.0, 0.0])
    m = explicit_pd_margin(M, kp, kd, dt=1.0)
    assert m.diagonal == pytest.approx(1.0)
    assert m.coupled == pytest.approx(1 / (1 - 0.999), rel=1e-6)  # eigenvalue of M⁻¹ on (1, −1)
    assert M[0, 1] == 0.999  # inputs not modified


def test_pd_at_0005_msub_on_the_mouse_tail_is_unstable_only_coupled() -> None:
    kf = load_keyframes(MOUSE)
    from tracker.reproduce.tan2011_mouse import paper_tail

    m = chain_margin(paper_tail(kf), KeyframeOptions("pd", 1 / 60, kp_per_kg=0.005))
    assert m.diagonal < EXPLICIT_LIMIT < m.coupled  # 0.58 and 61.5 at 1/60 s (docs/tan2011.md)
    assert m.coupled == pytest.approx(61.5, rel=0.02)
    ours = chain_margin(kf, KeyframeOptions("pd", 1 / 60, kp_per_kg=0.005))
    assert ours.coupled < 1.0  # the shipped ×0.01 tail: PD is stable; its divergence is the whip


def test_linear_blending_swings_the_mouse_tail_least_and_gives_least_to_a_push() -> None:
    from tracker.reproduce.tan2011_mouse import mouse_stiffness

    _, f = mouse_stiffness(load_keyframes(MOUSE), {})
    lin, p2, p4 = f["linear"], f["poly p = 2"], f["poly p = 4"]
    assert lin["bend"] < p2["bend"] < p4["bend"]  # 4.3°, 7.4°, 17.0°
    assert lin["push_cm"] < p2["push_cm"] < p4["push_cm"]  # 1.17, 1.69, 2.90 cm
    assert p2["bend"] == pytest.approx(7.43, abs=0.05)
