"""Skeletons matched by their shape: no names, other up axes, handedness and units, non-humanoids refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tracker.cli import main
from tracker.errors import RetargetError
from tracker.motion.bvh import read_bvh, read_bvh_string
from tracker.motion.bvh_write import write_bvh
from tracker.motion.motion import Motion
from tracker.motion.skeleton import Skeleton
from tracker.retarget import load_clip_reference
from tracker.retarget.joint_map import builtin_maps, load_joint_map, select_joint_map
from tracker.retarget.matcher import match_skeleton, motion_frames

MOCAP = Path(__file__).resolve().parents[3] / "shared" / "mocap"
#: One clip of each shipped convention that the shared clips hold.
CLIPS = {
    "cmu_mb": "cmu_02_01_walk.bvh",
    "cc_base": "cmu_06_01_walk_ccbase.bvh",
    "bandai": "bandai_walk_normal_001.bvh",
    "cmu_daz": "cmu_22_25_catch_wallet.bvh",
}


def _anonymous(motion: Motion) -> Motion:
    sk = motion.skeleton
    names = [f"j{i}" for i in range(sk.n_joints)]
    anon = Skeleton(names, sk.parents, sk.offsets, sk.channels, sk.end_site_parents, sk.end_site_offsets)
    return Motion(anon, motion.fps, motion.translations, motion.rotations, source=motion.source)


def _first(motion: Motion, n: int) -> Motion:
    return Motion(motion.skeleton, motion.fps, motion.translations[:n], motion.rotations[:n], source=motion.source)


@pytest.mark.parametrize("convention", sorted(CLIPS))
def test_a_clip_with_its_names_replaced_maps_to_the_segments_of_its_known_convention(convention: str) -> None:
    motion = read_bvh(MOCAP / CLIPS[convention])
    known = select_joint_map(motion.skeleton)
    assert known.name == convention
    anon = _anonymous(motion)
    matched, how = match_skeleton(anon.skeleton, motion_frames(anon))
    index = {n: i for i, n in enumerate(motion.skeleton.names)}
    present = set(motion.skeleton.names)

    def anonymous(point: str) -> str:
        base, _, tail = point.partition("/")
        return f"j{index[base]}" + ("/end" if tail else "")

    for link, src in known.links.items():
        end = next(a for a in src.end if a.partition("/")[0] in present)  # the end the known map uses
        assert matched.links[link].joint == anonymous(src.joint), link
        assert matched.links[link].end[0] == anonymous(end), link
    assert how["names"] is None and "geometry" in how["sides"]


@pytest.mark.parametrize("convention", sorted(CLIPS))
def test_the_matcher_with_names_agrees_with_the_known_map_and_reads_the_sides_from_them(convention: str) -> None:
    motion = read_bvh(MOCAP / CLIPS[convention])
    known = builtin_maps()[convention]
    matched, how = match_skeleton(motion.skeleton, motion_frames(motion))
    for link, src in known.links.items():
        assert matched.links[link].joint == src.joint, link
    assert how["sides"] == "from the joint names"
    assert how["score"] >= 0.9


@pytest.fixture(scope="module")
def walk_files(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """The CMU walk's first second, written in other axes, units and handedness."""
    folder = tmp_path_factory.mktemp("axes")
    m = _first(read_bvh(MOCAP / CLIPS["cmu_mb"]), 120)
    base = folder / "base.bvh"
    write_bvh(m, base, unit="cm", up_axis="Y")
    files = {}
    for unit, up in (("m", "Y"), ("cm", "Z"), ("mm", "X"), ("inch", "Z"), ("inch", "-Y"), ("cm", "-Z")):
        files[f"{up}-up in {unit}"] = folder / f"{up}_{unit}.bvh"
        write_bvh(m, files[f"{up}-up in {unit}"], unit=unit, up_axis=up)
    files["Z-up in inches, no names"] = folder / "anon.bvh"
    write_bvh(_anonymous(m), files["Z-up in inches, no names"], unit="inch", up_axis="Z")
    # A left-handed file: the same capture with its lateral axis reflected (R' = M R M, M = diag(1, -1, 1)).
    sk, mirror = m.skeleton, np.diag([1.0, -1.0, 1.0])
    rot = np.array(m.rotations)
    rot[..., [0, 2]] *= -1
    mirrored = Motion(Skeleton(sk.names, sk.parents, sk.offsets @ mirror, sk.channels, sk.end_site_parents,
                               sk.end_site_offsets @ mirror), m.fps, m.translations @ mirror, rot)
    files["mirrored, Y-up in cm"] = folder / "mirrored.bvh"
    write_bvh(mirrored, files["mirrored, Y-up in cm"], unit="cm", up_axis="Y")
    return base, files


