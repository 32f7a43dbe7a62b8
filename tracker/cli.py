"""Command-line entry point: ``tracker <command> ...``.

Each command lives in its own module under :mod:`tracker.commands` and
provides ``add_parser(subparsers)`` and ``run(args) -> int``. Modules keep
heavy imports inside ``run`` so that ``tracker --help`` stays fast.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from tracker import __version__
from tracker.errors import TrackerError

#: Exit statuses (README, ``tracker --help``).
EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_DIVERGED = 3
EXIT_FELL = 4
EXIT_STATUSES = ("exit status: 0 ok; 1 internal error (a bug: please report it); 2 bad input (file, config, "
                 "command-line value); 3 the simulation diverged (what ran is kept); 4 a free-root character fell "
                 "(FELL at t = ..., everything kept); 5 a check found the docs differ from the code "
                 "(tracker reproduce --check); 130 interrupted")

# name -> module under tracker.commands, in the order shown by --help.
COMMANDS: dict[str, str] = {
    "inspect": "inspect",
    "model": "model",
    "retarget": "retarget",
    "track": "track",
    "scenario": "scenario",
    "run": "run",
    "sweep": "sweep",
    "play": "play",
    "replay": "replay",
    "report": "report",
    "reproduce": "reproduce",
    "keyframes": "keyframes",
    "push": "push",
    "perturb": "perturb",
    "optimize": "optimize",
}


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``error: tracker track: --start: must be >= 0, got -1``, exit 2."""

    def error(self, message: str):  # noqa: D102
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {' '.join(message.split())} (see {self.prog} --help)\n")

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse asks shutil for the terminal width, and importing shutil (with bz2 and lzma)
        # costs a few milliseconds of every command's start-up; the same width, without it.
        return self.formatter_class(prog=self.prog, width=_terminal_columns() - 2)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS if positive, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``tracker`` parser with every command, or with just ``only`` (a name in :data:`COMMANDS`).

    ``main`` builds just the command it runs, so a command pays for importing no other
    command's module (``tracker inspect`` starts in tens of milliseconds).
    """
    parser = Parser(
        prog="tracker",
        description="Physics-based motion-capture tracking with stable-PD servos (PyBullet).",
        epilog=EXIT_STATUSES,
    )
    parser.add_argument("--version", action="version", version=f"tracker {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in [COMMANDS[only]] if only in COMMANDS else COMMANDS.values():
        try:
            module = importlib.import_module(f"tracker.commands.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tracker.commands.{module_name}":
                continue  # command not built yet
            raise
        module.add_parser(sub)
    for p in sub.choices.values():
        if not p.epilog:
            p.epilog = EXIT_STATUSES
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(argv)
    code = _run(args)
    if argv is None:
        # Called as the program (the console script, python -m tracker), so the process ends now:
        # its objects skip the last cyclic garbage collection at exit (5 ms after inspect's read).
        gc.freeze()
    return code


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; errors become one line on stderr and the exit status."""
    try:
        return int(args.func(args) or 0)
    except TrackerError as exc:
        print("error: " + " ".join(str(exc).split()), file=sys.stderr)  # always one line
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not bad input: short message unless debugging
        if os.environ.get("TRACKER_DEBUG"):
            raise
        print(
            f"error: internal error ({type(exc).__name__}: {' '.join(str(exc).split())}); "
            "set TRACKER_DEBUG=1 for the traceback and please report it",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
