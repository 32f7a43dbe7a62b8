"""Benchmarks of the project, each measured side by side with a baseline in the same run.

Every section is one function registered with ``@section(name)``; it times its
cases (best of ``--repeat`` runs, after one warm-up) and returns rows that are
printed as a table with the ratios. Wall-clock numbers are never asserted in
tests; this script is where they are read.

Usage::

    python scripts/bench.py                 # all sections
    python scripts/bench.py --only bvh      # one section
    python scripts/bench.py --only startup  # whole-process start-up: tracker --help, tracker inspect vs bvhio (medians)
    python scripts/bench.py --repeat 7
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MOCAP_DIR = REPO / ".." / "shared" / "mocap"


@dataclass(frozen=True)
class Row:
    """One printed line: a timing (``seconds``) or a ratio (``ratio``)."""

    case: str
    seconds: float | None = None
    ratio: float | None = None
    note: str = ""


Section = Callable[[argparse.Namespace], list[Row]]
SECTIONS: dict[str, Section] = {}


def section(name: str) -> Callable[[Section], Section]:
    """Register a benchmark section under ``name`` (unique)."""

    def register(fn: Section) -> Section:
        if name in SECTIONS:
            raise ValueError(f"section {name!r} registered twice")
        SECTIONS[name] = fn
        return fn

    return register


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall-clock time of ``repeat`` calls after one warm-up call, and the last result."""
    result = fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


# --- sections --------------------------------------------------------------------------------------


@section("bvh")
def bench_bvh(args: argparse.Namespace) -> list[Row]:
    """Load cmu_10_01_soccer_kick.bvh: our reader vs bvhio.readAsHierarchy + per-frame poses."""
    import bvhio

    from tracker.motion.bvh import read_bvh
    from tracker.motion.units import axis_matrix

    path = MOCAP_DIR / "cmu_10_01_soccer_kick.bvh"

    def ours_load():
        return read_bvh(path)

    def ours_positions():
        return read_bvh(path).global_transforms()[0]

    def bvhio_positions():
        root = bvhio.readAsHierarchy(str(path))
        joints = [joint for joint, _, _ in root.layout()]
        n_frames = root.getKeyframeRange()[1] + 1
        out = np.empty((n_frames, len(joints), 3))
        for f in range(n_frames):
            root.loadPose(f, recursive=True)
            out[f] = [tuple(j.PositionWorld) for j in joints]
        return out

    t_load, motion = best_time(ours_load, args.repeat)
    t_fk, ours = best_time(ours_positions, args.repeat)
    t_bvhio, ref = best_time(bvhio_positions, max(1, min(args.repeat, 3)))
    # Same work, same answer: bvhio's float32 positions, converted to our units and axes.
    ref = ref @ axis_matrix(motion.source.up_axis).T * motion.source.scale
    agree = float(np.abs(ours - ref).max())
    frames = f"{motion.n_frames} frames x {motion.skeleton.n_joints} joints"
    return [
        Row("ours: read_bvh (load to Motion)", t_load, note=frames),
        Row("ours: read_bvh + FK world positions", t_fk),
        Row(
            "bvhio: readAsHierarchy + per-frame loadPose/PositionWorld",
            t_bvhio,
            note=f"max |ours - bvhio| = {agree:.1e} m (bvhio is float32)",
        ),
        Row("speed-up, load: bvhio / ours", ratio=t_bvhio / t_load, note="issue 2 asks >= 10x"),
        Row("speed-up, load + positions: bvhio / ours", ratio=t_bvhio / t_fk),
    ]


@section("retarget")
def bench_retarget(args: argparse.Namespace) -> list[Row]:
    """Retarget the 802-frame CMU kick onto our humanoid, without and with foot IK (frames/s)."""
    from tracker.character.model import load_model
    from tracker.motion.bvh import read_bvh
    from tracker.retarget.retarget import RetargetOptions, retarget

    motion = read_bvh(MOCAP_DIR / "cmu_10_01_soccer_kick.bvh")
    model = load_model("humanoid")
    kin = model.kinematics()
    limits = model.spherical_limits()

    def run(ik: bool):
        return lambda: retarget(motion, kin, None, RetargetOptions(ik_feet=ik), spherical_limits=limits)

    t_plain, ref = best_time(run(False), args.repeat)
    t_ik, _ = best_time(run(True), args.repeat)
    t_read, _ = best_time(lambda: read_bvh(MOCAP_DIR / "cmu_10_01_soccer_kick.bvh"), args.repeat)
    n = motion.n_frames
    return [
        Row("read_bvh (for scale)", t_read),
        Row("retarget, no IK", t_plain, note=f"{n / t_plain:.0f} frames/s (target >= 500)"),
        Row("retarget, foot IK", t_ik, note=f"{n / t_ik:.0f} frames/s (target >= 100)"),
        Row("cost of IK: with / without", ratio=t_ik / t_plain),
    ]


