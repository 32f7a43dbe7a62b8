"""``tracker inspect FILE.bvh``: summarise a BVH clip (tree, timing, units, height, pose)."""

from __future__ import annotations

import argparse
import json
from typing import Any

HELP = "summarise a BVH file: joint tree, frames, fps, unit, up axis, height, frame-0 pose"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from tracker.motion.unit_names import UNIT_HELP, UP_AXES

    p = subparsers.add_parser("inspect", help=HELP, description=HELP + ".")
    p.add_argument("file", help="the .bvh file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument(
        "--unit",
        choices=list(UNIT_HELP),
        help="the file's length unit, instead of detecting it from the skeleton's size: "
        + "; ".join(f"{k} = {v}" for k, v in UNIT_HELP.items()),
    )
    p.add_argument(
        "--up",
        type=str.upper,
        choices=list(UP_AXES),
        help="the file's up axis (default Y, as BVH usually is)",
    )
    p.set_defaults(func=run)


def summarize(path: str, unit: str | None = None, up_axis: str | None = None) -> dict[str, Any]:
    """Everything ``inspect`` reports, as a JSON-ready dict (SI units)."""
    from tracker.motion import summary
    from tracker.motion.bvh import read_bvh

    motion = read_bvh(path, unit=unit, up_axis=up_axis)
    sk = motion.skeleton
    src = motion.source
    assert src is not None  # read_bvh always sets it
    pose = summary.arm_pose(motion)
    return {
        "path": str(path),
        "joints": list(sk.names),
        "parents": [int(p) for p in sk.parents],
        "channels": [list(c) for c in sk.channels],
        "end_sites": len(sk.end_site_parents),
        "frames": motion.n_frames,
        "fps": motion.fps,
        "frame_time_s": src.frame_time,
        "duration_s": motion.duration,
        "unit": src.unit,
        "unit_scale_m": src.scale,
        "unit_detected": src.unit_detected,
        "up_axis": src.up_axis,
        "height_m": summary.height(motion),
        "extent_m": summary.extent(motion, 0),
        "lowest_z_m": float(summary.frame_points(motion, 0)[:, 2].min()),
        "frame0_pose": pose.kind,
        "upper_arm_elevation_deg": {
            "left": pose.left_elevation_deg,
            "right": pose.right_elevation_deg,
        },
    }


def _short(channel: str) -> str:
    return channel[:4]  # Xposition -> Xpos, Zrotation -> Zrot


def format_text(info: dict[str, Any]) -> str:
    """The readable report for :func:`summarize`'s dict."""
    from tracker.motion.unit_names import UNIT_HELP

    how = "detected from the skeleton's size" if info["unit_detected"] else "given"
    elev = info["upper_arm_elevation_deg"]
    pose = info["frame0_pose"]
    if elev["left"] is not None:
        pose += (
            f" (upper arms {elev['left']:+.1f} and {elev['right']:+.1f} deg from horizontal,"
            " left and right)"
        )
    up = "Z (kept)" if info["up_axis"] == "Z" else "Y (converted to Z up, facing +Z -> +X)"
    n_channels = sum(len(c) for c in info["channels"])
    lines = [
        info["path"],
        (
            f"  frames     {info['frames']} at {info['fps']:.8g} fps "
            f"(frame time {info['frame_time_s']:g} s), duration {info['duration_s']:.3f} s"
        ),
        (
            f"  unit       {info['unit']} = {UNIT_HELP[info['unit']]}, {how} "
            f"(1 unit = {info['unit_scale_m']:.6g} m)"
        ),
        f"  up axis    {up}",
        (
            f"  height     {info['height_m']:.3f} m (estimated from thigh + shank length; "
            f"frame-0 vertical extent {info['extent_m']:.3f} m)"
        ),
        f"  floor      lowest point of frame 0 at z = {info['lowest_z_m']:+.3f} m",
        f"  frame 0    {pose}",
        f"  joints     {len(info['joints'])}, End Sites {info['end_sites']}, channels {n_channels}",
        "",
        "joint tree (channels in file order):",
    ]
    children: dict[int, list[int]] = {}
    for j, p in enumerate(info["parents"]):
        children.setdefault(p, []).append(j)
    rows: list[tuple[str, int]] = []
    stack = [(j, "", "", True) for j in reversed(children.get(-1, []))]
    while stack:
        j, prefix, branch, last = stack.pop()
        rows.append((prefix + branch + info["joints"][j], j))
        inner = prefix + ("" if not branch else ("    " if last else "│   "))
        kids = children.get(j, [])
        for k, c in reversed(list(enumerate(kids))):
            end = k == len(kids) - 1
            stack.append((c, inner, "└── " if end else "├── ", end))
    width = max(len(name) for name, _ in rows) + 2
    for name, j in rows:
        ch = info["channels"][j]
        lines.append(f"{name:<{width}}{' '.join(map(_short, ch)) if ch else '(no channels)'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    info = summarize(args.file, unit=args.unit, up_axis=args.up)
    if args.json:
        print(json.dumps(info))
    else:
        print(format_text(info))
    return 0
