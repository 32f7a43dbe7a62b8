"""``tracker reproduce``: listing, errors, and the Tan 2011 pendulum report in quick mode."""

from __future__ import annotations

import pytest

from tracker import reproduce
from tracker.cli import main


def test_list_names_every_reproduction_with_its_title(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in reproduce.names():
        assert name in out
        assert reproduce.load(name).TITLE in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["reproduce", "nope"], "unknown reproduction 'nope'; valid reproductions are: "
                                + ", ".join(reproduce.names())),
        (["reproduce"], "reproduce: name a reproduction"),
    ],
)
def test_bad_names_are_one_line_and_status_2(argv, message, capsys, tmp_path):
    assert main(argv + ["--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_tan2011_quick_writes_report_and_figure(tmp_path):
    out = tmp_path / "tan2011"
    assert main(["reproduce", "tan2011", "--quick", "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "## Tables 1–2" in report and "## Figure 4" in report
    assert "Cells within 20% of the paper: **46/48**" in report
    assert (out / "tan2011_fig4.png").stat().st_size > 10_000
    # §4.2 and §4.3 (tests/keyframes and tests/scenes check their numbers)
    assert "## §4.2 Keyframe interpolation" in report and "## §4.3 SPD for constraints" in report
    assert "| 1/60 | PD, k_p = 10 m_sub | diverged at 0.27 s |" in report
    assert "| 2400 | 1/30 | 1111 | diverged after 1 step " in report
    for fig in ("tan2011_fig5.png", "tan2011_fig6.png", "tan2011_fig6_tail.png", "tan2011_humanoid.png",
                "tan2011_fig7.png"):
        assert f"]({fig})" in report and (out / fig).stat().st_size > 10_000


def test_vt_quick_writes_report_and_figures(tmp_path):
    out = tmp_path / "vt"
    assert main(["reproduce", "vt", "--quick", "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    for section in ("## 1. Free space", "## 2. Fig. 1", "## 3. The humanoid: shared clips",
                    "## 4. The humanoid: the six ball scenarios"):
        assert section in report
    rows = {line.split("|")[1].strip(): float(line.split("|")[2]) for line in report.splitlines()
            if line.startswith(("| id |", "| peek |", "| none |"))}
    assert rows["id"] <= 1e-9 and rows["peek"] <= 1e-9  # K = 110 and 2000: the same free motion with f0
    assert rows["none"] > 1e-3  # and not without
    for fig in ("vt_free_space.png", "vt_fig1.png", "vt_humanoid.png"):
        assert (out / fig).stat().st_size > 10_000
