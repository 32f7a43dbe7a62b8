"""Argument types shared by the commands: each checks its value at parse time (one-line error, exit 2)."""

from __future__ import annotations

import argparse
import math
from fractions import Fraction


def _number(text: str, what: str) -> float:
    try:
        value = float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{what} must be finite, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0 (``1/60`` style fractions allowed)."""
    value = _number(text, "value")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number >= 0."""
    value = _number(text, "value")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _whole(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be >= {least}, got {text}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    return _whole(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (a seed, a count that may be zero)."""
    return _whole(text, 0)


#: The largest time step the commands accept, s (as the config's ``sim.dt``).
MAX_DT = 0.1


def parse_dt(text: str) -> float:
    """A time step in seconds: ``0.0166``, ``1/60``; positive and at most 0.1 s."""
    try:
        value = float(Fraction(text.strip()))
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"time step {text!r} is not a number or fraction like 1/60") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"time step must be positive, got {text}")
    if value > MAX_DT:
        raise argparse.ArgumentTypeError(f"time step {text} s is over {MAX_DT} s; use e.g. 1/30 or 1/60")
    return value


def clip_or_file_time(text: str) -> tuple[str, float]:
    """A point in time: ``1.25`` or ``clip:1.25`` (clip time, s), ``file:1.60`` (seconds in the clip
    file) or ``file_frame:96`` (a 0-based frame of the file); ``(base, value)``, resolved to clip
    time by whoever has the clip (:meth:`tracker.retarget.timing.ClipTiming.resolve`)."""
    base, sep, number = text.partition(":")
    base = base.strip() if sep else "clip"
    number = number if sep else text
    if base not in ("clip", "file", "file_frame"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds of clip time, file:SECONDS (file time) or "
                                         "file_frame:N (a frame of the file)")
    if base == "file_frame":
        try:
            frame = int(number.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: file_frame needs a whole number") from None
        if frame < 0:
            raise argparse.ArgumentTypeError(f"{text!r}: file_frame must be >= 0")
        return base, frame
    value = _number(number, "time")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be >= 0")
    return base, value


def times_list(text: str) -> tuple[tuple[str, float], ...]:
    """Comma-separated points in time, each as :func:`clip_or_file_time` (``0.5,file_frame:96``)."""
    parts = [part for part in text.split(",")]
    if not text.strip() or any(not part.strip() for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated times like 0.5,1.2,file_frame:96")
    if len(parts) > 24:
        raise argparse.ArgumentTypeError(f"{text!r}: at most 24 times (one panel each)")
    return tuple(clip_or_file_time(part) for part in parts)
