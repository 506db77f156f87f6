"""Word segmentation: whitespace-delimited words are looked up whole.

A new word starts at the beginning and at every "▁" (SentencePiece's word
model always splits prefix-style, even in a model trained with
``treat_whitespace_as_suffix``). A word missing from the vocabulary is the
unknown piece.
"""

from __future__ import annotations

import re

from subtok.symbols import SPACE_SYMBOL
from subtok.vocab import Vocabulary
from subtok.models.base import Model, WordEncoding


#: Matches every text (the empty string at its start).
_ANYWHERE = re.compile("").search


class WordModel(Model):
    name = "word"

    def __init__(self, vocab: Vocabulary, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self._splitter = re.compile("(?=%s)" % SPACE_SYMBOL)
        self.cuts_before_every_space = True

    def safe_parts(self, word: str) -> list[str]:
        """Words are looked up whole: never cut them."""
        return [word]

    def _letter_patterns(self):
        """Nor between letters and punctuation: every token counts as
        unclean, so :meth:`safe_parts` (whole) decides."""
        return _ANYWHERE, _ANYWHERE, ""

    def encode_part(self, word: str) -> WordEncoding:
        return WordEncoding((self.pair(word),))
