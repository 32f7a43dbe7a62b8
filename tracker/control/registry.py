"""Controllers selectable by name: a dict plus a registering decorator.

A registered factory is called as ``factory(layout=..., dynamics=..., **options)``
and returns an object with the :class:`tracker.control.base.Controller`
interface. ``pd`` and ``spd`` are registered when this package's modules are
imported; :func:`create` imports the built-in modules on first use so that
``create("spd", ...)`` works without further imports.

Example::

    from tracker.control import registry
    ctrl = registry.create("spd", layout=layout, dynamics=character, target_velocity="ref")
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

from tracker.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])

_REGISTRY: dict[str, Callable[..., Any]] = {}

#: Modules that register the built-in controllers when imported. ``native``
#: (PyBullet) is optional here: it is skipped if it does not exist yet.
_BUILTIN_MODULES = ("tracker.control.pd", "tracker.control.spd", "tracker.control.native",
                    "tracker.control.keyframe_spd", "tracker.control.timed_pd", "tracker.control.analytic_pd",
                    "tracker.control.vt")


def register(name: str) -> Callable[[F], F]:
    """Decorator registering a controller factory (usually a class) under ``name``.

    Raises:
        ValueError: if ``name`` is already taken by a different factory.
    """

    def deco(factory: F) -> F:
        old = _REGISTRY.get(name)
        if old is not None and old is not factory and _qualname(old) != _qualname(factory):
            raise ValueError(f"controller {name!r} is already registered by {_qualname(old)}")
        _REGISTRY[name] = factory
        return factory

    return deco


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _load_builtins() -> None:
    for mod in _BUILTIN_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as err:
            if err.name != mod:  # a real missing dependency inside the module
                raise


def names() -> tuple[str, ...]:
    """Sorted names of the registered controllers (built-ins loaded)."""
    _load_builtins()
    return tuple(sorted(_REGISTRY))


def get(name: str) -> Callable[..., Any]:
    """The factory registered as ``name``.

    Raises:
        ConfigError: unknown name; the message lists the valid ones.
    """
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown controller {name!r}; valid controllers are: {', '.join(sorted(_REGISTRY))}"
        ) from None


def create(name: str, **kwargs: Any) -> Any:
    """Build the controller ``name`` with ``kwargs`` (``layout``, ``dynamics``, options)."""
    return get(name)(**kwargs)
