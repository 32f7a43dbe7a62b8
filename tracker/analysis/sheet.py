"""Contact sheets: source skeleton and retargeted character side by side (matplotlib)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from tracker.character.kinematics import Kinematics
from tracker.motion.motion import Motion
from tracker.retarget.joint_map import JointMap, select_joint_map
from tracker.retarget.reference import Reference

SOURCE_COLOUR = "#4a6fa5"
CHAR_COLOUR = "#e07b39"


def _used_joints(motion: Motion, joint_map: JointMap) -> set[int]:
    """Source joints on the chains the joint map uses: every mapped point up to the joint that
    joins them all (their lowest common ancestor). Helper bones above the body (a CC_Base
    export's ``RL_BoneRoot`` on the floor, parent of ``CC_Base_Hip``) are not on these chains,
    nor are twist, share and finger bones off them."""
    sk = motion.skeleton
    names = {joint_map.canonical(n): i for i, n in enumerate(sk.names)}

    def chain(j: int) -> list[int]:  # j, its parent, ... the root
        out = []
        while j >= 0:
            out.append(j)
            j = int(sk.parents[j])
        return out

    chains = [chain(names[point.split("/")[0]]) for spec in joint_map.links.values() for point in spec.points()
              if point.split("/")[0] in names]
    if not chains:
        return set()
    common = set(chains[0]).intersection(*chains[1:])
    top = next(j for j in chains[0] if j in common)  # the lowest joint on every chain
    used: set[int] = set()
    for c in chains:
        used.update(c[:c.index(top) + 1])
    return used


def _source_segments(motion: Motion, ref: Reference, joint_map: JointMap) -> np.ndarray:
    """Source bones ``(F, B, 2, 3)`` turned and scaled like the retargeted clip, standing on z = 0."""
    q = ref.quality
    drop = int(q.get("dropped_frames", 0))
    pos, _ = motion.global_transforms()
    pos = pos[drop:]
    turn = Rotation.from_rotvec([0, 0, -q.get("heading_rad", 0.0)])
    used = sorted(_used_joints(motion, joint_map))
    origin = pos[0, used[0]] * [1, 1, 0]
    pos = turn.apply((pos - origin).reshape(-1, 3)).reshape(pos.shape) * q.get("scale", 1.0)
    pos[..., 2] -= pos[:, used, 2].min()
    parents = motion.skeleton.parents
    segs = [np.stack([pos[:, p], pos[:, j]], axis=1) for j, p in enumerate(parents) if p >= 0 and p in used and j in used]
    return np.stack(segs, axis=1)


def _character_segments(kin: Kinematics, q: np.ndarray) -> np.ndarray:
    pos, rot = kin.forward(q)
    segs = []
    for j in kin.joints:
        segs.append(np.stack([pos[j.parent], pos[j.child]], axis=1))
    # short stubs for terminal links so head, hands and feet read
    for link, d in (("head", (0, 0, 0.2)), ("left_hand", (0, 0, -0.15)), ("right_hand", (0, 0, -0.15)),
                    ("left_foot", (0.18, 0, -0.05)), ("right_foot", (0.18, 0, -0.05))):
        if link in pos:
            segs.append(np.stack([pos[link], pos[link] + rot[link].apply(d)], axis=1))
    return np.stack(segs, axis=1)


CONTACT_COLOUR = "#2a9d4b"


def contact_sheet(
    motion: Motion, ref: Reference, kin: Kinematics, path: str | Path, n: int = 8, title: str = "",
    frames: "np.ndarray | None" = None,
) -> Path:
    """Draw ``n`` evenly spaced frames (or the given clip ``frames``): front view (top row) and
    side view (middle row), and the feet's contact labels over the whole clip (bottom strip).

    Each panel shows the source (blue, left) and the character (orange, right), one leg
    length apart, on a common scale; a character foot in contact is drawn green with a dot
    where it meets the floor, and the panel's title names the feet on the ground (L, R).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    joint_map = select_joint_map(motion.skeleton, ref.quality.get("joint_map") or ref.quality.get("convention"))
    src = _source_segments(motion, ref, joint_map)
    f = min(len(src), ref.n_frames)
    if frames is None:
        frames = np.linspace(0, f - 1, n).round().astype(int)
    frames = np.asarray(frames, dtype=int)
    n = len(frames)
    chars = _character_segments(kin, ref.q[frames])
    pos, rot = kin.forward(ref.q[frames])
    contacts = ref.contacts if ref.contacts is not None else np.zeros((ref.n_frames, 2), bool)
    gap = 1.0
    fig = plt.figure(figsize=(2.1 * n, 7.0))
    grid = fig.add_gridspec(3, n, height_ratios=[1, 1, 0.22])
    axes = np.array([[fig.add_subplot(grid[r, c]) for c in range(n)] for r in range(2)])
    feet = ("left_foot", "right_foot")
    foot_segments = len(chars[0]) - 2  # the last two stubs are the feet (see _character_segments)
    for col, fr in enumerate(frames):
        s = src[fr]
        c = chars[col]
        centre_s = s.reshape(-1, 3).mean(axis=0)
        centre_c = c.reshape(-1, 3).mean(axis=0)
        on = contacts[fr]
        for row, (hor, sign, label) in enumerate(((1, 1, "front"), (0, 1, "side"))):  # front: seen from +X
            ax = axes[row, col]
            for segs, centre, shift, colour in ((s, centre_s, -gap / 2, SOURCE_COLOUR), (c, centre_c, gap / 2, CHAR_COLOUR)):
                for i, (a, b) in enumerate(segs):
                    col_i = colour
                    if colour == CHAR_COLOUR and i >= foot_segments and on[i - foot_segments]:
                        col_i = CONTACT_COLOUR
                    ax.plot([sign * (a[hor] - centre[hor]) + shift, sign * (b[hor] - centre[hor]) + shift],
                            [a[2], b[2]], color=col_i, lw=2 if colour == CHAR_COLOUR else 1.2,
                            solid_capstyle="round")
            for k, foot in enumerate(feet):
                if on[k]:
                    p = pos[foot][col]
                    ax.plot([sign * (p[hor] - centre_c[hor]) + gap / 2], [0.0], "o", color=CONTACT_COLOUR, ms=4)
            ax.axhline(0, color="#888888", lw=0.8)
            ax.set_xlim(-1.1, 1.1)
            ax.set_ylim(-0.05, 2.0)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                down = "+".join(x for x, o in zip("LR", on) if o) or "none"
                timing = ref.timing  # clip time, and the file frame it came from
                where = "" if timing is None else \
                    f"\nfile frame {round(fr / ref.fps * timing.file_fps) + timing.first_file_frame}"
                ax.set_title(f"clip t = {fr / ref.fps:.2f} s  [{down}]{where}", fontsize=9)
            if col == 0:
                ax.set_ylabel(label)
    strip = fig.add_subplot(grid[2, :])
    t = np.arange(ref.n_frames) / ref.fps
    for k, name in enumerate(("left", "right")):
        strip.fill_between(t, 1 - k - 0.4, 1 - k + 0.4, where=contacts[:, k], step="mid", color=CONTACT_COLOUR,
                           alpha=0.8, linewidth=0)
    for fr in frames:
        strip.axvline(fr / ref.fps, color=CHAR_COLOUR, lw=1)
    strip.set_yticks([1, 0], ["left foot", "right foot"], fontsize=8)
    strip.set_ylim(-0.6, 1.6)
    strip.set_xlim(0, t[-1] if len(t) > 1 else 1)
    strip.set_xlabel("clip time (s): feet on the ground (green); drawn frames (orange)", fontsize=8)
    strip.tick_params(labelsize=8)
    q = ref.quality
    if "foot_float_median_m" in q:
        note = (f"float median {q['foot_float_median_m'] * 1000:.1f} mm, skating {q['foot_skating_mps']:.2f} m/s "
                f"(source {q.get('source_skating_mps', 0):.2f}), bone cos min {q['bone_cos_min']:.2f}")
    else:
        note = ""
    fig.suptitle((title or f"{Path(ref.source).name}: source (blue) and retargeted character (orange), "
                  "feet in contact green") + (f"\n{note}" if note else ""), fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def impact_sheet(rec, kin: Kinematics, path: str | Path, offsets: tuple[float, ...] = (-0.15, -0.05, 0.0, 0.05, 0.15,
                 0.3, 0.6), radii: tuple[float, ...] = (), title: str = "") -> Path:
    """Frames around the first ball contact of a run (side view, seen from the character's right).

    Top row: the reference (blue, left) and the simulated character (orange, right) side by
    side, the ball drawn as a red circle where it was. Bottom row: the two overlaid, so the
    deviation the ball caused shows. ``offsets`` are times relative to the first contact (s);
    ``radii`` the balls' radii (m).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    t_c = min((e["t"] for e in rec.events), default=rec.t[len(rec.t) // 2])
    idx = [int(np.argmin(np.abs(rec.t - (t_c + o)))) for o in offsets]
    sim = _character_segments(kin, rec.q[idx])
    ref = _character_segments(kin, rec.q_ref[idx])
    n = len(idx)
    fig, axes = plt.subplots(2, n, figsize=(2.4 * n, 5.4), squeeze=False)
    gap = 0.75
    for col, i in enumerate(idx):
        centre = rec.q_ref[i, 0:3]
        for row in range(2):
            ax = axes[row, col]
            shift_ref, shift_sim = ((-gap, gap) if row == 0 else (0.0, 0.0))
            for segs, colour, lw, shift in ((ref[col], SOURCE_COLOUR, 1.6, shift_ref), (sim[col], CHAR_COLOUR, 2.0, shift_sim)):
                for a, b in segs:
                    ax.plot([a[0] - centre[0] + shift, b[0] - centre[0] + shift], [a[2], b[2]], color=colour, lw=lw,
                            solid_capstyle="round", alpha=0.9 if row == 0 else 0.75)
            if rec.balls is not None and rec.balls.size:
                for k in range(rec.balls.shape[1]):
                    p = rec.balls[i, k]
                    if np.isfinite(p).all():
                        r = radii[k] if k < len(radii) else 0.11
                        ax.add_patch(Circle((p[0] - centre[0] + shift_sim, p[2]), r, color="#c0392b", alpha=0.85))
            ax.axhline(0, color="#888888", lw=0.8)
            ax.set_xlim(-1.5, 1.9) if row == 0 else ax.set_xlim(-0.9, 1.3)
            ax.set_ylim(-0.05, 2.0)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
            if row == 0:
                dt_rel = rec.t[i] - t_c
                ax.set_title("contact" if abs(dt_rel) < rec.dt / 2 else f"{dt_rel:+.2f} s", fontsize=9)
        axes[0, 0].set_ylabel("side by side")
        axes[1, 0].set_ylabel("overlaid")
    fig.suptitle(title or "reference (blue) and simulated (orange) around the first contact; ball in red", fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
