"""Write what a checkout's CLI produces, to prove a refactor changed nothing.

Runs the real CLI of the checkout this script lives in over every model in
``../shared/data/models`` and a slice of every corpus (pieces, ids, decode
of the ids, a seeded sample and n-best where the model type has them,
export-vocab), and trains several option sets per model type. Every output
lands in OUT_DIR under a stable name, so two checkouts compare with::

    python scripts/golden_outputs.py /tmp/before   # on the old commit
    python scripts/golden_outputs.py /tmp/after    # on the new one
    diff -r /tmp/before /tmp/after && echo identical

    python scripts/golden_outputs.py OUT_DIR [--lines N] [--skip-train]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

#: Training runs: (name, model_type, corpus, extra flags).
TRAININGS = [
    ("unigram_botchan", "unigram", "botchan.txt", ["--vocab_size=2000"]),
    ("unigram_ja", "unigram", "wagahaiwa_nekodearu.txt",
     ["--vocab_size=4000", "--character_coverage=0.9995"]),
    ("unigram_de_split", "unigram", "de.txt",
     ["--vocab_size=3000", "--split_digits", "--byte_fallback", "--num_threads=2"]),
    ("bpe_botchan", "bpe", "botchan.txt", ["--vocab_size=2000"]),
    ("bpe_ru_bytes", "bpe", "ru.txt",
     ["--vocab_size=3000", "--byte_fallback", "--normalization_rule_name=identity"]),
    ("bpe_atmt_user", "bpe", "atmt_train_en.txt",
     ["--vocab_size=4000", "--user_defined_symbols=<sep>,<cls>", "--num_threads=2"]),
    ("char_ja", "char", "hashire_merosu_train.txt", ["--vocab_size=500"]),
    ("char_ko", "char", "ko.txt", ["--vocab_size=800", "--character_coverage=0.999"]),
    ("word_botchan", "word", "botchan.txt", ["--vocab_size=3000"]),
    ("word_fr_cf", "word", "fr.txt",
     ["--vocab_size=2000", "--normalization_rule_name=nmt_nfkc_cf"]),
]


def run(args: list[str], out: Path, stdin: Path | None = None, cwd: Path = ROOT) -> None:
    """Run the checkout's CLI (in ``cwd``); its stdout, or its one error
    line, goes to ``out``."""
    with open(out, "wb") as sink:
        source = open(stdin, "rb") if stdin else subprocess.DEVNULL
        try:
            result = subprocess.run([sys.executable, "-m", "subtok", *args], stdout=sink,
                                    stderr=subprocess.PIPE, stdin=source, cwd=cwd,
                                    env=dict(os.environ, PYTHONPATH=str(ROOT)))
        finally:
            if stdin:
                source.close()
    if result.returncode:
        with open(out, "ab") as sink:
            sink.write(b"EXIT %d: " % result.returncode + result.stderr)


def head(corpus: Path, lines: int, tmp: Path) -> Path:
    target = tmp / ("%s.%d" % (corpus.name, lines))
    if not target.exists():
        with open(corpus, "rb") as src, open(target, "wb") as dst:
            for number, line in enumerate(src):
                if number >= lines:
                    break
                dst.write(line)
    return target


def encode_all(out: Path, lines: int) -> None:
    tmp = out / "_inputs"
    tmp.mkdir(parents=True, exist_ok=True)
    corpora = sorted((DATA / "corpora").glob("*.txt"))
    for model in sorted((DATA / "models").glob("*.model")):
        name = model.stem
        run(["export-vocab", "--model", str(model)], out / ("%s.vocab" % name))
        for corpus in corpora:
            text = head(corpus, lines, tmp)
            key = "%s.%s" % (name, corpus.stem)
            run(["encode", "--model", str(model), str(text)], out / (key + ".piece"))
            ids = out / (key + ".id")
            run(["encode", "--model", str(model), "--output_format=id", "--num_threads=2",
                 str(text)], ids)
            run(["decode", "--model", str(model), "--input_format=id"], out / (key + ".dec"),
                stdin=ids)
            small = head(corpus, 200, tmp)
            run(["encode", "--model", str(model), "--output_format=sample_id",
                 "--alpha=0.1", "--nbest_size=-1", "--random_seed=7", str(small)],
                out / (key + ".sample"))
            run(["encode", "--model", str(model), "--output_format=nbest_piece",
                 "--nbest_size=3", str(small)], out / (key + ".nbest"))
        print("encoded with", name, flush=True)


def train_all(out: Path) -> None:
    """A .model records its --input and --model_prefix: both are given the
    same in every checkout (the data's real path, a prefix relative to
    OUT_DIR), so that the files of two checkouts can be equal."""
    for name, model_type, corpus, flags in TRAININGS:
        run(["train", "--input", str(DATA.resolve() / "corpora" / corpus),
             "--model_prefix", "train_" + name, "--model_type", model_type, "--random_seed=1",
             "--quiet", *flags], out / ("train_%s.log" % name), cwd=out)
        print("trained", name, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--skip-train", action="store_true")
    parser.add_argument("--skip-encode", action="store_true")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    os.environ.pop("PYTHONPATH", None)
    if not options.skip_encode:
        encode_all(options.out, options.lines)
    if not options.skip_train:
        train_all(options.out)


if __name__ == "__main__":
    main()
