"""``scripts/fuzz.py``: a small seeded campaign finds nothing, counts every case, saves reproducers."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "fuzz.py"


def _module():
    spec = importlib.util.spec_from_file_location("tracker_fuzz_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_small_campaign_has_no_escape_and_no_slow_case(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--bvh", "150", "--yaml", "60", "--seed", "7",
                           "--retarget", "0.05", "--out", str(tmp_path / "repro"), "--json"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    for kind, n in (("bvh", 150), ("yaml", 60)):
        r = result[kind]
        assert r["cases"] == n == r["accepted"] + r["rejected"] + r["escaped"]
        assert r["escaped"] == 0 and r["slow"] == 0
        assert r["accepted"] > 0 and r["rejected"] > 0  # both paths exercised
    assert 0 < result["peak_memory_mb"] < 1024
    assert not (tmp_path / "repro").exists()  # nothing to reproduce


def test_a_short_pass_of_the_file_campaigns_has_no_escape(tmp_path):
    """Hostile recordings, references, offset tracks, URDFs, command-line numbers, special files, sweep
    state and write faults (scripts/fuzz_files.py): each is accepted or refused in one line."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--bvh", "0", "--yaml", "0", "--files", "60", "--seed", "3",
                           "--out", str(tmp_path / "repro"), "--json"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    for kind in ("recording", "reference", "offsets", "urdf", "numbers", "special", "sweep", "write"):
        r = result[kind]
        assert r["cases"] == 60 == r["accepted"] + r["rejected"] + r["escaped"], kind
        assert r["escaped"] == 0 and r["slow"] == 0, kind
    for kind in ("recording", "reference", "offsets", "urdf", "numbers", "write"):
        assert result[kind]["accepted"] > 0 and result[kind]["rejected"] > 0, kind  # both paths exercised
    assert 0 < result["peak_memory_mb"] < 1024
    assert not (tmp_path / "repro").exists()


def test_mutations_are_seeded():
    fuzz = _module()
    (name, base), keys = fuzz.bvh_bases()[0], fuzz._key_paths()
    a = [fuzz.mutate_bvh(base, random.Random(f"bvh-{3}")) for _ in range(1)]
    b = [fuzz.mutate_bvh(base, random.Random(f"bvh-{3}")) for _ in range(1)]
    assert a == b
    text = fuzz.yaml_bases()[0][1]
    assert fuzz.mutate_yaml(text, random.Random(5), keys) == fuzz.mutate_yaml(text, random.Random(5), keys)


def test_an_escape_is_counted_and_saved_as_a_reproducer(tmp_path, monkeypatch):
    fuzz = _module()

    def check(data, path, retarget=False):
        if b"HIERARCHY" in data[:20]:
            raise ZeroDivisionError("a bug")
        return "rejected"

    monkeypatch.setattr(fuzz, "check_bvh", check)
    lines = []
    result = fuzz.campaign("bvh", 6, 11, tmp_path / "repro", 5.0, tmp_path, lines.append)
    assert result["escaped"] + result["rejected"] == 6 and result["escaped"] >= 1
    saved = sorted((tmp_path / "repro").iterdir())
    assert len(saved) == 2 * result["escaped"]
    txt = next(p for p in saved if p.suffix == ".txt").read_text()
    assert txt.startswith("escaped, ") and "ZeroDivisionError: a bug" in txt
    assert any(p.suffix == ".bvh" and p.read_bytes() for p in saved)
