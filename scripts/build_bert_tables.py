#!/usr/bin/env python3
"""Generate ``subtok/models/wordpiece/bert_tables.py`` from the Unicode tables
that Hugging Face ``tokenizers`` uses for BERT's text cleaning.

``tokenizers``' BertNormalizer and BertPreTokenizer ask the Rust crate
``unicode_categories`` 0.1.1 (Unicode 9.0) whether a character is a
control/format/private-use character (``is_other``: removed by
``clean_text``), a non-spacing mark (``is_mark_nonspacing``: dropped by
``strip_accents``) or punctuation (``is_punctuation``: split off by the
pre-tokenizer). Python's ``unicodedata`` knows a newer Unicode, in which
about a hundred characters are punctuation, marks or format characters that
Unicode 9.0 did not have (or classified differently), so subtok carries the
crate's own sets, as code point ranges.

Input: the crate's ``src/tables.rs`` at version 0.1.1 (git commit 92bb246 of
github.com/swgillespie/unicode-categories). The private-use ranges are
matched in the crate's ``lib.rs`` (``is_other_private_use``) rather than
listed in the table; they are added here.

Usage: python scripts/build_bert_tables.py TABLES_RS [--out PATH]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "subtok" / "models" / "wordpiece" / "bert_tables.py"

#: ``is_other_private_use`` matches these ranges before its table lookup.
PRIVATE_USE = [(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)]

#: Output name -> the crate's tables that make it up.
SETS = {
    "OTHER": ("OTHER_CONTROL", "OTHER_FORMAT", "OTHER_PRIVATE_USE"),
    "MARK_NONSPACING": ("MARK_NONSPACING",),
    "PUNCTUATION": ("PUNCTUATION_CONNECTOR", "PUNCTUATION_DASH", "PUNCTUATION_CLOSE",
                    "PUNCTUATION_FINAL_QUOTE", "PUNCTUATION_INITIAL_QUOTE",
                    "PUNCTUATION_OTHER", "PUNCTUATION_OPEN"),
}


def read_tables(path: Path) -> dict[str, set[int]]:
    """Table name -> its code points, from the crate's generated Rust source."""
    text = path.read_text(encoding="utf-8")
    tables = {}
    for match in re.finditer(r"pub static (\w+) : &'static \[char\] = &\[(.*?)\];", text, re.S):
        tables[match.group(1)] = {int(h, 16) for h in re.findall(r"\\u\{([0-9a-fA-F]+)\}",
                                                                    match.group(2))}
    missing = {name for names in SETS.values() for name in names} - set(tables)
    if missing:
        raise SystemExit("build_bert_tables: %s has no table %s" % (path, ", ".join(sorted(missing))))
    return tables


def ranges(points: set[int]) -> list[tuple[int, int]]:
    """Sorted code points as inclusive (first, last) runs."""
    out: list[list[int]] = []
    for point in sorted(points):
        if out and out[-1][1] == point - 1:
            out[-1][1] = point
        else:
            out.append([point, point])
    return [(a, b) for a, b in out]


def render(sets: dict[str, list[tuple[int, int]]]) -> str:
    lines = ['"""Unicode 9.0 character classes of BERT\'s text cleaning (generated).',
             "",
             "Written by ``scripts/build_bert_tables.py`` from the tables of the Rust crate",
             "``unicode_categories`` 0.1.1, which Hugging Face ``tokenizers`` asks in",
             "BertNormalizer (``is_other``, ``is_mark_nonspacing``) and BertPreTokenizer",
             "(``is_punctuation``). Do not edit by hand.",
             '"""', ""]
    for name, runs in sets.items():
        lines.append("%s = (" % name)
        row = []
        for first, last in runs:
            row.append("(0x%X, 0x%X)," % (first, last))
            if len(row) == 4:
                lines.append("    " + " ".join(row))
                row = []
        if row:
            lines.append("    " + " ".join(row))
        lines.append(")")
        lines.append("")
    lines.append("__all__ = [%s]" % ", ".join('"%s"' % name for name in sets))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables_rs", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    tables = read_tables(args.tables_rs)
    sets = {}
    for name, parts in SETS.items():
        points = set().union(*(tables[part] for part in parts))
        if name == "OTHER":
            for first, last in PRIVATE_USE:
                points.update(range(first, last + 1))
        sets[name] = ranges(points)
    args.out.write_text(render(sets), encoding="utf-8")
    print("wrote %s (%s)" % (args.out, ", ".join("%s: %d runs" % (k, len(v)) for k, v in sets.items())))


if __name__ == "__main__":
    main()
