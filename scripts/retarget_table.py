"""The retargeting tables of ``docs/retargeting.md``: every shared clip and every capture of the test set.

    python scripts/retarget_table.py            # print both tables (markdown)
    python scripts/retarget_table.py --check    # exit 1, naming the line, if docs/retargeting.md differs

Each clip is retargeted with no ``--map`` and the default options; the columns are the
acceptance numbers of any-humanoid retargeting (bone-direction cosine min, stature, lower-foot
float median, the joint longest at its limit, frame 0 on the floor) and how the file was read.
The shared clips are read from ``../shared/mocap`` beside the checkout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "mocap"
WILD = ROOT / "tests" / "data" / "bvh_wild"
DOC = ROOT / "docs" / "retargeting.md"
BEGIN, END = "<!-- retarget_table: begin -->", "<!-- retarget_table: end -->"


def row(path: Path, kin) -> str:
    from tracker.motion.bvh import read_bvh
    from tracker.retarget import load_clip_reference

    motion = read_bvh(path)
    ref = load_clip_reference(path)
    q, src = ref.quality, motion.source
    n = q["frames"]
    worst = max(q["clamped_by_joint"].items(), key=lambda kv: kv[1], default=("-", 0))
    low0 = float(kin.lowest_point(ref.q[:1], ["left_foot", "right_foot"])[0])
    read = f"{src.unit}, {src.up_axis} up" + (", mirrored" if src.mirrored else "")
    limit = f"{worst[0]} {100 * worst[1] / n:.0f} %" if worst[1] else "none"
    return (f"| `{path.name}` | {q['convention']} | {read} | {src.stature_m:.2f} | {q['bone_cos_min']:.3f} | "
            f"{_mm(q['foot_float_median_m'])} | {limit} | {'yes' if ref.contacts[0].any() else 'no'}, {_mm(low0)} | "
            f"{len(q['warnings'])} |")


def _mm(metres: float) -> str:
    """Millimetres to one decimal, without a minus sign on a rounded zero."""
    text = f"{metres * 1000:.1f}"
    return "0.0" if text == "-0.0" else text


def tables() -> str:
    from tracker.character.model import load_model

    kin = load_model("humanoid").kinematics()
    head = ("| clip | map | read as | stature m | bone cos min | float median mm | longest at a limit | "
            "frame 0 down, sole mm | warnings |\n|---|---|---|---:|---:|---:|---|---|---:|")
    out = ["Shared clips (`../shared/mocap`, known conventions):", "", head]
    out += [row(p, kin) for p in sorted(SHARED.glob("*.bvh"))]
    manifest = json.loads((WILD / "manifest.json").read_text())
    out += ["", "The test set (`tests/data/bvh_wild`, conventions no shipped map knows):", "", head]
    out += [row(WILD / e["file"], kin) for e in manifest]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with docs/retargeting.md instead of printing")
    args = ap.parse_args()
    text = tables()
    if not args.check:
        print(text)
        return 0
    page = DOC.read_text()
    committed = page[page.index(BEGIN) + len(BEGIN):page.index(END)].strip().splitlines()
    for k, (a, b) in enumerate(zip(committed, text.splitlines())):
        if a != b:
            print(f"{DOC}: table line {k + 1} differs:\n  page: {a}\n  now:  {b}", file=sys.stderr)
            return 1
    if len(committed) != len(text.splitlines()):
        print(f"{DOC}: the table has {len(committed)} lines, the command gives {len(text.splitlines())}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
