"""Each tokenizer.json component on small hand-made files, against
tokenizers 0.23.3: the oracle reads the same JSON and gives every expected
value (normalized text and each character's original span, pre-token
pieces and spans, model tokens, post-processed encodings, decoded text)."""

from __future__ import annotations

import json

import pytest

from subtok.errors import EncodeError
from subtok.normalizers.aligned import AlignedString
from subtok.tokenizer import Tokenizer

import tokenizers  # the oracle (pinned by the test extra); missing means failing, not skipping

TEXTS = [
    "", " ", "Hello, World!", "  two  spaces  ", "\tTabs\tand\nnewlines\r\n",
    "Caf\u00e9 na\u0131\u0308ve \u00c9COLE \u0130stanbul \u03a3\u039f\u03a3 \u1e9e\u00df",
    "e\u0301 A\u030a \u1e69 \u0418\u0301 \u3131\u314f \uac00\u11a8 \ufb01 \u2460 \uff21\uff22",
    "\u65e5\u672c\u8a9e\u3067\u3059\u3002 \u4e2d\u6587 \ud55c\uad6d\uc5b4",
    "123 4567 \u0661\u0662 \u00bd x\u00b2", "it's I'll we've \u2581x \u2581\u2581y",
    "\U0001f469\u200d\U0001f4bb \U0001f44d\U0001f3fd \U0001f1ef\U0001f1f5 \ue001 \u2e50",
    "\x00\x01\x7f\u200b\u00ad\ufeff\ufffd a", "don't stop---now... ok?!",
]


def _tokenizer_json(model=None, **parts) -> str:
    """A whole tokenizer.json around the given components."""
    spec = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": model or {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}}
    spec.update(parts)
    return json.dumps(spec)


def _pair(text: str):
    return Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)


#: One token per normalized character: its span shows the alignments.
_PER_CHAR = {"type": "Split", "pattern": {"Regex": "[\\s\\S]"}, "behavior": "Isolated",
             "invert": False}

