"""A humanoid fitted to a source skeleton: the same joints, limits and gains, the subject's segment lengths.

``tracker model fit CLIP.bvh [--mass KG] -o DIR`` and ``--model fit`` build it
with the generator of the default humanoid (:mod:`tracker.character.humanoid_urdf`):

* lengths are medians over the clip's frames (a rig's rest pose may be
  contorted, and twist bones make some distances pose-dependent): thigh (hip to knee), shank (knee
  to ankle), upper arm (shoulder to elbow), forearm (elbow to wrist), the three
  trunk segments (hip midpoint to the abdomen joint, to the chest joint, to the
  end of the chest bone: the neck base; the hips' offset in front of or behind
  the pelvis bone's line, the shoulders' before or behind the chest bone's),
  neck plus head (neck base to the head
  bone's end), the hip and shoulder spacings and how far the shoulders sit
  below the neck base; hand, foot and ankle height scale with the forearm and
  shank; box sections with stature;
* masses are de Leva's fractions of ``mass``; every inertia is that of the
  same box or sphere; joint limits, gain groups and torque limits are the
  default humanoid's (``data/humanoid/humanoid.yaml``).

Models are cached by a hash of the skeleton (names, parents, offsets) and the
mass (another clip of the same skeleton reuses the first one's model), in ``$TRACKER_CACHE/fitted`` (default ``~/.cache/tracker/fitted``), so a
second use of the same skeleton loads the cached files. Beside each cached model, ``fit.json``
records the skeleton (without the mass), the mass and when ``tracker model fit`` last made or
reused it: ``--model fit`` (:func:`fit_for_clip`) takes the skeleton's latest fit, whatever its
mass (so ``tracker model fit CLIP --mass 80`` then ``--model fit`` uses the 80 kg one, and says
so), and fits a 70 kg humanoid when the cache has none.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from tracker.character.humanoid_urdf import (
    DEFAULT_SEGMENTS,
    Segments,
    build_links,
    standing_root_height,
    urdf_text,
)
from tracker.errors import ModelError
from tracker.paths import HUMANOID_DIR

#: Changes whenever the fitting rules change, so stale cached models are not reused.
FIT_VERSION = 3
DEFAULT_MASS_KG = 70.0
#: The record beside a cached fitted model: its skeleton, mass and last use by ``tracker model fit``.
RECORD = "fit.json"
#: The fits :func:`fit_for_clip` has already named in this process (each is said once).
_SAID: set[str] = set()


def cache_root() -> Path:
    """Where fitted models are cached."""
    base = os.environ.get("TRACKER_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "tracker") / "fitted"


def skeleton_hash(skeleton, mass: float | None) -> str:
    """Hex digest of the skeleton's names, parents and offsets (to 1 µm) and the mass (None: the skeleton alone)."""
    h = hashlib.sha256()
    h.update((f"v{FIT_VERSION};{mass:.6f};" if mass is not None else f"v{FIT_VERSION};skeleton;").encode())
    h.update("\n".join(skeleton.names).encode())
    h.update(np.asarray(skeleton.parents, np.int64).tobytes())
    h.update(np.round(np.asarray(skeleton.offsets, float), 6).tobytes())
    h.update(np.round(np.asarray(skeleton.end_site_offsets, float), 6).tobytes())
    return h.hexdigest()


