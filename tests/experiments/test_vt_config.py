"""Controller vt in experiment configs: the controller.vt section, its checks, and a short run (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracker.cli import main
from tracker.errors import ConfigError
from tracker.experiments.config import load_config
from tracker.experiments.runner import build, controller_options, simulate

from .conftest import DEMO_WAVE


def _write(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "vt.yaml"
    path.write_text(f"clip: {{path: {DEMO_WAVE}, start: 1.0}}\nsim: {{dt: 1/60, duration: 0.3}}\n"
                    f"outputs: {{plots: false}}\n{extra}")
    return path


def test_vt_section_becomes_controller_options(tmp_path):
    cfg = load_config(_write(tmp_path, "controller: {name: vt, vt: {f0: peek, w0: step}}\n"))
    assert controller_options(cfg) == (("f0", "peek"), ("w0", "step"))
    spd = load_config(_write(tmp_path, "controller: {name: spd}\n"))
    assert controller_options(spd) == ()


def test_a_short_vt_run_uses_the_configured_feedforward(tmp_path):
    cfg = load_config(_write(tmp_path, "controller: {name: vt, gains: {k_t: 250}, vt: {f0: peek}}\n"))
    prep = build(cfg)
    rec, _ = simulate(prep)
    assert rec.status == "ok" and rec.n_steps == 18
    assert rec.meta["controller"] == "vt"


@pytest.mark.parametrize("extra, message", [
    ("controller: {name: vt, vt: {f0: fast}}\n", "controller.vt.f0"),
    ("controller: {name: vt, vt: {f0: peek}}\nroot: {mode: kinematic}\n",
     "controller.vt.f0: 'peek' needs a simulated root (root.mode anchored or free), not 'kinematic'"),
])
def test_bad_vt_options_are_one_line(tmp_path, capsys, extra, message):
    path = _write(tmp_path, extra)
    with pytest.raises(ConfigError, match="controller.vt.f0"):
        load_config(path)
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0]
