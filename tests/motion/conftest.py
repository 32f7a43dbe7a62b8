"""Shared paths for the motion tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The shared real-mocap clips live beside the checkout (CI copies ../shared there too).
MOCAP_DIR = REPO / ".." / "shared" / "mocap"
MOCAP_FILES = sorted(MOCAP_DIR.glob("*.bvh"))
DEMO_WAVE = REPO / "data" / "motions" / "demo_wave.bvh"


def mocap_ids() -> list[str]:
    return [p.stem for p in MOCAP_FILES]


@pytest.fixture(scope="session")
def tiny_path() -> Path:
    return FIXTURES / "tiny.bvh"
