"""The ``rollout`` section of ``scripts/bench.py`` (issues 20 and 32): a rollout step against a bare engine step,
2 worker processes against 1, and Ray against local processes, each ratio measured in the same run.

Both baselines of a rollout step are engine steps of the same model at the same time step: the rollouts'
own steps replayed open loop (each start state restored from engine memory, the torques the rollout
applied, ``stepSimulation``: the same states, contacts and solver work), and a tracked walk's steps (the
section's earlier baseline; the walk's later steps hold more contacts, so each costs more). Parallel
throughput is taken on kept worker processes (``RolloutPool`` keeps them from batch to batch), 1 and 2
workers interleaved, best of the repeats; their start-up is a row of its own. The cores are shared: the
load average is printed with the rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np

from bench_harness import MOCAP_DIR, REPO, Row, best_time, section


def _interleaved(cases: dict, repeat: int) -> dict[str, float]:
    """Best wall time of each case over ``repeat`` rounds, the cases taken in turn (after one warm-up round)."""
    for fn in cases.values():
        fn()
    best = {k: float("inf") for k in cases}
    for _ in range(repeat):
        for k, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def _load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


@section("rollout")
def bench_rollout(args: argparse.Namespace) -> list[Row]:
    """Rollouts (issues 20, 32): 0.1 s windows from saved states against bare steps; 2 workers vs 1; Ray vs local."""
    import tracker.quiet  # noqa: F401
    import pybullet as p

    from tracker.experiments.config import config_from_data
    from tracker.sampling.pool import RolloutPool
    from tracker.sampling.rollout import RolloutRequest
    from tracker.sim.offsets import OffsetTrack
    from tracker.sim.snapshot import capture, forget, restore

    cfg = config_from_data({"clip": {"path": str((MOCAP_DIR / "cmu_02_01_walk.bvh").resolve())},
                            "root": {"mode": "free"}, "sim": {"dt": 1 / 60}}, REPO / "bench.yaml")
    pool = RolloutPool(cfg, workers=1)
    worker = pool.local
    sim, client = worker.sim, worker.sim.world.client
    start = worker.initial_state()
    rng = np.random.default_rng(0)
    n_roll, window = 48, 0.1
    reqs = []
    for i in range(n_roll):
        tr = OffsetTrack.zeros(sim.layout, [0.0, window])
        reqs.append(RolloutRequest(start, tr.with_values(rng.normal(0.0, 0.1, tr.values.shape)), window, tag=i))
    steps = n_roll * int(round(window / sim.opt.dt))
    rows: list[Row] = [Row(f"machine: {os.cpu_count()} cores, {_load()} at the start")]

    # The rollouts' own engine steps, open loop: the torque commands each rollout applied, in its order.
    commands: list[list] = []
    spy, real = [], sim.character.torque_command

    def recording(tau):
        spy.append(real(tau))
        return spy[-1]
    sim.character.torque_command = recording
    try:
        for r in reqs:
            spy.clear()
            worker.rollout(r)
            commands.append(list(spy))
    finally:
        del sim.character.torque_command

    def same_states():
        for cmds in commands:
            worker._restore(start)  # from engine memory (the rollouts' own cached restore)
            for cmd in cmds:
                cmd()
                p.stepSimulation(physicsClientId=client)

    # A tracked walk's steps: the torques of 4.8 s of a tracked run, replayed open loop from the clip's start.
    sim.reset()
    taus = [sim.step()["tau"] for _ in range(steps)]

    def walk_steps():
        sim.reset()
        for tau in taus:
            sim.character.apply_torques(tau)
            p.stepSimulation(physicsClientId=client)

    def plain():
        sim.reset()
        for _ in range(steps):
            sim.step()
    cost_only = [dataclasses.replace(r, keep_end=False) for r in reqs]
    t = _interleaved({"same": same_states, "walk": walk_steps, "plain": plain,
                      "kept": lambda: pool.run(reqs), "cost": lambda: pool.run(cost_only)}, args.repeat)
    rows += [Row("bare step: the rollouts' own steps replayed open loop", t["same"] / steps,
                 note=f"{steps / t['same']:8.0f} steps/s"),
             Row("bare step: a tracked walk's steps replayed open loop", t["walk"] / steps,
                 note=f"{steps / t['walk']:8.0f} steps/s"),
             Row("Simulation.step (SPD, free root, CMU walk, 1/60 s)", t["plain"] / steps,
                 note=f"{steps / t['plain']:8.0f} steps/s")]
    for name, key in (("rollouts, end state kept (bullet)", "kept"), ("rollouts, cost only", "cost")):
        rows.append(Row(f"{name}: {n_roll} x {window:g} s windows, 1 worker", t[key] / steps,
                        note=f"{steps / t[key]:8.0f} steps/s"))
    rows.append(Row("RATIO rollout step vs bare step (same states; target >= 0.7)", ratio=t["same"] / t["kept"]))
    rows.append(Row("      rollout step vs bare step (tracked walk's states)", ratio=t["walk"] / t["kept"]))

    for tech in ("memory", "bullet"):
        snap = capture(sim, tech)
        save, _ = best_time(lambda: forget(sim, capture(sim, tech)) if tech == "memory" else capture(sim, tech),
                            args.repeat * 20)
        back, _ = best_time(lambda: restore(sim, snap), args.repeat * 20)
        rows.append(Row(f"snapshot {tech}: capture", save))
        rows.append(Row(f"snapshot {tech}: restore", back))
        forget(sim, snap)

    big = reqs * 8
    big_steps = len(big) * steps / n_roll
    two = RolloutPool(cfg, workers=2)
    t0 = time.perf_counter()
    two.run(reqs[:2])  # forks the processes, each builds its simulation
    rows.append(Row("2 worker processes: start-up (fork, build, first chunk)", time.perf_counter() - t0))
    par = _interleaved({"one": lambda: pool.run(big), "two": lambda: two.run(big)}, max(args.repeat, 3))
    rows.append(Row(f"rollouts, {len(big)} x {window:g} s, 1 worker", par["one"] / big_steps,
                    note=f"{big_steps / par['one']:8.0f} steps/s"))
    rows.append(Row(f"rollouts, {len(big)} x {window:g} s, 2 worker processes", par["two"] / big_steps,
                    note=f"{big_steps / par['two']:8.0f} steps/s"))
    rows.append(Row("RATIO 2 workers vs 1, throughput (target >= 1.8 on 2 idle cores)", ratio=par["one"] / par["two"],
                    note=_load()))
    rows += _versus_ray(cfg, big, big_steps, two, max(args.repeat, 3))
    two.close()

    pool.close()
    rows.append(Row(f"machine: {_load()} at the end"))
    return rows


def _versus_ray(cfg, batch: list, batch_steps: float, local, repeat: int) -> list[Row]:
    """Ray (a local Ray of 2 CPUs, 2 workers) against 2 local worker processes on the same batch; same results."""
    from tracker.sampling.pool import RolloutPool

    try:
        import ray  # noqa: F401
    except ImportError:
        return [Row("RATIO Ray vs local: skipped (ray is not installed: pip install -e '.[ray]')")]
    remote = RolloutPool(cfg, workers=2, backend="ray")
    try:
        t0 = time.perf_counter()
        remote.run(batch[:2])
        rows = [Row("Ray, 2 workers: start-up (ray.init, workers build)", time.perf_counter() - t0)]
        out = {}

        def run(name, pool):
            out[name] = pool.run(batch)
        t = _interleaved({"local": lambda: run("local", local), "ray": lambda: run("ray", remote)}, repeat)
        same = all(a.cost == b.cost and a.end.engine == b.end.engine for a, b in zip(out["local"], out["ray"]))
        rows.append(Row(f"rollouts, {len(batch)} x 0.1 s, Ray 2 workers", t["ray"] / batch_steps,
                        note=f"{batch_steps / t['ray']:8.0f} steps/s"))
        rows.append(Row("RATIO Ray vs local, throughput (2 workers each)", ratio=t["local"] / t["ray"],
                        note=f"results bit-identical: {same}; {_load()}"))
        return rows
    finally:
        remote.close()
