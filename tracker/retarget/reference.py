"""The :class:`Reference` type: a clip in the character's generalized coordinates."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tracker.atomic import atomic_target
from tracker.character.layout import Layout
from tracker.errors import RetargetError
from tracker.readfile import NpzFields, load_npz_checked


def slerp(q0: np.ndarray, q1: np.ndarray, alpha: float | np.ndarray) -> np.ndarray:
    """Shortest-arc spherical interpolation of xyzw quaternions ``(..., 4)``."""
    q0 = np.asarray(q0, float)
    q1 = np.asarray(q1, float)
    alpha = np.asarray(alpha, float)[..., None] if np.ndim(alpha) else alpha
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot).clip(max=1.0)
    theta = np.arccos(dot)
    sin = np.sin(theta)
    small = sin < 1e-8
    w0 = np.where(small, 1 - alpha, np.sin((1 - alpha) * theta) / np.where(small, 1, sin))
    w1 = np.where(small, alpha, np.sin(alpha * theta) / np.where(small, 1, sin))
    out = w0 * q0 + w1 * q1
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


from tracker.arrays import frozen as _frozen  # noqa: E402


@dataclass(frozen=True, eq=False)
class Reference:
    """A reference trajectory for one character model.

    Attributes:
        q: generalized positions per frame ``(F, nq)`` (layout of DESIGN.md).
        v: generalized velocities per frame ``(F, nv)``.
        fps: frames per second; frame ``i`` is at ``i / fps``.
        joints: ``(name, kind)`` per actuated joint, in layout order.
        model: name of the character model it was made for.
        source: where it came from (a BVH path...).
        quality: the retargeting quality report (JSON-able dict).
        contacts: per-frame foot contact labels ``(F, 2)`` bool (left foot, right foot), from
            the source's heel and toe height and speed; ``None`` when unknown (a DeepMimic file).
    """

    q: np.ndarray
    v: np.ndarray
    fps: float
    joints: tuple[tuple[str, str], ...]
    model: str = "humanoid"
    source: str = ""
    quality: dict = field(default_factory=dict)
    contacts: np.ndarray | None = None

    #: The feet the columns of :attr:`contacts` stand for.
    CONTACT_LINKS = ("left_foot", "right_foot")

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", _frozen(self.q))
        if self.contacts is not None:
            c = np.asarray(self.contacts, dtype=bool)
            if c.shape != (len(self.q), 2):
                raise ValueError(f"contacts must be (F, 2) = ({len(self.q)}, 2), got {c.shape}")
            object.__setattr__(self, "contacts", _frozen(c, dtype=bool))
        object.__setattr__(self, "v", _frozen(self.v))
        object.__setattr__(self, "fps", float(self.fps))
        object.__setattr__(self, "joints", tuple((str(n), str(k)) for n, k in self.joints))
        lay = self.layout
        if self.q.ndim != 2 or self.q.shape[1] != lay.nq or self.v.shape != (len(self.q), lay.nv):
            raise ValueError(f"q must be (F, {lay.nq}) and v (F, {lay.nv})")

    @property
    def layout(self) -> Layout:
        return Layout.build(self.joints)

    @property
    def timing(self):
        """How the source file's frames map to this reference's time (clip time), or None when
        not recorded: a :class:`tracker.retarget.timing.ClipTiming`."""
        from tracker.retarget.timing import ClipTiming

        return ClipTiming.from_quality(self.quality)

    @property
    def n_frames(self) -> int:
        return len(self.q)

    @property
    def duration(self) -> float:
        return (self.n_frames - 1) / self.fps

    def _interp_q(self, i: int, alpha: float) -> np.ndarray:
        from tracker.retarget.interp import interp_q  # compiled; imported on first use

        q0, q1 = self.q[i], self.q[min(i + 1, self.n_frames - 1)]
        starts = self.__dict__.get("_quat_starts")
        if starts is None:
            lay = self._lay
            starts = np.array(([3] if lay.has_base else []) + [int(r[0]) for r in lay.sph_q], dtype=np.int64)
            object.__setattr__(self, "_quat_starts", starts)
        return interp_q(q0, q1, float(alpha), starts, np.empty(q0.shape[0]))

    @property
    def _lay(self) -> Layout:
        lay = self.__dict__.get("_layout_cache")
        if lay is None:
            lay = self.layout
            object.__setattr__(self, "_layout_cache", lay)
        return lay

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """``(q, v)`` at time ``t`` s: slerp for quaternions, linear otherwise.

        Outside the clip the pose is held (the first or last frame) and the velocity is zero:
        a held pose does not move, and a servo aimed at the last frame's non-zero velocity
        would drag the character on after the clip has ended.
        """
        raw = t * self.fps
        x = min(max(raw, 0.0), self.n_frames - 1.0)
        i = min(int(np.floor(x)), self.n_frames - 1)
        alpha = x - i
        j = min(i + 1, self.n_frames - 1)
        q = self._interp_q(i, alpha)
        if raw < -1e-6 or raw > self.n_frames - 1.0 + 1e-6:  # tolerance: t summed from steps
            return q, np.zeros_like(self.v[i])
        return q, (1 - alpha) * self.v[i] + alpha * self.v[j]

    def resample(self, fps: float) -> "Reference":
        """The same clip at another frame rate (duration kept, last frame clamped)."""
        n = int(np.floor(self.duration * fps + 1e-9)) + 1
        qs, vs = zip(*(self.sample(i / fps) for i in range(n)))
        contacts = None
        if self.contacts is not None:
            # a foot is down in an output frame when it is in any source frame within half an output
            # frame of it (the nearest frame when upsampling): a walk's short double supports survive
            # going down from 120 to 24-30 fps
            centre = np.arange(n) / fps * self.fps
            half = max(0.5 * self.fps / fps, 0.5)
            lo = np.clip(np.ceil(centre - half + 1e-9).astype(int), 0, self.n_frames - 1)
            hi = np.clip(np.floor(centre + half - 1e-9).astype(int), 0, self.n_frames - 1)
            near = np.minimum(np.round(centre).astype(int), self.n_frames - 1)
            lo, hi = np.minimum(lo, near), np.maximum(hi, near)
            cum = np.vstack([np.zeros((1, self.contacts.shape[1]), int), np.cumsum(self.contacts, axis=0)])
            contacts = (cum[hi + 1] - cum[lo]) > 0
        return Reference(np.array(qs), np.array(vs), fps, self.joints, self.model, self.source, self.quality,
                         contacts)

    # -- persistence --------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write an ``.npz`` atomically."""
        path = Path(path)
        with atomic_target(path, suffix=".npz") as tmp:
            np.savez_compressed(
                tmp, q=self.q, v=self.v, fps=self.fps,
                joint_names=np.array([n for n, _ in self.joints]),
                joint_kinds=np.array([k for _, k in self.joints]),
                model=self.model, source=self.source, quality=json.dumps(self.quality),
                kind="tracker.reference",
                **({} if self.contacts is None else {"contacts": self.contacts}),
            )
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Reference":
        """Read a reference written by :meth:`save`, checking every field (:func:`read_reference`).

        Raises:
            RetargetError: one line naming the file and the first field that is wrong.
        """
        return read_reference(path)


