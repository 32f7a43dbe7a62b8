"""Sampling-based control: rollouts from saved states, offset tracks, and the optimisers that search them.

* :mod:`.rollout` — simulate a window from a saved state with a given offset track; its cost and end state.
* :mod:`.pool` — many rollouts in parallel through the sweep backends (local processes, Ray).
* :mod:`.cost` — the tracking cost of a rollout (pose, root, end effectors, balance).
* :mod:`.toy` — GAMES105's PD-driven point mass tracking ``sin t``: least squares, CMA-ES, L-BFGS.

Engine states are saved and restored by :mod:`tracker.sim.snapshot`; the offset tracks they search
(PD targets ``reference ⊕ Δ(t)``, piecewise linear on knots, and their file) are :mod:`tracker.sim.offsets`.
"""
