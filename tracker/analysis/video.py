"""MP4 of a recording: the simulated character beside its reference (ghost), balls visible.

Frames come from :class:`tracker.sim.render.ReplayRenderer` (PyBullet's
TinyRenderer, offscreen); they are encoded with ``imageio`` + ``imageio-ffmpeg``,
the optional ``video`` extra (``pip install -e '.[video]'``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from tracker.errors import TrackerError

INSTALL_HINT = "pip install -e '.[video]'"


def require_video_extra() -> None:
    """Raise a one-line :class:`TrackerError` if imageio or imageio-ffmpeg is missing."""
    try:
        import imageio  # noqa: F401  (only whether it imports)
        import imageio_ffmpeg

        imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError) as exc:
        raise TrackerError(f"video output needs the optional 'video' extra (imageio, imageio-ffmpeg; {exc}); "
                           f"install it with: {INSTALL_HINT}") from None


def frame_steps(t: np.ndarray, fps: float) -> np.ndarray:
    """Recording row shown in each video frame: the step nearest to ``t[0] + k / fps``, ``(K,)``."""
    t = np.asarray(t, float)
    if len(t) == 0:
        return np.zeros(0, dtype=int)
    n = int(np.floor((t[-1] - t[0]) * fps + 1e-9)) + 1
    want = t[0] + np.arange(n) / fps
    idx = np.clip(np.searchsorted(t, want), 0, len(t) - 1)
    prev = np.clip(idx - 1, 0, len(t) - 1)
    return np.where(np.abs(t[prev] - want) <= np.abs(t[idx] - want), prev, idx)


def write_video(path: str | Path, rec, model, fps: int = 30, size: tuple[int, int] = (640, 360),
                ball_radii: tuple[float, ...] = (), progress: bool = False) -> Path:
    """Render ``rec`` to an H.264 MP4 at ``path`` (written to a temporary file, then renamed).

    Args:
        rec: the :class:`~tracker.sim.recording.Recording`.
        model: its character model.
        fps: video frame rate.
        size: ``(width, height)`` pixels, both even.
        ball_radii: radius per recorded ball, m.

    Raises:
        TrackerError: the video extra is missing, or the recording has no steps.
    """
    require_video_extra()
    import imageio

    from tracker.sim.render import ReplayRenderer

    path = Path(path)
    if rec.n_steps == 0:
        raise TrackerError(f"{path}: the recording has no steps to render")
    steps = frame_steps(rec.t, fps)
    balls = rec.balls if rec.balls is not None and rec.balls.ndim == 3 and rec.balls.shape[1] else None
    radii = tuple(ball_radii) + (0.11,) * max(0, (balls.shape[1] if balls is not None else 0) - len(ball_radii))
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(steps), unit="frame", desc="video", leave=False)
    try:
        with ReplayRenderer(model, size=size, ball_radii=radii) as renderer:
            writer = imageio.get_writer(tmp, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                        pixelformat="yuv420p", macro_block_size=1, ffmpeg_log_level="error",
                                        output_params=["-preset", "veryfast"])
            try:
                for k in steps:
                    b = balls[k] if balls is not None else None
                    writer.append_data(renderer.frame(rec.q[k], rec.q_ref[k], b))
                    if bar is not None:
                        bar.update(1)
            finally:
                writer.close()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if bar is not None:
            bar.close()
    return path
