"""Where ``tracker optimize`` starts: a first frame a few millimetres up is settled onto the floor, and
a clip whose start cannot stand starts at its first planted frame.

A free root starts from the clip's pose at ``clip.start`` (``tracker run`` and the search's rollouts
alike). Two starts do not hold:

* **Hovering.** The feet a few millimetres above the floor (a capture floor a little off, a pose
  file's ``height``): nothing touches, and balance refuses to start (it needs a foot on the ground
  for its support polygon). When the feet are the lowest links and at most :data:`SETTLE_MAX_M`
  up, the root of the whole clip is lowered by that gap up to the first frame whose feet reach the
  floor, and back over :data:`SETTLE_FADE_S` after it (all of a clip that never reaches it): the
  soles start on ``z = 0``, and the engine's contact manifolds are then filled as for every
  balanced start (:meth:`tracker.sim.world.World.settle_contacts`). The lowered reference is saved
  next to the result (``reference.npz``) and the replay's config tracks it, so ``tracker run`` of
  that config starts where the search did.
* **In the air** (a jump's take-off, a clip cut mid-stride): the run starts at the first frame from
  ``clip.start`` on where the reference's contact labels plant a foot, settled as above if needed.

Whatever still cannot stand is refused, as before, with what touches the ground instead.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tracker.errors import ConfigError

#: Most a first frame's feet may hover above the floor to be settled onto it, m.
SETTLE_MAX_M = 0.02
#: Gaps below this are left alone (the engine's contacts already hold them), m.
SETTLE_MIN_M = 1e-4
#: Time over which the lowering fades out after the first frame whose feet reach the floor, s.
SETTLE_FADE_S = 0.2


@dataclass(frozen=True)
class Start:
    """The start an optimisation uses.

    Attributes:
        config: the config to search (``clip.start`` moved to the planted frame, if it was).
        reference: the lowered reference to save and track (``reference.npz``), or None.
        settled_m: how far the first frame was lowered, m (0: not at all).
        moved_from: ``clip.start`` before it moved to the first planted frame (None: it did not move).
        file_frame: the clip file's frame of the new start (when it moved).
    """

    config: object
    reference: object | None = None
    settled_m: float = 0.0
    moved_from: float | None = None
    file_frame: int | None = None

    def notes(self) -> list[str]:
        """One line per change, for the user."""
        out = []
        if self.moved_from is not None:
            out.append(f"starting at clip time {self.config.clip.start:.3f} s (file frame {self.file_frame}): "
                       f"the first frame where a foot is planted (the clip at {self.moved_from:g} s cannot stand)")
        if self.settled_m > 0:
            out.append(f"settled the first frame {1000 * self.settled_m:.1f} mm down onto the floor "
                       "(the replay tracks the lowered clip, reference.npz)")
        return out

    def with_reference_at(self, path) -> object:
        """The config tracking the lowered reference saved at ``path`` (the config itself without one)."""
        if self.reference is None:
            return self.config
        clip = dataclasses.replace(self.config.clip, path=str(path), joint_map=None, ik="off", fps=None)
        return self.config.replace(clip=clip)


def plan_start(cfg) -> tuple[Start, object]:
    """The start of ``cfg`` (module docstring) and its prepared config (the lowered reference in it).

    Raises:
        ConfigError: naming the clip, the time and what touches the ground instead, when neither the
            start nor the first planted frame can stand.
    """
    from tracker.experiments.runner import build

    prep = build(cfg)
    start, prep2, where = _try(cfg, prep)
    if start is not None:
        return start, prep2
    ref = prep.reference
    frame = _first_planted_frame(ref, cfg.clip.start)
    if frame is not None:
        t = frame / ref.fps
        moved = cfg.replace(clip=dataclasses.replace(cfg.clip, start=t))
        if cfg.duration is not None and cfg.clip.end is None:
            moved = moved.replace(sim=dataclasses.replace(cfg.sim, duration=min(cfg.duration, ref.duration - t)))
        start, prep2, _ = _try(moved, build(moved))
        if start is not None:
            timing = ref.timing
            file_frame = (int(round(timing.file_time_of_clip_time(t) * timing.file_fps)) if timing is not None
                          else frame)
            return dataclasses.replace(start, moved_from=cfg.clip.start, file_frame=file_frame), prep2
    raise ConfigError(f"{cfg.clip.path}: the model cannot stand at t = {cfg.clip.start:g} s: {where} "
                      f"(feet: {', '.join(prep.model.feet)})"
                      + ("" if frame is None else f", nor at its first planted frame ({frame / ref.fps:.3f} s)")
                      + "; optimize needs a clip that starts on its feet")


def _try(cfg, prep) -> tuple[Start | None, object, str]:
    """``(start, prepared, "")`` when ``cfg`` stands at its start (settled if it hovers), else
    ``(None, prepared, what touches the ground instead)``."""
    gap = _hover(prep)
    lowered = None
    if SETTLE_MIN_M < gap <= SETTLE_MAX_M:
        lowered = settled_reference(prep.reference, cfg.clip.start, gap, prep.model)
        prep = dataclasses.replace(prep, reference=lowered)
    where = _stands(prep)
    if where:
        return None, prep, where
    return Start(cfg, lowered, gap if lowered is not None else 0.0), prep, ""


def _feet_low(ref, model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lowest foot point, lowest point of the other links)`` per state of ``q`` ``(F, nq)``, m."""
    kin = model.kinematics()
    feet = list(model.feet)
    others = [link for link in kin.links if link not in feet]
    return kin.lowest_point(q, feet), kin.lowest_point(q, others)


