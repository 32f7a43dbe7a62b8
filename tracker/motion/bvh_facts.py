"""A BVH file's facts without numpy: what ``tracker inspect`` prints, read in milliseconds.

:func:`read_clip` runs the same grammar as :func:`tracker.motion.bvh.read_bvh`
(:mod:`tracker.motion.bvh_grammar`: every check, every message, the frame values checked as
Python's ``float()`` reads them), detects the unit from frame 0 exactly as the numpy reader does
(it calls :func:`detect` here), and gives frame 0 as a :class:`~tracker.motion.summary.Pose` in
metres, Z up, for the summary facts. Only the frames a fact needs are converted to numbers. Importing numpy and scipy takes longer than reading a large clip
this way, so ``tracker inspect`` (without ``--events``) never loads them.

Rotations follow the numpy reader: intrinsic Euler angles in degrees in the order the channels
are listed (``Zrotation Yrotation Xrotation`` is ``R = Rz @ Ry @ Rx``), position channels
replace the OFFSET's matching component. ``tests/motion/test_bvh_facts.py`` asserts that this
module and the numpy reader agree on every shared clip and on mutated, hostile files.
"""

from __future__ import annotations

import math

from tracker.errors import BVHError
from tracker.motion import bvh_grammar as grammar
from tracker.motion import orient, summary
from tracker.motion.unit_names import up_index

Vec = tuple[float, float, float]
Mat = tuple[float, float, float, float, float, float, float, float, float]

_IDENTITY: Mat = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def _axis_matrix(axis: str, degrees: float) -> Mat:
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    if axis == "X":
        return (1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c)
    if axis == "Y":
        return (c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c)
    return (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)


def _channel_layout(header: grammar.Header) -> list[tuple[list[tuple[int, int]], list[tuple[int, str]]]]:
    """Per joint: (value column, axis) of its position channels, (value column, axis) of its rotations."""
    out = []
    col = 0
    for joint in header.joints:
        pos, rot = [], []
        for ch in joint.channels:
            if ch.endswith("position"):
                pos.append((col, "XYZ".index(ch[0])))
            else:
                rot.append((col, ch[0]))
            col += 1
        out.append((pos, rot))
    return out


def file_pose(header: grammar.Header, row: list[float]) -> summary.Pose:
    """One frame line's pose in the file's units and axes (local translations and rotations)."""
    trans, rots = [], []
    for joint, (pos, rot) in zip(header.joints, _channel_layout(header)):
        t = list(joint.offset)
        for col, axis in pos:  # position channels replace the OFFSET component (as bvhio, Blender)
            t[axis] = row[col]
        r = _IDENTITY
        for col, axis in rot:  # intrinsic: R = R_first @ R_second @ R_third
            r = summary._mul(r, _axis_matrix(axis, row[col]))
        trans.append(t)
        rots.append(r)
    return summary.Pose(
        [j.name for j in header.joints], [j.parent for j in header.joints], [j.offset for j in header.joints],
        trans, rots, header.end_parents, header.end_offsets,
    )


def raw_height(header: grammar.Header, row: list[float], up_axis: str) -> float:
    """Vertical extent of joints and End Sites in the frame ``row``, in file units."""
    k = up_index(up_axis)
    sign = -1.0 if up_axis.startswith("-") else 1.0
    heights = [sign * p[k] for p in summary.frame_points(file_pose(header, row))]
    return max(heights) - min(heights)


def orientation(parsed: grammar.Parsed, unit: str | None, up_axis: str | None, name: str) -> orient.Orientation:
    """The file's up axis, handedness and unit (:mod:`tracker.motion.orient`), from frame 0 and a
    sample of frames; ``unit``/``up_axis`` the user gave are kept. The same code for both readers."""
    header = parsed.header
    poses = [file_pose(header, list(map(float, parsed.row(i)))) for i in orient.sample_frames(parsed.n_frames)]
    try:
        return orient.decide(poses, [j.channels for j in header.joints], unit, up_axis)
    except (ValueError, OverflowError, ZeroDivisionError):
        raise BVHError(name, None, "skeleton size is not finite (values too large)") from None