NORMALIZERS = [
    {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"},
    {"type": "Lowercase"}, {"type": "StripAccents"}, {"type": "Nmt"},
    {"type": "Strip", "strip_left": True, "strip_right": True},
    {"type": "Strip", "strip_left": False, "strip_right": True},
    {"type": "Prepend", "prepend": "\u2581"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "},
    {"type": "Replace", "pattern": {"Regex": "[aeiou]"}, "content": ""},
    {"type": "Replace", "pattern": {"Regex": "l+"}, "content": "LLL"},
    {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
     "strip_accents": None, "lowercase": True},
    {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
     "strip_accents": True, "lowercase": False},
    {"type": "ByteLevel"},
    {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"},
                                         {"type": "Lowercase"}]},
]


@pytest.mark.parametrize("spec", NORMALIZERS, ids=lambda s: s["type"])
def test_normalizer_text_and_spans(spec):
    ours, ref = _pair(_tokenizer_json(normalizer=spec, pre_tokenizer=_PER_CHAR))
    for text in TEXTS:
        assert ours.normalizer.normalize(text) == ref.normalizer.normalize_str(text), text
        assert ours.encode(text).offsets == ref.encode(text).offsets, text


def test_precompiled_normalizer_per_grapheme():
    """T5's charsmap: a cluster whose shortest prefix is a rule becomes that
    rule's target whole (the accent of decomposed И́ is lost)."""
    from hf_data import INTEROP_DIR
    data = json.loads((INTEROP_DIR / "t5_small.tokenizer.json").read_text(encoding="utf-8"))
    ours, ref = _pair(_tokenizer_json(normalizer=data["normalizer"], pre_tokenizer=_PER_CHAR))
    for text in TEXTS + ["\u0418\u0301 \u0439\u0306", "\x01start", "a\x01\x02b", "\uff76\uff9e"]:
        assert ours.normalizer.normalize(text) == ref.normalizer.normalize_str(text), text
        assert ours.encode(text).offsets == ref.encode(text).offsets, text


PRE_TOKENIZERS = [
    {"type": "Whitespace"}, {"type": "WhitespaceSplit"}, {"type": "BertPreTokenizer"},
    {"type": "Punctuation", "behavior": "Isolated"}, {"type": "Punctuation", "behavior": "Removed"},
    {"type": "Digits", "individual_digits": True}, {"type": "Digits", "individual_digits": False},
    {"type": "UnicodeScripts"}, {"type": "CharDelimiterSplit", "delimiter": " "},
    {"type": "FixedLength", "length": 3},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
    {"type": "Metaspace", "replacement": "_", "prepend_scheme": "never", "split": False},
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                           {"type": "Metaspace", "replacement": "\u2581",
                                            "prepend_scheme": "first", "split": True}]},
] + [{"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}
     for pattern in ({"String": " "}, {"Regex": "\\s+|[,.!?]"}, {"Regex": "\\p{L}+"},
                     {"Regex": "x*"})
     for behavior in ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
     for invert in (False, True)]


def _ids(spec: dict) -> str:
    extra = spec.get("behavior", "") + ("-inv" if spec.get("invert") else "")
    return "%s-%s" % (spec["type"], extra or spec.get("prepend_scheme", ""))


@pytest.mark.parametrize("spec", PRE_TOKENIZERS, ids=_ids)
def test_pre_tokenizer_pieces_and_spans(spec):
    ours, ref = _pair(_tokenizer_json(pre_tokenizer=spec))
    for text in TEXTS:
        want = ref.pre_tokenizer.pre_tokenize_str(text)
        got = ours.pre_tokenizer.split_aligned(AlignedString.original(text))
        assert [(p.text, (p.start, p.end)) for p in got] == want, text
        if not getattr(ours.pre_tokenizer, "needs_alignment", False):
            assert ours.pre_tokenizer.split(text) == [p for p, _ in want], text


_BPE_VOCAB = {"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 5, "bc": 6, "##b": 7, "##c": 8,
              "a##b": 9, "c</w>": 10, "bc</w>": 11, "<0x61>": 12, "<0xC3>": 13, "<0xA9>": 14,
              "aa": 15, "aaa": 16, "a</w>": 17}
_BPE_MERGES = [["a", "b"], ["ab", "c"], ["b", "c"], ["a", "a"], ["aa", "a"]]
MODELS = [
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": _BPE_MERGES, "unk_token": "<unk>"},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": ["a b", "ab c", "b c"], "unk_token": "<unk>",
     "fuse_unk": True},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": _BPE_MERGES, "unk_token": None},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": _BPE_MERGES, "unk_token": "<unk>",
     "byte_fallback": True},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": [["a", "##b"]], "unk_token": "<unk>",
     "continuing_subword_prefix": "##"},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": [["b", "c</w>"]], "unk_token": "<unk>",
     "end_of_word_suffix": "</w>"},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": [["b", "c"]], "unk_token": "<unk>",
     "ignore_merges": True},
    {"type": "BPE", "vocab": _BPE_VOCAB, "merges": _BPE_MERGES, "unk_token": "<unk>",
     "dropout": 1.0},
    {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.0],
                                               ["ab", -2.5], ["abc", -4.0], ["c", -1.5],
                                               ["bc", -3.0], ["<0x78>", -9.0]]},
    {"type": "Unigram", "unk_id": 0, "byte_fallback": True,
     "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["<0x78>", -9.0], ["<0x79>", -9.0]]},
    {"type": "WordPiece", "unk_token": "<unk>", "continuing_subword_prefix": "##",
     "max_input_chars_per_word": 5, "vocab": _BPE_VOCAB},
    {"type": "WordLevel", "unk_token": "<unk>", "vocab": _BPE_VOCAB},
]
WORDS = "a b c ab abc bc abab abcabc aaaa aaaaa abx xab xy xya \u00e9a abd abcd b\u00e9 aab".split()


@pytest.mark.parametrize("spec", MODELS, ids=lambda s: s["type"])
def test_model_tokens(spec):
    ours, ref = _pair(_tokenizer_json(model=spec, pre_tokenizer={"type": "WhitespaceSplit"}))
    text = " ".join(WORDS)
    got, want = ours.encode(text), ref.encode(text)
    assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets)
    for word in WORDS:
        got, want = ours.encode(word), ref.encode(word)
        assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets), word


def test_models_without_type_are_inferred():
    """Files from before tokenizers named the model type."""
    for spec in MODELS:
        if spec.get("dropout"):
            continue
        legacy = {k: v for k, v in spec.items() if k != "type"}
        ours, ref = _pair(_tokenizer_json(model=legacy, pre_tokenizer={"type": "WhitespaceSplit"}))
        text = " ".join(WORDS)
        assert ours.encode(text).ids == ref.encode(text).ids, spec["type"]


