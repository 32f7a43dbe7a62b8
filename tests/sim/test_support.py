"""The support polygon: from points by hand, and from the engine's foot contacts under the stance."""

from __future__ import annotations

import numpy as np
import pytest

from tracker.sim.support import polygon_of


def test_two_flat_feet_give_their_hull_centroid_and_area():
    left = [[0.0, 0.1, 0], [0.2, 0.1, 0], [0.2, 0.2, 0], [0.0, 0.2, 0]]
    right = [[0.0, -0.2, 0], [0.2, -0.2, 0], [0.2, -0.1, 0], [0.0, -0.1, 0]]
    s = polygon_of(np.array(left + right), ("left_foot", "right_foot"), np.repeat([0, 1], 4))
    assert s.area == pytest.approx(0.2 * 0.4)
    assert s.center == pytest.approx([0.1, 0.0])
    assert len(s.polygon) == 4
    assert s.contains([0.1, 0.0]) and s.contains([0.19, 0.19])
    assert not s.contains([0.25, 0.0])
    assert s.signed_distance([0.1, 0.0]) == pytest.approx(-0.1)
    assert s.signed_distance([0.3, 0.0]) == pytest.approx(0.1)


def test_a_centroid_is_the_area_centre_not_the_vertex_mean():
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.5, 0.0, 0], [0.5, 0.001, 0]])  # extra points inside
    s = polygon_of(tri)
    assert s.center == pytest.approx([1 / 3, 1 / 3])


def test_collinear_and_single_points_have_no_area():
    edge = polygon_of(np.array([[0, 0, 0], [0.1, 0, 0], [0.2, 0, 0]]))
    assert edge.area == 0.0 and len(edge.polygon) == 2
    assert edge.center == pytest.approx([0.1, 0.0])
    assert edge.contains([0.05, 0.0]) and not edge.contains([0.05, 0.01])
    one = polygon_of(np.array([[0.3, 0.4, 0.0]]))
    assert one.center == pytest.approx([0.3, 0.4]) and one.contains([0.3, 0.4])
    none = polygon_of(np.zeros((0, 3)))
    assert none.empty and np.isnan(none.center).all() and not none.contains([0.0, 0.0])


def test_the_stance_stands_on_both_soles_with_its_com_over_the_polygons_centre():
    from tracker.character.model import load_model
    from tracker.sim.simulation import SimOptions, Simulation
    from tracker.sim.stance import STAND, load_pose
    from tracker.sim.support import support_of

    # Anchored, so it stays put while PyBullet's contact manifolds fill (one point per box at first).
    sim = Simulation(load_model("humanoid"), load_pose(STAND), SimOptions(root="anchored"))
    try:
        for _ in range(10):
            sim.step()
        s = support_of(sim.character, sim.world.ground)
        assert s.feet == ("left_foot", "right_foot")
        assert s.area > 0.05  # two soles, ~0.26 m x 0.38 m
        com = sim.character.center_of_mass()
        assert s.contains(com[:2])
        assert np.linalg.norm(com[:2] - s.center) < 0.02  # the lean is solved against the soles, not the contacts  # the stance's lean was solved for this
    finally:
        sim.close()
