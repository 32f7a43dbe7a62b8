"""Helpers for the experiment tests: the repo, the shared mocap, a CLI runner, short configs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MOCAP = REPO / ".." / "shared" / "mocap"
CONFIGS = REPO / "configs"
DEMO_WAVE = REPO / "data" / "motions" / "demo_wave.bvh"


def cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m tracker ARGS`` in a fresh interpreter; returns the completed process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("TRACKER_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "tracker", *args], cwd=cwd, env=env, capture_output=True, check=False,
                          text=True, timeout=timeout)


@pytest.fixture
def wave_config(tmp_path: Path) -> Path:
    """A short plain tracking config of the shipped demo clip (0.5 s at 60 Hz, no plots)."""
    path = tmp_path / "wave.yaml"
    path.write_text(
        f"name: wave\nclip: {{path: {DEMO_WAVE}, start: 1.0}}\nsim: {{dt: 1/60, duration: 0.5}}\n"
        "outputs: {plots: false}\n"
    )
    return path
