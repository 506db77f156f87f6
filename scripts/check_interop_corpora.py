"""Every line of every corpus through ``subtok encode``/``decode`` with each
interop model, against the reference library (not a test: it takes many
minutes; the tests check seeded samples of the same files).

For each tokenizer.json of ../shared/data/interop, the BERT vocab.txt, the
GPT-2 vocab.json (merges.txt beside it) and cl100k_base.tiktoken, and each
corpus: ids through the real CLI with ``--num_threads 2`` compared, line by
line and in full, with ``tokenizers`` ``encode_batch`` (or tiktoken's
``encode_ordinary_batch``); then those ids decoded through the CLI
compared with the reference's decoding. Prints one row per model and a
list of the first differing lines, and exits non-zero on any difference.

    nice -n 10 python scripts/check_interop_corpora.py [--skip gutenberg_en] [--models a,b]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
INTEROP = DATA / "interop"
CORPORA = DATA / "corpora"
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]


def reference(model: Path):
    """(encode a list of texts -> list of id lists, decode id lists -> texts)."""
    if model.suffix == ".tiktoken":
        from _interop import tiktoken_cl100k
        enc = tiktoken_cl100k()
        return (lambda texts: enc.encode_ordinary_batch(texts, num_threads=1),
                lambda ids: [enc.decode(i) for i in ids])
    import tokenizers
    if model.name.endswith(".vocab.txt"):
        tok = tokenizers.BertWordPieceTokenizer(str(model))._tokenizer
    elif model.name == "vocab.json":
        tok = tokenizers.ByteLevelBPETokenizer(str(model), str(model.with_name("merges.txt")))._tokenizer
    else:
        tok = tokenizers.Tokenizer.from_file(str(model))
    return (lambda texts: [e.ids for e in tok.encode_batch(texts)],
            lambda ids: tok.decode_batch(ids))


def run(*args: str) -> bytes:
    return subprocess.run([sys.executable, "-m", "subtok", *args], check=True, cwd=ROOT,
                          capture_output=True).stdout


def check(model: Path, corpus: Path, tmp: Path) -> list[str]:
    """The differences (empty when every line matches)."""
    encode, decode = reference(model)
    raw = corpus.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    texts = [line.decode("utf-8", "replace") for line in raw]
    ids_out = run("encode", "--model", str(model), "--output_format=id", "--num_threads=2", str(corpus))
    got = ids_out.decode().split("\n")[:-1]
    want = [" ".join(map(str, ids)) for ids in encode(texts)]
    problems = ["%s: %d output lines for %d input lines" % (corpus.name, len(got), len(want))] \
        if len(got) != len(want) else []
    problems += ["%s:%d ids differ" % (corpus.name, n + 1) for n, (a, b) in enumerate(zip(got, want)) if a != b]
    id_file = tmp / "ids.txt"
    id_file.write_bytes(ids_out)
    decoded = run("decode", "--model", str(model), "--input_format=id", "--num_threads=2", str(id_file))
    texts_back = decoded.decode("utf-8", "surrogateescape").split("\n")[:-1]
    wanted_back = decode([[int(i) for i in line.split()] for line in want])
    if len(texts_back) != len(wanted_back):
        problems.append("%s: decode gave %d lines for %d" % (corpus.name, len(texts_back), len(wanted_back)))
    problems += ["%s:%d decoded text differs" % (corpus.name, n + 1)
                 for n, (a, b) in enumerate(zip(texts_back, wanted_back)) if a != b]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip", default="", help="corpus names (without .txt) to leave out")
    parser.add_argument("--models", default="", help="model file names to check (default: all)")
    args = parser.parse_args()
    models = sorted(INTEROP.glob("*.tokenizer.json")) + [INTEROP / "bert_base_cased.vocab.txt",
                                                         INTEROP / "gpt2" / "vocab.json",
                                                         INTEROP / "cl100k_base.tiktoken"]
    if args.models:
        models = [m for m in models if m.name in args.models.split(",")]
    skip = set(filter(None, args.skip.split(",")))
    corpora = [c for c in sorted(CORPORA.glob("*.txt")) if c.stem not in skip]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            start, problems = time.time(), []
            for corpus in corpora:
                problems += check(model, corpus, Path(tmp))
            lines = sum(c.read_bytes().count(b"\n") for c in corpora)
            print("%-40s %d corpora, ~%d lines: %s (%.0fs)" % (
                model.name if model.name != "vocab.json" else "gpt2/vocab.json", len(corpora), lines,
                "all equal" if not problems else "%d differences" % len(problems), time.time() - start),
                flush=True)
            for problem in problems[:10]:
                print("    " + problem)
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
