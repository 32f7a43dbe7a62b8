"""``tracker play CONFIG.yaml | CLIP``: watch a run live in PyBullet's window, poke it and tune its gains."""

from __future__ import annotations

import argparse
from pathlib import Path

from tracker.commands._args import MAX_SPEED, MIN_SPEED, bounded_float, bounded_int, parse_dt

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


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="watch a config or clip live in PyBullet's window: reference ghost, balls, gain sliders",
        description="Open PyBullet's window on a live run: the simulated character, the reference as a "
                    "translucent ghost, the balls and the ground, with a camera that follows. The run loops "
                    "the clip in real time (or --speed). Keys (shown on screen): space pause, n single step, "
                    "r restart, [ ] speed, b launch a ball, s gain schedule on/off, g ghost, h help, q quit; "
                    "the panel has the same as buttons and sliders for speed, k_t, k_r, t_e, t_f and the "
                    "gain scale, which act from the next step. Closing the window ends the program.",
    )
    p.add_argument("source", help="experiment config (YAML), keyframe file (YAML) or clip (BVH, reference .npz, "
                                  "DeepMimic motion)")
    p.add_argument("--model", default=None, help="character model (default: the config's, or humanoid)")
    p.add_argument("--dt", type=parse_dt, default=None, help="physics/control time step, 1e-5 to 0.1 s, e.g. 1/60")
    p.add_argument("--servo", choices=("spd", "pd", "timed"), default="spd",
                   help="a keyframe file's servos: two cross-faded SPD (default) or PD servos (Tan 2011), or "
                        "timed PD (Allen 2007; the ghost shows the next key and the status the time left to it)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, as in 'tracker run' (repeatable)")
    add_window_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.sim.quiet import quiet_stdio
    from tracker.viewer.playback import LivePlayer, build_session, live_config
    from tracker.viewer.window import open_window_world

    check_window_options(args)
    from tracker.keyframes.file import is_keyframe_file
    from tracker.outdir import check_path

    check_path(args.source, "the source")
    if args.screenshot:
        check_path(args.screenshot, "--screenshot")

    if is_keyframe_file(args.source):  # a keyframe file (tracker keyframes) rather than an experiment
        from tracker.commands.keyframes import play

        return play(args)
    if args.servo != "spd":
        from tracker.errors import ConfigError

        raise ConfigError("--servo applies to keyframe files; for a config or clip use "
                          "--set controller.name=NAME")
    overrides = list(args.overrides) + ([f"sim.dt={args.dt!r}"] if args.dt is not None else [])
    cfg = live_config(args.source, args.model, overrides)
    with quiet_stdio():  # PyBullet's GUI thread prints its OpenGL set-up and shut-down
        window = open_window_world(cfg.sim.dt)  # before the simulation's client (see Stage)
        try:
            session = build_session(cfg)
            try:
                player = LivePlayer(session, ghost=args.ghost, speed=args.speed, world=window, shadows=args.shadows,
                                    title=f"tracker play {Path(args.source).name}  ({cfg.model}, "
                                          f"{cfg.controller.name}, dt {cfg.sim.dt:.4g} s)")
                stats = player.run(args.frames, presses_by_frame(args.press), args.screenshot, args.grab_screen)
            finally:
                session.sim.close()
        finally:
            window.close()
    if args.frames is not None:
        print(f"played {stats.frames} frames, {stats.steps} steps ({stats.steps * stats.dt:.2f} s of clip) in "
              f"{stats.wall_s:.2f} s: {stats.realtime_factor:.1f}x real time in the window "
              f"(stepping alone {stats.step_realtime_factor:.1f}x)")
        if args.screenshot and not stats.closed:
            print(f"wrote {args.screenshot}")
    return 0