def _to_si(pose: summary.Pose, scale: float, matrix: Mat) -> summary.Pose:
    """A file-unit, file-axes pose in metres, Z up: positions ``C p * scale``, rotations ``C R C^T``."""
    ct = (matrix[0], matrix[3], matrix[6], matrix[1], matrix[4], matrix[7], matrix[2], matrix[5], matrix[8])

    def vec(v):
        x, y, z = summary.apply(matrix, v)
        return (x * scale, y * scale, z * scale)

    def mat(r):
        return summary._mul(summary._mul(matrix, r), ct)

    return summary.Pose(pose.names, pose.parents, [vec(o) for o in pose.offsets],
                        [vec(t) for t in pose.translations], [mat(r) for r in pose.rotations],
                        pose.end_parents, [vec(o) for o in pose.end_offsets])


class Clip:
    """A BVH file read by :func:`read_clip`: its header, frame values and unit, numpy-free.

    Attributes:
        path: the file, as given.
        parsed: the grammar's :class:`~tracker.motion.bvh_grammar.Parsed` (for the numpy reader,
            :func:`tracker.motion.bvh.motion_from_parsed`, without parsing the file again).
        header: the HIERARCHY and MOTION header (file units).
        orientation: how the file becomes metres and Z up (:class:`~tracker.motion.orient.Orientation`).
        unit, scale, up_axis, mirrored, unit_detected, frame_time: as in :class:`~tracker.motion.motion.SourceInfo`.
    """

    def __init__(self, path: str, parsed: grammar.Parsed, found: orient.Orientation, unit_detected: bool) -> None:
        self.path = path
        self.parsed = parsed
        self.header = parsed.header
        self.orientation = found
        self.unit = found.unit
        self.scale = found.scale
        self.up_axis = found.up
        self.mirrored = found.mirrored
        self.unit_detected = unit_detected
        self.frame_time = self.header.frame_time

    @property
    def n_frames(self) -> int:
        return self.parsed.n_frames

    def row(self, frame: int) -> list[float]:
        """Frame ``frame``'s values (file units, degrees)."""
        return list(map(float, self.parsed.row(frame)))

    @property
    def fps(self) -> float:
        return 1.0 / self.frame_time

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame (as :attr:`Motion.duration <tracker.motion.motion.Motion.duration>`)."""
        return (self.n_frames - 1) / self.fps

    def pose(self, frame: int = 0) -> summary.Pose:
        """Frame ``frame`` in metres, Z up."""
        return _to_si(file_pose(self.header, self.row(frame)), self.scale, self.orientation.matrix)

    def added_tpose_frames(self, max_blend: int = 12) -> int:
        """How many leading frames retargeting drops as an added T-pose and its blend.

        The rule of :func:`tracker.retarget.retarget._drop_added_tpose`, on the same numbers:
        frame 0 counts as added when the largest joint rotation between frames 0 and 1 is at
        least 0.3 rad and 4x the 90th percentile of that per-frame largest rotation; the frames
        that follow go too while their step stays above 2x that percentile. Most clips fail
        the first test on frames 0 and 1 alone, and then nothing else is computed; otherwise
        every frame's step is, in plain Python for a short clip and with numpy (imported then)
        past :data:`NUMPY_FROM` joint-frames, where importing it costs less than the loop.
        """
        f = self.n_frames
        if f < 8:
            return 0
        layout = [rot for _, rot in _channel_layout(self.header) if rot]
        first = _max_step(_quats(layout, self.row(0)), _quats(layout, self.row(1)))
        if first < 0.3:
            return 0
        if f * len(layout) >= NUMPY_FROM:
            step = _steps_numpy(layout, self.parsed)
        else:
            quats = [_quats(layout, list(map(float, r))) for r in self.parsed.rows]
            step = [first] + [_max_step(a, b) for a, b in zip(quats[1:-1], quats[2:])]
        typical = max(_percentile(step, 90.0), 1e-3)
        if first < max(4 * typical, 0.3):
            return 0
        drop = 1
        while drop < min(max_blend, f - 3) and step[drop] > 2 * typical:
            drop += 1
        return drop


_HALF_DEG = math.pi / 360.0


def _turn(x, y, z, w, s, c, axis: str):
    """``(x, y, z, w) * q_axis`` for the half-angle sine ``s`` and cosine ``c`` (floats or arrays)."""
    if axis == "X":
        return w * s + x * c, y * c + z * s, z * c - y * s, w * c - x * s
    if axis == "Y":
        return x * c - z * s, w * s + y * c, z * c + x * s, w * c - y * s
    return x * c + y * s, y * c - x * s, w * s + z * c, w * c - z * s


def _quats(layout: list[list[tuple[int, str]]], row: list[float]) -> list[tuple[float, float, float, float]]:
    """The rotating joints' local rotations in one frame line as xyzw quaternions (file axes)."""
    out = []
    sin, cos = math.sin, math.cos
    for rot in layout:
        x = y = z = 0.0
        w = 1.0
        for col, axis in rot:  # q = q_first * q_second * q_third (intrinsic order)
            h = row[col] * _HALF_DEG
            x, y, z, w = _turn(x, y, z, w, sin(h), cos(h), axis)
        out.append((x, y, z, w))
    return out


