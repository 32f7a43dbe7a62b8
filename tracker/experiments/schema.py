"""Strict parsing of nested frozen dataclasses from YAML data.

A config section is a frozen dataclass; each field declares its help text,
unit and constraints with :func:`setting`. :func:`parse` walks the type hints
(``float``, ``int``, ``bool``, ``str``, ``Literal[...]``, ``X | None``,
``tuple[float, float, float]``, ``tuple[int, int]``, ``dict[str, float]``,
``list[Section]`` and nested sections) and rejects unknown keys, wrong types
and out-of-range values with a one-line :class:`ConfigError` of the form::

    configs/x.yaml: controller.gains.k_t: must be >= 0, got -5

A field marked ``time=True`` is a point in time: seconds of clip time as a plain
number (or ``{clip: S}``), or the clip file's own time, ``{file: S}`` (seconds in
the file) or ``{file_frame: N}`` (0-based frame of the file); on the command line
also ``file:S``, ``file_frame:N``, ``clip:S``. Parsing keeps file times as
:class:`FileTime`; whoever knows the file turns them into clip time
(:func:`tracker.experiments.config.resolve_times`).

Nothing here knows about experiments; :mod:`tracker.experiments.config`
declares the sections.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Literal

from tracker.errors import ConfigError
from tracker.numbers import number_from_text

#: Marks a field without default that the file must give.
REQUIRED: Any = MISSING


def setting(default: Any = REQUIRED, help: str = "", *, unit: str = "", gt: float | None = None,
            ge: float | None = None, le: float | None = None, lt: float | None = None,
            fraction: bool = False, path: bool = False, name: bool = False, time: bool = False) -> Any:
    """A dataclass field with help and constraints.

    Args:
        default: the default (a list/dict default is copied per instance); omit for required keys.
        help: one line shown in docs and errors.
        unit: SI unit of the value (``s``, ``m/s``, ``N·m/rad``...).
        gt, ge, le, lt: bounds of a number.
        fraction: a number may also be written as a fraction string like ``1/60``.
        path: a file path, resolved against the config's folder (``pybullet_data:`` prefix allowed).
        name: a string used in folder names: letters, digits, ``.``, ``_``, ``-`` only.
        time: a point in time: clip seconds (the bounds apply), or ``{file: S}`` / ``{file_frame: N}``
            (module docstring).
    """
    meta = {"help": help, "unit": unit, "gt": gt, "ge": ge, "le": le, "lt": lt,
            "fraction": fraction, "path": path, "name": name, "time": time}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    if dataclasses.is_dataclass(default):
        return field(default_factory=lambda d=default: dataclasses.replace(d), metadata=meta)
    return field(default=default, metadata=meta)


def show(value: Any, n: int = 60) -> str:
    """A value as the user wrote it, cut to ``n`` characters (rendered only that far: a value
    may be huge, or share parts through YAML aliases)."""
    if isinstance(value, str):
        text = repr(value[: n + 2])
    else:
        parts: list[str] = []
        _render(value, parts, [n + 2])
        text = "".join(parts)
    return text if len(text) <= n else text[: n - 3] + "..."


def _render(value: Any, out: list[str], budget: list[int]) -> None:
    """Append YAML-ish text of ``value`` to ``out`` until ``budget[0]`` characters are spent."""
    if budget[0] <= 0:
        return
    if isinstance(value, (list, tuple, dict)):
        items = list(value.items()) if isinstance(value, dict) else list(value)
        out.append("{" if isinstance(value, dict) else "[")
        budget[0] -= 1
        for i, item in enumerate(items):
            if budget[0] <= 0:
                return
            if i:
                out.append(", ")
                budget[0] -= 2
            if isinstance(value, dict):
                _render(item[0], out, budget)
                out.append(": ")
                budget[0] -= 2
                _render(item[1], out, budget)
            else:
                _render(item, out, budget)
        out.append("}" if isinstance(value, dict) else "]")
        budget[0] -= 1
        return
    text = _yaml_scalar(value)[: budget[0]]
    out.append(text)
    budget[0] -= len(text)


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml_scalar(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    if isinstance(value, int) and abs(value) >= 10 ** 30:
        return f"{'-' if value < 0 else ''}an integer of {int(abs(value)).bit_length()} bits"
    if isinstance(value, str) and len(value) > 200:
        return value[:200]
    return str(value)


def type_name(value: Any) -> str:
    """The YAML kind of a parsed value (for 'expected X, got Y' messages)."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a mapping"}.get(type(value), type(value).__name__)


