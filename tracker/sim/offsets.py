"""Offset tracks: the servo aims at ``reference ⊕ Δ(t)`` instead of the reference.

An :class:`OffsetTrack` holds ``Δ`` at knot times (clip time, s), one value per actuated DOF in
the layout's ``v`` order without the base (a free root cannot be aimed: it has no servo), and
interpolates it linearly between knots. Outside the knots ``Δ = 0``: the track says nothing there
and the servo aims at the clip. ``⊕`` is the layout's integrate with ``Δ`` as a unit-time velocity:

* spherical joint: ``q̄ = q_ref · exp(Δ)``, ``Δ`` a rotation vector in the joint's child frame
  (the frame of the layout's spherical velocities), rad;
* revolute joint: ``q̄ = q_ref + Δ``, rad.

Only the target *position* moves; the target velocity stays the clip's (a piecewise-linear ``Δ``
has a jumping derivative, which would kick the damping term at every knot).

The file (``.npz``, written by :meth:`OffsetTrack.save`, format version 1)::

    format     "tracker.offsets"
    version    1
    model      the character model's name
    clip       the clip the track was made for (information only)
    joints     (J,) joint names, layout order (the base excluded)
    dofs       (J,) DOFs per joint: 3 (spherical, rotation vector, child frame) or 1 (revolute)
    times      (K,) knot times in clip time, s, strictly increasing, K >= 1
    values     (K, D) offsets at the knots, rad, D = sum(dofs), columns in joint order
    meta       JSON text: how the track was made (optimiser, seed, cost...)

:func:`load_offsets` checks all of it and refuses a bad file in one line naming the file and what is
wrong; :meth:`OffsetTrack.check_layout` then names the first joint that does not match the model.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tracker.control.lie import _exp, _mul
from tracker.errors import ConfigError
from tracker.readfile import load_json_bounded, load_npz_checked

FORMAT = "tracker.offsets"
VERSION = 1
#: Largest knot count a file may ask for (a 10-minute clip at 1000 knots per second).
MAX_KNOTS = 600_000
#: Largest offset-track file read, bytes, and most values its arrays may hold together
#: (MAX_KNOTS x the humanoid's 37 DOFs = 22 M).
MAX_FILE_BYTES = 1 << 29
MAX_VALUES = 1 << 26


@dataclass(frozen=True, eq=False)
class OffsetTrack:
    """``Δ(t)``, piecewise linear on knots.

    Attributes:
        joints: joint names, layout order without the base.
        dofs: DOFs of each joint (3 spherical, 1 revolute), ``(J,)``.
        times: knot times, clip time, s, ``(K,)`` strictly increasing.
        values: offsets at the knots, rad, ``(K, D)``.
        model: the character model's name.
        clip: the clip the track was made for (information only).
        meta: how it was made (JSON-able).
    """

    joints: tuple[str, ...]
    dofs: np.ndarray
    times: np.ndarray
    values: np.ndarray
    model: str = ""
    clip: str = ""
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        dofs = np.array(self.dofs, dtype=np.int64)
        times = np.array(self.times, dtype=float).reshape(-1)
        values = np.array(self.values, dtype=float)
        problem = _problem(tuple(self.joints), dofs, times, values)
        if problem:
            raise ConfigError(f"offset track: {problem}")
        for name, a in (("dofs", dofs), ("times", times), ("values", values)):
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "_layout_cache", None)
        # the knots as Python floats and the DOF count, for at() (it runs every control step)
        object.__setattr__(self, "_knots", times.tolist())
        object.__setattr__(self, "_n_dofs", int(dofs.sum()))

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def zeros(cls, layout, times, model: str = "", clip: str = "", meta: dict | None = None) -> "OffsetTrack":
        """A track of zero offsets at ``times`` for ``layout``'s actuated joints."""
        joints, dofs = layout_joints(layout)
        times = np.asarray(times, dtype=float).reshape(-1)
        return cls(joints, dofs, times, np.zeros((len(times), int(dofs.sum()))), model, clip, dict(meta or {}))

    def with_values(self, values: np.ndarray, meta: dict | None = None) -> "OffsetTrack":
        """The same knots with other values ``(K, D)``."""
        return OffsetTrack(self.joints, self.dofs, self.times, values, self.model, self.clip,
                           dict(self.meta if meta is None else meta))

    @property
    def n_dofs(self) -> int:
        return int(self.dofs.sum())

    # -- evaluation -----------------------------------------------------------------------
    def at(self, t: float) -> np.ndarray:
        """``Δ(t)`` ``(D,)``: linear between knots, zero outside them."""
        ts = self._knots  # the knot times as Python floats: cheaper to compare and bisect than numpy scalars
        if not ts[0] <= t <= ts[-1]:  # outside the knots, or NaN
            return np.zeros(self._n_dofs)
        k = bisect_right(ts, t) - 1
        if k >= len(ts) - 1:
            return self.values[-1].copy()
        a = (t - ts[k]) / (ts[k + 1] - ts[k])
        return (1.0 - a) * self.values[k] + a * self.values[k + 1]

    def apply(self, layout, q: np.ndarray, t: float) -> np.ndarray:
        """``q ⊕ Δ(t)`` ``(nq,)`` for ``layout`` (checked with :meth:`check_layout` first)."""
        delta = self.at(t)
        if not delta.any():
            return q
        sph_q, sph_d, rev_q, rev_d = self._indices(layout)
        out = np.array(q, dtype=float, copy=True)
        if len(sph_q):
            out[sph_q] = _mul(out[sph_q], _exp(delta[sph_d]))
        if len(rev_q):
            out[rev_q] += delta[rev_d]
        return out

    def _indices(self, layout) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Where ``layout``'s spherical and revolute joints sit: in ``q`` (``(S, 4)``, ``(R,)``) and in ``Δ``
        (``(S, 3)``, ``(R,)``: their ``v`` indices less the base's six, ``Δ`` being ``v`` without the base)."""
        cache = self._layout_cache
        if cache is not None and cache[0] is layout:
            return cache[1]
        base = 6 if layout.has_base else 0
        idx = (np.asarray(layout.sph_q).reshape(-1, 4), np.asarray(layout.sph_v, dtype=int).reshape(-1, 3) - base,
               np.asarray(layout.rev_q, dtype=int), np.asarray(layout.rev_v, dtype=int) - base)
        object.__setattr__(self, "_layout_cache", (layout, idx))
        return idx

    def check_layout(self, layout, source: str = "") -> None:
        """Refuse a track whose joints or DOFs are not ``layout``'s (one line naming the first mismatch)."""
        where = f"{source}: " if source else ""
        joints, dofs = layout_joints(layout)
        for i, (name, n) in enumerate(zip(joints, dofs)):
            if i >= len(self.joints):
                raise ConfigError(f"{where}offset track has no joint {name!r} (it has {len(self.joints)} joints, "
                                  f"the model {len(joints)})")
            if self.joints[i] != name:
                raise ConfigError(f"{where}offset track joint {i} is {self.joints[i]!r}, the model's is {name!r} "
                                  "(a track made for another model?)")
            if int(self.dofs[i]) != int(n):
                raise ConfigError(f"{where}offset track joint {name!r} has {int(self.dofs[i])} DOFs, the model's {n}")
        if len(self.joints) > len(joints):
            raise ConfigError(f"{where}offset track has joint {self.joints[len(joints)]!r}, which the model lacks")

    # -- file -----------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the ``.npz`` file (module docstring) atomically; the same track gives the same bytes."""
        from tracker.atomic import atomic_target
        from tracker.sim.recording import write_npz

        path = Path(path)
        arrays = dict(format=FORMAT, version=np.int64(VERSION), model=self.model, clip=self.clip,
                      joints=np.array(self.joints, dtype=str), dofs=self.dofs, times=self.times,
                      values=self.values, meta=json.dumps(self.meta, sort_keys=True))
        with atomic_target(path, suffix=".npz") as tmp:
            write_npz(tmp, arrays)
        return path


def layout_joints(layout) -> tuple[tuple[str, ...], np.ndarray]:
    """The actuated joints' names and DOF counts (layout order, base excluded)."""
    names = tuple(s.name for s in layout.joints)
    dofs = np.array([s.v.stop - s.v.start for s in layout.joints], dtype=np.int64)
    return names, dofs


def _problem(joints: tuple, dofs: np.ndarray, times: np.ndarray, values: np.ndarray) -> str:
    """What is wrong with a track's arrays, or ''."""
    if not joints:
        return "no joints"
    if not all(isinstance(j, str) and j for j in joints):
        return "joint names must be non-empty text"
    if len(set(joints)) != len(joints):
        dup = next(j for j in joints if joints.count(j) > 1)
        return f"joint {dup!r} is given twice"
    if dofs.shape != (len(joints),):
        return f"dofs has shape {dofs.shape}, expected ({len(joints)},) (one per joint)"
    bad = [j for j, n in zip(joints, dofs) if n not in (1, 3)]
    if bad:
        return f"joint {bad[0]!r} has {int(dofs[joints.index(bad[0])])} DOFs; expected 3 (spherical) or 1 (revolute)"
    if times.size < 1:
        return "no knots"
    if times.size > MAX_KNOTS:
        return f"{times.size} knots, more than {MAX_KNOTS}"
    if not np.isfinite(times).all():
        return "a knot time is not finite"
    if times.size > 1 and not (np.diff(times) > 0).all():
        k = int(np.flatnonzero(np.diff(times) <= 0)[0]) + 1
        return f"knot times must increase strictly; knot {k} is at {times[k]:g} s after {times[k - 1]:g} s"
    d = int(dofs.sum())
    if values.shape != (times.size, d):
        return f"values has shape {values.shape}, expected ({times.size}, {d}) (knots x DOFs)"
    if not np.isfinite(values).all():
        k, c = map(int, np.argwhere(~np.isfinite(values))[0])
        return f"value at knot {k}, DOF {c} is not finite"
    if np.abs(values).max(initial=0.0) > 2 * np.pi:
        return f"an offset of {np.abs(values).max():.3g} rad; offsets are at most 2π"
    return ""


def load_offsets(path: str | Path) -> OffsetTrack:
    """Read and check an offset-track file.

    Raises:
        ConfigError: one line naming the file and what is wrong with it.
    """
    path = Path(path)
    # type, size, zip and every array header checked before an array is read
    data = load_npz_checked(path, "offset-track", MAX_FILE_BYTES, MAX_VALUES, ConfigError)
    if "format" not in data or data["format"].shape != () or str(data["format"]) != FORMAT:
        raise ConfigError(f"{path}: not an offset-track file (no format {FORMAT!r})")
    try:
        version = int(data["version"])
    except (KeyError, TypeError, ValueError, OverflowError):  # absent, not a number, inf or NaN
        raise ConfigError(f"{path}: offset-track file has no version") from None
    if version != VERSION:
        raise ConfigError(f"{path}: offset-track format version {version}; this tracker reads version {VERSION}")
    missing = [k for k in ("joints", "dofs", "times", "values") if k not in data]
    if missing:
        raise ConfigError(f"{path}: offset-track file lacks {', '.join(missing)}")
    joints, dofs, times, values = data["joints"], data["dofs"], data["times"], data["values"]
    if joints.ndim != 1 or joints.dtype.kind not in "U":
        raise ConfigError(f"{path}: joints must be a list of names")
    for name, a in (("dofs", dofs), ("times", times), ("values", values)):
        if a.dtype.kind not in "iuf":
            raise ConfigError(f"{path}: {name} must be numbers, got {a.dtype}")
    if dofs.dtype.kind == "f" and not (np.isfinite(dofs).all() and (dofs == np.round(dofs)).all()):
        raise ConfigError(f"{path}: dofs must be whole numbers")
    if times.ndim != 1:
        raise ConfigError(f"{path}: times must be a list of knot times, got shape {times.shape}")
    meta = {}
    if "meta" in data:
        if data["meta"].dtype.kind != "U" or data["meta"].shape != ():
            raise ConfigError(f"{path}: meta: expected JSON text, got an array of {data['meta'].dtype}")
        meta = load_json_bounded(str(data["meta"]), f"{path}: meta", error=ConfigError)
        if not isinstance(meta, dict):
            raise ConfigError(f"{path}: meta: expected a JSON object (mapping), got {type(meta).__name__}")
    problem = _problem(tuple(joints.tolist()), dofs.astype(np.int64), times.astype(float), values.astype(float))
    if problem:
        raise ConfigError(f"{path}: {problem}")
    return OffsetTrack(tuple(joints.tolist()), dofs, times, values, str(data.get("model", "")),
                       str(data.get("clip", "")), meta)
