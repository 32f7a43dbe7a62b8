"""Shared fixtures for the scenario tests: the CMU soccer kick, retargeted once."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

MOCAP_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "mocap"
KICK = MOCAP_DIR / "cmu_10_01_soccer_kick.bvh"


@cache
def kick_reference():
    from tracker.retarget import load_clip_reference

    return load_clip_reference(KICK)


@cache
def humanoid():
    from tracker.character.model import load_model

    return load_model("humanoid")


@cache
def kick_time(foot: str = "right_foot") -> float:
    """Clip time of the frame where ``foot`` moves fastest in the reference (the kick), s."""
    ref = kick_reference()
    pos, _ = humanoid().kinematics().forward(ref.q)
    speed = np.linalg.norm(np.gradient(pos[foot], 1.0 / ref.fps, axis=0), axis=1)
    return float(np.argmax(speed) / ref.fps)


@pytest.fixture(scope="session")
def kick():
    """``(reference, model, kick time)`` of the CMU 10_01 kick (right foot)."""
    return kick_reference(), humanoid(), kick_time()
