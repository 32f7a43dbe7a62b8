"""Result folders and paths given on the command line: one-line errors, and runs never mixed.

A folder *holds a run* when it has a file this tool writes into a result folder
(:data:`RUN_FILES`: ``config.yaml``, ``metrics.json``, ``recording.npz``,
``push.json``...). Writing a new run into it would leave the old run's files
beside the new ones (a stale ``video.mp4`` of another clip next to the new
report), so :func:`check_out` refuses it unless ``--force``; :func:`clear_run_files`
then removes exactly those files (and the temporaries of :mod:`tracker.atomic`),
nothing else: the user's own files, subfolders and whatever a symlink points to
are left alone (a symlink named like a result file is removed, not followed).
A folder holding only other files is written into as it is.

A folder may also hold a run that the same command continues (``optimize``'s
``checkpoint.pkl``): such a command names its resume files, and a folder holding
one is not refused.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from tracker.errors import TrackerError

#: Every file a command writes into a result folder (run/scenario, track, keyframes, push, optimize).
RUN_FILES = frozenset({
    # tracker run / scenario (tracker.experiments.runner), track --out
    "config.yaml", "metrics.json", "timing.json", "recording.npz", "baseline.npz", "report.md", "video.mp4",
    "joint_error.png", "gains.png", "joint_angles.png", "balls.png",
    # tracker keyframes (tracker.keyframes.results)
    "keyframes.yaml", "run.yaml", "keys.png", "joints.png",
    # tracker push (a push, a push sweep)
    "push.json", "com.png", "survival.csv", "largest.csv", "survival.png",
    # tracker optimize (tracker.sampling.optimize)
    "offsets.npz", "optimize.json", "optimize.md", "cost_per_iteration.png", "cost_per_segment.png",
    "checkpoint.pkl", "checkpoint.pkl.key",
})

# What tracker.atomic and the video writer leave when killed between writing and renaming:
# ``.NAME.XXXXXXXX[.SUFFIX]`` (mkstemp's 8 characters) and ``.video.tmp.mp4``.
_TEMPORARY = re.compile(r"\.(?P<name>[^/]+?)\.[A-Za-z0-9_]{8}(\.[A-Za-z0-9]+)?|\.video\.tmp\.mp4")


def _is_run_file(name: str) -> bool:
    if name in RUN_FILES:
        return True
    m = _TEMPORARY.fullmatch(name)
    return m is not None and (m.group("name") is None or m.group("name") in RUN_FILES)


def path_problem(exc: OSError) -> str:
    """Why a path cannot be used, in a few words (``name too long: a part is over 255 bytes``...)."""
    if exc.errno == errno.ENAMETOOLONG:
        return "name too long (each part of a path must be at most 255 bytes, the whole 4096)"
    if exc.errno in (errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", -1)):
        return f"{exc.strerror}: the disk is full or a file-size limit was reached"
    return exc.strerror or str(exc)


def check_path(path: str | os.PathLike, what: str) -> Path:
    """Refuse, in one line, a path the system cannot even look up (a part over 255 bytes, a loop...).

    A path that does not exist passes: whoever opens it says so. ``what`` names it (``--out``,
    ``the clip``). Returns ``Path(path)``.

    Raises:
        TrackerError: naming ``what``, the path and why.
    """
    p = Path(path)
    try:
        os.stat(p)
    except FileNotFoundError:
        pass
    except NotADirectoryError:
        pass
    except OSError as exc:
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
            raise TrackerError(f"{what} {_short(p)}: {path_problem(exc)}") from None
    except ValueError as exc:  # an embedded NUL byte
        raise TrackerError(f"{what} {_short(p)}: {exc}") from None
    return p


def holds_run(folder: Path) -> list[str]:
    """The names of :data:`RUN_FILES` in ``folder`` (the telling ones first; empty if none or no folder)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    first = ("config.yaml", "metrics.json", "recording.npz", "push.json", "offsets.npz")  # the telling ones first
    return sorted((n for n in names if n in RUN_FILES), key=lambda n: (n not in first, n))


def check_out(path: str | os.PathLike, force: bool, flag: str = "--force",
              resume_files: tuple[str, ...] = ()) -> Path:
    """Check the result folder ``path`` before anything runs; nothing is created or removed.

    Args:
        force: the command line's ``--force``: a folder holding another run will be cleared.
        flag: the option that clears it, as the command spells it (``push`` has ``--overwrite``).
        resume_files: files that mark a run this command continues; a folder with one is accepted.

    Raises:
        TrackerError: one line naming the folder: its name is too long, it is a file, or it holds
            another run (listing a few of its files) and ``force`` is not given.
    """
    folder = check_path(path, "--out")
    if folder.exists() and not folder.is_dir():
        raise TrackerError(f"--out {_short(folder)}: is a file, not a folder")
    found = holds_run(folder)
    if found and not force and not any((folder / name).exists() for name in resume_files):
        shown = ", ".join(found[:4]) + (", ..." if len(found) > 4 else "")
        raise TrackerError(f"--out {_short(folder)}: holds another run ({shown}); give another folder, or "
                           f"{flag} to remove that run's files first")
    return folder


def clear_run_files(folder: str | os.PathLike) -> list[str]:
    """Remove the run files (:data:`RUN_FILES` and their temporaries) from ``folder``; returns their names.

    Only entries directly in ``folder`` that are files or symlinks (removed, never followed);
    subfolders and any other file stay.
    """
    folder = Path(folder)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise TrackerError(f"--out {_short(folder)}: cannot read the folder ({path_problem(exc)})") from None
    for entry in entries:
        if not _is_run_file(entry.name) or entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.unlink(entry.path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise TrackerError(f"--out {_short(folder)}: cannot remove the earlier run's {entry.name} "
                               f"({path_problem(exc)})") from None
        removed.append(entry.name)
    return sorted(removed)


def make_out(path: str | os.PathLike) -> Path:
    """Create the result folder (and its parents); one line naming it if that cannot be done."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise TrackerError(f"--out {_short(folder)}: is a file, not a folder") from None
    except OSError as exc:
        raise TrackerError(f"cannot create the result folder {_short(folder)} ({path_problem(exc)})") from None
    return folder


def prepare_out(path: str | os.PathLike, force: bool, flag: str = "--force",
                resume_files: tuple[str, ...] = ()) -> Path:
    """:func:`check_out`, then create the folder and, with ``force``, clear the earlier run's files."""
    folder = check_out(path, force, flag, resume_files)
    make_out(folder)
    if force:
        clear_run_files(folder)
    return folder


def _short(path: Path) -> str:
    """A path for a one-line message: a very long one cut in the middle."""
    text = str(path)
    return text if len(text) <= 120 else f"{text[:60]}...{text[-50:]}"