def test_scan_and_queue_merges_agree():
    """The rescanning merge loop is the queue of Word::merge_all without
    dropout (the reference implementation beside the fast one)."""
    from hf_data import INTEROP_DIR, corpus_lines
    model = Tokenizer.from_file(INTEROP_DIR / "gpt2.tokenizer.json").model
    for line in corpus_lines(20):
        for word in line.split():
            ids, lengths, _ = model._symbols(word)
            scanned_ids, scanned_lengths = list(ids), list(lengths)
            model._merge(scanned_ids, scanned_lengths)
            assert (scanned_ids, scanned_lengths) == model._merge_with_queue(list(ids), list(lengths))


_SPECIALS = {"[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]},
             "[SEP]": {"id": "[SEP]", "ids": [102, 103], "tokens": ["[SEP]", "[SEP2]"]}}
POST_PROCESSORS = [
    {"type": "TemplateProcessing",
     "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
     "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
              {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
              {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
     "special_tokens": _SPECIALS},
    {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]},
    {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
     "add_prefix_space": True},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True},
    {"type": "Sequence", "processors": [{"type": "ByteLevel", "add_prefix_space": False,
                                         "trim_offsets": True},
                                        {"type": "BertProcessing", "sep": ["[SEP]", 102],
                                         "cls": ["[CLS]", 101]}]},
]


@pytest.mark.parametrize("spec", POST_PROCESSORS, ids=lambda s: s["type"])
def test_post_processor_encodings(spec):
    pre = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    ours, ref = _pair(_tokenizer_json(pre_tokenizer=pre, post_processor=spec))
    for first, second in [("Hello  world ", " How are  you?"), ("", "x"), ("  a", "")]:
        for add in (True, False):
            for got, want in ((ours.encode(first, add_special_tokens=add),
                               ref.encode(first, add_special_tokens=add)),
                              (ours.encode(first, second, add_special_tokens=add),
                               ref.encode(first, second, add_special_tokens=add))):
                assert (got.ids, got.tokens, got.offsets, got.type_ids, got.special_tokens_mask,
                        got.word_ids) == (want.ids, want.tokens, want.offsets, want.type_ids,
                                          want.special_tokens_mask, want.word_ids)