@section("dynamics")
def bench_dynamics(args: argparse.Namespace) -> list[Row]:
    """M(q) and c(q, v) at one state: our compiled CRBA/RNEA vs PyBullet's calculateMassMatrix/InverseDynamics."""
    import tracker.sim.quiet  # noqa: F401  (pybullet's banner silenced)
    import pybullet as p

    from tracker.character.character import Character

    rows: list[Row] = []
    client = p.connect(p.DIRECT)
    try:
        for name in ("humanoid", "deepmimic"):
            char = Character.load(client, name)
            q, v = char.get_state()
            v = np.random.default_rng(0).normal(size=char.layout.nv)

            def ours():
                return char.mass_matrix(q), char.bias_forces(q, v)

            def pybullet():
                char._cache_key = None  # PyBullet's mass matrix is cached per q; time a fresh one
                return char.mass_matrix_pybullet(q), char.bias_forces_pybullet(q, v)

            n = 200
            t_ours, (m1, _) = best_time(lambda: [ours() for _ in range(n)][-1], args.repeat)
            t_pb, (m2, _) = best_time(lambda: [pybullet() for _ in range(n)][-1], args.repeat)
            diff = float(np.abs(m1 - m2).max())
            rows += [
                Row(f"{name}: ours, M + c", t_ours / n, note=f"nv = {char.layout.nv}"),
                Row(f"{name}: PyBullet, M + c", t_pb / n, note=f"max |M_ours - M_pybullet| = {diff:.1e}"),
                Row(f"{name}: PyBullet / ours", ratio=t_pb / t_ours),
            ]
            char.remove()
    finally:
        p.disconnect(client)
    return rows


def _sim_cases(model_name: str, clip, dt: float, steps: int, repeat: int) -> dict[str, tuple[float, str]]:
    """Seconds per step of spd / native / pd / a bare stepSimulation loop on one model and clip."""
    import tracker.sim.quiet  # noqa: F401  (pybullet's banner silenced)
    import pybullet as p

    from tracker.character.model import load_model
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation

    model = load_model(model_name)
    ref = load_clip_reference(clip, model=model_name)
    out = {}
    for ctrl in ("spd", "native", "pd"):
        best, note = float("inf"), ""
        for _ in range(max(1, repeat)):
            sim = Simulation(model, ref, SimOptions(controller=ctrl, dt=dt))
            rec = sim.run(steps * dt)
            sim.close()
            per = rec.meta["wall_s"] / max(rec.n_steps, 1)
            best = min(best, per)
            note = f"{rec.n_steps} steps" + (f", diverged ({rec.message})" if rec.diverged else "")
        out[ctrl] = (best, note)
    sim = Simulation(model, ref, SimOptions(controller="spd", dt=dt))
    client = sim.world.client
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        for _ in range(steps):
            p.stepSimulation(physicsClientId=client)
        best = min(best, (time.perf_counter() - start) / steps)
    sim.close()
    out["stepSimulation only"] = (best, f"{steps} steps, no control")
    return out


@section("sim")
def bench_sim(args: argparse.Namespace) -> list[Row]:
    """Time per step: spd, native (PyBullet STABLE_PD_CONTROL), pd, bare stepSimulation; same model, clip, dt."""
    motions = Path(__import__("pybullet_data").getDataPath()) / "data" / "motions"
    cases = [
        ("humanoid", MOCAP_DIR / "cmu_02_01_walk.bvh", "CMU walk"),
        ("humanoid", MOCAP_DIR / "cmu_10_01_soccer_kick.bvh", "CMU kick"),
        ("deepmimic", motions / "humanoid3d_walk.txt", "DeepMimic walk"),
        ("deepmimic", motions / "humanoid3d_spinkick.txt", "DeepMimic spinkick"),
    ]
    rows: list[Row] = []
    for dt, label in ((1 / 240, "1/240"), (1 / 60, "1/60")):
        for model, clip, name in cases:
            res = _sim_cases(model, clip, dt, steps=240 if dt < 0.01 else 120, repeat=min(args.repeat, 3))
            for ctrl, (sec, note) in res.items():
                rows.append(Row(f"{model} {name} dt={label}: {ctrl}", sec,
                                note=f"{dt / sec:6.1f}x real time; {note}"))
            rows.append(Row(f"{model} {name} dt={label}: spd / native", ratio=res["spd"][0] / res["native"][0],
                            note="issue 5 target <= 1.25"))
    return rows


