"""BERT's normalizer (``tokenizers/src/normalizers/bert.rs``): clean the
text, space out Chinese characters, strip accents, lowercase, in that
order, each optional."""

from __future__ import annotations

import regex

from subtok.formats.json_fields import field
from subtok.normalizers.aligned import AlignedString, TextNormalizer
from subtok.normalizers.old_unicode import bert_control_8, nonspacing_mark_8
from subtok.normalizers.text_rules import Lowercase
from subtok.normalizers.unicode_forms import NFD

#: Rust's ``char::is_whitespace``: the Unicode White_Space characters.
_WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
                + "\u2028\u2029\u202f\u205f\u3000")
_TO_SPACE = str.maketrans(_WHITE_SPACE, " " * len(_WHITE_SPACE))
#: The CJK blocks ``is_chinese_char`` names.
_CHINESE = regex.compile("[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f"
                         "\U0002b740-\U0002b81f\U0002b920-\U0002ceaf\uf900-\ufaff"
                         "\U0002f800-\U0002fa1f]")


class BertNormalizer(TextNormalizer):
    """``strip_accents`` None means: strip them when lowercasing."""

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True,
                 strip_accents: bool | None = None, lowercase: bool = True) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.lowercase = lowercase

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> BertNormalizer:
        return cls(field(spec, "clean_text", bool, where),
                   field(spec, "handle_chinese_chars", bool, where),
                   field(spec, "strip_accents", bool, where, None),
                   field(spec, "lowercase", bool, where))

    def normalize_aligned(self, text: AlignedString) -> None:
        if self.clean_text:
            text.remove(bert_control_8())
            value = text.text
            if not value.isascii() or not value.isprintable():  # may hold spaces other than " "
                text.set_text(value.translate(_TO_SPACE))
        if self.handle_chinese_chars and _CHINESE.search(text.text):
            text.expand([" %s " % c if _CHINESE.match(c) else c for c in text.text])
        if self.strip_accents:
            NFD().normalize_aligned(text)
            text.remove(nonspacing_mark_8())
        if self.lowercase:
            Lowercase().normalize_aligned(text)
