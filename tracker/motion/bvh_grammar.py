"""The BVH grammar: bytes to a checked HIERARCHY and the frame lines' tokens, without numpy.

Both readers use it: :func:`tracker.motion.bvh.read_bvh` (numpy, the whole clip as a
:class:`~tracker.motion.motion.Motion`) and :mod:`tracker.motion.bvh_facts` (pure Python, what
``tracker inspect`` prints, so that the command does not pay for importing numpy and scipy).
Every problem raises :class:`~tracker.errors.BVHError` naming the file and line; the checks and
their messages live only here, so the two readers accept and reject the same files with the
same words. Numbers are Python's ``float()`` (numpy parses strings the same way).
"""

from __future__ import annotations

import math
import re
from tracker.errors import BVHError
from tracker.motion import unit_names

# typing is not imported at run time: `tracker inspect` loads only what it runs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import TypeVar

    T = TypeVar("T")

#: Valid channel names (matched case-insensitively, stored in this spelling).
CHANNELS: tuple[str, ...] = (
    "Xposition",
    "Yposition",
    "Zposition",
    "Xrotation",
    "Yrotation",
    "Zrotation",
)
_CANONICAL = {c.lower(): c for c in CHANNELS}
_FRAMES_RE = re.compile(r"frames:\s*(\S*)\s*$", re.IGNORECASE)

#: Bounds on what a file may ask for, checked before anything is allocated.
MAX_FILE_BYTES = 1 << 30  # 1 GiB of text: about 4 hours of a 60-joint skeleton at 120 fps
MAX_FRAMES = 100_000_000
MAX_JOINTS = 500  # a full-body rig with fingers and a face has a few hundred
#: Frame Time range, s: 1 MHz to one frame per minute.
MIN_FRAME_TIME = 1e-6
MAX_FRAME_TIME = 60.0
#: Largest magnitude of any number (OFFSET, position or angle), in file units or degrees.
MAX_VALUE = 1e9
_FRAME_TIME_RE = re.compile(r"frame\s+time:\s*(\S*)\s*$", re.IGNORECASE)


class Joint:
    """One ROOT/JOINT of the HIERARCHY, in file units."""

    __slots__ = ("name", "parent", "line", "offset", "channels")

    def __init__(self, name: str, parent: int, line: int) -> None:
        self.name = name
        self.parent = parent
        self.line = line
        self.offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self.channels: tuple[str, ...] = ()


class Header:
    """The HIERARCHY and the MOTION header: joints (parents first), End Sites, frame count and time."""

    __slots__ = ("joints", "end_parents", "end_offsets", "n_frames", "frames_line", "frame_time", "data_start")

    def __init__(self) -> None:
        self.joints: list[Joint] = []
        self.end_parents: list[int] = []
        self.end_offsets: list[tuple[float, float, float]] = []
        self.n_frames = 0
        self.frames_line = 0
        self.frame_time = 0.0
        self.data_start = 0  # index into the file's lines of the first frame line

    @property
    def n_channels(self) -> int:
        return sum(len(j.channels) for j in self.joints)


class Parsed:
    """A file that passed the grammar: its header and its frame lines.

    Attributes:
        header: the :class:`Header`.
        numbers: 1-based file line of each frame ``(F,)`` (for messages); blank and ``#`` lines
            between frames are skipped.
        lines: all the file's lines (``numbers[i] - 1`` indexes frame ``i``'s).
        block: the frame lines joined by line breaks (what :func:`check_values` checks).
    """

    __slots__ = ("header", "numbers", "lines", "block", "_rows")

    def __init__(self, header: Header, numbers: list[int], lines: list[str], block: str) -> None:
        self.header = header
        self.numbers = numbers
        self.lines = lines
        self.block = block
        self._rows: list[list[str]] | None = None

    @property
    def n_frames(self) -> int:
        return len(self.numbers) if self.header.n_channels else self.header.n_frames

    def row(self, i: int) -> list[str]:
        """Frame ``i``'s ``C`` number tokens."""
        return self.lines[self.numbers[i] - 1].split() if self.header.n_channels else []

    @property
    def rows(self) -> list[list[str]]:
        """``F`` lists of ``C`` number tokens (strings), one per frame (split on first use)."""
        if self._rows is None:
            self._rows = [self.row(i) for i in range(self.n_frames)]
        return self._rows


