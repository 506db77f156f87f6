"""Made-up corpora whose vocabulary keeps growing, for the count tests
(one process and a Dask cluster)."""

from __future__ import annotations

import random
from pathlib import Path


WORDS = ["alpha", "beta", "gamma", "delta", "tab\there", "back\\slash", "cr\rx", "ünï", "日本",
         "\U0001f600", "x"]


def synthetic(path: Path, lines: int, seed: int = 0, vocabulary: int = 5000) -> Path:
    """A corpus whose vocabulary keeps growing (made-up words), with TABs,
    backslashes and CRs inside words."""
    rng = random.Random(seed)
    out = []
    for n in range(lines):
        words = [rng.choice(WORDS) + str(rng.randrange(vocabulary)) for _ in range(rng.randrange(1, 12))]
        out.append(" ".join(words))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
