"""Docs that cannot drift: ``tracker reproduce NAME --check`` / ``--write-docs`` (tracker/reproduce/blocks.py)."""

from __future__ import annotations

import sys
import types

import pytest

from tracker import reproduce
from tracker.cli import main
from tracker.reproduce.blocks import page_blocks, write_block

PAGE = """# Fake 2024

Prose the run does not own.

<!-- reproduce fake table -->
| x | ours |
|---|---|
| 1 | 0.50 |
<!-- /reproduce fake table -->

More prose.
"""


def _register(monkeypatch, tmp_path, value: float):
    def run(out, *, quick=False):
        write_block(out, "table", f"| x | ours |\n|---|---|\n| 1 | {value:.2f} |")
        (out / "report.md").write_text("# Fake 2024\n")
        return out / "report.md"

    module = types.ModuleType("fake_blocks")
    module.TITLE, module.run, module.PAGE = "Fake 2024", run, str(tmp_path / "fake.md")
    monkeypatch.setitem(sys.modules, "fake_blocks", module)
    monkeypatch.setitem(reproduce.REPRODUCTIONS, "fake", "fake_blocks")
    page = tmp_path / "fake.md"
    page.write_text(PAGE)
    return page


def test_a_page_that_matches_the_run_passes_the_check(monkeypatch, tmp_path, capsys) -> None:
    _register(monkeypatch, tmp_path, 0.5)
    assert main(["reproduce", "fake", "--check"]) == 0
    assert "matches the run (1 blocks)" in capsys.readouterr().err


def test_a_number_that_drifted_fails_naming_the_pages_line(monkeypatch, tmp_path, capsys) -> None:
    page = _register(monkeypatch, tmp_path, 0.51)
    assert main(["reproduce", "fake", "--check"]) == 5
    err = capsys.readouterr().err
    assert f"{page}:8: block 'table' differs" in err and "page: | 1 | 0.50 |" in err and "now:  | 1 | 0.51 |" in err


def test_write_docs_replaces_only_the_block_and_then_the_check_passes(monkeypatch, tmp_path, capsys) -> None:
    page = _register(monkeypatch, tmp_path, 0.75)
    assert main(["reproduce", "fake", "--write-docs", "--out", str(tmp_path / "run")]) == 0
    text = page.read_text()
    assert "| 1 | 0.75 |" in text and "Prose the run does not own." in text and text.endswith("More prose.\n")
    assert main(["reproduce", "fake", "--check"]) == 0


def test_a_block_missing_on_either_side_fails(monkeypatch, tmp_path, capsys) -> None:
    page = _register(monkeypatch, tmp_path, 0.5)
    page.write_text(PAGE.replace("table", "other"))
    assert main(["reproduce", "fake", "--check"]) == 5
    err = capsys.readouterr().err
    assert "block 'other' is on the page but the run did not write it" in err
    assert "the run wrote block 'table', which the page lacks" in err


@pytest.mark.parametrize("body, says", [
    ("<!-- reproduce fake table -->\nx\n", "is never closed"),
    ("<!-- reproduce fake a -->\n<!-- reproduce fake b -->\n", "opens inside block 'a'"),
    ("<!-- /reproduce fake a -->\n", "which is not open"),
    ("<!-- reproduce other a -->\n<!-- /reproduce other a -->\n", "a block of 'other' on the page of 'fake'"),
])
def test_a_malformed_page_is_one_line_naming_its_line_before_anything_runs(body, says, monkeypatch, tmp_path,
                                                                           capsys) -> None:
    page = _register(monkeypatch, tmp_path, 0.5)
    page.write_text("# Fake\n" + body)
    assert main(["reproduce", "fake", "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and f"{page}:" in err[0]
    with pytest.raises(Exception):
        page_blocks(page, "fake")


def test_check_refuses_quick_and_a_page_with_nothing_to_check(monkeypatch, tmp_path, capsys) -> None:
    page = _register(monkeypatch, tmp_path, 0.5)
    assert main(["reproduce", "fake", "--check", "--quick"]) == 2
    def run(out, *, quick=False):
        (out / "report.md").write_text("# F\n")
        return out / "report.md"

    monkeypatch.setattr(sys.modules["fake_blocks"], "run", run)
    page.write_text("# Fake\n")
    assert main(["reproduce", "fake", "--check"]) == 5
    assert "nothing to check" in capsys.readouterr().err


def test_write_docs_copies_the_figures_the_page_shows_from_the_run(monkeypatch, tmp_path) -> None:
    page = _register(monkeypatch, tmp_path, 0.5)
    page.write_text(PAGE + "\n![fig 1](figs/fig1.png)\n![elsewhere](https://example.org/x.png)\n")
    real = sys.modules["fake_blocks"].run

    def run(out, *, quick=False):
        (out / "fig1.png").write_bytes(b"\x89PNG drawn by the run")
        return real(out, quick=quick)

    monkeypatch.setattr(sys.modules["fake_blocks"], "run", run)
    assert main(["reproduce", "fake", "--write-docs", "--out", str(tmp_path / "run")]) == 0
    assert (tmp_path / "figs" / "fig1.png").read_bytes() == b"\x89PNG drawn by the run"
