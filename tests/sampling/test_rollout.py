"""Rollouts from saved states: the same steps as 'tracker run', chained or not, serial or parallel (issue 20)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from tracker.errors import ConfigError
from tracker.experiments.config import config_from_data
from tracker.experiments.runner import build, simulate
from tracker.sampling.cost import CostWeights, TrackingCost
from tracker.sim.offsets import OffsetTrack
from tracker.sampling.pool import RolloutPool
from tracker.sampling.rollout import FootContactReader, RolloutRequest, RolloutWorker, _far_from_changes

ROOT = Path(__file__).resolve().parents[2]
WALK = str((ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve())


def config(offsets: str | None = None, duration: float = 0.5):
    raw = {"clip": {"path": WALK}, "root": {"mode": "free"}, "sim": {"dt": 1 / 60, "duration": duration},
           "outputs": {"plots": False}}
    if offsets:
        raw["controller"] = {"offsets": offsets}
    return config_from_data(raw, ROOT / "walk_free.yaml")


@lru_cache(maxsize=None)
def worker() -> RolloutWorker:
    return RolloutWorker(build(config()))


def track(seed: int, t1: float = 0.5, knots: int = 6, scale: float = 0.08) -> OffsetTrack:
    lay = worker().sim.layout
    base = OffsetTrack.zeros(lay, np.linspace(0.0, t1, knots), model="humanoid")
    return base.with_values(np.random.default_rng(seed).normal(0.0, scale, base.values.shape))


def test_a_rollout_is_the_run_tracker_run_makes_with_the_same_track(tmp_path):
    tr = track(1)
    path = tr.save(tmp_path / "t.npz")
    rec, _ = simulate(build(config(str(path))))
    w = worker()
    res = w.rollout(RolloutRequest(w.initial_state(), tr, 0.5, keep_states=True))
    assert res.steps == len(rec.t) == 30 and not res.diverged
    np.testing.assert_array_equal(res.q, rec.q)
    np.testing.assert_array_equal(res.q_end, rec.q[-1])


def test_with_stance_held_spd_the_chained_rollouts_are_the_run(tmp_path):
    """tracker optimize's clip settings (balance stance constraints, gravity fed forward): the contacts steer the
    servo, so the start state must be the one a fresh run has (a second reset settles other contact points)."""
    tr = track(5, t1=0.6)
    path = tr.save(tmp_path / "t.npz")
    held = {"enabled": True, "kp": 0.0, "kd": 0.0, "gravity": True}
    # 1/240 s: at 1/120 s the left ankle's servo, blind to the landing foot's contact, spins it to the
    # engine's clamp at the first touchdown (0.11-0.51 s, depending on the reference's last millimetres)
    raw = {"clip": {"path": WALK}, "root": {"mode": "free"}, "sim": {"dt": 1 / 240, "duration": 0.6},
           "controller": {"gains": {"scale": 3.0}, "balance": held}, "outputs": {"plots": False}}
    cfg = config_from_data(raw, ROOT / "walk_held.yaml")
    w = RolloutWorker(build(cfg))
    try:
        start = w.initial_state()
        s, qs = start, []
        for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
            part = w.rollout(RolloutRequest(s, tr, t, keep_states=True))
            qs.append(part.q)
            s = part.end
        assert w.initial_state().engine == start.engine  # the same start however long the worker has run
    finally:
        w.close()
    raw["controller"]["offsets"] = str(path)
    rec, _ = simulate(build(config_from_data(raw, ROOT / "walk_held.yaml")))
    np.testing.assert_array_equal(np.concatenate(qs), rec.q)


def test_chained_windows_equal_one_long_rollout():
    w, tr = worker(), track(2)
    start = w.initial_state()
    whole = w.rollout(RolloutRequest(start, tr, 0.5, keep_states=True))
    s, qs = start, []
    for k in range(1, 6):
        part = w.rollout(RolloutRequest(s, tr, 0.1 * k, keep_states=True))
        qs.append(part.q)
        s = part.end
        assert abs(s.t - 0.1 * k) < 1e-9
    np.testing.assert_array_equal(np.concatenate(qs), whole.q)
    # a start state restored from engine memory (the worker's cache) gives the same as from its bytes
    again = w.rollout(RolloutRequest(start, tr, 0.5, keep_states=True))
    np.testing.assert_array_equal(again.q, whole.q)


def test_a_look_ahead_leaves_the_window_as_it_was_and_scores_the_steps_after_it():
    w, tr = worker(), track(4)
    start = w.initial_state()
    plain = w.rollout(RolloutRequest(start, tr, 0.2, keep_states=True))
    ahead = w.rollout(RolloutRequest(start, tr, 0.2, keep_states=True, t_look=0.4))
    assert ahead.cost == plain.cost and ahead.terms == plain.terms and ahead.fell == plain.fell
    np.testing.assert_array_equal(ahead.q, plain.q)
    assert ahead.end.t == plain.end.t and ahead.end.engine == plain.end.engine  # the state at t_end, not t_look
    assert plain.look_cost == 0.0
    # the look-ahead's cost is the cost of going on from the window's end with the same track
    after = w.rollout(RolloutRequest(plain.end, tr, 0.4))
    assert after.steps == 12 and ahead.look_cost == after.cost > 0


def test_two_workers_give_what_one_gives_in_request_order():
    w = worker()
    start = w.initial_state()
    reqs = [RolloutRequest(start, track(10 + i, t1=0.1, knots=2, scale=0.15), 0.1, tag=i) for i in range(6)]
    import glob
    import tempfile

    scratch = ["/dev/shm", tempfile.gettempdir()]
    before = {f for d in scratch for f in glob.glob(f"{d}/tracker-*.bullet")}
    serial = RolloutPool(config(), workers=1).run(reqs)
    parallel = RolloutPool(config(), workers=2).run(reqs)
    after = {f for d in scratch for f in glob.glob(f"{d}/tracker-*.bullet")}
    # the engine states passed through scratch files (tracker-PARENT-PID-*.bullet) that are gone: none is
    # left by this process's worker processes, which have ended
    mine = [f for f in after - before if Path(f).name.split("-")[1] == str(os.getpid())]
    assert not mine, mine
    assert [r.tag for r in parallel] == list(range(6))
    for a, b in zip(serial, parallel):
        assert a.cost == b.cost and a.terms == b.terms
        np.testing.assert_array_equal(a.q_end, b.q_end)
        assert a.end.engine == b.end.engine  # the end states are the same bytes
    assert len({r.cost for r in serial}) == 6  # different tracks, different costs


def test_cost_terms_grow_with_the_offsets():
    w = worker()
    start = w.initial_state()
    costs = [w.rollout(RolloutRequest(start, track(3, scale=s) if s else None, 0.5)).cost for s in (0.0, 0.05, 0.3)]
    assert 0 < costs[0] < costs[2] and costs[1] < costs[2]


def test_the_velocity_term_is_the_roots_linear_velocity_error():
    cost = TrackingCost(build(config()).model)
    lay = cost.layout
    q = np.tile(lay.neutral_q(), (4, 1))
    v_ref = np.zeros((4, lay.nv))
    v = v_ref.copy()
    v[:, 0] = 0.3  # 0.3 m/s too fast forward
    v[:, 3:6] = 5.0  # the root's spin and the joints' speeds do not count
    v[:, 6:] = -2.0
    terms = cost.terms(q, q, v, v_ref)
    assert terms["velocity"] == pytest.approx(0.09) and terms["pose"] == 0.0 and terms["root"] == 0.0
    assert cost.terms(q, q)["velocity"] == 0.0  # no velocities given: no term
    assert cost.total(terms) == pytest.approx(cost.weights.velocity * 0.09)


def test_the_contact_term_is_the_share_of_feet_whose_contact_differs_from_the_clips():
    cost = TrackingCost(build(config()).model)
    q = np.tile(cost.layout.neutral_q(), (4, 1))
    mismatch = np.array([[False, False], [True, False], [True, True], [False, False]])
    terms = cost.terms(q, q, contact_mismatch=mismatch)
    assert terms["contact"] == pytest.approx(3 / 8)
    assert cost.terms(q, q)["contact"] == 0.0  # no labels: no term
    weighted = TrackingCost(build(config()).model, CostWeights(contact=2.0))
    assert weighted.total(terms) - cost.total(terms) == pytest.approx(2.0 * 3 / 8)


def test_contact_labels_are_not_judged_next_to_their_changes():
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 0, 0, 0], bool)[:, None]
    assert _far_from_changes(labels, 1).ravel().tolist() == [1, 1, 0, 0, 1, 1, 0, 0, 1, 1]
    assert _far_from_changes(labels, 0).all()
    assert _far_from_changes(np.zeros((5, 2), bool), 3).all()


def test_the_contact_reader_sees_the_clips_stance_foot_and_a_lifted_one():
    w = worker()
    reader = FootContactReader.of(w.sim)
    assert reader is not None
    import pybullet as p

    w._restore(w.initial_state())
    c = w.sim.character
    p.performCollisionDetection(physicsClientId=c.client_id)  # contacts are listed after a step or a detection
    t0 = w.sim.t
    on_clip = reader.reference(t0)
    assert on_clip.any() and (reader.sim() == on_clip).all()  # the clip's pose at t0 stands as labelled
    assert not reader.mismatch(t0).any()
    # the whole body lifted 5 cm: no foot touches, so each labelled stance foot is a mismatch
    pos, orn = p.getBasePositionAndOrientation(c.body_id, physicsClientId=c.client_id)
    p.resetBasePositionAndOrientation(c.body_id, [pos[0], pos[1], pos[2] + 0.05], orn, physicsClientId=c.client_id)
    p.performCollisionDetection(physicsClientId=c.client_id)
    assert not reader.sim().any()
    assert (reader.mismatch(t0) == (on_clip & reader.judged[reader.frame(t0)])).all()


def test_a_clip_without_contact_labels_has_no_contact_reader():
    from dataclasses import replace

    w = worker()
    sim = w.sim
    saved = sim.reference
    try:
        sim.reference = replace(saved, contacts=None)
        assert FootContactReader.of(sim) is None
    finally:
        sim.reference = saved


def test_fast_forward_kinematics_matches_the_models():
    cost = TrackingCost(build(config()).model)
    lay = cost.layout
    rng = np.random.default_rng(4)
    for _ in range(5):
        q = lay.neutral_q()
        q[0:3] = rng.normal(size=3)
        for s in [None, *lay.joints]:
            sl = slice(3, 7) if s is None else s.q
            if s is None or s.kind == "spherical":
                r = rng.normal(size=4)
                q[sl] = r / np.linalg.norm(r)
            else:
                q[sl] = rng.uniform(-2, 2)
        pos, com = cost.forward(q)
        ref_pos, ref_rot = cost.kin.forward(q)
        for link, p_ in ref_pos.items():
            np.testing.assert_allclose(pos[link], p_[0], atol=1e-12)
        m = np.array([cost.kin.masses[k] for k in cost._links])
        c = sum(mk * (ref_pos[k][0] + ref_rot[k][0].apply(cost.kin.inertial_origin[k]))
                for k, mk in zip(cost._links, m)) / m.sum()
        np.testing.assert_allclose(com, c, atol=1e-12)


def test_pool_refuses_bad_settings():
    with pytest.raises(ConfigError, match="workers must be a whole number >= 1"):
        RolloutPool(config(), workers=0)
    with pytest.raises(ConfigError, match="backend 'gpu' is not one of: local, ray"):
        RolloutPool(config(), backend="gpu")
    w = worker()
    w.technique = "memory"
    try:
        start = w.initial_state()
    finally:
        w.technique = "bullet"
    with pytest.raises(ConfigError, match="portable start states"):
        RolloutPool(config(), workers=2).run([RolloutRequest(start, None, 0.05)] * 2)


@pytest.mark.skipif(not Path(WALK).exists(), reason="needs ../shared/mocap")
def test_a_workers_rollouts_do_not_depend_on_what_it_ran_before():
    """The same batch three times in one fresh worker (the optimizer's clip config: free root, balance,
    1/120 s with 4 substeps): every rollout's cost and end pose are the same each time, and a segment
    simulated on from each end state is too. (The end states' bytes may differ: the engine's
    serialisation of its contact manifolds carries bookkeeping that is not state.)"""
    from tracker.sampling.optimize import clip_config
    from tracker.sampling.samcon import SamconOptions, widths_vector
    from tracker.sampling.start import plan_start

    cfg = config_from_data(clip_config(Path(WALK)), ROOT / "walk_clip.yaml")
    start, _ = plan_start(cfg)
    w = RolloutWorker(build(start.config))
    lay = w.sim.layout
    width = widths_vector(lay, SamconOptions().widths)
    starts = [w.initial_state()]
    for _ in range(3):
        starts.append(w.rollout(RolloutRequest(starts[-1], None, starts[-1].t + 0.1)).end)
    rng = np.random.default_rng(0)
    reqs = []
    for st in starts:
        base = OffsetTrack.zeros(lay, np.array([st.t, st.t + 0.1]))
        for _ in range(8):
            vals = np.vstack([np.zeros(base.n_dofs), width * rng.uniform(-1, 1, base.n_dofs)])
            reqs.append(RolloutRequest(st, base.with_values(vals), st.t + 0.1))
    batches = [[w.rollout(r) for r in reqs] for _ in range(3)]
    for later in batches[1:]:
        for a, b in zip(batches[0], later):
            assert a.cost == b.cost and np.array_equal(a.q_end, b.q_end)
    for a, b in zip(batches[0], batches[1]):
        ra = w.rollout(RolloutRequest(a.end, None, a.end.t + 0.1))
        rb = w.rollout(RolloutRequest(b.end, None, b.end.t + 0.1))
        assert ra.cost == rb.cost and np.array_equal(ra.q_end, rb.q_end)
