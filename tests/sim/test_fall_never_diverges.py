"""A free root that falls ends as fallen (exit 4), never diverged (exit 3): the grid of issue 34, item 5.

Every shared clip on a free root, with and without balance feedback, at 1/30, 1/60 and 1/120 s,
from clip times 0, 0.05 and 0.5 s, 1.5 s each (or to the clip's end): 216 runs, about 36 s of one
core. Before the fix, 15 of them diverged on this machine:

- ankles at PyBullet's 100 rad/s clamp under balance: the Bandai kick (1/60 s from 0.5 s), the
  Bandai punch (1/60 s from 0), the CMU walk 02_01 (1/120 s from 0 and 0.5), the CMU punch 02_05
  (1/120 s from 0, 1/30 s from 0.5), the CMU walk 06_01 (1/120 s from 0 and 0.05), the basketball
  clip (1/60 s from 0) and the wallet catch (1/60 s from 0.05), within 0.03-0.6 s;
- wrists of fallen bodies at 99-100 rad/s: the Bandai punch without balance (1/120 s from 0), the
  CMU walk 02_01 without (1/120 s from 0.5), the CMU punch 02_05 with (1/60 s from 0), the keys
  catch without (1/60 s from 0); and the CMU walk 02_01's left shoulder with (1/120 s from 0.05).

After it none does, and no joint of any run passes 65 rad/s (:meth:`tracker.sim.world.World.unclamp`,
:func:`tracker.control.balance.contact_rows`, :meth:`tracker.sim.world.World.hold_velocities`); with
starts 0.1, 0.25 and 1 s instead: none, 75 rad/s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "mocap"
CLIPS = ("bandai_kick_normal_001", "bandai_punch_normal_001", "bandai_raise_up_both_hands_normal_070",
         "bandai_walk_normal_001", "cmu_02_01_walk", "cmu_02_05_punch_strike_ccbase", "cmu_06_01_walk_ccbase",
         "cmu_06_14_basketball_crossover_dribble_shoot_ccbase", "cmu_10_01_soccer_kick", "cmu_10_05_soccer_kick",
         "cmu_22_25_catch_wallet", "cmu_23_22_catch_keys")
DTS = {"1/30": 1 / 30, "1/60": 1 / 60, "1/120": 1 / 120}
STARTS = (0.0, 0.05, 0.5)
DURATION = 1.5  # s after the start
GRID = [(clip, balance, dt, start) for clip in CLIPS for balance in (False, True) for dt in DTS for start in STARTS]


def _name(cell) -> str:
    clip, balance, dt, start = cell
    return f"{clip}-{'balance' if balance else 'plain'}-{dt.replace('/', '_')}-{start:g}"


@pytest.mark.parametrize("cell", GRID, ids=_name)
def test_a_free_root_falls_or_stands_but_never_diverges(cell):
    from tracker.errors import ConfigError
    from tracker.experiments.config import config_from_data
    from tracker.experiments.runner import build, make_simulation

    clip, balance, dt, start = cell
    path = MOCAP / f"{clip}.bvh"
    if not path.exists():
        pytest.skip(f"{path} not available")
    raw = {"clip": {"path": str(path.resolve()), "start": start}, "root": {"mode": "free"},
           "sim": {"dt": DTS[dt]}, "controller": {"balance": {"enabled": balance}}, "outputs": {"plots": False}}
    try:
        sim = make_simulation(build(config_from_data(raw, MOCAP / f"{clip}.yaml")))
    except ConfigError as exc:  # balance needs a foot on the ground at the start (none of the grid's cells)
        pytest.skip(str(exc))
    try:
        rec = sim.run(min(DURATION, sim.reference.duration - start))
    finally:
        sim.close()
    peak = float(np.abs(rec.v[:, 6:]).max()) if len(rec.v) else 0.0
    assert rec.status != "diverged", f"{rec.message} (fell at {rec.meta['fell_at']})"
    assert peak < 85.0, f"a joint reached {peak:.0f} rad/s"  # measured after the fix: 65 at most (75 elsewhere)


def test_contact_rows_are_the_normal_velocities_of_the_points_and_stop_their_approach_within_the_step():
    """:func:`tracker.control.balance.contact_rows` against PyBullet's own link velocities: ``row · v`` is
    the contact point's velocity along its normal; the target stops the approach within the step and
    lets a point ``gap`` m away come that close."""
    import pybullet as p

    from tracker.character.character import Character
    from tracker.control.balance import contact_rows
    from tracker.sim.support import GroundContacts

    cid = p.connect(p.DIRECT)
    try:
        char = Character.load(cid, "humanoid")
        rng = np.random.default_rng(3)
        q, _ = char.get_state()
        q[0:3] = (0.1, -0.2, 0.9)
        v = rng.normal(size=char.layout.nv)
        char.reset_state(q, v)
        q, v = char.get_state()
        links = np.array([char.link_index(n) for n in ("left_hand", "right_forearm", "pelvis", "left_hand")])
        points = np.array([[0.3, 0.2, 0.0], [-0.1, -0.4, 0.0], [0.0, 0.0, 0.0], [0.25, 0.25, 0.0]])
        normals = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.6, 0.0, 0.8], [0.0, 0.0, 1.0]])
        gaps = np.array([-0.01, 0.0, 0.002, 0.05])
        rows = contact_rows(char, q, v, 1 / 60, GroundContacts(links, points, normals, gaps))
        for i, link in enumerate(links):
            if link < 0:  # the base: its centre of mass and velocity
                com = np.array(p.getBasePositionAndOrientation(char.body_id, physicsClientId=cid)[0])
                lin, ang = map(np.array, p.getBaseVelocity(char.body_id, physicsClientId=cid))
            else:
                st = p.getLinkState(char.body_id, int(link), computeLinkVelocity=1, physicsClientId=cid)
                com, lin, ang = np.array(st[0]), np.array(st[6]), np.array(st[7])
            vn = normals[i] @ (lin + np.cross(ang, points[i] - com))
            assert rows.jac[i] @ v == pytest.approx(vn, abs=1e-9 * (1 + abs(vn)))
            assert rows.target[i] == pytest.approx((-max(gaps[i], 0.0) * 60 - vn) * 60)
        assert rows.unilateral.all() and list(rows.group) == [-1, -2, -3, -4]
    finally:
        p.disconnect(cid)


def test_the_prediction_meets_each_held_rows_target_and_drops_a_row_that_would_pull():
    """``solve_constrained`` with targets: ``J a = t`` on the rows it holds, the ground pushes on them
    (``λ >= 0``), and a row whose target would need a pull is let go (the point may leave faster)."""
    from tracker.arrays import frozen
    from tracker.control.balance import Contacts, solve_constrained

    rng = np.random.default_rng(7)
    n = 8
    b = rng.normal(size=(n, n))
    a_mat = b @ b.T + n * np.eye(n)
    rhs = rng.normal(size=n)
    jac = rng.normal(size=(3, n))
    free = np.linalg.solve(a_mat, rhs)
    target = jac @ free + np.array([1.0, 0.5, -1.0])  # the first two must be pushed up; the third held would pull
    rows = Contacts(jac, frozen(np.ones(3), np.bool_), frozen([-1, -2, -3], np.int64), frozen(target))
    a, info, held = solve_constrained(a_mat, rhs, rows, held=True)
    assert info == 0 and list(held) == [True, True, False]
    np.testing.assert_allclose(jac[:2] @ a, target[:2], atol=1e-8)
    lam = np.linalg.lstsq(jac[:2].T, a_mat @ a - rhs, rcond=None)[0]
    np.testing.assert_allclose(jac[:2].T @ lam, a_mat @ a - rhs, atol=1e-8)
    assert (lam > 0).all() and jac[2] @ a > target[2]  # pushed, and the third point leaves faster than its target
    both = rows.rows(np.array([True, False, True])) + rows.rows(np.array([False, True, False]))
    assert list(both.group) == [-1, -3, -2] and np.allclose(both.target, target[[0, 2, 1]])
