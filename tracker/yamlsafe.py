"""Reading YAML that anybody may have written: bounded, strict, one-line errors.

Every YAML file the project reads (experiment configs, sweeps, keyframe files,
joint maps) can go through :func:`read_yaml_file` or :func:`load_yaml_text`.
Compared with ``yaml.safe_load`` they:

- refuse a file over a size limit before parsing it (the limit is in the message);
- refuse a mapping that gives a key twice, naming both lines (PyYAML keeps the last);
- bound nesting depth and the number of values after alias expansion (an
  "alias bomb" of nine aliases nine deep is 9^9 values), and refuse an alias
  that contains itself, before any of it is built;
- read ``1e30`` (YAML 1.2 spelling, no dot) as a float, and leave dates and
  times as the strings they were written as (a ``description: 2020-13-45`` is
  text, not a broken date);
- refuse integers of more than :data:`MAX_INT_DIGITS` digits (Python cannot even
  print one of 4,300);
- turn every failure inside the parser or the constructors (``ValueError`` from
  ``!!int ''``, ``OverflowError``, ``RecursionError``...) into the caller's
  error type, one line naming the file and line.

Parsing uses libyaml's event parser when it is installed (an iterative state
machine, ten times faster than PyYAML's Python one); nodes are composed here,
iteratively, so depth and expansion are counted as they are built.

Example::

    from tracker.errors import ConfigError
    from tracker.yamlsafe import read_yaml_file

    data = read_yaml_file("keys.yaml", what="keyframe", error=ConfigError)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from tracker.errors import ConfigError, TrackerError

#: Default size limit of a YAML file, bytes.
MAX_BYTES = 1 << 20
#: Deepest nesting of lists and mappings (after alias expansion).
MAX_DEPTH = 64
#: Most values (scalars, lists and mappings) a document may hold after alias expansion.
MAX_VALUES = 50_000  # a config holds hundreds; a keyframe file a few thousand; reading 50,000 takes ~1 s
#: Longest integer literal, in digits (2**64 has 20).
MAX_INT_DIGITS = 30
#: How much of a value a message shows.
SHOW_CHARS = 60

_MERGE_TAG = "tag:yaml.org,2002:merge"
_UNSEEN = object()
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


class _Resolver(yaml.resolver.Resolver):
    """PyYAML's YAML 1.1 resolver without timestamps, plus YAML 1.2 floats such as ``1e30``."""


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in rules if tag != "tag:yaml.org,2002:timestamp"]
    for first, rules in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_Resolver.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))


class _Problem(Exception):
    """A problem at a line of the text (1-based; None when unknown)."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _line(mark) -> int | None:
    return mark.line + 1 if mark is not None else None


def show_scalar(value: str, n: int = SHOW_CHARS) -> str:
    """A piece of the text, quoted and cut to ``n`` characters."""
    value = " ".join(value.split())
    return repr(value if len(value) <= n else value[: n - 3] + "...")


def _compose(events, resolver: _Resolver, max_depth: int, max_values: int):
    """The single document's node graph, built iteratively from parser events."""
    anchors: dict[str, Any] = {}
    sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (values after expansion, depth)
    stack: list[list] = []  # [node, children, pending key (mappings), size, depth]
    root = None
    documents = 0

    def add(node, size: int, depth: int, mark) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        top = stack[-1]
        top[3] += size
        top[4] = max(top[4], depth + 1)
        if top[3] > max_values:
            raise _Problem(_line(mark), f"more than {max_values:,} values (aliases expanded): refused")
        if top[4] > max_depth:
            raise _Problem(_line(mark), f"nested more than {max_depth} levels deep (aliases expanded): refused")
        if isinstance(top[0], MappingNode):
            if top[2] is None:
                top[2] = node
            else:
                top[1].append((top[2], node))
                top[2] = None
        else:
            top[1].append(node)

    for event in events:
        if isinstance(event, (StreamStartEvent, StreamEndEvent, DocumentEndEvent)):
            continue
        if isinstance(event, DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _Problem(_line(event.start_mark), "a second YAML document ('---'): one is expected")
            continue
        if isinstance(event, AliasEvent):
            node = anchors.get(event.anchor)
            if node is None:
                raise _Problem(_line(event.start_mark), f"alias *{event.anchor} names no anchor defined before it")
            if any(entry[0] is node for entry in stack):
                raise _Problem(_line(event.start_mark), f"alias *{event.anchor} is inside its own anchor "
                               "(a value that contains itself)")
            add(node, *sizes.get(id(node), (1, 0)), event.start_mark)
        elif isinstance(event, ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolver.resolve(ScalarNode, event.value, event.implicit)
            node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            if event.anchor is not None:
                anchors[event.anchor] = node
            add(node, 1, 0, event.start_mark)
        elif isinstance(event, (SequenceStartEvent, MappingStartEvent)):
            seq = isinstance(event, SequenceStartEvent)
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolver.resolve(SequenceNode if seq else MappingNode, None, event.implicit)
            cls = SequenceNode if seq else MappingNode
            node = cls(tag, [], event.start_mark, None, flow_style=event.flow_style)
            if event.anchor is not None:
                anchors[event.anchor] = node
            if len(stack) >= max_depth:
                raise _Problem(_line(event.start_mark), f"nested more than {max_depth} levels deep: refused")
            stack.append([node, node.value, None, 1, 0])
        elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
            node, _children, _key, size, depth = stack.pop()
            node.end_mark = event.end_mark
            sizes[id(node)] = (size, depth)
            add(node, size, depth, node.start_mark)
    return root


class _Constructor(SafeConstructor):
    """PyYAML's safe constructor that refuses duplicate keys and huge integers, and remembers
    the node it is building (for the line of an error)."""

    def __init__(self) -> None:
        super().__init__()
        self.node = None

    def construct_object(self, node, deep=False):
        self.node = node
        return super().construct_object(node, deep=deep)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _value in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue  # '<<' merges may be overridden by the mapping's own keys
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key, _UNSEEN)
                except TypeError:
                    raise _Problem(_line(key_node.start_mark), "a list or mapping used as a mapping key") from None
                line = _line(key_node.start_mark)
                if first is not _UNSEEN:
                    raise _Problem(line, f"key {show_scalar(str(key))} is given twice (lines {first} and {line}); "
                                   "give each key once")
                seen[key] = line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node):
        digits = sum(c.isalnum() for c in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise _Problem(_line(node.start_mark), f"integer {show_scalar(str(node.value), 24)} has more than "
                           f"{MAX_INT_DIGITS} digits")
        return super().construct_yaml_int(node)


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)


