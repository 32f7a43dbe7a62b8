"""DeepMimic motion files (``pybullet_data/data/motions/humanoid3d_*.txt``) as a :class:`Reference`.

A file is JSON: ``{"Loop": ..., "Frames": [[dt, root pos (3), root quat (4),
chest (4), neck (4), right hip (4), right knee (1), right ankle (4),
right shoulder (4), right elbow (1), left hip (4), left knee (1), left ankle (4),
left shoulder (4), left elbow (1)], ...]}`` with quaternions scalar-first
``(w, x, y, z)``, in DeepMimic's Y-up world, for the DeepMimic humanoid (model
``deepmimic``). They are converted to our conventions exactly as the adapter
converts that model's PyBullet state: with ``C`` the +90° turn about X that
takes Y up to Z up, position ``C p``, base and spherical-joint quaternions
``C q C⁻¹``; revolute angles unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.errors import RetargetError
from tracker.retarget.reference import Reference

#: (joint name, kind) in the order of a DeepMimic frame after the root.
FRAME_JOINTS: tuple[tuple[str, str], ...] = (
    ("chest", "spherical"), ("neck", "spherical"),
    ("right_hip", "spherical"), ("right_knee", "revolute"), ("right_ankle", "spherical"),
    ("right_shoulder", "spherical"), ("right_elbow", "revolute"),
    ("left_hip", "spherical"), ("left_knee", "revolute"), ("left_ankle", "spherical"),
    ("left_shoulder", "spherical"), ("left_elbow", "revolute"),
)
FRAME_WIDTH = 1 + 3 + 4 + sum(4 if k == "spherical" else 1 for _, k in FRAME_JOINTS)
_C = Rotation.from_euler("x", 90.0, degrees=True)


def _wxyz_to_rotation(a: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.concatenate([a[:, 1:4], a[:, 0:1]], axis=1))


def is_deepmimic_file(path: str | Path) -> bool:
    """Whether ``path`` looks like a DeepMimic motion file (JSON with ``Frames``)."""
    path = Path(path)
    if path.suffix.lower() not in (".txt", ".json"):
        return False
    try:
        head = path.read_text(errors="replace")[:200]
    except OSError:
        return False
    return '"Frames"' in head or '"Loop"' in head


def _read(path: Path) -> tuple[dict, np.ndarray]:
    """The file's JSON and its frames ``(F, FRAME_WIDTH)``: per frame its duration, root and joints."""
    try:
        data = json.loads(path.read_text())
        frames = np.asarray(data["Frames"], dtype=float)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RetargetError(f"{path}: not a DeepMimic motion file ({exc})") from None
    if frames.ndim != 2 or frames.shape[1] != FRAME_WIDTH:
        raise RetargetError(f"{path}: DeepMimic frames must have {FRAME_WIDTH} values, got shape {frames.shape}")
    if len(frames) < 2:
        raise RetargetError(f"{path}: clip has {len(frames)} frame(s); at least 2 are needed")
    return data, frames


def _fps(frames: np.ndarray) -> float:
    """Frame rate from the per-frame durations (their median; 30 Hz when none is given)."""
    dts = frames[:, 0]
    return 1.0 / (float(np.median(dts[dts > 0])) if np.any(dts > 0) else 1 / 30)


def deepmimic_timing(path: str | Path) -> tuple[float, int]:
    """``(fps, frames)`` of a DeepMimic motion file, for any model (file time, :mod:`tracker.retarget.timing`)."""
    frames = _read(Path(path))[1]
    return _fps(frames), len(frames)


def read_deepmimic(path: str | Path, model) -> Reference:
    """Read a DeepMimic motion file for ``model`` (the ``deepmimic`` model).

    Raises:
        RetargetError: unreadable file, wrong frame width, or a model without these joints.
    """
    from tracker.retarget.retarget import differentiate

    path = Path(path)
    data, frames = _read(path)
    lay = model.layout
    missing = [n for n, _ in FRAME_JOINTS if n not in lay]
    if missing:
        raise RetargetError(f"{path}: model {model.name!r} has no joints {', '.join(missing)}; use --model deepmimic")
    q = np.zeros((len(frames), lay.nq))
    q[:, 0:3] = _C.apply(frames[:, 1:4])
    q[:, 3:7] = (_C * _wxyz_to_rotation(frames[:, 4:8]) * _C.inv()).as_quat()
    col = 8
    for name, kind in FRAME_JOINTS:
        sl = lay[name].q
        if kind == "spherical":
            q[:, sl] = (_C * _wxyz_to_rotation(frames[:, col:col + 4]) * _C.inv()).as_quat()
            col += 4
        else:
            q[:, sl] = frames[:, col:col + 1]
            col += 1
    fps = _fps(frames)
    v = differentiate(lay, q, fps, sigma=0.0)
    return Reference(q, v, fps, tuple((s.name, s.kind) for s in lay.joints), model.name, str(path),
                     {"convention": "deepmimic", "frames": len(q), "fps": fps,
                      "source_fps": fps, "source_frames": len(q), "dropped_frames": 0, "loop": str(data.get("Loop", ""))})
