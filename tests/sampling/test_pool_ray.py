"""Rollouts on a Ray cluster started as a user with many machines starts one: the local backend's results, bit for bit."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
WALK = str((ROOT / ".." / "shared" / "mocap" / "cmu_02_01_walk.bvh").resolve())
SEARCH = ["--method", "samcon", "--duration", "0.2", "--samples", "6", "--keep", "2", "--iterations", "2",
          "--seed", "4"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray_cli() -> str:
    exe = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    return exe


def _tracker(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracker.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled", **(env or {})}, timeout=600)


def test_optimize_on_a_ray_cluster_gives_the_local_backends_track(tmp_path):
    port = _free_port()
    address = f"127.0.0.1:{port}"
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    # token authentication (Ray >= 2.5x's default) off on this throwaway loopback cluster, for it and its clients
    env = {**{k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}, "RAY_AUTH_MODE": "disabled"}
    try:
        started = subprocess.run([_ray_cli(), "start", "--head", "--num-cpus", "2", "--port", str(port),
                                  "--node-ip-address", "127.0.0.1", "--include-dashboard=false",
                                  f"--temp-dir={temp}", "--disable-usage-stats"],
                                 capture_output=True, text=True, env=env, timeout=180)
        assert started.returncode == 0, started.stdout + started.stderr
        local = _tracker(["optimize", WALK, *SEARCH, "--workers", "2", "--out", str(tmp_path / "local")])
        assert local.returncode == 0, local.stdout + local.stderr
        # the cluster's address as a user passes it: --address when the command offers it, else RAY_ADDRESS
        helped = _tracker(["optimize", "--help"]).stdout
        by = ["--address", address] if "--address" in helped else []
        remote = _tracker(["optimize", WALK, *SEARCH, "--workers", "2", "--backend", "ray", *by,
                           "--out", str(tmp_path / "ray")], env={} if by else {"RAY_ADDRESS": address})
        assert remote.returncode == 0, remote.stdout + remote.stderr
        a, b = np.load(tmp_path / "local" / "offsets.npz"), np.load(tmp_path / "ray" / "offsets.npz")
        assert a["values"].size and np.abs(a["values"]).max() > 0
        np.testing.assert_array_equal(a["values"], b["values"])
        np.testing.assert_array_equal(a["times"], b["times"])
        costs = [json.loads((tmp_path / d / "optimize.json").read_text())["cost_per_iteration"] for d in ("local", "ray")]
        assert costs[0] == costs[1]
    finally:
        subprocess.run([_ray_cli(), "stop", "--force"], capture_output=True, env=env, timeout=120)
        shutil.rmtree(temp, ignore_errors=True)


def test_a_pool_on_a_ray_cluster_keeps_its_connection_and_gives_the_local_results():
    from tracker.experiments.config import config_from_data
    from tracker.sampling.pool import RolloutPool
    from tracker.sampling.rollout import RolloutRequest
    from tracker.sim.offsets import OffsetTrack

    cfg = config_from_data({"clip": {"path": WALK}, "root": {"mode": "free"}, "sim": {"dt": 1 / 60},
                            "outputs": {"plots": False}}, ROOT / "walk_free.yaml")
    local = RolloutPool(cfg, workers=2)
    start = local.initial_state()
    lay = local.local.sim.layout
    rng = np.random.default_rng(2)
    base = OffsetTrack.zeros(lay, [0.0, 0.1])
    reqs = [RolloutRequest(start, base.with_values(rng.normal(0.0, 0.1, base.values.shape)), 0.1, tag=i)
            for i in range(6)]
    # the local workers are forked before Ray starts in this process (a fork after a Ray client's
    # threads ran is not safe: one backend per process, as a search uses)
    try:
        mine = local.run(reqs)
    finally:
        local.close()
    remote = RolloutPool(cfg, workers=2, backend="ray")
    try:
        first = remote.run(reqs)
        assert ray.is_initialized()  # kept for the next batch
        again = remote.run(reqs)
    finally:
        remote.close()
    assert not ray.is_initialized()
    for a, b, c in zip(mine, first, again):
        assert a.tag == b.tag == c.tag and a.cost == b.cost == c.cost and a.terms == b.terms
        assert a.end.engine == b.end.engine == c.end.engine