class Context:
    """Where parsing happens: the file, its folder, and which keys came from ``--set``.

    Args:
        source: the config file (named in every message).
        base_dir: folder against which relative paths resolve (default: the file's folder).
        overridden: key path -> where its value came from (``--set sim.dt=1/30``); errors under
            such a key say so.
    """

    def __init__(self, source: str | Path, base_dir: Path | None = None, overridden: dict[str, str] | None = None):
        self.source = str(source)
        self.base_dir = base_dir if base_dir is not None else Path(source).resolve().parent
        self.overridden = overridden or {}
        #: key path -> a note added to errors about that key (a file time's spelling and clip time)
        self.notes: dict[str, str] = {}

    def error(self, key: str, message: str, valid: typing.Iterable[Any] | None = None) -> ConfigError:
        """A one-line :class:`ConfigError`: ``file: key: message (valid: ...)``."""
        if len(key) > 120:  # a key path the user wrote: cut before rendering
            key = key[:117] + "..."
        text = f"{self.source}: {key}: {message}" if key else f"{self.source}: {message}"
        if valid is not None:
            text += f" (valid: {', '.join(str(v) for v in valid)})"
        if key in self.notes:
            text += f" ({self.notes[key]})"
        for k, origin in self.overridden.items():
            if key and (key == k or key.startswith((k + ".", k + "[")) or k.startswith(key + ".")):
                text += f" [from {origin}]"
                break
        return ConfigError(" ".join(text.replace("\r", "\n").split("\n")))  # always one line


