"""Reference sampling, resampling and the joint maps."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tracker.retarget.joint_map import builtin_maps
from tracker.retarget.reference import Reference, slerp
from tests.retarget.conftest import retarget_parts


def test_slerp_matches_scipy_and_takes_the_short_arc():
    rng = np.random.default_rng(0)
    a, b = Rotation.random(2, random_state=1)
    for alpha in (0.0, 0.25, 0.5, 0.9, 1.0):
        ours = Rotation.from_quat(slerp(a.as_quat(), -b.as_quat(), alpha))
        from scipy.spatial.transform import Slerp

        ref = Slerp([0, 1], Rotation.concatenate([a, b]))(alpha)
        assert (ours.inv() * ref).magnitude() < 1e-9
    del rng


def test_sample_hits_frames_exactly_and_interpolates_between():
    ref = retarget_parts("cmu_02_01_walk")[0]
    q, v = ref.sample(10 / ref.fps)
    assert np.allclose(q, ref.q[10]) and np.allclose(v, ref.v[10])
    q, _ = ref.sample(10.5 / ref.fps)
    assert np.allclose(q[0:3], 0.5 * (ref.q[10, 0:3] + ref.q[11, 0:3]))
    assert np.isclose(np.linalg.norm(q[3:7]), 1.0)


def test_outside_the_clip_the_pose_is_held_and_still():
    ref = retarget_parts("cmu_02_01_walk")[0]
    end = (ref.n_frames - 1) / ref.fps
    q, v = ref.sample(end)  # the last frame itself keeps its velocity
    assert np.allclose(q, ref.q[-1]) and np.allclose(v, ref.v[-1]) and np.any(ref.v[-1] != 0)
    q, v = ref.sample(end + 0.5)
    assert np.allclose(q, ref.q[-1]) and not np.any(v)
    q, v = ref.sample(-0.1)
    assert np.allclose(q, ref.q[0]) and not np.any(v)


def test_resample_keeps_duration_and_pose():
    ref = retarget_parts("cmu_02_01_walk")[0]
    r60 = ref.resample(60.0)
    assert r60.fps == 60.0
    assert abs(r60.duration - ref.duration) < 1 / 60
    assert np.allclose(r60.q[30], ref.sample(0.5)[0])


def test_every_builtin_map_is_valid_and_names_all_links():
    maps = builtin_maps()
    assert set(maps) == {"cmu_mb", "cmu_daz", "cc_base", "bandai", "mixamo", "lafan1"}
    for m in maps.values():
        assert len(m.links) == 16


def test_mixamo_prefix_is_stripped():
    m = builtin_maps()["mixamo"]
    assert m.canonical("mixamorig:LeftArm") == "LeftArm"
    assert m.canonical("mixamorig1:Hips") == "Hips"
