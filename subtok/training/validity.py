"""Which strings may become pieces: sentencepiece's ``IsValidSentencePiece``.

A candidate piece is valid iff (sentencepiece's ``TrainerInterface::IsValidSentencePiece``):

* it has 1 .. ``max_sentencepiece_length`` code points;
* it contains no U+2585 (the unknown/boundary mark), NUL, TAB, space, or
  surrogate;
* "▁" sits where the whitespace mode allows it (prefix mode: only first when
  splitting by whitespace, otherwise anywhere but last; suffix mode mirrors
  that), unless ``allow_whitespace_only_pieces`` and the piece is all "▁";
* with ``split_digits`` a digit only stands alone; with
  ``split_by_unicode_script`` all characters share one script, where
  Hiragana, Katakana and U+30FC count as Han, Inherited marks take the
  previous character's script, "▁" is skipped, and digits are wildcards when
  ``split_by_number`` is off.

Scripts come from the ``regex`` module (``\\p{Script=...}``; Python's
``unicodedata`` has no script property). sentencepiece compiled in the
Unicode 9.0 script table and maps everything it does not list to Common; we
recognise exactly the scripts of Unicode 9.0 and map any newer script (and
unassigned code points) to Common too. Characters added to an old script
after 9.0 are the only ones that may differ. Lookups are cached per
character, so the regex work is paid once per distinct character.
"""

from __future__ import annotations

import regex

from subtok.symbols import SPACE_SYMBOL, UNK_CHAR
from subtok.training.spec import TrainerOptions

#: Every script of Unicode 9.0 (sentencepiece's unicode_script_map.h).
UNICODE_9_SCRIPTS = (
    "Common Latin Greek Cyrillic Armenian Hebrew Arabic Syriac Thaana Devanagari Bengali "
    "Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan Myanmar "
    "Georgian Hangul Ethiopic Cherokee Canadian_Aboriginal Ogham Runic Khmer Mongolian Hiragana "
    "Katakana Bopomofo Han Yi Old_Italic Gothic Deseret Inherited Tagalog Hanunoo Buhid "
    "Tagbanwa Limbu Tai_Le Linear_B Ugaritic Shavian Osmanya Cypriot Braille Buginese Coptic "
    "New_Tai_Lue Glagolitic Tifinagh Syloti_Nagri Old_Persian Kharoshthi Balinese Cuneiform "
    "Phoenician Phags_Pa Nko Sundanese Lepcha Ol_Chiki Vai Saurashtra Kayah_Li Rejang Lycian "
    "Carian Lydian Cham Tai_Tham Tai_Viet Avestan Egyptian_Hieroglyphs Samaritan Lisu Bamum "
    "Javanese Meetei_Mayek Imperial_Aramaic Old_South_Arabian Inscriptional_Parthian "
    "Inscriptional_Pahlavi Old_Turkic Kaithi Batak Brahmi Mandaic Chakma Meroitic_Cursive "
    "Meroitic_Hieroglyphs Miao Sharada Sora_Sompeng Takri Caucasian_Albanian Bassa_Vah Duployan "
    "Elbasan Grantha Pahawh_Hmong Khojki Linear_A Mahajani Manichaean Mende_Kikakui Modi Mro "
    "Old_North_Arabian Nabataean Palmyrene Pau_Cin_Hau Old_Permic Psalter_Pahlavi Siddham "
    "Khudawadi Tirhuta Warang_Citi Ahom Anatolian_Hieroglyphs Hatran Multani Old_Hungarian "
    "SignWriting Adlam Bhaiksuki Marchen Newa Osage Tangut"
).split()

_SCRIPT_RE = regex.compile("|".join("(?P<%s>\\p{Script=%s})" % (name, name)
                                    for name in UNICODE_9_SCRIPTS))
_SCRIPT_IDS = {name: i for i, name in enumerate(UNICODE_9_SCRIPTS)}
COMMON = _SCRIPT_IDS["Common"]
HAN = _SCRIPT_IDS["Han"]
INHERITED = _SCRIPT_IDS["Inherited"]
_KANA = (_SCRIPT_IDS["Hiragana"], _SCRIPT_IDS["Katakana"])
ANY = -1

_script_cache: dict[str, int] = {}


def script_of(char: str) -> int:
    """sentencepiece's script id of ``char`` (Hiragana/Katakana/U+30FC -> Han)."""
    sid = _script_cache.get(char)
    if sid is None:
        match = _SCRIPT_RE.match(char)
        sid = COMMON if match is None else _SCRIPT_IDS[match.lastgroup]
        if sid in _KANA or char == "\u30fc":
            sid = HAN
        _script_cache[char] = sid
    return sid


def is_digit(char: str) -> bool:
    return "0" <= char <= "9" or "\uff10" <= char <= "\uff19"


_FORBIDDEN = frozenset((UNK_CHAR, "\x00", "\t", " "))


class PieceValidator:
    """``is_valid(piece)`` for one set of trainer options."""

    def __init__(self, options: TrainerOptions) -> None:
        self.max_length = options.max_sentencepiece_length
        self.suffix = options.treat_whitespace_as_suffix
        self.split_ws = options.split_by_whitespace
        self.allow_ws_only = options.allow_whitespace_only_pieces
        self.split_number = options.split_by_number
        self.split_digits = options.split_digits
        self.split_script = options.split_by_unicode_script

    def is_valid(self, piece: str) -> bool:
        n = len(piece)
        if n == 0 or n > self.max_length:
            return False
        # Most candidates are ASCII letters, perhaps with "▁" where every
        # mode allows it (first in prefix mode, last in suffix mode): one
        # script (Latin), no digit, nothing forbidden, so valid without
        # the walk below.
        if self.suffix:
            body = piece[:-1] if piece[-1] == SPACE_SYMBOL else piece
        else:
            body = piece[1:] if piece[0] == SPACE_SYMBOL else piece
        if body.isascii() and body.isalpha():
            return True
        all_ws = self.allow_ws_only and piece.count(SPACE_SYMBOL) == n
        prev = ANY
        last = n - 1
        for pos, char in enumerate(piece):
            if char in _FORBIDDEN or "\ud800" <= char <= "\udfff":
                return False
            if char == SPACE_SYMBOL:
                if all_ws:
                    continue
                if self.suffix:
                    if self.split_ws:
                        if pos < last:
                            return False
                    elif pos == 0 and pos < last:
                        return False
                else:
                    if self.split_ws:
                        if pos > 0:
                            return False
                    elif pos > 0 and pos == last:
                        return False
                continue
            script = script_of(char)
            if script == INHERITED:
                script = prev
            digit = is_digit(char)
            if digit:
                if not self.split_number:
                    script = ANY
                if self.split_digits and n > 1:
                    return False
            if self.split_script and prev != ANY and script != ANY and prev != script:
                return False
            prev = script
        return True

    __call__ = is_valid


__all__ = ["PieceValidator", "script_of", "is_digit"]