def join(prefix: str, key: str | int) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def parse(cls: type, raw: Any, ctx: Context, key: str = "") -> Any:
    """Build the dataclass ``cls`` from the YAML mapping ``raw``; every key checked.

    Raises:
        ConfigError: naming the file, the key path, what was given and what is allowed.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ctx.error(key, f"expected a mapping of settings, got {type_name(raw)} {show(raw)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for k in raw:
        if k not in fields:
            near = difflib.get_close_matches(str(k), fields, n=1) if len(str(k)) <= 100 else []
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ctx.error(join(key, k), f"unknown key{hint}", fields)
    hints = typing.get_type_hints(cls)
    values = {}
    for name, f in fields.items():
        sub = join(key, name)
        if name not in raw:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ctx.error(sub, "missing required key" + (f" ({f.metadata['help']})" if f.metadata.get("help") else ""))
            continue
        values[name] = convert(hints[name], raw[name], ctx, sub, f.metadata)
    return cls(**values)


def convert(tp: Any, value: Any, ctx: Context, key: str, meta: typing.Mapping = types.MappingProxyType({})) -> Any:
    """Check and convert one value against the type ``tp`` and the field's constraints."""
    if tp is Any:  # checked later by whoever uses it (e.g. sweep overrides, by the experiment schema)
        return value
    if meta.get("time") and isinstance(value, (dict, str)):
        return _time(value, ctx, key, meta)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if value is None and len(inner) < len(args):
            return None
        if len(inner) > 1:  # e.g. float | dict[str, float]: pick by the YAML kind of the value
            kinds = {dict: lambda a: typing.get_origin(a) is dict or dataclasses.is_dataclass(a),
                     list: lambda a: typing.get_origin(a) in (list, tuple)}
            test = kinds.get(type(value), lambda a: typing.get_origin(a) is None and not dataclasses.is_dataclass(a))
            fits = [a for a in inner if test(a)]
            if not fits:
                raise ctx.error(key, f"expected {' or '.join(_type_text(a) for a in inner)}, got {type_name(value)} "
                                f"{show(value)}")
            return convert(fits[0], value, ctx, key, meta)
        return convert(inner[0], value, ctx, key, meta)
    if dataclasses.is_dataclass(tp):
        return parse(tp, value, ctx, key)
    if origin is Literal:
        if not isinstance(value, str) or value not in args:
            raise ctx.error(key, f"{show(value)} is not allowed", args)
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ctx.error(key, f"expected true or false, got {show(value)}")
        return value
    if tp in (float, int):
        return _number(tp, value, ctx, key, meta)
    if tp is str:
        return _string(value, ctx, key, meta)
    if origin is tuple:
        n = len(args)
        if not isinstance(value, list) or len(value) != n:
            raise ctx.error(key, f"expected a list of {n} numbers, got {show(value)}")
        return tuple(convert(a, v, ctx, f"{key}[{i}]", meta) for i, (a, v) in enumerate(zip(args, value)))
    if origin is list:
        if not isinstance(value, list):
            raise ctx.error(key, f"expected a list, got {type_name(value)} {show(value)}")
        return [convert(args[0], v, ctx, join(key, i), meta) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ctx.error(key, f"expected a mapping, got {type_name(value)} {show(value)}")
        return {str(k): convert(args[1], v, ctx, join(key, k), meta) for k, v in value.items()}
    raise TypeError(f"schema type {tp!r} of {key} is not supported")  # a bug in a section, not user input


def _number(tp: type, value: Any, ctx: Context, key: str, meta: typing.Mapping) -> float | int:
    given = value
    if meta.get("fraction") and isinstance(value, str):
        try:  # bounded work for any text: no OverflowError for 1e309, no 10**99999999 for 1e99999999
            value = number_from_text(value)
        except ValueError:
            raise ctx.error(key, f"expected a number or a fraction like 1/60, got {show(given)}") from None
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ctx.error(key, f"expected an integer, got {show(given)}")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        what = "a number or a fraction like 1/60" if meta.get("fraction") else "a number"
        raise ctx.error(key, f"expected {what}, got {show(given)}")
    elif not math.isfinite(value):
        raise ctx.error(key, f"expected a finite number, got {show(given)}")
    for bound, ok, word in (("gt", lambda x, b: x > b, ">"), ("ge", lambda x, b: x >= b, ">="),
                            ("lt", lambda x, b: x < b, "<"), ("le", lambda x, b: x <= b, "<=")):
        b = meta.get(bound)
        if b is not None and not ok(value, b):
            unit = f" {meta['unit']}" if meta.get("unit") else ""
            raise ctx.error(key, f"must be {word} {bound_text(b)}{unit}, got {show(given)}")
    if isinstance(value, int) and abs(value) > 2 ** 63:  # float() of a huge integer overflows
        raise ctx.error(key, f"{show(given)} is out of range (magnitude over 2^63)")
    return tp(value)


#: How a time may be given: the key of ``{BASE: VALUE}`` (or ``BASE:VALUE`` on the command line).
TIME_BASES = ("clip", "file", "file_frame")
#: The spellings, for messages.
TIME_SPELLINGS = "seconds of clip time, {file: SECONDS} (file time) or {file_frame: N} (a frame of the file)"


@dataclass(frozen=True)
class FileTime:
    """A time given in the clip file's terms, not yet turned into clip time.

    Attributes:
        base: ``"file"`` (``value`` in seconds of the file) or ``"file_frame"`` (``value`` a 0-based frame).
        value: the number as given.
    """

    base: Literal["file", "file_frame"]
    value: float | int

    def text(self) -> str:
        """The spelling a config uses: ``{file_frame: 96}``."""
        return f"{{{self.base}: {self.value!r}}}"


def _time(value: dict | str, ctx: Context, key: str, meta: typing.Mapping) -> float | FileTime:
    """A time field given as ``{BASE: VALUE}`` or ``BASE:VALUE``: a clip time (float) or a :class:`FileTime`."""
    given = value
    if isinstance(value, str):
        base, sep, text = value.partition(":")
        base = base.strip()
        if not sep or base not in TIME_BASES or not text.strip():
            raise ctx.error(key, f"expected {TIME_SPELLINGS}, got {show(given)}")
        from tracker.yamlsafe import load_yaml_text

        try:
            number = load_yaml_text(text, key, error=ConfigError, lines=False)
        except ConfigError:
            number = text.strip()
        value = {base: number}
    if len(value) != 1 or next(iter(value)) not in TIME_BASES:
        raise ctx.error(key, f"expected {TIME_SPELLINGS}, got {show(given)}", [f"{{{b}: ...}}" for b in TIME_BASES])
    base, number = next(iter(value.items()))
    sub = join(key, base)
    if base == "clip":
        return _number(float, number, ctx, sub, meta)
    if base == "file":
        return FileTime("file", _number(float, number, ctx, sub, {"ge": 0, "le": 86400, "unit": "s"}))
    return FileTime("file_frame", _number(int, number, ctx, sub, {"ge": 0, "le": 2 ** 31}))


def _string(value: Any, ctx: Context, key: str, meta: typing.Mapping) -> str:
    if not isinstance(value, str):
        raise ctx.error(key, f"expected a string, got {type_name(value)} {show(value)}")
    if meta.get("name"):
        bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "._-"))})
        if not value or bad:
            raise ctx.error(key, f"{show(value)} must be non-empty and use only letters, digits, '.', '_', '-'")
        if len(value) > MAX_NAME_CHARS:
            raise ctx.error(key, f"{show(value)} is longer than {MAX_NAME_CHARS} characters (it names folders)")
    if meta.get("path"):
        return resolve_path(value, ctx, key)
    return value


