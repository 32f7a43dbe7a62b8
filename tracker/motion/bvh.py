"""Read BVH files into :class:`~tracker.motion.motion.Motion` (SI units, Z up).

The reader is strict and fast. Any problem with the file raises
:class:`~tracker.errors.BVHError` with the file and line, and nothing else
escapes on any input. The HIERARCHY is parsed line by line here (bvhio's
parser loops forever on a file that ends early, so it cannot be handed
arbitrary input); the MOTION block is parsed by numpy in one go and the Euler
channels of all frames are turned into quaternions by one scipy call per
rotation order.

Conventions follow bvhio (and Blender): position channels *replace* the
matching component of the joint's OFFSET (a joint's translation is the OFFSET
where it has no position channel), and the rotation channels are intrinsic
Euler angles in degrees, applied in the order they are listed, so
``Zrotation Yrotation Xrotation`` means ``R = Rz @ Ry @ Rx``. Lines whose
first character is ``#`` are comments (the project's writer puts one after
``HIERARCHY``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.errors import BVHError
from tracker.motion import units
from tracker.motion.motion import Motion, SourceInfo
from tracker.motion.skeleton import Skeleton

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


@dataclass
class _Joint:
    name: str
    parent: int
    line: int
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    channels: tuple[str, ...] = ()


@dataclass
class _Header:
    joints: list[_Joint] = field(default_factory=list)
    end_parents: list[int] = field(default_factory=list)
    end_offsets: list[tuple[float, float, float]] = field(default_factory=list)
    n_frames: int = 0
    frames_line: int = 0
    frame_time: float = 0.0
    data_start: int = 0  # index into the file's lines of the first frame line


class _Lines:
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
        raise BVHError(self.path, _last_line(self.lines), f"file ends {where} (truncated?)")

    def error(self, line: int, reason: str) -> BVHError:
        return BVHError(self.path, line, reason)


def read_bvh(path: str | Path, *, unit: str | None = None, up_axis: str | None = None) -> Motion:
    """Read a BVH file.

    Args:
        path: the ``.bvh`` file.
        unit: the file's length unit (a key of :data:`tracker.motion.units.UNITS`);
            ``None`` detects it from the skeleton's height.
        up_axis: the file's up axis, ``"Y"`` (the default, as BVH usually is)
            or ``"Z"``.

    Returns:
        The clip in metres, Z up, xyzw quaternions, with ``source`` set.

    Raises:
        BVHError: the file cannot be read or is not a valid BVH file.
        ValueError: ``unit`` or ``up_axis`` is not a known name.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise BVHError(str(path), None, f"cannot read file: {exc.strerror or exc}") from None
    except ValueError as exc:  # a NUL byte in the path
        raise BVHError(repr(str(path))[1:-1], None, f"cannot read file: {exc}") from None
    return read_bvh_bytes(data, str(path), unit=unit, up_axis=up_axis)


def read_bvh_string(
    text: str, *, name: str = "<string>", unit: str | None = None, up_axis: str | None = None
) -> Motion:
    """Read BVH text; ``name`` stands for the file in error messages."""
    return read_bvh_bytes(text.encode("utf-8", "surrogatepass"), name, unit=unit, up_axis=up_axis)


def read_bvh_bytes(
    data: bytes, name: str, *, unit: str | None = None, up_axis: str | None = None
) -> Motion:
    """Read BVH file contents; see :func:`read_bvh`."""
    if unit is not None:
        units.check_unit(unit)
    units.check_up_axis("Y" if up_axis is None else up_axis)
    if len(data) > MAX_FILE_BYTES:
        raise BVHError(name, None, f"file is larger than {MAX_FILE_BYTES >> 20} MiB: not read")
    try:
        return _read(data, name, unit, up_axis)
    except BVHError:
        raise
    except (MemoryError, RecursionError, OverflowError, ValueError, FloatingPointError, IndexError) as exc:
        # A bound above should have caught it first; still, the user gets one line naming the file.
        raise BVHError(name, None, f"cannot read the file ({type(exc).__name__}: {_cut(str(exc))})") from None


