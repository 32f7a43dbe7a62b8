"""A free root under balance feedback on real mocap: the stance constraints in SPD's prediction
must match the contacts the engine then uses (a walk may fall; it must not blow up)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

MOCAP = Path(__file__).resolve().parents[2] / ".." / "shared" / "mocap"


@pytest.mark.parametrize("clip", ["cmu_02_01_walk.bvh", "bandai_walk_normal_001.bvh"])
def test_a_free_root_walk_with_balance_does_not_diverge_in_its_first_half_second(tmp_path, clip):
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, make_simulation

    path = MOCAP / clip
    if not path.exists():
        pytest.skip(f"{path} not available")
    cfg_file = tmp_path / "walk.yaml"
    cfg_file.write_text(f"clip: {{path: {path.resolve()}}}\nroot: {{mode: free}}\nsim: {{dt: 1/60}}\n"
                        "controller: {balance: {enabled: true}}\noutputs: {plots: false}\n")
    sim = make_simulation(build(load_config(cfg_file)))
    try:
        for _ in range(30):  # 0.5 s
            row = sim.step()
            why = sim._diverged(row)
            assert not why, f"{clip}: diverged at t = {sim.t:.3f} s: {why}"
            assert np.abs(row["v"][6:]).max() < 50.0, f"{clip}: a joint spins at t = {sim.t:.3f} s"
    finally:
        sim.close()


@pytest.mark.xfail(strict=True, reason=(
    "known, machine-dependent: at 1/60 s with one substep the lying body's left hand chatters against "
    "the ground under its stiff wrist servo, and on some CPUs it reaches PyBullet's 100 rad/s clamp at "
    "5.2 s (passed on the machine of stop 28; 3 or 8 substeps pass, 2 or 4 do not: not a step-size "
    "cure). Open in issue 20's closing note: SPD's prediction does not see a hand's contact"))
def test_a_fallen_free_root_under_balance_lies_on_to_the_clips_end(tmp_path):
    """The free-root soccer kick falls at ~0.9 s and lies on the ground to the clip's end (5.4 s here)
    without a joint blowing up; lying, its support lists the other links on the ground (and balance
    then holds no feet: tests/control/test_balance.py)."""
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, make_simulation

    path = MOCAP / "cmu_10_01_soccer_kick.bvh"
    if not path.exists():
        pytest.skip(f"{path} not available")
    cfg_file = tmp_path / "kick.yaml"
    cfg_file.write_text(f"clip: {{path: {path.resolve()}}}\nroot: {{mode: free}}\nsim: {{dt: 1/60}}\n"
                        "controller: {balance: {enabled: true}}\noutputs: {plots: false}\n")
    sim = make_simulation(build(load_config(cfg_file)))
    try:
        lying = 0
        for _ in range(int(5.4 * 60)):
            row = sim.step()
            why = sim._diverged(row)
            assert not why, f"diverged at t = {sim.t:.3f} s: {why}"
            lying += sim.support.others > 0
        assert sim.fell_at is not None and sim.fell_at < 2.0  # it fell (a kick needs more than static balance)
        assert lying > 100  # and lay on other links than its feet for most of the clip
    finally:
        sim.close()
