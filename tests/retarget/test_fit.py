"""The humanoid fitted to a source skeleton: ee error, cache, CLI, one-line errors."""

from __future__ import annotations

import subprocess
import sys

from pathlib import Path

import pytest

from tests.retarget.conftest import MOCAP_DIR, MOCAP_FILES, REPO

FIT_CLIPS = [p.stem for p in MOCAP_FILES]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACKER_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.mark.parametrize("name", FIT_CLIPS)
def test_the_fitted_humanoid_brings_the_end_effectors_within_3_cm_without_ik(name, cache):
    from tracker.character.fit import fit_model
    from tracker.retarget import load_clip_reference

    clip = MOCAP_DIR / f"{name}.bvh"
    path, cached = fit_model(clip)
    assert path.is_relative_to(cache)
    assert fit_model(clip) == (path, True)  # the second use comes from the cache (or a same-skeleton clip's)
    q = load_clip_reference(clip, model=str(path)).quality
    assert q["ee_error_mean_m"] <= 0.03, q["ee_error"]
    assert q["scale"] == pytest.approx(1.0, abs=0.02)  # the fitted legs are the source's
    assert q["foot_float_median_m"] <= 0.01 and q["bone_cos_min"] >= 0.5


def test_fitted_masses_follow_de_leva_and_the_joints_are_the_default_humanoids(cache, tmp_path):
    from tracker.character.fit import fit_model
    from tracker.character.model import load_model

    path, _ = fit_model(MOCAP_DIR / "cmu_02_01_walk.bvh", mass=82.0, out_dir=tmp_path / "out")
    fitted, default = load_model(path), load_model("humanoid")
    kin = fitted.kinematics()
    assert kin.total_mass == pytest.approx(82.0, rel=1e-3)  # de Leva fractions sum to 1
    assert kin.masses["left_thigh"] / kin.total_mass == pytest.approx(0.1416, rel=1e-3)
    assert fitted.layout.names == default.layout.names
    assert {k: tuple(map(tuple, v)) for k, v in fitted.joint_limits.items()} == \
        {k: tuple(map(tuple, v)) for k, v in default.joint_limits.items()}
    assert [(g.name, g.kp, g.torque_limit) for g in fitted.groups] == [(g.name, g.kp, g.torque_limit) for g in default.groups]


def _cli(*args, env=None):
    import os

    return subprocess.run([sys.executable, "-m", "tracker", *args], capture_output=True, text=True, cwd=REPO,
                          env={**os.environ, **(env or {})}, check=False)


def test_model_fit_cli_and_model_fit_on_retarget(cache, tmp_path):
    env = {"TRACKER_CACHE": str(cache)}
    clip = str(MOCAP_DIR / "cmu_23_22_catch_keys.bvh")
    out = _cli("model", "fit", clip, "--mass", "65", "-o", str(tmp_path / "m"), env=env)
    assert out.returncode == 0 and "fitted humanoid" in out.stdout
    assert list((tmp_path / "m").glob("*.urdf")) and list((tmp_path / "m").glob("*.yaml"))
    ret = _cli("retarget", clip, "--model", "fit", env=env)
    assert ret.returncode == 0 and "-> fit_" in ret.stdout, ret.stderr


@pytest.mark.parametrize("case", ["mass", "limb", "cache"])
def test_fit_errors_are_one_line_with_exit_status_2(case, cache, tmp_path):
    env = {"TRACKER_CACHE": str(cache)}
    clip = MOCAP_DIR / "cmu_02_01_walk.bvh"
    if case == "mass":
        proc = _cli("model", "fit", str(clip), "--mass", "0", env=env)
        assert "mass" in proc.stderr
    elif case == "limb":
        bad = Path(__file__).resolve().parents[1] / "motion" / "fixtures" / "tiny.bvh"  # a three-joint chain
        proc = _cli("model", "fit", str(bad), env=env)
        assert "not a humanoid skeleton" in proc.stderr
    else:
        assert _cli("model", "fit", str(clip), env=env).returncode == 0
        (yml,) = cache.glob("fitted/*/*.yaml")
        yml.write_text("name: [unclosed\n")
        proc = _cli("model", "fit", str(clip), env=env)
        assert "cache" in proc.stderr and str(yml.parent) in proc.stderr
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
