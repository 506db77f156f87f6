"""Progress over the bytes of input files (training reads, the line tools).

Shown only when stderr is a terminal and every input is a file (so the
total, and with it the ETA, is known); tqdm is imported only then.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator


def input_size(paths: list[str]) -> int | None:
    """Total bytes of ``paths``; None for stdin (no paths, or "-")."""
    if not paths or "-" in paths:
        return None
    try:
        return sum(os.path.getsize(path) for path in paths)
    except OSError:
        return None


def blocks_with_progress(blocks: Iterable[bytes], paths: list[str], desc: str) -> Iterator[bytes]:
    """``blocks`` unchanged, counted on a bar while stderr is a terminal."""
    total = input_size(paths)
    if total is None or not sys.stderr.isatty():
        yield from blocks
        return
    from tqdm import tqdm
    with tqdm(total=total, desc=desc, unit="B", unit_scale=True, file=sys.stderr,
              leave=False, dynamic_ncols=True) as bar:
        for block in blocks:
            bar.update(len(block) + 1)  # the newline the block's end stands for
            yield block
