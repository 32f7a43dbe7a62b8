"""The ball plot (``balls.png``): a resting or rolling ball's numerical wobble is drawn flat."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from tracker.analysis import plots


def _recording(z: np.ndarray) -> SimpleNamespace:
    """A recording of one ball along x at heights ``z`` (N,), 60 Hz, the root standing still."""
    n = len(z)
    balls = np.stack([np.linspace(0.5, 0.8, n), np.zeros(n), z], axis=1)[:, None, :]
    q = np.zeros((n, 7))
    q[:, 2], q[:, 6] = 0.95, 1.0
    return SimpleNamespace(balls=balls, n_steps=n, q=q, t=np.arange(n) / 60.0, events=[], meta={},
                           dt=1 / 60.0, diverged=False)


def _height_axis(rec, monkeypatch, tmp_path: Path):
    figures = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: figures.append(fig) or Path(path))
    plots.plot_balls(rec, tmp_path / "balls.png")
    return next(ax for ax in figures[0].axes if ax.get_title() == "ball height")


def test_a_rolling_balls_8_nm_wobble_stays_flat_on_the_height_axis(monkeypatch, tmp_path):
    """0.11 m ± 8 nm: the axis spans at least MIN_HEIGHT_SPAN (0.2 m), so the wobble is < 1e-7 of it."""
    z = 0.11 + 8e-9 * np.sin(np.arange(120) * 0.7)
    lo, hi = _height_axis(_recording(z), monkeypatch, tmp_path).get_ylim()
    assert hi - lo >= 0.2 - 1e-12  # plots.MIN_HEIGHT_SPAN
    assert lo <= 0.11 - 0.05 and hi >= 0.11 + 0.05 and lo >= 0.0  # the ball in the middle, the ground not far below


def test_a_real_bounce_keeps_its_own_axis(monkeypatch, tmp_path):
    """A 1 m bounce is taller than the minimum span: matplotlib's own limits, around the data."""
    t = np.arange(120) / 60.0
    z = 0.11 + np.abs(np.sin(np.pi * t)) * 1.0
    lo, hi = _height_axis(_recording(z), monkeypatch, tmp_path).get_ylim()
    assert lo <= 0.11 and hi >= 1.11 and hi - lo < 1.3
