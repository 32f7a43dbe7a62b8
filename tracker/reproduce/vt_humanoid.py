"""One clip tracked on the humanoid for :mod:`tracker.reproduce.vt` (its joint error)."""

from __future__ import annotations

from pathlib import Path


def track(clip: Path, controller: str, k_t: float, duration: float | None, f0: str = "id") -> dict:
    """Track ``clip`` with ``controller`` at gain ``k_t`` (per kg) for ``duration`` s (never past its end).

    Returns:
        ``err``, ``err_max`` (mean and max joint error, rad) and ``status``.
    """
    from tracker.experiments.config import config_from_data
    from tracker.experiments.runner import build, compute_metrics, simulate
    from tracker.retarget import load_clip_reference

    raw = {"clip": {"path": str(clip)}, "controller": {"name": controller, "gains": {"k_t": k_t}},
           "sim": {"dt": "1/60"}, "outputs": {"plots": False}}
    if controller == "vt":
        raw["controller"]["vt"] = {"f0": f0}
    if duration is not None:  # never past the clip's end, where the reference stops dead
        raw["sim"]["duration"] = min(duration, load_clip_reference(clip, model="humanoid").duration - 0.02)
    cfg = config_from_data(raw, source=f"<reproduce vt: {clip.name}>")
    prep = build(cfg)
    rec, _ = simulate(prep)
    m = compute_metrics(prep, rec, None, {})
    return dict(err=m["joint_error_mean_rad"], err_max=m["joint_error_max_rad"], status=rec.status)


def scenario(name: str, overrides: list[str]) -> dict:
    """Run ball scenario ``name`` (``configs/NAME.yaml`` with ``overrides``) and its ball-free twin.

    Returns:
        peak and peak-mean deviation from the ball-free run (rad), time to recover (s), whether it
        recovered, the ball's exit speed (m/s) and whether it was caught.
    """
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, compute_metrics, simulate
    from tracker.paths import CONFIG_DIR

    cfg = load_config(CONFIG_DIR / f"{name}.yaml", overrides)
    prep = build(cfg)
    rec, outcome = simulate(prep)
    base, _ = simulate(prep, balls=False)
    imp = compute_metrics(prep, rec, base, outcome)["impact"]
    ball = (imp.get("balls") or [{}])[0]
    return dict(peak=imp["peak_deviation_rad"], peak_mean=imp["peak_mean_deviation_rad"],
                recover=imp["time_to_recover_s"], recovered=imp["recovered"],
                exit_speed=ball.get("exit_speed"), caught=ball.get("caught"))
