"""A non-editable install (``pip install .``) carries the models, clips and configs it needs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tracker.paths import shipped_root

ROOT = Path(__file__).resolve().parents[1]


def data_files() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]


def test_every_shipped_folder_is_installed():
    entries = data_files()
    for top in ("data", "configs"):
        for folder in [ROOT / top, *sorted(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            files = sorted(p for p in folder.iterdir() if p.is_file())
            if not files:
                continue
            rel = folder.relative_to(ROOT).as_posix()
            globs = entries.get(f"share/tracker/{rel}")
            assert globs is not None, f"pyproject.toml [tool.setuptools.data-files] has no entry for {rel}/"
            matched = {p for g in globs for p in ROOT.glob(g)}
            missing = [p.name for p in files if p not in matched]
            assert not missing, f"{rel}/: {missing} are not installed by {globs}"


def test_the_checkout_wins_and_an_install_is_found_without_it(tmp_path):
    repo, installed = tmp_path / "repo", tmp_path / "prefix" / "share" / "tracker"
    for root in (repo, installed):
        (root / "data" / "humanoid").mkdir(parents=True)
        (root / "data" / "humanoid" / "humanoid.yaml").write_text("name: humanoid\n")
    assert shipped_root(repo, installed) == repo
    (repo / "data" / "humanoid" / "humanoid.yaml").unlink()  # an installed package: no checkout around it
    assert shipped_root(repo, installed) == installed
    (installed / "data" / "humanoid" / "humanoid.yaml").unlink()
    assert shipped_root(repo, installed) == repo  # neither: the checkout's path in the error


@pytest.mark.slow
def test_the_wheel_holds_the_models_clips_and_configs(tmp_path):
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                          "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("tracker-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = next(n.split("/data/share/")[0] for n in names if "/data/share/tracker/" in n)
    for rel in ("data/humanoid/humanoid.urdf", "data/humanoid/humanoid.yaml", "data/motions/kick.bvh",
                "configs/soccer_light.yaml", "configs/sweeps/push.yaml"):
        assert f"{data}/data/share/tracker/{rel}" in names, rel
