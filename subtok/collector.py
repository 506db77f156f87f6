"""Pausing Python's cyclic garbage collector around work that builds many
containers and no reference cycles.

The collector runs when allocations of container objects (tuples, lists,
dicts) outnumber deallocations by a threshold, and each of its passes
walks every container of the generations it collects. Work that builds
hundreds of thousands of lists and tuples that all stay alive (a
tokenizer's tables, a trainer's pair statistics) triggers pass after pass
that finds nothing: reference counting frees everything such work drops.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the ``with`` block (as it was after it). Only
    for code that creates no reference cycles: a cycle made inside would
    wait for a later pass."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


__all__ = ["collector_paused"]
