"""Our forward kinematics agrees with bvhio's world positions on every frame of every file.

bvhio computes in single precision (PyGLM ``vec3``/``quat``/``mat4``), whose
own rounding reaches about 1.4e-6 m on these clips. The main test therefore
runs bvhio's unchanged code with PyGLM's double-precision types swapped in
(and ``glm.rotate``, which PyGLM gets wrong for ``dquat``, replaced by the
equivalent ``q * angleAxis``); a second test runs stock bvhio on a few clips
with a tolerance that covers float32 rounding.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import bvhio
import glm
import numpy as np
import pytest

from tracker.motion.bvh import read_bvh
from tracker.motion.units import axis_matrix

from .conftest import DEMO_WAVE, MOCAP_FILES, mocap_ids

TOLERANCE_M = 1e-6
FLOAT32_TOLERANCE_M = 3e-6


@contextlib.contextmanager
def _bvhio_in_double_precision() -> Iterator[None]:
    swaps = {
        "vec3": glm.dvec3,
        "quat": glm.dquat,
        "mat3": glm.dmat3,
        "mat4": glm.dmat4,
        "mat4x4": glm.dmat4x4,
    }
    saved = {name: getattr(glm, name) for name in [*swaps, "rotate"]}
    try:
        for name, value in swaps.items():
            setattr(glm, name, value)
        glm.rotate = lambda q, angle, axis: q * glm.angleAxis(angle, glm.dvec3(axis))
        yield
    finally:
        for name, value in saved.items():
            setattr(glm, name, value)


def _bvhio_world_positions(path: Path) -> tuple[list[str], np.ndarray]:
    """Joint names and world positions ``(F, J, 3)`` (file units) through bvhio's API."""
    root = bvhio.readAsHierarchy(str(path))
    joints = [joint for joint, _, _ in root.layout()]
    n_frames = root.getKeyframeRange()[1] + 1
    out = np.empty((n_frames, len(joints), 3))
    for f in range(n_frames):
        root.loadPose(f, recursive=True)
        out[f] = [tuple(j.PositionWorld) for j in joints]
    return [j.Name for j in joints], out


def _max_error(path: Path, double: bool) -> float:
    context = _bvhio_in_double_precision() if double else contextlib.nullcontext()
    with context:
        names, ref = _bvhio_world_positions(path)
    ours = read_bvh(path)
    assert list(ours.skeleton.names) == names
    ref = ref @ axis_matrix(ours.source.up_axis).T * ours.source.scale
    pos, _ = ours.global_transforms()
    assert pos.shape == ref.shape
    return float(np.abs(pos - ref).max())


@pytest.mark.parametrize("path", MOCAP_FILES, ids=mocap_ids())
def test_world_positions_match_bvhio_on_every_frame(path: Path) -> None:
    assert _max_error(path, double=True) < TOLERANCE_M


@pytest.mark.parametrize(
    "stem", ["bandai_raise_up_both_hands_normal_070", "cmu_23_22_catch_keys", "cmu_02_01_walk"]
)
def test_world_positions_match_stock_float32_bvhio(stem: str) -> None:
    path = next(p for p in MOCAP_FILES if p.stem == stem)
    assert _max_error(path, double=False) < FLOAT32_TOLERANCE_M


def test_our_written_demo_clip_matches_bvhio(tmp_path: Path) -> None:
    # bvhio wants ROOT right after HIERARCHY, so hand it the clip without the comment lines.
    lines = DEMO_WAVE.read_text().splitlines()
    plain = tmp_path / "demo_wave_plain.bvh"
    plain.write_text("\n".join(line for line in lines if not line.startswith("#")) + "\n")
    assert _max_error(plain, double=True) < TOLERANCE_M
