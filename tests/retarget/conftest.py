"""Shared fixtures for the retargeting tests: every shared clip retargeted once."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MOCAP_DIR = REPO / ".." / "shared" / "mocap"
MOCAP_FILES = sorted(MOCAP_DIR.glob("*.bvh"))


@lru_cache(maxsize=None)
def retarget_parts(name: str, ik: bool = False):
    from tracker.retarget import load_clip_reference

    return load_clip_reference(MOCAP_DIR / f"{name}.bvh", ik_feet=ik, return_parts=True)


@pytest.fixture(params=[p.stem for p in MOCAP_FILES])
def clip_name(request) -> str:
    return request.param