#: Joint-frames from which the T-pose rule's steps are computed with numpy: in a fresh process the
#: plain-Python steps cost about 2 us each (50 ms for the 802-frame, 31-joint CMU kick), importing
#: numpy about 100 ms.
NUMPY_FROM = 60_000


def _steps_numpy(layout: list[list[tuple[int, str]]], parsed: grammar.Parsed) -> list[float]:
    """:func:`_max_step` between every two consecutive frames ``(F - 1,)``, vectorised over frames."""
    import numpy as np

    values = np.array(parsed.block.split(), dtype=np.float64).reshape(parsed.n_frames, parsed.header.n_channels)
    smallest = np.ones(parsed.n_frames - 1)
    for rot in layout:
        x = y = z = np.zeros(parsed.n_frames)
        w = np.ones(parsed.n_frames)
        for col, axis in rot:  # the products of _quats, for all frames at once
            h = values[:, col] * _HALF_DEG
            x, y, z, w = _turn(x, y, z, w, np.sin(h), np.cos(h), axis)
        dot = np.abs(x[1:] * x[:-1] + y[1:] * y[:-1] + z[1:] * z[:-1] + w[1:] * w[:-1])
        np.minimum(smallest, dot, out=smallest)
    return (2.0 * np.arccos(np.minimum(smallest, 1.0))).tolist()


def _max_step(a: list, b: list) -> float:
    """Largest rotation angle between corresponding quaternions of two frames, rad (0 for none)."""
    if not a:
        return 0.0
    dot = min(abs(p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3]) for p, q in zip(a, b))
    return 2.0 * math.acos(min(dot, 1.0))


def _percentile(values: list[float], q: float) -> float:
    """``numpy.percentile(values, q)``: linear interpolation, with numpy's index and rounding."""
    v = sorted(values)
    n = len(v)
    quantile = q / 100.0
    index = n * quantile + (1.0 + quantile * -1.0) - 1.0  # numpy's virtual index (alpha = beta = 1)
    if index >= n - 1:
        return v[-1]
    lo = math.floor(index)
    t = index - lo
    a, b = v[lo], v[lo + 1]
    diff = b - a
    return b - diff * (1.0 - t) if t >= 0.5 else a + diff * t


def read_clip(path: str, unit: str | None = None, up_axis: str | None = None) -> Clip:
    """Read a BVH file for its facts; the same errors as :func:`tracker.motion.bvh.read_bvh`.

    Raises:
        BVHError: the file cannot be read or is not a valid BVH file.
        ValueError: ``unit`` or ``up_axis`` is not a known name.
    """
    data = grammar.read_file(path)
    return read_clip_bytes(data, str(path), unit=unit, up_axis=up_axis)


def read_clip_bytes(data: bytes, name: str, *, unit: str | None = None, up_axis: str | None = None) -> Clip:
    """:func:`read_clip` on the file's contents; ``name`` stands for the file in messages."""
    _, up = grammar.check_options(unit, up_axis)

    def read(data: bytes, name: str) -> Clip:
        parsed = grammar.parse(data, name)
        grammar.check_values(parsed, name)
        return Clip(name, parsed, orientation(parsed, unit, up, name), unit is None)

    return grammar.guarded(data, name, read)
