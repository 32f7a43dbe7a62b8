"""The Gains value type."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.control.base import Gains


def test_critical_ratio_sets_kd_to_kp_dt_and_arrays_are_read_only():
    g = Gains.critical_ratio(3000.0, 1.0 / 60.0, nv=3)
    np.testing.assert_allclose(g.kp, [3000.0] * 3)
    np.testing.assert_allclose(g.kd, [50.0] * 3)
    assert np.all(np.isinf(g.tau_max)) and not g.limited
    with pytest.raises(ValueError):
        g.kp[0] = 1.0
    g2 = Gains.critical_ratio(np.array([1.0, 2.0]), 0.5, ratio=2.0, tau_max=7.0)
    np.testing.assert_allclose(g2.kd, [1.0, 2.0])
    np.testing.assert_allclose(g2.tau_max, [7.0, 7.0])
    assert g2.limited


def test_gains_copy_their_inputs_and_scale():
    kp = np.array([10.0, 20.0])
    g = Gains(kp, 1.0)
    kp[0] = -5.0
    assert g.kp[0] == 10.0
    np.testing.assert_allclose(g.kd, [1.0, 1.0])
    s = g.scaled(100.0)
    np.testing.assert_allclose(s.kp, [1000.0, 2000.0])
    np.testing.assert_allclose(s.kd, [100.0, 100.0])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(kp=[1.0, 2.0], kd=[1.0]), "gains disagree on nv"),
        (dict(kp=[1.0], kd=[-1.0]), "non-negative"),
        (dict(kp=[[1.0]], kd=[1.0]), "kp must be a vector"),
        (dict(kp=[1.0], kd=[1.0], tau_max=[1.0, 2.0]), "gains disagree on nv"),
    ],
)
def test_bad_gains_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Gains(**kwargs)


def test_scalar_kp_needs_nv():
    with pytest.raises(ValueError, match="needs nv"):
        Gains.critical_ratio(1.0, 0.01)
