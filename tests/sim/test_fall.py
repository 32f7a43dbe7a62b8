"""One notion of a fall (issue 33, item 5): the same rule in the simulation, ``push``, the metrics,
the report and the error plot."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tracker.analysis.metrics import tracking_metrics
from tracker.analysis.report import report_markdown
from tracker.character.model import load_model
from tracker.experiments.config import load_config
from tracker.sim.fall import CLEARANCE, THROWN, ClipClearance, fall_reason
from tracker.sim.push import Push, run_push
from tracker.sim.stance import stand_simulation

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@pytest.fixture(scope="module")
def humanoid():
    model = load_model("humanoid")
    return model, ClipClearance(model.kinematics())


def test_the_root_below_half_the_clips_or_thrown_above_it_is_a_fall(humanoid):
    model, _ = humanoid
    q_ref = model.standing_q()
    assert fall_reason(q_ref, q_ref, 0.5) == ""
    low = q_ref.copy()
    low[2] = 0.49 * q_ref[2]
    assert fall_reason(low, q_ref, 0.5).startswith("the root sank to")
    assert fall_reason(low, q_ref, 0.4) == ""  # fall_height is the clip's fraction
    high = q_ref.copy()
    high[2] = q_ref[2] + THROWN + 0.01
    assert fall_reason(high, q_ref, 0.5).startswith("the root rose to")


def test_a_link_on_the_ground_is_a_fall_only_where_the_clip_holds_it_up(humanoid):
    model, clearance = humanoid
    stand = model.standing_q()
    held = clearance(["left_shin", "left_hand"] if "left_hand" in model.kinematics().shapes else ["left_shin"], stand)
    assert held["left_shin"] > CLEARANCE  # a standing clip keeps the shin ~9 cm up
    reason = fall_reason(stand, stand, 0.5, ["left_shin"], lambda links: clearance(links, stand))
    assert reason == "left_shin touched the ground"
    # a clip that kneels: its shin is on the floor, and the character's shin there is no fall
    kneel = stand.copy()
    kneel[2] -= clearance(["left_shin"], stand)["left_shin"]
    assert clearance(["left_shin"], kneel)["left_shin"] == pytest.approx(0.0, abs=1e-9)
    assert fall_reason(kneel, kneel, 0.5, ["left_shin"], lambda links: clearance(links, kneel)) == ""


def test_push_metrics_and_the_simulation_agree_on_when_and_why_it_fell():
    sim = stand_simulation("stand", balance=None)  # SPD alone on a free root: the stance falls
    try:
        out = run_push(sim, Push(force=0.0), 4.0, stop_on_fall=False)
        assert out.fell and sim.fell_at is not None
        assert out.fell_time_s == pytest.approx(sim.fell_at, abs=1e-6)  # push.json rounds to 1 µs
        assert out.fell_reason == sim.fall_reason != ""
    finally:
        sim.close()
    sim = stand_simulation("stand", balance=None)
    try:
        rec = sim.run(4.0)
    finally:
        sim.close()
    assert rec.meta["fell_at"] == pytest.approx(out.fell_time_s, abs=1e-6)
    m = tracking_metrics(rec)
    assert m["fell"] is True and m["fell_at_s"] == rec.meta["fell_at"] and m["fall_reason"] == rec.meta["fall_reason"]


def test_a_recording_that_stood_has_no_fall_time():
    from tracker.control.balance import BalanceOptions

    sim = stand_simulation("stand", balance=BalanceOptions())
    try:
        rec = sim.run(1.0)
    finally:
        sim.close()
    m = tracking_metrics(rec)
    assert m["fell"] is False and m["fell_at_s"] is None and m["fall_reason"] == ""


def test_the_report_says_when_and_why_it_fell():
    metrics = {"sim_time_s": 2.0, "steps": 120, "diverged": False, "fell": True, "fell_at_s": 1.25,
               "fall_reason": "left_shin touched the ground"}
    text = report_markdown(load_config(CONFIGS / "balance" / "stand.yaml"), metrics, {})
    rows = dict(re.findall(r"^\| ([^|]+) \| ([^|]+) \|$", text.split("## Tracking", 1)[1], re.M))
    assert rows["diverged / fell"] == "no / yes"
    assert rows["fell at"] == "clip time 1.250 s: left_shin touched the ground"


def test_the_error_plot_marks_the_fall(tmp_path, monkeypatch):
    import matplotlib.axes

    from tracker.analysis.plots import plot_joint_error

    sim = stand_simulation("stand", balance=None)
    try:
        rec = sim.run(3.0)
    finally:
        sim.close()
    seen = []
    real = matplotlib.axes.Axes.axvline

    def spy(self, x=0, *args, **kwargs):
        seen.append((x, kwargs.get("label")))
        return real(self, x, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "axvline", spy)
    plot_joint_error(rec, tmp_path / "err.png")
    assert (tmp_path / "err.png").stat().st_size > 0
    assert any(np.isclose(x, rec.meta["fell_at"]) and label.startswith("fell at") for x, label in seen)


def test_a_shin_touching_beside_its_sunk_foot_is_no_fall():
    """The CMU walk on a free root at one physics step per 1/60 s: the left foot's first landing sinks
    ~10 cm and its shin meets the floor beside the ankle (0.15 s); the walk has not fallen then."""
    from tracker.retarget import load_clip_reference
    from tracker.sim.simulation import SimOptions, Simulation
    from tracker.sim.support import touching_links

    walk = Path(__file__).resolve().parents[3] / "shared" / "mocap" / "cmu_02_01_walk.bvh"
    model = load_model("humanoid")
    sim = Simulation(model, load_clip_reference(str(walk), model="humanoid"), SimOptions(dt=1 / 60, root="free"))
    try:
        shin = False
        for _ in range(30):
            sim.step()
            shin |= "left_shin" in touching_links(sim.character, sim.world.ground)
        assert shin and sim.fell_at is None
    finally:
        sim.close()
