"""Tests for subtok.normalizers.charsmap_builder and the built-in tables.

sentencepiece 0.2.3 is used only as an oracle: blobs we compile must load in
it and normalize exactly like a longest-match application of our rule dict.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from conftest import CORPORA_DIR, needs_corpora

from subtok.normalizers import charsmap_builder as cb
from subtok.normalizers.charsmap_builder import (
    BUILTIN_RULE_NAMES,
    builtin_charsmap,
    compile_charsmap,
    decompile_charsmap,
    load_rule_tsv,
    normalize_with_rules,
)

TABLES = ("nfkc", "nmt_nfkc", "nfkc_cf", "nmt_nfkc_cf")


# --------------------------------------------------------------------------
# helpers


@pytest.fixture(scope="module")
def builtin_rules():
    return {name: decompile_charsmap(builtin_charsmap(name))
            for name in TABLES}


def _sp_with_charsmap(spm, blob: bytes):
    """A minimal sentencepiece model whose normalizer only maps chars."""
    from sentencepiece import sentencepiece_model_pb2 as spm_pb2  # after the fixture's check
    m = spm_pb2.ModelProto()
    for piece, kind in (("<unk>", 2), ("<s>", 3), ("</s>", 3), ("a", 1)):
        p = m.pieces.add()
        p.piece, p.score, p.type = piece, 0.0, kind
    m.trainer_spec.model_type = 1
    ns = m.normalizer_spec
    ns.name = "user_defined"
    ns.precompiled_charsmap = blob
    ns.add_dummy_prefix = False
    ns.remove_extra_whitespaces = False
    ns.escape_whitespaces = False
    return spm.SentencePieceProcessor(model_proto=m.SerializeToString())


def _assert_sp_agrees(spm, blob: bytes, rules: dict, texts) -> int:
    sp = _sp_with_charsmap(spm, blob)
    max_len = max(map(len, rules))
    n = 0
    for text in texts:
        expected = normalize_with_rules(rules, text, max_len)
        assert sp.normalize(text) == expected, text
        n += 1
    return n


def _fuzz_texts(rules: dict, count: int, seed: int) -> list[str]:
    """Strings built from pieces of keys, so multi-char rules get exercised."""
    rng = random.Random(seed)
    keys = sorted(rules)
    multi = [k for k in keys if len(k) > 1]
    alphabet = sorted({c for k in keys for c in k} | set("ab \t~"))
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 6)):
            r = rng.random()
            if r < 0.4 and multi:
                k = rng.choice(multi)
                parts.append(k[:rng.randint(1, len(k))])  # maybe a prefix
            elif r < 0.7:
                parts.append(rng.choice(keys))
            else:
                parts.append(rng.choice(alphabet))
        texts.append("".join(parts))
    return texts


def _corpus_lines(per_file: int = 400, max_bytes: int = 400_000):
    lines = []
    for path in sorted(CORPORA_DIR.glob("*.txt")):
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes)
        text = raw.decode("utf-8", "ignore").replace("\0", "")
        file_lines = [ln for ln in text.splitlines(True) if ln.strip()]
        step = max(1, len(file_lines) // per_file)
        lines.extend(file_lines[::step][:per_file])
    assert lines, "no corpus lines found in %s" % CORPORA_DIR
    return lines


# --------------------------------------------------------------------------
# units and layout


def test_offset_encoding():
    for off in (0, 1, 255, 256, 12345, (1 << 21) - 1):
        u = cb._encode_offset(off)
        assert not u & 0x200 and cb._decode_offset(u) == off
    for off in (1 << 21, 0x12345600, (1 << 29) - 256):
        u = cb._encode_offset(off)
        assert u & 0x200 and cb._decode_offset(u) == off
        assert u & 0x3FF == 0x200  # label / has_leaf bits untouched
    for off in ((1 << 21) + 1, 1 << 29):
        assert not cb._offset_is_encodable(off)
        with pytest.raises(ValueError):
            cb._encode_offset(off)


SMALL_DICTS = [
    {"a": "b"},
    {"a": ""},
    {"a": "x", "ab": "y", "abc": "", "abd": "zz", "b": "a"},
    {"\u00e9": "e", "e\u0301": "\u00e9", "\U0001d400": "A", "\uff21": "A",
     "\u3131\u314f": "\uac00", "\t": " ", "\x01": ""},
    {chr(cp): chr(cp + 1) * (cp % 3) for cp in range(0x20, 0x2000, 7)},
]


@pytest.mark.parametrize("rules", SMALL_DICTS)
def test_round_trip_small(rules):
    blob = compile_charsmap(rules)
    assert decompile_charsmap(blob) == rules
    (size,) = struct.unpack_from("<I", blob)
    assert size % 1024 == 0 and size < len(blob) - 4
    assert blob[-1] == 0
    strings = blob[4 + size:-1].split(b"\0")
    # each distinct target once, sorted by code points
    assert strings == sorted(set(strings))
    assert sorted(s.decode() for s in strings) == sorted(set(rules.values()))


def test_round_trip_random():
    rng = random.Random(7)
    pool = ([chr(c) for c in range(0x21, 0x7F)]
            + [chr(c) for c in range(0x300, 0x370)]
            + [chr(c) for c in range(0xAC00, 0xAC40)]
            + [chr(c) for c in range(0x1F600, 0x1F620)])
    rules = {}
    for _ in range(3000):
        key = "".join(rng.choice(pool) for _ in range(rng.randint(1, 4)))
        size = rng.randint(0, 3)
        rules[key] = "".join(rng.choice(pool) for _ in range(size))
    blob = compile_charsmap(rules)
    assert decompile_charsmap(blob) == rules
    assert compile_charsmap(dict(reversed(list(rules.items())))) == blob


def test_empty_and_invalid_keys():
    assert compile_charsmap({}) == b""
    assert decompile_charsmap(b"") == {}
    for bad in ({"": "x"}, {"a\0": "x"}, {"a": "x\0"}, {"\ud800": "x"},
                {"a": 5}):
        with pytest.raises(ValueError):
            compile_charsmap(bad)


def test_too_many_prefixes():
    ok = {"a" * n: str(n) for n in range(1, 32)}  # 31 prefixes incl. itself
    assert decompile_charsmap(compile_charsmap(ok)) == ok
    bad = dict(ok, **{"a" * 32: "x"})
    with pytest.raises(ValueError, match="32 prefixes"):
        compile_charsmap(bad)


def test_large_offset_form(monkeypatch, spm):
    """Force the bit-9 (<< 8) offset form by lowering the plain-form limit."""
    monkeypatch.setattr(cb, "_SHORT_OFFSET_LIMIT", 1 << 9)
    rules = {chr(0x100 + i) + chr(0x300 + i % 40): chr(0x41 + i % 26)
             for i in range(2000)}
    rules.update({chr(0x4E00 + i): "x" * (i % 5) for i in range(500)})
    blob = compile_charsmap(rules)
    (size,) = struct.unpack_from("<I", blob)
    units = struct.unpack_from("<%dI" % (size // 4), blob, 4)
    assert any(u & 0x200 and not u & 0x80000000 for u in units)
    assert decompile_charsmap(blob) == rules
    _assert_sp_agrees(spm, blob, rules, _fuzz_texts(rules, 300, 3))


# --------------------------------------------------------------------------
# sentencepiece reads what we build


@pytest.mark.parametrize("rules", SMALL_DICTS)
def test_sentencepiece_loads_small(rules, spm):
    blob = compile_charsmap(rules)
    _assert_sp_agrees(spm, blob, rules, _fuzz_texts(rules, 200, 1))


def test_sentencepiece_nul_byte_does_not_match(spm):
    rules = {"ab": "X", "a": "Y"}
    sp = _sp_with_charsmap(spm, compile_charsmap(rules))
    assert sp.normalize("a\0b") == "Y\0b"


@needs_corpora
@pytest.mark.parametrize("name", TABLES)
def test_sentencepiece_builtin_tables(name, builtin_rules, spm):
    rules = builtin_rules[name]
    blob = builtin_charsmap(name)
    texts = _corpus_lines() + _fuzz_texts(rules, 3000, TABLES.index(name))
    assert _assert_sp_agrees(spm, blob, rules, texts) > 3000


# --------------------------------------------------------------------------
# built-in tables


def test_builtin_names():
    assert builtin_charsmap("identity") == b""
    with pytest.raises(ValueError) as err:
        builtin_charsmap("nfkd")
    for name in BUILTIN_RULE_NAMES:
        assert name in str(err.value)


@pytest.mark.parametrize("name", TABLES)
def test_builtin_round_trip(name, builtin_rules):
    blob = builtin_charsmap(name)
    rules = builtin_rules[name]
    assert len(rules) > 200_000
    assert compile_charsmap(rules) == blob


def test_builtin_contents(builtin_rules):
    nfkc, nmt = builtin_rules["nfkc"], builtin_rules["nmt_nfkc"]
    cf, nmt_cf = builtin_rules["nfkc_cf"], builtin_rules["nmt_nfkc_cf"]
    n = normalize_with_rules
    for rules in builtin_rules.values():
        assert n(rules, "\uff21\u2047\ufb01") in ("A??fi", "a??fi")
        assert n(rules, "A\u0301") in ("\u00c1", "\u00e1")
        assert n(rules, "\u3131\u314f\u11a8 \u1100\u1161") == "\uac01 \uac00"
        assert n(rules, "\u2126\u0313") in ("\u1f68", "\u1f60")
    # nmt extras (0.2.3 behaviour: no U+200D rule, U+FF5E unmapped)
    assert n(nmt, "a\tb\u200bc\u061cd\ufeff\u2581\x01\x7f") == "a b c d  "
    assert "\u200d" not in nmt and "\uff5e" not in nmt
    assert nfkc["\uff5e"] == "~" and "\t" not in nfkc
    assert set(nmt) - set(nfkc) == set(nmt_cf) - set(cf)
    assert len(set(nmt) - set(nfkc)) == 45
    # simple case folding, as sentencepiece: no "ss" for sharp s
    assert "\u00df" not in cf and cf["\u1e9e"] == "\u00df"
    assert cf["A"] == "a" and cf["\u01c5"] == "d\u017e"
    assert cf["\u1f88"] == "\u1f80" and "\u0130" not in cf
    assert n(nmt_cf, "\uff21\t") == "a "


def test_difference_to_sentencepiece_builtins(builtin_rules, spm):
    """Regression guard for the counts in subtok/normalizers/rules/README.md.

    Our tables (Unicode 15.1) lack only rules for characters new in Unicode
    16.0; they never add or change a rule.  Their blobs are read only to
    compare dicts.
    """
    # the counts are for sentencepiece 0.2.3, which the spm fixture asserts
    pkg = Path(spm.__file__).parent / "package_data"
    expected = {"nfkc": 360, "nmt_nfkc": 360, "nfkc_cf": 415,
                "nmt_nfkc_cf": 415}
    readme = Path(cb.__file__).parent / "rules" / "README.md"
    if "**15.1.0**" not in readme.read_text(encoding="utf-8"):
        pytest.skip("tables were not generated from Unicode 15.1")
    for name, count in expected.items():
        theirs = decompile_charsmap((pkg / (name + ".bin")).read_bytes())
        ours = builtin_rules[name]
        assert all(theirs[k] == v for k, v in ours.items()), name
        assert len(theirs) - len(ours) == count, name


# --------------------------------------------------------------------------
# rule TSV


def test_load_rule_tsv(tmp_path):
    p = tmp_path / "rules.tsv"
    p.write_text(
        "# comment line\n"
        "\n"
        "41\t61\tA to a\n"
        "U+0042\tU+0062 U+0062\n"
        "u+43 44\t45\n"
        "7f\n"                      # deletion (no tab)
        "46\t\n"                    # empty target
        "  # indented comment\n"
        "41\t7A\n"                  # later lines override
        "1F600\t3A 29\n",
        encoding="utf-8")
    assert load_rule_tsv(p) == {"A": "z", "B": "bb", "CD": "E", "\x7f": "",
                                "F": "", "\U0001f600": ":)"}
    assert load_rule_tsv(str(p)) == load_rule_tsv(p)


@pytest.mark.parametrize("bad_line", [
    "4G\t61",          # not hex
    "41\t110000",      # beyond U+10FFFF
    "D800\t41",        # surrogate
    "0\t41",           # NUL
    "\t41",            # empty source
    "U+\t41",          # prefix without digits
])
def test_load_rule_tsv_errors(tmp_path, bad_line):
    p = tmp_path / "bad.tsv"
    p.write_text("# header\n41\t61\n\n" + bad_line + "\n42\t62\n",
                 encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_rule_tsv(p)
    assert "bad.tsv:4" in str(err.value)


def test_tsv_to_sentencepiece(tmp_path, spm):
    p = tmp_path / "r.tsv"
    p.write_text("41\t61\n41 301\tE1\n3000\t20\n", encoding="utf-8")
    rules = load_rule_tsv(p)
    blob = compile_charsmap(rules)
    assert decompile_charsmap(blob) == rules
    sp = _sp_with_charsmap(spm, blob)
    assert sp.normalize("AA\u0301\u3000") == "a\u00e1 "
