"""The project's own exception types.

Every error a user can cause (bad file, bad config, a clip that does not fit
the skeleton, a diverging simulation) is a :class:`TrackerError`. The CLI
prints it as one line ``error: <message>`` and exits with status 2.
"""

from __future__ import annotations


class TrackerError(Exception):
    """Base class for user-facing errors; ``str(err)`` is the one-line message."""


class BVHError(TrackerError):
    """A BVH file could not be read.

    Attributes:
        path: the file (or ``"<string>"``).
        line: 1-based line number where the problem is, or ``None``.
        reason: what is wrong.
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


class ModelError(TrackerError):
    """A character model (URDF + model YAML) is invalid or unknown."""


class RetargetError(TrackerError):
    """A clip cannot be retargeted onto the character (no joint map, too short...)."""


class ConfigError(TrackerError):
    """An experiment config is invalid (file, key path, given, allowed)."""


class SimulationError(TrackerError):
    """A simulation could not run or diverged."""
