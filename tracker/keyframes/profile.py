"""Gain profiles that cross-fade two keyframe servos (Tan, Liu & Turk 2011 §4.2, Fig. 5).

Between key ``i`` (time ``t_i``) and key ``i+1`` the normalised time is
``α = (t − t_i) / (t_{i+1} − t_i)`` in ``[0, 1]``. The servo toward key ``i``
gets ``w_i · k_p`` and the one toward key ``i+1`` gets ``w_{i+1} · k_p``:

* ``poly`` (the paper's, OCR "(1.0 − α)^2 … (α^2 + 0.005)"):
  ``w_i = (1 − α)^p``, ``w_{i+1} = α^p + floor`` with ``p`` = ``power``
  (default 2) and ``floor = 0.005``. The sharp dip of the summed gain between
  keys (0.505 at α = 0.5 for p = 2, 0.0089 for p = 8) is what makes the
  in-betweens compliant while the keys are still met.
* ``linear`` (Fig. 5 left, "results in stiff motions"): ``w_i = 1 − α``,
  ``w_{i+1} = α + floor``; the summed gain stays at ``1 + floor``, so the
  character is as stiff between keys as at them.

The small ``floor`` keeps a pull toward the next key from the very start of
the interval, so that a key never loses both servos.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tracker.errors import ConfigError

ProfileKind = Literal["poly", "linear"]
PROFILES: tuple[str, ...] = ("poly", "linear")
#: The paper's constant share of the next key's gain (its "+ 0.005").
FLOOR = 0.005


@dataclass(frozen=True)
class GainProfile:
    """Weights of the two servos as a function of the normalised time ``α``.

    Attributes:
        kind: ``poly`` or ``linear``.
        power: exponent ``p`` of ``poly`` (ignored by ``linear``), > 0.
        floor: constant added to the next key's weight (paper: 0.005), >= 0.
    """

    kind: ProfileKind = "poly"
    power: float = 2.0
    floor: float = FLOOR

    def __post_init__(self) -> None:
        if self.kind not in PROFILES:
            raise ConfigError(f"gain profile {self.kind!r} is not one of: {', '.join(PROFILES)}")
        if not (np.isfinite(self.power) and self.power > 0):
            raise ConfigError(f"gain profile power must be a positive number, got {self.power!r}")
        if not (np.isfinite(self.floor) and self.floor >= 0):
            raise ConfigError(f"gain profile floor must be >= 0, got {self.floor!r}")

    def weights(self, alpha: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(w_i, w_{i+1})`` at normalised time ``alpha`` (clipped to ``[0, 1]``), same shape as ``alpha``."""
        a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
        p = self.power if self.kind == "poly" else 1.0
        return (1.0 - a) ** p, a ** p + self.floor

    def label(self) -> str:
        """``poly p=2`` or ``linear``."""
        return f"poly p={self.power:g}" if self.kind == "poly" else "linear"
