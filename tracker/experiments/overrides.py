"""``--set KEY=VALUE`` overrides of an experiment config, applied to the raw YAML data before validation.

A key is a dotted path (``sim.dt``, ``balls.0.speed`` or ``balls[0].speed``); a value is read like a
config value (:mod:`tracker.yamlsafe`: ``1e30`` a number, duplicate keys refused). The schema then
checks the result like any config (:func:`tracker.experiments.config.config_from_data`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tracker.errors import ConfigError
from tracker.experiments.schema import show

_INDEX = re.compile(r"\[\s*([0-9]+)\s*\]")


def parse_override(expr: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a dotted key path and a YAML value (``sim.dt=1/30``, ``balls.0.speed=8``).

    List items may also be addressed as ``balls[0].speed``; the value is read like a config value
    (so ``1e30`` is a number, duplicate keys are refused).
    """
    from tracker.yamlsafe import load_yaml_text, show_scalar

    key, sep, text = expr.partition("=")
    key = _INDEX.sub(r".\1", key.strip())
    shown = show_scalar(expr, 80)
    if not sep or not key or any(not part.strip() for part in key.split(".")):
        raise ConfigError(f"--set {shown}: expected KEY=VALUE with a dotted key like sim.dt=1/30")
    key = ".".join(part.strip() for part in key.split("."))
    if len(key) > 200:
        raise ConfigError(f"--set {shown}: the key is longer than 200 characters")
    if len(text) > 10_000:
        raise ConfigError(f"--set {shown}: the value is longer than 10,000 characters")
    value = load_yaml_text(text, f"--set {shown}", error=ConfigError, lines=False) if text.strip() else None
    return key, value


def apply_overrides(raw: Any, overrides: Sequence[str | tuple[str, Any]], source: str | Path,
                    origin: str = "--set") -> tuple[dict, dict[str, str]]:
    """A copy of the raw config mapping with every override applied.

    Args:
        raw: the parsed YAML mapping (not modified).
        overrides: ``"KEY=VALUE"`` strings (value parsed as YAML) or ``(key, value)`` pairs;
            keys are dotted paths, list items addressed by index (``balls.0.speed``).
        source: the config file, for messages.
        origin: how messages name where an override came from (``--set``, a sweep file...).

    Missing mappings along a path are created (the schema then rejects unknown keys with
    their full path).

    Returns:
        ``(raw, {key path: "origin KEY=VALUE"})``.
    """
    import copy

    data = copy.deepcopy(raw) if raw is not None else {}
    if not isinstance(data, dict):
        return data, {}
    done: dict[str, str] = {}
    for item in overrides:
        if isinstance(item, str):
            key, value = parse_override(item)
            expr = item
        else:
            key, value = item
            expr = f"{key}={yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix('...').strip()}"
        expr = expr.replace("\r", "\\r").replace("\n", "\\n")  # messages are one line
        if len(expr) > 100:
            expr = expr[:97] + "..."
        label = f"{origin} {expr}"
        key = _INDEX.sub(r".\1", str(key))
        if any(c.isspace() or not c.isprintable() for c in key):
            raise ConfigError(f"{source}: {show(key)}: a key path has no spaces or control characters "
                              f"[from {label}]")
        parts = key.split(".")
        node: Any = data
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            here = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit():
                    raise ConfigError(f"{source}: {here}: {'.'.join(parts[:i])} is a list; address an item by "
                                      f"index like {'.'.join(parts[:i])}.0 [from {label}]")
                idx = int(part)
                if idx >= len(node):
                    raise ConfigError(f"{source}: {here}: index {idx} is out of range (the list has {len(node)} "
                                      f"item{'s' if len(node) != 1 else ''}) [from {label}]")
                if last:
                    node[idx] = value
                else:
                    node = node[idx]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    if node.get(part) is None:
                        if parts[i + 1].isdigit():
                            raise ConfigError(f"{source}: {'.'.join(parts[:i + 2])}: index {parts[i + 1]} is out of "
                                              f"range ({here} has no items) [from {label}]")
                        node[part] = {}
                    node = node[part]
            else:
                raise ConfigError(f"{source}: {here}: {'.'.join(parts[:i])} is {show(node)}, not a mapping or list "
                                  f"[from {label}]")
        done[key] = label
    return data, done
