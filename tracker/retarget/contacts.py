"""Foot contacts of a source clip: per-frame labels from heel and toe height and speed.

Each foot has two source points: the *heel* (the ankle joint) and the *toe*
(the end of the foot bone: the toe joint or the foot's End Site). A point is
on the ground while it is low and slow, with hysteresis so noise does not make
the label chatter:

* it *enters* contact when its height above the clip's floor is below
  :attr:`ContactParams.height_on` and its speed below :attr:`ContactParams.speed_on`;
* it *stays* in contact until its height exceeds ``height_off`` or its speed
  ``speed_off``.

Heights and speeds are measured on the source scaled to the character (root
motion is scaled by leg length), so the thresholds are in the character's
metres whatever the source's unit or size. The floor of each point type is the
lower of the two feet's 5th-percentile heights: a point resting on the ground
sits at its own height above the floor (the ankle joint some 7 cm, the toe
joint 2-3 cm), and both feet share it. Runs shorter than ``min_duration``
seconds are dropped and gaps shorter than ``max_gap`` seconds are filled.

A foot is in contact when its heel or its toe is; it is *flat* when both are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d

#: Order of the feet in contact arrays.
FOOT_LINKS = ("left_foot", "right_foot")


@dataclass(frozen=True)
class ContactParams:
    """Thresholds of the contact labels, in the character's metres and seconds."""

    height_on: float = 0.035
    height_off: float = 0.045
    speed_on: float = 0.35
    speed_off: float = 0.5
    min_duration: float = 0.05
    max_gap: float = 0.05
    smooth_s: float = 0.01


@dataclass(frozen=True)
class FootContacts:
    """Contact labels of both feet.

    Attributes:
        contact: ``(F, 2)`` bool, foot (heel or toe) on the ground; columns follow :data:`FOOT_LINKS`.
        flat: ``(F, 2)`` bool, heel and toe both on the ground.
        heel: ``(F, 2)`` bool, heel on the ground.
        toe: ``(F, 2)`` bool, toe on the ground.
        clearance: ``(F, 2)`` height of the source foot's lower point (heel or toe) above its
            floor, scaled to the character, m (>= 0).
        source_speed: ``(F, 2)`` horizontal speed of the source's contact point (the heel, or the
            toe when only the toe is down), scaled to the character, m/s (central differences).
    """

    contact: np.ndarray
    flat: np.ndarray
    heel: np.ndarray
    toe: np.ndarray
    source_speed: np.ndarray
    clearance: np.ndarray | None = None


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[start, stop)`` index ranges where ``mask`` is true."""
    d = np.diff(np.r_[0, mask.astype(np.int8), 0])
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def clean_runs(mask: np.ndarray, min_len: int, max_gap: int) -> np.ndarray:
    """Fill gaps shorter than ``max_gap`` frames, then drop runs shorter than ``min_len``."""
    out = mask.copy()
    runs = _runs(out)
    for (a0, b0), (a1, _) in zip(runs[:-1], runs[1:]):
        if a1 - b0 < max_gap:
            out[b0:a1] = True
    for a, b in _runs(out):
        if b - a < min_len:
            out[a:b] = False
    return out


def hysteresis(height: np.ndarray, speed: np.ndarray, p: ContactParams) -> np.ndarray:
    """Contact of one point per frame ``(F,)`` from its height above the floor and its speed."""
    on = (height < p.height_on) & (speed < p.speed_on)
    stay = (height < p.height_off) & (speed < p.speed_off)
    out = np.zeros(len(height), dtype=bool)
    state = False
    for t in range(len(height)):  # a state machine: F is a few thousand at most
        state = bool(stay[t]) if state else bool(on[t])
        out[t] = state
    return out


def detect_contacts(heel: np.ndarray, toe: np.ndarray, fps: float, params: ContactParams | None = None) -> FootContacts:
    """Label foot contacts from source heel and toe trajectories.

    Args:
        heel: ``(F, 2, 3)`` heel (ankle joint) positions of the left and right foot, scaled to
            the character, Z up, m.
        toe: ``(F, 2, 3)`` toe positions, same frame.
        fps: frames per second.
        params: thresholds (defaults: :class:`ContactParams`).
    """
    p = params or ContactParams()
    f = heel.shape[0]
    sigma = p.smooth_s * fps
    labels = {}
    speeds = {}
    heights = {}
    for name, pts in (("heel", heel), ("toe", toe)):
        floor = min(float(np.percentile(pts[:, k, 2], 5)) for k in range(2))
        heights[name] = np.clip(pts[..., 2] - floor, 0.0, None)
        raw = np.gradient(pts, axis=0) * fps if f > 1 else np.zeros_like(pts)
        # labels from lightly smoothed speeds (marker jitter); the reported sliding from raw ones,
        # measured as the character's is
        vel = gaussian_filter1d(raw, sigma, axis=0, mode="nearest") if sigma > 0.3 and f > 3 else raw
        speed = np.linalg.norm(vel, axis=-1)
        speeds[name] = np.linalg.norm(raw[..., :2], axis=-1)
        labels[name] = np.stack([hysteresis(pts[:, k, 2] - floor, speed[:, k], p) for k in range(2)], axis=1)
    min_len = max(1, int(round(p.min_duration * fps)))
    max_gap = max(1, int(round(p.max_gap * fps)))
    contact = np.stack([clean_runs(labels["heel"][:, k] | labels["toe"][:, k], min_len, max_gap) for k in range(2)],
                       axis=1)
    heel_c = labels["heel"] & contact
    toe_c = labels["toe"] & contact
    flat = heel_c & toe_c
    # The point that touches: the toe when only the toe is down, else the heel.
    src_speed = np.where(toe_c & ~heel_c, speeds["toe"], speeds["heel"])
    return FootContacts(contact, flat, heel_c, toe_c, src_speed, np.minimum(heights["heel"], heights["toe"]))
