"""The library of solved tracks: ``data/tracks/<name>/`` and ``configs/free/<name>.yaml`` (issue 32, item 5).

A search's result folder (``tracker optimize CLIP --out DIR``) is shipped with :func:`ship`
(``python scripts/ship_track.py DIR NAME --command "..."``)::

    data/tracks/<name>/offsets.npz     the offset track
    data/tracks/<name>/optimize.json   the search's record (stages, rollouts, settings)
    data/tracks/<name>/optimize.md     its report
    data/tracks/<name>/reference.npz   only when the search lowered a hovering first frame: the clip it tracked
    data/tracks/<name>/replay.json     the search's own replay: its metrics and the digest of its recording
    configs/free/<name>.yaml           the replay's config, its paths relative to the file

``tracker run configs/free/<name>.yaml`` then replays the free-root character in seconds, and its
recording has the digest the search's replay had (:func:`recording_digest`;
``tests/sampling/test_tracks.py`` replays every shipped config).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import yaml

#: The metrics a shipped track's ``replay.json`` keeps.
KEPT_METRICS = ("fell", "fell_at_s", "joint_error_mean_rad", "root_error_mean_m", "foot_penetration_max_m")


def recording_digest(rec) -> str:
    """SHA-256 of a recording's time, state and torque arrays (float64, C order): equal digests are equal runs."""
    h = hashlib.sha256()
    for name in ("t", "q", "v", "tau"):
        a = np.ascontiguousarray(getattr(rec, name), dtype=np.float64)
        h.update(name.encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def ship(result: Path, name: str, repo: Path, command: str) -> tuple[Path, Path]:
    """Copy the search in ``result`` into ``repo``'s library as ``name``; returns ``(track folder, config)``."""
    from tracker.sim.recording import Recording

    result, repo = Path(result), Path(repo)
    track_dir = repo / "data" / "tracks" / name
    cfg_path = repo / "configs" / "free" / f"{name}.yaml"
    track_dir.mkdir(parents=True, exist_ok=True)
    cfg_path.parent.mkdir(parents=True, exist_ok=True)
    for f in ("offsets.npz", "optimize.json", "optimize.md", "reference.npz"):
        if (result / f).is_file():
            shutil.copyfile(result / f, track_dir / f)
    raw = yaml.safe_load((result / "config.yaml").read_text())
    rel = lambda p: os.path.relpath(p, cfg_path.parent)  # noqa: E731
    clip = Path(raw["clip"]["path"])
    raw["clip"]["path"] = rel(track_dir / "reference.npz") if clip.name == "reference.npz" else \
        rel(repo.parent / "shared" / "mocap" / clip.name) if "shared" in clip.parts else rel(_in_repo(clip, repo))
    raw["controller"]["offsets"] = rel(track_dir / "offsets.npz")
    raw["name"] = f"{name}-free"
    metrics = json.loads((result / "metrics.json").read_text())
    shown = {k: metrics.get(k) for k in KEPT_METRICS}
    header = (f"# A free-root character on {clip.name}, on its shipped SAMCON track (data/tracks/{name}/).\n"
              f"#   tracker run configs/free/{name}.yaml    replays it (its recording's digest is in replay.json)\n"
              f"#   tracker play configs/free/{name}.yaml   shows it in the window\n"
              f"# Found by: {command}\n"
              f"# Replay: fell {shown['fell']}, mean joint error {shown['joint_error_mean_rad']:.4f} rad, "
              f"mean root error {shown['root_error_mean_m']:.4f} m.\n")
    cfg_path.write_text(header + yaml.safe_dump(raw, sort_keys=False, width=120))
    rec = Recording.load(result / "recording.npz")
    (track_dir / "replay.json").write_text(json.dumps(
        {"command": command, "digest": recording_digest(rec), "metrics": shown}, indent=2) + "\n")
    return track_dir, cfg_path


def _in_repo(clip: Path, repo: Path) -> Path:
    """``clip`` as a file of ``repo``: the search may have run in another checkout (its ``data/...`` path is
    then taken from this one); a clip outside any repository's ``data/`` is refused (a fresh clone would
    not find it)."""
    clip = clip.resolve()
    if clip.is_relative_to(repo.resolve()):
        return clip
    if "data" in clip.parts:
        mine = repo.joinpath(*clip.parts[clip.parts.index("data"):])
        if mine.is_file():
            return mine
    raise ValueError(f"the clip {clip} is neither in {repo} nor in ../shared/mocap: ship a clip the repository has")

