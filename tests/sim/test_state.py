"""Going back in a PyBullet world (tracker.sim.state): a checkpoint plus replayed steps is bit-exact."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from tracker.character.character import Character
from tracker.sim.state import Rewind, SavedState
from tracker.sim.world import World, WorldSettings

REPO_DIR = Path(__file__).resolve().parents[2]
WALK = REPO_DIR.parent / "shared" / "mocap" / "cmu_02_01_walk.bvh"


def _random_run(every: int | None, drop: float, n: int = 48, seed: int = 7) -> tuple[np.ndarray, int, Rewind | None]:
    """Random joint torques and base wrenches on the humanoid dropped from ``drop`` m above its
    standing height; with ``every``, before each step a trial step under 5x the torques is taken
    and undone with a :class:`Rewind`. Returns the states, the steps with contacts and the rewind."""
    rng = np.random.default_rng(seed)
    taus = rng.normal(0, 3, (n, 43))
    taus[:, :6] = rng.normal(0, 30, (n, 6))
    with World(WorldSettings(dt=1 / 60)) as w:
        c = Character.load(w.client, "humanoid")
        q, v = c.get_state()
        q[2] += drop
        c.reset_state(q, v)
        rw = Rewind(w.client, every=every) if every else None
        states, touching = [], 0
        for tau in taus:
            if rw is not None:
                rw.now()
                c.apply_torques(5 * tau)
                w.step()
                rw.back()
            c.apply_torques(tau)
            w.step()
            if rw is not None:
                rw.record(lambda tau=tau: (c.apply_torques(tau), w.step()))
            states.append(np.concatenate(c.get_state()))
            touching += bool(p.getContactPoints(c.body_id, physicsClientId=w.client))
        if rw is not None:
            rw.close()
    return np.array(states), touching, rw


@pytest.mark.parametrize("drop", [-0.02, 0.15])
def test_rewind_is_bit_exact_with_contacts_and_their_onset(drop):
    """Feet pressed into the ground from the start (-2 cm), and a fall onto it (+15 cm: the first
    contact appears after checkpoints saved without any): trials undone by restore + replay leave
    every state bit-identical to the run without trials."""
    ref, touching, _ = _random_run(None, drop)
    assert touching >= 10  # contacts are exercised, not only free flight
    for every in (1, 4):
        got, _, rw = _random_run(every, drop)
        np.testing.assert_array_equal(got, ref)
        if every == 4:
            assert rw.replays > 0 and rw.saves < len(ref)  # the replay path was really taken


def test_saved_state_restores_and_frees():
    with World(WorldSettings(dt=1 / 60)) as w:
        c = Character.load(w.client, "humanoid")
        q0 = c.get_state()[0]
        with SavedState(w.client) as s:
            for _ in range(5):
                w.step()
            assert not np.array_equal(c.get_state()[0], q0)
            s.restore()
            np.testing.assert_array_equal(c.get_state()[0], q0)
        assert s.id is None
        s.close()  # idempotent


def test_rewind_saves_again_when_a_body_is_added():
    with World(WorldSettings(dt=1 / 60)) as w:
        Character.load(w.client, "humanoid")
        rw = Rewind(w.client, every=8)
        rw.now()
        w.step()
        rw.record(w.step)
        ball = p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_SPHERE, radius=0.1, physicsClientId=w.client),
                                 basePosition=[3, 0, 1], physicsClientId=w.client)
        rw.now()  # the old checkpoint has one body fewer: restoring it would fail
        assert rw.saves == 2
        w.step()
        rw.back()
        assert p.getBasePositionAndOrientation(ball, physicsClientId=w.client)[0] == (3.0, 0.0, 1.0)
        rw.close()
    with pytest.raises(RuntimeError):
        Rewind(0).back()


@pytest.mark.skipif(not WALK.exists(), reason="needs ../shared/mocap")
@pytest.mark.parametrize("root,substeps", [("anchored", 1), ("free", 2)])
def test_vt_peek_with_rewind_equals_a_save_per_peek(root, substeps, monkeypatch):
    """Simulation.run lends vt's peek a Rewind (a checkpoint every few steps); the recording is
    bit-identical to peeking with a saveState / restoreState every step (REWIND_EVERY = 0)."""
    from tracker.character.model import load_model
    from tracker.retarget import load_clip_reference
    from tracker.sim import simulation
    from tracker.sim.simulation import SimOptions, Simulation

    model = load_model("humanoid")
    ref = load_clip_reference(WALK, model="humanoid")
    recs = []
    for plain in (False, True):
        monkeypatch.setattr(simulation, "REWIND_EVERY", 0 if plain else 6)
        sim = Simulation(model, ref, SimOptions(controller="vt", dt=1 / 60, root=root, substeps=substeps,
                                                controller_options=(("f0", "peek"),)))
        rows = []
        rec = sim.run(1.0, on_step=rows.append)  # watching the run does not stop the rewind
        assert len(rows) == rec.n_steps
        sim.close()
        assert rec.status == "ok" and rec.meta["vt_peeks"] > 30
        recs.append(rec)
    assert recs[0].meta["rewind_saves"] < recs[0].meta["vt_peeks"]  # fewer saves than peeks
    assert recs[1].meta["rewind_saves"] == 0  # the plain path: a save per peek, no Rewind
    np.testing.assert_array_equal(recs[0].q, recs[1].q)
    np.testing.assert_array_equal(recs[0].tau, recs[1].tau)