DECODERS = [
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True}, {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always"},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": True},
    {"type": "WordPiece", "prefix": "##", "cleanup": True},
    {"type": "WordPiece", "prefix": "##", "cleanup": False}, {"type": "ByteFallback"},
    {"type": "Fuse"}, {"type": "Strip", "content": "\u2581", "start": 1, "stop": 2},
    {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
    {"type": "BPEDecoder", "suffix": "</w>"},
    {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                      {"type": "ByteFallback"}, {"type": "Fuse"},
                                      {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
]
TOKEN_LISTS = [
    ["\u2581Hello", "\u2581wor", "ld", "<0x21>", "<0xE2>", "<0x82>", "<0xAC>", "<0xFF>", "##s"],
    ["Hel", "##lo", "do", "n't", ",", "world", "!", "'s", "\u0120it", "\u010a"],
    ["<pad>", "h", "h", "e", "<pad>", "l", "l", "|", "o", "</w>", "end</w>"],
    ["<0x+F>", "<0xe9>", "<0x41>", "\u2581\u2581x\u2581\u2581", "\u00e2\u0124\u00a2"], ["single"],
]


@pytest.mark.parametrize("spec", DECODERS, ids=lambda s: s["type"])
def test_decoder_text(spec):
    ours, ref = _pair(_tokenizer_json(decoder=spec))
    for tokens in TOKEN_LISTS:
        assert "".join(ours.decoder.decode_chain(list(tokens))) == ref.decoder.decode(tokens), tokens


def _added(content, **flags):
    token = {"id": 0, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False}
    token.update(flags)
    return token


ADDED = [
    [_added("<mask>", lstrip=True, special=True)], [_added("<mask>", rstrip=True)],
    [_added("the", single_word=True)], [_added("The", normalized=True)],
    [_added("<x>", special=True), _added("<x><y>", special=True), _added("y>")],
    [_added("\u2581hello", normalized=True), _added("world")],
]
ADDED_TEXTS = ["The <mask> is  <mask>  there", "then the theme, the.", "THE the The",
               "a<x><y>b<x>y> <x><y", "hello world helloworld", "", "   <mask>"]


@pytest.mark.parametrize("added", ADDED, ids=lambda a: a[0]["content"])
def test_added_tokens(added):
    normalizer = {"type": "Sequence", "normalizers": [{"type": "Lowercase"},
                                                      {"type": "Prepend", "prepend": "\u2581"}]}
    ours, ref = _pair(_tokenizer_json(added_tokens=added, normalizer=normalizer,
                                      pre_tokenizer={"type": "WhitespaceSplit"}))
    for text in ADDED_TEXTS:
        got, want = ours.encode(text), ref.encode(text)
        assert (got.ids, got.tokens, got.offsets, got.word_ids) == \
               (want.ids, want.tokens, want.offsets, want.word_ids), text
        assert ours.decode(got.ids) == ref.decode(want.ids)
        assert ours.decode(got.ids, False) == ref.decode(want.ids, False)


_TRUNCATIONS = [{"direction": "Right", "max_length": 8, "strategy": "LongestFirst", "stride": 0},
                {"direction": "Left", "max_length": 7, "strategy": "LongestFirst", "stride": 1},
                {"direction": "Right", "max_length": 9, "strategy": "OnlyFirst", "stride": 0}]
_PADDINGS = [None, {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                    "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
             {"strategy": {"Fixed": 12}, "direction": "Left", "pad_to_multiple_of": 5, "pad_id": 0,
              "pad_type_id": 1, "pad_token": "[PAD]"}]


@pytest.mark.parametrize("truncation", _TRUNCATIONS, ids=lambda t: t["strategy"] + t["direction"])
@pytest.mark.parametrize("padding", _PADDINGS, ids=lambda p: "none" if p is None else str(p["strategy"]))
def test_stored_truncation_and_padding(truncation, padding):
    from hf_data import INTEROP_DIR
    data = json.loads((INTEROP_DIR / "bert_base_uncased.tokenizer.json").read_text(encoding="utf-8"))
    ours, ref = _pair(json.dumps(dict(data, truncation=truncation, padding=padding)))
    texts = ["Hello there, how are you doing today my friend?", "short", "", "a b c d e f g h i j k"]
    for first in texts:
        for second in (None, "And the second one is rather long too"):
            for add in (True, False):
                try:
                    want = ref.encode(first, second, add_special_tokens=add)
                except Exception:  # e.g. OnlyFirst and a first text too short to cut
                    with pytest.raises(EncodeError):
                        ours.encode(first, second, add_special_tokens=add)
                    continue
                got = ours.encode(first, second, add_special_tokens=add)
                assert (got.ids, got.tokens, got.offsets, got.type_ids, got.attention_mask,
                        got.special_tokens_mask, got.word_ids) == \
                       (want.ids, want.tokens, want.offsets, want.type_ids, want.attention_mask,
                        want.special_tokens_mask, want.word_ids)
    assert [e.ids for e in ours.encode_batch(texts)] == [e.ids for e in ref.encode_batch(texts)]


@pytest.mark.parametrize("name", ["llama2_chat", "gpt2", "olmo2_dolma2_cl100k", "kogpt2_base_v2"])
def test_cut_words_merge_as_whole_words(name):
    """Cutting words at safe places (MergeBPE._cutter, _inner_parts)
    gives what merging the whole word gives."""
    import pickle

    from hf_data import INTEROP_DIR, corpus_lines
    tokenizer = Tokenizer.from_file(INTEROP_DIR / ("%s.tokenizer.json" % name))
    model = tokenizer.model
    whole = pickle.loads(pickle.dumps(model))
    whole._cuttable, whole._cutter = False, None
    words = set()
    for line in corpus_lines(25, seed=21):
        for piece, token_id in tokenizer.added.extract(line, tokenizer.normalizer, track=False):
            if token_id is None:
                pre = tokenizer.pre_tokenizer
                words.update(pre.split(piece.text) if pre is not None else [piece.text])
    assert model._cuttable and words
    for word in sorted(words):
        assert model.encode_word(word) == whole.encode_word(word), word