class SampleMemo:
    """A clip's samples kept by time: ``memo(reference, t)`` is ``reference.sample(t)``, bit for bit, with
    read-only arrays shared between the calls at one ``t``.

    A simulation that goes back to saved states samples the same times again: a search's rollouts, thousands
    from each kept state, each the same dozen control steps. Only a :class:`Reference` (frozen, its arrays
    read-only: its samples depend on ``t`` alone) is kept, at most ``size`` times (then the memo starts
    over); any other reference object is asked every time, and ``t = 0`` too (``0.0`` and ``-0.0`` are one
    key, but a clamped sample at ``-0.0`` may carry a ``-0.0`` where ``0.0`` has ``0.0``).
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._reference, self._kept, self._items = None, False, {}

    def __call__(self, reference, t: float) -> tuple[np.ndarray, np.ndarray]:
        if reference is not self._reference:
            self._reference, self._kept, self._items = reference, isinstance(reference, Reference), {}
        if not self._kept or t == 0:
            return reference.sample(t)
        hit = self._items.get(t)
        if hit is None:
            if len(self._items) >= self.size:
                self._items.clear()
            q, v = reference.sample(t)
            q.setflags(write=False)
            v.setflags(write=False)
            hit = self._items[t] = (q, v)
        return hit


#: Largest reference file read, bytes, and most values its arrays may hold together (a
#: 10-minute clip of the humanoid at 120 fps holds 72,000 frames x ~100 columns = 7 M).
MAX_FILE_BYTES = 1 << 29
MAX_VALUES = 1 << 26
#: Most joints a reference may have, and its highest frame rate, Hz.
MAX_JOINTS = 256
#: Lowest frame rate a saved reference may have, Hz (a clip of 2 frames at it lasts 100 s).
MIN_FPS = 0.01
#: Longest clip a saved reference may hold, s (a day).
MAX_DURATION_S = 86_400.0
MAX_FPS = 10_000.0
#: How far from 1 a quaternion's norm may be; within it the quaternion is normalised (float32
#: round trips and hand edits), beyond it the file is refused (a zero or garbage quaternion).
QUAT_TOL = 1e-3


def read_reference(path: str | Path) -> Reference:
    """Read and check a reference ``.npz`` before anything is allocated or looped over.

    Checks: a regular file of at most :data:`MAX_FILE_BYTES` holding at most :data:`MAX_VALUES`
    values; kind ``tracker.reference``; the joints (names, kinds) make a layout; ``fps`` one
    number in ``(0, MAX_FPS]``; ``q`` ``(F, nq)`` and ``v`` ``(F, nv)`` finite, ``F >= 1``, base and
    spherical quaternions of norm within :data:`QUAT_TOL` of 1 (then normalised); ``contacts``
    ``(F, 2)`` booleans when present; ``model``, ``source`` text; ``quality`` a JSON object.

    Raises:
        RetargetError: one line naming the file and the field.
    """
    arrays = load_npz_checked(path, "reference", MAX_FILE_BYTES, MAX_VALUES, RetargetError)
    f = NpzFields(arrays, path, "reference", RetargetError)
    if "kind" not in arrays or arrays["kind"].shape != () or str(arrays["kind"]) != "tracker.reference":
        raise f.fail("", "not a tracker reference file (make one with 'tracker retarget')")
    names, kinds = f.names("joint_names", "J"), f.names("joint_kinds", "J")
    if len(names) > MAX_JOINTS:
        raise f.fail("joint_names", f"{len(names)} joints, more than {MAX_JOINTS}")
    try:
        layout = Layout.build(zip(names, kinds))
    except ValueError as exc:
        raise f.fail("joint_kinds", str(exc)) from None
    fps = f.scalar("fps", lo=MIN_FPS, hi=MAX_FPS)
    q = f.array("q", ("F", layout.nq)).astype(float)
    if len(q) == 0:
        raise f.fail("q", "no frames")
    if (len(q) - 1) / fps > MAX_DURATION_S:
        raise f.fail("fps", f"{len(q)} frames at {fps:g} fps last {(len(q) - 1) / fps:.4g} s, over "
                            f"{MAX_DURATION_S:g} s")
    v = f.array("v", ("F", layout.nv)).astype(float)
    cols = ([np.arange(3, 7)] if layout.has_base else []) + [np.asarray(r) for r in layout.sph_q]
    if cols:
        idx = np.stack(cols)  # (S, 4)
        norms = np.linalg.norm(q[:, idx], axis=-1)  # (F, S)
        off = np.abs(norms - 1.0) > QUAT_TOL
        if off.any():
            frame, k = map(int, np.argwhere(off)[0])
            labels = (["base"] if layout.has_base else []) + [f"joint {s.name!r}" for s in layout.joints
                                                              if s.kind == "spherical"]
            raise f.fail("q", f"the {labels[k]} quaternion at frame {frame} has norm {norms[frame, k]:.4g}, "
                              f"not 1 (within {QUAT_TOL:g})")
        # normalised where needed: a unit quaternion as saved stays bit for bit
        q[:, idx] /= np.where(np.abs(norms - 1.0) > 1e-12, norms, 1.0)[..., None]
    contacts = f.array("contacts", ("F", 2), kinds="b") if f.has("contacts") else None
    return Reference(q=q, v=v, fps=fps, joints=tuple(zip(names, kinds)), model=f.text("model", max_chars=1000),
                     source=f.text("source", max_chars=10_000), quality=f.json("quality", expect=dict),
                     contacts=contacts)
