"""The 3D scene of one recording for the HTML report: link poses per frame, shapes, balls, contacts.

Everything the page's viewer draws is computed here, in Python, with the model's pure-numpy
forward kinematics (:class:`~tracker.character.kinematics.Kinematics`); the page only poses
meshes. Arrays travel as little-endian float32, base64-encoded:

- ``t``: ``(F,)`` s, the recording rows shown (at most :data:`MAX_FPS` per second of run);
- ``sim``, ``ref``: ``(F, L, 7)`` per frame and link ``[x, y, z, qx, qy, qz, qw]`` (m, xyzw),
  the URDF link frames in the world (Z up); ``ref`` is the reference pose (the ghost);
- ``balls``: ``(F, B, 3)`` m, NaN while a ball does not exist yet.

Shapes are the collision shapes the engine simulates, in their link's frame.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.analysis.video import frame_steps
from tracker.errors import TrackerError

#: Most frames per second of run time embedded in a page.
MAX_FPS = 60.0
#: Ball drawn when the run's config does not say: a soccer ball's radius (m), white.
DEFAULT_BALL = (0.11, (0.95, 0.95, 0.95))
#: The URDF axes of a Y-up model in our Z-up axes (as the PyBullet adapter loads it).
_Y_UP = Rotation.from_euler("x", 90.0, degrees=True)


def b64_float32(a: np.ndarray) -> str:
    """``a`` as little-endian float32 bytes, base64 text (NaN kept)."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def to_urdf_axes(model, q: np.ndarray) -> np.ndarray:
    """``q`` ``(F, nq)`` in our axes -> the URDF's axes, as the adapter loads a Y-up model (a new array)."""
    q = np.array(q, dtype=float)
    if model.up_axis == "z":
        return q
    q[:, 3:7] = (Rotation.from_quat(q[:, 3:7]) * _Y_UP).as_quat()
    for idx in model.layout.sph_q:
        q[:, idx] = (_Y_UP.inv() * Rotation.from_quat(q[:, idx]) * _Y_UP).as_quat()
    return q


def link_poses(kin, links: tuple[str, ...], q: np.ndarray) -> np.ndarray:
    """World poses of ``links`` for ``q`` ``(F, nq)`` (URDF axes): ``(F, L, 7)`` ``[x, y, z, qx, qy, qz, qw]``."""
    pos, rot = kin.forward(q)
    out = np.empty((len(q), len(links), 7))
    for k, link in enumerate(links):
        out[:, k, :3] = pos[link]
        out[:, k, 3:] = rot[link].as_quat()
    return out


def shape_list(kin, links: tuple[str, ...]) -> list[dict[str, Any]]:
    """The collision shapes of ``links``: ``{"link": index, "kind", "size", "pos", "quat"}`` (m, xyzw).

    ``size``: box ``[sx, sy, sz]`` (full lengths), capsule/cylinder ``[radius, length]`` (along the
    shape's z), sphere ``[radius]``.
    """
    out = []
    for k, link in enumerate(links):
        for s in kin.shapes.get(link, []):
            out.append({"link": k, "kind": s.kind, "size": [round(float(x), 6) for x in s.size],
                        "pos": [round(float(x), 6) for x in s.origin],
                        "quat": [round(float(x), 6) for x in Rotation.from_matrix(s.rotation).as_quat()]})
    return out


def ball_looks(config_path: Path | None, n_balls: int) -> list[tuple[float, tuple[float, float, float]]]:
    """Radius (m) and RGB of each recorded ball, from the run's ``config.yaml`` (default :data:`DEFAULT_BALL`).

    A config that cannot be read or names an unknown preset leaves the default: the balls are
    still worth showing (a config whose clip moved no longer loads as a config).
    """
    looks = [DEFAULT_BALL] * n_balls
    if config_path is None or n_balls == 0 or not config_path.is_file():
        return looks
    from tracker.scenarios.balls import get_ball
    from tracker.yamlsafe import read_yaml_file

    try:
        data = read_yaml_file(config_path, "config", error=TrackerError)
        balls = data.get("balls") if isinstance(data, dict) else None
        for k, b in enumerate((balls or [])[:n_balls]):
            if isinstance(b, dict) and isinstance(b.get("preset"), str):
                preset = get_ball(b["preset"], b.get("mass"))
                looks[k] = (float(preset.radius), tuple(float(c) for c in preset.colour[:3]))
    except (TrackerError, ValueError, TypeError, KeyError):
        pass
    return looks


