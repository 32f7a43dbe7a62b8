"""Every number has a range (issue 34, item 2): hostile numbers end in one line and exit 2.

On every command, each numeric flag is given a number past the float range (``1e309``, and
``1e999999``, whose exact value ``float(Fraction(...))`` could not hold), a 30-digit number,
``nan``/``inf`` and, for time steps, ``1e-9``; keyframe files get holds and key times of ``1e9`` s
and keys ``1e-12`` s apart. Each case runs ``tracker.cli.main`` in-process and must end with
status 2 and one line on stderr starting ``error:`` that names the flag (or the key), without a
traceback or an internal error. Cases that simulated for ever before the ranges existed are
stopped by an alarm, so they fail rather than hang on a checkout without the ranges.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

from tracker.cli import COMMANDS, EXIT_BAD_INPUT, build_parser, main

ROOT = Path(__file__).resolve().parents[1]
KICK = str(ROOT / "data" / "motions" / "kick.bvh")
SOCCER = str(ROOT / "configs" / "soccer_light.yaml")
SWEEP = str(ROOT / "configs" / "sweeps" / "ball_speed.yaml")
FREE_WALK = str(ROOT / "configs" / "free" / "cmu_02_01_walk.yaml")
#: Seconds a case may take before it counts as a hang (each takes milliseconds once parsed).
BUDGET_S = 30
THIRTY = "1" * 30
#: Past the float range, a 30-digit number, and not numbers at all.
HOSTILE = ("1e309", "-1e309", "1e999999", THIRTY, "nan", "inf")

TWO_KEYS = "model: humanoid\nhold: {hold}\nkeys:\n  - t: 0.0\n    pose: {{left_knee: 0}}\n  - t: {t}\n" \
           "    pose: {{left_knee: 30}}\n"


class _Hung(BaseException):
    """The case ran past :data:`BUDGET_S` (a BaseException: the CLI's ``except Exception`` lets it through)."""


@pytest.fixture(autouse=True)
def budget():
    def ring(_signum, _frame):
        raise _Hung(f"still running after {BUDGET_S} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(BUDGET_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("numbers")
    (d / "keys.yaml").write_text(TWO_KEYS.format(hold=0.05, t=0.5))
    (d / "folder").mkdir()
    return {"keys": str(d / "keys.yaml"), "folder": str(d / "folder")}


def run_cli(argv: list[str], capsys, monkeypatch, tmp_path) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)  # nothing a case writes lands in the checkout
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("TRACKER_DEBUG", raising=False)
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse
        status = exc.code
    return status, capsys.readouterr().err


def assert_one_line(status: int, err: str, argv: list[str], name: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == EXIT_BAD_INPUT, (argv, status, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    assert name in lines[0], (argv, err)
    assert "internal error" not in err and "Traceback" not in err


#: (command, arguments before the flag, flag): every numeric flag of every command.
FLOAT_FLAGS = [
    ("track", [KICK], "--dt"), ("track", [KICK], "--duration"), ("track", [KICK], "--gain-scale"),
    ("track", [KICK, "--controller", "timed_pd"], "--lookahead"), ("track", [KICK], "--start"),
    ("retarget", [KICK], "--fps"), ("retarget", [KICK, "--sheet", "s.png"], "--sheet-at"),
    ("optimize", [KICK], "--dt"), ("optimize", [KICK], "--segment"), ("optimize", [KICK], "--duration"),
    ("optimize", [KICK], "--width-scale"), ("optimize", [KICK], "--decay"), ("optimize", [KICK], "--start"),
    ("play", [KICK], "--speed"), ("play", [KICK], "--dt"), ("replay", ["{folder}"], "--speed"),
    ("keyframes", ["{keys}"], "--dt"), ("keyframes", ["{keys}"], "--power"), ("keyframes", ["{keys}"], "--kp-per-kg"),
    ("push", ["stand"], "--dt"), ("push", ["stand"], "--force"), ("push", ["stand"], "--duration"),
    ("push", ["stand"], "--start"), ("push", ["stand"], "--time"), ("push", ["stand"], "--direction"),
    ("push", ["stand"], "--kp"), ("push", ["stand"], "--kd"), ("model", ["fit", KICK], "--mass"),
    ("scenario", ["soccer_light"], "--dt"), ("report", ["{folder}", "--html"], "--fps"),
]
INT_FLAGS = [
    ("optimize", [KICK], "--samples"), ("optimize", [KICK], "--iterations"), ("optimize", [KICK], "--keep"),
    ("optimize", [KICK], "--workers"), ("optimize", [KICK], "--seed"), ("optimize", [KICK], "--lookahead"),
    ("play", [KICK], "--frames"), ("replay", ["{folder}"], "--frames"), ("sweep", [SWEEP], "--workers"),
    ("report", ["{folder}", "--html"], "--max-runs"), ("perturb", [FREE_WALK], "--seed"),
    ("perturb", [FREE_WALK], "--balls"), ("perturb", [FREE_WALK], "--push-times"), ("perturb", [FREE_WALK], "--workers"),
]


def _cases():
    for command, before, flag in FLOAT_FLAGS:
        for value in HOSTILE:
            yield pytest.param(command, before, flag, value, id=f"{command}{flag}={value[:8]}")
    for command, before, flag in INT_FLAGS:
        for value in (THIRTY, "1e309", "nan", "-" + THIRTY):
            yield pytest.param(command, before, flag, value, id=f"{command}{flag}={value[:8]}")


@pytest.mark.parametrize("command, before, flag, value", list(_cases()))
def test_a_hostile_number_is_one_line_naming_the_flag(command, before, flag, value, files, capsys, monkeypatch,
                                                      tmp_path):
    argv = [command] + [a.format(**files) for a in before] + [flag, value]
    status, err = run_cli(argv, capsys, monkeypatch, tmp_path)
    assert_one_line(status, err, argv, flag)


def test_every_command_is_covered():
    assert {c for c, _, _ in FLOAT_FLAGS + INT_FLAGS} >= set(COMMANDS) - {"inspect", "run", "reproduce"}


@pytest.mark.parametrize("command, before", [
    ("track", [KICK]), ("optimize", [KICK]), ("play", [KICK]), ("keyframes", ["{keys}"]), ("push", ["stand"]),
    ("scenario", ["soccer_light"]),
])
@pytest.mark.parametrize("dt", ["1e-9", "1/1000000000", "0.000009"])
def test_a_time_step_under_1e_5_s_is_refused_before_anything_runs(command, before, dt, files, capsys, monkeypatch,
                                                                   tmp_path):
    argv = [command] + [a.format(**files) for a in before] + ["--dt", dt]
    status, err = run_cli(argv, capsys, monkeypatch, tmp_path)
    assert_one_line(status, err, argv, "--dt")
    assert "1e-05" in err


@pytest.mark.parametrize("value", ['"1e309"', '"1e999999"', '"1/0"', f'"{THIRTY}/3"'])
def test_a_config_number_written_as_text_is_checked_with_bounded_work(value, capsys, monkeypatch, tmp_path):
    argv = ["run", SOCCER, "--set", f"sim.dt={value}", "--out", str(tmp_path / "out")]
    status, err = run_cli(argv, capsys, monkeypatch, tmp_path)
    assert_one_line(status, err, argv, "sim.dt")


@pytest.mark.parametrize("hold, t, key", [
    ("1.0e9", "0.5", "hold"),                 # a hold of 30 years
    ("0.05", "1.0e9", "keys[1].t"),           # a key 30 years in
    ("3000.0", "1000.0", "hold"),             # each within 3600 s, together over it
    ("0.05", "0.000000000001", "keys[1].t"),  # keys 1e-12 s apart
    ("0.05", "0.00005", "keys[1].t"),         # keys 5e-5 s apart
])
def test_keyframe_times_and_holds_have_a_range(hold, t, key, capsys, monkeypatch, tmp_path):
    path = tmp_path / "keys.yaml"
    path.write_text(TWO_KEYS.format(hold=hold, t=t))
    argv = ["keyframes", str(path), "--json", "--out", str(tmp_path / "out")]
    status, err = run_cli(argv, capsys, monkeypatch, tmp_path)
    assert_one_line(status, err, argv, f"keys.yaml: {key}:")
    assert not (tmp_path / "out").exists()


def test_keyframes_json_holds_no_nan_when_the_last_key_comes_before_the_first_step(capsys, monkeypatch, tmp_path):
    """Keys 1 ms apart (allowed) with 1/60 s steps: no step lands on the last key, and the secondary
    motion "at the last key" used to be NaN, which --json printed (not JSON)."""
    path = tmp_path / "keys.yaml"
    path.write_text(TWO_KEYS.format(hold=0.05, t=0.001))
    monkeypatch.chdir(tmp_path)
    assert main(["keyframes", str(path), "--json", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
    assert data["secondary_motion"]["at_last_key_rad"] >= 0
    json.loads((tmp_path / "out" / "metrics.json").read_text(), parse_constant=lambda c: pytest.fail(c))


def _numeric_actions():
    """(command, flag, help) of every flag whose type is one of tracker.commands._args's number types."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for command, p in sub.choices.items():
        for action in p._actions:
            if getattr(action.type, "__module__", None) == "tracker.commands._args":
                yield command, action.option_strings[-1], action.help or ""


def test_every_numeric_flag_says_its_range_in_help():
    seen = list(_numeric_actions())
    assert len(seen) >= 30
    for command, flag, text in seen:
        assert re.search(r"(<=|\bto\b|at most)\s*-?[0-9]", text), f"tracker {command} {flag}: no range in {text!r}"


@pytest.mark.parametrize("body, said", [
    ('dt: "1e309"', "dt: expected a number from 0 to 0.1"),
    ("dt: 1e-9", "dt: must be at least 1e-05 s"),
    ("time: 1e9", "time: expected a number from 0 to 3600"),
    ("duration: .inf", "duration: expected a number"),
    ("forces: {start: 0, stop: 1e6, step: 1}", "more than 1000"),
    ("forces: [" + ", ".join(["1"] * 1001) + "]", "more than 1000"),
])
def test_a_push_sweep_file_with_numbers_out_of_range_is_one_line(tmp_path, capsys, body, said):
    path = tmp_path / "sweep.yaml"
    path.write_text(f"kind: push_sweep\n{body}\n")
    from tracker.cli import main

    assert main(["push", "stand", "--sweep", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and said in err and "sweep.yaml" in err
