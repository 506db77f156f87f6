"""SentencePiece -> tokenizer.json export against sentencepiece 0.2.3 and
tokenizers 0.23.3, on every shared model; the way back; .tiktoken <->
byte-level tokenizer.json; ``subtok convert``."""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings

import pytest

import _export_check
from _interop import CL100K_FILE, CL100K_PATTERN, INTEROP, corpus_sample, require, tiktoken_cl100k
from conftest import ROOT, model_id, run_subtok
from subtok.errors import ModelFileError
from subtok.formats import sentencepiece_to_json as lazily_exported
from subtok.formats.hf_export import (UNEXPRESSIBLE, ExportWarning, json_to_sentencepiece,
                                      model_data_to_proto, sentencepiece_to_json)
from subtok.formats.sentencepiece import load_model
from subtok.formats.tiktoken import KNOWN_HASHES, parse_ranks, ranks_text
from subtok.formats.tiktoken_json import json_to_tiktoken, tiktoken_to_json
from subtok.vocab import PieceType

MODELS = _export_check.model_files()
DOC = ROOT / "docs" / "export.md"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return _export_check.sample_texts()


@pytest.fixture(scope="module")
def documented(texts) -> dict[str, dict[str, int]]:
    counts = _export_check.parse_table(DOC.read_text(encoding="utf-8"), len(texts))
    assert set(counts) == {path.stem for path in MODELS}
    return counts


def _loaded(data: dict):
    import tokenizers
    return tokenizers.Tokenizer.from_str(json.dumps(data))


def _same(a, b) -> bool:
    """JSON values equal, floats to a few ulps: tokenizers parses numbers
    with serde_json's fast float parser, which can be one ulp off."""
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return a == b


@pytest.mark.parametrize("path", MODELS, ids=model_id)
def test_export_matches_sentencepiece_but_for_documented_classes(path, texts, documented):
    checker = _export_check.Checker(path)
    counts, unexplained, bad_decodes = checker.run(texts)
    assert unexplained == []
    assert bad_decodes == []
    measured = {kind: counts[kind] for kind in _export_check.CLASSES + ("unexplained",)}
    assert measured == documented[path.stem]
    # each class that occurred was warned about at export
    for kind in _export_check.CLASSES:
        if counts[kind]:
            told = {UNEXPRESSIBLE[kind]}
            if kind == "graphemes":  # an NFKC charsmap: only marks out of canonical order
                told.add(UNEXPRESSIBLE["mark_order"])
            assert told & set(checker.warnings)
    if checker.data.model_type in ("bpe", "char"):  # charsmap or not: sentencepiece's ids
        assert not counts


def _charsmap_models() -> list:
    """One model for each distinct charsmap of the shared models."""
    chosen: dict[bytes, object] = {}
    for path in MODELS:
        chosen.setdefault(load_model(path).normalizer.precompiled_charsmap, path)
    chosen.pop(b"", None)
    return list(chosen.values())


@pytest.fixture(scope="module")
def decomposed() -> list[tuple[str, str]]:
    """(character, its canonical decomposition) for every character that has
    one, but only every 7th Hangul syllable (they decompose alike)."""
    import unicodedata
    pairs = []
    for code in range(0x110000):
        if not 0xD800 <= code < 0xE000 and not (0xAC00 <= code <= 0xD7A3 and code % 7):
            char = chr(code)
            parts = unicodedata.normalize("NFD", char)
            if parts != char:
                pairs.append((char, parts))
    assert len(pairs) > 3500
    return pairs


@pytest.mark.parametrize("path", _charsmap_models(), ids=model_id)
def test_decomposed_text_and_typed_markers_normalize_as_sentencepiece(path, decomposed, spm):
    """tokenizers runs the charsmap one grapheme at a time; the export makes
    each character its own grapheme and composes with NFC around it, so a
    decomposed character normalizes as in sentencepiece, unless one of the
    two libraries' Unicode tables is too old to compose it."""
    import tokenizers
    exported = sentencepiece_to_json(path, warn=lambda m: None)
    steps = [step["type"] for step in exported["normalizer"]["normalizers"]]
    assert steps.count("NFC") == 2 and steps.count("Precompiled") == 1
    hf = tokenizers.Tokenizer.from_str(json.dumps(exported)).normalizer
    nfc = tokenizers.normalizers.NFC()
    sp = spm.SentencePieceProcessor(model_file=str(path))
    checked = differ = 0
    for char, parts in decomposed:
        if nfc.normalize_str(parts) != char or sp.normalize(parts) != sp.normalize(char):
            continue
        checked += 1
        differ += hf.normalize_str(parts) != sp.normalize(parts)
    assert checked > 2400 and differ == 0
    # the control characters that mark the text inside the normalizer, typed
    for text in ["\x80", "\x80\x81", "a\x80\x82e\u0301", "\x81\x80\x82\x80\x81\x83ﾊﾟ\x80",
                 "\x80e\u0301\u0301\x82\x81"]:
        assert hf.normalize_str(text) == sp.normalize(text), repr(text)


