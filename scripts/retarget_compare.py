"""Before and after: every shared clip's retarget numbers at an earlier commit and in this tree.

    python scripts/retarget_compare.py                   # print the table (markdown)
    python scripts/retarget_compare.py --check           # exit 1, naming the line, if docs/retargeting.md differs
    python scripts/retarget_compare.py --before REV      # another earlier commit (default e3b326d)

The earlier commit is unpacked with ``git archive`` into a temporary folder and run there, so
its own code, joint ranges and data make the "before" column. Every clip is retargeted with no
options. The bone-direction cosines of both columns are measured by this tree's report on the
two references (the feet compared with their calibrated sole direction, as this tree does), so a
change of the measure cannot pass for a change of the retarget; the other columns are each
tree's own report. Needs the repository's history (a full clone) and ``../shared/mocap``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "mocap"
DOC = ROOT / "docs" / "retargeting.md"
BEGIN, END = "<!-- retarget_compare: begin -->", "<!-- retarget_compare: end -->"
BEFORE = "e3b326d"

#: Run inside the earlier tree: the reference each clip's report was measured on, and the report's numbers.
_OLD = r"""
import json, sys, numpy as np
sys.path.insert(0, sys.argv[4])
from retarget_compare import numbers
from pathlib import Path
import tracker.retarget.retarget as R
from tracker.retarget import load_clip_reference
from tracker.character.model import load_model
kin = load_model("humanoid").kinematics()
seen = {}
real = R.quality_report
def spy(*a, **k):
    seen["q"] = np.array(a[7])
    return real(*a, **k)
R.quality_report = spy
out, qs = {}, {}
for path in sorted(Path(sys.argv[1]).glob("*.bvh")):
    ref = load_clip_reference(path)
    out[path.name] = numbers(ref, kin)
    qs[path.name] = seen["q"]
np.savez(sys.argv[2], **qs)
Path(sys.argv[3]).write_text(json.dumps(out))
"""


def numbers(ref, kin) -> dict:
    """The columns a tree's own report gives."""
    q, n = ref.quality, ref.quality["frames"]
    contacts = getattr(ref, "contacts", None)
    return {
        "clamped": q["clamped_frames"] / n,
        "worst": max(q.get("clamped_by_joint", {}).values(), default=0) / n,
        "ee_cm": 100 * q["ee_error_mean_m"],
        "float_mm": 1000 * q["foot_float_median_m"],
        "down0": bool(contacts[0].any()) if contacts is not None else None,
        "sole0_mm": 1000 * float(kin.lowest_point(ref.q[:1], ["left_foot", "right_foot"])[0]),
    }


def _earlier(rev: str, work: Path) -> tuple[dict, dict]:
    """Run the earlier commit's retarget on every shared clip: ``(numbers, references)``."""
    tree = work / "tree"
    tree.mkdir()
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(tree, filter="data")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-c", _OLD, str(SHARED), str(work / "q.npz"), str(work / "n.json"),
                    str(Path(__file__).resolve().parent)],
                   cwd=tree, env=env, check=True, capture_output=True)
    return json.loads((work / "n.json").read_text()), dict(np.load(work / "q.npz"))


def _cosines(path: Path, old_q: np.ndarray | None):
    """This tree's reference of ``path`` and the bone cosines (min, mean) of it and of ``old_q``."""
    import tracker.retarget.retarget as R
    from tracker.retarget import load_clip_reference

    real, got = R.quality_report, {}

    def spy(*a, **k):
        if old_q is not None and len(old_q) == len(a[7]):
            before = real(*a[:7], old_q, *a[8:], **k)
            got["before"] = (before["bone_cos_min"], before["bone_cos_mean"])
        return real(*a, **k)

    R.quality_report = spy
    try:
        ref = load_clip_reference(path)
    finally:
        R.quality_report = real
    return ref, got.get("before"), (ref.quality["bone_cos_min"], ref.quality["bone_cos_mean"])


def table(rev: str) -> str:
    from tracker.character.model import load_model

    kin = load_model("humanoid").kinematics()
    with tempfile.TemporaryDirectory() as tmp:
        old, old_q = _earlier(rev, Path(tmp))
    rows = [f"Before is commit `{rev}`, after is this tree (`python scripts/retarget_compare.py`).", "",
            "| shared clip | bone cos min | bone cos mean | frames clamped | longest at a limit | ee error cm | "
            "float mm | frame 0 down, sole mm |", "|---|---|---|---|---|---|---|---|"]
    for path in sorted(SHARED.glob("*.bvh")):
        ref, cb, ca = _cosines(path, old_q.get(path.name))
        a, b = numbers(ref, kin), old[path.name]
        cb = cb or ("?", "?")

        def down(x):
            return f"{'yes' if x['down0'] else 'no'}, {x['sole0_mm']:.1f}".replace("-0.0", "0.0")

        rows.append(
            f"| `{path.name}` | {cb[0]:.3f} → {ca[0]:.3f} | {cb[1]:.4f} → {ca[1]:.4f} | "
            f"{100 * b['clamped']:.0f} → {100 * a['clamped']:.0f} % | {100 * b['worst']:.0f} → {100 * a['worst']:.0f} % | "
            f"{b['ee_cm']:.1f} → {a['ee_cm']:.1f} | {b['float_mm']:.1f} → {a['float_mm']:.1f} | "
            f"{down(b)} → {down(a)} |".replace("-0.0 ", "0.0 "))
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help=f"the earlier commit (default {BEFORE})")
    ap.add_argument("--check", action="store_true", help="compare with docs/retargeting.md instead of printing")
    args = ap.parse_args()
    text = table(args.before)
    if not args.check:
        print(text)
        return 0
    page = DOC.read_text()
    committed = page[page.index(BEGIN) + len(BEGIN):page.index(END)].strip().splitlines()
    now = text.splitlines()
    for k, (a, b) in enumerate(zip(committed, now)):
        if a != b:
            print(f"{DOC}: before/after line {k + 1} differs:\n  page: {a}\n  now:  {b}", file=sys.stderr)
            return 1
    if len(committed) != len(now):
        print(f"{DOC}: the before/after table has {len(committed)} lines, the command gives {len(now)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
