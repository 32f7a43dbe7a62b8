"""The :class:`Recording`: per-step arrays of one simulation run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tracker.atomic import atomic_target
from tracker.character.layout import Layout
from tracker.errors import SimulationError


#: ``meta`` keys that hold wall-clock measurements: not saved (they live in timing.json).
WALL_CLOCK_META = ("wall_s",)

#: The date every entry of a saved ``.npz`` carries (the zip format's earliest).
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def write_npz(path: str | Path, arrays: dict) -> None:
    """``np.savez_compressed`` with fixed entry dates and order: same arrays, same bytes."""
    import io
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, value in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asanyarray(value), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            zf.writestr(info, buf.getvalue())


@dataclass
class Recording:
    """Everything a run produced, one row per physics step (after the step).

    Attributes:
        dt: physics time step, s.
        joints: ``(name, kind)`` per actuated joint (layout order).
        t: time after each step ``(N,)`` s.
        q, v: simulated state ``(N, nq)``, ``(N, nv)``.
        q_ref, v_ref: the reference at the same times ``(N, nq)``, ``(N, nv)``.
        tau: generalized forces applied during the step ``(N, nv)`` (base entries:
            the root wrench in anchored mode).
        kp: stiffness used in the step ``(N, nv)``.
        tau_max: torque limits ``(nv,)``.
        events: contact events ``[{"t", "link", "impulse", ...}]``.
        balls: ball positions ``(N, B, 3)`` m (``B`` may be 0).
        meta: run description (model, controller, root mode, clip...).
        status: ``"ok"`` or ``"diverged"``; ``message`` says why.
    """

    dt: float
    joints: tuple[tuple[str, str], ...]
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    q_ref: np.ndarray
    v_ref: np.ndarray
    tau: np.ndarray
    kp: np.ndarray
    tau_max: np.ndarray
    events: list = field(default_factory=list)
    balls: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    status: str = "ok"
    message: str = ""

    @property
    def layout(self) -> Layout:
        return Layout.build(self.joints)

    @property
    def n_steps(self) -> int:
        return len(self.t)

    @property
    def diverged(self) -> bool:
        return self.status == "diverged"

    def save(self, path: str | Path) -> Path:
        """Write ``.npz`` atomically (a temporary file renamed into place).

        The file is a function of the run alone: wall-clock data (``meta["wall_s"]``, kept in
        memory for the caller's timing) is left out, and the zip entries carry a fixed date
        (``np.savez`` stamps each with the current time), so a rerun writes the same bytes.
        """
        path = Path(path)
        meta = {k: v for k, v in self.meta.items() if k not in WALL_CLOCK_META}
        arrays = dict(
            kind="tracker.recording", dt=self.dt,
            joint_names=np.array([n for n, _ in self.joints]), joint_kinds=np.array([k for _, k in self.joints]),
            t=self.t, q=self.q, v=self.v, q_ref=self.q_ref, v_ref=self.v_ref, tau=self.tau, kp=self.kp,
            tau_max=self.tau_max, balls=self.balls if self.balls is not None else np.zeros((len(self.t), 0, 3)),
            events=json.dumps(self.events, sort_keys=True), meta=json.dumps(meta, sort_keys=True),
            status=self.status, message=self.message,
        )
        with atomic_target(path, suffix=".npz") as tmp:
            write_npz(tmp, arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Recording":
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as d:
                if "kind" not in d or str(d["kind"]) != "tracker.recording":
                    raise SimulationError(f"{path}: not a tracker recording")
                return cls(
                    dt=float(d["dt"]), joints=tuple(zip(d["joint_names"].tolist(), d["joint_kinds"].tolist())),
                    t=d["t"], q=d["q"], v=d["v"], q_ref=d["q_ref"], v_ref=d["v_ref"], tau=d["tau"], kp=d["kp"],
                    tau_max=d["tau_max"], events=json.loads(str(d["events"])),
                    balls=d["balls"], meta=json.loads(str(d["meta"])), status=str(d["status"]),
                    message=str(d["message"]),
                )
        except (OSError, ValueError, KeyError) as exc:
            raise SimulationError(f"{path}: cannot read recording ({exc})") from None
