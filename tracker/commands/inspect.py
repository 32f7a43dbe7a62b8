"""``tracker inspect FILE.bvh``: summarise a BVH clip (tree, timing, units, height, pose)."""

from __future__ import annotations

import argparse
import json

# typing is not imported at run time: `tracker inspect` loads only what it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HELP = ("summarise a BVH file: joint tree, frames, fps, unit, up axis, skeleton convention, floor and height, "
        "frame-0 pose; --events: when each hand/foot is fastest and lowest, and when the hands are together")


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
        help="the file's up axis (default: read from the body, where the head is and the feet are not)",
    )
    p.add_argument(
        "--events",
        action="store_true",
        help="list each end effector's peak speeds and lowest points, and when the hands are together, "
        "in file frames and in clip time "
        "(the retargeted reference's time, after a dropped T-pose), to aim balls without a script "
        "(slower: it loads numpy and scipy, about a second, where plain inspect reads the file without them)",
    )
    p.set_defaults(func=run)


def _convention(skeleton):
    """The detected joint map of ``skeleton`` (anything with joint ``names``), or None."""
    from tracker.errors import TrackerError
    from tracker.retarget.joint_map import select_joint_map

    try:
        return select_joint_map(skeleton)
    except TrackerError:
        return None


def _convention_name(skeleton) -> str:
    """The detected convention's name, or ``"unknown"``; from the maps' index, without loading the maps."""
    from tracker.retarget import conventions

    try:
        name = conventions.detect(skeleton.names)
    except LookupError:  # the index is not current: the maps from their YAML files
        jmap = _convention(skeleton)
        name = jmap.name if jmap is not None else None
    if name is not None and hasattr(skeleton, "end_parents"):  # a Pose: the names fit; does the shape?
        from types import SimpleNamespace

        from tracker.retarget.joint_map import _same_shape, builtin_maps

        tree = SimpleNamespace(names=skeleton.names, parents=skeleton.parents, offsets=skeleton.offsets,
                               end_site_parents=skeleton.end_parents, end_site_offsets=skeleton.end_offsets)
        if not _same_shape(builtin_maps()[name], tree):
            name = None
    return name if name is not None else "unknown"


def summarize(path: str, unit: str | None = None, up_axis: str | None = None, events: bool = False) -> dict[str, Any]:
    """Everything ``inspect`` reports, as a JSON-ready dict (SI units).

    ``floor_z_m`` and ``height_m`` are the lowest point and the vertical extent of the posed
    skeleton at frame 0, the root OFFSET included where the file's root positions are relative
    to it (``root_offset_added``); ``height_from_legs_m`` estimates stature from thigh + shank.
    ``clip_start_file_frame`` is the file frame that becomes clip frame 0 when retargeting
    (an added T-pose dropped); clip time = (file frame - it) / fps.

    Read without numpy (:mod:`tracker.motion.bvh_facts`, the same grammar and checks as
    :func:`~tracker.motion.bvh.read_bvh`); only ``events`` builds the numpy
    :class:`~tracker.motion.motion.Motion`, from the same parse.
    """
    from tracker.motion import summary
    from tracker.motion.bvh_facts import read_clip

    clip = read_clip(path, unit=unit, up_axis=up_axis)
    header = clip.header
    frame0 = clip.pose(0)
    pose = summary.arm_pose(frame0)
    convention = _convention_name(frame0)
    floor, top = summary.floor_and_top(frame0)
    dropped = clip.added_tpose_frames()
    info = {
        "path": str(path),
        "joints": [j.name for j in header.joints],
        "parents": [j.parent for j in header.joints],
        "channels": [list(j.channels) for j in header.joints],
        "end_sites": len(header.end_parents),
        "frames": clip.n_frames,
        "fps": clip.fps,
        "frame_time_s": clip.frame_time,
        "duration_s": clip.duration,
        "unit": clip.unit,
        "unit_scale_m": clip.scale,
        "unit_detected": clip.unit_detected,
        "up_axis": clip.up_axis,
        "mirrored": clip.mirrored,
        "stature_m": clip.orientation.stature_m,
        "decided": dict(clip.orientation.how),
        "convention": convention,
        "matching": _matching(clip, convention),
        "height_m": top - floor,
        "height_from_legs_m": summary.height(frame0),
        "extent_m": summary.extent(frame0),
        "floor_z_m": floor,
        "root_offset_added": summary.root_offset_applies(frame0),
        "lowest_z_m": floor,
        "clip_start_file_frame": int(dropped),
        "frame0_pose": pose.kind,
        "upper_arm_elevation_deg": {
            "left": pose.left_elevation_deg,
            "right": pose.right_elevation_deg,
        },
    }
    if events:
        from tracker.motion.bvh import motion_from_parsed

        motion = motion_from_parsed(clip.parsed, clip.path, unit, up_axis)
        info["events"] = _events(motion, _convention(motion.skeleton), dropped, path)
    return info


def _matching(clip, convention: str) -> dict[str, Any]:
    """How the clip's skeleton maps onto the character: a known convention, or matched by its shape
    (:func:`tracker.retarget.matcher.match_skeleton`, links and how sure), or why it is refused."""
    from types import SimpleNamespace

    from tracker.errors import RetargetError
    from tracker.motion import orient, summary
    from tracker.retarget.matcher import match_skeleton

    if convention != "unknown":
        return {"by": "known convention", "convention": convention}
    h = clip.header
    p0 = clip.pose(0)
    skeleton = SimpleNamespace(names=p0.names, parents=p0.parents, offsets=p0.offsets, end_site_parents=p0.end_parents,
                               end_site_offsets=p0.end_offsets, channels=[j.channels for j in h.joints])
    frames = [summary.frame_points(clip.pose(i)) for i in orient.sample_frames(clip.n_frames)]
    try:
        jmap, how = match_skeleton(skeleton, frames, str(clip.path))
    except RetargetError as exc:
        return {"by": "refused", "reason": str(exc)}
    return {"by": "shape", **how, "links": {k: {"joint": v.joint, "end": v.end[0]} for k, v in jmap.links.items()}}


