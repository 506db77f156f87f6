"""Segmenting normalized text that is not UTF-8, as sentencepiece does.

Normalized text is UTF-8 unless the model's charsmap or user-defined
symbols are not (a corrupt or hostile model that sentencepiece loads; see
:mod:`subtok.normalizers.bytewise`). Such text reaches the models as str
with each undecodable byte a lone surrogate (``surrogateescape``).

SentencePiece segments bytes. Its *character* is ``OneCharLen`` bytes
from the first one, valid or not: 1 for a byte below 0xC0, else 2, 3 or 4
by the lead byte (``string_util::OneCharLen``); the BPE and char models
start from user-defined symbols matched on bytes. The models of subtok
segment code points. For UTF-8 text the two agree, and a lone
continuation byte (0x80..0xBF) is one character and one lone surrogate
either way. They part only where a byte 0xC0..0xFF starts no valid
character, which sentencepiece takes together with the bytes after it,
or where a user-defined symbol ends inside a character. There
:class:`BytewiseSegmenter` segments the text's bytes, reusing each
model's own algorithm over sentencepiece's characters.

Sampling and n-best keep to code points (their randomness is not
reproduced across implementations anyway); offsets of pieces that split
a character are the character's.
"""

from __future__ import annotations

import re

from subtok.models.base import Model
from subtok.models.unigram.lattice import encode_optimized
from subtok.models.unigram.model import UnigramModel
from subtok.models.unigram.trie import piece_lookup
from subtok.normalizers.bytewise import USER_MATCHES, needs_bytes
from subtok.normalizers.sentencepiece import SPACE_SYMBOL

#: A lone surrogate standing for a byte 0xC0..0xFF: there, sentencepiece's
#: characters are not code points.
_LEAD_BYTE = re.compile("[\udcc0-\udcff]").search

_SPACE = SPACE_SYMBOL.encode("utf-8")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _raw(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def one_char_len(lead: int) -> int:
    """sentencepiece's ``string_util::OneCharLen``."""
    return (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)[lead >> 4]


def characters(data: bytes) -> list[bytes]:
    """``data`` cut into sentencepiece's characters (the last one may be
    short, as sentencepiece takes ``min(OneCharLen, bytes left)``)."""
    out = []
    i, n = 0, len(data)
    while i < n:
        step = one_char_len(data[i])
        out.append(data[i:i + step])
        i += step
    return out


class _ByteKeys:
    """A run of characters seen as one string per slice: the latin-1
    decoding of its bytes, a string with one character per byte, so that
    a piece's byte prefixes are its string prefixes (see _BytesUnigram)."""

    def __init__(self, chars: list[bytes]) -> None:
        self.chars = chars

    def __len__(self) -> int:
        return len(self.chars)

    def __getitem__(self, index: slice) -> str:
        return b"".join(self.chars[index]).decode("latin-1")


class _BytesUnigram(UnigramModel):
    """The unigram model with its pieces keyed by their bytes (read as
    latin-1): its Viterbi (sentencepiece's) then runs over characters
    that are byte strings, and a piece ending inside one is never offered,
    which is what becomes of it in sentencepiece (no path goes on from
    there)."""

    def __init__(self, model: UnigramModel) -> None:  # pylint: disable=super-init-not-called
        self.__dict__.update(model.__dict__)  # the same model, other keys
        self.byte_lookup = piece_lookup({_raw(piece).decode("latin-1"): entry
                                         for piece, entry in model.table.items()})

    @property
    def lookup(self):
        return self.byte_lookup


class BytewiseSegmenter:
    """Sentencepiece's segmentation of text whose characters are not its
    code points (see the module docstring); built only for models whose
    normalizer works on bytes."""

    def __init__(self, model: Model, model_type: str) -> None:
        """``model_type``: the model file's type ("unigram", "bpe", "word"
        or "char"), whose segmentation this reproduces on bytes."""
        self.model = model
        self.kind = model_type
        symbols = model.vocab.user_defined()
        #: BPE and char models match user-defined symbols on the
        #: normalized bytes, which only bytes can do for these symbols.
        self.always = model_type in ("bpe", "char") and needs_bytes(symbols)
        self.user_defined = frozenset(map(_raw, symbols))
        self.max_user = max(map(len, self.user_defined), default=0)
        self._unigram: _BytesUnigram | None = None
        self._bpe_tables: tuple[dict, frozenset] | None = None

    def applies(self, normalized: str) -> bool:
        """True if ``normalized`` must be segmented here, not by the model."""
        return self.always or _LEAD_BYTE(normalized) is not None

    def encode(self, normalized: str) -> list[tuple[str, int]]:
        """The model's ``(piece, id)`` pairs for ``normalized``."""
        data = _raw(normalized)
        kind = self.kind
        if kind == "unigram":
            return self._unigram_pairs(data)
        if kind == "word":
            return [self.model.pair(_text(word)) for word in words(data)]
        symbols = self.initial_symbols(data)
        if kind == "char":
            return [self.model.pair(_text(symbol)) for symbol, _ in symbols]
        ranks, unused = self._bpe_keys()
        merged = self.model.merge_symbols(symbols, ranks, unused)
        return self.model.output(*merged, _decoded_pair(self.model))

    def initial_symbols(self, data: bytes) -> list[tuple[bytes, bool]]:
        """sentencepiece's ``PrefixMatcher`` split: at each place the longest
        user-defined symbol (of the first USER_MATCHES matching, frozen),
        else one character."""
        out = []
        i, n = 0, len(data)
        users, longest = self.user_defined, self.max_user
        while i < n:
            found = matches = 0
            for end in range(i + 1, min(n, i + longest) + 1):
                if data[i:end] in users:
                    found = end - i
                    matches += 1
                    if matches == USER_MATCHES:
                        break
            step = found or min(one_char_len(data[i]), n - i)
            out.append((data[i:i + step], bool(found)))
            i += step
        return out

    def _unigram_pairs(self, data: bytes) -> list[tuple[str, int]]:
        if self._unigram is None:
            self._unigram = _BytesUnigram(self.model)  # type: ignore[arg-type]
        chars = characters(data)
        path, _ = encode_optimized(self._unigram, _ByteKeys(chars))
        return [(_text(b"".join(chars[begin:begin + length])), piece_id)
                for begin, length, piece_id, _ in path]

    def _bpe_keys(self) -> tuple[dict, frozenset]:
        """The BPE model's merge ranks and UNUSED pieces keyed by bytes."""
        if self._bpe_tables is None:
            model = self.model
            self._bpe_tables = ({_raw(piece): rank for piece, rank in model.ranks.items()},
                                frozenset(map(_raw, model.unused)))
        return self._bpe_tables


def words(data: bytes) -> list[bytes]:
    """sentencepiece's ``SplitIntoWords`` as the word model calls it: a
    word starts at the beginning and at every character that is "▁"."""
    out: list[bytes] = []
    start, i, n = 0, 0, len(data)
    while i < n:
        step = min(one_char_len(data[i]), n - i)
        if i > start and data[i:i + step] == _SPACE:
            out.append(data[start:i])
            start = i
        i += step
    if n:
        out.append(data[start:])
    return out


def _decoded_pair(model: Model):
    """:meth:`Model.pair` for a symbol given as bytes."""
    def pair(symbol: bytes, keep_unused: bool = False) -> tuple[str, int]:
        return model.pair(_text(symbol), keep_unused)
    return pair
