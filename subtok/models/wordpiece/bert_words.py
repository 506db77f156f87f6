"""BERT's text pipeline as the WordPiece trainer sees it: normalize, split into
words, count.

The trained ``tokenizer.json`` names ``BertNormalizer`` and
``BertPreTokenizer``; training has to see exactly the words they make, so
this module reproduces them (``tokenizers/src/normalizers/bert.rs``,
``BertNormalizer::normalize``; ``tokenizers/src/pre_tokenizers/bert.rs``,
``BertPreTokenizer::pre_tokenize``):

1. ``clean_text``: drop NUL, U+FFFD and every control/format/private-use
   character except TAB, LF, CR; then every whitespace character becomes a
   space;
2. ``handle_chinese_chars``: a space on both sides of every CJK ideograph;
3. ``strip_accents`` (default: follow ``lowercase``): NFD, then drop the
   non-spacing marks;
4. ``lowercase``: per character (no final-sigma rule, unlike ``str.lower``);
5. split on whitespace (dropped) and around every punctuation character
   (ASCII punctuation, or Unicode category P), which is a word of its own.

The character classes are the Unicode 9.0 ones ``tokenizers`` uses
(:mod:`subtok.models.wordpiece.bert_tables`); "whitespace" is Rust's
``char::is_whitespace`` (the White_Space property).

Speed: every step above acts on one character at a time and none crosses
whitespace, so a line's words are the words of its whitespace-separated
tokens. :class:`WordCounter` therefore counts the raw tokens first (one
``str.split`` over a whole chunk of lines) and runs the pipeline once per
*distinct* token.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from subtok.models.wordpiece.bert_tables import MARK_NONSPACING, OTHER, PUNCTUATION

#: Rust's ``char::is_whitespace``: the White_Space property.
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
#: ``is_chinese_char`` of bert.rs: the CJK ideograph blocks.
CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
       (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
#: ASCII characters ``is_bert_punc`` counts (Rust's ``is_ascii_punctuation``).
ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def char_class(ranges: Iterable[tuple[int, int]], extra: str = "", without: str = "") -> str:
    """A regex character class (without brackets) of code point ranges, plus
    the characters ``extra``, minus the characters ``without``."""
    points: set[int] = set()
    for first, last in ranges:
        points.update(range(first, last + 1))
    points.update(map(ord, extra))
    points.difference_update(map(ord, without))
    parts = []
    run_start = prev = None
    for point in sorted(points) + [None]:
        if run_start is not None and point == prev + 1:
            prev = point
            continue
        if run_start is not None:
            parts.append("\\U%08x" % run_start if run_start == prev
                         else "\\U%08x-\\U%08x" % (run_start, prev))
        run_start = prev = point
    return "".join(parts)


#: Characters whose canonical decomposition Unicode added after the tables
#: of ``tokenizers``' NFD (the ``unicode-normalization-alignments`` crate):
#: there they stay whole. U+11938 DIVES AKURU VOWEL SIGN O (Unicode 13).
NFD_UNKNOWN = "\U00011938"


def nfd(text: str) -> str:
    """NFD as ``tokenizers`` computes it (see :data:`NFD_UNKNOWN`)."""
    if NFD_UNKNOWN not in text:
        return unicodedata.normalize("NFD", text)
    return NFD_UNKNOWN.join(unicodedata.normalize("NFD", part) for part in text.split(NFD_UNKNOWN))


class BertNormalizer:
    """``BertNormalizer`` of ``tokenizers`` (see the module docstring)."""

    def __init__(self, *, clean_text: bool = True, handle_chinese_chars: bool = True,
                 strip_accents: bool | None = None, lowercase: bool = True) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.lowercase = lowercase
        self._removed = re.compile("[%s]" % char_class(OTHER, "\x00\ufffd", "\t\n\r"))
        self._spaces = {ord(c): " " for c in WHITE_SPACE if c != " "}
        self._cjk = re.compile("([%s])" % char_class(CJK))
        self._marks = re.compile("[%s]" % char_class(MARK_NONSPACING))

    def normalize(self, text: str) -> str:
        """Raw text -> the text BertPreTokenizer splits."""
        if self.clean_text:
            if self._removed.search(text):
                text = self._removed.sub("", text)
            text = text.translate(self._spaces)
        if text.isascii():
            return text.lower() if self.lowercase else text
        if self.handle_chinese_chars:
            text = self._cjk.sub(r" \1 ", text)
        if self.strip_accents:
            text = self._marks.sub("", nfd(text))
        if self.lowercase:
            # Rust lowercases character by character: a capital sigma is
            # always "σ", never the final "ς" that str.lower picks.
            text = text.replace("\u03a3", "\u03c3").lower()
        return text


class BertPreTokenizer:
    """``BertPreTokenizer``: whitespace separates, punctuation stands alone."""

    def __init__(self) -> None:
        punctuation = char_class(PUNCTUATION, ASCII_PUNCTUATION)
        space = char_class((), WHITE_SPACE)
        self._words = re.compile("[^%s%s]+|[%s]" % (space, punctuation, punctuation)).findall

    def split(self, normalized: str) -> list[str]:
        """The words of normalized text (whitespace dropped, punctuation alone)."""
        return self._words(normalized)


class WordCounter:
    """Counts the words BERT's pipeline makes of lines of raw text."""

    def __init__(self, normalizer: BertNormalizer) -> None:
        self.normalizer = normalizer
        self.pre_tokenizer = BertPreTokenizer()
        # Raw tokens are cut where the normalized text has whitespace: at
        # White_Space characters that clean_text does not delete (it deletes
        # the control characters VT, FF and NEL).
        separators = WHITE_SPACE
        if normalizer.clean_text:
            separators = "".join(c for c in WHITE_SPACE if c not in "\x0b\x0c\x85")
        self._tokens = re.compile("[^%s]+" % char_class((), separators)).findall
        # str.split() cuts at exactly these separators plus the characters
        # below; where none occurs, the fast C split is the same.
        odd = "\x1c\x1d\x1e\x1f" + ("\x0b\x0c\x85" if normalizer.clean_text else "")
        self._odd = re.compile("[%s]" % re.escape(odd)).search

    def raw_tokens(self, lines: list[tuple[str, int]]) -> Counter:
        """Whitespace-separated tokens of ``(line, count)`` pairs, counted."""
        tokens: Counter = Counter()
        plain = [text for text, freq in lines if freq == 1]
        joined = "\n".join(plain)
        if not self._odd(joined):
            tokens.update(joined.split())
        else:
            for text in plain:
                tokens.update(self._tokens(text))
        for text, freq in lines:
            if freq != 1:
                for token in self._tokens(text):
                    tokens[token] += freq
        return tokens

    def words(self, tokens: Counter) -> Counter:
        """The words of distinct raw tokens, with the tokens' counts summed."""
        normalize = self.normalizer.normalize
        split = self.pre_tokenizer.split
        lower = self.normalizer.lowercase
        out: Counter = Counter()
        for token, count in tokens.items():
            if token.isascii() and token.isalnum():
                # Most tokens: one word, which normalization only lowercases.
                out[token.lower() if lower else token] += count
                continue
            for word in split(normalize(token)):
                out[word] += count
        return out

    def count(self, lines: list[tuple[str, int]]) -> Counter:
        """Words of ``(line, count)`` pairs, counted."""
        return self.words(self.raw_tokens(lines))


__all__ = ["BertNormalizer", "BertPreTokenizer", "WordCounter", "WHITE_SPACE", "char_class"]
