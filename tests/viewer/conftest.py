"""A display for the window tests: the user's, else a virtual X server of our own.

Without ``$DISPLAY`` the GUI tests start ``Xvfb`` (what ``xvfb-run`` wraps) with ``-displayfd``, so
the server itself picks a free display number: two pytest-xdist workers cannot race for one, which
``xvfb-run -a`` can. With neither a display nor Xvfb the GUI tests are skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

SCREEN = "1280x720x24"


@pytest.fixture(scope="session")
def display() -> Iterator[str]:
    """An X display for GUI windows, as ``$DISPLAY`` text."""
    if os.environ.get("DISPLAY"):
        yield os.environ["DISPLAY"]
        return
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("no display and no Xvfb (install the xvfb package)")
    read, write = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0", SCREEN, "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as f:
            number = f.readline().strip()  # written once the server accepts connections
        if not number.isdigit():
            pytest.skip(f"Xvfb did not start (exit code {proc.poll()})")
        yield f":{number}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
