"""Tan 2011 Tables 1-2: the headline split into the cells the masses were fitted to and the predicted ones."""

from __future__ import annotations

import pytest

from tracker.reproduce.tan2011_tracking import FITTED_KP, split_agreement
from tracker.sim import tan2011 as T


@pytest.fixture(scope="module")
def ours() -> dict:
    return T.tables()


def test_the_split_headline_adds_up_to_the_whole(ours) -> None:
    for rtol in (0.1, 0.2):
        s, whole = split_agreement(ours, rtol), T.agreement(ours, rtol)
        assert (s.fitted_total, s.unfitted_total) == (16, 32)  # 4 formulations x 2 DOFs x 2 norms at kp = 30
        assert s.matched == whole.matched and s.total == whole.total == 48


def test_the_fitted_row_agrees_fully_and_the_predicted_ones_mostly(ours) -> None:
    s = split_agreement(ours, 0.2)
    assert FITTED_KP == 30.0
    assert (s.fitted, s.unfitted) == (16, 30)  # docs/tan2011.md, "How many cells agree"


def test_a_diverged_run_matches_none_of_its_cells(ours) -> None:
    broken = dict(ours)
    broken[("SPD", 300.0)] = None
    assert split_agreement(broken, 0.2).unfitted == split_agreement(ours, 0.2).unfitted - 4
