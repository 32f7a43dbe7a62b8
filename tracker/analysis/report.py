"""``report.md``: a one-page summary of a run linking its plots, video and data files."""

from __future__ import annotations

import math
from pathlib import Path

from tracker.atomic import write_text_atomic

PLOT_TITLES = {
    "joint_error": "Tracking error over time",
    "gains": "Gains over time (impacts marked)",
    "joint_angles": "Reference vs simulated angles of the most deviated joints",
    "balls": "Ball trajectories",
}
FILE_TITLES = {
    "config": "resolved config",
    "metrics": "metrics",
    "timing": "wall-clock timing",
    "recording": "recording (every step)",
    "baseline": "ball-free baseline recording",
    "video": "video (simulated: orange; reference: green, beside it)",
}


#: Significant digits of every measured number in the report.
DIGITS = 3


def sig(v: float, digits: int = DIGITS) -> str:
    """``v`` to ``digits`` significant digits in plain notation, without trailing zeros
    (``0.00861``, ``17.6``, ``0.15``, ``25000``); below 1e-6 of a unit it reads ``0``."""
    if not math.isfinite(v) or abs(v) < 1e-6:
        return "0" if math.isfinite(v) else str(v)
    decimals = max(digits - 1 - math.floor(math.log10(abs(v))), 0)
    text = f"{v:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _num(x, unit: str = "", scale: float = 1.0) -> str:
    """A number with its unit, :data:`DIGITS` significant digits; ``—`` for none, yes/no for a flag."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{sig(x * scale)}{(' ' + unit) if unit else ''}"
    return str(x)


def _length(x) -> str:
    """A length given in m: in mm below 1 m (the errors and depths the report shows), else in m."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return _num(x)
    return _num(x, "mm", 1000.0) if abs(x) < 1.0 else _num(x, "m")


