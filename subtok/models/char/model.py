"""Character segmentation: every character is a piece.

User-defined symbols are kept whole; every other character is looked up in
the normal map and becomes the unknown piece when absent.
"""

from __future__ import annotations

from subtok.vocab import Vocabulary
from subtok.models.base import Model, WordEncoding
from subtok.models.bpe.model import initial_symbols


class CharModel(Model):
    def __init__(self, vocab: Vocabulary, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self.user_defined = frozenset(vocab.user_defined())
        self.max_user = max(map(len, self.user_defined), default=0)

    def encode_part(self, word: str) -> WordEncoding:
        symbols = initial_symbols(word, self.user_defined, self.max_user)
        return WordEncoding(tuple(self.pair(s) for s, _ in symbols))
