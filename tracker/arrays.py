"""Small array helpers shared by the data types."""

from __future__ import annotations

import numpy as np


def frozen(a, dtype=float) -> np.ndarray:
    """A read-only copy of ``a`` as ``dtype`` (the data types hold only such arrays)."""
    out = np.array(a, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out
