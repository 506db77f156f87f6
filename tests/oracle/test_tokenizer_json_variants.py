"""Every shared tokenizer.json in each serialization that tokenizers 0.19
to 0.23 write, against tokenizers 0.23.3 reading the same text.

The files in ../shared/data/interop were written by several tokenizers
versions (merges as "a b" strings, models without a "type", Metaspace with
the legacy ``add_prefix_space``). Each is also rewritten here the way the
other versions write it, all from the one file:

* as 0.20-0.23 write it: ``tokenizers.Tokenizer.to_str()`` (merges as
  pairs, ``ignore_merges`` present, every component typed, Metaspace with
  ``prepend_scheme`` and ``split``), compact and pretty-printed;
* as 0.19.0 writes it: the same, but merges as "a b" strings and no
  ``ignore_merges`` field (``BPE``'s ``Serialize`` in that release).

The oracle reads each variant itself, so every expected value comes from
tokenizers.
"""

from __future__ import annotations

import json

import pytest

from hf_data import EXTRA_HOSTILE, corpus_lines, file_id, special_strings, tokenizer_files
from subtok.tokenizer import Tokenizer

import tokenizers  # the oracle (pinned by the test extra); missing means failing, not skipping

LINES_PER_CORPUS = 12


def _as_0_19(saved: str) -> str | None:
    """tokenizers 0.19.0's form of a file that 0.23 wrote: BPE merges as
    "a b" strings, no ``ignore_merges``. None when the model is not BPE or
    a merged token holds a space (the string form cannot say that)."""
    data = json.loads(saved)
    model = data["model"]
    if model.get("type") != "BPE":
        return None
    merges = model["merges"]
    assert all(isinstance(m, list) and len(m) == 2 for m in merges)  # 0.23 writes pairs
    if any(" " in part for pair in merges for part in pair):
        return None
    model["merges"] = ["%s %s" % tuple(pair) for pair in merges]
    del model["ignore_merges"]
    return json.dumps(data, ensure_ascii=False)


def _variants(path) -> dict[str, str]:
    """The file as written, and as each tokenizers version would write it."""
    written = path.read_text(encoding="utf-8")
    reloaded = tokenizers.Tokenizer.from_str(written)
    saved = reloaded.to_str()
    found = {"as written": written, "0.20-0.23": saved,
             "0.20-0.23 pretty": reloaded.to_str(pretty=True)}
    old = _as_0_19(saved)
    if old is not None:
        found["0.19"] = old
    return found


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return corpus_lines(LINES_PER_CORPUS, seed=1919) + EXTRA_HOSTILE[:-1]


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_every_serialization_encodes_and_decodes_as_tokenizers(path, texts):
    variants = _variants(path)
    merges = json.loads(variants["0.20-0.23"])["model"].get("merges")
    assert merges is None or "0.19" in variants, "a BPE file without its 0.19 form"
    lines = texts + special_strings(path)
    for label, text in variants.items():
        mine, ref = Tokenizer.from_str(text, "%s (%s)" % (path.name, label)), tokenizers.Tokenizer.from_str(text)
        assert mine.get_vocab() == ref.get_vocab(), label
        for line in lines:
            got, want = mine.encode(line), ref.encode(line)
            assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets), (label, line)
            assert mine.decode(want.ids) == ref.decode(want.ids), (label, line)
            assert (mine.decode(want.ids, skip_special_tokens=False)
                    == ref.decode(want.ids, skip_special_tokens=False)), (label, line)


def test_the_variants_differ_where_the_versions_differ():
    """The rewrites really change the shapes this file is about (else the
    test above would compare one serialization several times)."""
    gpt2 = _variants(next(p for p in tokenizer_files() if p.name == "gpt2.tokenizer.json"))
    assert isinstance(json.loads(gpt2["as written"])["model"]["merges"][0], str)
    assert isinstance(json.loads(gpt2["0.20-0.23"])["model"]["merges"][0], list)
    assert "ignore_merges" not in json.loads(gpt2["0.19"])["model"]
    assert "type" not in json.loads(gpt2["as written"])["model"]
    t5 = _variants(next(p for p in tokenizer_files() if p.name == "t5_small.tokenizer.json"))
    written = json.loads(t5["as written"])["pre_tokenizer"]["pretokenizers"][1]
    saved = json.loads(t5["0.20-0.23"])["pre_tokenizer"]["pretokenizers"][1]
    assert "add_prefix_space" in written and "prepend_scheme" not in written
    assert saved["prepend_scheme"] == "always" and "add_prefix_space" not in saved


def _bpe_json(merges, vocab, **model) -> str:
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": dict({"type": "BPE", "dropout": None, "unk_token": None,
                           "continuing_subword_prefix": None, "end_of_word_suffix": None,
                           "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                           "merges": merges}, **model)}
    return json.dumps(spec)


def test_merge_pairs_may_hold_spaces():
    """Since 0.20 a merge is a pair, so its tokens may hold spaces (the
    case tokenizers' own serialization test pins down)."""
    vocab = {"a": 0, "b": 1, " ": 2, "c": 3, "b c": 4, "ab c": 5, "b ": 6}
    text = _bpe_json([["b", " "], ["b ", "c"], ["a", "b c"]], vocab)
    mine, ref = Tokenizer.from_str(text, "pairs.json"), tokenizers.Tokenizer.from_str(text)
    for line in ["ab c", "b c", "ab cab c b", "a b c", "cab c"]:
        assert mine.encode(line).tokens == ref.encode(line).tokens, line
    assert mine.encode("ab c").tokens == ["ab c"]


@pytest.mark.parametrize("ignore", [None, False, True])
def test_ignore_merges_absent_false_and_true(ignore):
    """0.19.0 files have no ``ignore_merges``; absent means false."""
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    extra = {} if ignore is None else {"ignore_merges": ignore}
    for merges in (["b c", "a b"], [["b", "c"], ["a", "b"]]):
        text = _bpe_json(merges, vocab, **extra)
        mine, ref = Tokenizer.from_str(text, "x.json"), tokenizers.Tokenizer.from_str(text)
        for line in ["abc", "ab", "bc", "cab", "abcabc"]:
            assert mine.encode(line).tokens == ref.encode(line).tokens, (ignore, merges, line)


def test_scores_are_read_as_serde_json_reads_them():
    """tokenizers parses JSON numbers with serde_json's fast path (digits as
    an integer, then one division by a power of ten), one ulp off for
    t5's "---" score; those ulps decide Unigram ties such as a run of 55
    dashes (wagahaiwa_nekodearu.txt lines 3 and 16)."""
    from hf_data import INTEROP_DIR
    from conftest import CORPORA_DIR
    from subtok.formats.tokenizer_json import serde_f64
    assert serde_f64("-12.130167007446289") == -12.130167007446287
    assert serde_f64("-5.129043102264404") == float("-5.129043102264404")
    path = INTEROP_DIR / "t5_small.tokenizer.json"
    mine, ref = Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    lines = (CORPORA_DIR / "wagahaiwa_nekodearu.txt").read_bytes().split(b"\n")
    for text in [lines[2].decode("utf-8"), lines[15].decode("utf-8"), "-" * 55, "x" + "-" * 40]:
        assert mine.encode(text).ids == ref.encode(text).ids, text
        assert mine.encode_fast(text).ids == ref.encode(text).ids, text