def _parser_loader():
    return getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader


def load_yaml_text(text: str, name: str, *, error: type[TrackerError] = ConfigError,
                   max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES, lines: bool = True) -> Any:
    """Parse one YAML document safely; see the module docstring.

    Args:
        text: the YAML text.
        name: the file, for messages (``name:line: problem``).
        error: the exception type raised.
        lines: name the line in messages (False for a one-line value such as ``--set``'s).

    Returns:
        Plain data (dicts, lists, str, int, float, bool, None); None for an empty document.

    Raises:
        error: one line ``name:LINE: problem``.
    """
    resolver = _Resolver()
    try:
        node = _compose(yaml.parse(text, Loader=_parser_loader()), resolver, max_depth, max_values)
        if node is None:
            return None
        builder = _Constructor()
        try:
            return builder.construct_document(node)
        except _Problem:
            raise
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise _Problem(_line(mark) or _line(getattr(builder.node, "start_mark", None)),
                           f"invalid YAML ({_flat(getattr(exc, 'problem', None) or exc)})") from None
        except (ValueError, TypeError, OverflowError, RecursionError, MemoryError, AttributeError,
                KeyError, IndexError) as exc:
            at = builder.node
            if isinstance(at, ScalarNode):
                tag = "!!" + at.tag.rsplit(":", 1)[-1] if at.tag.startswith("tag:yaml.org,2002:") else at.tag
                message = f"{show_scalar(at.value)} is not a valid {tag}"
            else:
                message = f"cannot build this value ({type(exc).__name__}: {_flat(exc)})"
            raise _Problem(_line(getattr(at, "start_mark", None)), message) from None
    except _Problem as p:
        where = f"{name}:{p.line}" if p.line is not None and lines else name
        raise error(f"{where}: {p.message}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark is not None and lines else name
        raise error(f"{where}: invalid YAML ({_flat(getattr(exc, 'problem', None) or exc)})") from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        raise error(f"{name}: invalid YAML ({type(exc).__name__}: {_flat(exc)})") from None


def _flat(exc: Any, n: int = 120) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= n else text[: n - 3] + "..."


def read_yaml_file(path: str | Path, what: str = "config", *, error: type[TrackerError] = ConfigError,
                   max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH, max_values: int = MAX_VALUES) -> Any:
    """Read and parse a YAML file safely (:func:`load_yaml_text`), at most ``max_bytes`` long.

    Args:
        path: the file.
        what: what kind of file it is, for messages (``no such config file``).
        error: the exception type raised.

    Raises:
        error: missing, not a regular file (FIFO, device, folder), a name too long, unreadable, too
            large, not UTF-8, or invalid YAML; one line naming the file.
    """
    from tracker.readfile import read_bytes_bounded

    path = Path(path)
    # a FIFO, a device or a folder is refused by its type before any open (a FIFO's would block)
    data = read_bytes_bounded(path, what, max_bytes, error)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}:{line}: cannot read {what} file (bytes that are not UTF-8 text)") from None
    return load_yaml_text(text, str(path), error=error, max_depth=max_depth, max_values=max_values)
