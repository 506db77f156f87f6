"""Small ``tokenizer.json`` decoders: ByteFallback, Fuse, Strip, BPEDecoder,
WordPiece and CTC (``tokenizers/src/decoders/*.rs``). Each maps the list of
token strings to another list; the Tokenizer joins the last one."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import regex

from subtok.formats.json_fields import char_field, count_field, field

#: "<0xNN>": what ``u8::from_str_radix`` accepts in two characters
#: (two hex digits, or "+" and one).
_BYTE_TOKEN = regex.compile(r"<0x(\+[0-9A-Fa-f]|[0-9A-Fa-f]{2})>")


class ByteFallback:
    """Runs of "<0xNN>" tokens become the text of their bytes, or one
    U+FFFD per byte when the bytes are not valid UTF-8."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> ByteFallback:
        return cls()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        for token in tokens:
            found = _BYTE_TOKEN.fullmatch(token)
            if found is not None:
                pending.append(int(found.group(1), 16))
                continue
            _flush(pending, out)
            out.append(token)
        _flush(pending, out)
        return out


def _flush(pending: bytearray, out: list[str]) -> None:
    if not pending:
        return
    try:
        out.append(pending.decode("utf-8"))
    except UnicodeDecodeError:
        out.extend("\ufffd" * len(pending))
    pending.clear()


class Fuse:
    """All tokens as one string."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Fuse:
        return cls()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


@dataclass
class Strip:
    """Removes up to ``start`` leading and ``stop`` trailing ``content``
    characters from every token."""

    content: str
    start: int
    stop: int

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Strip:
        return cls(char_field(spec, "content", where), count_field(spec, "start", where),
                   count_field(spec, "stop", where))

    def strip(self, token: str) -> str:
        begin = 0
        while begin < min(self.start, len(token)) and token[begin] == self.content:
            begin += 1
        end = len(token)
        while len(token) - end < self.stop and end > begin and token[end - 1] == self.content:
            end -= 1
        return token[begin:end]

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self.strip(token) for token in tokens]


class BPEDecoder:
    """The end-of-word suffix becomes a space (nothing in the last token)."""

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> BPEDecoder:
        return cls(field(spec, "suffix", str, where))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]


#: ``wordpiece::cleanup``: spaces before punctuation and in contractions.
_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
            (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def cleanup(text: str) -> str:
    for old, new in _CLEANUP:
        text = text.replace(old, new)
    return text


class WordPiece:
    """Tokens after the first lose the prefix ("##") or get a space in
    front; ``cleanup`` then tidies each token."""

    def __init__(self, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix = prefix
        self.cleanup = cleanup

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> WordPiece:
        return cls(field(spec, "prefix", str, where), field(spec, "cleanup", bool, where))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, token in enumerate(tokens):
            if i:
                token = token[len(self.prefix):] if token.startswith(self.prefix) else " " + token
            out.append(cleanup(token) if self.cleanup else token)
        return out


class CTC:
    """Repeated tokens once, the pad token dropped, the word delimiter as a
    space (with ``cleanup``), empty results dropped."""

    def __init__(self, pad_token: str = "<pad>", word_delimiter_token: str = "|",
                 cleanup: bool = True) -> None:
        self.pad_token = pad_token
        self.word_delimiter_token = word_delimiter_token
        self.cleanup = cleanup

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> CTC:
        return cls(field(spec, "pad_token", str, where),
                   field(spec, "word_delimiter_token", str, where),
                   field(spec, "cleanup", bool, where))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for token, _ in itertools.groupby(tokens):
            token = token.replace(self.pad_token, "")
            if self.cleanup:
                token = cleanup(token).replace(self.word_delimiter_token, " ")
            if token:
                out.append(token)
        return out
