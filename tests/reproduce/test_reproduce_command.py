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
