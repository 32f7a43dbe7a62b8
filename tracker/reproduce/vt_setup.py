"""What :mod:`tracker.reproduce.vt` runs and how it judges Fig. 1 (shared with its claims table)."""

from __future__ import annotations

K_SOFT, K_STIFF = 110.0, 2000.0
#: Fig. 1(c) holds: the large box travels less than STAYS and the hand ends more than SHORT behind
#: its reference; (b) holds: both boxes travel more than MOVES.
STAYS, SHORT, MOVES = 1e-3, 0.1, 0.05
#: The large box's masses tried (kg) and the compliant contact stiffnesses for (a) (N/m).
MASSES = (20.0, 40.0, 60.0, 80.0, 120.0, 160.0, 240.0, 320.0, 480.0, 640.0)
STIFFNESSES = (3e4, 3e3)
#: The paper's (a), "simple PD", is explicit PD: on the arm's 0.5 kg fist unstable at K = 2000 with
#: dt = 1/120 s, so it runs at 1/1200 s.
PD_DT = 1 / 1200


def travel(r) -> tuple[float, float, float]:
    """Small box, large box travel and how far the hand ends behind its reference (m)."""
    from tracker.scenes.desk import LARGE_BOX, SMALL_BOX

    return (float(r.small_x[-1] - SMALL_BOX["x"]), float(r.large_x[-1] - LARGE_BOX["x"]),
            float(r.hand_ref_x[-1] - r.hand_x[-1]))


def last_contact(r) -> float | None:
    """When the arm last pressed a box (s), or None if it still does at the end of the run."""
    import numpy as np

    touch = np.flatnonzero(r.hand_force > 0)
    if touch.size and touch[-1] == len(r.t) - 1:
        return None
    return float(r.t[touch[-1]]) if touch.size else 0.0


def holds_c(r) -> bool:
    _, large, short = travel(r)
    return abs(large) < STAYS and short > SHORT


def holds_b(r) -> bool:
    small, large, _ = travel(r)
    return small > MOVES and large > MOVES


LCP_RUNS = (  # label, controller, K, f0, step1
    ("vt lcp, step 1 sees the arm's own contacts, K = 2000", "vt", K_STIFF, "lcp", "own"),
    ("vt lcp, step 1 sees the arm's own contacts, K = 110", "vt", K_SOFT, "lcp", "own"),
    ("vt lcp, step 1 sees every contact, K = 2000", "vt", K_STIFF, "lcp", "all"),
    ("vt lcp, step 1 sees every contact, K = 110", "vt", K_SOFT, "lcp", "all"),
    ("vt id (contact-blind f0), K = 2000", "vt", K_STIFF, "id", "all"),
    ("vt id (contact-blind f0), K = 110", "vt", K_SOFT, "id", "all"),
    ("SPD, no f0, K = 2000", "spd", K_STIFF, "id", "all"),
    ("SPD, no f0, K = 110", "spd", K_SOFT, "id", "all"),
)


PB_RUNS = (  # label, controller, K, f0, dt, options
    ("simple PD (explicit), K = 2000, dt = 1/1200 s", "pd", K_STIFF, "id", PD_DT, {}),
    ("stiff SPD, K = 1e5, no f0", "spd", 1e5, "id", 1 / 120, {}),
    ("vt id, K = 2000", "vt", K_STIFF, "id", 1 / 120, {}),
    ("vt id, K = 110", "vt", K_SOFT, "id", 1 / 120, {}),
    ("vt peek, K = 2000", "vt", K_STIFF, "peek", 1 / 120, {}),
    ("vt peek, K = 110", "vt", K_SOFT, "peek", 1 / 120, {}),
    ("vt lcp (own contacts; the LCP is a model of PyBullet), K = 2000", "vt", K_STIFF, "lcp", 1 / 120,
     {"step1": "own"}),
    ("vt lcp (own contacts; the LCP is a model of PyBullet), K = 110", "vt", K_SOFT, "lcp", 1 / 120,
     {"step1": "own"}),
    ("SPD, no f0, K = 2000", "spd", K_STIFF, "id", 1 / 120, {}),
    ("SPD, no f0, K = 110", "spd", K_SOFT, "id", 1 / 120, {}),
)
