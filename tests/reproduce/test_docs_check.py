"""Every paper page matches its reproduction: ``tracker reproduce NAME --check`` on each.

Each check reruns the full reproduction (they are kept to about a minute each: long searches are
replayed from committed tracks) and compares the numbers it writes with the blocks of
``docs/NAME.md``; a page that no longer matches the code fails here, naming its line.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tracker import reproduce


@pytest.mark.parametrize("name", reproduce.names())
def test_the_paper_page_matches_a_fresh_run(name: str, tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tracker", "reproduce", name, "--check", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "matches the run" in proc.stderr
