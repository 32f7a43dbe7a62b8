"""Draw the contact sheet of each ball scenario (frames around the impact) into docs/.

Usage::

    python scripts/scenario_sheets.py                 # all six, into docs/scenario_<name>.png
    python scripts/scenario_sheets.py --only soccer_heavy --out /tmp
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracker.analysis.sheet import impact_sheet  # noqa: E402
from tracker.commands.scenario import SCENARIOS  # noqa: E402
from tracker.experiments.config import load_config  # noqa: E402
from tracker.experiments.runner import ball_radii, build, simulate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=SCENARIOS, help="one scenario")
    parser.add_argument("--out", default=str(REPO / "docs"), help="folder for the PNGs")
    args = parser.parse_args(argv)
    for name in [args.only] if args.only else SCENARIOS:
        cfg = load_config(REPO / "configs" / f"{name}.yaml")
        prep = build(cfg)
        rec, outcome = simulate(prep)
        ball = (outcome.get("balls") or [{}])[0]
        note = f"first contact {ball.get('first_contact_link')} at {ball.get('first_contact_time', float('nan')):.2f} s"
        path = impact_sheet(rec, prep.model.kinematics(), Path(args.out) / f"scenario_{name}.png",
                            radii=ball_radii(cfg), title=f"{name}: {cfg.description} — {note}")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
