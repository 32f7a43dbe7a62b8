#!/usr/bin/env python3
"""Generate ``data/humanoid/humanoid.urdf``: an anthropometric 1.75 m / 70 kg humanoid.

Usage::

    python scripts/build_humanoid.py            # (re)write data/humanoid/humanoid.urdf
    python scripts/build_humanoid.py --check    # exit 1 if the file on disk is stale
    python scripts/build_humanoid.py --render docs/humanoid_zero_pose.png
                                                # offscreen picture of the zero pose (TinyRenderer)

The generator (anthropometry, zero pose and axes, shapes and inertia) is
:mod:`tracker.character.humanoid_urdf`; ``tracker model fit`` uses it too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
OUT = REPO / "data" / "humanoid" / "humanoid.urdf"

from tracker.character.humanoid_urdf import (  # noqa: E402
    _xyz,
    build_links,
    standing_root_height,
    urdf_text,
)


def render_zero_pose(path: Path, width: int = 640, height: int = 720) -> None:
    """Render the humanoid standing in the zero pose with PyBullet's TinyRenderer (DIRECT, no display).

    Two views side by side: front three-quarter and left side. Axis markers at
    (0.5, -0.6, 0): red +X (the facing direction), green +Y (its left), blue +Z.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pybullet as p
    import pybullet_data

    sys.path.insert(0, str(REPO))
    from tracker.character.character import Character

    cid = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=cid)
        p.loadURDF("plane.urdf", physicsClientId=cid)
        char = Character.load(cid, "humanoid")
        origin = np.array([0.5, -0.6, 0.0])
        for axis, rgba in ((0, [0.9, 0.1, 0.1, 1]), (1, [0.1, 0.7, 0.1, 1]), (2, [0.1, 0.2, 0.9, 1])):
            half = np.full(3, 0.012)
            half[axis] = 0.12
            center = origin.copy()
            center[axis] += 0.12
            vis = p.createVisualShape(p.GEOM_BOX, halfExtents=half.tolist(), rgbaColor=rgba, physicsClientId=cid)
            p.createMultiBody(0, -1, vis, center.tolist(), physicsClientId=cid)
        target = [0.1, 0.0, 0.86]
        views = []
        for eye in ([2.5, 1.6, 1.45], [0.0, 3.0, 1.15]):
            view = p.computeViewMatrix(eye, target, [0, 0, 1], physicsClientId=cid)
            proj = p.computeProjectionMatrixFOV(40.0, width / height, 0.05, 20.0, physicsClientId=cid)
            img = p.getCameraImage(width, height, view, proj, renderer=p.ER_TINY_RENDERER,
                                   lightDirection=[2.0, 1.0, 3.0], shadow=1, physicsClientId=cid)
            views.append(np.reshape(np.asarray(img[2], dtype=np.uint8), (height, width, 4))[:, :, :3])
        char.remove()
    finally:
        p.disconnect(cid)
    gap = np.full((height, 8, 3), 255, dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    plt.imsave(path, np.concatenate([views[0], gap, views[1]], axis=1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the URDF on disk is up to date")
    parser.add_argument("-o", "--output", type=Path, default=OUT, help=f"output path (default: {OUT})")
    parser.add_argument("--render", type=Path, default=None, metavar="PNG",
                        help="also render the zero pose offscreen to this PNG (needs the URDF written first)")
    args = parser.parse_args(argv)
    links = build_links()
    text = urdf_text(links)
    if args.check:
        current = args.output.read_text() if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run python scripts/build_humanoid.py", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    total = sum(lk.mass for lk in links)
    print(f"wrote {args.output}: {len(links)} links, {total:.3f} kg, "
          f"standing root height {standing_root_height(links):.6f} m")
    for lk in links:
        kind, dims = lk.shape
        volume = np.prod(dims) if kind == "box" else 4.0 / 3.0 * np.pi * dims[0] ** 3
        print(f"  {lk.name:16s} {lk.mass:7.3f} kg  {kind:6s} {_xyz(dims):24s} density {lk.mass / volume / 1000:5.2f} kg/L")
    if args.render is not None:
        render_zero_pose(args.render)
        print(f"wrote {args.render}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
