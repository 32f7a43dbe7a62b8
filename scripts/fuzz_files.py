"""The file campaigns of ``scripts/fuzz.py``: hostile recordings, references, offset tracks, URDF
model files, command-line numbers, special files and sweep state.

Each campaign is ``(bases(work), mutate(base, rng, work) -> (path, data, label), check(path, label))``:
``bases`` makes valid inputs once (a short run's ``recording.npz``, a retargeted reference, an
offset track, the humanoid's URDF, a finished sweep), ``mutate`` writes one hostile variant and
``check`` reads it as the program does and uses what it read (a replay session, reference samples,
an offset track's values, the kinematics' masses, a parsed command line, a sweep's resume). The
outcomes are those of ``fuzz.py``: accepted, rejected (one ``TrackerError`` line naming the file
or the flag), escaped (anything else), slow.
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np

from tracker.errors import TrackerError

REPO = Path(__file__).resolve().parents[1]
WALK = REPO / "data" / "motions"

#: Values injected into arrays (element-wise) and into text fields.
ARRAY_VALUES = [np.nan, np.inf, -np.inf, 0.0, -1.0, 1e308, -1e308, 5e-324, 1e9, 2.0]
TEXT_NUMBERS = ["nan", "inf", "-inf", "0", "-0", "-1", "1e308", "1e309", "5e-324", "1e-400", "abc", "", "1 2",
                "0x10", "9" * 400, "1e-5", "3"]


class BadMessage(Exception):
    """A TrackerError whose message is not one line naming its subject."""


def one_line(exc: TrackerError, name: str) -> None:
    text = str(exc)
    if "\n" in text or "\r" in text or len(text) > 1500:
        raise BadMessage(f"message not one short line: {text[:300]!r}")
    if name not in text:
        raise BadMessage(f"message does not name {name!r}: {text[:300]!r}")


# -- .npz files ---------------------------------------------------------------------------------------


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as d:
        return {k: np.array(d[k]) for k in d.files}


def _mutate_array(a: np.ndarray, rng: random.Random) -> np.ndarray | object:
    kind = rng.randrange(9)
    if kind == 0 and a.size:  # a value
        b = np.array(a, dtype=float if a.dtype.kind in "biuf" else a.dtype)
        if b.dtype.kind == "f":
            b.flat[rng.randrange(b.size)] = rng.choice(ARRAY_VALUES)
        return b
    if kind == 1:  # a shape
        return a.reshape(-1) if a.ndim > 1 else a.reshape(1, -1)
    if kind == 2 and a.ndim >= 1:  # rows cut
        return a[: rng.choice([0, 1, 2])]
    if kind == 3 and a.ndim >= 2:  # columns cut or added
        return a[..., : max(a.shape[-1] - rng.randint(1, 3), 0)] if rng.random() < 0.5 else \
            np.concatenate([a, a[..., :1]], axis=-1)
    if kind == 4:  # a scalar
        return np.array(rng.choice([0.0, 1.0, np.nan, -1.0]))
    if kind == 5:  # another type
        return rng.choice([a.astype(np.int64) if a.dtype.kind == "f" else a.astype(float), np.array("text"),
                           np.array([True, False]), a.astype(np.float32)])
    if kind == 6 and a.ndim >= 1 and a.size:  # transposed or tiled
        return a.T if a.ndim == 2 else np.repeat(a, 3, axis=0)
    if kind == 7:
        return np.zeros((0,) + a.shape[1:], dtype=a.dtype)
    return np.full_like(a, rng.choice([np.nan, 0.0, 1e6]), dtype=float) if a.dtype.kind == "f" else a


def _huge_header(data: bytes, rng: random.Random) -> bytes:
    """A stored (uncompressed) member's .npy header claiming a shape of 10^12 values."""
    m = re.search(rb"'shape': \(([0-9, ]*)\)", data)
    if not m:
        return data
    claim = rng.choice([b"1000000000000, ", b"100000, 100000", b"4294967296, 55", b"-1, 3"])
    return data[: m.start(1)] + claim + data[m.end(1):]