def _angle(x) -> str:
    """An angle given in rad: in rad, and in degrees after it (``0.307 rad (17.6°)``)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return _num(x)
    return f"{_num(x, 'rad')} ({sig(math.degrees(x))}°)"


def _direction(d) -> str:
    """A unit vector as ``(+0.91, +0.26, +0.33)`` and the elevation above the horizontal."""
    if not d:
        return "—"
    x, y, z = (float(a) for a in d)
    elevation = math.degrees(math.asin(max(-1.0, min(1.0, z))))
    return f"({x:+.2f}, {y:+.2f}, {z:+.2f}), {elevation:+.0f}° up"


def clip_time_text(t, timing: dict | None = None) -> str:
    """A clip time as ``0.792 s`` plus, when the clip's file timing is known, its file frame
    (``0.792 s (file frame 96)``; ``≈`` between frames)."""
    if t is None:
        return "—"
    text = f"{t:.3f} s"
    if timing:
        frame = t * timing["file_fps"] + timing["first_file_frame"]
        near = round(frame)
        text += f" (file frame {near})" if abs(frame - near) < 1e-3 else f" (file frame ≈{frame:.1f})"
    return text


def ground_text(ball: dict, timing: dict | None = None) -> str:
    """Where a ball (a :class:`~tracker.scenarios.ball_scenario.BallOutcome` dict) is at the end of
    the run: ``on the ground``, ``bouncing on the ground`` (it landed and is between bounces) or
    ``in the air``, with the clip time it first landed (``ground_time``) when it did."""
    landed = ball.get("ground_time")
    since = "" if landed is None else f", landed at clip time {clip_time_text(landed, timing)}"
    if ball.get("on_ground"):
        return "on the ground" + since
    return "in the air" if landed is None else "bouncing on the ground" + since


def ball_table(cfg, balls: list, timing: dict | None = None) -> list[str]:
    """One markdown table row per ball: aim, timing, links, exit velocity, outcome.

    Times are clip time; ``timing`` (the metrics' ``clip_timing``) adds their file frames."""
    rows = [b for b in balls if isinstance(b, dict)]
    if not rows:
        return []
    out = ["### Balls", "",
           "| ball | target link | planned time (clip time) | first contact (clip time) | links touched | exit speed "
           "| exit direction | outcome | at the end |",
           "|---|---|---:|---|---|---:|---|---|---|"]
    for i, b in enumerate(rows):
        preset = cfg.balls[i].preset if i < len(cfg.balls) else b.get("name", "")
        first = b.get("first_contact_time")
        contact = "none" if first is None else f"{b.get('first_contact_link')} at {clip_time_text(first, timing)}"
        links = ", ".join(b.get("links") or []) or "—"
        fate = b.get("outcome") or ("caught" if b.get("caught") else "")
        end = ground_text(b, timing)
        if b.get("caught"):
            end = f"held {b.get('held_time', 0.0):.2f} s"
        out.append(f"| {i}: {preset} | {b.get('target_link', '—')} | {clip_time_text(b.get('planned_impact_time'), timing)} "
                   f"| {contact} | {links} | {_num(b.get('exit_speed'), 'm/s')} "
                   f"| {_direction(b.get('exit_direction'))} | {fate or '—'} | {end} |")
    return out + [""]


def report_markdown(cfg, metrics: dict, files: dict[str, str]) -> str:
    """The report text (markdown; links are relative to the result folder)."""
    lines = [f"# {cfg.name}", ""]
    if cfg.description:
        lines += [cfg.description, ""]
    status = metrics.get("status", "ok")
    if status != "ok":
        lines += [f"**{status.upper()}**: {metrics.get('message', '')}. The files below hold what ran before.", ""]
    g = cfg.controller.gains
    gains = "model groups" if g.k_t is None else (f"k_t = {g.k_t:g}" + (" per kg supported" if g.inertia_scaling else ""))
    if g.scale != 1:
        gains += f", ×{g.scale:g}"
    dur = cfg.duration
    timing = metrics.get("clip_timing")
    given = getattr(cfg, "file_times", {}) or {}

    def ball_time(i: int, b) -> str:
        g = given.get(f"balls.{i}.impact_time")
        return f"clip time {clip_time_text(b.impact_time, timing)}" + (f", given as {g['given']}" if g else "")

    lines += [
        "## Setup", "",
        "| | |", "|---|---|",
        f"| model | {cfg.model if '/' not in cfg.model else Path(cfg.model).name} |",
        f"| clip | `{Path(cfg.clip.path).name}` from clip time {clip_time_text(cfg.clip.start, timing)}"
        + (f", given as {given['clip.start']['given']}" if "clip.start" in given else "") + " |",
        *([f"| clip time | 0 = file frame {timing['first_file_frame']} of the file "
           f"({timing['file_fps']:.8g} fps); every time below is clip time |"] if timing else []),
        f"| controller | {cfg.controller.name}, target velocity {cfg.controller.target_velocity} |",
        f"| gains | {gains}, kd {g.kd_mode} |",
        f"| root | {cfg.root.mode} |",
        f"| time step | {_num(cfg.sim.dt, 's')} ({_num(1 / cfg.sim.dt, 'Hz')}) |",
        f"| simulated | {_num(metrics.get('sim_time_s'), 's')} ({metrics.get('steps', 0)} steps"
        f"{'' if dur is None else f' of {round(dur / cfg.sim.dt)}'}) |",
        f"| balls | {len(cfg.balls)}{'' if not cfg.balls else ': ' + ', '.join(f'{b.preset} at {b.target_link} {b.speed:g} m/s, {ball_time(i, b)}' for i, b in enumerate(cfg.balls))} |",
        f"| gain schedule | {'on: k_r ' + (f'{cfg.schedule.k_r:g}' if cfg.schedule.k_r is not None else f'{cfg.schedule.k_r_ratio:g}·k_t') + f', t_e {cfg.schedule.t_e:g} s, t_f {cfg.schedule.t_f:g} s, {cfg.schedule.scope}' if cfg.schedule.enabled else 'off'} |",
        "",
        "## Tracking", "",
        "| metric | value |", "|---|---:|",
        f"| mean joint error | {_angle(metrics.get('joint_error_mean_rad'))} |",
        f"| max joint error | {_angle(metrics.get('joint_error_max_rad'))} |",
        f"| mean root error | {_length(metrics.get('root_error_mean_m'))} |",
        f"| mean end-effector error | {_length(metrics.get('ee_error_mean_m'))} |",
        f"| feet below the ground (deepest / 95th percentile) | "
        f"{_length(metrics.get('foot_penetration_max_m'))} / {_length(metrics.get('foot_penetration_p95_m'))} |",
        f"| torque saturation | {_num(metrics.get('torque_saturation'), '%', 100)} |",
        f"| mean effort | {_num(metrics.get('effort_mean_nm'), 'N·m')} |",
        f"| diverged / fell | {_num(metrics.get('diverged'))} / {_num(metrics.get('fell'))} |",
    ]
    if metrics.get("fell_at_s") is not None:  # tracker.sim.fall: when and why
        lines.append(f"| fell at | clip time {clip_time_text(metrics.get('fell_at_s'), timing)}: "
                     f"{metrics.get('fall_reason') or 'the free root fell'} |")
    lines += [
        "",
    ]
    imp = metrics.get("impact")
    if imp:
        lines += [
            "## Impact response (against the same run without balls)", "",
            "| metric | value |", "|---|---:|",
            f"| contact events | {imp.get('impacts', 0)} (first at clip time {clip_time_text(imp.get('first_impact_s'), timing)}) |",
            f"| peak deviation | {_angle(imp.get('peak_deviation_rad'))} at clip time {clip_time_text(imp.get('peak_time_s'), timing)} |",
            f"| peak root deviation | {_length(imp.get('peak_root_deviation_m'))} |",
            f"| time to recover (< {_angle(imp.get('recover_threshold_rad'))} for {_num(imp.get('recover_hold_s'), 's')}) | "
            f"{_num(imp.get('time_to_recover_s'), 's') if imp.get('recovered') else 'not recovered'} |",
            "",
        ]
        lines += ball_table(cfg, imp.get("balls") or [], timing)
    if metrics.get("compared"):
        lines += compared_table(metrics, timing)
    plots = [k for k in PLOT_TITLES if k in files]
    if plots or "video" in files:
        lines += ["## Plots", ""]
        if "video" in files:
            lines += [f"Video: [{files['video']}]({files['video']}) — {FILE_TITLES['video']}.", ""]
        for k in plots:
            lines += [f"### {PLOT_TITLES[k]}", "", f"![{PLOT_TITLES[k]}]({files[k]})", ""]
    lines += ["## Files", ""]
    for k, title in FILE_TITLES.items():
        if k in files:
            lines.append(f"- [{files[k]}]({files[k]}): {title}")
    lines.append("")
    return "\n".join(lines)


def compared_table(metrics: dict, timing: dict | None = None) -> list[str]:
    """``## Against the … root``: this run's fall, ball outcome, peak deviation and recovery beside the
    same scenario's with another root mode (``metrics["compared"]``, :func:`~tracker.experiments.runner.
    compared_run`)."""
    other = metrics["compared"]
    runs = [(metrics.get("root", "this run"), metrics, metrics.get("impact") or {}),
            (other.get("root"), other, other.get("impact") or {})]

    def fell(m):
        t = m.get("fell_at_s")
        return "no" if t is None else f"at {clip_time_text(t, timing)}: {m.get('fall_reason') or 'fell'}"

    def ball(imp, key, fmt):
        b = (imp.get("balls") or [{}])[0] or {}
        return fmt(b.get(key))

    def recover(imp):
        return _num(imp.get("time_to_recover_s"), "s") if imp.get("recovered") else "not recovered"

    rows = [("fell", fell), ("mean joint error", lambda m: _angle(m.get("joint_error_mean_rad")))]
    irows = [
        ("ball 0: first contact", lambda i: ball(i, "first_contact_link", lambda x: x or "none")
         + ball(i, "first_contact_time", lambda t: "" if t is None else f" at clip time {clip_time_text(t, timing)}")),
        ("ball 0: exit speed", lambda i: ball(i, "exit_speed", lambda x: _num(x, "m/s"))),
        ("ball 0: outcome", lambda i: ball(i, "outcome", lambda x: x or "—")),
        ("peak deviation", lambda i: _angle(i.get("peak_deviation_rad"))),
        ("peak root deviation", lambda i: _length(i.get("peak_root_deviation_m"))),
        ("time to recover", recover),
    ]
    head = " | ".join(f"{r} root" for r, _, _ in runs)
    lines = [f"## Against the {other.get('root')} root", "",
             f"The same scenario with `root.mode: {other.get('root')}` (run by the same command).", "",
             f"| | {head} |", "|---|" + "---:|" * len(runs)]
    lines += [f"| {name} | " + " | ".join(fn(m) for _, m, _ in runs) + " |" for name, fn in rows]
    lines += [f"| {name} | " + " | ".join(fn(i) for _, _, i in runs) + " |" for name, fn in irows]
    return lines + [""]


def write_report(path: str | Path, cfg, metrics: dict, files: dict[str, str]) -> Path:
    """Write ``report.md`` atomically."""
    return write_text_atomic(path, report_markdown(cfg, metrics, files))
