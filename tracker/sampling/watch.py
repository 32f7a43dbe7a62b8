"""Watching a search: where it is, how good its best chain is, and how long it has left.

The optimisers (:func:`~tracker.sampling.samcon.samcon`, :func:`~tracker.sampling.samcon.cma_segments`)
hand a :class:`SearchStatus` to their ``watch`` callback after every window (a SAMCON segment, a
CMA-ES generation). :class:`SearchLog` shows it: on a terminal a progress bar (one updating line),
otherwise one plain line per window, e.g.::

    samcon search: iteration 1/2, window 3/4 (0.20-0.30 s): best cost 0.3321, joint error 0.071 rad
    (goal <= 0.10), root error 0.012 m (goal <= 0.15), 2.1 s elapsed, about 3.4 s left

The errors are those of the best chain so far, read at the segment boundaries it reached (the
states it hands on: the mean over joints of the joint error, rad, and the root position error,
m, averaged over the boundaries); the replay's ``metrics.json`` averages over every step.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

#: The tracking goal the log compares against: mean joint error, rad, and mean root position error, m.
GOAL_JOINT_RAD = 0.10
GOAL_ROOT_M = 0.15


@dataclass(frozen=True)
class SearchStatus:
    """Where a search is, after one window.

    Attributes:
        method: ``samcon`` or ``cma``.
        iteration: 0-based iteration (SAMCON) or CMA-ES generation (cma).
        iterations: iterations (generations per segment).
        segment: 0-based segment.
        segments: segments of the window.
        t0, t1: the segment's clip times, s.
        cost: the best chain's accumulated cost so far.
        joint_error: its mean joint error at the boundaries it reached, rad.
        root_error: its mean root position error there, m.
        rollouts: rollouts simulated so far.
        done: windows done (segment x iteration units, this run and any it resumed).
        total: windows in the whole search.
    """

    method: str
    iteration: int
    iterations: int
    segment: int
    segments: int
    t0: float
    t1: float
    cost: float
    joint_error: float
    root_error: float
    rollouts: int
    done: int
    total: int


def boundary_errors(layout, q: np.ndarray, q_ref: np.ndarray) -> np.ndarray:
    """``(N, 2)``: each state's mean joint error (rad) and root position error (m, 0 on a fixed base)
    against the reference's ``q_ref`` ``(nq,)`` at the same time; ``q`` ``(N, nq)``."""
    from tracker.analysis.metrics import joint_errors

    q = np.atleast_2d(q)
    ref = np.broadcast_to(q_ref, q.shape)
    out = np.zeros((len(q), 2))
    if not len(q):
        return out
    err = joint_errors(layout, q, ref)
    out[:, 0] = err.mean(axis=1) if err.shape[1] else 0.0
    if layout.has_base:
        out[:, 1] = np.linalg.norm(q[:, 0:3] - ref[:, 0:3], axis=1)
    return out


class SearchLog:
    """The ``watch`` callback of ``tracker optimize``: a bar on a terminal, else a line per window.

    Args:
        stream: where to write (stderr).
        bar: draw a progress bar (a terminal) instead of lines.
        clock: seconds, for elapsed and left times (``time.perf_counter``).
    """

    def __init__(self, stream=None, bar: bool | None = None, clock=time.perf_counter) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bar = self.stream.isatty() if bar is None else bar
        self._clock = clock
        self._t0 = clock()
        self._first = 0  # windows already done when this search started (a resumed search)
        self._t_first = self._last = 0.0  # elapsed time when that search started, and at the last window
        self._done = self._total = -1  # the last status's windows done and in all (a new search restarts them)
        self._tqdm = None
        #: put before every line (a schedule's stage), "" for none
        self.prefix = ""

    def begin(self) -> None:
        """The search starts now (elapsed and left times count from here)."""
        self._t0 = self._clock()

    def line(self, s: SearchStatus) -> str:
        """The plain log line of ``s`` (module docstring)."""
        elapsed = self._clock() - self._t0
        left = self._left(s, elapsed)
        unit = "iteration" if s.method == "samcon" else "generation"
        return (f"{self.prefix}{s.method} search: {unit} {s.iteration + 1}/{s.iterations}, window {s.segment + 1}/{s.segments} "
                f"({s.t0:.2f}-{s.t1:.2f} s): best cost {s.cost:.4g}, joint error {s.joint_error:.3f} rad "
                f"(goal <= {GOAL_JOINT_RAD:.2f}), root error {s.root_error:.3f} m (goal <= {GOAL_ROOT_M:.2f}), "
                f"{elapsed:.1f} s elapsed, " + ("about " + _seconds(left) + " left" if left is not None
                                                 else "time left not known yet"))

    def _left(self, s: SearchStatus, elapsed: float) -> float | None:
        if s.done <= self._done or s.total != self._total:  # the first window of a search (a schedule runs several)
            self._first, self._t_first = s.done - 1, self._last
        self._done, self._total, self._last = s.done, s.total, elapsed
        run, spent = s.done - self._first, elapsed - self._t_first
        return spent / run * (s.total - s.done) if run > 0 and spent > 0 else None

    def __call__(self, s: SearchStatus) -> None:
        if not self.bar:
            print(self.line(s), file=self.stream, flush=True)
            return
        if self._tqdm is not None and (self._tqdm.total != s.total or s.done <= self._tqdm.n):
            self.close()  # the next search of a schedule
        if self._tqdm is None:
            from tqdm import tqdm

            self._tqdm = tqdm(total=s.total, initial=s.done - 1, unit="window", desc=f"{self.prefix}{s.method}", leave=False,
                              file=self.stream)
        self._tqdm.set_postfix_str(f"it {s.iteration + 1}/{s.iterations} seg {s.segment + 1}/{s.segments} "
                                   f"cost {s.cost:.4g} joint {s.joint_error:.3f} rad root {s.root_error:.3f} m",
                                   refresh=False)
        self._tqdm.update(1)

    def say(self, text: str) -> None:
        """One line outside the bar (a stage starting, a resumed search)."""
        if self._tqdm is not None:
            self._tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None


def _seconds(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"
