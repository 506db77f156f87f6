"""Stage 3 of the pipeline: the model interface, and the base of
SentencePiece's models.

A model turns a *normalized* string into ``(piece, id)`` pairs that cover it
exactly. Post-processing (byte fallback, merging unknown runs, bos/eos) is
the post-processor's job, not the model's.

A model declares what it can do with class attributes
(:attr:`Model.supports_sampling`, ...); callers ask those, never the
model's name. A new family (WordPiece, byte-level BPE, models read from a
``tokenizer.json``) is a new class with :meth:`TokenModel.encode`,
assembled with its own normalizer, pre-tokenizer, post-processor and
decoder; nothing here or on the SentencePiece path changes for it.

SentencePiece's models (:class:`Model` and its subclasses in
``models/<type>/model.py``) segment word by word, with a cache: their
pre-tokenizer (:mod:`subtok.pretokenizers.sentencepiece`) cuts only where
no piece can span, so segmenting the words one by one gives exactly the
result of segmenting the sentence (unigram adds float32 subtleties, see
there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from subtok.pretokenizers.sentencepiece import PieceBoundaries
from subtok.vocab import PieceType, Vocabulary


#: Words and parts a model keeps before its cache starts over.
MAX_CACHED = 300_000


@dataclass(slots=True)
class WordEncoding:
    """The segmentation of one word, as the model computed it alone.

    ``robustness`` and ``magnitude`` matter only for float-sensitive models
    (unigram, see there); exact models leave them at +inf and 0. Not
    frozen: a frozen dataclass sets each field through a call, and one is
    made for every new part. (Not hashable either; nothing hashes it.)
    """

    pieces: tuple[tuple[str, int], ...]
    robustness: float = float("inf")
    magnitude: float = 0.0


@runtime_checkable
class TokenModel(Protocol):
    """What every model offers: a vocabulary, its capabilities, ``encode``."""

    supports_sampling: bool
    supports_nbest: bool

    def encode(self, normalized: str) -> list[tuple[str, int]]:
        ...


class Model:
    """Base of SentencePiece's models: a vocabulary, a pre-tokenizer that
    cuts words no piece spans, and ``encode`` with a per-word cache."""

    #: ``sample(...)``: subword regularization (unigram sampling, BPE-dropout).
    supports_sampling = False
    #: ``nbest(...)`` and ``lattice(...)``: n-best, sampling scores, entropy.
    supports_nbest = False
    #: ``set_vocabulary`` applies (sentencepiece: "only in subword units").
    supports_vocabulary_restriction = False
    #: True if encoding each word alone always equals encoding the whole.
    exact_per_word = True

    def __init__(self, vocab: Vocabulary, *, treat_whitespace_as_suffix: bool = False) -> None:
        self.vocab = vocab
        self.suffix = treat_whitespace_as_suffix
        #: The pre-tokenizer: words, and parts of words, no piece spans.
        self.splitter = self.make_splitter(vocab, treat_whitespace_as_suffix)
        #: ``(piece, id)`` of every id, one tuple shared by every cached
        #: result (an unknown piece carries its own text instead).
        self.pairs = [(piece, index) for index, piece in enumerate(vocab.pieces)]
        self._cache: dict[str, WordEncoding] = {}

    @staticmethod
    def make_splitter(vocab: Vocabulary, suffix: bool):
        """The pre-tokenizer of this model type (see
        :mod:`subtok.pretokenizers.sentencepiece`)."""
        return PieceBoundaries(vocab.normal, suffix=suffix)

    def pair(self, symbol: str, keep_unused: bool = False) -> tuple[str, int]:
        """``(symbol, id)``: a vocabulary piece's shared tuple, or an unknown
        symbol's own. An UNUSED piece is unknown here (sentencepiece 0.2.3's
        char, word and BPE models all make it so) unless ``keep_unused``."""
        unk = self.vocab.unk_index
        piece_id = self.vocab.normal.get(symbol, unk)
        if piece_id == unk or (not keep_unused
                               and self.vocab.types[piece_id] == PieceType.UNUSED):
            return (symbol, unk)
        return self.pairs[piece_id]

    def encode_word(self, word: str, cache: bool = True) -> WordEncoding:
        """Segment one word, with a cache (words repeat a lot).

        A word seen for the first time is first cut at every inner place no
        piece can span (the pre-tokenizer's ``safe_parts``); its parts are looked up in
        the same cache, so "▁said," costs only the new part ",". A caller
        that keeps the result itself passes ``cache=False`` (the parts are
        still cached).
        """
        found = self._cache.get(word)
        if found is None:
            parts = self.splitter.safe_parts(word)
            if len(parts) == 1:
                found = self.encode_part(word)
            else:
                found = self.combine([self.cached_part(part) for part in parts])
            if cache:
                self._remember(word, found)
        return found

    def cached_part(self, part: str) -> WordEncoding:
        """:meth:`encode_part` with the cache, for a part already cut."""
        found = self._cache.get(part)
        if found is None:
            found = self.encode_part(part)
            self._remember(part, found)
        return found

    def _remember(self, key: str, found: WordEncoding) -> None:
        if len(self._cache) > MAX_CACHED:
            self._cache.clear()
        self._cache[key] = found

    def combine(self, encodings: list[WordEncoding]) -> WordEncoding:
        """The encoding of a word from those of its independent parts."""
        pieces: tuple[tuple[str, int], ...] = ()
        for encoding in encodings:
            pieces += encoding.pieces
        return WordEncoding(pieces)

    def encode(self, normalized: str) -> list[tuple[str, int]]:
        """Segment a whole normalized sentence into ``(piece, id)`` pairs."""
        out: list[tuple[str, int]] = []
        for word in self.splitter.split(normalized):
            out.extend(self.encode_word(word).pieces)
        return out

    def encode_part(self, part: str) -> WordEncoding:
        """Segment a word, or a part of one that no cut splits (uncached)."""
        raise NotImplementedError

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_cache"] = {}
        return state
