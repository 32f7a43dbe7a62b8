"""Ball outcomes and how they are reported (issue 13): on the ground, outcome names, JSON keys, plots."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from tracker.analysis.impact import HEADLINE_KEYS, headline
from tracker.analysis.plots import plain_axes
from tracker.analysis.report import ball_table
from tracker.experiments.config import load_config
from tracker.experiments.runner import build, simulate

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_a_ball_resting_on_the_ground_untouched_is_rolling_and_on_the_ground():
    cfg = load_config(CONFIGS / "soccer_light.yaml")
    t_i = cfg.balls[0].impact_time
    cfg = load_config(CONFIGS / "soccer_light.yaml", [("clip.start", t_i - 0.7), ("sim.duration", 0.75)])
    prep = build(cfg)
    prep.config = cfg.replace(sim=dataclasses.replace(cfg.sim, duration=0.5))  # stop before the kick
    rec, out = simulate(prep, balls=True)
    ball = out["balls"][0]
    assert ball["first_contact_time"] is None
    assert ball["outcome"] == "rolling" and ball["on_ground"] and not ball["dropped"]
    z = rec.balls[-1, 0, 2]
    assert abs(z - 0.11) < 1e-3  # resting: the centre within 1 mm of the radius


def test_the_report_has_one_row_per_ball_with_its_links_and_outcome():
    cfg = load_config(CONFIGS / "soccer_light.yaml")
    balls = [{"name": "soccer", "target_link": "right_foot", "planned_impact_time": 1.4, "first_contact_time": 1.396,
              "first_contact_link": "right_foot", "links": ["right_foot", "right_shin"], "exit_speed": 12.26,
              "exit_direction": [0.905, 0.258, 0.337], "caught": False, "outcome": "kicked", "on_ground": False}]
    rows = ball_table(cfg, balls)
    row = next(r for r in rows if r.startswith("| 0:"))
    for text in ("right_foot at 1.396 s", "right_foot, right_shin", "12.3 m/s", "+20° up", "kicked", "in the air"):
        assert text in row, row
    assert len([r for r in rows if r.startswith("| ") and not r.startswith("| ball")]) == 1


def test_the_json_headline_keys():
    metrics = {"impact": {"peak_deviation_rad": 0.5, "time_to_recover_s": 0.3,
                          "balls": [{"first_contact_time": 1.39, "first_contact_link": "right_foot",
                                     "exit_speed": 12.0, "caught": False}]}}
    h = headline(metrics)
    assert tuple(h) == HEADLINE_KEYS
    assert h == {"impact_time_s": 1.39, "impact_link": "right_foot", "peak_deviation_rad": 0.5,
                 "recovery_time_s": 0.3, "ball_exit_speed_m_s": 12.0, "caught": False}
    assert all(v is None for v in headline({}).values())


def test_plot_axes_have_no_offset_notation():
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot([0.0, 1.0], [0.1099999, 0.1100001])
    plain_axes(fig)
    fig.canvas = None
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    assert ax.yaxis.get_major_formatter().get_offset() == ""
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all("e" not in s for s in labels)
    assert np.isfinite([float(s.replace("−", "-")) for s in labels]).all()


def test_a_ball_that_bounces_between_control_steps_has_its_ground_time_and_is_reported_on_the_ground():
    """soccer_light: the kicked ball lands about 2.35 s; at 8 physics steps per control step its bounce
    lasts a physics step or two and no control step ends in contact (the recorded centre stays above
    0.125 m, radius 0.11 m): the ground touch is read in every physics step."""
    cfg = load_config(CONFIGS / "soccer_light.yaml")
    assert cfg.sim.substeps == 8
    rec, out = simulate(build(cfg), balls=True)
    ball = out["balls"][0]
    z = rec.balls[:, 0, 2]
    landing = int(np.nanargmin(np.where(rec.t > 2.0, z, np.nan)))
    assert z[landing] > 0.11 + 0.01  # no recorded state touches the ground (1.5 cm above it)
    assert ball["outcome"] == "kicked" and ball["ground_time"] is not None
    assert abs(ball["ground_time"] - rec.t[landing]) <= 1.5 * cfg.sim.dt  # the bounce, ±1 step
    row = next(r for r in ball_table(cfg, [ball]) if r.startswith("| 0:"))
    assert "on the ground" in row and f"landed at clip time {ball['ground_time']:.3f} s" in row, row
    assert "in the air" not in row