class Lines:
    """The file's meaningful lines (not blank, not ``#`` comments) with numbers."""

    def __init__(self, lines: list[str], path: str) -> None:
        self.lines = lines
        self.path = path
        self.i = 0
        self.last = 0  # 1-based number of the last line returned

    def next(self, where: str) -> tuple[int, list[str]]:
        while self.i < len(self.lines):
            self.i += 1
            tokens = self.lines[self.i - 1].split()
            if tokens and not tokens[0].startswith("#"):
                self.last = self.i
                return self.i, tokens
        raise BVHError(self.path, last_line(self.lines), f"file ends {where} (truncated?)")

    def error(self, line: int, reason: str) -> BVHError:
        return BVHError(self.path, line, reason)


_NOT_A_FILE = {0o010000: "a named pipe (FIFO)", 0o020000: "a character device", 0o060000: "a block device",
               0o140000: "a socket", 0o040000: "a folder"}


def read_file(path: str | Path) -> bytes:
    """The file's bytes (at most :data:`MAX_FILE_BYTES` + 1); ``BVHError`` if it cannot be read.

    The path is ``stat``-ed first: a named pipe (whose ``open`` would block), a device
    (``/dev/zero`` never ends), a socket or a folder is refused by its type, and a file over the
    size bound is refused without reading it.
    """
    import os
    import stat

    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            kind = _NOT_A_FILE.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise BVHError(str(path), None, f"{kind}, not a BVH file: not read")
        if info.st_size > MAX_FILE_BYTES:
            raise BVHError(str(path), None, f"file is larger than {MAX_FILE_BYTES >> 20} MiB: not read")
        with open(path, "rb") as fh:
            return fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise BVHError(str(path), None, f"cannot read file: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte in the path
        raise BVHError(repr(str(path))[1:-1], None, f"cannot read file: {exc}") from None


def check_options(unit: str | None, up_axis: str | None) -> tuple[float | None, str | None]:
    """Metres per ``unit`` and the normalised up axis (``None``: detect it); ``ValueError`` if unknown."""
    scale = None if unit is None else unit_names.check_unit(unit)
    return scale, None if up_axis is None else unit_names.check_up_axis(up_axis)


def guarded(data: bytes, name: str, read: Callable[[bytes, str], T]) -> T:
    """``read(data, name)`` with every failure turned into one ``BVHError`` naming the file."""
    if len(data) > MAX_FILE_BYTES:
        raise BVHError(name, None, f"file is larger than {MAX_FILE_BYTES >> 20} MiB: not read")
    try:
        return read(data, name)
    except BVHError:
        raise
    except (MemoryError, RecursionError, OverflowError, ValueError, FloatingPointError, IndexError) as exc:
        # A bound should have caught it first; still, the user gets one line naming the file.
        raise BVHError(name, None, f"cannot read the file ({type(exc).__name__}: {_cut(str(exc))})") from None


def _cut(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def parse(data: bytes, name: str) -> Parsed:
    """Decode, parse the HIERARCHY and MOTION header, and split the frame lines into tokens.

    The frame count and each line's number of values are checked; the values themselves are
    checked by :func:`check_values` or :func:`to_floats` (or, vectorised, by the numpy reader,
    which falls back to :func:`raise_bad_value` for the message).
    """
    lines = decode(data, name).split("\n")
    header = parse_header(Lines(lines, name))
    numbers, block = frame_lines(lines, header, name)
    return Parsed(header, numbers, lines, block)


# --- text -----------------------------------------------------------------------------------------


def decode(data: bytes, name: str) -> str:
    """File bytes to text with ``\\n`` line ends; binary data is an error."""
    if not data or data.isspace():  # (not data.strip(): that copies the file)
        raise BVHError(name, 1, "file is empty")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise BVHError(name, line, "binary data (a NUL byte): not a BVH text file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BVHError(name, line, "bytes that are not UTF-8 text: not a BVH text file") from None
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def last_line(lines: list[str]) -> int:
    """1-based number of the file's last line (a final line break ends it, not a new line)."""
    return max(len(lines) - (1 if lines and lines[-1] == "" else 0), 1)


def show(tokens: list[str]) -> str:
    text = " ".join(tokens)
    return repr(text if len(text) <= 40 else text[:37] + "...")


def quoted(token: str) -> str:
    """A token of the file, quoted and cut to a readable length."""
    return repr(token if len(token) <= 40 else token[:37] + "...")


def number(ls: Lines, line: int, token: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ls.error(line, f"{what}: {quoted(token)} is not a number") from None
    if not math.isfinite(value):
        raise ls.error(line, f"{what}: {quoted(token)} is not a finite number")
    if abs(value) > MAX_VALUE:
        raise ls.error(line, f"{what}: {quoted(token)} is out of range (magnitude over {MAX_VALUE:g})")
    return value


# --- HIERARCHY ------------------------------------------------------------------------------------


def parse_header(ls: Lines) -> Header:
    line, tok = ls.next("before HIERARCHY")
    if [t.upper() for t in tok] != ["HIERARCHY"]:
        raise ls.error(line, f"expected HIERARCHY, found {show(tok)}")
    header = Header()
    line, tok = ls.next("before ROOT")
    if tok[0].upper() != "ROOT":
        raise ls.error(line, f"expected ROOT, found {show(tok)}")
    _parse_tree(ls, header, line, tok)

    line, tok = ls.next("before MOTION")
    if tok[0].upper() == "ROOT":
        raise ls.error(line, "a second ROOT: only one skeleton per file is supported")
    if [t.upper() for t in tok] != ["MOTION"]:
        raise ls.error(line, f"expected MOTION after the HIERARCHY, found {show(tok)}")

    line, tok = ls.next("in the MOTION header")
    match = _FRAMES_RE.match(" ".join(tok))
    if not match:
        raise ls.error(line, f"expected 'Frames: N', found {show(tok)}")
    count = match.group(1)
    digits = count.lstrip("+").lstrip("0")
    if not re.fullmatch(r"\+?[0-9]+", count) or not digits:
        raise ls.error(line, f"Frames must be a whole number >= 1, found {quoted(count)}")
    if len(digits) > len(str(MAX_FRAMES)) or int(digits) > MAX_FRAMES:
        raise ls.error(line, f"Frames {quoted(count)} is more than the reader's limit of {MAX_FRAMES:,}")
    header.n_frames, header.frames_line = int(match.group(1)), line

    line, tok = ls.next("in the MOTION header")
    match = _FRAME_TIME_RE.match(" ".join(tok))
    if not match:
        raise ls.error(line, f"expected 'Frame Time: seconds', found {show(tok)}")
    token = match.group(1)
    try:
        dt = float(token)
    except ValueError:
        raise ls.error(line, f"Frame Time: {quoted(token)} is not a number") from None
    if not math.isfinite(dt):
        raise ls.error(line, f"Frame Time: {quoted(token)} is not a finite number")
    if not dt > 0:
        raise ls.error(line, f"Frame Time must be positive, found {quoted(match.group(1))}")
    if not MIN_FRAME_TIME <= dt <= MAX_FRAME_TIME:
        raise ls.error(line, f"Frame Time {quoted(match.group(1))} s is outside {MIN_FRAME_TIME:g} to "
                             f"{MAX_FRAME_TIME:g} s (1 MHz to one frame a minute)")
    header.frame_time = dt
    header.data_start = ls.i
    return header


def _parse_tree(ls: Lines, header: Header, line: int, tok: list[str]) -> None:
    """Parse ROOT's block (``tok`` is the ROOT line) and all joints inside it."""
    first_line: dict[str, int] = {}
    stack = [_open_joint(ls, header, line, tok, -1, first_line)]
    while stack:
        line, tok = ls.next("inside the HIERARCHY")
        key = tok[0].upper()
        if key == "JOINT":
            stack.append(_open_joint(ls, header, line, tok, stack[-1], first_line))
        elif key == "END":
            _end_site(ls, header, line, tok, stack[-1])
        elif tok == ["}"]:
            stack.pop()
        else:
            joint = header.joints[stack[-1]].name
            raise ls.error(
                line, f"expected JOINT, End Site or '}}' in joint {quoted(joint)}, found {show(tok)}"
            )


def _brace(ls: Lines, words: list[str], what: str) -> list[str]:
    """Consume the ``{`` opening a block (at the end of ``words`` or on the next line)."""
    if words and words[-1] == "{":
        return words[:-1]
    line, tok = ls.next(f"inside {what}")
    if tok != ["{"]:
        raise ls.error(line, f"expected '{{' to open {what}, found {show(tok)}")
    return words


def _open_joint(
    ls: Lines, header: Header, line: int, tok: list[str], parent: int, first_line: dict[str, int]
) -> int:
    """Parse a ROOT/JOINT line, its ``{``, OFFSET and CHANNELS; return its index."""
    words = tok[1:]
    if words and words[-1] == "{":
        words = words[:-1]
    if not words:
        raise ls.error(line, f"{tok[0]} without a name")
    name = " ".join(words)
    if name in first_line:
        raise ls.error(line, f"duplicate joint name {quoted(name)} (first on line {first_line[name]})")
    first_line[name] = line
    if len(header.joints) >= MAX_JOINTS:
        raise ls.error(line, f"more than {MAX_JOINTS:,} joints: not a character skeleton")
    _brace(ls, tok[1:], f"joint {quoted(name)}")
    joint = Joint(name=name, parent=parent, line=line)
    joint.offset = _offset(ls, f"joint {quoted(name)}")
    line, tok = ls.next(f"inside joint {quoted(name)}")
    if tok[0].upper() == "CHANNELS":
        joint.channels = _channels(ls, line, tok, name)
    else:
        ls.i = ls.last - 1  # no CHANNELS line: a joint without channels; read it again
    header.joints.append(joint)
    return len(header.joints) - 1


def _offset(ls: Lines, what: str) -> tuple[float, float, float]:
    line, tok = ls.next(f"inside {what}")
    if tok[0].upper() != "OFFSET":
        raise ls.error(line, f"expected OFFSET in {what}, found {show(tok)}")
    if len(tok) != 4:
        raise ls.error(line, f"OFFSET of {what} needs 3 numbers, found {len(tok) - 1}")
    x, y, z = (number(ls, line, t, f"OFFSET of {what}") for t in tok[1:])
    return (x, y, z)


def _channels(ls: Lines, line: int, tok: list[str], joint: str) -> tuple[str, ...]:
    if len(tok) < 2 or not re.fullmatch(r"[0-9]+", tok[1]):
        raise ls.error(line, f"CHANNELS of joint {quoted(joint)} must start with a channel count")
    names = tok[2:]
    if len(tok[1]) > 3 or int(tok[1]) != len(names):
        raise ls.error(
            line, f"CHANNELS of joint {quoted(joint)} says {quoted(tok[1])[1:-1]} but lists {len(names)} names"
        )
    out = []
    for n in names:
        canonical = _CANONICAL.get(n.lower())
        if canonical is None:
            raise ls.error(
                line,
                f"unknown channel name {quoted(n)} in joint {quoted(joint)}; valid: {' '.join(CHANNELS)}",
            )
        if canonical in out:
            raise ls.error(line, f"channel {canonical} listed twice in joint {quoted(joint)}")
        out.append(canonical)
    return tuple(out)


def _end_site(ls: Lines, header: Header, line: int, tok: list[str], owner: int) -> None:
    words = [t.upper() for t in tok]
    if words not in (["END", "SITE"], ["END", "SITE", "{"]):
        raise ls.error(line, f"expected 'End Site', found {show(tok)}")
    what = f"the End Site of joint {quoted(header.joints[owner].name)}"
    _brace(ls, tok[2:], what)
    header.end_parents.append(owner)
    header.end_offsets.append(_offset(ls, what))
    line, tok = ls.next(f"inside {what}")
    if tok != ["}"]:
        raise ls.error(line, f"expected '}}' to close {what}, found {show(tok)}")


# --- MOTION ---------------------------------------------------------------------------------------


#: ASCII characters other than " " and "\n" that ``str.split()`` splits on.
_OTHER_SPACE = b"\t\x0b\x0c\r\x1c\x1d\x1e\x1f"


def frame_lines(lines: list[str], header: Header, name: str) -> tuple[list[int], str]:
    """The frame lines' 1-based numbers and the lines joined, checked against the declared frame
    count and, each, against the number of channels (values are ``str.split()`` tokens)."""
    n_channels = header.n_channels
    n_frames = header.n_frames
    numbers: list[int] = []
    texts: list[str] = []
    for k in range(header.data_start, len(lines)):
        text = lines[k]
        first = text.lstrip()[:1]  # str.lstrip() and str.split() agree on what is white space
        if first and first != "#":
            numbers.append(k + 1)
            texts.append(text)
    block = "\n".join(texts)
    for i, count in enumerate(_token_counts(texts, block)):
        if count == n_channels:
            continue
        if i == len(texts) - 1 and count < n_channels and i < n_frames:
            raise BVHError(
                name,
                numbers[i],
                f"file ends inside frame {i + 1} of {n_frames}: {count} of "
                f"{n_channels} values (truncated?)",
            )
        raise BVHError(
            name,
            numbers[i],
            f"frame line has {count} values, expected {n_channels} "
            "(one per channel of the HIERARCHY)",
        )
    # Without channels a frame is an empty line: the file must still hold one line per frame.
    held = len(texts) if n_channels > 0 else max(last_line(lines) - header.data_start, 0)
    if held < n_frames:
        raise BVHError(
            name,
            last_line(lines),
            f"file ends after {held} of the {n_frames} frames declared on line "
            f"{header.frames_line} (truncated?)",
        )
    if len(texts) > n_frames:
        raise BVHError(
            name,
            numbers[n_frames],
            f"more frame lines than the {n_frames} declared on line {header.frames_line}",
        )
    return numbers, block


def _token_counts(texts: list[str], block: str) -> list[int]:
    """``len(text.split())`` of each line, by counting spaces where the lines hold single spaces only."""
    if block.isascii():
        raw = block.encode("ascii")
        if len(raw.translate(None, _OTHER_SPACE)) == len(raw) and b"  " not in raw:
            # Tokens are separated by one space; a line may start or end with one.
            return [t.count(" ") + 1 - t.startswith(" ") - t.endswith(" ") for t in texts]
    return [len(t.split()) for t in texts]


def to_floats(parsed: Parsed, name: str) -> list[list[float]]:
    """The frame values as Python floats, ``F`` lists of ``C``; ``BVHError`` for a bad token.

    A value is bad when it is not a number, not finite, or larger than :data:`MAX_VALUE`.
    """
    out = []
    isfinite = math.isfinite
    for row in parsed.rows:
        try:
            values = list(map(float, row))
        except ValueError:
            raise_bad_value(parsed.rows, parsed.numbers, name)
        # max and min alone miss a NaN after the first value; the sum is NaN or inf whenever
        # any value is, and finite otherwise (at most 500 * 6 values of at most 1e9).
        if values and not (max(values) <= MAX_VALUE and min(values) >= -MAX_VALUE and isfinite(sum(values))):
            raise_bad_value(parsed.rows, parsed.numbers, name)
        out.append(values)
    return out


def check_values(parsed: Parsed, name: str) -> None:
    """Check every frame value as :func:`to_floats` does, without converting them all when it can.

    Most files write plain decimals (``-12.345678``); :func:`plain_decimals` recognises such a
    frame block in a few passes over its bytes. Anything else is checked value by value.
    """
    if not plain_decimals(parsed.block):
        to_floats(parsed, name)


_DIGITS_TO_0 = bytes.maketrans(b"123456789E\t\n", b"000000000e  ")
_TEN_DIGITS = b"0" * 10


def plain_decimals(block: str) -> bool:
    """True if every whitespace-separated token of ``block`` is a plain decimal: ``[+-]``, digits
    with one optional point, optionally ``e-`` or ``E-`` and digits, a digit after each point and
    sign, and at most 9 digits before the point. Then each is a finite float of magnitude below
    1e9 (within :data:`MAX_VALUE`) as ``float()`` reads it. False means "check value by value",
    not "bad": positive exponents, ``5.``, ``nan``, Unicode digits and the like take that path.

    The checks run by ``bytes`` methods in C on a copy with every digit made ``0``, ``E`` made
    ``e`` and tabs and line breaks spaces (``t``), and on that copy without its digits (``shape``:
    each token becomes one of ``""``, ``"-"``, ``"-."``, ``".e-"``...). A block of 72,000 values
    takes a few milliseconds, where ``float()`` on each takes 15-20.
    """
    t = block.encode("utf-8", "surrogatepass").translate(_DIGITS_TO_0)
    if t.translate(None, b"0.+-e "):  # another character
        return False
    shape = t.translate(None, b"0")
    plus, exp = b"+" in shape, b"e" in shape  # most files have neither: their checks are skipped
    # Shapes: [+-]?[.]?(e-)? -- no second point or sign, "e" only as "e-", nothing after "e-".
    bad_shapes = [b"..", b".-", b"--"]
    bad_shapes += [b".+", b"-+", b"+-", b"++"] if plus else []
    bad_shapes += [b"e+", b"ee", b"e.", b"e "] if exp else []
    if any(bad in shape for bad in bad_shapes):
        return False
    if exp and (shape.endswith(b"e") or shape.count(b"e-") != shape.count(b"e- ") + shape.endswith(b"e-")):
        return False
    # Digits: one right after each point and each sign, and before each "e" (the shapes allow
    # "e" only after a digit, a point or a sign at the token's start); none before a sign.
    bad_pairs = [b". ", b"- ", b"0-"]
    bad_pairs += [b"+ ", b"+e", b"0+"] if plus else []
    bad_pairs += [b".e", b"-e", b" e"] if exp else []
    if any(bad in t for bad in bad_pairs) or t.endswith((b".", b"-", b"+")) or t.startswith(b"e"):
        return False
    # At most 9 digits before the point (a run of ten starting a token or following its sign).
    if _TEN_DIGITS in t and (t.startswith(_TEN_DIGITS) or b" " + _TEN_DIGITS in t
                             or b"-" + _TEN_DIGITS in t or b"+" + _TEN_DIGITS in t):
        return False
    return True


def raise_bad_value(rows: list[list[str]], numbers: list[int], name: str) -> None:
    """Raise the BVHError for the first token that is not a finite float within :data:`MAX_VALUE`."""
    for row, line in zip(rows, numbers):
        for k, tok in enumerate(row):
            try:
                value = float(tok)
            except ValueError:
                raise BVHError(name, line, f"value {k + 1} {quoted(tok)} is not a number") from None
            if not math.isfinite(value):
                raise BVHError(name, line, f"value {k + 1} {quoted(tok)} is not a finite number")
            if abs(value) > MAX_VALUE:
                raise BVHError(
                    name, line, f"value {k + 1} {quoted(tok)} is out of range (magnitude over {MAX_VALUE:g})"
                )
    raise BVHError(name, numbers[0] if numbers else None, "frame data is not numeric")
