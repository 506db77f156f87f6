"""Word segmentation: whitespace-delimited words are looked up whole.

A new word starts at the beginning and at every "▁" (SentencePiece's word
model always splits prefix-style, even in a model trained with
``treat_whitespace_as_suffix``). A word missing from the vocabulary is the
unknown piece.
"""

from __future__ import annotations

from subtok.models.base import Model, WordEncoding
from subtok.pretokenizers.sentencepiece import WholeWords
from subtok.vocab import Vocabulary


class WordModel(Model):
    @staticmethod
    def make_splitter(vocab: Vocabulary, suffix: bool) -> WholeWords:
        """Words are looked up whole: never cut inside."""
        return WholeWords()

    def encode_part(self, word: str) -> WordEncoding:
        return WordEncoding((self.pair(word),))
