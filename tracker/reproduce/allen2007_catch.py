"""Allen et al. 2007 Fig. 6: a real ball caught at the key's time, and the figures of the gains.

The ball is the project's basketball toss (``configs/basketball_slow.yaml``: a 4 m/s basketball
aimed with :mod:`tracker.scenarios.launch` so that it meets the left hand of
``data/motions/catch.bvh`` at 1.3 s). The character is driven by ``timed_pd`` through keys taken
from that clip, one of them at 1.3 s (the catch key); the ball is judged by the scenario
(:class:`~tracker.scenarios.ball_scenario.BallScenario`: caught = held between both hands at the
end of the run).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CLIP = Path(__file__).resolve().parents[2] / "data" / "motions" / "catch.bvh"
CATCH_T = 1.3  # s: the ball meets the left hand of the clip's pose; the catch key
CATCH_DT, CATCH_SUBSTEPS, CATCH_RUN = 1 / 60, 8, 2.9  # s, -, s
#: Key schedules compared: label -> key times (s). Every key is the clip's pose and velocity then.
SCHEDULES = (
    ("one key: the catch at 1.3 s", (0.0, CATCH_T)),
    ("keys every 0.1 s", tuple(np.round(np.arange(0.0, 2.95, 0.1), 3))),
    ("keys every 0.05 s from 1.1 s", (0.0, *np.round(np.arange(1.1, 2.95, 0.05), 3))),
)


def launch():
    """The ball of ``configs/basketball_slow.yaml``."""
    from tracker.scenarios.base import Launch

    return Launch("basketball", "left_hand", impact_time=CATCH_T, speed=4.0, flight_time=0.45,
                  direction=(-0.866, 0.0, -0.5), offset=(0.006, -0.089, 0.010))


def catch_run(times, push=None, **options) -> dict:
    """Drive the humanoid (anchored root) through the catch clip's poses at ``times`` with
    ``timed_pd`` while the ball flies in; ``push`` is a scenario-like disturbance (its
    ``before_step`` is called too).

    Returns the ball's outcome (``outcome``, ``caught``, ``held_s``, ``first_contact_s``,
    ``first_link``), the run's status, and the mean joint error (rad) at the catch key.
    """
    from tracker.analysis.metrics import joint_errors
    from tracker.character.model import load_model
    from tracker.control.timed_pd import Keyframes
    from tracker.retarget import load_clip_reference
    from tracker.scenarios.ball_scenario import BallScenario
    from tracker.sim.simulation import SimOptions, Simulation

    model = load_model("humanoid")
    ref = load_clip_reference(str(CLIP), model="humanoid")
    qs, vs = zip(*(ref.sample(float(t)) for t in times))
    keys = Keyframes(np.array(qs), np.array(vs), np.array(times, dtype=float))
    balls = BallScenario([launch()])
    scenario = balls if push is None else _Both(balls, push)
    opt = SimOptions(controller="timed_pd", dt=CATCH_DT, root="anchored", substeps=CATCH_SUBSTEPS,
                     controller_options=(("keys", keys),) + tuple(options.items()))
    sim = Simulation(model, ref, opt, scenario=scenario)
    try:
        rec = sim.run(CATCH_RUN)
    finally:
        sim.close()
    o = balls.outcomes()[0]
    i = int(np.argmin(np.abs(rec.t - CATCH_T)))
    key_q = ref.sample(CATCH_T)[0]
    err = float(joint_errors(model.layout, rec.q[i][None], key_q[None])[0].mean())
    return {"outcome": o.outcome, "caught": o.caught, "held_s": o.held_time, "first_contact_s": o.first_contact_time,
            "first_link": o.first_contact_link, "status": rec.status, "key_error_rad": err}


class _Both:
    """The ball scenario plus a push: the simulation sees one scenario (events are the balls')."""

    def __init__(self, balls, push) -> None:
        self.balls, self.push = balls, push

    def __getattr__(self, name):
        return getattr(self.balls, name)

    def before_step(self, sim, t: float) -> None:
        self.push.before_step(sim, t)
        self.balls.before_step(sim, t)


# -- figures ---------------------------------------------------------------------------------------

def plot_gains(trace: list, layout, key_times, title: str, path: Path, joints=("left_shoulder", "right_shoulder")) -> dict:
    """Draw ``k_s`` of the X axis of ``joints`` over time (the paper's Figs. 2 and 5, log scale).

    ``trace`` is :attr:`TimedPDController.gain_trace`. Returns per joint ``(min, median, max)``
    N·m/rad.
    """
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    t = np.array([row[0] for row in trace])
    ks = np.array([row[1] for row in trace])
    fig, ax = plt.subplots(figsize=(7.5, 3.2), dpi=110)
    stats = {}
    for name in joints:
        k = ks[:, layout[name].v.start]
        ax.semilogy(t, k, lw=1.0, label=f"{name} (X axis)")
        stats[name] = (float(k.min()), float(np.median(k)), float(k.max()))
    for tk in key_times:
        ax.axvline(tk, color="gray", lw=0.6, ls=":")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("k_s (N·m/rad)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return stats


def plot_tension(resp: dict, hit_t: float, path: Path) -> None:
    """Deviation from the held pose after the hit, one curve per tension ``d``."""
    import matplotlib.pyplot as plt

    from tracker.analysis.plots import save_figure

    fig, ax = plt.subplots(figsize=(7.0, 3.2), dpi=110)
    for d, r in resp.items():
        keep = (r["t"] > hit_t - 0.05) & (r["t"] < hit_t + 1.0)
        ax.plot(r["t"][keep] - hit_t, r["dev"][keep], lw=1.1, label="no tension" if d is None else f"d = {d:g} s")
        if d is not None:
            ax.axvline(d, color="gray", lw=0.5, ls=":")
    ax.set_xlabel("time after the hit (s)")
    ax.set_ylabel("deviation from the pose (rad)")
    ax.set_title("Two-link arm, paper's law, hit at 1 s: tension d sets the response", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