def _hover(prep) -> float:
    """How far the feet hover above the floor at the start, m (0: they touch or are lower than another link)."""
    q0 = prep.reference.sample(prep.config.clip.start)[0]
    if not prep.model.feet:
        return 0.0
    feet, others = _feet_low(prep.reference, prep.model, q0[None])
    return float(feet[0]) if feet[0] > 0 and feet[0] <= others[0] else 0.0


def settled_reference(ref, t0: float, gap: float, model):
    """``ref`` with its root lowered by ``gap`` m from clip time ``t0`` to the first frame whose feet reach
    the floor, and fading back over :data:`SETTLE_FADE_S` after it (the root's vertical velocity to
    match); a clip that never reaches the floor is lowered whole. A new reference (``ref`` unchanged)."""
    from tracker.retarget.reference import MIN_FPS, Reference

    feet, _ = _feet_low(ref, model, ref.q)
    i0 = int(np.floor(t0 * ref.fps))
    down = np.flatnonzero(feet[i0:] <= SETTLE_MIN_M)
    shift = np.full(ref.n_frames, gap)
    rate = np.zeros(ref.n_frames)
    if len(down):
        t = np.arange(ref.n_frames) / ref.fps
        t_down = (i0 + down[0]) / ref.fps
        fade = np.clip((t - t_down) / SETTLE_FADE_S, 0.0, 1.0)
        shift = gap * (1.0 - fade)
        rate = np.where((fade > 0) & (fade < 1), gap / SETTLE_FADE_S, 0.0)
    q, v = ref.q.copy(), ref.v.copy()
    q[:, 2] -= shift
    v[:, 2] += rate
    out = Reference(q, v, ref.fps, ref.joints, ref.model, ref.source, ref.quality, ref.contacts)
    # a pose file's constant reference has two frames 600 s apart, slower than a saved reference may be
    return out.resample(MIN_FPS) if out.fps < MIN_FPS else out


def _stands(prep) -> str:
    """"" when a foot touches the ground at the start in the engine (contacts settled), else what does."""
    from tracker.experiments.runner import make_simulation
    from tracker.sim.support import support_of, touching_links

    cfg = prep.config
    # the probe runs without balance: a balanced simulation refuses to be built on no feet
    probe_cfg = cfg.replace(controller=dataclasses.replace(
        cfg.controller, balance=dataclasses.replace(cfg.controller.balance, enabled=False)))
    sim = make_simulation(dataclasses.replace(prep, config=probe_cfg, options=dataclasses.replace(
        prep.options, balance=None)))  # a throwaway simulation: settling contacts changes the engine's caches
    try:
        sim.world.settle_contacts(sim.character)
        if not support_of(sim.character, sim.world.ground).empty:
            return ""
        others = touching_links(sim.character, sim.world.ground)
        return f"only {', '.join(others)} touch the ground" if others else "nothing touches the ground"
    finally:
        sim.close()


def _first_planted_frame(ref, t0: float) -> int | None:
    """The first reference frame at or after clip time ``t0`` whose contact labels plant a foot (None:
    no labels, or none planted)."""
    labels = getattr(ref, "contacts", None)
    if labels is None:
        return None
    i0 = int(np.ceil(t0 * ref.fps - 1e-9))
    hits = np.flatnonzero(np.asarray(labels, bool)[i0:].any(axis=1))
    return int(i0 + hits[0]) if len(hits) else None
