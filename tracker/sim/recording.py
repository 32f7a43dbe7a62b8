"""The :class:`Recording`: per-step arrays of one simulation run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from tracker.atomic import atomic_target
from tracker.character.layout import Layout
from tracker.errors import SimulationError
from tracker.readfile import NpzFields, first_nonfinite, load_npz_checked


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

    def finite_steps(self) -> "Recording":
        """The recording without a last step whose state is not finite (the step a run diverged in)."""
        n = self.n_steps
        if n == 0 or (np.isfinite(self.q[-1]).all() and np.isfinite(self.v[-1]).all()):
            return self
        per_step = {k: getattr(self, k)[:n - 1] for k in ("t", "q", "v", "q_ref", "v_ref", "tau", "kp")}
        balls = None if self.balls is None else self.balls[:n - 1]
        return replace(self, balls=balls, **per_step)

    @classmethod
    def load(cls, path: str | Path) -> "Recording":
        """Read a recording written by :meth:`save`, checking every field (:func:`read_recording`).

        Raises:
            SimulationError: one line naming the file and the first field that is wrong.
        """
        return read_recording(path)


#: Largest recording file read, bytes, and most values its arrays may hold together: a
#: 10-minute run of the humanoid at 240 Hz holds 144,000 steps x 6 arrays x ~50 columns = 43 M.
MAX_FILE_BYTES = 1 << 30
MAX_VALUES = 1 << 26
#: Most balls and joints a recording may hold (the replay window makes a body for each ball).
MAX_BALLS = 256
#: Longest ``events`` text read (characters): contact events of minutes of held balls, still bounded.
MAX_EVENTS_CHARS = 1 << 26
MAX_JOINTS = 256
#: Largest physics time step accepted, s.
MAX_DT = 1.0
#: Farthest a recorded ball centre may be from the origin, m (NaN: the ball does not exist yet).
MAX_BALL_DISTANCE = 1e6
#: How far from 1 a recorded quaternion's norm may be (the simulator's are unit to 1e-12).
QUAT_TOL = 1e-3
_STEP_ARRAYS = ("q", "v", "q_ref", "v_ref", "tau", "kp")


def read_recording(path: str | Path) -> Recording:
    """Read and check a recording ``.npz``, before anything is allocated or looped over.

    Checks: a regular file of at most :data:`MAX_FILE_BYTES` holding at most :data:`MAX_VALUES`
    values; the joints (names, kinds) make a layout; ``dt`` one number in ``(0, MAX_DT]``; ``t``
    ``(T,)`` finite, non-decreasing; ``q``, ``q_ref`` ``(T, nq)`` with unit quaternions; ``v``,
    ``v_ref``, ``tau``, ``kp`` ``(T, nv)``; ``tau_max`` ``(nv,)`` >= 0 (inf: no limit); ``balls`` ``(T, B, 3)``
    with ``B <= MAX_BALLS``, each centre finite or all NaN (not launched yet); ``events`` a JSON list
    of objects with a finite time ``t``; ``meta`` a JSON object (``model`` text); ``status`` ok
    or diverged. Every value is finite, except in the last step of a diverged run (the step it
    diverged in: ``q``, ``v``, ``tau``). At least one step unless the run diverged at once.

    Raises:
        SimulationError: one line naming the file and the field.
    """
    arrays = load_npz_checked(path, "recording", MAX_FILE_BYTES, MAX_VALUES, SimulationError)
    f = NpzFields(arrays, path, "recording", SimulationError)
    if "kind" not in arrays or arrays["kind"].shape != () or str(arrays["kind"]) != "tracker.recording":
        raise f.fail("", "not a tracker recording (no kind 'tracker.recording')")
    names, kinds = f.names("joint_names", "J"), f.names("joint_kinds", "J")
    if len(names) > MAX_JOINTS:
        raise f.fail("joint_names", f"{len(names)} joints, more than {MAX_JOINTS}")
    try:
        layout = Layout.build(zip(names, kinds))
    except ValueError as exc:
        raise f.fail("joint_kinds", str(exc)) from None
    status = f.text("status")
    if status not in ("ok", "diverged"):
        raise f.fail("status", f"expected 'ok' or 'diverged', got {status[:40]!r}")
    dt = f.scalar("dt", lo=0.0, lo_open=True, hi=MAX_DT)
    t = f.array("t", ("T",))
    if len(t) == 0 and status != "diverged":
        raise f.fail("t", "no steps (a finished run has at least one)")
    if (np.diff(t) < 0).any():
        raise f.fail("t", f"times go back at step {int(np.flatnonzero(np.diff(t) < 0)[0]) + 1}")
    widths = {"q": layout.nq, "q_ref": layout.nq, "v": layout.nv, "v_ref": layout.nv, "tau": layout.nv,
              "kp": layout.nv}
    # a diverged run keeps the step it diverged in: its state may be NaN or infinite
    last_may_blow_up = status == "diverged" and len(t) > 0
    per_step = {}
    for key in _STEP_ARRAYS:
        a = f.array(key, ("T", widths[key]), finite=False)
        head = a[:-1] if last_may_blow_up and key in ("q", "v", "tau") else a
        bad = first_nonfinite(head)
        if bad is not None:
            raise f.fail(key, f"value {head[bad]} at step {bad[0]}, column {bad[1]} is not finite")
        per_step[key] = a.astype(float)
    for key in ("q", "q_ref"):
        _check_quaternions(f, key, per_step[key][:-1] if last_may_blow_up else per_step[key], layout)
    if (per_step["kp"] < 0).any():
        raise f.fail("kp", "a stiffness is negative")
    tau_max = f.array("tau_max", (layout.nv,), finite=False, lo=0.0).astype(float)  # inf: no limit
    if np.isnan(tau_max).any():
        raise f.fail("tau_max", "a torque limit is NaN")
    balls = _read_balls(f)
    # a ball held in the hands is a contact event per link and step: 4000 (1.9 MB) in the free-root
    # basketball's 1.7 s hold at 1/960 s physics steps
    events = f.json("events", expect=list, max_chars=MAX_EVENTS_CHARS)
    for i, e in enumerate(events):
        if not (isinstance(e, dict) and isinstance(e.get("t"), (int, float)) and not isinstance(e["t"], bool)
                and np.isfinite(e["t"])):
            raise f.fail(f"events[{i}]", "expected an object with a finite time 't' (s)")
    meta = f.json("meta", expect=dict)
    if not isinstance(meta.get("model", ""), str):
        raise f.fail("meta", f"'model' must be a model name, got {meta['model']!r}"[:160])
    return Recording(dt=dt, joints=tuple(zip(names, kinds)), t=t.astype(float), tau_max=tau_max, events=events,
                     balls=balls, meta=meta, status=status, message=f.text("message", default=""), **per_step)


def _check_quaternions(f, key: str, q: np.ndarray, layout: Layout) -> None:
    """Refuse a base or spherical-joint quaternion of ``q`` ``(T, nq)`` whose norm is not 1."""
    cols = ([np.arange(3, 7)] if layout.has_base else []) + [np.asarray(r) for r in layout.sph_q]
    if not cols or len(q) == 0:
        return
    norms = np.linalg.norm(q[:, np.stack(cols)], axis=-1)  # (T, S)
    off = np.abs(norms - 1.0) > QUAT_TOL
    if off.any():
        step, k = map(int, np.argwhere(off)[0])
        labels = (["base"] if layout.has_base else []) + [f"joint {s.name!r}" for s in layout.joints
                                                          if s.kind == "spherical"]
        raise f.fail(key, f"the {labels[k]} quaternion at step {step} has norm {norms[step, k]:.4g}, not 1")


def _read_balls(f) -> np.ndarray:
    """``balls`` ``(T, B, 3)``, B <= MAX_BALLS; a centre is finite, or all NaN before the ball exists."""
    a = f.get("balls")
    if a.ndim == 3 and a.shape[1] > MAX_BALLS:
        raise f.fail("balls", f"{a.shape[1]:,} balls, more than {MAX_BALLS}")
    a = f.array("balls", ("T", None, 3), finite=False).astype(float)
    nan = np.isnan(a)
    partly = nan.any(axis=-1) & ~nan.all(axis=-1)
    if np.isinf(a).any() or partly.any():
        step, ball = map(int, np.argwhere(np.isinf(a).any(axis=-1) | partly)[0])
        raise f.fail("balls", f"ball {ball} at step {step} is at {a[step, ball].tolist()}: not a position")
    far = np.abs(np.nan_to_num(a)).max(initial=0.0)
    if far > MAX_BALL_DISTANCE:
        raise f.fail("balls", f"a ball {far:.3g} m from the origin (at most {MAX_BALL_DISTANCE:g})")
    return a
