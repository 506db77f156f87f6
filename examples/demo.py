"""Demo: train a small model on examples/sample.txt, then encode and decode.

Run:  python examples/demo.py
Everything goes through the real command line (`python -m subtok ...`):
it trains a BPE and a unigram model into examples/out/, encodes the sample
to pieces and ids, decodes the ids back and checks the round trip, and
shows a few sampled segmentations of one sentence.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SAMPLE = HERE / "sample.txt"


def run(*args: str, stdin: str | None = None) -> str:
    return subprocess.run([sys.executable, "-m", "subtok", *args], check=True, input=stdin,
                          capture_output=True, text=True).stdout


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for model_type, size in (("bpe", 150), ("unigram", 120)):
        prefix = OUT / model_type
        run("train", "--input", str(SAMPLE), "--model_prefix", str(prefix),
            "--vocab_size", str(size), "--model_type", model_type, "--quiet")
        model = str(prefix) + ".model"
        print("== %s (%d pieces)" % (model_type, size))
        print(run("encode", "--model", model, str(SAMPLE)).splitlines()[0])
        ids = run("encode", "--model", model, "--output_format=id", str(SAMPLE))
        print(ids.splitlines()[0])
        (OUT / "ids.txt").write_text(ids)
        text = run("decode", "--model", model, "--input_format=id", str(OUT / "ids.txt"))
        print("round trip ok:", text == SAMPLE.read_text(encoding="utf-8"))
        samples = run("encode", "--model", model, "--output_format=sample_piece", "--nbest_size=-1",
                      "--alpha=0.1", "--random_seed=1", stdin="tokenization of the model\n" * 3)
        print("samples:", *samples.splitlines(), sep="\n  ")


if __name__ == "__main__":
    main()
