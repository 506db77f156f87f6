"""float32 arithmetic as SentencePiece's C++ does it, and the margin that
covers its rounding.

SentencePiece keeps scores and lattice sums in ``float``: results depend on
float32 rounding wherever two candidates are close (Viterbi ties, n-best
order, EM statistics). Python floats are doubles, so every place that must
match rounds explicitly with :func:`f32`.

Hot loops that cannot afford a call per value round inline instead:
``cell[0] = value; value = cell[0]`` with a one-slot ``array("f")`` from
:func:`float32_cell` (assigning converts to float32 the way a C cast does:
to nearest, ties to even, out-of-range values to ±inf, never an error);
a whole column of values is rounded at once by :func:`f32_values`, and
summed as a ``float`` accumulator sums it by :func:`f32_sum`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

#: In float32, every operation is off by at most this fraction of its result.
UNIT_ROUNDOFF = 2.0 ** -24

#: The largest float32 (C's ``FLT_MAX``).
FLT_MAX = 3.4028234663852886e38


def float32_cell() -> array:
    """A one-slot float32 array: assigning to it rounds to float32."""
    return array("f", [0.0])


def f32(value: float, _cell: array = float32_cell()) -> float:
    """``value`` rounded to the nearest float32 (ties to even), as C's cast."""
    _cell[0] = value
    return _cell[0]


def f32_values(values: "Iterable[float]") -> array:
    """``values`` rounded to float32 in one C pass (the cast of :func:`f32`),
    kept as a float32 array: each item reads back as the rounded double."""
    return array("f", values)


def f32_sum(values: "Iterable[float]") -> float:
    """A C++ ``float`` accumulator's sum of ``values``: rounded to float32
    after each addition, in order (an inline cell: no call per value)."""
    cell = float32_cell()
    total = 0.0
    for value in values:
        cell[0] = total + value
        total = cell[0]
    return total


def offset_bound(magnitude: float) -> float:
    """The robustness a cached unigram result needs where the scores summed
    before it add up to at most ``magnitude``.

    The float32 sums sentencepiece computes drift a little above the exact
    ones: 1% of the magnitude plus 1 covers that drift with a wide margin
    (the drift is at most about ``pieces * 2**-24`` of the magnitude).
    """
    return 1.01 * magnitude + 1.0


__all__ = ["UNIT_ROUNDOFF", "FLT_MAX", "f32", "f32_sum", "f32_values", "float32_cell", "offset_bound"]