def _vector(value: Any) -> list[float] | None:
    """``value`` as 3 finite floats, or None."""
    try:
        v = [float(x) for x in value]
    except (TypeError, ValueError):
        return None
    return v if len(v) == 3 and all(np.isfinite(v)) else None


def markers(events: list, links: tuple[str, ...], t0: float, t1: float) -> tuple[list[dict], list[dict]]:
    """Contacts and pushes among a recording's ``events`` between ``t0`` and ``t1`` s.

    A contact is an event with a ``position`` (m; ball contacts: ``impulse_vector`` N·s on the
    ball); a push is an event with a ``force`` (N) on a ``link`` for ``duration`` s.

    Returns:
        ``(contacts, pushes)``: ``{"t", "link", "pos", "impulse"}`` and ``{"t", "until", "link",
        "force"}`` (link: index into ``links`` or -1).
    """
    contacts, pushes = [], []
    for e in events:
        t = float(e.get("t", np.nan))
        if not (t0 - 1e-9 <= t <= t1 + 1e-9):
            continue
        link = links.index(e["link"]) if e.get("link") in links else -1
        pos, force = _vector(e.get("position")), _vector(e.get("force"))
        if pos is not None:
            contacts.append({"t": t, "link": link, "pos": pos, "impulse": _vector(e.get("impulse_vector"))})
        if force is not None and link >= 0:
            duration = float(e.get("duration", 0.0)) if isinstance(e.get("duration"), (int, float)) else 0.0
            pushes.append({"t": t, "until": t + max(duration, 0.0), "link": link, "force": force})
    return contacts, pushes


def scene(rec, model, config_path: Path | None = None, max_fps: float = MAX_FPS) -> dict[str, Any]:
    """The viewer's data for recording ``rec`` of ``model`` (JSON-able; arrays base64 float32).

    Args:
        rec: a :class:`~tracker.sim.recording.Recording` with at least one finite step.
        model: its :class:`~tracker.character.model.Model` (the joints must match).
        config_path: the run's ``config.yaml`` (ball radii and colours), if any.
        max_fps: most frames per second of run time.

    Raises:
        TrackerError: the recording's joints are not the model's.
    """
    if tuple(n for n, _ in rec.joints) != tuple(model.layout.names):
        raise TrackerError(f"the recording's joints do not match model {model.name!r}")
    kin = model.kinematics()
    links = tuple(kin.links)
    fps = min(max_fps, 1.0 / rec.dt)
    rows = frame_steps(rec.t, fps)
    t = rec.t[rows]
    sim = link_poses(kin, links, to_urdf_axes(model, rec.q[rows]))
    has_ref = bool(np.abs(rec.q_ref[rows]).sum() > 0)
    ref = link_poses(kin, links, to_urdf_axes(model, rec.q_ref[rows])) if has_ref else None
    n_balls = 0 if rec.balls is None else int(rec.balls.shape[1])
    looks = ball_looks(config_path, n_balls)
    contacts, pushes = markers(rec.events, links, float(t[0]), float(t[-1]))
    return {
        "model": model.name, "dt": float(rec.dt), "status": rec.status, "message": rec.message,
        "frames": int(len(rows)), "fps": float(fps), "links": list(links), "shapes": shape_list(kin, links),
        "t": b64_float32(t), "sim": b64_float32(sim), "ref": None if ref is None else b64_float32(ref),
        "balls": {"count": n_balls, "radius": [r for r, _ in looks], "colour": [list(c) for _, c in looks],
                  "pos": b64_float32(rec.balls[rows]) if n_balls else None},
        "contacts": contacts, "pushes": pushes,
    }
