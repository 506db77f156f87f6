"""Measure how an exported tokenizer.json differs from sentencepiece, per
model and class, and print the table docs/export.md carries.

    python scripts/export_mismatch_table.py [--per-corpus N]

With the default sample (tests/helpers/_export_check.PER_CORPUS lines of every
corpus plus the hostile lines) the counts are exactly the ones
tests/oracle/test_hf_export.py checks against docs/export.md.
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
    args = parser.parse_args()
    _export_check.PER_CORPUS = args.per_corpus
    texts = _export_check.sample_texts()
    results = {}
    for path in _export_check.model_files():
        counts, unexplained, bad_decodes = _export_check.Checker(path).run(texts)
        results[path.stem] = counts
        for text, why in unexplained[:3]:
            print("unexplained %s: %r %s" % (path.stem, text[:80], why[:200]), file=sys.stderr)
        if bad_decodes:
            print("decode differs %s: %d lines" % (path.stem, len(bad_decodes)), file=sys.stderr)
    sys.stdout.write(_export_check.table(results, len(texts)))


if __name__ == "__main__":
    main()
