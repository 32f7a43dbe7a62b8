"""``tracker replay RESULT_DIR``: play a saved run in the playback window, with a time slider to scrub."""

from __future__ import annotations

import argparse
from pathlib import Path

from tracker.commands._window import add_window_options, check_window_options, presses_by_frame


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a saved run (result folder or recording.npz) in PyBullet's window, with a time slider",
        description="Play a saved recording without simulating again: the simulated character, the reference "
                    "ghost and the balls, with the camera following. The 'time' slider scrubs; keys: space "
                    "pause, left/right one frame, r restart, [ ] speed, g ghost, h help, q quit. Closing the "
                    "window ends the program.",
    )
    p.add_argument("result", help="result folder (from 'tracker run' or 'tracker track --out') or a recording .npz")
    p.add_argument("--model", default=None, help="character model (default: the one the recording names)")
    add_window_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tracker.quiet import quiet_stdio
    from tracker.sim.recording import Recording
    from tracker.viewer.replay import ReplayPlayer, ReplaySession, ball_looks, find_recording

    import zipfile

    from tracker.errors import TrackerError
    from tracker.viewer.window import require_display

    check_window_options(args)
    try:
        rec_path, config = find_recording(args.result)
    except OSError as exc:  # a name too long for the system...
        raise TrackerError(f"{args.result}: cannot read ({exc.strerror or exc})") from None
    try:
        rec = Recording.load(rec_path)
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        raise TrackerError(f"{rec_path}: not a recording from 'tracker run' or 'tracker track --out' "
                           f"({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    rec = rec.finite_steps()  # a diverged run's last step may hold NaN: the window shows the steps before it
    if rec.n_steps == 0:
        why = f"the run {rec.status}" + (f": {rec.message}" if rec.message else "")
        raise TrackerError(f"{rec_path}: no steps to replay ({why})")
    model = args.model or rec.meta.get("model") or "humanoid"
    n_balls = 0 if rec.balls is None else int(rec.balls.shape[1])
    session = ReplaySession(rec)
    looks = ball_looks(config, n_balls)
    require_display()
    with quiet_stdio():  # PyBullet's GUI thread prints its OpenGL set-up and shut-down
        player = ReplayPlayer(session, model, looks, ghost=args.ghost, speed=args.speed, shadows=args.shadows,
                              title=f"tracker replay {Path(args.result).name}  ({model}, {rec.n_steps} steps, "
                                    f"dt {rec.dt:.4g} s)")
        try:
            stats = player.run(args.frames, presses_by_frame(args.press), args.screenshot, args.grab_screen)
        finally:
            player.close()
    if args.frames is not None and args.screenshot and not stats.closed:
        print(f"wrote {args.screenshot}")
    return 0
