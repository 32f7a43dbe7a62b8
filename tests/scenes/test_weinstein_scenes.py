"""Weinstein 2008 in maximal coordinates (tracker/scenes/weinstein_scenes.py): Figs. 1, 8, 9."""

from __future__ import annotations

import numpy as np

from tracker.scenes import weinstein_scenes as ws


def test_post_stabilisation_with_a_resting_block_holds_the_planks_and_the_block_stays_on():
    r = ws.resting_block(True, duration=2.5)
    assert r["final"] < 1e-9  # measured 1e-14 (4 s)
    assert r["prediction_miss"] < 1e-9  # each hinge hits its closed-form prediction under contact
    assert r["slide"] < 1e-3  # the block moved 0.15 mm on its plank
    assert r["gap"] < 1e-3  # joint drift stays bounded (0.06 mm)
    assert r["block_lift"] > 0.4  # lifted with the chain (0.437 m)
    run = r["run"]
    assert np.all(np.array(run.extra["contacts_in_solve"]) >= 4)  # resting on its four corners throughout


def test_a_block_outside_the_solve_depresses_the_planks():
    held = ws.resting_block(True, duration=2.5)
    fought = ws.resting_block(False, duration=2.5)
    assert fought["final"] > 0.3  # 0.53 rad
    assert fought["block_lift"] < held["block_lift"] - 0.1


def test_obstructed_planks_struggle_and_reach_the_target_once_the_obstacle_goes():
    r = ws.obstruction(duration=4.0, release=2.0)
    assert r["blocked_error"] > 0.3 and r["free_error"] < 1e-6
    assert r["touching"] > 0.5 and r["penetration"] < 0.02
    assert r["final"] < 1e-4


def test_a_ball_hit_pushes_the_chain_far_and_it_recovers():
    r = ws.ball_hit(ball_mass=4.0, speed=10.0, duration=3.0)
    assert r["peak"] > 0.5  # 0.89 rad
    assert r["recovery"] < 2.0  # 1.3 s to within 1e-3 rad
    assert r["final"] < 1e-6


def test_muscle_activations_stay_in_bounds_and_reach_the_target():
    r = ws.muscle_mace(scale=1.0, duration=2.0)
    assert r["act_min"] >= 0.0 and r["act_max"] <= 1.0
    assert r["prediction_miss"] < 1e-9  # measured 1.4e-15: every step reaches the PD prediction
    assert r["tracking"] < 0.05
    weak = ws.muscle_mace(scale=0.2, duration=2.0)
    assert weak["act_min"] >= 0.0 and weak["act_max"] <= 1.0 + 1e-9
    assert weak["saturated"] > 0 and weak["prediction_miss"] > 1e-4  # bounded: the target is missed