def test_a_clip_in_other_axes_units_and_handedness_gives_the_same_reference(walk_files) -> None:
    base, files = walk_files
    expected = load_clip_reference(base)
    for what, path in files.items():
        motion = read_bvh(path)
        ref = load_clip_reference(path)
        np.testing.assert_allclose(ref.q, expected.q, atol=1e-6, err_msg=what)
        np.testing.assert_allclose(ref.v, expected.v, atol=1e-6, err_msg=what)
        up, unit = what.split(" in ")[0].split(", ")[-1].split("-up")[0], what.split(" in ")[-1].split(",")[0]
        assert motion.source.up_axis == up, what
        assert motion.source.unit == {"inches": "inch"}.get(unit, unit), what
        assert motion.source.mirrored == what.startswith("mirrored"), what
        assert 1.3 < motion.source.stature_m < 1.6, what


def test_inspect_says_how_up_unit_and_the_match_were_decided(walk_files, capsys) -> None:
    _, files = walk_files
    assert main(["inspect", str(files["Z-up in inches, no names"])]) == 0
    out = capsys.readouterr().out
    assert "up axis" in out and "Z" in out and "inch" in out
    assert "found from the skeleton's shape" in out and "score" in out


def test_retarget_writes_the_map_it_found_and_the_map_reads_back(walk_files, tmp_path, capsys) -> None:
    _, files = walk_files
    anon = files["Z-up in inches, no names"]
    out = tmp_path / "found.yaml"
    assert main(["retarget", str(anon), "--write-map", str(out), "--json"]) == 0
    report = __import__("json").loads(capsys.readouterr().out)
    assert report["convention"] == "matched" and report["matching"]["score"] > 0.5
    jmap = load_joint_map(out)
    assert jmap.links["left_thigh"].joint == "j2" and jmap.links["head"].end == ("j16/end",)
    again = load_clip_reference(anon, joint_map=str(out))
    np.testing.assert_allclose(again.q, load_clip_reference(anon).q, atol=1e-12)


def _bvh(root) -> str:
    """A two-frame BVH of a tree ``(name, offset, [children], end offset or None)``, every joint at rest."""
    lines, n = ["HIERARCHY"], [0]

    def emit(node, depth: int) -> None:
        name, offset, kids, end = node
        pad = "  " * depth
        lines.append(f"{pad}{'ROOT' if depth == 0 else 'JOINT'} {name}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {offset[0]} {offset[1]} {offset[2]}")
        channels = "6 Xposition Yposition Zposition" if depth == 0 else "3"
        lines.append(f"{pad}  CHANNELS {channels} Zrotation Yrotation Xrotation")
        n[0] += 6 if depth == 0 else 3
        for kid in kids:
            emit(kid, depth + 1)
        if end is not None:
            lines.extend([f"{pad}  End Site", pad + "  {", f"{pad}    OFFSET {end[0]} {end[1]} {end[2]}", pad + "  }"])
        lines.append(pad + "}")

    emit(root, 0)
    row = " ".join(["0"] * n[0])
    return "\n".join(lines + ["MOTION", "Frames: 2", "Frame Time: 0.033333", row, row]) + "\n"


def _chain(prefix: str, offsets, end, first=None):
    """A chain of joints ``prefix1, prefix2 ...`` with these offsets, ending in an End Site."""
    node = None
    for k, off in reversed(list(enumerate(offsets, 1))):
        node = (f"{prefix}{k}", off, [node] if node else [], end if node is None else None)
    return node


