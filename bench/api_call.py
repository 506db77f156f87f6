"""Cost of one ``sp.encode(text)`` call of the Python API on a short text
(not a test; figures go into docs/performance.md).

The sentencepiece-shaped layer (``subtok.compat``) resolves options on
every call; this measures what that adds per call. Run it with the
checkouts to compare, alternately, on a quiet machine if you can:

    python bench/api_call.py                 # this checkout
    python bench/api_call.py --tree /path/to/other/checkout
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT.parent / "shared" / "data" / "models" / "test_model.model"


def per_call(tree: Path, calls: int, rounds: int) -> float:
    """Best CPU seconds per call over ``rounds`` rounds of ``calls`` calls."""
    sys.path.insert(0, str(tree))
    import subtok

    sp = subtok.SentencePieceProcessor(model_file=str(MODEL))
    texts = ["Hello world %d" % (i % 50) for i in range(calls)]
    encode = sp.encode
    for text in texts[:100]:
        encode(text)
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for text in texts:
            encode(text)
        best = min(best, time.process_time() - started)
    return best / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout whose subtok to time")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print("%s: %.2f us per call" % (args.tree, 1e6 * per_call(args.tree, args.calls, args.rounds)))


if __name__ == "__main__":
    main()
