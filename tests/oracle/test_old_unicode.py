"""The Unicode 8.0 / 9.0 character classes of tokenizers' BERT and
StripAccents normalizers and of BertPreTokenizer, checked code point by
code point against tokenizers 0.23.3 (subtok.normalizers.old_unicode).

Characters whose category changed since those versions are where
"current property, restricted to what was then assigned" goes wrong; the
only differences allowed are characters this Python's Unicode database
does not know (category Cn), which tokenizers' Rust may case differently.
"""

from __future__ import annotations

import unicodedata

from tokenizers import normalizers, pre_tokenizers

from subtok.normalizers.bert import BertNormalizer
from subtok.normalizers.text_rules import StripAccents
from subtok.pretokenizers.splitters import BertPreTokenizer

EVERY_CODE_POINT = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def differing(ours, theirs) -> list[str]:
    """Code points (each alone between two letters) that ``ours`` and
    ``theirs`` turn into different text; blocks of 256 first, for speed."""
    out = []
    for start in range(0, len(EVERY_CODE_POINT), 256):
        block = EVERY_CODE_POINT[start:start + 256]
        text = "a" + "b".join(block) + "c"
        if ours(text) != theirs(text):
            out += [c for c in block if ours("a" + c + "b") != theirs("a" + c + "b")]
    return ["U+%04X" % ord(c) for c in out if unicodedata.category(c) != "Cn"]


def test_bert_normalizer_cleaning_and_accents():
    for settings in (dict(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                          lowercase=False),
                     dict(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                          lowercase=False)):
        ours, ref = BertNormalizer(**settings), normalizers.BertNormalizer(**settings)
        assert differing(ours.normalize, ref.normalize_str) == [], settings


def test_strip_accents():
    assert differing(StripAccents().normalize, normalizers.StripAccents().normalize_str) == []


def test_bert_pre_tokenizer_punctuation():
    ref = pre_tokenizers.BertPreTokenizer()
    ours = BertPreTokenizer()
    assert differing(lambda t: ours.split(t),
                     lambda t: [piece for piece, _ in ref.pre_tokenize_str(t)]) == []
