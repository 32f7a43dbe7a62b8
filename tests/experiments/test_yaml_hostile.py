"""Hostile experiment configs (issue 14): every class the fuzzing campaign found, with its exact
one-line message, and properties of the safe YAML reader (depth, aliases, duplicate keys, floats
in any spelling)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.cli import main
from tracker.errors import ConfigError
from tracker.experiments.config import keys_table, load_config
from tracker.experiments.overrides import parse_override
from tracker.yamlsafe import MAX_DEPTH, MAX_VALUES, load_yaml_text, read_yaml_file

from .conftest import DEMO_WAVE

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)
BASE = f"clip: {{path: {DEMO_WAVE}}}\nsim: {{duration: 0.1}}\noutputs: {{plots: false}}\n"


def _error(tmp_path: Path, text: str, overrides: list[str] = ()) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, list(overrides))
    message = str(info.value)
    assert "\n" not in message
    return message.replace(str(path), "c.yaml")


CONSTRUCTION = {
    # PyYAML raised ValueError, TypeError, AttributeError... for these; dates are now plain text.
    "!!int ''": "c.yaml:1: '' is not a valid !!int",
    "!!int 0x": "c.yaml:1: '0x' is not a valid !!int",
    "!!float abc": "c.yaml:1: 'abc' is not a valid !!float",
    "!!bool maybe": "c.yaml:1: 'maybe' is not a valid !!bool",
    "!!timestamp xyz": "c.yaml:1: 'xyz' is not a valid !!timestamp",
    "!!timestamp 2020-13-45": "c.yaml:1: '2020-13-45' is not a valid !!timestamp",
}


@pytest.mark.parametrize("value, message", CONSTRUCTION.items(), ids=CONSTRUCTION.keys())
def test_values_pyyaml_cannot_construct_are_one_line_naming_file_and_line(tmp_path, value, message):
    assert _error(tmp_path, f"description: {value}\n" + BASE) == message


@pytest.mark.parametrize("value", ["2020-13-45", "2020-01-01 25:00:00", "2020-01-01T10:00:00+25:00", "0000-01-01"])
def test_dates_that_are_not_dates_are_just_text(tmp_path, value):
    path = tmp_path / "c.yaml"
    path.write_text(f"description: {value}\n" + BASE)
    assert load_config(path).description == value


CLASSES = {
    "nesting 491 deep": ("description: " + "[" * 491 + "]" * 491 + "\n" + BASE,
                         "c.yaml:1: nested more than 64 levels deep: refused"),
    "a self-referencing alias": (BASE + "balls: &r [*r]\n",
                                 "c.yaml:4: alias *r is inside its own anchor (a value that contains itself)"),
    "a hex integer of 4000 digits": (BASE + "seed: 0x" + "f" * 4000 + "\n",
                                     "c.yaml:4: integer '0xfffffffffffffffffff...' has more than 30 digits"),
    "10^400 in a float key": (BASE + "controller: {gains: {k_t: 1" + "0" * 400 + "}}\n",
                              "c.yaml:4: integer '100000000000000000000...' has more than 30 digits"),
    "a 0x seed past 2^32": (BASE + "seed: 0xffffffffffffffffff\n",
                            "c.yaml: seed: must be <= 4294967295, got 4722366482869645213695"),
    "a path component over 255 characters": (
        "clip: {path: /tmp/" + "a" * 300 + ".bvh}\n",
        "c.yaml: clip.path: file '/tmp/" + "a" * 51 + "... has a path component "
        "longer than 255 bytes (looked for /tmp/" + "a" * 152 + "...)"),
    "a name over 128 characters": (BASE + "name: " + "n" * 200 + "\n",
                                   "c.yaml: name: 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn... is longer than "
                                   "128 characters (it names folders)"),
    "a duplicate key in a flow mapping": ("sim: {dt: 10, dt: 1/60}\n" + BASE.replace("sim:", "simulation_:"),
                                          "c.yaml:1: key 'dt' is given twice (lines 1 and 1); give each key once"),
    "a duplicate section": (BASE + "sim:\n  dt: 1/30\n",
                            "c.yaml:4: key 'sim' is given twice (lines 2 and 4); give each key once"),
    "a gain of 1.0e+308": (BASE + "controller: {gains: {k_t: 1.0e+308}}\n",
                           "c.yaml: controller.gains.k_t: must be <= 1e+07 N·m/rad/kg or N·m/rad, got 1e+308"),
    "a time step of 1e-300": (BASE.replace("duration: 0.1", "duration: 0.1, dt: 1e-300"),
                              "c.yaml: sim.dt: must be >= 1e-05 s, got 1e-300"),
}


@pytest.mark.parametrize("text, message", CLASSES.values(), ids=CLASSES.keys())
def test_each_hostile_config_class_is_one_exact_line(tmp_path, text, message):
    assert _error(tmp_path, text) == message


def _bomb(name: str, levels: int = 9, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "bomb:\n" + "".join(f"  {line}\n" for line in lines) + f"{name}: *a{levels - 1}\n"


@pytest.mark.parametrize("key", ["name", "description"])
def test_an_alias_bomb_is_refused_before_it_is_expanded(tmp_path, key):
    """9^9 values: it hung for minutes while the message rendered the expanded value."""
    assert _error(tmp_path, BASE + _bomb(key)) == "c.yaml:9: more than 50,000 values (aliases expanded): refused"


def test_a_config_over_the_size_limit_is_refused_with_the_limit(tmp_path):
    message = _error(tmp_path, BASE + "description: " + "x" * (1 << 20) + "\n")
    assert message == "c.yaml: the config file is larger than the 1 MiB limit for config files"


def test_a_long_value_is_cut_before_it_is_rendered(tmp_path):
    message = _error(tmp_path, BASE + "root: {mode: " + "[x, " * 5000 + "x" + "]" * 0 + "}\n")
    assert len(message) < 300
    message = _error(tmp_path, BASE + "root: {mode: [" + ", ".join(["abcdef"] * 20_000) + "]}\n")
    assert message == ("c.yaml: root.mode: [abcdef, abcdef, abcdef, abcdef, abcdef, abcdef, abcdef, ... is not "
                       "allowed (valid: anchored, kinematic, free)")


def test_clip_start_after_the_clip_end_names_the_file(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(BASE)
    assert main(["run", str(path), "--set", "clip.start=100", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (f"error: {path}: clip.start: must be before the end of the clip "
                                       "demo_wave.bvh (3.000 s), got 100\n")


def test_set_reads_floats_in_any_spelling_and_list_items_in_brackets(tmp_path, capsys):
    path = tmp_path / "c.yaml"
    path.write_text(BASE)
    assert main(["run", str(path), "--set", "controller.gains.k_t=1e30", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == ("error: c.yaml: controller.gains.k_t: must be <= 1e+07 N·m/rad/kg or "
                                       "N·m/rad, got 1e+30 [from --set controller.gains.k_t=1e30]\n"
                                       ).replace("c.yaml", str(path))
    cfg = load_config(path, ["controller.gains.k_t=2.5e4", "balls=[{preset: basketball, target_link: chest, "
                             "impact_time: 0.05, speed: 5, flight_time: 0.3}]", "balls[0].speed=7E+0", "balls[0].mass=5e-1"])
    assert cfg.controller.gains.k_t == 25000.0 and cfg.balls[0].speed == 7.0 and cfg.balls[0].mass == 0.5


def test_keys_lists_the_range_of_every_bounded_number():
    table = keys_table()
    lines = {line.split()[0]: line for line in table.splitlines()}
    assert "(0 <= x <= 1e+07): tracking gain" in lines["controller.gains.k_t"]
    assert "(1e-05 <= x <= 0.1): physics" in lines["sim.dt"]
    assert "(0 <= x <= 10) [s]" not in lines["schedule.t_e"] and "(0 <= x <= 10)" in lines["schedule.t_e"]
    assert "(0 <= x <= 4294967295)" in lines["seed"]
    for key in ("root.kp_linear", "root.kp_angular", "schedule.k_r", "controller.gains.kd", "balls[i].speed",
                "sim.duration", "sim.max_speed"):
        assert re.search(r"\(.*x <= [0-9e+.]+\)", lines[key]), lines[key]


# -- properties of the safe reader ---------------------------------------------------------------


@SETTINGS
@given(st.integers(min_value=1, max_value=200), st.sampled_from(["[", "{k: "]))
def test_nesting_is_read_up_to_the_limit_and_refused_past_it(depth, opener):
    closer = "]" if opener == "[" else "}"
    text = "a: " + opener * depth + "1" + closer * depth
    if depth < MAX_DEPTH:  # the top mapping is one level
        node = load_yaml_text(text, "x.yaml")["a"]
        for _ in range(depth - 1):
            node = node[0] if opener == "[" else node["k"]
        assert node == ([1] if opener == "[" else {"k": 1})
    else:
        with pytest.raises(ConfigError) as info:
            load_yaml_text(text, "x.yaml")
        assert str(info.value) == f"x.yaml:1: nested more than {MAX_DEPTH} levels deep: refused"


@SETTINGS
@given(st.integers(min_value=1, max_value=12), st.integers(min_value=1, max_value=12))
def test_aliases_expand_up_to_the_limit_and_are_refused_past_it(levels, width):
    text = _bomb("top", levels, width)
    sizes = [1 + width]  # a0: the list and its items
    for _ in range(1, levels):
        sizes.append(1 + width * sizes[-1])
    # Every value of the document once expanded: the top mapping, its two keys, the 'bomb' mapping
    # with a key and an anchored list per level, and 'top', the last level again.
    total = 1 + 1 + (1 + sum(1 + n for n in sizes)) + 1 + sizes[-1]
    if total <= MAX_VALUES:
        node = load_yaml_text(text, "x.yaml")["top"]
        for _ in range(levels - 1):
            assert len(node) == width
            node = node[0]
        assert node == ["lol"] * width
    else:
        with pytest.raises(ConfigError, match=r"^x\.yaml:\d+: more than 50,000 values \(aliases expanded\): refused$"):
            load_yaml_text(text, "x.yaml")


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=2, max_size=8))
def test_a_key_given_twice_is_refused_with_both_lines(keys):
    text = "".join(f"{k}: {i}\n" for i, k in enumerate(keys))
    first = {}
    dup = None
    for line, k in enumerate(keys, 1):
        if k in first:
            dup = (k, first[k], line)
            break
        first[k] = line
    if dup is None:
        assert load_yaml_text(text, "x.yaml") == {k: i for i, k in enumerate(keys)}
    else:
        with pytest.raises(ConfigError) as info:
            load_yaml_text(text, "x.yaml")
        k, a, b = dup
        assert str(info.value) == f"x.yaml:{b}: key '{k}' is given twice (lines {a} and {b}); give each key once"


@SETTINGS
@given(st.floats(min_value=0, max_value=1e7, allow_subnormal=False),
       st.sampled_from(["{:e}", "{:E}", "{:g}", "{!r}", "{:.3e}", "{:+e}", "{:.0e}"]))
def test_set_reads_a_float_in_any_spelling(value, spelling):
    text = spelling.format(value)
    key, parsed = parse_override(f"controller.gains.k_t={text}")
    assert key == "controller.gains.k_t"
    assert isinstance(parsed, (int, float)) and parsed == float(text)


def test_the_safe_reader_is_reusable_for_other_files(tmp_path):
    """Keyframe files and joint maps call the same reader with their own error type and size limit."""
    from tracker.errors import RetargetError

    path = tmp_path / "keys.yaml"
    path.write_text("poses: [" + ", ".join(["0.1"] * 100) + "]\n")
    with pytest.raises(RetargetError) as info:
        read_yaml_file(path, "keyframe", error=RetargetError, max_bytes=100)
    assert str(info.value) == f"{path}: the keyframe file is larger than the 100 bytes limit for keyframe files"
    assert read_yaml_file(path, "keyframe", error=RetargetError)["poses"][0] == 0.1


def test_a_set_value_on_several_lines_is_shown_on_one(tmp_path):
    """Found by scripts/fuzz.py --seed 3: a folded block scalar as a --set value."""
    message = _error(tmp_path, BASE, ["balls.0.mass=>-\n  folded"])
    assert message == ("c.yaml: balls.0: index 0 is out of range (balls has no items) "
                       "[from --set balls.0.mass=>-\\n  folded]")
    message = _error(tmp_path, BASE, ["sim.\nd t=1"])
    assert message == "c.yaml: 'sim.d t': a key path has no spaces or control characters [from --set sim.\\nd t=1]"