def measure(motion, joint_map=None, mass: float = DEFAULT_MASS_KG) -> tuple[Segments, dict]:
    """The fitted body's :class:`Segments` and the source lengths measured (m), by name.

    Raises:
        ModelError: a limb or trunk segment of zero length (a missing limb), or ``mass <= 0``.
        RetargetError: no joint map fits, or the map's joints are missing from the skeleton.
    """
    from tracker.retarget.joint_map import JointMap, select_joint_map

    if not (mass > 0 and np.isfinite(mass)):
        raise ModelError(f"mass must be a positive number of kg, got {mass!r}")
    src_name = motion.source.path if motion.source else "clip"
    jmap = joint_map if isinstance(joint_map, JointMap) else select_joint_map(motion.skeleton, joint_map, src_name)
    from tracker.retarget.retarget import SourcePoints

    L = jmap.links
    # distances are medians over the clip's frames: a rig's rest pose may be contorted (CC_Base),
    # and joints between two points (twist bones, a LowerBack) make their distance pose-dependent
    posed = SourcePoints(motion, jmap)

    def med(link: str) -> np.ndarray:
        return posed(L[link].joint)

    def dist(a: np.ndarray, b: np.ndarray, what: str) -> float:
        d = float(np.median(np.linalg.norm(np.atleast_2d(a - b), axis=-1)))
        if d < 1e-3:
            raise ModelError(f"{src_name}: cannot fit a humanoid: the {what} has zero length in the skeleton "
                             f"(joint map {jmap.name}); a limb is missing")
        return d

    m: dict[str, float] = {}
    for side in ("left", "right"):
        m[f"{side}_thigh"] = dist(med(f"{side}_shin"), med(f"{side}_thigh"), f"{side} thigh (hip to knee)")
        m[f"{side}_shank"] = dist(med(f"{side}_foot"), med(f"{side}_shin"), f"{side} shank (knee to ankle)")
        m[f"{side}_upper_arm"] = dist(med(f"{side}_forearm"), med(f"{side}_upper_arm"), f"{side} upper arm")
        m[f"{side}_forearm"] = dist(med(f"{side}_hand"), med(f"{side}_forearm"), f"{side} forearm")
    hip_l, hip_r = med("left_thigh"), med("right_thigh")
    sh_l, sh_r = med("left_upper_arm"), med("right_upper_arm")
    head_end = posed.bone(L["head"])[1]
    neck_base = posed.bone(L["chest"])[1]
    # the trunk in the clip's own poses (a rig's rest pose may be contorted), median over frames
    f_hipmid = 0.5 * (med("left_thigh") + med("right_thigh"))
    f_neck = posed.bone(L["chest"])[1]
    f_shoulders = 0.5 * (med("left_upper_arm") + med("right_upper_arm"))

    def mdist(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.median(np.linalg.norm(a - b, axis=1)))

    trunk = mdist(f_neck, f_hipmid)
    if trunk < 1e-3:
        raise ModelError(f"{src_name}: cannot fit a humanoid: the trunk (hip midpoint to neck base) has zero "
                         f"length (joint map {jmap.name}); a limb is missing")
    # The hips need not lie on the pelvis bone's line (CMU-MB: 5 cm in front of it): the lower
    # trunk is the distance along the bone, the rest an offset of the hips along the pelvis's +X.
    p_start = posed.bone(L["pelvis"])[0]
    u = med("abdomen") - p_start
    u /= np.linalg.norm(u, axis=1, keepdims=True).clip(min=1e-9)
    d = med("abdomen") - f_hipmid
    along = np.sum(d * u, axis=1)
    across = med("left_thigh") - med("right_thigh")
    fwd = np.cross(across, u)
    fwd /= np.linalg.norm(fwd, axis=1, keepdims=True).clip(min=1e-9)
    hip_x = float(np.median(np.sum(-(d - along[:, None] * u) * fwd, axis=1)))
    parts = [float(np.median(along)), mdist(med("chest"), med("abdomen")), mdist(f_neck, med("chest"))]
    axis_f = (f_neck - f_hipmid) / np.linalg.norm(f_neck - f_hipmid, axis=1, keepdims=True).clip(min=1e-9)
    below = float(np.median(np.sum((f_neck - f_shoulders) * axis_f, axis=1)))
    # the shoulders' offset in front of or behind the chest bone's line, along the chest's +X
    cu = f_neck - med("chest")
    cu /= np.linalg.norm(cu, axis=1, keepdims=True).clip(min=1e-9)
    cf = np.cross(med("left_upper_arm") - med("right_upper_arm"), cu)
    cf /= np.linalg.norm(cf, axis=1, keepdims=True).clip(min=1e-9)
    shoulder_x = float(np.median(np.sum((f_shoulders - f_neck) * cf, axis=1)))
    base = DEFAULT_SEGMENTS.lengths
    de_leva_trunk = [base["lower_trunk"], base["middle_trunk"], base["upper_trunk"]]
    default_split = min(parts) < 0.12 * trunk
    if default_split:  # a joint at the hips or the neck: keep de Leva's split of the trunk
        parts = [trunk * x / sum(de_leva_trunk) for x in de_leva_trunk]
    else:
        parts = [trunk * x / sum(parts) for x in parts]  # the straight chain has the measured length
    m["trunk"] = trunk
    m["hip_width"] = dist(hip_l, hip_r, "hip spacing")
    m["shoulder_width"] = dist(sh_l, sh_r, "shoulder spacing")
    m["neck_head"] = dist(head_end, neck_base, "neck and head (neck base to head end)")

    thigh = 0.5 * (m["left_thigh"] + m["right_thigh"])
    shank = 0.5 * (m["left_shank"] + m["right_shank"])
    upper_arm = 0.5 * (m["left_upper_arm"] + m["right_upper_arm"])
    forearm = 0.5 * (m["left_forearm"] + m["right_forearm"])
    neck_head = DEFAULT_SEGMENTS.neck + base["head"]
    r_head = m["neck_head"] / neck_head
    r_shank = shank / base["shank"]
    lengths = dict(base)
    lengths.update(thigh=thigh, shank=shank, upper_arm=upper_arm, forearm=forearm,
                   lower_trunk=parts[0], middle_trunk=parts[1], upper_trunk=parts[2],
                   head=base["head"] * r_head, hand=base["hand"] * forearm / base["forearm"],
                   foot=base["foot"] * r_shank)
    seg = Segments(lengths=lengths, ankle_height=DEFAULT_SEGMENTS.ankle_height * r_shank,
                   neck=DEFAULT_SEGMENTS.neck * r_head, hip_y=m["hip_width"] / 2,
                   hip_x=float(np.clip(hip_x, -0.1, 0.1)) if not default_split else 0.0, shoulder_y=m["shoulder_width"] / 2,
                   shoulder_x=float(np.clip(shoulder_x, -0.1, 0.1)),
                   shoulder_below_supr=float(np.clip(below, -0.05, 0.15)), mass=float(mass))
    seg = seg.with_(breadth=seg.stature / DEFAULT_SEGMENTS.stature)
    m["stature"] = seg.stature
    return seg, m