def test_a_charsmap_that_does_not_compose_as_nfc_is_exported_alone():
    from subtok.normalizers.charsmap_builder import compile_charsmap
    data = load_model(require(MODELS[0]).parent / "hf_test_sentencepiece_bpe.model")
    data.normalizer.precompiled_charsmap = compile_charsmap({"a": "b", "e\u0301": "x"})
    told: list[str] = []
    exported = sentencepiece_to_json(data, warn=told.append)
    assert exported["normalizer"]["normalizers"][0]["type"] == "Precompiled"
    assert "NFC" not in [step["type"] for step in exported["normalizer"]["normalizers"]]
    assert UNEXPRESSIBLE["graphemes"] in told and UNEXPRESSIBLE["mark_order"] not in told


@pytest.mark.parametrize("path", MODELS, ids=model_id)
def test_the_json_is_what_tokenizers_writes_back(path):
    exported = sentencepiece_to_json(path, warn=lambda message: None)
    assert _same(json.loads(_loaded(exported).to_str()), exported)


def test_warnings_name_each_unexpressible_behaviour_once():
    data = load_model(require(MODELS[0]))
    data.treat_whitespace_as_suffix = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lazily_exported(data)
    messages = [str(w.message) for w in caught if issubclass(w.category, ExportWarning)]
    assert UNEXPRESSIBLE["suffix"] in messages and len(messages) == len(set(messages))
    assert all("\n" not in m for m in messages)
    quiet: list[str] = []
    sentencepiece_to_json(require(MODELS[0]).parent / "llama2.model", warn=quiet.append)
    assert quiet == []


# -- tokenizer.json -> .model ---------------------------------------------------------

@pytest.mark.parametrize("path", [p for p in MODELS if "word" not in p.stem], ids=model_id)
def test_exported_json_converts_back_to_an_equivalent_model(path, texts, tmp_path, spm):
    original = load_model(path)
    back = json_to_sentencepiece(sentencepiece_to_json(original, warn=lambda m: None))
    assert back.pieces == original.pieces
    kinds = {PieceType.NORMAL, PieceType.UNUSED}
    assert [t in kinds for t in back.types] == [t in kinds for t in original.types] or \
        original.model_type == "char"
    assert back.normalizer.precompiled_charsmap == original.normalizer.precompiled_charsmap
    rebuilt = tmp_path / "back.model"
    rebuilt.write_bytes(model_data_to_proto(back).SerializeToString())
    theirs = spm.SentencePieceProcessor(model_file=str(path))
    ours = spm.SentencePieceProcessor(model_file=str(rebuilt))
    assert [ours.encode(t) for t in texts] == [theirs.encode(t) for t in texts]
    ids = [theirs.encode(t) for t in texts[:300]]
    assert [ours.decode(i) for i in ids] == [theirs.decode(i) for i in ids]


@pytest.mark.parametrize("name", ["llama2_chat.tokenizer.json", "t5_small.tokenizer.json"])
def test_real_sentencepiece_shaped_json_converts_to_a_model(name, tmp_path, spm):
    source = require(INTEROP / name)
    data = json.loads(source.read_text(encoding="utf-8"))
    model = tmp_path / "m.model"
    model.write_bytes(model_data_to_proto(json_to_sentencepiece(data, name)).SerializeToString())
    sp = spm.SentencePieceProcessor(model_file=str(model))
    hf = _loaded(data)
    texts = [t.encode("utf-8", "replace").decode() for t in corpus_sample(60, seed=5)]
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    mismatches = [(ids, sp.encode(t)) for t, ids in zip(texts, got) if sp.encode(t) != ids]
    if data["model"].get("merges") is not None:
        assert mismatches == []
    else:  # unigram: only paths of equal score, chosen by a different tie rule (float32_ties)
        scores = [score for _, score in data["model"]["vocab"]]
        for ours, theirs in mismatches:
            assert math.isclose(sum(scores[i] for i in ours), sum(scores[i] for i in theirs),
                                abs_tol=1e-4)
        assert len(mismatches) <= 2


def test_json_that_is_not_sentencepiece_shaped_is_refused():
    for name, message in [("kogpt2_base_v2.tokenizer.json", "NFKC normalizer"),
                          ("bert_base_uncased.tokenizer.json", "not WordPiece"),
                          ("gpt2.tokenizer.json", "ByteLevel pre-tokenizer")]:
        data = json.loads(require(INTEROP / name).read_text(encoding="utf-8"))
        with pytest.raises(ModelFileError) as error:
            json_to_sentencepiece(data, name)
        assert name in str(error.value) and "\n" not in str(error.value)


# -- .tiktoken <-> tokenizer.json --------------------------------------------------------

