"""Cutting a plain token between its runs of letters and of punctuation.

The fast path caches output per word part. A piece never puts a "clean"
character (most punctuation, in most vocabularies) next to a letter, so a
cut between a run of letters and a run of clean characters is safe; runs
are never cut inside (a part left whole is segmented exactly all the same,
just reused less). The usual token, a word between common punctuation
("said,", "“Yes!”"), takes string methods; the others two regex calls.
Which characters are clean follows from the pre-tokenizer's bigrams
(:class:`subtok.pretokenizers.sentencepiece.PieceBoundaries`).
"""

from __future__ import annotations

import re
import string

#: A letter, as ``re`` sees it: a word character that is no digit or "_".
_LETTER = r"[^\W\d_]"

#: Characters tried first around a word, where clean: ASCII punctuation
#: and digits, and common quotes and dashes.
_COMMON_PUNCTUATION = (string.punctuation + string.digits
                       + "\u201c\u201d\u2018\u2019\u2014\u2013\u2026\u00ab\u00bb")


def _never(text: str) -> None:
    return None


#: Matches every text (the empty string at its start).
_ANYWHERE = re.compile("").search


class LetterCuts:
    """:meth:`letter_parts` and :attr:`clean` for one pre-tokenizer."""

    def __init__(self, boundaries) -> None:
        if boundaries.cuts_inside:
            self._unclean, self._runs, self.clean = _tables(boundaries.bigrams)
        else:
            # Words are never cut (the word model): every token counts as
            # unclean, so the pre-tokenizer's safe_parts (whole) decides.
            self._unclean, self._runs, self.clean = _ANYWHERE, _ANYWHERE, ""

    def letter_parts(self, token: str) -> list[str] | None:
        """``token`` cut into its runs of letters and of other characters,
        or None if some character that is no letter may not be cut from a
        letter: then only the pre-tokenizer's ``safe_parts`` can cut it."""
        common = self.clean
        # Letters only once stripped, so the ends stripped are all there is.
        body = token.rstrip(common)
        inner = body.lstrip(common)
        if inner.isalpha():  # "said,", "“Yes!”"
            head = body[:len(body) - len(inner)]
            parts = [head, inner] if head else [inner]
            return parts + [token[len(body):]] if len(body) < len(token) else parts
        return None if self._unclean(token) is not None else list(filter(None, self._runs(token)))


def _tables(bigrams: frozenset[str]):
    """(search for an unclean character, split into runs, the common clean
    characters, which no piece puts next to a letter)."""
    letter = re.compile(_LETTER)
    neighbours = set()  # characters that a piece puts next to a letter
    for bigram in bigrams:
        first, second = letter.match(bigram[0]), letter.match(bigram[1])
        if first and not second:
            neighbours.add(bigram[1])
        elif second and not first:
            neighbours.add(bigram[0])
    if neighbours:
        unclean = re.compile("[%s]" % re.escape("".join(sorted(neighbours)))).search
    else:
        unclean = _never
    # Few characters: str.strip tests each one against all of them.
    common = "".join(c for c in _COMMON_PUNCTUATION
                     if c not in neighbours and not letter.match(c))
    return unclean, re.compile("(%s+)" % _LETTER).split, common


__all__ = ["LetterCuts"]
