"""SentencePiece's words: cuts that no vocabulary piece can span.

SentencePiece segments the whole normalized sentence; cutting it into
words changes nothing as long as no piece the model can emit spans a cut.
A cut between characters ``a`` and ``b`` is safe exactly when no piece
holds the bigram ``ab``: then every segmentation of the whole is a
concatenation of segmentations of the parts, and a word's result can be
cached. Words are cut next to "▁", where words meet (before it in prefix
mode, after it in suffix mode); the few characters that vocabularies put
next to an inner "▁" (llama2's "▁▁" runs, say) are found at load time and
exempt. Inside a word, :meth:`PieceBoundaries.safe_parts` cuts at every
other safe place.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable

from subtok.symbols import SPACE_SYMBOL


def bigrams(pieces: Iterable[str]) -> frozenset[str]:
    """Every two neighbouring characters in a piece. Made in C over all the
    pieces joined by a character that no piece holds (a lone surrogate:
    pieces are valid UTF-8), then the pairs that hold it dropped."""
    pieces = list(pieces)
    separator = "\ud800"
    text = separator.join(pieces)
    if text.count(separator) != max(len(pieces) - 1, 0):  # never, but be sure
        return frozenset(p[i:i + 2] for p in pieces for i in range(len(p) - 1))
    pairs = set(map(operator.add, text, text[1:]))
    return frozenset(pair for pair in pairs if separator not in pair)


class PieceBoundaries:
    """Words and their parts, cut where no piece of ``pieces`` can span."""

    #: True: parts inside a word are cut too (see :meth:`safe_parts`).
    cuts_inside = True

    def __init__(self, pieces: Iterable[str], *, suffix: bool = False) -> None:
        #: The bigrams of the pieces: a cut between two characters is safe
        #: where they are not one of these.
        self.bigrams = bigrams(pieces)
        self._splitter = self._make_splitter(self.bigrams, suffix)
        #: True when every "▁" starts a new word (no piece has a "▁" after
        #: another character, and whitespace is a prefix).
        self.cuts_before_every_space = not suffix and not any(
            bigram[1] == SPACE_SYMBOL for bigram in self.bigrams)

    @staticmethod
    def _make_splitter(bigrams: frozenset[str], suffix: bool) -> re.Pattern:
        """Cut before "▁" (after it, in suffix mode) unless a piece puts a
        character there: those neighbours come from the bigrams."""
        space = SPACE_SYMBOL
        if suffix:
            neighbours = {bigram[1] for bigram in bigrams if bigram[0] == space}
            guard = "(?![%s])" % re.escape("".join(sorted(neighbours))) if neighbours else ""
            return re.compile("(?<=%s)%s" % (space, guard))
        neighbours = {bigram[0] for bigram in bigrams if bigram[1] == space}
        guard = "(?<![%s])" % re.escape("".join(sorted(neighbours))) if neighbours else ""
        return re.compile("%s(?=%s)" % (guard, space))

    def split(self, normalized: str) -> list[str]:
        """Cut ``normalized`` into words at the safe places next to "▁"."""
        return [w for w in self._splitter.split(normalized) if w]

    def safe_parts(self, word: str) -> list[str]:
        """Cut ``word`` wherever two neighbouring characters occur in no piece."""
        bigrams = self.bigrams
        parts = []
        start = 0
        for i in range(1, len(word)):
            if word[i - 1:i + 1] not in bigrams:
                parts.append(word[start:i])
                start = i
        parts.append(word[start:])
        return parts


class WholeWords:
    """SentencePiece's word model: a word starts at every "▁" (prefix
    style, even in a model trained with ``treat_whitespace_as_suffix``) and
    is looked up whole, never cut inside."""

    cuts_inside = False
    cuts_before_every_space = True
    _splitter = re.compile("(?=%s)" % SPACE_SYMBOL)

    def split(self, normalized: str) -> list[str]:
        return [w for w in self._splitter.split(normalized) if w]

    def safe_parts(self, word: str) -> list[str]:
        return [word]


__all__ = ["PieceBoundaries", "WholeWords", "bigrams"]
