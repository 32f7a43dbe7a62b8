"""The humanoid fitted to a source skeleton: ee error, cache, CLI, one-line errors."""

from __future__ import annotations

import json
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
    from tracker.retarget.fit import fit_model
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
    from tracker.retarget.fit import fit_model
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


def test_model_fit_takes_the_latest_fit_of_the_skeleton_whatever_its_mass(cache, capsys):
    """``tracker model fit CLIP --mass 80`` then ``--model fit`` uses the 80 kg fit (not a 70 kg one), says so
    once, and a later 70 kg fit takes over again."""
    from tracker.retarget import fit

    clip = MOCAP_DIR / "cmu_02_01_walk.bvh"
    said = fit._SAID.copy()
    fit._SAID.clear()
    try:
        heavy, _ = fit.fit_model(clip, mass=80.0)
        assert fit.fit_for_clip(clip) == (heavy, 80.0)
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "the 80 kg humanoid" in err and str(heavy) in err
        assert fit.resolve_model("fit", clip) == str(heavy) and capsys.readouterr().err == ""  # said once
        light, _ = fit.fit_model(clip, mass=70.0)
        assert light != heavy and fit.fit_for_clip(clip) == (light, 70.0)
        assert "also cached: 80 kg" in capsys.readouterr().err
    finally:
        fit._SAID.clear()
        fit._SAID.update(said)


def test_model_fit_with_an_empty_cache_fits_70_kg_silently(cache, capsys):
    from tracker.retarget.fit import DEFAULT_MASS_KG, fit_for_clip

    path, mass = fit_for_clip(MOCAP_DIR / "cmu_02_01_walk.bvh")
    assert mass == DEFAULT_MASS_KG and path.is_relative_to(cache) and capsys.readouterr().err == ""


def test_the_cli_fit_at_80_kg_is_what_retarget_model_fit_uses(cache):
    env = {"TRACKER_CACHE": str(cache)}
    clip = str(MOCAP_DIR / "cmu_23_22_catch_keys.bvh")
    fitted = _cli("model", "fit", clip, "--mass", "80", "--json", env=env)
    assert fitted.returncode == 0, fitted.stderr
    name = Path(json.loads(fitted.stdout)["model_file"]).stem
    ret = _cli("retarget", clip, "--model", "fit", env=env)
    assert ret.returncode == 0 and f"-> {name}" in ret.stdout, (ret.stdout, ret.stderr)
    assert "the 80 kg humanoid" in ret.stderr
