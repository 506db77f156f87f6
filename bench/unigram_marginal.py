"""Benchmark: the unigram E-step's forward/backward, probabilities read
from an array or from a list (not a test).

Loads the first ``--lines`` lines of gutenberg_en as the trainer does
(``_load_units``), makes the seed pieces, builds every unit's lattice with
their table, then runs ``populate_marginal`` over all units
``--repeat`` times each way, alternately, in this one process: the CPU
time of each run, and whether the sums (expected counts and log Z) are
the same bits both ways.

    python bench/unigram_marginal.py [--lines 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
CORPUS = HERE.parent.parent / "shared" / "data" / "corpora" / "gutenberg_en.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from subtok.models.unigram import trainer
    from subtok.models.unigram.lattice import UnitLattices, populate_marginal
    from subtok.progress import Progress
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions
    from subtok.training.validity import PieceValidator
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.txt"
        with open(CORPUS, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
            for n, line in enumerate(src):
                if n == args.lines:
                    break
                dst.write(line)
        options = TrainerOptions.from_kwargs(input=[str(path)], model_prefix="unused",
                                             model_type="unigram", vocab_size=16000,
                                             num_threads=2, minloglevel=2).load_files()
        corpus = load_corpus(options, Progress(False, 2), defer=True)
        units, entries, corpus.alphabet = trainer._load_units(corpus, options)
    pieces = trainer.make_seed_pieces(corpus, options, entries, PieceValidator(options), 2)
    model = trainer._Model(pieces)
    texts = units.texts(0, len(units.lengths), 0)
    lattices = UnitLattices(texts, model.table)
    lengths, weights, max_length = units.lengths, units.weights, model.max_length

    def run(probs) -> tuple[float, tuple]:
        values = trainer._zeros(len(probs))
        total = 0.0
        started = time.process_time()
        for u, (n, weight) in enumerate(zip(lengths, weights)):
            total += weight * populate_marginal(lattices.nodes(u), n, weight, probs, values,
                                                max_length)
        return time.process_time() - started, (values.tobytes(), total)

    print("%d units, %d nodes" % (len(texts), len(lattices.ids)))
    for _ in range(args.repeat):
        as_array, first = run(model.node_probs)
        as_list, second = run(list(model.node_probs))
        print("array %.3f s  list %.3f s  same: %s" % (as_array, as_list, first == second))


if __name__ == "__main__":
    main()
