"""A number a person typed (``0.5``, ``1e-3``, ``1/60``), read with bounded work for any text.

``float(Fraction(text))`` is what the command line and the configs used to do; it raises
OverflowError for ``1e309`` (which argparse does not catch) and builds ``10**99999999`` for
``1e99999999`` (minutes of CPU). :func:`number_from_text` accepts the same spellings, at most
:data:`MAX_NUMBER_CHARS` characters, and returns ``inf`` for a decimal too large for a float:
callers check the range (:mod:`tracker.commands._args` on the command line,
:mod:`tracker.experiments.schema` in files).
"""

from __future__ import annotations

import re

#: The longest number text read; a longer one is refused before any conversion.
MAX_NUMBER_CHARS = 64

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RATIO = re.compile(r"([+-]?[0-9]+)/([0-9]+)")


def number_from_text(text: str) -> float:
    """``text`` as a float: a decimal (``-0.5``, ``2e-3``) or a ratio of whole numbers (``1/60``).

    A decimal too large for a float gives ``inf`` (``1e309``), one too small ``0.0``.

    Raises:
        ValueError: not such a number, longer than :data:`MAX_NUMBER_CHARS`, or ``N/0``;
            the message says which.
    """
    s = text.strip()
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError(f"longer than {MAX_NUMBER_CHARS} characters")
    if _DECIMAL.fullmatch(s):
        return float(s)  # no OverflowError: an exponent too large gives inf
    ratio = _RATIO.fullmatch(s)
    if ratio:
        num, den = int(ratio.group(1)), int(ratio.group(2))
        if den == 0:
            raise ValueError("division by zero")
        return num / den  # correctly rounded; both under 10**64, so no overflow
    raise ValueError("not a number or a fraction like 1/60")
