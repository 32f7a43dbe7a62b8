"""Read BVH files into :class:`~tracker.motion.motion.Motion` (SI units, Z up).

The reader is strict and fast. Any problem with the file raises
:class:`~tracker.errors.BVHError` with the file and line, and nothing else
escapes on any input. The text is parsed by :mod:`tracker.motion.bvh_grammar`
(shared with the numpy-free :mod:`tracker.motion.bvh_facts` that ``tracker
inspect`` uses; bvhio's parser loops forever on a file that ends early, so it
cannot be handed arbitrary input); the frame values are converted by numpy in
one go and the Euler channels of all frames are turned into quaternions by one
scipy call per rotation order. The up axis, handedness and unit are read from the body by
:func:`tracker.motion.bvh_facts.orientation`, the same code for both readers.

Conventions follow bvhio (and Blender): position channels *replace* the
matching component of the joint's OFFSET (a joint's translation is the OFFSET
where it has no position channel), and the rotation channels are intrinsic
Euler angles in degrees, applied in the order they are listed, so
``Zrotation Yrotation Xrotation`` means ``R = Rz @ Ry @ Rx``. Lines whose
first character is ``#`` are comments (the project's writer puts one after
``HIERARCHY``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.motion import bvh_facts
from tracker.motion import bvh_grammar as grammar
from tracker.motion.bvh_grammar import (  # noqa: F401  (the reader's public constants live in the grammar)
    CHANNELS,
    MAX_FILE_BYTES,
    MAX_FRAME_TIME,
    MAX_FRAMES,
    MAX_JOINTS,
    MAX_VALUE,
    MIN_FRAME_TIME,
)
from tracker.motion.bvh_grammar import quoted as _token  # noqa: F401  (tests quote tokens the same way)
from tracker.motion.motion import Motion, SourceInfo
from tracker.motion.skeleton import Skeleton

def read_bvh(path: str | Path, *, unit: str | None = None, up_axis: str | None = None) -> Motion:
    """Read a BVH file.

    Args:
        path: the ``.bvh`` file.
        unit: the file's length unit (a key of :data:`tracker.motion.units.UNITS`);
            ``None`` detects it from the skeleton's height.
        up_axis: the file's up axis (one of :data:`tracker.motion.units.UP_AXES`); ``None``
            reads it from the body, with the handedness (:mod:`tracker.motion.orient`).

    Returns:
        The clip in metres, Z up, xyzw quaternions, with ``source`` set.

    Raises:
        BVHError: the file cannot be read or is not a valid BVH file.
        ValueError: ``unit`` or ``up_axis`` is not a known name.
    """
    return read_bvh_bytes(grammar.read_file(path), str(path), unit=unit, up_axis=up_axis)


def read_bvh_string(
    text: str, *, name: str = "<string>", unit: str | None = None, up_axis: str | None = None
) -> Motion:
    """Read BVH text; ``name`` stands for the file in error messages."""
    return read_bvh_bytes(text.encode("utf-8", "surrogatepass"), name, unit=unit, up_axis=up_axis)


def read_bvh_bytes(
    data: bytes, name: str, *, unit: str | None = None, up_axis: str | None = None
) -> Motion:
    """Read BVH file contents; see :func:`read_bvh`."""
    grammar.check_options(unit, up_axis)
    return grammar.guarded(data, name, lambda d, n: motion_from_parsed(grammar.parse(d, n), n, unit, up_axis))


def motion_from_parsed(parsed: grammar.Parsed, name: str, unit: str | None = None,
                       up_axis: str | None = None) -> Motion:
    """The :class:`Motion` of a file the grammar has parsed (``tracker inspect --events`` reuses its parse)."""
    detected = unit is None
    _, up = grammar.check_options(unit, up_axis)
    header = parsed.header
    values = _values(parsed, name)
    trans, quats = _channels_to_local(header, values)
    found = bvh_facts.orientation(parsed, unit, up, name)
    scale = found.scale
    c = np.array(found.matrix, dtype=float).reshape(3, 3)
    offsets = np.array([j.offset for j in header.joints]) @ c.T * scale
    end_offsets = np.array(header.end_offsets, dtype=float).reshape(-1, 3) @ c.T * scale
    trans = trans @ c.T * scale
    # C R C^T: the axis turns with C, the angle stays; under a reflection (det C = -1) the axis,
    # a pseudovector, also changes sign
    quats[..., :3] = quats[..., :3] @ c.T * (-1.0 if found.mirrored else 1.0)
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
        unit=found.unit,
        scale=scale,
        up_axis=found.up,
        unit_detected=detected,
        frame_time=header.frame_time,
        mirrored=found.mirrored,
        stature_m=found.stature_m,
        how=dict(found.how),
    )
    return Motion(skeleton, 1.0 / header.frame_time, trans, _continuous(quats), source=source)


def _values(parsed: grammar.Parsed, name: str) -> np.ndarray:
    """The frame values as a ``(F, C)`` array (file units, degrees), checked as :func:`grammar.to_floats` does."""
    n_channels = parsed.header.n_channels
    if n_channels == 0:
        return np.zeros((parsed.n_frames, 0))
    try:  # numpy parses each string as Python's float() does; the grammar checked the counts
        values = np.array(parsed.block.split(), dtype=np.float64).reshape(parsed.n_frames, n_channels)
    except ValueError:
        values = None
    if values is None or not (np.abs(values) <= grammar.MAX_VALUE).all():  # also false for NaN
        grammar.raise_bad_value(parsed.rows, parsed.numbers, name)
    return values


# --- channels to local transforms -----------------------------------------------------------------


def _channels_to_local(header: grammar.Header, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _continuous(quats: np.ndarray) -> np.ndarray:
    """Flip quaternion signs so that frame 0 has ``w >= 0`` and no frame jumps to ``-q``."""
    signs = np.ones(quats.shape[:2])
    signs[0] = np.where(quats[0, :, 3] < 0, -1.0, 1.0)
    if quats.shape[0] > 1:
        flipped = np.einsum("fjk,fjk->fj", quats[1:], quats[:-1]) < 0
        parity = np.cumsum(flipped, axis=0) % 2
        signs[1:] = signs[0] * np.where(parity == 1, -1.0, 1.0)
    return quats * signs[..., None]
