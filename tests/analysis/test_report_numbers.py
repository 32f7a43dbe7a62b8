"""``report.md`` writes every measured number one way: 3 significant digits, lengths in mm, angles in rad and degrees."""

from __future__ import annotations

import re
from pathlib import Path

from tracker.analysis.report import report_markdown
from tracker.experiments.config import load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

METRICS = {
    "sim_time_s": 3.0, "steps": 180, "joint_error_mean_rad": 0.009008, "joint_error_max_rad": 0.30741,
    "root_error_mean_m": 0.0022561, "ee_error_mean_m": 0.0003117, "foot_penetration_max_m": 6.288e-05,
    "foot_penetration_p95_m": 1.48e-05, "torque_saturation": 0.0, "effort_mean_nm": 2.2713,
    "diverged": False, "fell": False,
    "impact": {"impacts": 4, "first_impact_s": 1.5, "peak_deviation_rad": 0.31043, "peak_time_s": 1.533,
               "peak_root_deviation_m": 0.0007277, "recover_threshold_rad": 0.05, "recover_hold_s": 0.25,
               "recovered": True, "time_to_recover_s": 0.15, "balls": []},
}


def _rows(text: str, section: str) -> dict[str, str]:
    part = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| ([^|]+) \| ([^|]+) \|$", part, re.M)}


def test_report_numbers_have_three_significant_digits_mm_for_small_lengths_and_rad_with_degrees():
    text = report_markdown(load_config(CONFIGS / "volleyball_fast.yaml"), METRICS, {})
    tracking, impact = _rows(text, "Tracking"), _rows(text, "Impact response")
    assert tracking["mean joint error"] == "0.00901 rad (0.516°)"  # was 0.009008 rad
    assert tracking["max joint error"] == "0.307 rad (17.6°)"
    assert tracking["mean root error"] == "2.26 mm"
    assert tracking["mean end-effector error"] == "0.312 mm"  # was 0.03117 cm
    assert tracking["feet below the ground (deepest / 95th percentile)"] == "0.0629 mm / 0.0148 mm"
    assert tracking["mean effort"] == "2.27 N·m"
    assert impact["peak root deviation"] == "0.728 mm"
    assert impact["peak deviation"].startswith("0.31 rad (17.8°)")
    assert impact["time to recover (< 0.05 rad (2.86°) for 0.25 s)"] == "0.15 s"
    assert "cm" not in "".join(tracking.values()) + "".join(impact.values())
    for value in list(tracking.values()) + list(impact.values()):  # no number has more than 3 significant digits
        for number in re.findall(r"(?<![\w.])\d+\.\d+", value.split(" at clip time")[0]):
            assert len(number.replace(".", "").lstrip("0")) <= 3, value


def test_significant_digits_are_plain_numbers():
    from tracker.analysis.report import sig

    assert [sig(x) for x in (0.009008, 17.614, 25000.0, 0.15, 3.0, 1e-9, -0.0004567)] == [
        "0.00901", "17.6", "25000", "0.15", "3", "0", "-0.000457"]