#: A dog: hind legs and front legs hang below a horizontal spine, a tail, a neck and head forward.
QUADRUPED = _bvh(("pelvis", (0, 60, 0), [
    _chain("tail", [(0, 0, -10), (0, 0, -10)], (0, 0, -10)),
    _chain("l_hind", [(10, 0, 0), (0, -28, 0), (0, -28, 0)], (0, -4, 3)),
    _chain("r_hind", [(-10, 0, 0), (0, -28, 0), (0, -28, 0)], (0, -4, 3)),
    ("spine1", (0, 0, 25), [("spine2", (0, 0, 25), [
        _chain("l_front", [(10, 0, 0), (0, -28, 0), (0, -28, 0)], (0, -4, 3)),
        _chain("r_front", [(-10, 0, 0), (0, -28, 0), (0, -28, 0)], (0, -4, 3)),
        _chain("neck", [(0, 10, 10), (0, 10, 10)], (0, 0, 15)),
    ], None)], None),
], None))

#: A hand rig: a wrist and five three-joint fingers.
HAND = _bvh(("wrist", (0, 0, 0), [_chain(f, [(x, 8, 0), (0, 4, 0), (0, 3, 0)], (0, 2, 0))
                                  for f, x in zip(("thumb", "index", "middle", "ring", "pinky"), (-4, -2, 0, 2, 4))],
             None))


@pytest.mark.parametrize("text, missing", [
    (QUADRUPED, "legs do not hang below its spine"),
    (HAND, "no spine that branches into two arms and a neck"),
])
def test_a_skeleton_that_is_not_a_humanoid_is_refused_in_one_line(text: str, missing: str) -> None:
    motion = read_bvh_string(text, name="rig.bvh")
    with pytest.raises(RetargetError, match=missing) as info:
        select_joint_map(motion.skeleton, source="rig.bvh", motion=motion)
    assert "\n" not in str(info.value) and str(info.value).startswith("rig.bvh: not a humanoid skeleton")


def test_a_non_humanoid_is_refused_by_the_command_with_exit_2(tmp_path, capsys) -> None:
    path = tmp_path / "dog.bvh"
    path.write_text(QUADRUPED)
    assert main(["retarget", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a humanoid" in err and "Traceback" not in err


def test_random_trees_are_matched_or_refused_in_one_line_never_an_escape() -> None:
    """Any joint tree (random shapes, zero offsets, single joints, deep chains) goes through the body
    finder, the orientation and the matcher with a humanoid found or a RetargetError, nothing else."""
    from types import SimpleNamespace

    from tracker.motion import orient, summary

    rng = np.random.default_rng(0)
    outcomes = {"matched": 0, "refused": 0}
    for case in range(400):
        n = int(rng.integers(1, 40))
        parents = [-1] + [int(rng.integers(0, j)) for j in range(1, n)]
        offsets = [tuple(float(x) for x in (rng.normal(0, 10, 3) if rng.random() > 0.2 else np.zeros(3)))
                   for _ in range(n)]
        end_parents = [j for j in range(n) if j not in parents[1:] and rng.random() > 0.3]
        end_offsets = [tuple(float(x) for x in rng.normal(0, 5, 3)) for _ in end_parents]
        channels = [("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")] + \
            [("Zrotation", "Yrotation", "Xrotation")] * (n - 1)
        names = [f"j{k}" for k in range(n)]
        identity = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
        pose = summary.Pose(names, parents, offsets, offsets, [identity] * n, end_parents, end_offsets)
        found = orient.decide([pose], channels, None, None)
        assert found.unit in ("m", "cm", "mm", "inch", "asf", "scaled")
        skeleton = SimpleNamespace(names=names, parents=parents, offsets=offsets, end_site_parents=end_parents,
                                   end_site_offsets=end_offsets, channels=channels)
        try:
            match_skeleton(skeleton, None, f"case{case}.bvh")
            outcomes["matched"] += 1
        except RetargetError as exc:
            assert "\n" not in str(exc) and str(exc).startswith(f"case{case}.bvh: ")
            outcomes["refused"] += 1
    assert outcomes["refused"] > 300
