"""Normalization steps on bytes, for models whose rules are not all text.

SentencePiece normalizes bytes. Its charsmap keys and targets and its
user-defined symbols are byte strings, and a model that sentencepiece
loads may hold ones that are not UTF-8 text (a corrupt or hostile model):
a key that ends inside a character, a target that is not UTF-8, a
user-defined piece cut in the middle of a character. Such a rule can
match part of a character of the input, or put bytes into the normalized
text that are no character at all, neither of which the ``str`` steps of
:class:`~subtok.normalizers.sentencepiece.Normalizer` can express.

For those models (and only those: see :func:`needs_bytes` and
``CharsMap.regular``) every step is taken here, on the input's bytes,
exactly as sentencepiece 0.2.3's ``Normalizer::NormalizePrefix`` takes
it; the Normalizer joins the steps with its usual whole-sentence
algorithm. The normalized bytes go on as ``str`` decoded with
``surrogateescape`` (an undecodable byte becomes one lone surrogate), so
nothing is lost on the way to the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

#: sentencepiece's PrefixMatcher looks at the first (shortest) this many
#: user-defined symbols that match at a position (kResultSize).
USER_MATCHES = 64

_REPLACEMENT = "\ufffd".encode("utf-8")


def needs_bytes(user_defined: Iterable[str]) -> bool:
    """True if the user-defined symbols can only be matched on bytes: one
    is not UTF-8 (it holds a lone surrogate, see the module docstring), or
    more than USER_MATCHES of them are prefixes of one text, where
    sentencepiece ignores the longer ones."""
    symbols = set(user_defined)
    if any(_undecodable(symbol) for symbol in symbols):
        return True
    if len(symbols) <= USER_MATCHES:
        return False
    return any(sum(symbol[:end] in symbols for end in range(1, len(symbol) + 1)) > USER_MATCHES
               for symbol in symbols)


def _undecodable(text: str) -> bool:
    """True if ``text`` holds a lone surrogate (an undecodable byte)."""
    return any("\ud800" <= char <= "\udfff" for char in text)


def _char_length(lead: int) -> int:
    """The length sentencepiece's DecodeUTF8 tries for a lead byte (0 for
    a byte that starts no character)."""
    if lead < 0x80:
        return 1
    if 0xC0 <= lead < 0xE0:
        return 2
    if 0xE0 <= lead < 0xF0:
        return 3
    if 0xF0 <= lead < 0xF8:
        return 4
    return 0


_TRIED_LENGTH = [_char_length(lead) for lead in range(256)]


class ByteSteps:
    """``Normalizer::NormalizePrefix`` on bytes: the longest user-defined
    symbol, else the longest charsmap rule, else one character, else
    (an invalid byte) U+FFFD for one byte."""

    def __init__(self, rules, user_defined: Iterable[str]) -> None:
        self.rules = rules
        self.user_defined = frozenset(s.encode("utf-8", "surrogateescape") for s in user_defined)
        self.max_user = max(map(len, self.user_defined), default=0)

    def steps(self, data: bytes) -> Iterator[tuple[bytes, int]]:
        """Every step over ``data``: (output, bytes consumed)."""
        i, n = 0, len(data)
        while i < n:
            output, length = self.step(data, i)
            yield output, length
            i += length

    def step(self, data: bytes, i: int) -> tuple[bytes, int]:
        """One step at byte ``i``."""
        if self.max_user:
            length = self.user_match(data, i)
            if length:
                return data[i:i + length], length
        match = self.rules.match_bytes(data, i)
        if match is not None:
            return match
        length = _TRIED_LENGTH[data[i]]
        if length == 1:
            return data[i:i + 1], 1
        char = data[i:i + length]
        if length and len(char) == length and _decodes(char):
            return char, length
        return _REPLACEMENT, 1

    def user_match(self, data: bytes, i: int) -> int:
        """Length of the longest user-defined symbol at ``i`` among the
        first USER_MATCHES that match (0 if none), as PrefixMatcher."""
        symbols = self.user_defined
        found = matches = 0
        for end in range(i + 1, min(len(data), i + self.max_user) + 1):
            if data[i:end] in symbols:
                found = end - i
                matches += 1
                if matches == USER_MATCHES:
                    break
        return found


def _decodes(char: bytes) -> bool:
    try:
        char.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def char_offsets(normalized: bytes, offsets: list[int], text: str) -> tuple[str, list[int]]:
    """Byte-path results in the Normalizer's units: the normalized text as
    str, and for each of its characters (and the end) the index in
    ``text`` of the character it came from.

    A rule on bytes can consume part of a character; its offset is then
    that character's (the byte offset itself is not expressible here).
    """
    if not offsets:
        return "", [0]
    byte_to_char = []
    for index, char in enumerate(text):
        byte_to_char.extend([index] * _byte_length(char))
    byte_to_char.append(len(text))
    decoded = normalized.decode("utf-8", "surrogateescape")
    out = []
    position = 0
    for char in decoded:
        out.append(byte_to_char[offsets[position]])
        position += _byte_length(char)
    out.append(byte_to_char[offsets[position]])
    return decoded, out


def _byte_length(char: str) -> int:
    """UTF-8 length of one character (one byte for a lone surrogate)."""
    return 1 if "\ud800" <= char <= "\udfff" else len(char.encode("utf-8"))