def write_model(seg: Segments, out_dir: str | Path, name: str, measured: dict | None = None) -> Path:
    """Write ``NAME.urdf`` and ``NAME.yaml`` (the default humanoid's groups and limits) into ``out_dir``.

    Returns:
        the model YAML path.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"{out}: cannot create the model folder ({exc.strerror or exc})") from None
    links = build_links(seg)
    header = ("<!-- GENERATED by tracker model fit: a humanoid fitted to a source skeleton.\n"
              f"     {seg.stature:.3f} m / {seg.mass:.1f} kg; segment lengths from the source, "
              "de Leva 1996 mass fractions.")
    base = yaml.safe_load((HUMANOID_DIR / "humanoid.yaml").read_text())
    base.update(name=name, urdf=f"{name}.urdf", standing_root_height=round(standing_root_height(links), 6),
                description=f"humanoid fitted to a source skeleton: {seg.stature:.3f} m, {seg.mass:.1f} kg "
                            "(de Leva mass fractions; the default humanoid's joints, limits and gains)")
    text = ("# GENERATED by tracker model fit; source lengths (m): "
            + ", ".join(f"{k} {v:.3f}" for k, v in sorted((measured or {}).items())) + "\n"
            + yaml.safe_dump(base, sort_keys=False))
    for path, body in ((out / f"{name}.urdf", urdf_text(links, header)), (out / f"{name}.yaml", text)):
        tmp = path.with_suffix(path.suffix + ".tmp")
        try:
            tmp.write_text(body)
            tmp.replace(path)
        except OSError as exc:
            raise ModelError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return out / f"{name}.yaml"


def fit_model(clip: str | Path, mass: float = DEFAULT_MASS_KG, out_dir: str | Path | None = None,
              joint_map=None, unit: str | None = None) -> tuple[Path, bool]:
    """Build (or reuse from the cache) the humanoid fitted to ``clip``'s skeleton.

    Args:
        clip: a BVH file.
        mass: total mass, kg (> 0).
        out_dir: write the model there (default: the cache folder for this skeleton).
        joint_map: joint map name or file (default: detected).
        unit: BVH length unit override.

    Returns:
        ``(model YAML path, whether it came from the cache)``.

    Raises:
        ModelError: bad mass, a missing limb, an unreadable cache.
    """
    from tracker.motion.bvh import read_bvh

    if not (isinstance(mass, (int, float)) and mass > 0 and np.isfinite(mass)):
        raise ModelError(f"--mass must be a positive number of kg, got {mass!r}")
    return _fit_motion(read_bvh(clip, unit=unit), float(mass), out_dir, joint_map)


def _fit_motion(motion, mass: float, out_dir: str | Path | None, joint_map) -> tuple[Path, bool]:
    key = skeleton_hash(motion.skeleton, mass)
    name = f"fit_{key[:12]}"
    cached = cache_root() / key[:16] / f"{name}.yaml"
    if out_dir is None and cached.exists():
        _check_cached(cached)
        _record(cached, motion.skeleton, mass)
        return cached, True
    seg, measured = measure(motion, joint_map, mass)
    path = write_model(seg, out_dir if out_dir is not None else cached.parent, name, measured)
    from tracker.character.model import load_model

    load_model(path)  # validate what was written
    if out_dir is None:
        _record(path, motion.skeleton, mass)
    return path, False


def _check_cached(path: Path) -> None:
    from tracker.character.model import load_model

    try:
        load_model(path)
    except ModelError as exc:
        raise ModelError(f"fitted-model cache {path.parent} is unreadable ({exc}); delete the folder "
                         "and fit again") from None


def _record(path: Path, skeleton, mass: float) -> None:
    """Write ``fit.json`` beside a cached model: its skeleton, mass and this use's time."""
    record = {"skeleton": skeleton_hash(skeleton, None), "mass_kg": mass, "model": path.name,
              "fitted_at": time.time()}
    try:
        (path.parent / RECORD).write_text(json.dumps(record) + "\n")
    except OSError as exc:
        raise ModelError(f"{path.parent / RECORD}: cannot write ({exc.strerror or exc})") from None