#: The JSON key of each event kind's value.
_VALUE_KEYS = {"peak_speed": "speed_mps", "lowest": "height_m", "hands_together": "distance_m"}


def _events(motion, jmap, dropped: int, path: str) -> list[dict[str, Any]]:
    from tracker.errors import RetargetError
    from tracker.motion.events import find_events

    if jmap is None:
        raise RetargetError(f"{path}: --events needs the skeleton convention, and no joint map fits "
                            "(the convention is unknown)")
    index = jmap.resolve(motion.skeleton)
    links = {"left_hand": "left_hand", "right_hand": "right_hand", "left_foot": "left_foot",
             "right_foot": "right_foot", "head": "head"}
    joints = {ee: index[jmap.links[link].joint] for ee, link in links.items()}
    return [{"effector": e.effector, "kind": e.kind, "file_frame": e.file_frame,
             "file_time_s": e.file_frame / motion.fps, "clip_time_s": e.clip_time,
             _VALUE_KEYS[e.kind]: e.value}
            for e in find_events(motion, joints, dropped)]


def _short(channel: str) -> str:
    return channel[:4]  # Xposition -> Xpos, Zrotation -> Zrot


def format_text(info: dict[str, Any]) -> str:
    """The readable report for :func:`summarize`'s dict."""
    from tracker.motion.unit_names import UNIT_HELP

    decided = info.get("decided", {})
    how = ("detected from the body's stature: " + decided.get("unit", "")) if info["unit_detected"] else "given"
    elev = info["upper_arm_elevation_deg"]
    pose = info["frame0_pose"]
    if elev["left"] is not None:
        pose += (
            f" (upper arms {elev['left']:+.1f} and {elev['right']:+.1f} deg from horizontal,"
            " left and right)"
        )
    up = ("Z (kept)" if info["up_axis"] == "Z" else f"{info['up_axis']} (converted to Z up)") + \
        (", mirrored (a left-handed file, reflected)" if info.get("mirrored") else "")
    matching = info.get("matching", {})
    if matching.get("by") == "shape":
        match = (f"found from the skeleton's shape, score {matching['score']} of 1: "
                 f"{matching['names'] or 'generic names'}; sides {matching['sides']}")
        match += "".join(f"\n             {note}" for note in matching["notes"])
        match += "\n             " + ", ".join(f"{k} {v['joint']}" for k, v in matching["links"].items())
    elif matching.get("by") == "refused":
        match = matching["reason"]
    else:
        match = "a known convention, by its joint names"
    unit_name = UNIT_HELP.get(info["unit"], "scaled to a human stature")
    stature = info.get("stature_m")
    n_channels = sum(len(c) for c in info["channels"])
    lines = [
        info["path"],
        (
            f"  frames     {info['frames']} at {info['fps']:.8g} fps "
            f"(frame time {info['frame_time_s']:g} s), duration {info['duration_s']:.3f} s"
        ),
        (
            f"  unit       {info['unit']} = {unit_name} (1 unit = {info['unit_scale_m']:.6g} m): {how}"
        ),
        f"  up axis    {up}: {decided.get('up', '')}",
        f"  sides      {decided.get('handedness', '')}",
        f"  stature    " + (f"{stature:.3f} m (head top above the lowest foot point, standing)" if stature
                            else "unknown (not a humanoid)"),
        f"  convention {info['convention']}",
        f"  matching   {match}",
        (
            f"  height     {info['height_m']:.3f} m (posed skeleton at frame 0, floor to top point; "
            f"thigh + shank suggest a stature of {info['height_from_legs_m']:.3f} m)"
        ),
        f"  floor      lowest point of frame 0 at z = {info['floor_z_m']:+.3f} m"
        + (" (root OFFSET added to the root positions)" if info["root_offset_added"] else ""),
        (
            f"  clip time  0 = file frame {info['clip_start_file_frame']} (retarget drops the added T-pose); "
            f"clip time = (file frame - {info['clip_start_file_frame']}) / fps"
            if info["clip_start_file_frame"]
            else "  clip time  = file time (no added T-pose frame to drop)"
        ),
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
    if "events" in info:
        lines += ["", "events (file frame / file time, and clip time after retargeting):",
                  f"  {'effector':<11}{'event':<15}{'file frame':>11}{'file t (s)':>12}{'clip t (s)':>12}  value"]
        for e in info["events"]:
            value = (f"{e['speed_mps']:.2f} m/s" if e["kind"] == "peak_speed"
                     else f"{e['distance_m'] * 100:.1f} cm apart" if e["kind"] == "hands_together"
                     else f"{e['height_m'] * 100:.1f} cm above the floor")
            lines.append(f"  {e['effector']:<11}{e['kind']:<15}{e['file_frame']:>11}{e['file_time_s']:>12.4f}"
                         f"{e['clip_time_s']:>12.4f}  {value}")
        lines.append("  (in an experiment file a time is clip time, or e.g. impact_time: {file_frame: N} for a "
                     "file frame)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    info = summarize(args.file, unit=args.unit, up_axis=args.up, events=args.events)
    if args.json:
        print(json.dumps(info))
    else:
        print(format_text(info))
    return 0
