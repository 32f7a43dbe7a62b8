"""``tracker model [MODEL] [--json]``: the character's joint table and totals, as PyBullet loads it."""

from __future__ import annotations

import argparse
import json
import sys

from tracker.commands._args import bounded_float


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "model",
        help="print a character model's joints, limits, masses, gains and torque limits",
        description="Load a character model in a headless PyBullet client and print its joint table "
                    "(name, type, DOF, limits, mass, supported mass, kp, kd, torque limit) and totals.",
    )
    p.add_argument("model", nargs="?", default="humanoid",
                   help="model name (humanoid, deepmimic) or path to a model YAML (default: humanoid); "
                        "'fit CLIP.bvh' builds a humanoid with the clip skeleton's segment lengths")
    p.add_argument("clip", nargs="?", default=None, help="with 'fit': the BVH clip whose skeleton to fit")
    p.add_argument("--mass", type=bounded_float(1, 1000, "mass", "kg"), default=None,
                   help="with 'fit': total mass in kg (1 to 1000; default 70)")
    p.add_argument("-o", "--out", default=None,
                   help="with 'fit': write NAME.urdf and NAME.yaml to this folder (default: the cache, "
                        "$TRACKER_CACHE/fitted or ~/.cache/tracker/fitted)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.set_defaults(func=run)


def describe(model_spec: str) -> dict:
    """The model's joint table and totals as a JSON-ready dict (masses in kg, angles in rad)."""
    import numpy as np

    from tracker.character.character import Character
    from tracker.character.model import load_model
    from tracker.sim.world import World

    model = load_model(model_spec)
    world = World()
    try:
        char = Character.load(world.client, model)
        lo, hi = char.joint_limit_vectors()
        child = {name: c for name, _, _, c in model.joints}
        joints = []
        for s in char.layout.joints:
            g = model.group_of(s.name)
            joints.append({
                "name": s.name,
                "type": s.kind,
                "dofs": s.dofs,
                "group": g.name,
                "child_link": child[s.name],
                "lower": [float(x) for x in lo[s.v]],
                "upper": [float(x) for x in hi[s.v]],
                "limits_from": "urdf" if s.kind == "revolute" else
                               ("model" if s.name in model.joint_limits else "none"),
                "link_mass_kg": char.link_masses[child[s.name]],
                "supported_mass_kg": char.supported_mass[s.name],
                "kp": g.kp,
                "kd": g.kd,
                "damping": g.damping,
                "torque_limit": g.torque_limit,
            })
        return {
            "model": model.name,
            "description": model.description,
            "file": str(model.path),
            "urdf": str(model.urdf),
            "total_mass_kg": char.total_mass,
            "actuated_dofs": char.layout.n_actuated_dofs,
            "nq": char.layout.nq,
            "nv": char.layout.nv,
            "standing_root_height_m": model.standing_root_height,
            "base_link": model.base_link,
            "base_mass_kg": char.link_masses[model.base_link],
            "links": [{"name": n, "mass_kg": char.link_masses[n]} for n in char.link_names],
            "end_effectors": dict(model.end_effectors),
            "feet": list(model.feet),
            "ground_contact_links": list(model.ground_contact_links),
            "joints": joints,
            "center_of_mass_height_m": float(np.asarray(char.center_of_mass())[2]),
        }
    finally:
        world.close()


def _limits(j: dict) -> str:
    if j["type"] == "revolute":
        return f"[{j['lower'][0]:+.2f}, {j['upper'][0]:+.2f}]"
    if j["limits_from"] == "none":
        return "free"
    return " ".join(f"{a}[{lo:+.2f},{hi:+.2f}]" for a, lo, hi in zip("xyz", j["lower"], j["upper"]))


def run_fit(args: argparse.Namespace) -> int:
    """``tracker model fit CLIP.bvh [--mass KG] [-o DIR]``."""
    import time

    from tracker.retarget.fit import DEFAULT_MASS_KG, fit_model
    from tracker.errors import ModelError

    if args.clip is None:
        raise ModelError("model fit: give the BVH clip to fit, e.g. tracker model fit clip.bvh -o fitted/")
    mass = DEFAULT_MASS_KG if args.mass is None else args.mass
    start = time.perf_counter()
    path, cached = fit_model(args.clip, mass=mass, out_dir=args.out)
    took = time.perf_counter() - start
    if args.json:
        json.dump({"model_file": str(path), "cached": cached, "seconds": took}, sys.stdout)
        print()
        return 0
    print(f"{'reused the cached' if cached else 'fitted'} humanoid for {args.clip} in {took:.2f} s: {path}")
    if args.out is None:  # the latest fit of the skeleton is what --model fit takes
        print(f"  use it with --model {path} (or --model fit, which finds it in the cache)")
    else:
        print(f"  use it with --model {path} (--model fit looks in the cache, not in {args.out})")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.model == "fit":
        return run_fit(args)
    if args.clip is not None or args.mass is not None or args.out is not None:
        from tracker.errors import ModelError

        raise ModelError("a clip, --mass and -o go with 'tracker model fit CLIP.bvh'")
    info = describe(args.model)
    if args.json:
        json.dump(info, sys.stdout, indent=2)
        print()
        return 0
    print(f"{info['model']}: {info['description']}")
    print(f"  model file {info['file']}")
    print(f"  URDF       {info['urdf']}")
    header = (f"  {'joint':16s} {'type':9s} {'DOF':>3s}  {'limits (rad)':44s} {'mass kg':>8s} {'supp. kg':>8s} "
              f"{'kp':>7s} {'kd':>6s} {'tau max':>7s}")
    print(header)
    print("  " + "-" * (len(header) - 2))
    for j in info["joints"]:
        print(f"  {j['name']:16s} {j['type']:9s} {j['dofs']:3d}  {_limits(j):44s} {j['link_mass_kg']:8.3f} "
              f"{j['supported_mass_kg']:8.3f} {j['kp']:7.1f} {j['kd']:6.1f} {j['torque_limit']:7.1f}")
    print("  " + "-" * (len(header) - 2))
    print(f"  base link {info['base_link']} ({info['base_mass_kg']:.3f} kg)  total mass {info['total_mass_kg']:.3f} kg  "
          f"actuated DOF {info['actuated_dofs']}  (nq {info['nq']}, nv {info['nv']})")
    print(f"  standing root height {info['standing_root_height_m']:.4f} m  centre of mass at "
          f"{info['center_of_mass_height_m']:.4f} m")
    print("  end effectors " + ", ".join(f"{k} -> {v}" for k, v in info["end_effectors"].items()))
    print(f"  feet {', '.join(info['feet'])}; may touch the ground: {', '.join(info['ground_contact_links'])}")
    return 0
