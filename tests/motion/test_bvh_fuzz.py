"""Fuzz: no exception but BVHError may escape the reader, whatever the bytes.

Seeded mutations of real files (each shared clip cut to a few frames, the
hand-made fixture and the authored demo clip): truncations, deleted,
duplicated and swapped lines, corrupted and deleted tokens, inserted binary
bytes, flipped bits, changed line endings. Then hypothesis on raw bytes and on
a soup of BVH keywords and numbers.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracker.errors import BVHError
from tracker.motion.bvh import read_bvh_bytes
from tracker.motion.motion import Motion

from .conftest import DEMO_WAVE, FIXTURES, MOCAP_FILES

N_CASES = 360
KEEP_FRAMES = 6
TOKENS = [
    "",
    "nan",
    "inf",
    "-inf",
    "1e999",
    "1e-400",
    "-0",
    "0x1F",
    "1_000",
    "\u0661\u0662",
    "--1",
    "{",
    "}",
    "ROOT",
    "JOINT",
    "End",
    "Site",
    "OFFSET",
    "CHANNELS",
    "MOTION",
    "HIERARCHY",
    "Frames:",
    "Frame",
    "Time:",
    "Xposition",
    "Zrotation",
    "Xrot",
    "7",
    "-3",
    "99999999999",
    "0",
    "3",
    "6",
    "1e308",
    "#",
    "\t",
    "\x0c",
    "\u00e9",
    "\ufeff",
]


def _shorten(text: str, keep: int = KEEP_FRAMES) -> str:
    """The clip cut to its first ``keep`` frames, with ``Frames:`` fixed to match."""
    head, motion = text.split("MOTION", 1)
    lines = motion.strip("\r\n").splitlines()
    count = sum(1 for line in lines[2:] if line.strip())
    keep = min(keep, count)
    lines = [f"Frames: {keep}"] + lines[1 : 2 + keep]
    return head + "MOTION\n" + "\n".join(lines) + "\n"


def _bases() -> list[tuple[str, bytes]]:
    sources = [*MOCAP_FILES, FIXTURES / "tiny.bvh", DEMO_WAVE]
    return [(p.stem, _shorten(p.read_text()).encode()) for p in sources]


def _mutate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    kind = rng.choice(
        [
            "truncate",
            "delete line",
            "duplicate line",
            "swap lines",
            "corrupt token",
            "delete token",
            "insert bytes",
            "flip bits",
            "line endings",
        ]
    )
    lines = data.split(b"\n")
    i, k = rng.randrange(len(lines)), rng.randrange(len(lines))
    if kind == "truncate":
        data = data[: rng.randrange(len(data) + 1)]
    elif kind == "delete line":
        data = b"\n".join(lines[:i] + lines[i + 1 :])
    elif kind == "duplicate line":
        data = b"\n".join(lines[: i + 1] + lines[i:])
    elif kind == "swap lines":
        lines[i], lines[k] = lines[k], lines[i]
        data = b"\n".join(lines)
    elif kind in ("corrupt token", "delete token"):
        spans = [m.span() for m in re.finditer(rb"\S+", data)]
        if spans:
            a, b = rng.choice(spans)
            new = b"" if kind == "delete token" else rng.choice(TOKENS).encode()
            data = data[:a] + new + data[b:]
    elif kind == "insert bytes":
        at = rng.randrange(len(data) + 1)
        data = data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]
    elif kind == "flip bits":
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        data = bytes(buf)
    else:
        data = data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n"]))
    return data, kind


def _check(data: bytes, what: str) -> str:
    """Read ``data``; return "ok" or "error"; fail the test on any other exception."""
    try:
        motion = read_bvh_bytes(data, "fuzz.bvh")
    except BVHError as err:
        assert err.path == "fuzz.bvh" and err.reason, what
        n_lines = data.count(b"\n") + data.count(b"\r") + 1
        assert err.line is None or 1 <= err.line <= n_lines, f"{what}: line {err.line}"
        assert "\n" not in str(err), f"{what}: message is not one line"
        return "error"
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{what}: {type(exc).__name__} escaped the reader: {exc}")
    assert isinstance(motion, Motion)
    return "ok"


def test_seeded_mutations_of_real_files_raise_only_bvherror() -> None:
    rng = random.Random(20240531)
    bases = _bases()
    assert len(bases) == len(MOCAP_FILES) + 2 >= 14
    outcomes = {"ok": 0, "error": 0}
    for case in range(N_CASES):
        name, data = bases[case % len(bases)]
        kinds = []
        for _ in range(rng.randint(1, 3)):
            data, kind = _mutate(data, rng)
            kinds.append(kind)
        outcomes[_check(data, f"case {case} ({name}: {', '.join(kinds)})")] += 1
    # The mutations must exercise both paths, or the test proves little.
    assert outcomes["error"] > N_CASES // 3 and outcomes["ok"] > N_CASES // 20, outcomes


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.binary(max_size=400))
def test_random_bytes_raise_only_bvherror(data: bytes) -> None:
    _check(data, repr(data[:60]))


_LINE = st.lists(
    st.sampled_from(TOKENS + ["0.5", "-12.25", "100", "Hips", "Yrotation"]), max_size=8
).map(" ".join)


@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(_LINE, max_size=40))
def test_keyword_soup_raises_only_bvherror(lines: list[str]) -> None:
    text = "HIERARCHY\n" + "\n".join(lines)
    _check(text.encode("utf-8", "surrogatepass"), repr(text[:80]))