def cached_fits(skeleton) -> list[tuple[float, float, Path]]:
    """``(fitted_at, mass_kg, model YAML)`` of every cached fit of ``skeleton``, oldest first."""
    key = skeleton_hash(skeleton, None)
    out = []
    root = cache_root()
    for rec in root.glob(f"*/{RECORD}") if root.is_dir() else ():
        try:
            data = json.loads(rec.read_text())
            if data["skeleton"] != key:
                continue
            path = rec.parent / str(data["model"])
            if path.is_file():
                out.append((float(data["fitted_at"]), float(data["mass_kg"]), path))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged record: that fit is simply not offered
    return sorted(out)


def fit_for_clip(clip: str | Path, unit: str | None = None) -> tuple[Path, float]:
    """What ``--model fit`` uses for ``clip``: the latest cached fit of its skeleton, else a new 70 kg one.

    "Latest" is the last one ``tracker model fit`` made or reused (any ``--mass``). When that is not
    the 70 kg default, or the cache holds several masses, one line on stderr names the mass and the
    file (once per process).

    Returns:
        ``(model YAML path, mass in kg)``.

    Raises:
        ModelError: a missing limb, an unreadable cache.
    """
    from tracker.motion.bvh import read_bvh

    motion = read_bvh(clip, unit=unit)
    fits = cached_fits(motion.skeleton)
    if not fits:
        return _fit_motion(motion, DEFAULT_MASS_KG, None, None)[0], DEFAULT_MASS_KG
    _, mass, path = fits[-1]
    _check_cached(path)
    masses = sorted({m for _, m, _ in fits})
    if (mass != DEFAULT_MASS_KG or len(masses) > 1) and str(path) not in _SAID:
        _SAID.add(str(path))
        others = [f"{m:g}" for m in masses if m != mass]
        also = f"; also cached: {', '.join(others)} kg" if others else ""
        print(f"model fit: the {mass:g} kg humanoid fitted last to {Path(clip).name}'s skeleton "
              f"(tracker model fit --mass KG chooses){also}: {path}", file=sys.stderr)
    return path, mass


def resolve_model(spec: str, clip: str | Path | None) -> str:
    """``spec`` unchanged, or for ``"fit"`` the YAML of the humanoid fitted to ``clip`` (:func:`fit_for_clip`)."""
    if spec != "fit":
        return spec
    if clip is None or Path(clip).suffix.lower() != ".bvh":
        raise ModelError("model 'fit' needs a BVH clip to fit the humanoid to")
    return str(fit_for_clip(clip)[0])
