"""Locations of the project's shipped data (humanoid models, default clips, configs)."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent
#: Where a non-editable install (``pip install .``) puts ``data/`` and ``configs/``, under the
#: environment's prefix (``[tool.setuptools.data-files]`` in pyproject.toml).
INSTALLED_DIR = Path(sys.prefix) / "share" / "tracker"


def shipped_root(repo: Path = REPO_DIR, installed: Path = INSTALLED_DIR) -> Path:
    """The folder holding ``data/`` and ``configs/``: the checkout's (an editable install, a clone on
    ``sys.path``), else the installed copy; the checkout's when neither has the models (so that an
    error names the path a developer expects)."""
    for root in (repo, installed):
        if (root / "data" / "humanoid" / "humanoid.yaml").is_file():
            return root
    return repo


SHIPPED_DIR = shipped_root()
DATA_DIR = SHIPPED_DIR / "data"
CONFIG_DIR = SHIPPED_DIR / "configs"
HUMANOID_DIR = DATA_DIR / "humanoid"
MOTIONS_DIR = DATA_DIR / "motions"
JOINT_MAP_DIR = PACKAGE_DIR / "retarget" / "joint_maps"
