"""MP4 of a recording: the simulated character beside its reference (ghost), balls visible.

Frames come from :class:`tracker.sim.render.ReplayRenderer` (PyBullet's
TinyRenderer, offscreen); each gets the run time at its top left and a legend at
its bottom (the simulated character's colour on the left, where it stands, the
reference's on the right, the ball's between them) drawn with Pillow (a dependency
of matplotlib). They are encoded with ``imageio`` + ``imageio-ffmpeg``, the optional
``video`` extra (``pip install -e '.[video]'``).
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


def _font(size: int):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # a scalable font (Pillow >= 10.1 with FreeType)
    except (TypeError, AttributeError, OSError):
        return ImageFont.load_default()


def annotate(frame: np.ndarray, t: float, colours: dict[str, tuple[float, ...]]) -> np.ndarray:
    """``frame`` ``(H, W, 3)`` uint8 with the time ``t`` (s) at its top left and a legend at its bottom.

    Args:
        colours: label -> RGB(A) in [0, 1], in legend order: the first is drawn at the bottom left,
            the last at the bottom right, any others between them.

    Returns:
        A new array; ``frame`` is not modified.
    """
    from PIL import Image, ImageDraw

    h, w = frame.shape[:2]
    size = max(11, h // 22)
    font = _font(size)
    img = Image.fromarray(frame).convert("RGBA")
    layer = Image.new("RGBA", img.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    pad = max(2, size // 4)

    def label(x: float, y: int, text: str, rgb: tuple[float, ...] | None, anchor: str) -> None:
        sw = size if rgb is not None else 0
        width = draw.textlength(text, font=font) + sw + (pad if sw else 0)
        left = {"l": x, "m": x - width / 2, "r": x - width}[anchor]
        draw.rectangle([left - pad, y - pad, left + width + pad, y + size + pad], fill=(0, 0, 0, 140))
        if rgb is not None:
            draw.rectangle([left, y + 1, left + sw - 2, y + size - 1], fill=tuple(int(255 * c) for c in rgb[:3]) + (255,))
        draw.text((left + sw + (pad if sw else 0), y), text, font=font, fill=(255, 255, 255, 255), anchor="la")

    label(pad * 2, pad * 2, f"t = {t:6.2f} s", None, "l")
    items = list(colours.items())
    y = h - size - 3 * pad
    for k, (text, rgb) in enumerate(items):
        if k == 0:
            label(pad * 2, y, text, rgb, "l")
        elif k == len(items) - 1:
            label(w - pad * 2, y, text, rgb, "r")
        else:
            label(w * k / (len(items) - 1), y, text, rgb, "m")
    return np.asarray(Image.alpha_composite(img, layer).convert("RGB"))


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

    from tracker.sim.render import BALL_COLOUR, GHOST_COLOUR, SIM_COLOUR, ReplayRenderer

    path = Path(path)
    if rec.n_steps == 0:
        raise TrackerError(f"{path}: the recording has no steps to render")
    steps = frame_steps(rec.t, fps)
    balls = rec.balls if rec.balls is not None and rec.balls.ndim == 3 and rec.balls.shape[1] else None
    radii = tuple(ball_radii) + (0.11,) * max(0, (balls.shape[1] if balls is not None else 0) - len(ball_radii))
    colours = {"simulated": SIM_COLOUR, **({"ball": BALL_COLOUR} if balls is not None else {}),
               "reference (ghost)": GHOST_COLOUR}
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
                    writer.append_data(annotate(renderer.frame(rec.q[k], rec.q_ref[k], b), float(rec.t[k]), colours))
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
