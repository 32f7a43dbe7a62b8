"""Foot contacts of a source clip: per-frame labels from heel and toe height and speed.

Each foot has two source points: the *heel* (the ankle joint) and the *toe*
(the end of the foot bone: the toe joint or the foot's End Site). A point is
on the ground while it is low and slow, with hysteresis so noise does not make
the label chatter:

* it *enters* contact when its height above its floor is below
  :attr:`ContactParams.height_on` and its speed below :attr:`ContactParams.speed_on`;
* it *stays* in contact until its height exceeds ``height_off`` or its speed
  ``speed_off``.

Heights and speeds are measured on the source scaled to the character (root
motion is scaled by leg length), so the thresholds are in the character's
metres whatever the source's unit or size. Runs shorter than ``min_duration``
seconds are dropped and gaps shorter than ``max_gap`` seconds are filled. A foot
is in contact when its heel or its toe is; it is *flat* when both are.

**Floor** (:func:`fit_floor`). Each point type rests at its own height (the
ankle joint some 7-14 cm above the floor, the toe joint 2-10 cm, by rig), and
capture floors are often tilted a little: a few centimetres over a walk, enough
to lift the late steps of a clip above ``height_on`` of a floor taken at the
clip's lowest points. The floor is fitted to the points at rest (slower than
``rest_speed``) as a plane per point type, ``z = offset[point] + slope · (x, y)``,
through a low quantile of their heights (a heel rising slowly at heel-off is at
rest but above the floor). It slopes only along directions in which the resting
points spread over ``min_slope_span`` (the path of a walk), by at most
``max_slope``.

**Hand-overs** (:func:`_hand_overs`). A walk has no flight, but its landing
heel slides in and its trailing toe rolls off faster than ``speed_on``, so the
labels alone can miss the double support between two steps, and at 24-30 fps
often do. A short gap (up to ``max_hold_s``) between one foot's last contact and
the next landing is a hand-over when the foot that was down stays low and
lifts (it does not come back down) or the foot that lands was already low and
no higher than where it lands; those frames are contact. A foot that rose
above ``height_off`` first, or came back down (a swing skimming the floor), is a
real flight and stays one.

**Starts on its feet.** A clip whose first frame has no contact but whose
lower foot is below ``height_off`` (and whose root, when given, is not falling
freely) starts standing: the foot that lands first carries it from frame 0 if it
is low until then, else the lower foot does, at least at frame 0. A clip that
starts in the air (both feet higher, or the root in free fall: a jump) keeps no
contact there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d

#: Order of the feet in contact arrays.
FOOT_LINKS = ("left_foot", "right_foot")
#: Order of the points in :attr:`Floor.offset`.
POINTS = ("heel", "toe")
#: m/s^2.
GRAVITY = 9.81


@dataclass(frozen=True)
class ContactParams:
    """Thresholds of the contact labels, in the character's metres and seconds.

    Attributes:
        height_on: a point enters contact below this height above its floor, m.
        height_off: ... and leaves it above this one, m.
        speed_on: a point enters contact below this speed, m/s.
        speed_off: ... and leaves it above this one, m/s.
        min_duration: contact runs shorter than this are dropped, s.
        max_gap: gaps between contact runs shorter than this are filled, s.
        smooth_s: Gaussian smoothing of the speeds that the labels use, s.
        rest_speed: points slower than this are samples of the floor, m/s.
        floor_quantile: quantile of the resting heights that the floor passes through, in (0, 1).
        min_slope_span: the floor's slope is fitted only when the resting points span this far
            horizontally, m (else it is level).
        max_slope: bound on the floor's slope, m per m.
        max_hold_s: a foot that stays low carries the body through a gap in the contacts up to
            this long, to the frame where a foot comes down (a hand-over, not a flight), s.
        flight_accel: a root whose vertical acceleration over the first ``flight_window_s`` is
            below ``-flight_accel`` is falling freely (a clip that starts in a jump), m/s^2.
        flight_window_s: the span over which the root's acceleration at the start is fitted, s.
    """

    height_on: float = 0.035
    height_off: float = 0.045
    speed_on: float = 0.35
    speed_off: float = 0.5
    min_duration: float = 0.05
    max_gap: float = 0.05
    smooth_s: float = 0.01
    rest_speed: float = 0.2
    floor_quantile: float = 0.2
    min_slope_span: float = 1.0
    max_slope: float = 0.05
    max_hold_s: float = 0.15
    flight_accel: float = 0.7 * GRAVITY
    flight_window_s: float = 0.15


@dataclass(frozen=True)
class FootContacts:
    """Contact labels of both feet.

    Attributes:
        contact: ``(F, 2)`` bool, foot (heel or toe) on the ground; columns follow :data:`FOOT_LINKS`.
        flat: ``(F, 2)`` bool, heel and toe both on the ground.
        heel: ``(F, 2)`` bool, heel on the ground.
        toe: ``(F, 2)`` bool, toe on the ground.
        source_speed: ``(F, 2)`` horizontal speed of the source's contact point (the heel, or the
            toe when only the toe is down), scaled to the character, m/s (central differences).
        clearance: ``(F, 2)`` height of the source foot's lower point (heel or toe) above its
            floor, scaled to the character, m (>= 0).
    """

    contact: np.ndarray
    flat: np.ndarray
    heel: np.ndarray
    toe: np.ndarray
    source_speed: np.ndarray
    clearance: np.ndarray | None = None


@dataclass(frozen=True)
class Floor:
    """The source's floor: a plane under each foot point, ``z = offset[point] + slope · (x, y)``.

    Attributes:
        offset: ``(2,)`` resting height of each of :data:`POINTS` at ``(x, y) = 0``, m.
        slope: ``(2,)`` rise of the floor per metre along x and y.
    """

    offset: np.ndarray
    slope: np.ndarray

    def height(self, pts: np.ndarray, point: int) -> np.ndarray:
        """Height ``(F, 2)`` of ``pts`` ``(F, 2, 3)`` (both feet's ``POINTS[point]``) above its floor, m."""
        return pts[..., 2] - self.offset[point] - pts[..., :2] @ self.slope


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


def _quantile_plane(xy: np.ndarray, z: np.ndarray, group: np.ndarray, n_groups: int, tau: float,
                    min_span: float) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets (n_groups,), slope (2,))`` of the plane under the ``tau`` quantile of ``z`` ``(N,)``.

    ``group`` ``(N,)`` picks each sample's offset. The plane rises only along horizontal
    directions in which the samples of a group spread over ``min_span`` (a walk's path): across
    it, a slope would only trade with the offsets. Iteratively reweighted least squares on the
    quantile (pinball) loss.
    """
    means = np.stack([xy[group == g].mean(axis=0) for g in range(n_groups)])
    within = xy - means[group]
    vals, vecs = np.linalg.eigh(within.T @ within / len(z))
    dirs = vecs[:, np.sqrt(12.0 * np.clip(vals, 0.0, None)) >= min_span]  # a uniform spread's length
    a = np.zeros((len(z), n_groups + dirs.shape[1]))
    a[np.arange(len(z)), group] = 1.0
    a[:, n_groups:] = within @ dirs  # centred per group, so the offsets are well conditioned
    coef = np.linalg.lstsq(a, z, rcond=None)[0]
    for _ in range(50):
        r = z - a @ coef
        w = np.where(r > 0, tau, 1.0 - tau) / np.maximum(np.abs(r), 1e-4)
        sw = np.sqrt(w)
        new = np.linalg.lstsq(a * sw[:, None], z * sw, rcond=None)[0]
        done = np.abs(new - coef).max() < 1e-6
        coef = new
        if done:
            break
    slope = dirs @ coef[n_groups:]
    return coef[:n_groups] - means @ slope, slope


def fit_floor(points: tuple[np.ndarray, np.ndarray], speeds: tuple[np.ndarray, np.ndarray],
              p: ContactParams) -> Floor:
    """The floor under the resting heel and toe points (module docstring).

    Args:
        points: heel and toe positions, each ``(F, 2, 3)``, m.
        speeds: their speeds, each ``(F, 2)``, m/s.
        p: the thresholds.
    """
    xy, z, group = [], [], []
    for j, (pts, spd) in enumerate(zip(points, speeds)):
        rest = spd < p.rest_speed  # (F, 2): both feet's samples of this point
        xy.append(pts[rest][:, :2])
        z.append(pts[rest][:, 2])
        group.append(np.full(int(rest.sum()), j))
    xy, z, group = np.concatenate(xy), np.concatenate(z), np.concatenate(group)
    present = [j for j in range(2) if np.count_nonzero(group == j) >= 3]
    offset = np.full(2, np.nan)
    slope = np.zeros(2)
    if present:
        keep = np.isin(group, present)
        xy, z, group = xy[keep], z[keep], np.searchsorted(present, group[keep])
        fitted, slope = _quantile_plane(xy, z, group, len(present), p.floor_quantile, p.min_slope_span)
        norm = float(np.linalg.norm(slope))
        if norm > p.max_slope:  # not a tilted floor (steps, a ramp): keep the bound, refit the offsets
            slope = slope * (p.max_slope / norm)
            fitted = np.array([np.quantile(z[group == g] - xy[group == g] @ slope, p.floor_quantile)
                               for g in range(len(present))])
        offset[present] = fitted
    for j in range(2):
        if np.isnan(offset[j]):  # this point never rests: its lowest heights stand in for the floor
            pts = points[j]
            offset[j] = min(float(np.percentile(pts[:, k, 2] - pts[:, k, :2] @ slope, 5)) for k in range(2))
    return Floor(offset, slope)


def _falls_freely(root_z: np.ndarray, fps: float, p: ContactParams) -> bool:
    """Whether the root's vertical motion over the clip's first ``flight_window_s`` is ballistic."""
    n = min(len(root_z), max(3, int(round(p.flight_window_s * fps)) + 1))
    if n < 3:
        return False
    t = np.arange(n) / fps
    accel = 2.0 * np.polyfit(t, root_z[:n], 2)[0]
    return bool(accel < -p.flight_accel)


def _starts_standing(clearance: np.ndarray, p: ContactParams, fps: float, root_z: np.ndarray | None) -> bool:
    """Whether the clip's first frame stands: its lower foot is low and its root (when given) is
    not falling freely."""
    if clearance[0].min() >= p.height_off:
        return False
    return root_z is None or not _falls_freely(np.asarray(root_z, float), fps, p)


def _hand_overs(contact: np.ndarray, clearance: np.ndarray, p: ContactParams, fps: float,
                root_z: np.ndarray | None) -> np.ndarray:
    """Frames ``(F, 2)`` added to the contacts where a walk hands its weight from foot to foot.

    A body on its feet does not fly unless its feet rise. Take a gap of at most ``max_hold_s``
    between the last frame ``b`` with a foot down (foot ``k``) and the next frame ``a`` where a
    foot comes down (foot ``l``). It is a hand-over, not a flight, if at some frame ``m`` of it
    both feet are down: ``k`` from ``b`` to ``m`` stays low and does not come back down from the
    highest it got (it is lifting off: a toe-off), and ``l`` from ``m`` to ``a`` is low and no
    higher than where it lands (it is landing already: a heel that slides in). ``m`` is where the higher of the two
    is lowest; ``k`` is then in contact through ``m`` and ``l`` from ``m``. "Low" is below
    ``height_off``; the tolerance is the hysteresis band ``height_off - height_on``. When ``k``
    and ``l`` are the same foot, it is in contact over the gap if it stayed low. A clip that
    ends with no foot down keeps the last one while it lifts off; one that starts standing is
    held at frame 0 (see :func:`detect_contacts`).
    """
    f = len(contact)
    held = np.zeros_like(contact)
    supported = np.flatnonzero(contact.any(axis=1))
    if len(supported) == 0:
        return held
    band = p.height_off - p.height_on
    low = clearance < p.height_off
    longest = max(1, int(round(p.max_hold_s * fps)))

    def lower(t: int) -> int:
        feet = np.flatnonzero(contact[t])
        return int(feet[np.argmin(clearance[t, feet])])

    def leaving(k: int, b: int, stop: int) -> np.ndarray:
        """Per frame of ``(b, stop)``: foot ``k``, down at ``b``, has stayed low and not come back down."""
        after = clearance[b:stop, k]
        ok = (after < p.height_off) & (after >= np.maximum.accumulate(after) - band)
        return np.cumprod(ok[1:]).astype(bool)

    for b, a in zip(supported[:-1], supported[1:]):
        if a - b > longest or (a - b == 1 and (contact[a] & contact[b]).any()):
            continue  # a flight too long for a hand-over, or a foot stays down anyway
        k, l = lower(b), lower(a)
        if k == l:  # the same foot: it has not left the floor if it stayed low
            held[b + 1:a, k] = low[b + 1:a, k].all()
            continue
        gone = np.r_[True, leaving(k, b, a + 1)]  # k held through m, for m = b .. a
        ok = low[b:a, l] & (clearance[b:a, l] <= clearance[a, l] + band)
        came = np.r_[np.cumprod(ok[::-1])[::-1].astype(bool), True]  # l held from m, for m = b .. a
        both = np.flatnonzero(gone & came)
        if len(both):
            m = b + int(both[np.argmin(np.maximum(clearance[b + both, k], clearance[b + both, l]))])
            held[b + 1:m + 1, k] = True
            held[m:a, l] = True
    last = supported[-1]
    if last < f - 1:  # the clip ends with no foot down
        k = lower(last)
        held[last + 1:, k] = leaving(k, last, f)
    first = supported[0]
    if first > 0 and _starts_standing(clearance, p, fps, root_z):
        # the foot that comes down first, if it is low until then (its contact then starts at
        # frame 0); else the lower foot, for as long as it stays low
        lands = [k for k in range(2) if contact[first, k] and low[:first, k].all()]
        k = min(lands or [0, 1], key=lambda j: clearance[0, j])
        keep = np.cumsum(~low[:first + 1, k]) == 0
        keep[0] = True
        held[:first + 1, k] |= keep
    return held


def detect_contacts(heel: np.ndarray, toe: np.ndarray, fps: float, params: ContactParams | None = None,
                    root_z: np.ndarray | None = None) -> FootContacts:
    """Label foot contacts from source heel and toe trajectories (module docstring).

    Args:
        heel: ``(F, 2, 3)`` heel (ankle joint) positions of the left and right foot, scaled to
            the character, Z up, m.
        toe: ``(F, 2, 3)`` toe positions, same frame.
        fps: frames per second.
        params: thresholds (defaults: :class:`ContactParams`).
        root_z: ``(F,)`` height of the source's hips, same frame, m; with it, a clip whose root
            falls freely at the start (a jump) is not put on its feet at frame 0.
    """
    p = params or ContactParams()
    f = heel.shape[0]
    pts = (np.asarray(heel, float), np.asarray(toe, float))
    sigma = p.smooth_s * fps
    speed, raw_xy = [], []
    for x in pts:
        raw = np.gradient(x, axis=0) * fps if f > 1 else np.zeros_like(x)
        # labels from lightly smoothed speeds (marker jitter); the reported sliding from raw ones,
        # measured as the character's is
        vel = gaussian_filter1d(raw, sigma, axis=0, mode="nearest") if sigma > 0.3 and f > 3 else raw
        speed.append(np.linalg.norm(vel, axis=-1))
        raw_xy.append(np.linalg.norm(raw[..., :2], axis=-1))
    floor = fit_floor(pts, speed, p)
    height = [floor.height(x, j) for j, x in enumerate(pts)]
    labels = [np.stack([hysteresis(height[j][:, k], speed[j][:, k], p) for k in range(2)], axis=1)
              for j in range(2)]
    min_len = max(1, int(round(p.min_duration * fps)))
    max_gap = max(1, int(round(p.max_gap * fps)))
    contact = np.stack([clean_runs(labels[0][:, k] | labels[1][:, k], min_len, max_gap) for k in range(2)],
                       axis=1)
    heel_c = labels[0] & contact
    toe_c = labels[1] & contact
    clearance = np.clip(np.minimum(height[0], height[1]), 0.0, None)
    held = _hand_overs(contact, clearance, p, fps, root_z)
    toe_lower = height[1] < height[0]
    toe_c |= held & toe_lower
    heel_c |= held & ~toe_lower
    contact |= held
    flat = heel_c & toe_c
    # The point that touches: the toe when only the toe is down, else the heel.
    src_speed = np.where(toe_c & ~heel_c, raw_xy[1], raw_xy[0])
    return FootContacts(contact, flat, heel_c, toe_c, src_speed, clearance)
