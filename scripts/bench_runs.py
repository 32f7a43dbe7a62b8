"""Benchmark sections over whole runs and processes (state, sweep, startup, balance, rollout), registered
into ``scripts/bench.py``'s table (imported by it; run ``python scripts/bench.py --only NAME``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_harness beside this file
from bench_harness import MOCAP_DIR, Row, best_time, section  # noqa: E402


@section("state")
def bench_state(args: argparse.Namespace) -> list[Row]:
    """What going back costs in PyBullet (tracker/sim/state.py): saveState by world size, restore, remove, step."""
    import pybullet as p

    from tracker.character.character import Character
    from tracker.sim.world import World, WorldSettings

    rows: list[Row] = []

    def save_remove(cid):
        return lambda: p.removeState(p.saveState(physicsClientId=cid), physicsClientId=cid)

    def per_call(fn, n=50):
        return best_time(lambda: [fn() for _ in range(n)], args.repeat)[0] / n

    with World(WorldSettings(dt=1 / 60)) as w:
        cid = w.client
        rows.append(Row("saveState + removeState: ground plane only", per_call(save_remove(cid))))
        for k in range(10):
            p.createMultiBody(1.0, p.createCollisionShape(p.GEOM_SPHERE, radius=0.1, physicsClientId=cid),
                              basePosition=[3.0 + k, 0, 0.1], useMaximalCoordinates=True, physicsClientId=cid)
        rows.append(Row("saveState + removeState: plane + 10 balls", per_call(save_remove(cid))))
    with World(WorldSettings(dt=1 / 60)) as w:
        cid = w.client
        c = Character.load(cid, "humanoid")
        q, v = c.get_state()
        q[2] -= 0.02  # feet in the ground: manifolds to save
        c.reset_state(q, v)
        w.step()
        t_save = per_call(save_remove(cid))
        rows.append(Row("saveState + removeState: plane + humanoid (16 links)", t_save))
        sid = p.saveState(physicsClientId=cid)
        t_restore = per_call(lambda: p.restoreState(sid, physicsClientId=cid))
        rows.append(Row("restoreState (in-memory stateId)", t_restore))
        t_step = per_call(lambda: (w.step(), p.restoreState(sid, physicsClientId=cid))) - t_restore
        rows.append(Row("stepSimulation (humanoid standing, feet in contact)", t_step))
        rows.append(Row("saveState / stepSimulation", ratio=t_save / t_step))
    return rows


@section("sweep")
def bench_sweep(args: argparse.Namespace) -> list[Row]:
    """A 16-run sweep (demo_wave, SPD, dt 1/240, 2 s each): --workers 1 vs --workers 2, same summary.csv."""
    import json
    import os
    import tempfile

    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build
    from tracker.experiments.sweep import load_sweep, run_sweep

    base = REPO / "configs" / "tracking" / "demo_wave_spd.yaml"
    scales = [round(0.5 + 0.25 * k, 2) for k in range(16)]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench_sweep.yaml"
        path.write_text(
            f"name: bench\nbase: {base}\n"
            "set: {sim.dt: 1/240, clip.start: 0.5, sim.duration: 2.0, outputs.plots: false, outputs.recording: false}\n"
            f"grid:\n  controller.gains.scale: {scales}\n"
        )
        sweep = load_sweep(path)
        build(load_config(base))  # retarget once here: workers=1 runs in this process and reuses it
        times, summaries, step_time = {}, {}, {}
        for workers in (1, 2):
            best = float("inf")
            for k in range(max(1, min(args.repeat, 2))):
                out = Path(tmp) / f"w{workers}_{k}"
                start = time.perf_counter()
                run_sweep(sweep, out, workers=workers)
                elapsed = time.perf_counter() - start
                if elapsed < best:
                    best = elapsed
                    sims = [json.loads(f.read_text())["sim_s"] for f in (out / "runs").glob("*/timing.json")]
                    step_time[workers] = sum(sims) / len(sims)
                summaries[workers] = (out / "summary.csv").read_text()
            times[workers] = best
            rows.append(Row(f"16 runs, --workers {workers}", best,
                            note=f"{best / 16 * 1e3:.0f} ms per run; simulation {step_time[workers] * 1e3:.0f} ms"))
    same = "identical" if summaries[1] == summaries[2] else "DIFFERENT"
    rows.append(Row("speed-up: workers 1 / workers 2", ratio=times[1] / times[2],
                    note=f"issue 7 target >= 1.7 on 2 cores ({os.cpu_count()} CPUs here); summary.csv {same}"))
    rows.append(Row("slow-down of one run's simulation with 2 workers", ratio=step_time[2] / step_time[1],
                    note=f"1.0 on idle cores; ~2 means other processes held a core (load {os.getloadavg()[0]:.1f})"))
    return rows


@section("startup")
def bench_startup(args: argparse.Namespace) -> list[Row]:
    """Whole processes: `tracker --help`, `tracker inspect` on the 100-joint clip vs bvhio.readAsHierarchy."""
    import os
    import shutil
    import statistics
    import subprocess

    clip = MOCAP_DIR / "cmu_06_14_basketball_crossover_dribble_shoot_ccbase.bvh"  # CC_Base, 100 joints
    exe = shutil.which("tracker")
    tracker = [exe] if exe else [sys.executable, "-m", "tracker"]
    import tempfile

    # Python's default: each module's bytecode is cached after its first import (bvhio's was compiled
    # when pip installed it; an editable install compiles ours on first use). The row "no bytecode
    # cache" runs a copy of the package without __pycache__ under PYTHONDONTWRITEBYTECODE=1, so that
    # every tracker module is compiled at every start (what an editable install gets where that
    # variable is set); everything else keeps its bytecode.
    cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    fresh = Path(tempfile.mkdtemp(prefix="tracker-nopyc-"))
    shutil.copytree(REPO / "tracker", fresh / "tracker", ignore=shutil.ignore_patterns("__pycache__"))
    uncached = {**cached, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(fresh)}
    env_note = "" if "PYTHONDONTWRITEBYTECODE" not in os.environ else " (PYTHONDONTWRITEBYTECODE unset for these)"
    cases = {
        "python -c pass (interpreter start-up)": ([sys.executable, "-c", "pass"], cached),
        "python -S -c pass (without site: the floor)": ([sys.executable, "-S", "-c", "pass"], cached),
        "tracker --help": (tracker + ["--help"], cached),
        f"tracker inspect {clip.name}": (tracker + ["inspect", str(clip)], cached),
        "python -m tracker inspect, no bytecode cache": ([sys.executable, "-m", "tracker", "inspect", str(clip)],
                                                         uncached),
        "tracker inspect --json": (tracker + ["inspect", str(clip), "--json"], cached),
        "tracker inspect --events (loads numpy and scipy)": (tracker + ["inspect", str(clip), "--events"], cached),
        "python -c 'bvhio.readAsHierarchy(...)'": ([sys.executable, "-c", "import sys, bvhio; "
                                                    "bvhio.readAsHierarchy(sys.argv[1])", str(clip)], cached),
    }

    def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
        """Wall-clock and CPU (user + system) seconds of one process."""
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {proc.returncode}")
        return wall, usage.ru_utime + usage.ru_stime

    # Rounds of every case in turn, so that other processes' load falls on all cases alike; the
    # first round warms the page cache and writes the bytecode. Medians of the other rounds.
    rounds = max(args.repeat, 11)
    wall: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(rounds + 1):
        for name, (cmd, env) in cases.items():
            w, c = run(cmd, env)
            if r:
                wall[name].append(w)
                cpu[name].append(c)
    shutil.rmtree(fresh, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in wall.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    load = f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    rows = [Row(name, med[name], note=f"CPU {med_cpu[name] * 1e3:6.1f} ms, fastest {min(wall[name]) * 1e3:6.1f} ms")
            for name in cases]
    inspect, bvhio = f"tracker inspect {clip.name}", "python -c 'bvhio.readAsHierarchy(...)'"
    rows[2] = Row(rows[2].case, rows[2].seconds, note=rows[2].note + f"; issue 13 target <= 250 ms; {load}")
    rows += [
        Row("speed-up: bvhio process / tracker inspect process", ratio=med[bvhio] / med[inspect],
            note=f"issue 13 target >= 10 (medians of {rounds} rounds{env_note}; CPU time: "
                 f"{med_cpu[bvhio] / med_cpu[inspect]:.1f}x)"),
        Row("speed-up without a bytecode cache", ratio=med[bvhio] / med["python -m tracker inspect, no bytecode cache"]),
    ]
    return rows


@section("balance")
def bench_balance(args: argparse.Namespace) -> list[Row]:
    """Time per step standing in the authored stance: SPD + balance vs SPD, free root, from the same states.

    The fair comparison (issue 19's "SPD with balance costs at most 1.3x SPD per step"): same
    model, stance, dt and free root, balance on vs off the only difference. SPD alone cannot
    stand on a free root (it falls within about a second, and a fallen body has other contacts
    and costs the engine otherwise), so both are timed from the *same* states: along the balanced
    run, each step is taken once with the feedback off and once with it on from one saved engine
    state (PyBullet's saveState/restoreState, untimed), in alternating order, and the balanced
    step is kept. A step is everything the simulation does per control step (controller, the
    engine's step, reading the state back). For information: the whole balanced run against
    SPD on an anchored root (other root mode, so other physics: a held pelvis, no weight on
    the feet).
    """
    from tracker.character.model import load_model
    from tracker.control.balance import BalanceOptions
    from tracker.sim.simulation import SimOptions, Simulation
    from tracker.sim.stance import STAND, load_pose

    ref = load_pose(STAND)
    model = load_model(ref.model)
    rows: list[Row] = []
    for dt, label in ((1 / 60, "1/60"), (1 / 30, "1/30")):
        steps = 180  # 3 s at 1/60, 6 s at 1/30: as many samples at both
        per_step: dict[str, np.ndarray] = {}
        for _ in range(max(1, args.repeat)):  # the same states every run: keep each step's fastest
            sim = Simulation(model, ref, SimOptions(dt=dt, root="free", balance=BalanceOptions()))
            times = _paired_balance_steps(sim, steps)
            sim.close()
            for key, value in times.items():
                per_step[key] = np.minimum(per_step[key], value) if key in per_step else value
        best = {key: float(value.mean()) for key, value in per_step.items()}
        for name in ("spd", "spd + balance"):
            rows.append(Row(f"stance dt={label}, free root, same states: {name}", best[name],
                            note=f"{steps} steps; control alone {best['control ' + name] * 1e3:.3f} ms"))
        rows.append(Row(f"stance dt={label}, free root, same states: (spd + balance) / spd",
                        ratio=best["spd + balance"] / best["spd"], note="issue 19 target <= 1.3 (the fair one)"))
    for dt, label in ((1 / 60, "1/60"), (1 / 30, "1/30")):  # information only: other root mode
        steps = int(round(3.0 / dt))
        res = {}
        for name, opt in (("spd (anchored)", SimOptions(dt=dt, root="anchored")),
                          ("spd + balance (free)", SimOptions(dt=dt, root="free", balance=BalanceOptions()))):
            t = float("inf")
            for _ in range(max(1, min(args.repeat, 3))):
                sim = Simulation(model, ref, opt)
                rec = sim.run(steps * dt)
                sim.close()
                t = min(t, rec.meta["wall_s"] / max(rec.n_steps, 1))
            res[name] = t
            rows.append(Row(f"stance dt={label}, whole run: {name}", t, note=f"{dt / t:6.1f}x real time"))
        rows.append(Row(f"stance dt={label}: (spd + balance, free) / (spd, anchored)",
                        ratio=res["spd + balance (free)"] / res["spd (anchored)"],
                        note="information: other root mode, other physics"))
    return rows


def _paired_balance_steps(sim, steps: int) -> dict[str, np.ndarray]:
    """Seconds ``(steps,)`` of each step of a balanced run, timed with the feedback off and on from
    the same engine state (docstring of :func:`bench_balance`); the run follows the balanced steps.
    Keys ``spd``, ``spd + balance`` (whole steps) and ``control ...`` (the controller's share: the
    step minus the engine's step)."""
    # the thread's CPU time: the other engineers' processes on this shared machine do not count
    clock = time.thread_time
    world, balance = sim.world, sim.balance
    total = {key: np.zeros(steps) for key in ("spd", "spd + balance", "control spd", "control spd + balance")}
    physics = {"t": 0.0}
    step_fn, physics_fn = sim.step, sim._physics

    def timed_physics(tau):  # the engine's share, to report the controller's alone
        t0 = clock()
        physics_fn(tau)
        physics["t"] += clock() - t0

    sim._physics = timed_physics
    try:
        for i in range(steps):
            saved = world.save()
            snapshot = dict(vars(sim))
            saturated = sim._saturated.copy()
            order = ("spd", "spd + balance") if i % 2 else ("spd + balance", "spd")
            for j, name in enumerate(order + ("spd + balance",) if order[-1] == "spd" else order):
                if j:  # every step from the same saved state
                    world.restore(saved)
                    vars(sim).update(snapshot)
                    sim._saturated = saturated.copy()
                sim.balance = None if name == "spd" else balance
                physics["t"] = 0.0
                t0 = clock()
                step_fn()
                elapsed = clock() - t0
                if j < 2:  # the third (balanced again, to go on from it) is not timed
                    total[name][i] = elapsed
                    total["control " + name][i] = elapsed - physics["t"]
            world.forget(saved)
    finally:
        del sim._physics
    return total


import bench_rollout  # noqa: E402,F401  (the rollout section, after these in the table's order)
import bench_react  # noqa: E402,F401  (the react section, after the rollout section)
