"""BERT vocab.txt and GPT-2 vocab.json + merges.txt: the tokenizer.json
dicts subtok builds equal what tokenizers' own classes build from the same
files, and encode a sample of every corpus identically."""

from __future__ import annotations

import json

import pytest

from _interop import HOSTILE_TEXT, INTEROP, corpus_sample, require
from subtok.errors import ModelFileError
from subtok.formats.bert_vocab import bert_wordpiece_json, read_vocab_txt
from subtok.formats.gpt2_files import byte_level_bpe_json, read_merges, read_vocab_json

BERT_VOCAB = INTEROP / "bert_base_cased.vocab.txt"
GPT2_VOCAB = INTEROP / "gpt2" / "vocab.json"
GPT2_MERGES = INTEROP / "gpt2" / "merges.txt"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return corpus_sample(150) + HOSTILE_TEXT


def _loaded(data: dict):
    import tokenizers
    return tokenizers.Tokenizer.from_str(json.dumps(data))


def _same_encodings(mine, theirs, texts: list[str]) -> None:
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # (no lone surrogates)
    got, expected = mine.encode_batch(texts), theirs.encode_batch(texts)
    assert [e.ids for e in got] == [e.ids for e in expected]
    assert [e.tokens for e in got] == [e.tokens for e in expected]
    ids = [e.ids for e in expected]
    assert mine.decode_batch(ids) == theirs.decode_batch(ids)


@pytest.mark.parametrize("options", [
    {}, {"lowercase": False}, {"lowercase": False, "strip_accents": False},
    {"strip_accents": True, "handle_chinese_chars": False, "clean_text": False, "wordpieces_prefix": "@@"},
])
def test_bert_vocab_txt_gives_bert_wordpiece_tokenizer_s_json(texts, options):
    from tokenizers import BertWordPieceTokenizer
    theirs = BertWordPieceTokenizer(str(require(BERT_VOCAB)), **options)
    mine = bert_wordpiece_json(BERT_VOCAB, **options)
    assert mine == json.loads(theirs._tokenizer.to_str())
    _same_encodings(_loaded(mine), theirs._tokenizer, texts)


@pytest.mark.parametrize("options", [
    {}, {"add_prefix_space": True, "lowercase": True, "unicode_normalizer": "nfkc", "trim_offsets": True},
])
def test_gpt2_files_give_byte_level_bpe_tokenizer_s_json(texts, options):
    from tokenizers import ByteLevelBPETokenizer
    theirs = ByteLevelBPETokenizer(str(require(GPT2_VOCAB)), str(require(GPT2_MERGES)), **options)
    mine = byte_level_bpe_json(GPT2_VOCAB, GPT2_MERGES, **options)
    assert mine == json.loads(theirs._tokenizer.to_str())
    _same_encodings(_loaded(mine), theirs._tokenizer, texts)


def test_vocab_txt_duplicates_and_bad_bytes_are_errors_naming_the_line(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[PAD]\n[UNK]\nhello  \nworld\nhello\n")
    with pytest.raises(ModelFileError, match=r"vocab.txt:5: token 'hello' is already on line 3\."):
        read_vocab_txt(path)
    path.write_bytes(b"[PAD]\r\nab\xff\n")
    with pytest.raises(ModelFileError, match=r"vocab.txt:2: not UTF-8"):
        read_vocab_txt(path)
    path.write_bytes("[PAD]\r\n[UNK] \n##a\u3000".encode("utf-8"))
    assert read_vocab_txt(path) == {"[PAD]": 0, "[UNK]": 1, "##a": 2}
    with pytest.raises(ModelFileError, match=r"\[SEP\] is not in the vocabulary"):
        bert_wordpiece_json(path)


@pytest.mark.parametrize("content, message", [
    ("#version: 0.2\na b\nab c\n", r"merges.txt:3: 'abc' is not in the vocabulary"),
    ("a b\nz b\n", r"merges.txt:2: 'z' is not in the vocabulary"),
    ("a b\n\nc a\n", r"merges.txt:2: a merge is two tokens"),
    ("a b\r\na  b\n", r"merges.txt:2: a merge is two tokens"),
])
def test_merges_naming_unknown_tokens_are_errors_naming_the_line(tmp_path, content, message):
    merges = tmp_path / "merges.txt"
    merges.write_text(content)
    with pytest.raises(ModelFileError, match=message):
        read_merges(merges, {"a": 0, "b": 1, "ab": 2, "c": 3})


def test_merges_and_vocab_json_details(tmp_path):
    merges = tmp_path / "merges.txt"
    merges.write_text("a b\r\n")
    assert read_merges(merges, {"a": 0, "b": 1, "ab": 2}) == [("a", "b")]
    bad = tmp_path / "vocab.json"
    bad.write_text('{"a": 0, "b": -1}')
    with pytest.raises(ModelFileError, match="the id of 'b' is -1"):
        read_vocab_json(bad)
    bad.write_text('{"a": 0,\n "b": }')
    with pytest.raises(ModelFileError, match=r"vocab.json:2: not JSON"):
        read_vocab_json(bad)
