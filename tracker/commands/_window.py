"""The options of the commands that open a PyBullet window (``play``, ``replay``, a keyframe file's ``play``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tracker.commands._args import MAX_SPEED, MIN_SPEED, bounded_float, bounded_int

#: Names accepted by --press besides single characters.
KEY_NAMES = {"space": 32, "left": 65295, "right": 65296, "home": 65302, "esc": 27}


def parse_press(text: str) -> tuple[int, int]:
    """``FRAME:KEY`` (``40:b``, ``10:space``) -> (frame, PyBullet key code)."""
    frame, sep, key = text.partition(":")
    try:
        n = int(frame)
    except ValueError:
        n = -1
    code = KEY_NAMES.get(key.lower()) if len(key) > 1 else (ord(key) if key else None)
    if not sep or n < 0 or code is None:
        raise argparse.ArgumentTypeError(
            f"--press {text!r}: expected FRAME:KEY, e.g. 40:b or 10:space (keys: a character or "
            f"{', '.join(KEY_NAMES)})")
    return n, code


def add_window_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``play`` and ``replay``."""
    p.add_argument("--speed", type=bounded_float(MIN_SPEED, MAX_SPEED, "speed"), default=1.0,
                   help=f"playback speed, x real time ({MIN_SPEED:g} to {MAX_SPEED:g}; default: 1)")
    p.add_argument("--ghost", default="beside", choices=("beside", "overlay", "off"),
                   help="reference ghost beside the character (+1 m along Y), on top of it, or hidden "
                        "(default: beside; key g cycles)")
    p.add_argument("--frames", type=bounded_int(1, 1_000_000, "frames"), default=None, metavar="N",
                   help="run N frames (1 to 1000000) as fast as possible (one step each), then exit: the headless path")
    p.add_argument("--screenshot", default=None, metavar="OUT.png",
                   help="after --frames, save the window's 3D view here (and OUT.json: camera and pixel boxes)")
    p.add_argument("--grab-screen", action="store_true",
                   help="with --screenshot, capture the whole X screen instead (under xvfb-run: the window "
                        "with its panels and text)")
    p.add_argument("--shadows", action="store_true",
                   help="draw shadows (off by default: drawn without a GPU they halve the frame rate)")
    p.add_argument("--press", type=parse_press, action="append", default=[], metavar="FRAME:KEY",
                   help="press KEY at frame FRAME, as if typed (repeatable), e.g. --press 40:b")


def check_window_options(args: argparse.Namespace) -> None:
    from tracker.errors import TrackerError

    if not args.speed > 0:
        raise TrackerError(f"--speed must be positive, got {args.speed}")
    if args.frames is not None and args.frames < 1:
        raise TrackerError(f"--frames must be at least 1, got {args.frames}")
    if args.screenshot and args.frames is None:
        raise TrackerError("--screenshot needs --frames N (the window saves its image after N frames)")
    if args.screenshot and Path(args.screenshot).suffix.lower() != ".png":
        raise TrackerError(f"--screenshot {args.screenshot}: the image is written as PNG; name it .png")


def presses_by_frame(presses: list[tuple[int, int]]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for frame, code in presses:
        out.setdefault(frame, []).append(code)
    return out