def _versus_spd(args: argparse.Namespace, other: str, target: str) -> list[Row]:
    """``other`` vs spd on the humanoid: time per simulated step and per controller call, side by side."""
    from tracker.character.model import load_model
    from tracker.control.base import State, Target
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation

    model = load_model("humanoid")
    rows: list[Row] = []
    for clip, name in ((MOCAP_DIR / "cmu_02_01_walk.bvh", "CMU walk"),
                       (MOCAP_DIR / "cmu_10_01_soccer_kick.bvh", "CMU kick")):
        ref = load_clip_reference(clip)
        for dt, label in ((1 / 60, "1/60"), (1 / 30, "1/30")):
            step = {"spd": float("inf"), other: float("inf")}
            call = dict(step)
            for _ in range(max(1, args.repeat)):  # interleaved, so both see the same machine load
                for ctrl in step:
                    sim = Simulation(model, ref, SimOptions(controller=ctrl, dt=dt))
                    rec = sim.run(min(2.0, ref.duration))
                    step[ctrl] = min(step[ctrl], rec.meta["wall_s"] / max(rec.n_steps, 1))
                    q, v = sim.character.get_state()
                    q1, v1 = ref.sample(sim.t + dt)
                    q0, v0 = ref.sample(sim.t)
                    target_, state = Target(q1, v1, q0, v0, t=sim.t + dt), State(q, v)
                    n = 300
                    t0 = time.perf_counter()
                    for _ in range(n):
                        sim.controller.torques(state, target_, sim.gains, dt)
                    call[ctrl] = min(call[ctrl], (time.perf_counter() - t0) / n)
                    sim.close()
            for ctrl in step:
                rows.append(Row(f"{name} dt={label}: {ctrl} step", step[ctrl], note=f"{dt / step[ctrl]:6.1f}x real time"))
            rows.append(Row(f"{name} dt={label}: {other} / spd per step", ratio=step[other] / step["spd"],
                            note=target))
            rows.append(Row(f"{name} dt={label}: {other} / spd controller call", ratio=call[other] / call["spd"],
                            note=f"{call[other] * 1e6:.0f} us vs {call['spd'] * 1e6:.0f} us"))
    return rows


@section("analytic_pd")
def bench_analytic_pd(args: argparse.Namespace) -> list[Row]:
    """analytic_pd vs spd on the humanoid: time per simulated step and per controller call, side by side."""
    return _versus_spd(args, "analytic_pd", "issue 16 target <= 1.2")


@section("timed_pd")
def bench_timed_pd(args: argparse.Namespace) -> list[Row]:
    """timed_pd vs spd on the humanoid: time per simulated step and per controller call, side by side."""
    return _versus_spd(args, "timed_pd", "issue 17 target <= 1.0")


@section("vt")
def bench_vt(args: argparse.Namespace) -> list[Row]:
    """Time per step of vt (f0 id and peek) against spd: same model, clip, dt, gains (issue 18).

    The three runs take turns in every round (best of the rounds), so a load that comes and goes
    on a shared machine hits them alike; the note gives the process's CPU time per step too.
    """
    from tracker.character.model import load_model
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation

    rows: list[Row] = []
    model = load_model("humanoid")
    cases = (("spd", "spd", ()), ("vt id", "vt", (("f0", "id"),)), ("vt peek", "vt", (("f0", "peek"),)))
    for clip, name in ((MOCAP_DIR / "cmu_02_01_walk.bvh", "CMU walk"), (MOCAP_DIR / "cmu_10_01_soccer_kick.bvh",
                                                                         "CMU kick")):
        ref = load_clip_reference(clip, model="humanoid")
        dt, steps = 1 / 60, 120
        wall = {label: float("inf") for label, _, _ in cases}
        cpu = dict(wall)
        notes: dict[str, str] = {}
        for _ in range(max(1, args.repeat) + 1):  # the first round also warms up
            for label, ctrl, opts in cases:
                sim = Simulation(model, ref, SimOptions(controller=ctrl, dt=dt, controller_options=opts))
                c0 = time.process_time()
                rec = sim.run(steps * dt)
                c1 = time.process_time()
                sim.close()
                n = max(rec.n_steps, 1)
                wall[label] = min(wall[label], rec.meta["wall_s"] / n)
                cpu[label] = min(cpu[label], (c1 - c0) / n)
                notes[label] = f"{rec.n_steps} steps" + (f", diverged ({rec.message})" if rec.diverged else "")
        for label, _, _ in cases:
            rows.append(Row(f"humanoid {name} dt=1/60: {label}", wall[label],
                            note=f"{dt / wall[label]:6.1f}x real time; CPU {cpu[label] * 1e3:.3f} ms; {notes[label]}"))
        for label, target in (("vt id", 1.3), ("vt peek", 3)):
            rows.append(Row(f"humanoid {name}: {label} / spd", ratio=wall[label] / wall["spd"],
                            note=f"CPU {cpu[label] / cpu['spd']:.2f}x; issue 18 target <= {target:g}"))
    return rows


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


