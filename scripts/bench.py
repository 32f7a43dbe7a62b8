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

The harness (rows, registry, timing) is ``scripts/bench_harness.py``; the sections over whole runs
and processes are ``scripts/bench_runs.py``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_harness beside this file
from bench_harness import MOCAP_DIR, Row, SECTIONS, best_time, section  # noqa: E402


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
    import tracker.quiet  # noqa: F401  (pybullet's banner silenced)
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
    import tracker.quiet  # noqa: F401  (pybullet's banner silenced)
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




import bench_runs  # noqa: E402,F401  (registers its sections after these, in the table's order)


# --- driver ----------------------------------------------------------------------------------------


def _print(name: str, rows: list[Row]) -> None:
    width = max(len(r.case) for r in rows)
    print(f"[{name}] {SECTIONS[name].__doc__.strip().splitlines()[0]}")
    for r in rows:
        if r.seconds is None and r.ratio is None:  # a note line (the machine's load)
            print(f"  {r.case}")
            continue
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