@pytest.fixture(scope="module")
def cl100k_json() -> dict:
    from _interop import CL100K_SPECIALS
    ranks = parse_ranks(require(CL100K_FILE).read_bytes())
    return tiktoken_to_json(ranks, CL100K_PATTERN, CL100K_SPECIALS)


def test_tiktoken_to_json_and_back_is_byte_identical(cl100k_json):
    from _interop import CL100K_SPECIALS
    ranks, pattern, specials = json_to_tiktoken(cl100k_json)
    assert ranks_text(ranks) == CL100K_FILE.read_bytes()
    assert pattern == CL100K_PATTERN and specials == CL100K_SPECIALS
    again = json.loads(_loaded(cl100k_json).to_str())
    assert again == cl100k_json


def test_tiktoken_json_encodes_as_tiktoken(cl100k_json, texts):
    oracle = tiktoken_cl100k()
    hf = _loaded(cl100k_json)
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    assert got == [oracle.encode(t, allowed_special="all") for t in texts]


def test_gpt2_tokenizer_json_gives_r50k_base_exactly(tmp_path):
    out = tmp_path / "gpt2.tiktoken"
    run_subtok("convert", "--model", str(require(INTEROP / "gpt2.tokenizer.json")), "--output", str(out))
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert KNOWN_HASHES[digest] == "r50k_base"
    line = "Hello world, this is GPT-2's tokenizer.  It  has   spaces\t\ttoo!"
    ids = run_subtok("encode", "--model", str(out), "--output_format=id", input=line.encode() + b"\n").stdout
    assert list(map(int, ids.split())) == _loaded(json.loads((INTEROP / "gpt2.tokenizer.json").read_text())) \
        .encode(line).ids


# -- subtok convert -----------------------------------------------------------------------

def test_convert_round_trips_and_warns_on_stderr(tmp_path):
    albert = next(p for p in MODELS if p.stem.startswith("albert"))
    out = tmp_path / "albert.json"
    proc = run_subtok("convert", "--model", str(albert), "--output", str(out))
    warned = proc.stderr.decode().splitlines()
    assert warned and all(line.startswith("subtok: warning: ") for line in warned)
    assert json.loads(out.read_text(encoding="utf-8")) == sentencepiece_to_json(albert, warn=lambda m: None)
    back = tmp_path / "albert.model"
    run_subtok("convert", "--model", str(out), "--output", str(back))
    assert load_model(back).pieces == load_model(albert).pieces
    tt = tmp_path / "cl.json"
    run_subtok("convert", "--model", str(CL100K_FILE), "--output", str(tt))
    run_subtok("convert", "--model", str(tt), "--output", str(tmp_path / "cl.tiktoken"))
    assert (tmp_path / "cl.tiktoken").read_bytes() == CL100K_FILE.read_bytes()


def test_convert_vocab_txt_and_gpt2_files(tmp_path):
    from subtok.formats.bert_vocab import bert_wordpiece_json
    from subtok.formats.gpt2_files import byte_level_bpe_json
    vocab = require(INTEROP / "bert_base_cased.vocab.txt")
    run_subtok("convert", "--model", str(vocab), "--output", str(tmp_path / "b.json"), "--lowercase=false")
    assert json.loads((tmp_path / "b.json").read_text()) == bert_wordpiece_json(vocab, lowercase=False)
    gpt2 = INTEROP / "gpt2"
    run_subtok("convert", "--model", str(gpt2 / "vocab.json"), "--merges", str(gpt2 / "merges.txt"),
               "--output", str(tmp_path / "g.json"))
    assert json.loads((tmp_path / "g.json").read_text()) == \
        byte_level_bpe_json(gpt2 / "vocab.json", gpt2 / "merges.txt")


@pytest.mark.parametrize("args, message", [
    (["--model", "{interop}/gpt2/vocab.json"], "needs its merges"),
    (["--model", "{interop}/kogpt2_base_v2.tokenizer.json", "--output_format=model"], "NFKC"),
    (["--model", "{interop}/cl100k_base.tiktoken", "--output_format=model"], "tokenizer.json only"),
    (["--model", "{interop}/bert_base_uncased.tokenizer.json", "--output_format=tiktoken"],
     "not a BPE model"),
    (["--model", "{interop}/cl100k_base.tiktoken", "--output_format=xml"], "unknown output format"),
])
def test_convert_errors_are_one_line(tmp_path, args, message):
    out = tmp_path / "out.file"
    proc = run_subtok("convert", *[a.format(interop=INTEROP) for a in args], "--output", str(out),
                      check=False)
    assert proc.returncode != 0 and message in proc.stderr.decode()
    assert proc.stderr.count(b"\n") == 1 and not out.exists()


def test_docs_export_md_lists_every_class():
    text = DOC.read_text(encoding="utf-8")
    for kind in _export_check.CLASSES:
        assert re.search(r"`%s`" % kind, text), kind