@section("rollout")
def bench_rollout(args: argparse.Namespace) -> list[Row]:
    """Rollouts (issue 20): steps per second of 0.1 s windows from saved states, against bare stepSimulation."""
    import tracker.sim.quiet  # noqa: F401
    import pybullet as p

    from tracker.experiments.config import config_from_data
    from tracker.sampling.offsets import OffsetTrack
    from tracker.sampling.pool import RolloutPool
    from tracker.sampling.rollout import RolloutRequest
    from tracker.sim.snapshot import capture, forget, restore

    cfg = config_from_data({"clip": {"path": str((MOCAP_DIR / "cmu_02_01_walk.bvh").resolve())},
                            "root": {"mode": "free"}, "sim": {"dt": 1 / 60}}, REPO / "bench.yaml")
    pool = RolloutPool(cfg, workers=1)
    worker = pool.local
    sim, client = worker.sim, worker.sim.world.client
    start = worker.initial_state()
    rng = np.random.default_rng(0)
    lay = sim.layout
    n_roll, window = 48, 0.1
    reqs = []
    for i in range(n_roll):
        tr = OffsetTrack.zeros(lay, [0.0, window])
        reqs.append(RolloutRequest(start, tr.with_values(rng.normal(0.0, 0.1, tr.values.shape)), window, tag=i))
    steps = n_roll * int(round(window / sim.opt.dt))
    rows: list[Row] = []

    # The engine alone on the same trajectory: the torques of a tracked run, replayed open loop
    # (deterministic physics: the same states, contacts and solver work as the controlled run).
    sim.reset()
    taus = [sim.step()["tau"] for _ in range(steps)]

    def bare_steps():
        sim.reset()
        for tau in taus:
            sim.character.apply_torques(tau)
            p.stepSimulation(physicsClientId=client)
    bare, _ = best_time(bare_steps, args.repeat)
    rows.append(Row("bare stepSimulation (+ applying a recorded run's torques: same states)", bare / steps,
                    note=f"{steps / bare:8.0f} steps/s"))

    def plain():
        sim.reset()
        for _ in range(steps):
            sim.step()
    sec_plain, _ = best_time(plain, min(args.repeat, 3))
    rows.append(Row("Simulation.step (SPD, free root, CMU walk, 1/60 s)", sec_plain / steps,
                    note=f"{steps / sec_plain:8.0f} steps/s"))
    cases = [("rollouts, end state kept (bullet)", reqs, 1),
             ("rollouts, cost only", [dataclasses.replace(r, keep_end=False) for r in reqs], 1)]
    for name, batch, workers in cases:
        sec, _ = best_time(lambda: pool.run(batch), min(args.repeat, 3))
        rows.append(Row(f"{name}: {n_roll} x {window:g} s windows, 1 worker", sec / steps,
                        note=f"{steps / sec:8.0f} steps/s"))
        rows.append(Row(f"{name}: stepSimulation / rollout step", ratio=bare / sec))
    big = reqs * 8
    for workers in (2,):
        par = RolloutPool(cfg, workers=workers)
        sec, _ = best_time(lambda: par.run(big), 1)
        rows.append(Row(f"rollouts, {len(big)} x {window:g} s, {workers} worker processes (batch incl. start-up)",
                        sec / (len(big) * steps / n_roll), note=f"{len(big) * steps / n_roll / sec:8.0f} steps/s"))
    for tech in ("memory", "bullet"):
        snap = capture(sim, tech)
        save, _ = best_time(lambda: forget(sim, capture(sim, tech)) if tech == "memory" else capture(sim, tech),
                            args.repeat * 20)
        back, _ = best_time(lambda: restore(sim, snap), args.repeat * 20)
        rows.append(Row(f"snapshot {tech}: capture", save))
        rows.append(Row(f"snapshot {tech}: restore", back))
        forget(sim, snap)
    pool.close()
    return rows


# --- driver ----------------------------------------------------------------------------------------


def _print(name: str, rows: list[Row]) -> None:
    width = max(len(r.case) for r in rows)
    print(f"[{name}] {SECTIONS[name].__doc__.strip().splitlines()[0]}")
    for r in rows:
        value = f"{r.seconds * 1e3:10.3f} ms" if r.seconds is not None else f"{r.ratio:10.2f} x "
        note = f"   {r.note}" if r.note else ""
        print(f"  {r.case:<{width}}  {value}{note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SECTIONS), help="run just this section")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (best is kept)")
    args = parser.parse_args(argv)
    import bvhio  # noqa: F401  (import cost is not part of any timing)
    import scipy

    print(
        f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"{platform.machine()}; best of {args.repeat} after a warm-up"
    )
    for name in [args.only] if args.only else list(SECTIONS):
        _print(name, SECTIONS[name](args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
