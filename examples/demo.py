"""Demo: build a tiny unigram model by hand, then encode and decode with it.

Run:  python examples/demo.py
It writes examples/out/tiny.model, encodes examples/sample.txt with the
real CLI (pieces and ids), decodes the ids back, and checks the round trip.
(Once `subtok train` lands, the demo trains the model on the sample instead.)
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

from subtok.model_file import ModelData, build_proto, save_model
from subtok.vocab import PieceType

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"


def tiny_unigram(corpus: Path) -> ModelData:
    """Whole words (with their ▁) and single characters, scored by frequency."""
    counts: Counter = Counter()
    for line in corpus.read_text(encoding="utf-8").splitlines():
        for word in line.split():
            counts["\u2581" + word] += 1
            counts.update(word)
    counts["\u2581"] += 1
    total = sum(counts.values())
    trained = sorted(((p, math.log(c / total)) for p, c in counts.items()), key=lambda x: -x[1])
    pieces = ["<unk>", "<s>", "</s>"] + [p for p, _ in trained]
    scores = [0.0, 0.0, 0.0] + [s for _, s in trained]
    types = [PieceType.UNKNOWN, PieceType.CONTROL, PieceType.CONTROL] + [PieceType.NORMAL] * len(trained)
    data = ModelData(pieces, scores, [int(t) for t in types], model_type="unigram")
    data.proto = build_proto(data, {"model_type": 1, "vocab_size": len(pieces)},
                             {"name": "identity"})
    return data


def run(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "subtok", *args], check=True,
                          capture_output=True, text=True).stdout


def main() -> None:
    OUT.mkdir(exist_ok=True)
    model = OUT / "tiny.model"
    save_model(tiny_unigram(HERE / "sample.txt"), model)
    sample = str(HERE / "sample.txt")
    print(run("encode", "--model", str(model), sample).splitlines()[0])
    ids = run("encode", "--model", str(model), "--output_format=id", sample)
    print(ids.splitlines()[0])
    (OUT / "ids.txt").write_text(ids)
    text = run("decode", "--model", str(model), "--input_format=id", str(OUT / "ids.txt"))
    original = (HERE / "sample.txt").read_text(encoding="utf-8")
    print("round trip ok:", text == original)
    print(run("export-vocab", "--model", str(model)).splitlines()[3])


if __name__ == "__main__":
    main()