PYBULLET_DATA_PREFIX = "pybullet_data:"
#: Longest run or sweep name (result folders add a timestamp; file systems allow 255 bytes).
MAX_NAME_CHARS = 128


def expand_user(value: str) -> Path:
    """``Path(value).expanduser()``, or the path as written when ``~user`` names nobody."""
    try:
        return Path(value).expanduser()
    except (RuntimeError, KeyError, OSError):
        return Path(value)


def is_file(path: str | Path) -> bool:
    """``Path.is_file`` that says False, not raise, for a name too long or holding a NUL byte."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def resolve_path(value: str, ctx: Context, key: str) -> str:
    """An existing file: absolute, ``pybullet_data:<path>``, or relative to the config's folder."""
    if value.startswith(PYBULLET_DATA_PREFIX):
        import pybullet_data  # the data package only

        path = Path(pybullet_data.getDataPath()) / value[len(PYBULLET_DATA_PREFIX):]
    else:
        path = expand_user(value)
        if not path.is_absolute():
            path = ctx.base_dir / path
    path = Path(_normalise(path))
    if not is_file(path):
        why = "does not exist"
        if any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in path.parts):
            why = "has a path component longer than 255 bytes"
        elif "\0" in str(path):
            why = "holds a NUL character"
        raise ctx.error(key, f"file {show(value)} {why} (looked for {_cut(str(path), 160)})")
    return str(path)


def _normalise(path: Path) -> str:
    import os

    return os.path.normpath(str(path))


def to_plain(obj: Any) -> Any:
    """A dataclass tree as plain YAML-able data (tuples become lists)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    return obj


@dataclass(frozen=True)
class FieldDoc:
    """One documented key: path, type, default, unit, help."""

    key: str
    type: str
    default: str
    unit: str
    help: str
    range: str = ""


def describe(cls: type, prefix: str = "") -> list[FieldDoc]:
    """Every key of the section tree, for documentation."""
    out = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints[f.name]
        key = join(prefix, f.name)
        if f.default is not MISSING:
            default = _yaml_scalar(f.default) if not dataclasses.is_dataclass(f.default) else ""
        elif f.default_factory is not MISSING:
            d = f.default_factory()
            default = "" if dataclasses.is_dataclass(d) else _yaml_scalar(to_plain(d))
        else:
            default = "(required)"
        type_text = _type_text(tp)
        if f.metadata.get("time"):  # seconds of clip time, or the clip file's own time
            type_text = type_text.replace("float", "clip time (s)") + " | {file: s} | {file_frame: n}"
        out.append(FieldDoc(key, type_text, default, f.metadata.get("unit", ""), f.metadata.get("help", ""),
                            range_text(f.metadata)))
        if dataclasses.is_dataclass(tp):
            out.extend(describe(tp, key))
        elif typing.get_origin(tp) is list and dataclasses.is_dataclass(typing.get_args(tp)[0]):
            out.extend(describe(typing.get_args(tp)[0], key + "[i]"))
    return out


def range_text(meta: typing.Mapping) -> str:
    """The allowed range of a number field, e.g. ``0 < x <= 0.1`` (empty when unbounded)."""
    lo = next(((op, meta[b]) for b, op in (("gt", "<"), ("ge", "<=")) if meta.get(b) is not None), None)
    hi = next(((op, meta[b]) for b, op in (("lt", "<"), ("le", "<=")) if meta.get(b) is not None), None)
    if lo and hi:
        return f"{bound_text(lo[1])} {lo[0]} x {hi[0]} {bound_text(hi[1])}"
    if lo:
        return f"x {'>' if lo[0] == '<' else '>='} {bound_text(lo[1])}"
    if hi:
        return f"x {hi[0]} {bound_text(hi[1])}"
    return ""


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def bound_text(b: float) -> str:
    """A bound as people write it: ``4294967295``, ``0.1``, ``1e+07``."""
    return str(b) if isinstance(b, int) else f"{b:g}"


def _type_text(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_text(a) for a in args)
    if origin is Literal:
        return " | ".join(args)
    if dataclasses.is_dataclass(tp):
        return "section"
    if origin is tuple:
        return f"[{', '.join(_type_text(a) for a in args)}]"
    if origin is list:
        return f"list of {_type_text(args[0])}"
    if origin is dict:
        return f"mapping of {_type_text(args[1])}"
    return {type(None): "null"}.get(tp, getattr(tp, "__name__", str(tp)))
