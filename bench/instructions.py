"""Benchmark: instructions executed to encode a corpus (not a test).

Wall time on a shared VM drifts by 20-50% between runs; the number of
instructions a run executes (valgrind's cachegrind, no cache simulation)
repeats to within 0.02%, so it shows whether a change to the encoder did
less work. It is not time: Python's memory traffic costs time without
instructions, so a 27% cut in instructions gave 12-15% in wall time.

    python bench/instructions.py [--model maxtext_c4_unigram32k] [--corpus PATH]
                                 [--passes 1] [--source DIR]

Counts one process that loads the model and encodes the corpus to ids
``--passes`` times through the CLI's block path (the first pass is cold,
later ones warm), plus the same run with an empty corpus (start-up and
load), and prints both and their difference. ``--source`` points at
another checkout's directory holding ``subtok/`` to compare versions.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _measure import instruction_count

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

RUN = """
import gc, sys
sys.path.insert(0, sys.argv[1])
import subtok
from subtok.lines.batch import LineEncoder
from subtok.lines.streams import read_blocks
encoder = LineEncoder(subtok.SentencePieceProcessor(sys.argv[2]), "id")
for _ in range(int(sys.argv[4])):
    for block in read_blocks([sys.argv[3]]):
        encoder.block(block)
        gc.freeze()
"""


def instructions(script: Path, source: str, model: Path, corpus: Path, passes: int) -> int:
    return instruction_count([str(script), source, str(model), str(corpus), str(passes)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="maxtext_c4_unigram32k")
    parser.add_argument("--corpus", default=str(DATA / "corpora" / "gutenberg_en.txt"))
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--source", default=str(ROOT))
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench: valgrind is not installed")
    model = DATA / "models" / (args.model + ".model")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "run.py"
        script.write_text(RUN)
        empty = Path(tmp) / "empty.txt"
        empty.write_bytes(b"")
        base = instructions(script, args.source, model, empty, 1)
        total = instructions(script, args.source, model, Path(args.corpus), args.passes)
    print("%s on %s, %d pass(es): %.2f G instructions (start-up and load %.2f G, encoding %.2f G)"
          % (args.model, Path(args.corpus).name, args.passes, total / 1e9, base / 1e9,
             (total - base) / 1e9))


if __name__ == "__main__":
    main()
