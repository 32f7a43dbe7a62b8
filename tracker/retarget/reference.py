"""The :class:`Reference` type: a clip in the character's generalized coordinates."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tracker.atomic import atomic_target
from tracker.character.layout import Layout
from tracker.errors import RetargetError


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
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as d:
                if "kind" not in d or str(d["kind"]) != "tracker.reference":
                    raise RetargetError(f"{path}: not a tracker reference file (make one with 'tracker retarget')")
                return cls(
                    q=d["q"], v=d["v"], fps=float(d["fps"]),
                    joints=tuple(zip(d["joint_names"].tolist(), d["joint_kinds"].tolist())),
                    model=str(d["model"]), source=str(d["source"]), quality=json.loads(str(d["quality"])),
                    contacts=d["contacts"] if "contacts" in d else None,
                )
        except (OSError, ValueError, KeyError) as exc:
            raise RetargetError(f"{path}: cannot read reference ({exc})") from None
