"""Fuzz the readers: mutated BVH files and experiment configs, in-process, seeded.

    python scripts/fuzz.py --bvh 10000 --yaml 3000 --seed 1 [--out fuzz-out] [--slow 5]

Every case ends one of four ways:

- accepted: the reader returned (for a BVH: read, summarised as ``tracker inspect --json``
  does, the summary strict JSON; for a config: loaded, validated, and its clip retargeted
  and ball launches planned as ``tracker run`` does before simulating);
- rejected: a :class:`~tracker.errors.TrackerError` whose message is one line naming the file;
- escaped: anything else (another exception, a message on several lines or not naming the file,
  a non-finite number in the summary) -- a bug;
- slow: over ``--slow`` seconds (also counted as accepted/rejected/escaped by its outcome).

Escaped and slow cases are saved in ``--out`` (the input and a ``.txt`` saying what happened) so
they can be replayed: ``tracker inspect FILE`` / ``tracker run FILE``. Peak memory is the
process's maximum resident set size. Mutations start from the project's own clips and configs
(and ``../shared/mocap`` when it is there, each cut to a few frames) and include every class of
hostile input found so far: huge and tiny numbers, digit strings past Python's limits, frame
counts with no data, frame times of 1e308, denormal skeletons; YAML construction errors, deep
nesting, self-referencing aliases, alias bombs, duplicate keys, oversized files, long path
components, ``--set`` values in every float spelling.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import resource
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tracker.errors import TrackerError  # noqa: E402

MOCAP = REPO.parent / "shared" / "mocap"
KEEP_FRAMES = 6

NUMBERS = ["0", "-0", "1", "-1", "3", "6", "7", "1e308", "-1e308", "1e-308", "5e-324", "1e309", "nan", "inf",
           "-inf", "1e999", "0x1F", "1_000", "99999999999", "10000000000", "10000000", "9" * 21, "9" * 5000,
           "1" + "0" * 400, "\u0661\u0662", "--1", "+5", ".5", "5.", "1e-400", "123456789012", "0.0000001"]
BVH_WORDS = ["{", "}", "ROOT", "JOINT", "End", "Site", "OFFSET", "CHANNELS", "MOTION", "HIERARCHY", "Frames:",
             "Frame", "Time:", "Xposition", "Zrotation", "Xrot", "#", "\t", "\x0c", "\u00e9", "\ufeff", ""]
YAML_VALUES = ["2020-13-45", "2020-01-01 25:00:00", "2020-01-01T10:00:00+25:00", "0000-01-01", "!!int ''",
               "!!int 0x", "!!float abc", "!!bool maybe", "!!timestamp xyz", "!!binary x", "!!python/object x",
               "0x" + "f" * 4000, "1" + "0" * 400, "1e30", "1E+30", "1.0e+308", "1e400", "-1e400", ".inf", ".nan",
               "-.inf", "1/0", "1/60", "0", "-1", "~", "null", "true", "yes", "[]", "{}", "[1, 2, 3]",
               "{a: 1}", "*undefined", "&x 1", "'" + "a" * 300 + "'", "a" * 300 + "/x.bvh", "\"\\0\"",
               "~nosuchuser/x.bvh", "'x\\ny'", "\"\\u2028\"", "|\n  text", ">-\n  folded", "0o17", "1_0",
               "+.5", "1e-320", "[" * 40 + "]" * 40, "{", "[", "- -", ": :", "'", "\"", "&a [*a]"]


# -- BVH ------------------------------------------------------------------------------------------


def _shorten(text: str, keep: int = KEEP_FRAMES) -> str:
    """A clip cut to its first ``keep`` frames, ``Frames:`` fixed to match."""
    head, motion = text.split("MOTION", 1)
    lines = motion.strip("\r\n").splitlines()
    count = sum(1 for line in lines[2:] if line.strip())
    keep = min(keep, count)
    return head + "MOTION\n" + "\n".join([f"Frames: {keep}"] + lines[1: 2 + keep]) + "\n"


def bvh_bases() -> list[tuple[str, bytes]]:
    paths = [REPO / "tests" / "motion" / "fixtures" / "tiny.bvh", *sorted((REPO / "data" / "motions").glob("*.bvh"))]
    if MOCAP.is_dir():
        paths += sorted(MOCAP.glob("*.bvh"))
    return [(p.stem, _shorten(p.read_text()).encode()) for p in paths]


def _lines_edit(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    i, k = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.randrange(4)
    if kind == 0:
        del lines[i]
    elif kind == 1:
        lines.insert(i, lines[k])
    elif kind == 2:
        lines[i], lines[k] = lines[k], lines[i]
    else:
        lines[i:i] = [lines[k]] * rng.choice([10, 100, 1000])
    return b"\n".join(lines)


def _token_edit(data: bytes, rng: random.Random, words: list[str]) -> bytes:
    spans = [m.span() for m in re.finditer(rb"\S+", data)]
    if not spans:
        return data
    a, b = rng.choice(spans)
    new = rng.choice(words).encode("utf-8", "surrogatepass") if rng.random() < 0.9 else b""
    return data[:a] + new + data[b:]


def _bytes_edit(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return data[: rng.randrange(len(data) + 1)]
    if kind == 1:
        at = rng.randrange(len(data) + 1)
        return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) + data[at:]
    if kind == 2:
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        return bytes(buf)
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n"]))


def _header_edit(data: bytes, rng: random.Random) -> bytes:
    """The hostile classes of the BVH header: counts, frame times, channels, End Sites, sizes."""
    text = data.decode("utf-8", "replace")
    kind = rng.randrange(7)
    if kind == 0:
        text = re.sub(r"Frames:\s*\S+", f"Frames: {rng.choice(NUMBERS)}", text, count=1)
    elif kind == 1:
        text = re.sub(r"Frame Time:\s*\S+", f"Frame Time: {rng.choice(NUMBERS)}", text, count=1)
    elif kind == 2:
        text = re.sub(r"CHANNELS\s+\d+", f"CHANNELS {rng.choice(NUMBERS)}", text, count=1)
    elif kind == 3:  # no channels at all, and a frame count of any size
        text = re.sub(r"\n\s*CHANNELS[^\n]*", "", text)
        text = re.sub(r"Frames:\s*\S+", f"Frames: {rng.choice(NUMBERS)}", text, count=1)
        if rng.random() < 0.5 and "Frame Time" in text:
            text = text[: text.index("Frame Time")] + "Frame Time: 0.01\n"
    elif kind == 4:  # every OFFSET (or every End Site's) multiplied by an extreme scale
        scale = rng.choice(["5e-324", "1e-308", "1e308", "1e-30", "0"])
        text = re.sub(r"OFFSET((?:\s+\S+){3})",
                      lambda m: "OFFSET " + " ".join(f"{_num(t) * float(scale):.17g}" for t in m.group(1).split()),
                      text) if rng.random() < 0.5 else re.sub(
            r"(End Site\s*\{\s*OFFSET)((?:\s+\S+){3})", lambda m: m.group(1) + f" 0 {scale} 0", text)
    elif kind == 5:  # a skeleton nested many joints deep
        depth = rng.choice([50, 499, 501, 5000])
        head = "HIERARCHY\nROOT R\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
        body = "".join(f"JOINT J{i}\n{{\nOFFSET 0 1 0\n" for i in range(depth)) + "}\n" * depth
        text = head + body + "}\nMOTION\nFrames: 1\nFrame Time: 0.01\n0 0 0\n"
    else:  # every frame value replaced by one extreme number
        head, _, frames = text.partition("Frame Time:")
        first, _, rest = frames.partition("\n")
        value = rng.choice(NUMBERS)
        text = head + "Frame Time:" + first + "\n" + re.sub(r"\S+", value, rest)
    return text.encode("utf-8", "surrogatepass")


def _num(token: str) -> float:
    try:
        x = float(token)
    except ValueError:
        return 1.0
    return x if math.isfinite(x) else 1.0


def mutate_bvh(data: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(5)
        if kind == 0:
            data = _lines_edit(data, rng)
        elif kind == 1:
            data = _token_edit(data, rng, NUMBERS + BVH_WORDS)
        elif kind == 2:
            data = _bytes_edit(data, rng)
        else:
            data = _header_edit(data, rng)
    return data


def check_bvh(data: bytes, path: Path, retarget: bool = False) -> str:
    """Read a BVH as ``tracker inspect --json`` does (and with ``retarget``, retarget it onto the
    humanoid as ``tracker retarget`` does); ``accepted`` or ``rejected`` (raises on an escape)."""
    from tracker.commands.inspect import summarize

    path.write_bytes(data)
    try:
        info = summarize(str(path))
    except TrackerError as exc:
        _check_message(exc, str(path))
        return "rejected"
    json.dumps(info, allow_nan=False)  # ValueError on Infinity or NaN: not JSON
    if retarget:
        from tracker.retarget import load_clip_reference

        try:
            ref = load_clip_reference(str(path))
        except TrackerError as exc:
            _check_message(exc, str(path))
            return "accepted"  # the file was read; it just does not fit the humanoid
        import numpy as np

        if not (np.isfinite(ref.q).all() and np.isfinite(ref.v).all()):
            raise ValueError("the retargeted reference holds non-finite values")
        json.dumps(ref.quality, allow_nan=False)  # the report `tracker retarget` prints
    return "accepted"


# -- YAML -----------------------------------------------------------------------------------------


def yaml_bases() -> list[tuple[str, str]]:
    """The shipped experiment configs with their paths made absolute (so a copy elsewhere loads)."""
    import yaml

    out = []
    for p in sorted((REPO / "configs").rglob("*.yaml")):
        if "sweeps" in p.parts:
            continue
        data = yaml.safe_load(p.read_text())
        clip = data.get("clip") or {}
        if "path" in clip and not Path(clip["path"]).is_absolute():
            clip["path"] = str((p.parent / clip["path"]).resolve())
        if "shared/mocap" in clip.get("path", "") and not MOCAP.is_dir():
            continue
        if str(data.get("model", "")).endswith((".yaml", ".yml")):
            data["model"] = str((p.parent / data["model"]).resolve())
        out.append((p.stem, yaml.safe_dump(data, sort_keys=False)))
    return out


def _key_paths() -> list[str]:
    from tracker.experiments.config import ExperimentConfig
    from tracker.experiments.schema import describe

    return [r.key.replace("[i]", ".0") for r in describe(ExperimentConfig)]


def _structural(text: str, rng: random.Random, keys: list[str]) -> str:
    kind = rng.randrange(8)
    if kind == 0:  # a key set to a hostile value, at the end (a duplicate when it exists)
        key = rng.choice(keys).split(".")
        value = rng.choice(YAML_VALUES)
        body = "".join(f"{'  ' * i}{k}:\n" for i, k in enumerate(key[:-1]) if not k.isdigit())
        return text + "\n" + body + f"{'  ' * (len(key) - 1)}{key[-1]}: {value}\n"
    if kind == 1:  # deep nesting
        depth = rng.choice([100, 491, 2000])
        return text + f"\ndescription: {'[' * depth}{']' * depth}\n"
    if kind == 2:  # alias bomb in name or description
        levels = ["a: &a [x, x, x, x, x, x, x, x, x]"]
        for i in range(1, 9):
            prev = chr(ord("a") + i - 1)
            cur = chr(ord("a") + i)
            levels.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
        bomb = "bomb:\n" + "".join(f"  {line}\n" for line in levels)
        return text + bomb + f"{rng.choice(['name', 'description'])}: *i\n"
    if kind == 3:  # self-referencing alias
        return text + f"\n{rng.choice(['balls', 'description', 'clip'])}: &r [*r]\n"
    if kind == 4:  # a large file
        size = rng.choice([100_000, 1_000_000, 3_000_000])
        return text + "\ndescription: " + "x" * size + "\n"
    if kind == 5:  # a duplicate inside a flow mapping
        return text + "\nsim: {dt: 10, dt: 1/60}\n"
    if kind == 6:  # a long path component
        return re.sub(r"path: .*", "path: /tmp/" + "a" * rng.choice([255, 256, 4000]) + ".bvh", text, count=1)
    return text.replace("  ", rng.choice(["", " ", "\t", "    "]))


def _set_value(text: str, rng: random.Random, keys: list[str]) -> str:
    """The config with one key (existing or new) set to a hostile YAML value, written in place."""
    import yaml

    data = yaml.safe_load(text)
    parts = rng.choice(keys).split(".")
    node = data
    for part in parts[:-1]:
        if part.isdigit():
            if not isinstance(node, list) or not node:
                return text
            node = node[0]
        else:
            if not isinstance(node.get(part), (dict, list)):
                node[part] = {}
            node = node[part]
    if not isinstance(node, dict):
        return text
    node[parts[-1]] = "HOSTILE_VALUE"
    value = rng.choice(YAML_VALUES + NUMBERS)
    dumped = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=10_000)
    if "\n" in value:  # a block scalar: indent it under its key
        indent = next(line for line in dumped.splitlines() if "HOSTILE_VALUE" in line)
        pad = " " * (len(indent) - len(indent.lstrip()) + 2)
        value = value.replace("\n", "\n" + pad)
    return dumped.replace("HOSTILE_VALUE", value, 1)


def mutate_yaml(text: str, rng: random.Random, keys: list[str]) -> tuple[bytes, list[str]]:
    """A mutated config and ``--set`` overrides to apply with it."""
    overrides = []
    roll = rng.random()
    if roll < 0.4:
        text = _set_value(text, rng, keys)
    elif roll < 0.55:
        key = rng.choice(keys)
        if rng.random() < 0.5:
            key = re.sub(r"\.(\d+)", r"[\1]", key)
        overrides.append(f"{key}={rng.choice(YAML_VALUES + NUMBERS)}")
    elif roll < 0.8:
        text = _structural(text, rng, keys)
    data = text.encode("utf-8", "surrogatepass")
    if roll >= 0.8 or rng.random() < 0.2:
        kind = rng.randrange(4)
        if kind == 0:
            data = _lines_edit(data, rng)
        elif kind == 1:
            data = _bytes_edit(data, rng)
        else:
            data = _token_edit(data, rng, YAML_VALUES + NUMBERS)
    return data, overrides


def check_yaml(data: bytes, overrides: list[str], path: Path) -> str:
    """Load a config as ``tracker run`` does, up to the simulation; ``accepted`` or ``rejected``."""
    from tracker.experiments.config import dump_config, load_config
    from tracker.experiments.runner import build

    path.write_bytes(data)
    try:
        cfg = load_config(path, overrides)
        dump_config(cfg)
        build(cfg)
    except TrackerError as exc:
        _check_message(exc, str(path) if not _names_set(exc) else "--set")
        return "rejected"
    return "accepted"


def _names_set(exc: Exception) -> bool:
    return str(exc).startswith("--set ")


class BadMessage(Exception):
    """A TrackerError whose message is not one line naming the file."""


def _check_message(exc: TrackerError, name: str) -> None:
    text = str(exc)
    if "\n" in text or "\r" in text:
        raise BadMessage(f"message on several lines: {text[:300]!r}")
    if name not in text:
        raise BadMessage(f"message does not name {name}: {text[:300]!r}")
    if len(text) > 1000:
        raise BadMessage(f"message of {len(text)} characters: {text[:300]!r}")


# -- the campaign ---------------------------------------------------------------------------------


class Slow(Exception):
    pass


def _alarm(_signum, _frame):
    raise Slow()


def run_case(check, args: tuple, limit: float) -> tuple[str, float, str]:
    """``(outcome, seconds, detail)``; the case is interrupted after ``4 * limit`` seconds."""
    import signal

    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 4 * limit)
    t0 = time.perf_counter()
    try:
        outcome, detail = check(*args), ""
    except Slow:
        outcome, detail = "hung", f"interrupted after {4 * limit:g} s"
    except Exception as exc:  # noqa: BLE001 - the point of the campaign
        outcome = "escaped"
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return outcome, time.perf_counter() - t0, detail


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def campaign(kind: str, n: int, seed: int, out: Path, limit: float, work: Path, log, retarget: float = 0.0) -> dict:
    """``n`` mutated BVH files (``kind`` "bvh") or experiment configs ("yaml"), in-process."""
    if kind == "bvh":
        bases = bvh_bases()

        def make(rng, case):
            name, base = bases[case % len(bases)]
            data = mutate_bvh(base, rng)
            return (data, work / f"{name}.bvh", rng.random() < retarget), data, ".bvh", name, ""
        check = check_bvh
    else:
        bases, keys = yaml_bases(), _key_paths()

        def make(rng, case):
            name, base = bases[case % len(bases)]
            data, overrides = mutate_yaml(base, rng, keys)
            return (data, overrides, work / f"{name}.yaml"), data, ".yaml", name, \
                "".join(f" --set {o!r}" for o in overrides)
        check = check_yaml
    return run_campaign(kind, make, check, n, seed, out, limit, log)


FILE_KINDS = ("recording", "reference", "offsets", "urdf", "numbers", "special", "sweep", "write")


def file_campaign(kind: str, make, check, n: int, seed: int, out: Path, limit: float, log) -> dict:
    """``n`` hostile inputs of one of :data:`FILE_KINDS` (``scripts/fuzz_files.py``), in-process."""
    def made(rng, case):
        args, data, suffix = make(rng, case)
        return (args, kind), data, suffix, "", ""
    return run_campaign(kind, made, check, n, seed, out, limit, log)


def run_campaign(kind: str, make, check, n: int, seed: int, out: Path, limit: float, log) -> dict:
    """The campaign loop: ``make(rng, case) -> (check's args, bytes, suffix, name, note)``; each case
    counted by its outcome, reproducers of escaped, hung and slow cases saved in ``out``."""
    rng = random.Random(f"{kind}-{seed}")
    counts: Counter = Counter()
    slowest, slowest_case = 0.0, ""
    t_start = time.perf_counter()
    for case in range(n):
        args, data, suffix, name, extra = make(rng, case)
        outcome, seconds, detail = run_case(check, args, limit)
        counts[outcome if outcome != "hung" else "escaped"] += 1
        slow = seconds > limit or outcome == "hung"
        counts["slow"] += slow
        label = f"case {case}" + (f" ({name})" if name else "")
        if seconds > slowest:
            slowest, slowest_case = seconds, label
        if outcome in ("escaped", "hung") or slow:
            out.mkdir(parents=True, exist_ok=True)
            stem = out / (f"{kind}-seed{seed}-case{case}" + (f"-{name}" if name else ""))
            stem.with_suffix(suffix).write_bytes(data)
            stem.with_suffix(".txt").write_text(f"{outcome}, {seconds:.2f} s{extra}\n{detail}\n")
            log(f"  {kind} {label}: {outcome} in {seconds:.2f} s -> {stem.with_suffix(suffix)}")
        elif seconds > limit / 4:
            log(f"  {kind} {label}: {outcome} in {seconds:.2f} s")
        if (case + 1) % 1000 == 0:
            log(f"  {kind}: {case + 1}/{n} ({time.perf_counter() - t_start:.0f} s, peak {peak_rss_mb():.0f} MB)")
    return {"cases": n, "accepted": counts["accepted"], "rejected": counts["rejected"],
            "escaped": counts["escaped"], "slow": counts["slow"], "slowest_s": round(slowest, 3),
            "slowest_case": slowest_case, "seconds": round(time.perf_counter() - t_start, 1)}


def cli_sample(n: int, seed: int, out: Path, work: Path, log) -> dict:
    """``n`` mutated files through the command line (half BVH via ``tracker inspect --json``, half
    configs via ``tracker run`` for 0.1 s): exit 0/2/3 and, on 2, one ``error:`` line."""
    import os
    import subprocess

    rng = random.Random(f"cli-{seed}")
    bvhs, ymls, keys = bvh_bases(), yaml_bases(), _key_paths()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("TRACKER_DEBUG", None)
    counts: Counter = Counter()
    for case in range(n):
        if case % 2 == 0:
            name, base = bvhs[rng.randrange(len(bvhs))]
            path = work / f"cli-{name}.bvh"
            path.write_bytes(mutate_bvh(base, rng))
            argv = ["inspect", str(path), "--json"]
        else:
            name, base = ymls[rng.randrange(len(ymls))]
            data, overrides = mutate_yaml(base, rng, keys)
            path = work / f"cli-{name}.yaml"
            path.write_bytes(data)
            argv = ["run", str(path), "--set", "sim.duration=0.1", "--set", "outputs.video=false",
                    "--out", str(work / "cli-result"), "--force", *[a for o in overrides for a in ("--set", o)]]
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "tracker", *argv], capture_output=True, text=True, env=env,
                              timeout=600, check=False)
        seconds = time.perf_counter() - t0
        err = proc.stderr.strip("\n")
        ok = proc.returncode in (0, 3) or (proc.returncode == 2 and err.startswith("error: ") and "\n" not in err
                                           and "internal error" not in err and "Traceback" not in err)
        if ok and proc.returncode == 0 and argv[0] == "inspect":
            try:
                json.loads(proc.stdout, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
            except ValueError:
                ok = False
        outcome = ("accepted" if proc.returncode in (0, 3) else "rejected") if ok else "escaped"
        counts[outcome] += 1
        if not ok:
            out.mkdir(parents=True, exist_ok=True)
            stem = out / f"cli-seed{seed}-case{case}-{name}"
            stem.with_suffix(path.suffix).write_bytes(path.read_bytes())
            stem.with_suffix(".txt").write_text(f"tracker {' '.join(argv)}: exit {proc.returncode} in {seconds:.1f} s"
                                                f"\n{proc.stderr[-3000:]}\n")
            log(f"  cli case {case} ({name}): exit {proc.returncode} -> {stem.with_suffix('.txt')}")
    return {"cases": n, "accepted": counts["accepted"], "rejected": counts["rejected"],
            "escaped": counts["escaped"], "slow": 0}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bvh", type=int, default=1000, help="mutated BVH files (default 1000)")
    p.add_argument("--yaml", type=int, default=300, help="mutated experiment configs (default 300)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slow", type=float, default=5.0, help="seconds over which a case counts as slow (default 5)")
    p.add_argument("--out", default="fuzz-out", help="folder for reproducers of escaped and slow cases")
    p.add_argument("--retarget", type=float, default=0.05,
                   help="fraction of the BVH cases also retargeted onto the humanoid (default 0.05)")
    p.add_argument("--cli", type=int, default=0,
                   help="also run this many mutated files through the command line, one process each (default 0)")
    p.add_argument("--files", type=int, default=0,
                   help="hostile inputs per file campaign (recordings, references, offset tracks, URDF model "
                        "files, command-line numbers, special files, sweep state, write faults; default 0)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)

    import numpy as np

    np.seterr(all="ignore")  # overflow warnings are not failures; non-finite results are checked
    import warnings

    warnings.simplefilter("ignore")
    log = (lambda text: print(text, file=sys.stderr, flush=True))
    out = Path(args.out)
    result = {"seed": args.seed}
    with tempfile.TemporaryDirectory(prefix="tracker-fuzz-") as tmp:
        if args.bvh:
            result["bvh"] = campaign("bvh", args.bvh, args.seed, out, args.slow, Path(tmp), log, args.retarget)
        if args.yaml:
            result["yaml"] = campaign("yaml", args.yaml, args.seed, out, args.slow, Path(tmp), log)
        if args.cli:
            result["cli"] = cli_sample(args.cli, args.seed, out, Path(tmp), log)
        if args.files:
            sys.path.insert(0, str(REPO / "scripts"))
            from fuzz_files import campaigns

            for kind, (make, check) in campaigns(Path(tmp) / "files").items():
                result[kind] = file_campaign(kind, make, check, args.files, args.seed, out, args.slow, log)
    result["peak_memory_mb"] = round(peak_rss_mb())
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"seed {args.seed}, peak memory {result['peak_memory_mb']} MB")
        print(f"{'campaign':<8} {'cases':>7} {'accepted':>9} {'rejected':>9} {'escaped':>8} "
              f"{'slow':>5} {'slowest':>8} {'time':>7}")
        for kind in ("bvh", "yaml", "cli", *FILE_KINDS):
            r = result.get(kind)
            if r and kind == "cli":
                print(f"{kind:<8} {r['cases']:>7} {r['accepted']:>9} {r['rejected']:>9} {r['escaped']:>8}")
            elif r:
                print(f"{kind:<8} {r['cases']:>7} {r['accepted']:>9} {r['rejected']:>9} {r['escaped']:>8} "
                      f"{r['slow']:>5} {r['slowest_s']:>7.2f}s {r['seconds']:>6.0f}s")
    bad = sum(result[k]["escaped"] + result[k]["slow"] for k in ("bvh", "yaml", "cli", *FILE_KINDS) if k in result)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
