"""Where a free-root run's link passes at a ball's impact time, against where the clip's does: a ball's ``shift``.

Usage::

    python scripts/aim_shift.py RESULT_DIR [--ball 0]

reads ``RESULT_DIR/config.yaml`` and ``RESULT_DIR/recording.npz`` (a ``tracker run`` or ``tracker optimize``
result) and prints ``shift: [dx, dy, dz]`` for the config's ball: the aim point (the target link's origin
plus the ball's ``offset``, in the link's frame) in the simulated pose at the planned impact time, less
the aim point in the clip's pose. Laid with that ``shift``, a ball at rest lies where the simulated
link passes (``configs/samcon/soccer_light_free.yaml`` says which run its shift came from).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


class Replayed:
    """A recording read as a reference: ``sample(t)`` is the recorded pose nearest clip time ``t``."""

    def __init__(self, rec) -> None:
        self.t, self.q = np.asarray(rec.t, dtype=float), np.asarray(rec.q, dtype=float)
        self.fps = 1.0 / float(rec.dt)

    def sample(self, t: float):
        k = int(np.argmin(np.abs(self.t - t)))
        return self.q[k], None


def aim_shift(result: Path, ball: int = 0) -> np.ndarray:
    """The shift (module docstring) ``(3,)`` m."""
    from tracker.experiments.build import build
    from tracker.experiments.config import load_config
    from tracker.scenarios.launch import aim_point
    from tracker.sim.recording import Recording

    cfg = load_config(result / "config.yaml")
    if not 0 <= ball < len(cfg.balls):
        raise SystemExit(f"error: {result}/config.yaml has {len(cfg.balls)} balls; no ball {ball}")
    b = cfg.balls[ball]
    prep = build(cfg)
    kin = prep.model.kinematics()
    rec = Recording.load(result / "recording.npz")
    t = float(b.impact_time)
    sim, _ = aim_point(prep.model, Replayed(rec), b.target_link, t, b.offset, kin)
    ref, _ = aim_point(prep.model, prep.reference, b.target_link, t, b.offset, kin)
    return sim - ref


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result", type=Path, help="a result folder with config.yaml and recording.npz")
    p.add_argument("--ball", type=int, default=0, help="the ball's index in the config (default 0)")
    args = p.parse_args()
    s = aim_shift(args.result, args.ball)
    print(f"shift: [{s[0]:.3f}, {s[1]:.3f}, {s[2]:.3f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
