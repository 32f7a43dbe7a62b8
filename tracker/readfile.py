"""Checked reading of the files a user names: type, size, zip structure, JSON depth, values.

Every reader of the project (recordings, references, offset tracks, model files, joint maps,
configs, sweeps) calls these helpers *before* it allocates or loops, so that a hostile file
ends in one line naming the file, never a hang, a crash or unbounded memory:

- :func:`check_regular_file`: ``os.stat`` before any ``open``; a named pipe (which would block
  the ``open`` forever), a device (``/dev/zero`` never ends), a socket or a folder is refused
  by its type, and so are a missing file, a name too long for the system and a size over the
  reader's bound;
- :func:`read_bytes_bounded`: the checked file's bytes, opened without blocking and read no
  further than the bound (a file that grew after the check is refused, not read on);
- :func:`load_npz_checked`: the arrays of an ``.npz``, each ``.npy`` header read and checked
  (shape, dtype, bytes) before the array is allocated, so a header claiming 10^12 values costs
  nothing; zip, zlib and format errors become the caller's one-line error;
- :func:`load_json_bounded`: JSON text with its nesting depth counted before parsing (Python's
  parser recurses: a thousand ``[`` end in a RecursionError);
- :class:`NpzFields`: the per-field checks a reader of an ``.npz`` makes (kind, shape with named
  dimensions, finite values, ranges, text, JSON), each failing with ``path: field: problem``.

Example::

    from tracker.errors import SimulationError
    from tracker.readfile import NpzFields, load_npz_checked

    arrays = load_npz_checked(path, "recording", max_bytes=1 << 29, max_elements=1 << 26,
                              error=SimulationError)
    f = NpzFields(arrays, path, "recording", SimulationError)
    dt = f.scalar("dt", lo=0.0, lo_open=True, hi=1.0)
    q = f.array("q", ("T", 55))          # binds T: every later "T" must match
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from tracker.errors import TrackerError

#: Deepest JSON nesting a reader accepts (the program's own JSON is a few levels deep).
MAX_JSON_DEPTH = 64
#: Most members an ``.npz`` may hold (the program's own have at most 20).
MAX_NPZ_MEMBERS = 64
#: Longest ``.npy`` header read (numpy's own default).
MAX_NPY_HEADER = 10_000
#: Longest path shown whole in a message; longer ones are cut in the middle.
SHOW_PATH_CHARS = 512

_ERRORS_READING = (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError, NotImplementedError,
                   tokenize.TokenError, SyntaxError,  # numpy parses an .npy header's dict with the tokenizer
                   RuntimeError, OverflowError, MemoryError, TypeError, IndexError)
_KIND_NAMES = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFCHR: "a character device",
               stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def show_path(path: str | Path) -> str:
    """``path`` for a message: whole when short, else its start and end around ``...``."""
    text = str(path)
    if len(text) <= SHOW_PATH_CHARS:
        return text
    half = SHOW_PATH_CHARS // 2 - 2
    return f"{text[:half]}...{text[-half:]}"


def size_text(n: int) -> str:
    """Bytes as ``512 MiB`` / ``64 KiB`` / ``100 bytes`` (exact: a unit only when it divides)."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def check_regular_file(path: str | Path, what: str, max_bytes: int,
                       error: type[TrackerError] = TrackerError) -> int:
    """Refuse anything but an existing regular file of at most ``max_bytes``, without opening it.

    Args:
        path: the file.
        what: what kind of file it is, for messages (``recording``, ``joint map``...).
        max_bytes: the largest size accepted.
        error: the exception type raised.

    Returns:
        The file's size, bytes.

    Raises:
        error: one line naming the path: missing, a FIFO/device/socket/folder, a name too long,
            unreadable, or larger than ``max_bytes``.
    """
    shown = show_path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{shown}: no such {what} file") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise error(f"{shown}: cannot read {what} file (the name is too long for the system)") from None
        if exc.errno == errno.ENOTDIR:
            raise error(f"{shown}: no such {what} file (a part of the path is not a folder)") from None
        raise error(f"{shown}: cannot read {what} file ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL byte in the name
        raise error(f"{shown!r}: cannot read {what} file ({exc})") from None
    kind = stat.S_IFMT(st.st_mode)
    if kind != stat.S_IFREG:
        name = _KIND_NAMES.get(kind, "not a regular file")
        raise error(f"{shown}: is {name}, not {_a(what)} file")
    if st.st_size > max_bytes:
        raise error(f"{shown}: the {what} file is larger than the {size_text(max_bytes)} limit for {what} files")
    return int(st.st_size)


def _open_checked(path: str | Path, what: str, max_bytes: int, error: type[TrackerError]) -> int:
    """A file descriptor of the checked regular file, opened without blocking and checked again
    (the path may have been replaced by a FIFO between the stat and the open)."""
    check_regular_file(path, what, max_bytes, error)
    shown = show_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise error(f"{shown}: cannot read {what} file ({exc.strerror or exc})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
        os.close(fd)
        raise error(f"{shown}: the {what} file changed while it was being opened")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


def read_bytes_bounded(path: str | Path, what: str, max_bytes: int,
                       error: type[TrackerError] = TrackerError) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (:func:`check_regular_file` first).

    Raises:
        error: as :func:`check_regular_file`, or the file grew past ``max_bytes`` while read.
    """
    fd = _open_checked(path, what, max_bytes, error)
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{show_path(path)}: cannot read {what} file ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise error(f"{show_path(path)}: the {what} file is larger than the {size_text(max_bytes)} limit "
                    f"for {what} files")
    return data


def read_text_bounded(path: str | Path, what: str, max_bytes: int,
                      error: type[TrackerError] = TrackerError) -> str:
    """:func:`read_bytes_bounded` decoded as UTF-8 (bad bytes: one line naming the line)."""
    data = read_bytes_bounded(path, what, max_bytes, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{show_path(path)}:{line}: cannot read {what} file (bytes that are not UTF-8 text)") from None


# -- .npz ------------------------------------------------------------------------------------


def load_npz_checked(path: str | Path, what: str, max_bytes: int, max_elements: int,
                     error: type[TrackerError] = TrackerError) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file, every header checked before its array is read.

    Each member must be a ``.npy`` array of plain numbers, booleans or text (no objects, no
    pickles, no structured dtypes) whose header agrees with the member's size; all arrays
    together may hold at most ``max_elements`` values of 8 bytes (text: its bytes / 8).

    Args:
        path: the file.
        what: what kind of file it is, for messages.
        max_bytes: the largest file size accepted.
        max_elements: the most 8-byte values all arrays may hold together.
        error: the exception type raised.

    Returns:
        ``{name: array}`` (names without ``.npy``).

    Raises:
        error: one line naming the file: not a file, too large, not a zip, a corrupt or
            truncated member, an unsupported array, or more values than allowed.
    """
    shown = show_path(path)
    fd = _open_checked(path, what, max_bytes, error)
    budget = int(max_elements) * 8
    out: dict[str, np.ndarray] = {}
    member = ""
    try:
        with os.fdopen(fd, "rb") as fh:
            _check_zip_directory(fh, what)
            with zipfile.ZipFile(fh) as zf:
                for info in zf.infolist():
                    member = info.filename
                    budget -= _check_member(zf, info, out)
                    if budget < 0:
                        raise _Bad(f"array {member[:-4]!r} takes the file past {max_elements:,} values, "
                                   f"the limit for {what} files")
                    with zf.open(info) as f:
                        out[member[:-4]] = np.lib.format.read_array(f, allow_pickle=False,
                                                                    max_header_size=MAX_NPY_HEADER)
    except _Bad as exc:
        raise error(f"{shown}: not {_a(what)} file ({exc})") from None
    except _ERRORS_READING as exc:
        where = f", array {member[:-4]!r}" if member else ""
        text = " ".join(str(exc).split())[:160]
        raise error(f"{shown}: not {_a(what)} file{where} ({type(exc).__name__}: {text})") from None
    return out


def _check_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, seen: dict) -> int:
    """The data bytes of zip member ``info``, from its ``.npy`` header, which must agree with the
    member's size (a header claiming 10^12 values in a few bytes is refused here, unallocated)."""
    name = info.filename
    if not name.endswith(".npy") or name[:-4] in seen:
        raise _Bad(f"entry {name!r} is not a numpy array (.npy) or is given twice")
    with zf.open(info) as f:
        try:
            shape, _dtype, data_bytes = _npy_header(f)
        except _Bad as exc:
            raise _Bad(f"array {name[:-4]!r}: {exc}") from None
        header_bytes = f.tell()
    if header_bytes + data_bytes != info.file_size:
        raise _Bad(f"array {name[:-4]!r} of shape {shape} claims {data_bytes:,} bytes of data in "
                   f"{max(info.file_size - header_bytes, 0):,} (truncated or corrupt)")
    return data_bytes


def _check_zip_directory(fh, what: str) -> None:
    """Refuse a zip whose end record announces more than :data:`MAX_NPZ_MEMBERS` entries, before
    ``ZipFile`` builds an object for each (a directory of millions of entries)."""
    end_record = getattr(zipfile, "_EndRecData", None)  # private, stable since Python 2; skipped if gone
    if end_record is None:
        return
    end = end_record(fh)
    if end is None:
        raise zipfile.BadZipFile("File is not a zip file")
    entries = end[zipfile._ECD_ENTRIES_TOTAL]
    if entries > MAX_NPZ_MEMBERS or end[zipfile._ECD_SIZE] > MAX_NPZ_MEMBERS * 1024:
        raise _Bad(f"{entries:,} entries, more than the {MAX_NPZ_MEMBERS} {_a(what)} file may have")
    fh.seek(0)


def _a(what: str) -> str:
    """``what`` with its indefinite article: ``a recording``, ``an offset-track``."""
    return f"{'an' if what[:1].lower() in 'aeiou' else 'a'} {what}"


class _Bad(Exception):
    """A problem found in an ``.npz`` (the message without the file)."""


def _npy_header(f) -> tuple[tuple[int, ...], np.dtype, int]:
    """Shape, dtype and data bytes of the ``.npy`` stream ``f``, read from its header alone."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, _fortran, dtype = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_NPY_HEADER)
    elif version == (2, 0):
        shape, _fortran, dtype = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_NPY_HEADER)
    else:
        raise _Bad(f".npy format version {version[0]}.{version[1]} (1.0 and 2.0 are read)")
    if dtype.hasobject or dtype.names is not None or dtype.subdtype is not None or dtype.kind not in "biufUS":
        raise _Bad(f"an array of {dtype} (numbers, booleans or text are read)")
    if len(shape) > 8 or any(not isinstance(n, int) or n < 0 for n in shape):
        raise _Bad(f"an array of shape {shape}")
    count = 1
    for n in shape:
        count *= n  # Python ints: a claimed 10**12 x 10**12 does not overflow
    return tuple(shape), dtype, count * dtype.itemsize


# -- JSON ------------------------------------------------------------------------------------

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(text: str) -> int:
    """Deepest bracket nesting of JSON ``text`` (brackets inside strings not counted), without recursion."""
    bare = _JSON_STRING.sub('""', text).encode("utf-8", "replace")
    b = np.frombuffer(bare, dtype=np.uint8)
    step = ((b == ord("[")) | (b == ord("{"))).astype(np.int64) - ((b == ord("]")) | (b == ord("}")))
    return int(np.cumsum(step).max(initial=0))


def load_json_bounded(text: str, what: str, max_depth: int = MAX_JSON_DEPTH,
                      error: type[TrackerError] = TrackerError) -> Any:
    """Parse JSON ``text`` nested at most ``max_depth`` deep.

    Args:
        text: the JSON text.
        what: what it is, for messages (``path: meta``).

    Raises:
        error: ``WHAT is not JSON text (...)`` or ``WHAT is JSON nested N levels deep...``.
    """
    import json

    depth = json_depth(text)
    if depth > max_depth:
        raise error(f"{what} is JSON nested {depth} levels deep, more than {max_depth}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise error(f"{what} is not JSON text ({' '.join(str(exc).split())[:120]})") from None


# -- values ----------------------------------------------------------------------------------


def first_nonfinite(a: np.ndarray) -> tuple[int, ...] | None:
    """Index of the first NaN or infinite value of numeric ``a``, or None."""
    bad = ~np.isfinite(a)
    if not bad.any():
        return None
    return tuple(int(i) for i in np.argwhere(bad)[0])


class NpzFields:
    """Checked access to the arrays of a loaded ``.npz`` (:func:`load_npz_checked`).

    Every failure is ``error("path: field: problem")``. Shapes name their dimensions: an entry
    that is a string (``"T"``) is bound by the first array that has it and must agree in every
    later one; ``None`` matches any length.
    """

    def __init__(self, arrays: dict[str, np.ndarray], path: str | Path, what: str,
                 error: type[TrackerError] = TrackerError) -> None:
        self.arrays = arrays
        self.path = show_path(path)
        self.what = what
        self.error = error
        self.dims: dict[str, int] = {}

    def fail(self, key: str, message: str) -> TrackerError:
        return self.error(f"{self.path}: {key}: {message}" if key else f"{self.path}: {message}")

    def has(self, key: str) -> bool:
        return key in self.arrays

    def get(self, key: str) -> np.ndarray:
        if key not in self.arrays:
            raise self.fail("", f"not {_a(self.what)} file: it has no {key!r}")
        return self.arrays[key]

    def array(self, key: str, shape: tuple, kinds: str = "iuf", finite: bool = True,
              lo: float | None = None, hi: float | None = None) -> np.ndarray:
        """Array ``key`` of ``shape`` (named dimensions, see the class), dtype kind in ``kinds``,
        all values finite when ``finite``, within ``[lo, hi]`` when given (as float for numbers)."""
        a = self.get(key)
        if a.dtype.kind not in kinds:
            raise self.fail(key, f"expected {_kinds_text(kinds)}, got an array of {a.dtype}")
        want = self._shape(a, shape)
        if a.ndim != len(want) or any(w is not None and w != n for w, n in zip(want, a.shape)):
            text = ", ".join("any" if w is None else str(w) for w in want)
            raise self.fail(key, f"has shape {a.shape}, expected ({text}{',' if len(want) == 1 else ''})")
        if a.dtype.kind in "iuf":
            x = a.astype(float, copy=False)
            if finite:
                bad = first_nonfinite(x)
                if bad is not None:
                    raise self.fail(key, f"value {x[bad]} at index {list(bad)} is not finite")
            if lo is not None and (x < lo).any():
                i = tuple(int(j) for j in np.argwhere(x < lo)[0])
                raise self.fail(key, f"value {x[i]:g} at index {list(i)} is below {lo:g}")
            if hi is not None and (x > hi).any():
                i = tuple(int(j) for j in np.argwhere(x > hi)[0])
                raise self.fail(key, f"value {x[i]:g} at index {list(i)} is above {hi:g}")
        return a

    def _shape(self, a: np.ndarray, shape: tuple) -> tuple:
        """``shape`` with named dimensions bound (first use) or replaced by their length."""
        want = []
        for i, d in enumerate(shape):
            if isinstance(d, str):
                if d not in self.dims and a.ndim == len(shape):
                    self.dims[d] = int(a.shape[i])
                want.append(self.dims.get(d))
            else:
                want.append(d)
        return tuple(want)

    def scalar(self, key: str, lo: float | None = None, hi: float | None = None, lo_open: bool = False) -> float:
        """A finite number stored as a 0-d array, in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``)."""
        a = self.get(key)
        if a.dtype.kind not in "iuf" or a.ndim != 0:
            raise self.fail(key, f"expected one number, got an array of {a.dtype} with shape {a.shape}")
        x = float(a.reshape(()))
        if not np.isfinite(x):
            raise self.fail(key, f"expected a finite number, got {x}")
        if lo is not None and (x < lo or (lo_open and x == lo)):
            raise self.fail(key, f"must be {'>' if lo_open else '>='} {lo:g}, got {x:g}")
        if hi is not None and x > hi:
            raise self.fail(key, f"must be <= {hi:g}, got {x:g}")
        return x

    def text(self, key: str, default: str | None = None, max_chars: int = 1 << 20) -> str:
        """A text field (a 0-d string array), at most ``max_chars`` long."""
        if key not in self.arrays and default is not None:
            return default
        a = self.get(key)
        if a.dtype.kind != "U" or a.ndim != 0:
            raise self.fail(key, f"expected text, got an array of {a.dtype} with shape {a.shape}")
        s = str(a)
        if len(s) > max_chars:
            raise self.fail(key, f"text of {len(s):,} characters, more than {max_chars:,}")
        return s

    def names(self, key: str, dim: str | None = None, max_chars: int = 256) -> tuple[str, ...]:
        """A 1-d array of non-empty names (``dim``: its named length)."""
        a = self.array(key, (dim,) if dim else (None,), kinds="U")
        out = tuple(str(x) for x in a.tolist())
        for i, s in enumerate(out):
            if not s or len(s) > max_chars:
                raise self.fail(f"{key}[{i}]", f"expected a name of 1 to {max_chars} characters, got {s[:40]!r}")
        return out

    def json(self, key: str, expect: type | None = None, default: Any = None,
             max_depth: int = MAX_JSON_DEPTH, max_chars: int = 1 << 20) -> Any:
        """A JSON text field of at most ``max_chars`` characters, parsed (nesting bounded), of type ``expect``
        when given."""
        if key not in self.arrays and default is not None:
            return default
        value = load_json_bounded(self.text(key, max_chars=max_chars), f"{self.path}: {key}", max_depth, self.error)
        if expect is not None and not isinstance(value, expect):
            raise self.fail(key, f"expected a JSON {_json_name(expect)}, got {type(value).__name__}")
        return value


def _kinds_text(kinds: str) -> str:
    names = {"b": "booleans", "i": "numbers", "u": "numbers", "f": "numbers", "U": "text"}
    return " or ".join(dict.fromkeys(names[k] for k in kinds))


def _json_name(t: type) -> str:
    return {dict: "object (mapping)", list: "array (list)", str: "string"}.get(t, t.__name__)
