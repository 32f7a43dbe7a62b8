"""Locations of the project's shipped data (humanoid models, default clips, configs)."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_DIR = PACKAGE_DIR.parent
DATA_DIR = REPO_DIR / "data"
CONFIG_DIR = REPO_DIR / "configs"
HUMANOID_DIR = DATA_DIR / "humanoid"
MOTIONS_DIR = DATA_DIR / "motions"
JOINT_MAP_DIR = PACKAGE_DIR / "retarget" / "joint_maps"
