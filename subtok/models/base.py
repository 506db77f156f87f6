"""What every segmentation model shares: word splitting for the cache.

A model turns a *normalized* string into ``(piece, id)`` pairs that cover it
exactly. Post-processing (byte fallback, merging unknown runs, bos/eos) is
the processor's job, not the model's.

Per-word caching. Encoding is far cheaper when the text is cut into words
that can be segmented independently and whose results are cached. A cut
between characters ``a`` and ``b`` is safe exactly when no piece the model
can emit contains the bigram ``ab``: then no piece spans the cut, so every
segmentation of the whole is a concatenation of segmentations of the parts.
We only cut next to "▁" (before it in prefix mode, after it in suffix mode),
which is where words meet; the few characters that vocabularies put next to
an inner "▁" (llama2's "▁▁" runs, say) are computed at load time and exempt.
"""

from __future__ import annotations

import operator
import re
import string
from dataclasses import dataclass

from subtok.normalizers.sentencepiece import SPACE_SYMBOL
from subtok.vocab import PieceType, Vocabulary


#: A letter, as ``re`` sees it: a word character that is no digit or "_".
_LETTER = r"[^\W\d_]"


#: Characters tried first around a word (see Model.letter_parts), where
#: clean: ASCII punctuation and digits, and common quotes and dashes.
_COMMON_PUNCTUATION = (string.punctuation + string.digits
                       + "\u201c\u201d\u2018\u2019\u2014\u2013\u2026\u00ab\u00bb")


def _bigrams(pieces) -> frozenset[str]:
    """Every two neighbouring characters in a piece. Made in C over all the
    pieces joined by a character that no piece holds (a lone surrogate:
    pieces are valid UTF-8), then the pairs that hold it dropped."""
    separator = "\ud800"
    text = separator.join(pieces)
    if text.count(separator) != max(len(pieces) - 1, 0):  # never, but be sure
        return frozenset(p[i:i + 2] for p in pieces for i in range(len(p) - 1))
    pairs = set(map(operator.add, text, text[1:]))
    return frozenset(pair for pair in pairs if separator not in pair)


def _never(text: str) -> None:
    return None


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


class Model:
    """Base class: a vocabulary, a word splitter, and ``encode``."""

    #: "unigram", "bpe", "word" or "char"; set by each subclass.
    name = ""
    #: True if encoding each word alone always equals encoding the whole.
    exact_per_word = True

    def __init__(self, vocab: Vocabulary, *, treat_whitespace_as_suffix: bool = False) -> None:
        self.vocab = vocab
        self.suffix = treat_whitespace_as_suffix
        self._bigrams = _bigrams(vocab.normal)
        self._splitter = self._make_splitter(self._bigrams, treat_whitespace_as_suffix)
        #: True when every "▁" starts a new word (no piece has a "▁" after
        #: another character and whitespace is a prefix).
        self.cuts_before_every_space = not treat_whitespace_as_suffix and not any(
            bigram[1] == SPACE_SYMBOL for bigram in self._bigrams)
        #: ``(piece, id)`` of every id, one tuple shared by every cached
        #: result (an unknown piece carries its own text instead).
        self.pairs = [(piece, index) for index, piece in enumerate(vocab.pieces)]
        self._cache: dict[str, WordEncoding] = {}
        #: The tables of :meth:`letter_parts`, once built.
        self._letter_cuts: tuple | None = None

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

    def split_words(self, normalized: str) -> list[str]:
        """Cut ``normalized`` at the safe places next to "▁"."""
        return [w for w in self._splitter.split(normalized) if w]

    def encode_word(self, word: str, cache: bool = True) -> WordEncoding:
        """Segment one word, with a cache (words repeat a lot).

        A word seen for the first time is first cut at every inner place no
        piece can span (see :meth:`safe_parts`); its parts are looked up in
        the same cache, so "▁said," costs only the new part ",". A caller
        that keeps the result itself passes ``cache=False`` (the parts are
        still cached).
        """
        found = self._cache.get(word)
        if found is None:
            parts = self.safe_parts(word)
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

    def safe_parts(self, word: str) -> list[str]:
        """Cut ``word`` wherever two neighbouring characters occur in no piece."""
        bigrams = self._bigrams
        parts = []
        start = 0
        for i in range(1, len(word)):
            if word[i - 1:i + 1] not in bigrams:
                parts.append(word[start:i])
                start = i
        parts.append(word[start:])
        return parts

    def letter_parts(self, token: str) -> list[str] | None:
        """``token`` cut into its runs of letters and of other characters,
        or None if some character that is no letter may not be cut from a
        letter: then only :meth:`safe_parts` can cut it.

        A piece never puts a "clean" character (most punctuation, in most
        vocabularies) next to a letter, so a cut between a run of letters
        and a run of clean characters is safe; runs are never cut inside
        (a part left whole is segmented exactly all the same, just reused
        less). The usual token, a word between common punctuation
        ("said,", "“Yes!”"), takes string methods; the others two regex
        calls. The tables are built on first use, not at load.
        """
        unclean, runs, common = self._letter_cuts or self._letter_tables()
        # Letters only once stripped, so the ends stripped are all there is.
        body = token.rstrip(common)
        inner = body.lstrip(common)
        if inner.isalpha():  # "said,", "“Yes!”"
            head = body[:len(body) - len(inner)]
            parts = [head, inner] if head else [inner]
            return parts + [token[len(body):]] if len(body) < len(token) else parts
        return None if unclean(token) is not None else list(filter(None, runs(token)))

    def clean_punctuation(self) -> str:
        """The common punctuation that no piece puts next to a letter
        (see :meth:`letter_parts`): stripped off a word's end, it leaves a
        part segmented on its own. Built on first use."""
        return (self._letter_cuts or self._letter_tables())[2]

    def _letter_tables(self) -> tuple:
        """(search for an unclean character, split into runs, common clean
        characters) of :meth:`letter_parts`, built on first use."""
        if self._letter_cuts is None:
            self._letter_cuts = self._letter_patterns()
        return self._letter_cuts

    def _letter_patterns(self):
        """(search for an unclean character, split into runs, common clean
        characters); a model that cuts less than :meth:`safe_parts` does
        here (the word model never cuts) overrides it."""
        letter = re.compile(_LETTER)
        neighbours = set()  # characters that a piece puts next to a letter
        for bigram in self._bigrams:
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

    def combine(self, encodings: list[WordEncoding]) -> WordEncoding:
        """The encoding of a word from those of its independent parts."""
        pieces: tuple[tuple[str, int], ...] = ()
        for encoding in encodings:
            pieces += encoding.pieces
        return WordEncoding(pieces)

    def encode(self, normalized: str) -> list[tuple[str, int]]:
        """Segment a whole normalized sentence into ``(piece, id)`` pairs."""
        out: list[tuple[str, int]] = []
        for word in self.split_words(normalized):
            out.extend(self.encode_word(word).pieces)
        return out

    def encode_part(self, part: str) -> WordEncoding:
        """Segment a word, or a part of one that no cut splits (uncached)."""
        raise NotImplementedError

    def part_output(self, part: str, ids: bool) -> tuple[str, int, float, float] | None:
        """A shortcut to a part's CLI output (see ``UnigramModel``); None
        sends the caller the long way, through :meth:`encode_part`."""
        return None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_cache"] = {}
        state["_letter_cuts"] = None
        return state
