"""Write a :class:`~tracker.motion.motion.Motion` as a BVH file.

The inverse of :func:`tracker.motion.bvh.read_bvh`: metres become ``unit``,
Z up becomes ``up_axis`` (the inverse of the reader's rotation ``C``), and each
joint's rotation is written as Euler angles in the order of its own rotation
channels (``skeleton.channels``). With the default ``decimals=None`` every
number is written with Python's shortest exact representation, so reading the
file back reproduces the motion to rounding error (1e-12 or better).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.motion import units
from tracker.motion.motion import Motion

#: How far a joint without position channels may move off its OFFSET, metres.
POSITION_TOLERANCE_M = 1e-9
#: How far a joint's rotation may stray outside its rotation channels, radians.
ROTATION_TOLERANCE_RAD = 1e-9


def write_bvh(
    motion: Motion,
    path: str | Path,
    *,
    unit: str = "cm",
    up_axis: str = "Y",
    decimals: int | None = None,
    comment: str | None = None,
) -> None:
    """Write ``motion`` to ``path`` (atomically: a temporary file is renamed).

    Args:
        motion: the clip; its skeleton's ``channels`` decide what is written.
        path: the ``.bvh`` file to write.
        unit: length unit of the file (a key of :data:`tracker.motion.units.UNITS`).
        up_axis: ``"Y"`` (BVH's usual, facing +Z) or ``"Z"``.
        decimals: digits after the point; ``None`` writes exact values.
        comment: text written as ``#`` lines right after ``HIERARCHY``.

    Raises:
        ValueError: the skeleton's channels cannot express the motion (a joint
            moves off its OFFSET without position channels, or rotates about an
            axis it has no channel for), or ``unit``/``up_axis`` is unknown.
    """
    text = format_bvh(motion, unit=unit, up_axis=up_axis, decimals=decimals, comment=comment)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def format_bvh(
    motion: Motion,
    *,
    unit: str = "cm",
    up_axis: str = "Y",
    decimals: int | None = None,
    comment: str | None = None,
) -> str:
    """The BVH text of ``motion``; arguments as in :func:`write_bvh`."""
    scale = units.check_unit(unit)
    c = units.axis_matrix(up_axis)
    sk = motion.skeleton
    fmt = repr if decimals is None else (lambda v: f"{v:.{decimals}f}")

    # Back to file coordinates: p_file = C^T p, R_file = C^T R C.
    offsets = sk.offsets @ c / scale
    end_offsets = sk.end_site_offsets @ c / scale
    trans = motion.translations @ c / scale
    quats = np.array(motion.rotations)
    quats[..., :3] = quats[..., :3] @ c

    children: dict[int, list[int]] = {}
    for j, p in enumerate(sk.parents):
        children.setdefault(int(p), []).append(j)
    ends: dict[int, list[int]] = {}
    for e, p in enumerate(sk.end_site_parents):
        ends.setdefault(int(p), []).append(e)

    lines = ["HIERARCHY"]
    if comment:
        lines += [f"# {line}".rstrip() for line in comment.splitlines()]
    columns: list[np.ndarray] = []

    def vec(v: np.ndarray) -> str:
        return " ".join(fmt(float(x)) for x in v)

    # Iterative depth-first walk: ("open", j, depth) writes a joint, ("close", depth) its brace.
    stack: list[tuple] = [("open", j, 0) for j in reversed(children.get(-1, []))]
    while stack:
        item = stack.pop()
        if item[0] == "close":
            _, j, depth = item
            pad = "\t" * (depth + 1)
            for e in ends.get(j, []):
                lines += [
                    f"{pad}End Site",
                    f"{pad}{{",
                    f"{pad}\tOFFSET {vec(end_offsets[e])}",
                    f"{pad}}}",
                ]
            lines.append("\t" * depth + "}")
            continue
        _, j, depth = item
        pad = "\t" * depth
        keyword = "ROOT" if sk.parents[j] < 0 else "JOINT"
        channels = sk.channels[j]
        lines += [
            f"{pad}{keyword} {sk.names[j]}",
            f"{pad}{{",
            f"{pad}\tOFFSET {vec(offsets[j])}",
            f"{pad}\tCHANNELS {len(channels)} {' '.join(channels)}".rstrip(),
        ]
        columns += _joint_columns(
            sk.names[j], channels, trans[:, j], offsets[j], quats[:, j], scale
        )
        stack.append(("close", j, depth))
        stack += [("open", k, depth + 1) for k in reversed(children.get(j, []))]

    frame_time = 1.0 / motion.fps
    if motion.source is not None and 1.0 / motion.source.frame_time == motion.fps:
        frame_time = motion.source.frame_time
    lines += ["MOTION", f"Frames: {motion.n_frames}", f"Frame Time: {frame_time!r}"]
    values = np.stack(columns, axis=1) if columns else np.zeros((motion.n_frames, 0))
    lines += [" ".join(map(fmt, row)) for row in values.tolist()]
    return "\n".join(lines) + "\n"


def _joint_columns(
    name: str,
    channels: tuple[str, ...],
    trans: np.ndarray,
    offset: np.ndarray,
    quats: np.ndarray,
    scale: float,
) -> list[np.ndarray]:
    """The ``(F,)`` value column of each channel of one joint (file units, degrees)."""
    pos_axes = {"XYZ".index(c[0]) for c in channels if c.endswith("position")}
    for a in set(range(3)) - pos_axes:
        drift = np.abs(trans[:, a] - offset[a]).max(initial=0.0) * scale
        if drift > POSITION_TOLERANCE_M:
            raise ValueError(
                f"joint {name!r} moves {drift:.3g} m along file axis {'XYZ'[a]} "
                "but has no position channel for it"
            )
    order = "".join(c[0] for c in channels if c.endswith("rotation"))
    full = order + "".join(a for a in "ZXY" if a not in order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gimbal lock: still an exact rotation
        angles = Rotation.from_quat(quats).as_euler(full, degrees=True)
    extra = np.radians(np.abs(angles[:, len(order) :])).max(initial=0.0)
    if extra > ROTATION_TOLERANCE_RAD:
        raise ValueError(
            f"joint {name!r} rotates {extra:.3g} rad about axes it has no rotation channel for"
        )
    rot_index = {a: k for k, a in enumerate(order)}
    return [
        trans[:, "XYZ".index(c[0])] if c.endswith("position") else angles[:, rot_index[c[0]]]
        for c in channels
    ]
