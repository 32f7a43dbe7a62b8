"""Argument types shared by the commands: each checks its value at parse time (one-line error, exit 2).

Every number on the command line is read here, with :func:`tracker.numbers.number_from_text`
(``0.5``, ``1e-3``, ``1/60``; at most 64 characters, so no text makes the reading slow) and
checked against a range with both ends: :func:`bounded_float` and :func:`bounded_int` make the
type of one flag, the constants below are the shared limits, and each flag's ``--help`` says
its range.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from tracker.numbers import MAX_NUMBER_CHARS, number_from_text

#: The smallest and largest time step the commands accept, s (as the config's ``sim.dt``).
MIN_DT = 1e-5
MAX_DT = 0.1
#: The longest simulated or optimised stretch, s (as the config's ``sim.duration``).
MAX_DURATION = 3600.0
#: The latest point in a clip, s, and the largest file frame (as the config's ``clip.start``).
MAX_TIME = 86400.0
MAX_FILE_FRAME = 2 ** 31
#: The highest resampling rate, Hz (as the config's ``clip.fps``).
MAX_FPS = 10000.0
#: Playback speed factors, x real time.
MIN_SPEED = 0.01
MAX_SPEED = 100.0
#: Parallel workers (processes or Ray tasks).
MAX_WORKERS = 1024
#: Random seeds: 0 to 2^32 - 1.
MAX_SEED = 2 ** 32 - 1
#: Whole numbers of :func:`positive_int` and :func:`non_negative_int` (flags with a range of their own
#: use :func:`bounded_int`).
MAX_WHOLE = 10 ** 9


def _shown(text: str) -> str:
    """The text as given, quoted, cut to 24 characters (an error stays one short line)."""
    text = text.strip()
    return repr(text if len(text) <= 24 else text[:21] + "...")


def _number(text: str) -> float:
    """``text`` as a float (``1/60`` style fractions allowed; ``inf`` for a decimal past the float range,
    which every caller's range refuses)."""
    try:
        value = number_from_text(text)
    except ValueError:
        if len(text.strip()) > MAX_NUMBER_CHARS:
            raise argparse.ArgumentTypeError(f"expected a number of at most {MAX_NUMBER_CHARS} characters, "
                                             f"got {_shown(text)}") from None
        raise argparse.ArgumentTypeError(f"expected a number (or a fraction like 1/60), got {_shown(text)}") from None
    return value


def _g(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def range_text(lo: float, hi: float, unit: str = "", lo_open: bool = False) -> str:
    """The range in words, as errors and --help say it: ``positive and at most 1000``, ``>= 0 and <= 10 s``."""
    unit = f" {unit}" if unit else ""
    if lo == -math.inf:
        return f"at most {_g(hi)}{unit}"
    if lo_open:
        return (f"positive and at most {_g(hi)}{unit}" if lo == 0 else f"> {_g(lo)} and <= {_g(hi)}{unit}")
    return f">= {_g(lo)} and <= {_g(hi)}{unit}"


def bounded_float(lo: float, hi: float, what: str = "value", unit: str = "", *,
                  lo_open: bool = False) -> Callable[[str], float]:
    """The type of a number flag with the range ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``).

    Args:
        lo, hi: the range's ends; ``lo = -inf`` leaves the lower end to the command (a flag whose
            run refuses it with a message of its own), the upper end and finiteness are checked here.
        what: the quantity (the type's name; argparse's message names the flag).
        unit: shown after the range in the error, e.g. ``s``, ``Hz``.
    """

    def parse(text: str) -> float:
        value = _number(text)
        if not math.isfinite(value):  # -1e309 with lo = -inf too
            raise argparse.ArgumentTypeError(f"must be a finite number, {range_text(lo, hi, unit, lo_open)}, "
                                             f"got {_shown(text)}")
        if not ((lo < value) if lo_open else (lo <= value)) or not value <= hi:
            raise argparse.ArgumentTypeError(f"must be {range_text(lo, hi, unit, lo_open)}, got {_shown(text)}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


def bounded_int(lo: int, hi: int, what: str = "value") -> Callable[[str], int]:
    """The type of a whole-number flag with the range ``[lo, hi]``."""

    def parse(text: str) -> int:
        stripped = text.strip()
        if len(stripped) > MAX_NUMBER_CHARS:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {lo} and <= {hi}, got {_shown(text)}")
        try:
            value = int(stripped)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not a whole number") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be >= {lo} and <= {hi}, got {_shown(text)}")
        return value

    parse.__name__ = what.replace(" ", "_")
    return parse


def positive_float(text: str) -> float:
    """A finite number > 0 (``1/60`` style fractions allowed)."""
    value = _number(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {_shown(text)}")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {_shown(text)}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number >= 0."""
    value = _number(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {_shown(text)}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {_shown(text)}")
    return value


_POSITIVE_INT = bounded_int(1, MAX_WHOLE)
_NON_NEGATIVE_INT = bounded_int(0, MAX_WHOLE)


def positive_int(text: str) -> int:
    """A whole number from 1 to :data:`MAX_WHOLE`."""
    return _POSITIVE_INT(text)


def non_negative_int(text: str) -> int:
    """A whole number from 0 to :data:`MAX_WHOLE` (a seed, a count that may be zero)."""
    return _NON_NEGATIVE_INT(text)


def parse_dt(text: str) -> float:
    """A time step in seconds: ``0.0166``, ``1/60``; from :data:`MIN_DT` (1e-5) to :data:`MAX_DT` (0.1)."""
    value = _number(text)
    if not MIN_DT <= value <= MAX_DT:
        raise argparse.ArgumentTypeError(f"must be {range_text(MIN_DT, MAX_DT, 's')} (a time step, e.g. 1/60 or "
                                         f"1/30), got {_shown(text)}")
    return value


def dt_text(text: str) -> str:
    """A time step checked as :func:`parse_dt`, passed on as written (``sim.dt=1/30`` keeps its fraction)."""
    parse_dt(text)
    return text.strip()


def clip_or_file_time(text: str) -> tuple[str, float]:
    """A point in time: ``1.25`` or ``clip:1.25`` (clip time, s), ``file:1.60`` (seconds in the clip
    file) or ``file_frame:96`` (a 0-based frame of the file); ``(base, value)``, resolved to clip
    time by whoever has the clip (:meth:`tracker.retarget.timing.ClipTiming.resolve`). Seconds from
    0 to :data:`MAX_TIME`, frames from 0 to :data:`MAX_FILE_FRAME` (as in a config)."""
    base, sep, number = text.partition(":")
    base = base.strip() if sep else "clip"
    number = number if sep else text
    shown = _shown(text)
    if base not in ("clip", "file", "file_frame"):
        raise argparse.ArgumentTypeError(f"{shown}: expected seconds of clip time, file:SECONDS (file time) or "
                                         "file_frame:N (a frame of the file)")
    if base == "file_frame":
        try:
            frame = int(number.strip()) if len(number.strip()) <= MAX_NUMBER_CHARS else None
        except ValueError:
            frame = None
        if frame is None:
            raise argparse.ArgumentTypeError(f"{shown}: file_frame needs a whole number") from None
        if not 0 <= frame <= MAX_FILE_FRAME:
            raise argparse.ArgumentTypeError(f"{shown}: file_frame must be >= 0 and <= {MAX_FILE_FRAME}")
        return base, frame
    value = _number(number)
    if not 0 <= value <= MAX_TIME:
        raise argparse.ArgumentTypeError(f"{shown}: must be {range_text(0, MAX_TIME, 's')}")
    return base, value


def times_list(text: str) -> tuple[tuple[str, float], ...]:
    """Comma-separated points in time, each as :func:`clip_or_file_time` (``0.5,file_frame:96``)."""
    parts = [part for part in text.split(",")]
    if not text.strip() or any(not part.strip() for part in parts):
        raise argparse.ArgumentTypeError(f"{_shown(text)}: expected comma-separated times like 0.5,1.2,file_frame:96")
    if len(parts) > 24:
        raise argparse.ArgumentTypeError(f"{_shown(text)}: at most 24 times (one panel each)")
    return tuple(clip_or_file_time(part) for part in parts)