def _cut(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _read(data: bytes, name: str, unit: str | None, up_axis: str | None) -> Motion:
    detected = unit is None
    scale = 0.0 if unit is None else units.check_unit(unit)
    up = units.check_up_axis("Y" if up_axis is None else up_axis)
    lines = _decode(data, name).split("\n")
    header = _parse_header(_Lines(lines, name))
    values = _parse_frames(lines, header, name)
    trans, quats = _channels_to_local(header, values)

    raw_height = _height(header, trans[0], quats[0], units.up_index(up))
    if detected:
        unit = units.detect_unit(raw_height)
        if unit is None:
            raise BVHError(name, None, "skeleton size is not finite (values too large)")
        scale = units.UNITS[unit]
    c = units.axis_matrix(up)
    offsets = np.array([j.offset for j in header.joints]) @ c.T * scale
    end_offsets = np.array(header.end_offsets, dtype=float).reshape(-1, 3) @ c.T * scale
    trans = trans @ c.T * scale
    quats[..., :3] = quats[..., :3] @ c.T  # C R C^T: rotate the axis, keep the angle
    skeleton = Skeleton(
        names=[j.name for j in header.joints],
        parents=np.array([j.parent for j in header.joints], dtype=np.int64),
        offsets=offsets,
        channels=[j.channels for j in header.joints],
        end_site_parents=np.array(header.end_parents, dtype=np.int64),
        end_site_offsets=end_offsets,
    )
    source = SourceInfo(
        path=name,
        unit=unit,
        scale=scale,
        up_axis=up,
        unit_detected=detected,
        frame_time=header.frame_time,
    )
    return Motion(skeleton, 1.0 / header.frame_time, trans, _continuous(quats), source=source)


# --- text -----------------------------------------------------------------------------------------


def _decode(data: bytes, name: str) -> str:
    """File bytes to text with ``\\n`` line ends; binary data is an error."""
    if not data.strip():
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


def _last_line(lines: list[str]) -> int:
    """1-based number of the file's last line (a final line break ends it, not a new line)."""
    return max(len(lines) - (1 if lines and lines[-1] == "" else 0), 1)


def _show(tokens: list[str]) -> str:
    text = " ".join(tokens)
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _token(token: str) -> str:
    """A token of the file, quoted and cut to a readable length."""
    return repr(token if len(token) <= 40 else token[:37] + "...")


def _number(ls: _Lines, line: int, token: str, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise ls.error(line, f"{what}: {_token(token)} is not a number") from None
    if not math.isfinite(value):
        raise ls.error(line, f"{what}: {_token(token)} is not a finite number")
    if abs(value) > MAX_VALUE:
        raise ls.error(line, f"{what}: {_token(token)} is out of range (magnitude over {MAX_VALUE:g})")
    return value


# --- HIERARCHY ------------------------------------------------------------------------------------


def _parse_header(ls: _Lines) -> _Header:
    line, tok = ls.next("before HIERARCHY")
    if [t.upper() for t in tok] != ["HIERARCHY"]:
        raise ls.error(line, f"expected HIERARCHY, found {_show(tok)}")
    header = _Header()
    line, tok = ls.next("before ROOT")
    if tok[0].upper() != "ROOT":
        raise ls.error(line, f"expected ROOT, found {_show(tok)}")
    _parse_tree(ls, header, line, tok)

    line, tok = ls.next("before MOTION")
    if tok[0].upper() == "ROOT":
        raise ls.error(line, "a second ROOT: only one skeleton per file is supported")
    if [t.upper() for t in tok] != ["MOTION"]:
        raise ls.error(line, f"expected MOTION after the HIERARCHY, found {_show(tok)}")

    line, tok = ls.next("in the MOTION header")
    match = _FRAMES_RE.match(" ".join(tok))
    if not match:
        raise ls.error(line, f"expected 'Frames: N', found {_show(tok)}")
    count = match.group(1)
    digits = count.lstrip("+").lstrip("0")
    if not re.fullmatch(r"\+?[0-9]+", count) or not digits:
        raise ls.error(line, f"Frames must be a whole number >= 1, found {_token(count)}")
    if len(digits) > len(str(MAX_FRAMES)) or int(digits) > MAX_FRAMES:
        raise ls.error(line, f"Frames {_token(count)} is more than the reader's limit of {MAX_FRAMES:,}")
    header.n_frames, header.frames_line = int(match.group(1)), line

    line, tok = ls.next("in the MOTION header")
    match = _FRAME_TIME_RE.match(" ".join(tok))
    if not match:
        raise ls.error(line, f"expected 'Frame Time: seconds', found {_show(tok)}")
    token = match.group(1)
    try:
        dt = float(token)
    except ValueError:
        raise ls.error(line, f"Frame Time: {_token(token)} is not a number") from None
    if not math.isfinite(dt):
        raise ls.error(line, f"Frame Time: {_token(token)} is not a finite number")
    if not dt > 0:
        raise ls.error(line, f"Frame Time must be positive, found {_token(match.group(1))}")
    if not MIN_FRAME_TIME <= dt <= MAX_FRAME_TIME:
        raise ls.error(line, f"Frame Time {_token(match.group(1))} s is outside {MIN_FRAME_TIME:g} to "
                             f"{MAX_FRAME_TIME:g} s (1 MHz to one frame a minute)")
    header.frame_time = dt
    header.data_start = ls.i
    return header


def _parse_tree(ls: _Lines, header: _Header, line: int, tok: list[str]) -> None:
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
                line, f"expected JOINT, End Site or '}}' in joint {_token(joint)}, found {_show(tok)}"
            )


def _brace(ls: _Lines, words: list[str], what: str) -> list[str]:
    """Consume the ``{`` opening a block (at the end of ``words`` or on the next line)."""
    if words and words[-1] == "{":
        return words[:-1]
    line, tok = ls.next(f"inside {what}")
    if tok != ["{"]:
        raise ls.error(line, f"expected '{{' to open {what}, found {_show(tok)}")
    return words


def _open_joint(
    ls: _Lines, header: _Header, line: int, tok: list[str], parent: int, first_line: dict[str, int]
) -> int:
    """Parse a ROOT/JOINT line, its ``{``, OFFSET and CHANNELS; return its index."""
    words = tok[1:]
    if words and words[-1] == "{":
        words = words[:-1]
    if not words:
        raise ls.error(line, f"{tok[0]} without a name")
    name = " ".join(words)
    if name in first_line:
        raise ls.error(line, f"duplicate joint name {_token(name)} (first on line {first_line[name]})")
    first_line[name] = line
    if len(header.joints) >= MAX_JOINTS:
        raise ls.error(line, f"more than {MAX_JOINTS:,} joints: not a character skeleton")
    _brace(ls, tok[1:], f"joint {_token(name)}")
    joint = _Joint(name=name, parent=parent, line=line)
    joint.offset = _offset(ls, f"joint {_token(name)}")
    line, tok = ls.next(f"inside joint {_token(name)}")
    if tok[0].upper() == "CHANNELS":
        joint.channels = _channels(ls, line, tok, name)
    else:
        ls.i = ls.last - 1  # no CHANNELS line: a joint without channels; read it again
    header.joints.append(joint)
    return len(header.joints) - 1


def _offset(ls: _Lines, what: str) -> tuple[float, float, float]:
    line, tok = ls.next(f"inside {what}")
    if tok[0].upper() != "OFFSET":
        raise ls.error(line, f"expected OFFSET in {what}, found {_show(tok)}")
    if len(tok) != 4:
        raise ls.error(line, f"OFFSET of {what} needs 3 numbers, found {len(tok) - 1}")
    x, y, z = (_number(ls, line, t, f"OFFSET of {what}") for t in tok[1:])
    return (x, y, z)


def _channels(ls: _Lines, line: int, tok: list[str], joint: str) -> tuple[str, ...]:
    if len(tok) < 2 or not re.fullmatch(r"[0-9]+", tok[1]):
        raise ls.error(line, f"CHANNELS of joint {_token(joint)} must start with a channel count")
    names = tok[2:]
    if len(tok[1]) > 3 or int(tok[1]) != len(names):
        raise ls.error(
            line, f"CHANNELS of joint {_token(joint)} says {_token(tok[1])[1:-1]} but lists {len(names)} names"
        )
    out = []
    for n in names:
        canonical = _CANONICAL.get(n.lower())
        if canonical is None:
            raise ls.error(
                line,
                f"unknown channel name {_token(n)} in joint {_token(joint)}; valid: {' '.join(CHANNELS)}",
            )
        if canonical in out:
            raise ls.error(line, f"channel {canonical} listed twice in joint {_token(joint)}")
        out.append(canonical)
    return tuple(out)


def _end_site(ls: _Lines, header: _Header, line: int, tok: list[str], owner: int) -> None:
    words = [t.upper() for t in tok]
    if words not in (["END", "SITE"], ["END", "SITE", "{"]):
        raise ls.error(line, f"expected 'End Site', found {_show(tok)}")
    what = f"the End Site of joint {_token(header.joints[owner].name)}"
    _brace(ls, tok[2:], what)
    header.end_parents.append(owner)
    header.end_offsets.append(_offset(ls, what))
    line, tok = ls.next(f"inside {what}")
    if tok != ["}"]:
        raise ls.error(line, f"expected '}}' to close {what}, found {_show(tok)}")


# --- MOTION ---------------------------------------------------------------------------------------


def _parse_frames(lines: list[str], header: _Header, name: str) -> np.ndarray:
    """The frame lines as a ``(F, C)`` array of channel values (file units, degrees)."""
    n_channels = sum(len(j.channels) for j in header.joints)
    n_frames = header.n_frames
    numbers: list[int] = []
    rows: list[list[str]] = []
    for k in range(header.data_start, len(lines)):
        tok = lines[k].split()
        if tok and not tok[0].startswith("#"):
            numbers.append(k + 1)
            rows.append(tok)

    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    for i in np.flatnonzero(lengths != n_channels)[:1]:
        if i == len(rows) - 1 and lengths[i] < n_channels and i < n_frames:
            raise BVHError(
                name,
                numbers[i],
                f"file ends inside frame {i + 1} of {n_frames}: {lengths[i]} of "
                f"{n_channels} values (truncated?)",
            )
        raise BVHError(
            name,
            numbers[i],
            f"frame line has {lengths[i]} values, expected {n_channels} "
            "(one per channel of the HIERARCHY)",
        )
    # Without channels a frame is an empty line: the file must still hold one line per frame.
    held = len(rows) if n_channels > 0 else max(_last_line(lines) - header.data_start, 0)
    if held < n_frames:
        raise BVHError(
            name,
            _last_line(lines),
            f"file ends after {held} of the {n_frames} frames declared on line "
            f"{header.frames_line} (truncated?)",
        )
    if len(rows) > n_frames:
        raise BVHError(
            name,
            numbers[n_frames],
            f"more frame lines than the {n_frames} declared on line {header.frames_line}",
        )
    if n_channels == 0:
        return np.zeros((n_frames, 0))

    try:
        values = np.array(rows, dtype=np.float64)
    except ValueError:
        values = None
    if values is None or not (np.abs(values) <= MAX_VALUE).all():  # also false for NaN
        _raise_bad_value(rows, numbers, name)
    return values


def _raise_bad_value(rows: list[list[str]], numbers: list[int], name: str) -> None:
    """Raise the BVHError for the first token numpy cannot turn into a finite float."""
    for row, line in zip(rows, numbers):
        for k, token in enumerate(row):
            try:
                value = np.array([token], dtype=np.float64)[0]
            except ValueError:
                raise BVHError(name, line, f"value {k + 1} {_token(token)} is not a number") from None
            if not np.isfinite(value):
                raise BVHError(name, line, f"value {k + 1} {_token(token)} is not a finite number")
            if abs(value) > MAX_VALUE:
                raise BVHError(
                    name, line, f"value {k + 1} {_token(token)} is out of range (magnitude over {MAX_VALUE:g})"
                )
    raise BVHError(name, numbers[0] if numbers else None, "frame data is not numeric")


# --- channels to local transforms -----------------------------------------------------------------


def _channels_to_local(header: _Header, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Local translations ``(F, J, 3)`` (file units) and rotations ``(F, J, 4)`` xyzw."""
    n_frames, n_joints = values.shape[0], len(header.joints)
    offsets = np.array([j.offset for j in header.joints], dtype=np.float64)
    trans = np.repeat(offsets[None], n_frames, axis=0)
    pos_cols: list[int] = []
    pos_joint: list[int] = []
    pos_axis: list[int] = []
    groups: dict[str, tuple[list[int], list[list[int]]]] = {}
    col = 0
    for j, joint in enumerate(header.joints):
        order, rot_cols = "", []
        for ch in joint.channels:
            if ch.endswith("position"):
                pos_cols.append(col)
                pos_joint.append(j)
                pos_axis.append("XYZ".index(ch[0]))
            else:
                order += ch[0]
                rot_cols.append(col)
            col += 1
        if order:
            js, cols = groups.setdefault(order, ([], []))
            js.append(j)
            cols.append(rot_cols)
    # Position channels replace the OFFSET component (bvhio's and Blender's reading).
    trans[:, pos_joint, pos_axis] = values[:, pos_cols]

    quats = np.zeros((n_frames, n_joints, 4))
    quats[..., 3] = 1.0
    for order, (js, cols) in groups.items():
        angles = values[:, np.array(cols)].reshape(-1, len(order))  # (F * G, k) degrees
        q = Rotation.from_euler(order, angles, degrees=True).as_quat()  # uppercase: intrinsic
        quats[:, js] = q.reshape(n_frames, len(js), 4)
    return trans, quats


def _height(header: _Header, trans0: np.ndarray, quats0: np.ndarray, up: int) -> float:
    """Vertical extent of joints and End Sites in frame 0, in file units."""
    n = len(header.joints)
    local = Rotation.from_quat(quats0).as_matrix()
    rot = np.empty((n, 3, 3))
    pos = np.empty((n, 3))
    with np.errstate(all="ignore"):
        for j, joint in enumerate(header.joints):
            p = joint.parent
            if p < 0:
                rot[j], pos[j] = local[j], trans0[j]
            else:
                rot[j] = rot[p] @ local[j]
                pos[j] = pos[p] + rot[p] @ trans0[j]
        ends = np.array(header.end_parents, dtype=np.int64)
        end_pos = pos[ends] + np.einsum(
            "eij,ej->ei", rot[ends], np.array(header.end_offsets, dtype=float).reshape(-1, 3)
        )
        heights = np.concatenate([pos[:, up], end_pos[:, up]])
        return float(heights.max() - heights.min())


def _continuous(quats: np.ndarray) -> np.ndarray:
    """Flip quaternion signs so that frame 0 has ``w >= 0`` and no frame jumps to ``-q``."""
    signs = np.ones(quats.shape[:2])
    signs[0] = np.where(quats[0, :, 3] < 0, -1.0, 1.0)
    if quats.shape[0] > 1:
        flipped = np.einsum("fjk,fjk->fj", quats[1:], quats[:-1]) < 0
        parity = np.cumsum(flipped, axis=0) % 2
        signs[1:] = signs[0] * np.where(parity == 1, -1.0, 1.0)
    return quats * signs[..., None]
