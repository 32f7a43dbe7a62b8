"""Joint maps: which source-skeleton joints drive which character links.

One YAML per skeleton convention lives in ``tracker/retarget/joint_maps/``
(format documented in ``cmu_mb.yaml``). The convention of a clip is detected
from its joint names; users may pass their own map file.

The shipped maps are also kept, validated, in ``joint_maps/index.json`` with the
CRC-32 of each YAML it was made from (:mod:`tracker.retarget.conventions`):
:func:`builtin_maps` takes them from there when every checksum matches (and
``tracker inspect`` names a clip's convention from it without PyYAML), and from
the YAML files otherwise. After editing a shipped map,
``python -m tracker.retarget.joint_map`` rewrites the index (a test checks that
it is current).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tracker.errors import RetargetError
from tracker.paths import JOINT_MAP_DIR
from tracker.retarget import conventions
from tracker.retarget.map_types import CANONICAL_LINKS, DISTAL, JointMap, LinkSource  # noqa: F401  (imported from here too)

INDEX_FILE = Path(conventions.INDEX_FILE)

# typing is not imported at run time: `tracker inspect` loads only what it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from tracker.motion.skeleton import Skeleton

_LINK_KEYS = {"joint", "start", "end", "across"}
_TOP_KEYS = {"name", "description", "detect", "links", "strip_prefix"}

EXAMPLE_MAP = """\
name: my_rig
detect: [pelvis_bone, thigh_l]        # joint names that identify the rig
strip_prefix: '^rig:'                 # optional regex removed from joint names
links:                                # character link: source joint (+ optional bone end)
  pelvis: {joint: pelvis_bone, end: spine_01}
  abdomen: {joint: spine_01, end: spine_02}
  chest: {joint: spine_02, end: neck_01}
  head: {joint: head, end: [head_end, head/end]}  # alternatives; X/end = X's End Site
  left_thigh: {joint: thigh_l}
  left_shin: {joint: calf_l}
  left_foot: {joint: foot_l, end: ball_l}
  left_upper_arm: {joint: upperarm_l}
  left_forearm: {joint: lowerarm_l}
  left_hand: {joint: hand_l, end: middle_01_l, across: [pinky_01_l, index_01_l]}  # optional palm cue
  ... and the same for right_*"""


def _alternatives(value, where: str, path) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise RetargetError(f"{path}: {where}: expected a joint name or a list of alternatives, got {value!r}")


def load_joint_map(path: str | Path) -> JointMap:
    """Load and validate a joint-map YAML; errors name the file and key.

    The file is read by :func:`tracker.yamlsafe.read_yaml_file`: a regular file (a FIFO, a device
    or a folder is refused by its type, unopened) of at most 1 MiB, nesting and aliases bounded.
    """
    from tracker.yamlsafe import read_yaml_file

    path = Path(path)
    data = read_yaml_file(path, "joint map", error=RetargetError)
    if not isinstance(data, dict):
        raise RetargetError(f"{path}: a joint map must be a mapping with a 'links' key\n{EXAMPLE_MAP}")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise RetargetError(f"{path}: unknown key {sorted(unknown)[0]!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    links = data.get("links")
    if not isinstance(links, dict):
        raise RetargetError(f"{path}: 'links' must map character links to source joints")
    out: dict[str, LinkSource] = {}
    for link, spec in links.items():
        if link not in CANONICAL_LINKS:
            raise RetargetError(f"{path}: links.{link}: unknown character link (valid: {', '.join(CANONICAL_LINKS)})")
        if isinstance(spec, str):
            spec = {"joint": spec}
        if not isinstance(spec, dict) or "joint" not in spec:
            raise RetargetError(f"{path}: links.{link}: expected {{joint: NAME, end: NAME}}")
        bad = set(spec) - _LINK_KEYS
        if bad:
            raise RetargetError(f"{path}: links.{link}.{sorted(bad)[0]}: unknown key (allowed: joint, start, end, across)")
        if not isinstance(spec["joint"], str):
            raise RetargetError(f"{path}: links.{link}.joint: expected one joint name, got {spec['joint']!r}")
        start = _alternatives(spec.get("start", spec["joint"]), f"links.{link}.start", path)
        end = _alternatives(spec["end"], f"links.{link}.end", path) if "end" in spec else ()
        across = None
        if "across" in spec:
            a = spec["across"]
            if link not in ("left_hand", "right_hand"):
                raise RetargetError(f"{path}: links.{link}.across: only hands take a palm cue")
            if not (isinstance(a, list) and len(a) == 2 and all(isinstance(x, str) for x in a)):
                raise RetargetError(f"{path}: links.{link}.across: expected [little-finger joint, index joint], got {a!r}")
            across = (a[0], a[1])
        out[link] = LinkSource(spec["joint"], start, end, across)
    missing = [l for l in CANONICAL_LINKS if l not in out]
    if missing:
        raise RetargetError(f"{path}: links: missing {', '.join(missing)}")
    for link, src in out.items():
        if not src.end:
            if link not in DISTAL:
                raise RetargetError(f"{path}: links.{link}.end: required (the point where the bone ends)")
            out[link] = LinkSource(src.joint, src.start, (out[DISTAL[link]].joint,), src.across)
    detect = tuple(str(d) for d in data.get("detect", []) or [])
    return JointMap(
        name=str(data.get("name", path.stem)),
        description=str(data.get("description", "")),
        links=out,
        strip_prefix=str(data.get("strip_prefix", "") or ""),
        detect=detect,
        path=path,
    )


def builtin_maps() -> dict[str, JointMap]:
    """The shipped maps by name (from the index when it is current, else from the YAML files)."""
    maps = _maps_from_index()
    if maps is None:
        maps = [load_joint_map(p) for p in sorted(JOINT_MAP_DIR.glob("*.yaml"))]
    return {m.name: m for m in maps}


def index_data() -> dict:
    """What ``index.json`` holds: the source hashes and every shipped map, validated, as plain data."""
    sources = conventions.sources()
    maps = [load_joint_map(JOINT_MAP_DIR / name) for name in sources]
    return {
        "sources": sources,
        "maps": [
            {"file": m.path.name, "name": m.name, "description": m.description, "strip_prefix": m.strip_prefix,
             "detect": list(m.detect),
             "links": {link: {"joint": s.joint, "start": list(s.start), "end": list(s.end),
                              "across": list(s.across) if s.across else None}
                       for link, s in m.links.items()}}
            for m in maps
        ],
    }


def write_index() -> Path:
    """Rewrite ``index.json`` from the shipped YAML maps."""
    import json

    INDEX_FILE.write_text(json.dumps(index_data(), indent=1) + "\n")
    return INDEX_FILE


def _maps_from_index() -> list[JointMap] | None:
    """The maps of ``index.json``, or None when it is not current (:func:`conventions.load_index`)."""
    data = conventions.load_index()
    if data is None:
        return None
    try:
        return [
            JointMap(
                name=m["name"], description=m["description"], strip_prefix=m["strip_prefix"],
                detect=tuple(m["detect"]), path=JOINT_MAP_DIR / m["file"],
                links={link: LinkSource(s["joint"], tuple(s["start"]), tuple(s["end"]),
                                        tuple(s["across"]) if s["across"] else None)
                       for link, s in m["links"].items()},
            )
            for m in data
        ]
    except (KeyError, TypeError, ValueError):
        return None


def select_joint_map(skeleton: Skeleton, spec: str | Path | None = None, source: str = "clip",
                     motion=None) -> JointMap:
    """Pick the map for ``skeleton``: ``spec`` is a built-in name, a YAML path, or None to detect.

    Detection tries the shipped maps (known conventions, by joint names) and then matches the
    skeleton by its shape (:mod:`tracker.retarget.matcher`; ``motion``, when given, decides the
    sides of a skeleton whose names do not). A matched map carries ``matching`` (how sure).

    Raises:
        RetargetError: not a humanoid (naming what is missing), or a bad ``spec``.
    """
    maps = builtin_maps()
    if spec is not None:
        spec = str(spec)
        if spec in maps:
            jm = maps[spec]
        elif spec.endswith((".yaml", ".yml")) or _exists(spec):
            jm = load_joint_map(spec)
        else:
            raise RetargetError(f"unknown joint map {spec!r} (built-in: {', '.join(maps)}; or a YAML path)")
        jm.resolve(skeleton)
        return jm
    scored = sorted(((m.score(skeleton), m.name) for m in maps.values()), reverse=True)
    fits = [maps[name] for score, name in scored if score >= 0 and _same_shape(maps[name], skeleton)]
    if not fits:
        from tracker.retarget.matcher import match_skeleton, motion_frames

        frames = motion_frames(motion) if motion is not None else None
        jmap, how = match_skeleton(skeleton, frames, source)
        return replace(jmap, matching=how)
    return fits[0]


def _exists(path: str) -> bool:
    """Whether ``path`` names something (a name too long for the system does not)."""
    try:
        return Path(path).exists()
    except OSError:
        return False


def _same_shape(jmap: JointMap, skeleton) -> bool:
    """Whether a map that fits by names also fits the tree: its chest is where the arms hang, its
    thighs and upper arms are on the leg and arm chains (:mod:`tracker.motion.body`). A rig that
    shares a few names with a known convention (``Hips``, ``Spine1``, ``LeftUpLeg``) but not its
    shape is then matched by its shape instead. A tree that is no humanoid leaves the names to decide."""
    from tracker.motion.body import NotHumanoid, find_body

    try:
        end_parents = getattr(skeleton, "end_site_parents", getattr(skeleton, "end_parents", ()))
        end_offsets = getattr(skeleton, "end_site_offsets", getattr(skeleton, "end_offsets", ()))
        body = find_body(skeleton.names, [int(p) for p in skeleton.parents], [tuple(o) for o in skeleton.offsets],
                         [int(p) for p in end_parents], [tuple(o) for o in end_offsets],
                         getattr(skeleton, "channels", None))
    except NotHumanoid:
        return True
    names = [jmap.canonical(n) for n in skeleton.names]
    legs = {names[k] for limb in body.legs for k in limb.chain}
    arms = {names[k] for limb in body.arms for k in limb.chain}
    links = jmap.links
    return (links["chest"].joint == names[body.chest]
            and all(links[f"{s}_thigh"].joint in legs and links[f"{s}_foot"].joint in legs for s in ("left", "right"))
            and all(links[f"{s}_upper_arm"].joint in arms and links[f"{s}_hand"].joint in arms
                    for s in ("left", "right")))


if __name__ == "__main__":
    print(f"wrote {write_index()}")
