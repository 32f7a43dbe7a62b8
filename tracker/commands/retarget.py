"""``tracker retarget FILE.bvh -o OUT.npz``: BVH onto the character, with a quality report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    from tracker.commands._args import positive_float
    from tracker.motion.unit_names import UNIT_HELP

    p = sub.add_parser(
        "retarget",
        help="retarget a BVH clip onto a character model and report its quality",
        description="Retarget a BVH clip onto a character, write the reference (.npz) and print the quality report.",
    )
    p.add_argument("file", help="BVH file")
    p.add_argument("--model", default="humanoid", help="character model name or model YAML (default: humanoid)")
    p.add_argument("--map", dest="joint_map", default=None,
                   help="joint map: a built-in name (cmu_mb, cmu_daz, cc_base, bandai, mixamo, lafan1) or a YAML file; "
                        "default: detected from the joint names")
    p.add_argument("--ik", action="store_true", help="bring the feet to the scaled source positions by IK")
    p.add_argument("--ik-hands", action="store_true", help="also bring the hands to the scaled source positions")
    p.add_argument("--fps", type=positive_float, default=None, help="resample the reference to this rate (Hz, > 0)")
    p.add_argument("--keep-first-frame", action="store_true",
                   help="keep an added T-pose first frame (dropped by default when the clip jumps away from it)")
    p.add_argument("--unit", default=None, choices=list(UNIT_HELP),
                   help="override the BVH length unit: " + "; ".join(f"{k} = {v}" for k, v in UNIT_HELP.items()))
    p.add_argument("-o", "--out", default=None, help="write the reference to this .npz file")
    p.add_argument("--sheet", default=None, help="draw a contact sheet (PNG) of source and character")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.retarget import load_clip_reference

    ref, motion, kin = load_clip_reference(
        args.file, model=args.model, joint_map=args.joint_map, ik_feet=args.ik, ik_hands=args.ik_hands,
        fps=args.fps, drop_tpose=not args.keep_first_frame, unit=args.unit, return_parts=True,
    )
    if args.out:
        ref.save(args.out)
    if args.sheet:
        from tracker.analysis.sheet import contact_sheet

        contact_sheet(motion, ref, kin, args.sheet)
    report = ref.quality
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return 0
    print(f"{Path(args.file).name} -> {ref.model}  (convention {report['convention']}, "
          f"{report['frames']} frames at {report['fps']:.3f} fps, scale {report['scale']:.3f})")
    print(f"  bone direction cosine  mean {report['bone_cos_mean']:.4f}  min {report['bone_cos_min']:.4f}")
    worst = sorted(report["bones"].items(), key=lambda kv: kv[1]["cos_min"])[:3]
    print("  weakest bones          " + ", ".join(f"{k} {v['cos_min']:.3f}" for k, v in worst))
    print(f"  end-effector error     mean {report['ee_error_mean_m'] * 100:.1f} cm  ("
          + ", ".join(f"{k} {v * 100:.1f}" for k, v in report["ee_error"].items()) + ")")
    print(f"  foot penetration max   {max(report['foot_penetration_max_m'], 0.0) * 1000:.1f} mm")
    print(f"  foot skating           {report['foot_skating_mps']:.3f} m/s (median horizontal speed of a foot on the ground)")
    by_joint = ", ".join(f"{k} {v}" for k, v in sorted(report.get("clamped_by_joint", {}).items(), key=lambda kv: -kv[1]))
    print(f"  frames clamped         {report['clamped_frames']} (joint limits{': ' + by_joint if by_joint else ''})")
    if report.get("dropped_frames"):
        print(f"  dropped                {report['dropped_frames']} added T-pose frame at the start")
    if args.out:
        print(f"wrote {args.out}")
    if args.sheet:
        print(f"wrote {args.sheet}")
    return 0
