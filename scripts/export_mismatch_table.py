"""Measure how an exported tokenizer.json differs from sentencepiece, per
model and class, and print the table docs/export.md carries.

    python scripts/export_mismatch_table.py [--per-corpus N] [--all-lines] [--models a,b]

With the default sample (tests/helpers/_export_check.PER_CORPUS lines of every
corpus plus the hostile lines) the counts are exactly the ones
tests/oracle/test_hf_export.py checks against docs/export.md. ``--all-lines``
checks every line of every corpus instead (minutes per model); ``--models``
names the models (file stems) to check; ``--encode-only`` skips the
decoding check (half the time).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]

import _export_check  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-corpus", type=int, default=_export_check.PER_CORPUS)
    parser.add_argument("--all-lines", action="store_true", help="every line of every corpus")
    parser.add_argument("--models", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--encode-only", action="store_true",
                        help="do not also compare decoding sentencepiece's ids")
    args = parser.parse_args()
    _export_check.PER_CORPUS = args.per_corpus
    texts = _export_check.corpus_texts() if args.all_lines else _export_check.sample_texts()
    chosen = set(filter(None, args.models.split(",")))
    results = {}
    for path in _export_check.model_files():
        if chosen and path.stem not in chosen:
            continue
        checker = _export_check.Checker(path)
        counts, unexplained, bad_decodes = checker.run(texts, not args.encode_only)
        results[path.stem] = counts
        for text, why in unexplained[:3]:
            print("unexplained %s: %r %s" % (path.stem, text[:80], why[:200]), file=sys.stderr)
        if bad_decodes:
            print("decode differs %s: %d lines" % (path.stem, len(bad_decodes)), file=sys.stderr)
    sys.stdout.write(_export_check.table(results, len(texts)))


if __name__ == "__main__":
    main()
