"""What the ``tokenizer.json`` models give for one pre-token, and the
interface they share.

A model segments one pre-token (a "word") at a time; its answer for a word
is a :class:`WordTokens`, computed once and kept in the model's per-word
cache (pre-tokens repeat: a corpus has far fewer distinct words than
words). The command-line encoder reads ``ids`` or ``values`` from it; the
library's ``encode`` also reads ``spans`` to place each token on the
original text.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

#: Words a model remembers before its cache starts over (memory stays bounded).
CACHE_LIMIT = 1 << 19
#: Longer words are not remembered (they rarely repeat; tokenizers' limit).
CACHED_LENGTH = 256


class WordTokens(NamedTuple):
    """The tokens of one word: ids, token strings, and each token's span
    in characters of the word."""

    ids: tuple[int, ...]
    values: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]


@runtime_checkable
class TokenModel(Protocol):
    """A ``tokenizer.json`` model (BPE, Unigram, WordPiece, WordLevel)."""

    def encode_word(self, word: str) -> WordTokens:
        """The tokens of one non-empty pre-token."""

    def encode_words(self, words: list[str]) -> list[WordTokens]:
        """The tokens of each pre-token."""

    def token_to_id(self, token: str) -> int | None:
        ...

    def id_to_token(self, token_id: int) -> str | None:
        ...

    def get_vocab(self) -> dict[str, int]:
        ...

    def get_vocab_size(self) -> int:
        ...


class VocabModel:
    """Vocabulary lookups and the per-word cache, shared by the models
    whose vocabulary is a ``{token: id}`` object."""

    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab
        # Several tokens with one id: the last one read wins.
        self.tokens_by_id = dict(zip(vocab.values(), vocab.keys()))
        self._cache: dict[str, WordTokens] = {}

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def token_to_id(self, token: str) -> int | None:
        return self.vocab.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.tokens_by_id.get(token_id)

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def get_vocab_size(self) -> int:
        return len(self.vocab)

    def encode_word(self, word: str) -> WordTokens:
        found = self._cache.get(word)
        if found is None:
            found = self.segment(word)
            if len(word) <= CACHED_LENGTH:
                if len(self._cache) >= CACHE_LIMIT:
                    self._cache.clear()
                self._cache[word] = found
        return found

    def encode_words(self, words: list[str]) -> list[WordTokens]:
        """:meth:`encode_word` of each word; when all are cached, one
        C-level pass (the command-line encoder's inner loop)."""
        cache = self._cache
        try:
            return list(map(cache.__getitem__, words))
        except KeyError:
            # Segment only the new words (a C-level set difference finds
            # them), then look every word up again in C.
            fresh = {word: self.encode_word(word) for word in set(words).difference(cache)}
            try:
                return list(map(cache.__getitem__, words))
            except KeyError:  # a word too long to cache, or the cache was cleared
                get, encode = cache.get, self.encode_word
                return [get(word) or fresh.get(word) or encode(word) for word in words]

    def segment(self, word: str) -> WordTokens:
        raise NotImplementedError
