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


def test_the_compiled_hull_agrees_with_scipys_convexhull():
    from scipy.spatial import ConvexHull

    rng = np.random.default_rng(19)
    cases = [rng.uniform(-0.3, 0.3, size=(n, 2)) for n in (3, 4, 5, 8, 12, 40) for _ in range(20)]
    grid = np.array([[x, y] for x in (0.0, 0.1, 0.2) for y in (0.0, 0.05, 0.1)])  # points on the edges
    cases += [grid, np.vstack([grid, grid]), grid + [1e3, -2e3]]  # duplicates; far from the origin
    cases += [np.vstack([c, c[:2]]) for c in cases[:10]]
    for xy in cases:
        s = polygon_of(np.column_stack([xy, np.zeros(len(xy))]))
        ref = ConvexHull(xy)
        assert s.area == pytest.approx(ref.volume, rel=1e-9)
        assert sorted(map(tuple, s.polygon)) == sorted(map(tuple, xy[ref.vertices]))
        # counter-clockwise, as scipy's 2-D hull
        d = np.roll(s.polygon, -1, axis=0) - s.polygon
        assert (d[:, 0] * np.roll(d[:, 1], -1) - d[:, 1] * np.roll(d[:, 0], -1) > 0).all()
        o = xy[ref.vertices].mean(axis=0)  # the shoelace about a nearby point keeps its digits far out
        x, y = xy[ref.vertices, 0] - o[0], xy[ref.vertices, 1] - o[1]
        cr = x * np.roll(y, -1) - np.roll(x, -1) * y
        centre = o + np.array([((x + np.roll(x, -1)) * cr).sum(), ((y + np.roll(y, -1)) * cr).sum()]) / (3 * cr.sum())
        assert s.center == pytest.approx(centre, abs=1e-9)


def test_a_soles_contact_point_is_kept_a_few_millimetres_up_in_every_client_but_is_no_support():
    """tracker.quiet sets Bullet's process-wide contact breaking threshold once: a fresh client (made
    after the import, with no call of its own) keeps a box's point 5 mm up (the default drops it at
    2.8 mm), and the support counts only points within SUPPORT_GAP."""
    import tracker.quiet
    import pybullet as p
    import pybullet_data

    from tracker.sim.support import SUPPORT_GAP

    assert tracker.quiet.CONTACT_BREAKING_THRESHOLD == 0.05 and SUPPORT_GAP == 0.002
    cid = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
        p.loadURDF("plane_implicit.urdf", physicsClientId=cid)
        box = p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.13, 0.05, 0.03],
                                                            physicsClientId=cid), -1, [0, 0, 0.0299],
                                physicsClientId=cid)
        p.performCollisionDetection(physicsClientId=cid)
        for lift, kept in ((0.005, True), (0.010, False)):
            p.resetBasePositionAndOrientation(box, [0, 0, 0.0299], [0, 0, 0, 1], physicsClientId=cid)
            p.performCollisionDetection(physicsClientId=cid)
            p.resetBasePositionAndOrientation(box, [0, 0, 0.03 + lift], [0, 0, 0, 1], physicsClientId=cid)
            p.performCollisionDetection(physicsClientId=cid)
            pts = p.getContactPoints(box, physicsClientId=cid)
            assert bool(pts) == kept, lift
            assert all(c[8] > SUPPORT_GAP for c in pts)
    finally:
        p.disconnect(cid)