def mutate_npz(base: Path, rng: random.Random, work: Path, label: str) -> tuple[Path, bytes]:
    """One hostile variant of the .npz file ``base``."""
    path = work / f"{label}.npz"
    raw = base.read_bytes()
    kind = rng.randrange(10)
    if kind == 0:  # truncated
        data = raw[: rng.randrange(len(raw))]
    elif kind == 1:  # bytes flipped
        b = bytearray(raw)
        for _ in range(rng.randint(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        data = bytes(b)
    elif kind == 2:
        data = _huge_header(raw, rng)
    elif kind == 3:  # not a zip at all
        data = rng.choice([b"", b"PK\x03\x04", b"\x93NUMPY" + raw[:100], raw[::-1], b"{}"])
    else:
        arrays = _arrays(base)
        key = rng.choice(sorted(arrays))
        what = rng.random()
        if what < 0.1:
            del arrays[key]
        elif what < 0.15:
            arrays[f"extra{rng.randrange(9)}"] = np.zeros(3)
        elif what < 0.25 and arrays[key].dtype.kind in "US":  # JSON or text fields
            arrays[key] = np.array(rng.choice(["[1, 2]", "{", "[" * 5000 + "]" * 5000, '{"a": ' * 3000 + "1" +
                                               "}" * 3000, "null", "\"x\"", "{\"model\": 3}", "\ud800", ""]))
        else:
            try:
                arrays[key] = _mutate_array(arrays[key], rng)
            except (ValueError, TypeError):  # the mutation did not apply to this field: another one
                return mutate_npz(base, rng, work, label)
        buf = io.BytesIO()
        try:
            (np.savez_compressed if rng.random() < 0.5 else np.savez)(buf, **arrays)
        except (ValueError, UnicodeEncodeError):
            return mutate_npz(base, rng, work, label)
        data = buf.getvalue()
    path.write_bytes(data)
    return path, data


def _finite(*arrays) -> None:
    for a in arrays:
        if a is not None and np.asarray(a).dtype.kind == "f" and not np.isfinite(a).all():
            raise ValueError("a non-finite value was accepted and used")


def check_recording(path: Path, _label: str) -> str:
    from tracker.sim.recording import Recording
    from tracker.viewer.replay import ReplaySession

    def use(path):
        rec = Recording.load(path).finite_steps()
        if rec.n_steps:  # what the window does with it, without the window
            session = ReplaySession(rec)
            for t in (float(rec.t[0]), float(rec.t[-1]) / 2, 1e9):
                session.seek(t)
                _finite(np.array(session.joint_error()), np.array(session.gain_ratio()))
            _finite(rec.q, rec.q_ref)

    return judged(path, use)


def judged(path: Path, read_and_use) -> str:
    """``read_and_use(path)`` as the program would: "accepted", or "rejected" on one TrackerError line
    naming the file (any other exception escapes to the campaign)."""
    try:
        read_and_use(path)
    except TrackerError as exc:
        one_line(exc, path.name)
        return "rejected"
    return "accepted"


def check_reference(path: Path, _label: str) -> str:
    from tracker.retarget.reference import Reference

    def use(path):
        ref = Reference.load(path)
        for t in (0.0, ref.duration / 2, ref.duration, ref.duration + 1.0):
            _finite(*ref.sample(t))
        if ref.n_frames > 1:
            _finite(ref.resample(30.0).q)

    return judged(path, use)


def check_offsets(path: Path, _label: str) -> str:
    from tracker.sim.offsets import load_offsets

    def use(path):
        track = load_offsets(path)
        for t in (0.0, 0.05, 1.0, 100.0):
            _finite(track.at(t))

    return judged(path, use)


# -- URDF ---------------------------------------------------------------------------------------------


def mutate_urdf(base: Path, rng: random.Random, work: Path, label: str) -> tuple[Path, bytes]:
    text = base.read_text()
    kind = rng.randrange(6)
    if kind <= 2:  # a number in an attribute
        spots = list(re.finditer(r'(value|ixx|iyy|izz|ixy|xyz|rpy|size|radius|length|lower|upper|effort|velocity)'
                                 r'="([^"]*)"', text))
        m = rng.choice(spots)
        parts = m.group(2).split()
        parts[rng.randrange(len(parts))] = rng.choice(TEXT_NUMBERS)
        if rng.random() < 0.2:
            parts = parts[:-1] if len(parts) > 1 else parts + ["1"]
        text = text[: m.start(2)] + " ".join(parts) + text[m.end(2):]
    elif kind == 3:  # an element removed
        spots = list(re.finditer(r"<(inertial|mass|inertia|axis|origin|limit|visual|collision|parent|child)\b[^>]*?"
                                 r"(/>|>.*?</\1>)", text, flags=re.S))
        m = rng.choice(spots)
        text = text[: m.start()] + text[m.end():]
    elif kind == 4:  # a link or joint duplicated or renamed
        names = re.findall(r'(?:link|joint) name="([^"]+)"', text)
        a = rng.choice(names)
        text = text.replace(f'name="{a}"', f'name="{rng.choice(names)}"', 1) if rng.random() < 0.5 else \
            text.replace(f'link="{a}"', f'link="{a}_missing"', 1)
    else:  # a mesh that is not there, or broken XML
        text = rng.choice([text.replace("<box ", '<mesh filename="nowhere.obj" ', 1), text[: len(text) // 2],
                           text.replace("<robot", "<robot><robot", 1), text + "<" * 100])
    path = work / f"{label}.urdf"
    data = text.encode()
    path.write_bytes(data)
    return path, data


def check_urdf(path: Path, _label: str) -> str:
    from tracker.character.kinematics import Kinematics

    def use(path):
        kin = Kinematics(path)
        _finite(np.array(list(kin.masses.values()), dtype=float), kin.zero_pose_positions()[kin.root])

    return judged(path, use)


# -- command-line numbers -----------------------------------------------------------------------------


def numeric_flags() -> list[tuple[str, str, str, list[str]]]:
    """``(command, flag, dest, positionals)`` for every option of every command that takes a value
    through a type function (numbers, times)."""
    from tracker.cli import build_parser

    out = []
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        positionals = ["x" for a in p._actions if not a.option_strings and a.dest != "help"]
        for a in p._actions:
            if a.option_strings and a.type is not None and a.type not in (str,) and a.choices is None:
                out.append((name, a.option_strings[-1], a.dest, positionals))
    return out


NUMBER_TEXTS = TEXT_NUMBERS + ["1e-9", "1e-6", "1/0", "1/60", "1/3", "1e5", "1e12", "-1e-300", "0.1",
                               "100000000000000000000000000000", "1" * 64, "1" * 65, "+1", "٣", "1_000", " 2 ",
                               "inf/inf", "1e309/2"]


def mutate_numbers(flags, rng: random.Random, work: Path, label: str) -> tuple[list[str], bytes]:
    command, flag, dest, positionals = rng.choice(flags)
    value = rng.choice(NUMBER_TEXTS)
    argv = [command, *positionals, flag, value]
    return (argv, dest), " ".join(argv).encode()


def check_numbers(case: tuple[list[str], str], _label: str) -> str:
    """Parse (only) a command line with one numeric flag: a value or one ``error:`` line, exit 2."""
    import contextlib

    from tracker.cli import build_parser

    argv, dest = case
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = build_parser(argv[0]).parse_args(argv)
    except SystemExit as exc:
        text = err.getvalue().strip()
        if exc.code != 2 or "\n" in text or not text.startswith("error:") or argv[-2] not in text:
            raise BadMessage(f"exit {exc.code}: {text[:300]!r}") from None
        return "rejected"
    value = getattr(args, dest)
    for v in (value if isinstance(value, (list, tuple)) else [value]):
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{argv[-2]} accepted a non-finite value {v}")
    return "accepted"


# -- special files ------------------------------------------------------------------------------------


def _readers() -> dict[str, object]:
    from tracker.character.kinematics import Kinematics
    from tracker.motion.bvh import read_bvh
    from tracker.retarget.joint_map import load_joint_map
    from tracker.retarget.reference import Reference
    from tracker.sim.offsets import load_offsets
    from tracker.sim.push import load_sweep
    from tracker.sim.recording import Recording
    from tracker.yamlsafe import read_yaml_file

    return {"bvh": read_bvh, "recording": Recording.load, "reference": Reference.load, "offsets": load_offsets,
            "joint map": load_joint_map, "urdf": Kinematics, "push sweep": load_sweep,
            "yaml": lambda p: read_yaml_file(p, "config")}


def special_paths(work: Path) -> list[Path]:
    fifo = work / "special_fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    folder = work / "special_dir"
    folder.mkdir(exist_ok=True)
    loop = work / "special_loop"
    if not loop.is_symlink():
        os.symlink(loop, loop)
    sparse = work / "special_sparse"
    if not sparse.exists():
        with open(sparse, "wb") as fh:
            fh.truncate(2 ** 32)  # 4 GiB of nothing
    return [fifo, folder, loop, sparse, Path("/dev/zero"), Path("/dev/null"), Path("/dev/urandom"),
            work / ("n" * 300), work / "missing.file", Path(str(work / "x") + "\0y")]


def mutate_special(paths, rng: random.Random, work: Path, label: str) -> tuple[tuple[str, Path], bytes]:
    reader = rng.choice(sorted(_readers()))
    path = rng.choice(paths)
    return (reader, path), f"{reader} {path}".encode()


def check_special(case: tuple[str, Path], _label: str) -> str:
    reader, path = case
    try:
        _readers()[reader](path)
    except TrackerError as exc:
        one_line(exc, path.name.split("\0")[0][:40])
        return "rejected"
    except ValueError as exc:  # a NUL in a path: Python's own one-line refusal, before any reader runs
        if "null" not in str(exc).lower():
            raise
        return "rejected"
    raise ValueError(f"{reader} accepted {path}")


# -- the valid inputs the campaigns start from --------------------------------------------------------


def make_bases(work: Path) -> dict[str, Path]:
    """A short ball run's recording, a retargeted reference, an offset track (with a meta mapping) and
    the humanoid's URDF, written once into ``work``."""
    from tracker.experiments.config import load_config
    from tracker.experiments.runner import build, simulate
    from tracker.paths import DATA_DIR
    from tracker.retarget import load_clip_reference
    from tracker.sim.offsets import OffsetTrack

    work.mkdir(parents=True, exist_ok=True)
    out = {"recording": work / "base_recording.npz", "reference": work / "base_reference.npz",
           "offsets": work / "base_offsets.npz", "urdf": work / "base.urdf"}
    if not out["recording"].exists():
        cfg = load_config(REPO / "configs" / "soccer_light.yaml", ["sim.duration=1.5", "outputs.video=false"])
        prep = build(cfg)
        rec, _ = simulate(prep)
        rec.save(out["recording"])
        clip = sorted(WALK.glob("*.bvh"))[0]
        ref = load_clip_reference(clip)
        ref.save(out["reference"])
        track = OffsetTrack.zeros(prep.model.kinematics().layout, np.linspace(0.0, 0.5, 6), model="humanoid", clip=clip.name,
                                  meta={"seed": 1, "options": {"samples": 10}})
        track.save(out["offsets"])
        urdf = next(p for p in (DATA_DIR / "humanoid").glob("*.urdf"))
        shutil.copy(urdf, out["urdf"])
    return out


def campaigns(work: Path) -> dict[str, tuple]:
    """``kind -> (make(rng, case) -> (args for check, bytes to save, suffix), check)``."""
    bases = make_bases(work)
    flags = numeric_flags()
    specials = special_paths(work)

    def npz(kind):
        return lambda rng, case: (*mutate_npz(bases[kind], rng, work, f"{kind}{case % 7}"), ".npz")

    return {
        "recording": (npz("recording"), check_recording),
        "reference": (npz("reference"), check_reference),
        "offsets": (npz("offsets"), check_offsets),
        "urdf": (lambda rng, case: (*mutate_urdf(bases["urdf"], rng, work, f"urdf{case % 7}"), ".urdf"),
                 check_urdf),
        "numbers": (lambda rng, case: (*mutate_numbers(flags, rng, work, ""), ".case"), check_numbers),
        "special": (lambda rng, case: (*mutate_special(specials, rng, work, ""), ".case"), check_special),
        "sweep": sweep_campaign(work),
        "write": write_campaign(work),
    }




# -- sweep state --------------------------------------------------------------------------------------

METRICS = {"name": "x", "status": "ok", "diverged": False, "fell": False, "joint_error_mean_rad": 0.05,
           "joint_error_max_rad": 0.3, "root_error_mean_m": 0.01, "steps": 60, "sim_time_s": 1.0}


def mutate_metrics(rng: random.Random, work: Path, sweep) -> tuple[Path, bytes]:
    """A finished sweep folder whose runs' ``metrics.json`` are hostile: cut, binary, not a mapping,
    deep, huge, odd values, a folder or a link instead of a file."""
    folder = work / "sweep_state"
    shutil.rmtree(folder, ignore_errors=True)
    data = b""
    for run in sweep.runs[: rng.randint(1, 4)]:
        rf = folder / "runs" / run.key
        rf.mkdir(parents=True)
        good = json.dumps({**METRICS, **{k: rng.choice([0.1, "x", None, [1], {"a": 1}, True, 1e308, -1])
                                         for k in rng.sample(sorted(METRICS), 2)}}).encode()
        kind = rng.randrange(9)
        data = {0: good, 1: good[: rng.randrange(len(good))], 2: bytes(rng.randrange(256) for _ in range(64)),
                3: b"[1, 2]", 4: b"{}", 5: b"[" * 100_000 + b"]" * 100_000, 6: b'{"a": ' * 5000 + b"1" + b"}" * 5000,
                7: b'{"joint_error_mean_rad": NaN, "status": Infinity}', 8: b"\xef\xbb\xbf" + good}[kind]
        target = rf / "metrics.json"
        special = rng.random()
        if special < 0.05:
            target.mkdir()
        elif special < 0.1:
            target.symlink_to(folder / "nowhere")
        else:
            target.write_bytes(data)
    return folder, data


def check_sweep_state(args: tuple, _label: str) -> str:
    """What a resumed sweep does with its folder: which runs are finished, the rows, the summary."""
    from tracker.experiments.sweep import is_finished
    from tracker.experiments.sweep_summary import collect, write_summary

    folder, sweep = args
    for run in sweep.runs:
        is_finished(folder / "runs" / run.key)
    rows = collect(sweep, folder)
    write_summary(sweep, folder)
    if not all(isinstance(r["finished"], bool) for r in rows):
        raise ValueError("a row's 'finished' is not a bool")
    return "accepted"


def sweep_campaign(work: Path):
    from tracker.experiments.sweep import load_sweep

    sweep = load_sweep(REPO / "configs" / "sweeps" / "stability.yaml")

    def make(rng, case):
        folder, data = mutate_metrics(rng, work, sweep)
        return (folder, sweep), data, ".json"

    return make, check_sweep_state


# -- write faults -------------------------------------------------------------------------------------


def write_campaign(work: Path):
    """Every result writer under a file-size limit (a full disk, as the kernel reports it): it writes,
    or fails in one line naming its file, and leaves no half-written file under the final name."""
    import resource
    import signal

    from tracker.retarget.reference import Reference
    from tracker.sim.offsets import load_offsets
    from tracker.sim.recording import Recording

    bases = make_bases(work)
    items = {"recording": Recording.load(bases["recording"]), "reference": Reference.load(bases["reference"]),
             "offsets": load_offsets(bases["offsets"])}

    def make(rng, case):
        kind = rng.choice(sorted(items))
        limit = rng.choice([0, 1, 100, 1000, 10_000, 100_000, 10_000_000])
        return (kind, limit), f"{kind} {limit}".encode(), ".case"

    def check(args, _label):
        kind, limit = args
        target = work / "written" / f"{kind}.npz"
        target.parent.mkdir(exist_ok=True)
        target.unlink(missing_ok=True)
        old = resource.getrlimit(resource.RLIMIT_FSIZE)
        handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old[1]))
        try:
            items[kind].save(target)
        except TrackerError as exc:
            one_line(exc, target.name)
            if target.exists():
                raise ValueError(f"a failed write left {target}") from None
            return "rejected"
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, old)
            signal.signal(signal.SIGXFSZ, handler)
        return "accepted"

    return make, check
