"""``tracker retarget FILE.bvh -o OUT.npz``: BVH onto the character, with a quality report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    from tracker.commands._args import MAX_FPS, bounded_float, times_list
    from tracker.motion.unit_names import UNIT_HELP, UP_AXES

    p = sub.add_parser(
        "retarget",
        help="retarget a BVH clip onto a character model and report its quality",
        description="Retarget a BVH clip onto a character, write the reference (.npz) and print the quality report.",
    )
    p.add_argument("file", help="BVH file")
    p.add_argument("--model", default="humanoid",
                   help="character model name or model YAML (default: humanoid); 'fit': a humanoid with the "
                        "clip skeleton's segment lengths (tracker model fit, cached)")
    p.add_argument("--map", dest="joint_map", default=None,
                   help="joint map: a built-in name (cmu_mb, cmu_daz, cc_base, bandai, mixamo, lafan1) or a YAML file; "
                        "default: a known convention by its joint names, else found from the skeleton's shape")
    p.add_argument("--ik", action="store_true", help="bring the feet to the scaled source positions by IK")
    p.add_argument("--ik-hands", action="store_true", help="also bring the hands to the scaled source positions")
    p.add_argument("--fps", type=bounded_float(0, MAX_FPS, "fps", "Hz", lo_open=True), default=None,
                   help="resample the reference to this rate (Hz, > 0 and <= 10000)")
    p.add_argument("--keep-first-frame", action="store_true",
                   help="keep an added T-pose first frame (dropped by default when the clip jumps away from it)")
    p.add_argument("--no-repair", action="store_true",
                   help="keep the source's glitches (joints that flip for a few frames and back); they are reported either way")
    p.add_argument("--up", type=str.upper, default=None, choices=list(UP_AXES),
                   help="override the file's up axis (default: read from the body: where the head is and "
                        "the feet are not; a mirrored, left-handed file is reflected)")
    p.add_argument("--write-map", default=None, metavar="FILE",
                   help="write the joint map used (found from the skeleton's shape when no known convention "
                        "fits) as YAML, for review and reuse with --map FILE")
    p.add_argument("--strict", action="store_true",
                   help="treat the retarget's warnings (bone cosine < 0.5, a joint at its limit in > 20 %% of "
                        "frames, stature outside 1.0-2.3 m, an implausible root path) as errors (exit 2)")
    p.add_argument("--unit", default=None, choices=list(UNIT_HELP),
                   help="override the BVH length unit: " + "; ".join(f"{k} = {v}" for k, v in UNIT_HELP.items()))
    p.add_argument("-o", "--out", default=None, help="write the reference to this .npz file")
    p.add_argument("--sheet", default=None, help="draw a contact sheet (PNG) of source and character")
    p.add_argument("--sheet-at", type=times_list, default=None, metavar="TIMES",
                   help="the sheet's panels at these times instead of 8 evenly spaced: comma-separated clip "
                        "times in s, or file:SECONDS / file_frame:N for the file's own (e.g. the frames "
                        "'tracker inspect --events' lists); at most 24 times, each at most 86400 s or frame 2^31")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def _sheet_frames(times, ref, name: str):
    """``--sheet-at`` as reference frames (nearest), each time checked against the clip."""
    import numpy as np

    from tracker.errors import ConfigError

    frames = []
    for base, value in times:
        shown = f"{value:g}" if base == "clip" else f"{base}:{value:g}"
        if base == "clip":
            t = float(value)
            if t > ref.duration + 1e-9:
                raise ConfigError(f"--sheet-at {shown}: after the end of {name} (clip time {ref.duration:.3f} s)")
        elif ref.timing is None:
            raise ConfigError(f"--sheet-at {shown}: {name} does not record its file's frames; give clip times")
        else:
            try:
                t = ref.timing.resolve(base, value, name, "--keep-first-frame")
            except ValueError as exc:
                raise ConfigError(f"--sheet-at {shown}: {exc}") from None
        frames.append(min(int(round(t * ref.fps)), ref.n_frames - 1))
    return np.array(frames, dtype=int)


def _write_map(args: argparse.Namespace, motion) -> None:
    """``--write-map``: the map the retarget used, as YAML (atomically)."""
    from tracker.atomic import atomic_target
    from tracker.errors import ConfigError
    from tracker.retarget.joint_map import select_joint_map
    from tracker.retarget.matcher import map_yaml

    jmap = select_joint_map(motion.skeleton, args.joint_map, args.file, motion=motion)
    how = jmap.matching
    header = (f"Joint map for {Path(args.file).name}, written by tracker retarget --write-map.\n"
              + (f"Found from the skeleton's shape: {how['names'] or 'generic names'}; sides {how['sides']};"
                 f" score {how['score']}.\n" if how else f"The known convention {jmap.name} ({jmap.path.name}).\n")
              + "Review it, edit it, and pass it back with --map FILE.")
    try:
        with atomic_target(args.write_map) as tmp:
            tmp.write_text(map_yaml(jmap, header))
    except OSError as exc:
        raise ConfigError(f"--write-map {args.write_map}: cannot write ({exc.strerror or exc})") from None


def run(args: argparse.Namespace) -> int:
    from tracker.retarget.fit import resolve_model
    from tracker.retarget import load_clip_reference

    from tracker.errors import RetargetError, TrackerError
    from tracker.outdir import check_path

    check_path(args.file, "the clip")
    for flag, path in (("--out", args.out), ("--sheet", args.sheet), ("--write-map", args.write_map)):
        if path:
            check_path(path, flag)  # before the retarget, not after it
    ref, motion, kin = load_clip_reference(
        args.file, model=resolve_model(args.model, args.file), joint_map=args.joint_map, ik_feet=args.ik, ik_hands=args.ik_hands,
        fps=args.fps, drop_tpose=not args.keep_first_frame, unit=args.unit, up_axis=args.up, return_parts=True,
        repair_glitches=not args.no_repair,
    )
    warnings = ref.quality.get("warnings", [])
    if args.strict and warnings:
        raise RetargetError(f"{args.file}: --strict: " + "; ".join(warnings))
    for w in warnings:
        print(f"warning: {Path(args.file).name}: {w}", file=sys.stderr)
    if args.write_map and motion is not None:
        _write_map(args, motion)
    if args.out:
        ref.save(args.out)
    if args.sheet:
        from tracker.analysis.sheet import contact_sheet

        frames = None if args.sheet_at is None else _sheet_frames(args.sheet_at, ref, Path(args.file).name)
        try:
            contact_sheet(motion, ref, kin, args.sheet, frames=frames)
        except OSError as exc:
            if isinstance(exc, TrackerError):
                raise
            from tracker.outdir import path_problem

            raise TrackerError(f"--sheet {args.sheet}: cannot write ({path_problem(exc)})") from None
    report = ref.quality
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return 0
    src_fps = report.get("source_fps", report["fps"])  # the quality numbers' frames are the source's
    dropped = report.get("dropped_frames", 0)

    def when(clip_frame: int) -> str:
        return (f"clip frame {clip_frame} = clip time {clip_frame / src_fps:.3f} s = file frame "
                f"{clip_frame + dropped}")

    print(f"{Path(args.file).name} -> {ref.model}  (convention {report['convention']}, "
          f"{report['frames']} frames at {report['fps']:.3f} fps, scale {report['scale']:.3f})")
    print(f"  bone direction cosine  mean {report['bone_cos_mean']:.4f}  min {report['bone_cos_min']:.4f} "
          f"({report['bone_cos_min_link']} at {when(report['bone_cos_min_frame'])})")
    worst = sorted(report["bones"].items(), key=lambda kv: kv[1]["cos_min"])[:3]
    print("  weakest bones          " + ", ".join(f"{k} {v['cos_min']:.3f} (clip frame {v['cos_min_frame']})" for k, v in worst))
    print(f"  end-effector error     mean {report['ee_error_mean_m'] * 100:.1f} cm  ("
          + ", ".join(f"{k} {v * 100:.1f}" for k, v in report["ee_error"].items()) + ")")
    off = {k: v for k, v in report.get("segment_ratios", {}).items() if abs(v - 1) > 0.08}
    if off:
        print("  proportions            source / character (scaled by leg length): "
              + ", ".join(f"{k} {v:.2f}" for k, v in off.items())
              + (" -- these put the end effectors off; --model fit matches them" if report["ee_error_mean_m"] > 0.03 else ""))
    by_foot = report["contact_frames_by_foot"]
    n_src = report["source_frames"] - dropped if "source_frames" in report else report["frames"]  # before --fps
    print(f"  foot contacts          {report['contact_frames']} of {n_src} clip frames at the source's rate "
          f"(left {by_foot['left_foot']}, right {by_foot['right_foot']})")
    print(f"  foot float             median {report['foot_float_median_m'] * 1000:.1f} mm (lower foot over contact frames), "
          f"stance feet p95 {report['contact_height_p95_m'] * 1000:.1f} mm")
    print(f"  foot penetration max   {max(report['foot_penetration_max_m'], 0.0) * 1000:.1f} mm")
    print(f"  foot skating           median {report['foot_skating_mps']:.3f} m/s, p95 {report['foot_skating_p95_mps']:.3f} "
          f"over contact frames (source, scaled: {report.get('source_skating_mps', 0.0):.3f}, "
          f"{report.get('source_skating_p95_mps', 0.0):.3f})")
    by_joint = ", ".join(f"{k} {v}" for k, v in sorted(report.get("clamped_by_joint", {}).items(), key=lambda kv: -kv[1]))
    print(f"  frames clamped         {report['clamped_frames']} (joint limits{': ' + by_joint if by_joint else ''})")
    shifts = {k: v for k, v in report.get("wrist_neutral_shift_deg", {}).items() if v > 0}
    if shifts:
        print("  wrist neutral shifted  " + ", ".join(f"{k} {v:.0f} deg" for k, v in shifts.items())
              + " (the clip's wrist pose lies beyond the wrist's range)")
    glitches = report.get("glitches", [])
    if glitches:
        verb = "repaired" if report.get("glitches_repaired", True) else "kept (--no-repair)"
        spans = [f"{g['joint']} file frame {g['file_frames'][0]}" + (f"-{g['file_frames'][-1]}" if len(g["file_frames"]) > 1 else "")
                 + f" (clip time {g['clip_times_s'][0]:.3f} s, {g['jump_deg']:.0f} deg)" for g in glitches[:8]]
        print(f"  glitches               {len(glitches)} {verb}: " + "; ".join(spans) + (" ..." if len(glitches) > 8 else ""))
    else:
        print("  glitches               none")
    flips = report.get("flips", [])
    if flips:
        verb = "repaired" if report.get("glitches_repaired", True) else "kept (--no-repair)"
        print(f"  lasting flips          {len(flips)} {verb}: " + "; ".join(
            f"{f['joint']} file frame {f['file_frame']} (clip time {f['clip_time_s']:.3f} s, {f['jump_deg']:.0f} deg "
            f"{f['kind']})" for f in flips[:6]) + (" ..." if len(flips) > 6 else ""))
    fast = report.get("fast", [])
    if fast:
        print(f"  too fast to follow     {len(fast)}: " + "; ".join(
            f"{f['joint']} file frames {f['file_frames'][0]}-{f['file_frames'][-1]} ({f['peak_speed_rad_s']:.0f} rad/s)"
            for f in fast[:6]) + (" ..." if len(fast) > 6 else ""))
    if report.get("dropped_frames"):
        n = report["dropped_frames"]
        span = "file frame 0" if n == 1 else f"file frames 0-{n - 1}"
        print(f"  dropped                {span} (added T-pose and blend): clip frame 0 = file frame {n}, "
              f"clip time = (file frame - {n}) / {src_fps:.8g} s (the file's frame rate)")
    if report.get("matching"):
        how = report["matching"]
        print(f"  joint map              found from the skeleton's shape (score {how['score']}): "
              f"{how['names'] or 'generic names'}; sides {how['sides']}")
    src = motion.source if motion is not None else None
    if src is not None and src.how:
        print(f"  read as                unit {src.unit} ({src.how.get('unit', '')}); up {src.up_axis}"
              + (", mirrored" if src.mirrored else ""))
    print("  warnings               " + ("; ".join(warnings) if warnings else "none"))
    if args.write_map and motion is not None:
        print(f"wrote {args.write_map}")
    if args.out:
        print(f"wrote {args.out}")
    if args.sheet:
        print(f"wrote {args.sheet}")
    return 0
