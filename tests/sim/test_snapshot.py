"""A restored simulation goes on bit for bit as the run it was saved from (issue 20, point 1)."""

from __future__ import annotations

import pickle
from functools import lru_cache
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from tracker.character.model import load_model
from tracker.errors import SimulationError
from tracker.retarget import load_clip_reference
from tracker.sim.simulation import SimOptions, Simulation
from tracker.sim.snapshot import capture, forget, restore, technique

ROOT = Path(__file__).resolve().parents[2]
WALK = ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh"
FIELDS = ("t", "q", "v", "tau", "kp", "q_ref")


@lru_cache(maxsize=None)
def walk():
    return load_clip_reference(WALK)


def rows(sim, n: int) -> list[dict]:
    return [sim.step() for _ in range(n)]


def stack(rs: list[dict]) -> dict[str, np.ndarray]:
    return {k: np.array([r[k] for r in rs]) for k in FIELDS}


def assert_same(a: list[dict], b: list[dict]) -> None:
    sa, sb = stack(a), stack(b)
    for k in FIELDS:
        np.testing.assert_array_equal(sa[k], sb[k], err_msg=k)


def shove(sim, rng) -> None:
    """Another branch: the character knocked off its state (the restore must undo it)."""
    q, v = sim.character.get_state()
    v = v + rng.normal(0.0, 0.5, v.shape)
    sim.character.reset_state(q, v)
    sim._state = None


@pytest.mark.parametrize("tech", ["memory", "bullet"])
def test_restore_then_step_equals_an_uninterrupted_free_root_run(tech):
    n, k = 45, 15
    sim = Simulation(load_model("humanoid"), walk(), SimOptions(root="free", dt=1 / 60))
    try:
        base = rows(sim, n)
        sim.reset()
        head = rows(sim, k)
        snap = capture(sim, tech)
        contacts = p.getContactPoints(sim.character.body_id, physicsClientId=sim.world.client)
        assert len(contacts) >= 2  # the feet are on the ground: the contacts are part of the state
        shove(sim, np.random.default_rng(1))
        other = rows(sim, 12)
        assert not np.array_equal(stack(other)["q"], stack(base[k:k + 12])["q"])  # the branch really differs
        restore(sim, snap)
        tail = rows(sim, n - k)
        # and once more from the same snapshot: it can be restored many times
        restore(sim, snap)
        again = rows(sim, n - k)
        forget(sim, snap)
    finally:
        sim.close()
    assert_same(base, head + tail)
    assert_same(base[k:], again)
    assert stack(base)["q"][-1, 2] > 0.5  # the free root is still up over this short run


def test_a_portable_snapshot_restores_bit_identically_in_another_simulation():
    n, k = 40, 12
    model, ref = load_model("humanoid"), walk()
    a = Simulation(model, ref, SimOptions(root="free", dt=1 / 60))
    b = Simulation(model, ref, SimOptions(root="free", dt=1 / 60))
    try:
        rows(b, 7)  # b has a history of its own (its own contact caches, clock, counters)
        base = rows(a, n)
        a.reset()
        rows(a, k)
        snap = pickle.loads(pickle.dumps(capture(a, "bullet")))  # as it travels to a worker process
        restore(b, snap)
        tail = rows(b, n - k)
    finally:
        a.close()
        b.close()
    assert_same(base[k:], tail)


def test_balls_spawned_after_the_snapshot_are_undone_and_come_again(tmp_path):
    """Volleyball: saved before the ball is launched, restored after it hit the forearms."""
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, make_simulation, scenario_of, schedule_of

    cfg = load_config(ROOT / "configs" / "volleyball_slow.yaml", ["sim.substeps=2"])
    prep = build(cfg)
    n = int(round(1.75 / cfg.sim.dt))
    k = int(round(0.5 / cfg.sim.dt))  # the ball is thrown later (it meets the forearm at 1.5 s)

    def fresh():
        scenario = scenario_of(prep)
        return make_simulation(prep, scenario=scenario, schedule=schedule_of(prep)), scenario

    sim, scenario = fresh()
    try:
        base = rows(sim, n)
        base_events = list(scenario.events)
        base_balls = scenario.ball_positions().copy()
        assert base_events  # the ball did hit
        sim.close()
        sim, scenario = fresh()
        head = rows(sim, k)
        assert not sim.scenario._balls[0].launched  # its body waits, parked (BallScenario.reset)
        snap = capture(sim, "memory")
        other = rows(sim, n - k)  # the ball spawns and hits in this branch
        assert scenario.events and stack(other)["kp"].min() < stack(head)["kp"].min()
        restore(sim, snap)
        assert not sim.scenario._balls[0].launched and not scenario.events
        tail = rows(sim, n - k)
        assert_same(base, head + tail)
        assert [e["t"] for e in scenario.events] == [e["t"] for e in base_events]
        np.testing.assert_array_equal(scenario.ball_positions(), base_balls)
    finally:
        sim.close()


def test_unknown_technique_is_named():
    with pytest.raises(SimulationError, match="technique 'disk' is not one of: memory, bullet"):
        technique("disk")


@pytest.mark.parametrize("tech", ["memory", "bullet"])
def test_snapshots_restore_in_any_order(tech):
    """Each restore brings back its own state (PyBullet caches files by name: the bullet technique must not)."""
    sim = Simulation(load_model("humanoid"), walk(), SimOptions(root="free", dt=1 / 60))
    try:
        snaps, states = [], []
        for _ in range(3):
            rows(sim, 4)
            snaps.append(capture(sim, tech))
            states.append(np.concatenate(sim.character.get_state()))
        for i in (0, 2, 1, 0, 2):
            restore(sim, snaps[i])
            np.testing.assert_array_equal(np.concatenate(sim.character.get_state()), states[i])
            assert sim.t == snaps[i].t
    finally:
        sim.close()


@pytest.mark.parametrize("tech", ["memory", "bullet"])
@pytest.mark.parametrize("substeps", [1, 4])
def test_a_fresh_worlds_state_restored_after_steps_goes_on_as_the_fresh_world_did(tech, substeps):
    """A search's start state is saved before any step, when the engine holds no contact manifold;
    restored after steps that made manifolds, it must not step on from them (snapshot._drop_contacts:
    without it the first step differed by 16 mm on this clip at one substep)."""
    kick = load_clip_reference(ROOT / "data" / "motions" / "kick.bvh")
    sim = Simulation(load_model("humanoid"), kick, SimOptions(dt=1 / 120, root="free", substeps=substeps, start=1.0))
    try:
        snap = capture(sim, tech)
        fresh = rows(sim, 30)
        restore(sim, snap)
        again = rows(sim, 30)
        restore(sim, snap)
        assert_same(fresh, again)
        assert_same(fresh, rows(sim, 30))
    finally:
        if tech == "memory":
            forget(sim, snap)
        sim.close()
