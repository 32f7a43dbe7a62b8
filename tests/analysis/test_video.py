"""The MP4's overlay: the run time at the top left and a legend of the colours at the bottom."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tracker.analysis.video import annotate

REPO = Path(__file__).resolve().parents[2]
ORANGE, GREEN, YELLOW = (0.93, 0.45, 0.15, 1.0), (0.3, 0.8, 0.4, 1.0), (0.95, 0.95, 0.2, 1.0)
COLOURS = {"simulated": ORANGE, "ball": YELLOW, "reference (ghost)": GREEN}


def near(img: np.ndarray, rgba: tuple[float, ...], tol: int = 30) -> np.ndarray:
    """Pixels within ``tol`` of colour ``rgba`` (0..1), ``(H, W)`` bool."""
    want = np.array([int(255 * c) for c in rgba[:3]])
    return (np.abs(img.astype(int) - want) <= tol).all(axis=-1)


def test_the_time_is_drawn_top_left_and_changes_with_it_the_input_untouched():
    frame = np.full((180, 320, 3), 255, np.uint8)
    a, b = annotate(frame, 0.1, COLOURS), annotate(frame, 2.5, COLOURS)
    assert (frame == 255).all() and a.shape == frame.shape and a.dtype == np.uint8
    corner = (slice(0, 24), slice(0, 100))
    assert (a[corner] != 255).any(axis=-1).sum() > 200  # a dark box with white digits
    assert (a[corner] != b[corner]).any(axis=-1).sum() > 20  # other digits
    assert (a[40:150] == 255).all()  # the middle of the picture is left alone


def test_the_legend_puts_each_colour_under_where_its_body_stands():
    img = annotate(np.full((360, 640, 3), 255, np.uint8), 0.0, COLOURS)
    bottom = img[300:]
    cols = {name: np.nonzero(near(bottom, rgba))[1] for name, rgba in COLOURS.items()}
    assert all(len(c) > 40 for c in cols.values())
    assert cols["simulated"].max() < 160 and cols["reference (ghost)"].min() > 480  # left / right
    assert 200 < np.median(cols["ball"]) < 440


def test_the_video_of_a_run_shows_the_time_running(tmp_path):
    imageio = pytest.importorskip("imageio")
    pytest.importorskip("imageio_ffmpeg")
    from tracker.analysis.video import write_video
    from tracker.cli import main
    from tracker.sim.recording import Recording

    assert main(["run", str(REPO / "configs" / "balance" / "stand.yaml"), "--set", "sim.duration=0.5",
                 "--set", "outputs.plots=false", "--out", str(tmp_path / "run")]) == 0
    rec = Recording.load(tmp_path / "run" / "recording.npz")
    path = write_video(tmp_path / "v.mp4", rec, "humanoid", fps=10, size=(320, 180))
    reader = imageio.get_reader(path)
    try:
        first, last = reader.get_data(0).astype(int), reader.get_data(reader.count_frames() - 1).astype(int)
    finally:
        reader.close()
    corner = (slice(0, 20), slice(0, 90))
    changed = np.abs(first[corner] - last[corner]).max(axis=-1) > 30
    assert changed.sum() > 10  # "t = 0.02 s" -> "t = 0.48 s" (the background there is the sky, the same)
    r, g, b = (first[162:, :, k] for k in range(3))  # the legend's swatches (below the feet), by hue
    orange, green = (r > g + 40) & (r > b + 80), (g > r + 40) & (g > b + 30)
    assert orange[:, :100].sum() > 40 and green[:, 160:].sum() > 40
