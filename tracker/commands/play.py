"""``tracker play CONFIG.yaml | CLIP``: watch a run live in PyBullet's window, poke it and tune its gains."""

from __future__ import annotations

import argparse
from pathlib import Path

from tracker.commands._args import parse_dt
from tracker.commands._window import add_window_options, check_window_options, presses_by_frame

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
    from tracker.quiet import quiet_stdio
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
