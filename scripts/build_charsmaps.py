#!/usr/bin/env python3
"""Generate subtok's built-in normalization tables from Python's unicodedata.

Writes ``subtok/normalizers/rules/{nfkc,nmt_nfkc,nfkc_cf,nmt_nfkc_cf}.bin``
(precompiled_charsmap blobs) and refreshes the generated block of
``subtok/normalizers/rules/README.md`` (Unicode version, rule counts, sizes,
SHA-256).  Only the standard library is used; the Unicode version of the
tables is ``unicodedata.unidata_version`` of the interpreter that runs this
script, so run it with the newest Python available (the checked-in tables say
which one was used) and the output is deterministic for a given version.

How the rule sets are made (a char map applied by longest match must give
the same result as the normalization form for every input it covers):

nfkc
    * every code point c (surrogates and noncharacters excluded) whose NFKC
      differs from c: c -> NFKC(c);
    * for every code point whose NFKD has several code points and composes
      back to something else under NFC: every sequence obtained by replacing
      each code point of that NFKD by any code point whose own NFKD is that
      single code point (e.g. "A" by "Ａ", U+0301 by U+0341, Hangul L jamo
      by compatibility/halfwidth/circled letters) -> NFC(NFKD), unless the
      sequence already equals it (this is what gives "A\\u0301" -> "Á" and
      jamo sequences -> syllables);
    * redundant multi-char rules dropped: a rule of n code points is kept
      only if longest-match with the kept rules of fewer code points gives a
      different result.
nmt_nfkc
    nfkc plus: TAB, LF, FF, CR, U+061C, U+1680, U+200B, U+200C, U+200E,
    U+200F, U+2028, U+2029, U+2581, U+FEFF, U+FFFD -> " "; U+0001-0008, 000B,
    000E-001F, 007F, 008F, 009F -> deleted; the U+FF5E (fullwidth tilde) rule
    removed; then redundant rules dropped again.  (No U+200D rule: that was
    the old behaviour.)
nfkc_cf, nmt_nfkc_cf
    the above, then Unicode *simple* default case folding (what
    sentencepiece's tables use; full folding would turn "ß" into "ss"): every
    target folded code point by code point, plus c -> fold(c) for every code
    point without a rule whose folding differs; then redundant rules dropped.

Usage: python scripts/build_charsmaps.py [--out-dir DIR] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import re
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from subtok.normalizers.charsmap_builder import compile_charsmap, normalize_with_rules  # noqa: E402

RULE_NAMES = ("nfkc", "nmt_nfkc", "nfkc_cf", "nmt_nfkc_cf")

Rules = dict  # str -> str


def _is_unicode_char(cp: int) -> bool:
    """Scalar values minus noncharacters (U+FDD0..FDEF, U+xxFFFE/xxFFFF)."""
    if 0xD800 <= cp <= 0xDFFF or 0xFDD0 <= cp <= 0xFDEF:
        return False
    return (cp & 0xFFFE) != 0xFFFE


def _chars():
    return (chr(cp) for cp in range(1, 0x110000) if _is_unicode_char(cp))


# --------------------------------------------------------------------------
# longest-match helpers


def _apply(rules: Rules, text: str, max_len: int) -> str:
    """Longest match over keys of at most ``max_len`` code points."""
    return normalize_with_rules(rules, text, max_len)


def remove_redundant(rules: Rules) -> Rules:
    """Drop multi-char rules that shorter rules already reproduce."""
    kept = {k: v for k, v in rules.items() if len(k) == 1}
    max_len = max(map(len, rules))
    for length in range(2, max_len + 1):
        for key in sorted(k for k in rules if len(k) == length):
            if rules[key] != _apply(kept, key, length - 1):
                kept[key] = rules[key]
    for key, value in rules.items():  # sanity: nothing was lost
        if _apply(kept, key, max_len) != value:
            raise AssertionError("rule %r lost by redundancy removal" % key)
    return dict(sorted(kept.items()))


# --------------------------------------------------------------------------
# rule sets


def build_nfkc() -> Rules:
    nfkc = lambda s: unicodedata.normalize("NFKC", s)  # noqa: E731
    nfkd = lambda s: unicodedata.normalize("NFKD", s)  # noqa: E731
    rules: Rules = {}
    variants: dict[str, set[str]] = defaultdict(set)  # c -> {x : NFKD(x) == c}
    decomposed: set[str] = set()
    for c in _chars():
        n = nfkc(c)
        if n != c:
            rules[c] = n
        d = nfkd(c)
        if len(d) == 1:
            variants[d].add(c)
        else:
            decomposed.add(d)
    for d in sorted(decomposed):
        composed = unicodedata.normalize("NFC", d)
        if composed == d:
            continue  # the single-char rules already cover it
        choices = [sorted(variants.get(ch, {ch})) for ch in d]
        for seq in itertools.product(*choices):
            src = "".join(seq)
            if src != composed:
                rules[src] = composed
    return remove_redundant(rules)


NMT_SPACES = (0x0009, 0x000A, 0x000C, 0x000D, 0x061C, 0x1680, 0x200B, 0x200C,
              0x200E, 0x200F, 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD)
NMT_DELETED = (tuple(range(0x0001, 0x0009)) + (0x000B,)
               + tuple(range(0x000E, 0x0020)) + (0x007F, 0x008F, 0x009F))
NMT_UNMAPPED = (0xFF5E,)  # fullwidth tilde: used differently from "~" in CJK


def build_nmt(nfkc_rules: Rules) -> Rules:
    rules = dict(nfkc_rules)
    for cp in NMT_SPACES:
        rules[chr(cp)] = " "
    for cp in NMT_DELETED:
        rules[chr(cp)] = ""
    for cp in NMT_UNMAPPED:
        rules.pop(chr(cp), None)
    return remove_redundant(rules)


# Simple case folding (CaseFolding.txt status C + S).  str.casefold() is the
# full folding (C + F); where that gives several code points the S mapping,
# when there is one, is the single-code-point lowercase, except for these
# three S entries (Unicode >= 14) whose sources are lowercase already.
_SIMPLE_FOLD_EXTRA = {"\u1fd3": "\u0390", "\u1fe3": "\u03b0",
                      "\ufb05": "\ufb06"}


_UNIDATA = tuple(int(x) for x in unicodedata.unidata_version.split("."))


def simple_casefold(c: str) -> str:
    full = c.casefold()
    if len(full) == 1:
        return full
    if c in _SIMPLE_FOLD_EXTRA and _UNIDATA >= (14,):
        return _SIMPLE_FOLD_EXTRA[c]
    lower = c.lower()
    return lower if len(lower) == 1 else c


def build_cf(base_rules: Rules) -> Rules:
    rules = {k: "".join(map(simple_casefold, v))
             for k, v in base_rules.items()}
    for c in _chars():
        if c not in rules:
            f = simple_casefold(c)
            if f != c:
                rules[c] = f
    return remove_redundant(rules)


def build_all() -> dict[str, Rules]:
    nfkc = build_nfkc()
    nmt = build_nmt(nfkc)
    return {"nfkc": nfkc, "nmt_nfkc": nmt,
            "nfkc_cf": build_cf(nfkc), "nmt_nfkc_cf": build_cf(nmt)}


# --------------------------------------------------------------------------
# output

BEGIN = "<!-- BEGIN GENERATED by scripts/build_charsmaps.py -->"
END = "<!-- END GENERATED -->"


def _generated_block(tables: dict[str, Rules], blobs: dict[str, bytes]) -> str:
    lines = [
        BEGIN,
        "",
        "Generated with Python %s, `unicodedata.unidata_version` = **%s**."
        % (sys.version.split()[0], unicodedata.unidata_version),
        "",
        "| table | rules | 1 cp | 2 cp | 3 cp | 4 cp | blob bytes | trie bytes"
        " | sha256 (first 16) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in RULE_NAMES:
        rules, blob = tables[name], blobs[name]
        by_len = defaultdict(int)
        for k in rules:
            by_len[min(len(k), 4)] += 1
        trie = int.from_bytes(blob[:4], "little")
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %d | `%s` |" % (
            name, len(rules), by_len[1], by_len[2], by_len[3], by_len[4],
            len(blob), trie, hashlib.sha256(blob).hexdigest()[:16]))
    lines += ["", END]
    return "\n".join(lines)


def _update_readme(path: Path, block: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else (
        "# Built-in normalization tables\n\n" + BEGIN + "\n" + END + "\n")
    if BEGIN not in text:
        text = text.rstrip("\n") + "\n\n" + BEGIN + "\n" + END + "\n"
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    path.write_text(pattern.sub(lambda _: block, text), encoding="utf-8")


def _vtuple(version: str) -> tuple:
    return tuple(int(x) for x in version.split("."))


def _recorded_version(readme: Path) -> str | None:
    if not readme.exists():
        return None
    m = re.search(r"unidata_version` = \*\*([0-9.]+)\*\*",
                  readme.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", type=Path,
                    default=REPO / "subtok" / "normalizers" / "rules")
    ap.add_argument("--check", action="store_true",
                    help="only report whether the files on disk are current")
    ap.add_argument("--force", action="store_true",
                    help="write even if this Python's Unicode data is older "
                         "than the version recorded in README.md")
    args = ap.parse_args(argv)

    recorded = _recorded_version(args.out_dir / "README.md")
    ours = unicodedata.unidata_version
    if recorded and _vtuple(ours) != _vtuple(recorded):
        print("note: the tables on disk were generated from Unicode %s; this "
              "Python has Unicode %s" % (recorded, ours), file=sys.stderr)
        if (_vtuple(ours) < _vtuple(recorded) and not args.check
                and not args.force):
            print("refusing to downgrade the tables (use a newer Python or "
                  "--force)", file=sys.stderr)
            return 2

    tables = build_all()
    blobs = {name: compile_charsmap(tables[name]) for name in RULE_NAMES}
    if args.check:
        stale = [n for n in RULE_NAMES
                 if not (args.out_dir / (n + ".bin")).exists()
                 or (args.out_dir / (n + ".bin")).read_bytes() != blobs[n]]
        print("unidata %s: %s" % (unicodedata.unidata_version,
                                  "stale: " + ", ".join(stale) if stale
                                  else "all tables current"))
        return 1 if stale else 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name in RULE_NAMES:
        (args.out_dir / (name + ".bin")).write_bytes(blobs[name])
        print("%-12s %7d rules %7d bytes" % (name, len(tables[name]),
                                             len(blobs[name])))
    _update_readme(args.out_dir / "README.md", _generated_block(tables, blobs))
    print("unicodedata", unicodedata.unidata_version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
