"""The CLI's fast path: plain lines encoded token by token from a cache.

A *plain* line is one that no normalization rule or user-defined symbol
touches and that holds no "▁". Normalizing it only turns each
space-separated token ``t`` into the word "▁t", and every word is segmented
on its own, so the output line is the cached output texts of its tokens
joined by spaces: one C-level dictionary lookup per token, no
per-character work. Whether a line is plain is a property of its
characters (rules start at trigger characters, and a space is never one
where this path is used), so it is decided once per distinct token, when
the token is cached: a token that is not plain is rejected (below).

Three things can still make a line differ from the join of its tokens:

* A token that is not plain sends its line on (a line that normalization
  changes is then joined from the tokens of its normalized text, see
  :meth:`PlainLineEncoder.encode_normalized`).
* Without byte fallback, neighbouring unknown pieces merge, also across
  words. Parts whose output starts or ends with an unknown piece are
  *rejected*: a line holding one takes the general path.
* Unigram sums scores in float32, so a word's segmentation may depend on
  the accumulated score ``A`` where it starts (see ``models/unigram.py``).
  A cached part is exact while ``|A|`` stays below its *robustness*. The
  accumulated score before a part is at most the largest NORMAL
  ``|score|`` times the pieces before it, which the output text gives (its
  spaces) — provided each part's own path respects that bound per piece;
  parts whose path does not (unknown pieces) are rejected. A *weak* part,
  one not robust enough for the longest lines accepted (MAX_PIECES
  pieces), carries a mark saying how many pieces may come before it in a
  line for it to be reused; ids output, where the count says no, gives a
  closer bound: the sum of the |score| of the ids before it.

Marks are made of characters that no plain line's output can hold: lone
surrogates, which keep a line from being plain, while an output holds ids,
byte pieces or substrings of the line. A mark is MARK and a character
telling its kind; it starts the text of a part, and a token's text is its
parts' texts joined, marks and all, so each mark counts the pieces before
its own part. A joined output without MARK is final as it stands; one
with marks is checked and unmarked (:meth:`PlainLineEncoder._final`). So
the usual line costs one extra scan, for one character (at ``memchr``'s
speed, several times faster than finding a range of characters with a
regular expression: docs/performance.md), and no per-token work.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from subtok.float32 import offset_bound
from subtok.lines.fastpath.letters import LetterCuts
from subtok.lines.fastpath.output import OutputTexts, format_pairs
from subtok.postprocessors.sentencepiece import ENDS, STARTS, unknown_runs_stay_inside
from subtok.symbols import SPACE_SYMBOL

if TYPE_CHECKING:
    from subtok.lines.fastpath.lines import LineCache
    from subtok.models.base import WordEncoding

#: Lines with more output pieces than this take the general path, so a
#: token needs robustness only up to the bound this many pieces give.
MAX_PIECES = 4096

#: Distinct tokens kept before the cache starts over (about 150 bytes each).
MAX_TOKENS = 400_000

#: Starts every mark. Its low byte, 0xff, is one text seldom holds, so a
#: search for it in a line of UCS-2 characters runs at memchr's speed.
MARK = "\udbff"
#: The mark ``MARK + chr(NEVER + 1 + k)`` lets a weak token be reused
#: after at most ``allowed[k]`` pieces (see ``_allowed_pieces``);
#: ``MARK + chr(NEVER)`` never.
NEVER = 0xD800
#: A rejected token's text: any line holding it takes the general path.
REJECTED = MARK + chr(NEVER)


#: Entry of a word or part: (output text, piece count, robustness,
#: magnitude, unknown edges); see :class:`WordEntries`.
Entry = tuple[str, int, float, float, int]

#: Parts kept before their cache starts over.
MAX_PARTS = 300_000


class WordEntries:
    """Output texts of word parts, cached: what both CLI line paths (plain
    tokens here, normalized words in lines.py) join a word's output
    from.

    Only a part's marked text is kept (see the module docstring): a plain
    token's text is the join of its parts' texts as they are, and the
    word path of lines.py, which checks each word exactly, reads from the
    text the bounds it needs (:meth:`word`). Keeping the numbers as well
    would cost a tuple and two floats per part (docs/performance.md).
    """

    def __init__(self, lines: "LineCache", ids: bool) -> None:
        self.owner = lines
        self.ids = ids
        model = lines.model
        self._model = model
        self._postprocessor = lines.postprocessor
        self._safe_parts = lines.pretokenizer.safe_parts
        letters = LetterCuts(lines.pretokenizer)
        self._letter_parts = letters.letter_parts
        #: The unigram model's shortcut from a part to its output text;
        #: other models take the long way, through ``encode_part``.
        self._part_output = getattr(model, "part_output", _no_shortcut)
        self._clean = letters.clean
        #: part -> its marked output text. Both tables compute a missing
        #: part in the lookup itself, so a token made of parts already
        #: cached costs C-level lookups only (see :meth:`token_text`).
        self._parts = OutputTexts(self._new_part)
        #: Parts that begin with "▁", keyed without it: a plain token's
        #: word is "▁" + token, so a word no cut splits shares the token
        #: cache's key instead of holding a second string.
        self._spaced = OutputTexts(self._new_spaced)
        #: Bound on |score| per output piece of a part that is not rejected.
        self.per_piece = 0.0 if model.exact_per_word else model.max_normal_score
        self.allowed = _allowed_pieces(MAX_PIECES)
        #: Robustness needed after allowed[k] pieces.
        self._needed = [offset_bound(self.per_piece * pieces) for pieces in self.allowed]
        #: Parts computed since :meth:`take_news`, once :meth:`collect_news`
        #: is called: new ``_parts`` and new ``_spaced`` entries.
        self._news: tuple[dict[str, str], dict[str, str]] | None = None

    def clear(self) -> None:
        self._parts.clear()
        self._spaced.clear()

    # -- sharing with other worker processes -----------------------------
    # Worker processes that encode blocks of the same text meet mostly the
    # same words. A part's text depends on nothing but the part, so one
    # worker can take in what another computed instead of segmenting it
    # again (docs/performance.md).
    def collect_news(self) -> None:
        """Record every part computed from now on, for :meth:`take_news`."""
        self._news = ({}, {})

    def take_news(self) -> tuple[dict[str, str], dict[str, str]] | None:
        """The parts computed since the last call, or None if there are none."""
        news = self._news
        if news is None or not (news[0] or news[1]):
            return None
        self._news = ({}, {})
        return news

    def learn(self, news: tuple[dict[str, str], dict[str, str]]) -> None:
        """Take in parts another worker computed (``take_news``), unless
        they would fill the cache: it stays within its bound, and what this
        worker computes itself keeps the room."""
        parts, spaced = news
        room = MAX_PARTS * self.owner.cache_share - len(self._parts) - len(self._spaced)
        if len(parts) + len(spaced) < room:
            self._parts.update(parts)
            self._spaced.update(spaced)

    def word(self, word: str) -> Entry:
        """The entry of ``word``, joined from its parts' entries; a word
        whose unknown pieces meet at a cut (they merge into one piece, no
        byte fallback) is computed whole instead."""
        parts = self._safe_parts(word)
        if len(parts) == 1:
            return self._entry(word)
        entries = list(map(self._entry, parts))
        edges = [entry[4] for entry in entries]
        if any(edges) and not unknown_runs_stay_inside(edges):
            return self._entry_of(self._model.encode_word(word, cache=False))
        return _join(entries)

    def token_text(self, token: str) -> str:
        """The output text of the word "▁" + ``token`` (a plain token),
        with its parts' marks: no numbers to join, as each mark bounds the
        pieces before its own part. The token is cut between its runs of
        letters and of other characters where that is safe
        (``LetterCuts.letter_parts``), else at every safe place. The usual
        tokens, a word ("said") and a word before clean punctuation
        ("said,"), are cut right here, in a few C-level calls: computing
        token texts is a sizeable share of a cold encode
        (docs/performance.md)."""
        spaced = self._spaced
        if token.isalpha():  # letters are seldom cut: spare the cut test
            return spaced[token]
        body = token.rstrip(self._clean)
        if len(body) < len(token) and body.isalpha():
            return spaced[body] + " " + self._parts[token[len(body):]]
        runs = self._letter_parts(token)
        if runs is None:
            return " ".join(map(self._text, self._safe_parts(SPACE_SYMBOL + token)))
        # Only the first run holds the "▁".
        return " ".join([spaced[runs[0]], *map(self._parts.__getitem__, runs[1:])])

    def _text(self, part: str) -> str:
        """A part's marked output text."""
        if part[0] == SPACE_SYMBOL:
            return self._spaced[part[1:]]
        return self._parts[part]

    def _new_part(self, part: str) -> str:
        return self._compute(part, self._parts, part)

    def _new_spaced(self, token: str) -> str:
        return self._compute(SPACE_SYMBOL + token, self._spaced, token)

    def _entry(self, part: str) -> Entry:
        """A part's entry, its numbers read from its marked text: the
        pieces are its spaces, and a mark (or none) gives the least
        robustness it has. The magnitude is bounded by the pieces (a part
        that exceeds that bound, or holds an unknown piece, is rejected);
        a rejected part is segmented again, uncached (rare: the word path
        caches each word's entry anyway)."""
        text = self._text(part)
        if text[0] != MARK:
            robustness = self._needed[-1]
        elif text[1] == REJECTED[1]:
            return self._entry_of(self._model.encode_part(part))
        else:
            robustness = self._needed[ord(text[1]) - NEVER - 1]
        count = text.count(" ") + 1
        return text, count, robustness, self.per_piece * count, 0

    def _compute(self, part: str, cache: dict[str, str], key: str) -> str:
        """Compute a part's marked text and cache it under ``key``."""
        if len(self._parts) + len(self._spaced) >= MAX_PARTS * self.owner.cache_share:
            self.clear()
        output = self._part_output(part, self.ids)
        if output is None:
            found = cache[key] = self._entry_of(self._model.encode_part(part))[0]
        else:
            found = cache[key] = self._marked(*output, 0)[0]
        if self._news is not None:
            self._news[cache is self._spaced][key] = found
        return found

    def _entry_of(self, encoding: WordEncoding) -> Entry:
        pairs = self._postprocessor.process(encoding.pieces)
        return self._marked(format_pairs(pairs, self.ids), len(pairs), encoding.robustness,
                            encoding.magnitude, self._postprocessor.unknown_edges(pairs))

    def _marked(self, text: str, count: int, robustness: float, magnitude: float,
                edges: int) -> Entry:
        """The entry, its text behind the mark it needs (if any)."""
        if edges or magnitude > self.per_piece * count:
            text = REJECTED + text
        elif robustness <= self._needed[-1]:
            # How many of the bounds (after allowed pieces) it meets.
            text = MARK + chr(NEVER + bisect.bisect_left(self._needed, robustness)) + text
        return text, count, robustness, magnitude, edges


def unmarked(text: str) -> str:
    """``text`` without marks."""
    return "".join(_split_marks(text)[0]) if MARK in text else text


def _split_marks(text: str) -> tuple[list[str], list[int]]:
    """The texts around the marks of ``text``, and each mark's kind (-1:
    rejected, else an index into the allowed counts): ``texts[k]`` comes
    right before mark ``k``, of kind ``kinds[k]``; the last text, after
    the last mark."""
    first, *marked = text.split(MARK)
    return [first] + [part[1:] for part in marked], [ord(part[0]) - NEVER - 1 for part in marked]


class _TokenTexts(dict):
    """Plain token -> its output text, its parts' marked texts joined
    (:meth:`WordEntries.token_text`); a token that is not plain is
    rejected. A token not there yet is computed by the lookup itself, in
    one call."""

    __slots__ = ("_words", "_is_plain")

    def __init__(self, normalizer, words: WordEntries) -> None:
        super().__init__()
        self._words = words
        self._is_plain = normalizer.is_plain

    def __missing__(self, token: str) -> str:
        if not self._is_plain(token) or (not token.isascii() and SPACE_SYMBOL in token):
            text = REJECTED
        else:
            text = self._words.token_text(token)
        self[token] = text
        return text


class PlainLineEncoder:
    """Encode plain lines to spm_encode output text (ids or pieces)."""

    def __init__(self, lines: "LineCache", ids: bool, words: WordEntries) -> None:
        self.owner = lines
        self.ids = ids
        self._words = words
        model = lines.model
        self._model = model
        #: |score| per id, for :meth:`_magnitude` (built on first use).
        self._id_magnitudes: list[float] | None = None
        self._exact = model.exact_per_word
        self._max_pieces = MAX_PIECES
        self._allowed = words.allowed
        #: token -> output text, possibly marked; a token not there yet is
        #: computed by the lookup itself.
        self._texts = _TokenTexts(lines.normalizer, words)
        self._text = self._texts.__getitem__
        #: Outputs shorter than this hold at most MAX_PIECES pieces.
        self._short = float("inf") if self._exact else 2 * MAX_PIECES

    def _start_over(self) -> None:
        """Empty the caches."""
        self._texts.clear()
        self._words.clear()

    def _keep_bounded(self) -> None:
        """Start over once MAX_TOKENS (times the line cache's share)
        are cached: between lines only, so no line loses a token (a block
        of lines adds a few thousand)."""
        if len(self._texts) >= MAX_TOKENS * self.owner.cache_share:
            self._start_over()

    def lines(self, lines: list[str]) -> list[str | None]:
        """:meth:`encode` of each line (the CLI's hot loop)."""
        self._keep_bounded()
        return list(map(self.encode, lines))

    def encode_one(self, line: str) -> str | None:
        """:meth:`encode` for a caller that goes line by line."""
        self._keep_bounded()
        return self.encode(line)

    def encode(self, line: str) -> str | None:
        """The output line, or None if ``line`` needs the general path."""
        return self._final(" ".join(map(self._text, filter(None, line.split(" ")))))

    def encode_normalized(self, normalized: str) -> str | None:
        """The output of a line that normalization changed (a no-break
        space, a full-width letter...), from its normalized text, or None.

        Normalized, every line is "▁" + its tokens joined by "▁", and the
        words are those tokens behind "▁": the same token texts apply. A
        "▁" next to another (typed in the text) makes a word of its own,
        which no token stands for: such a line gets None.
        """
        tokens = normalized.split(SPACE_SYMBOL)
        if tokens[0] or "" in tokens[1:]:
            return None
        return self._final(" ".join(map(self._text, tokens[1:])))

    def _final(self, out: str) -> str | None:
        """A joined output line as it stands, unmarked, or None if it needs
        the general path: it holds a rejected part, a weak part after more
        pieces than its mark allows, or (unigram) more than MAX_PIECES pieces.

        The accumulated score where a part starts is at most the bound per
        piece times the pieces before it: the spaces before its mark. Ids
        tell more: the sum of their pieces' |score| bounds it closer, and a
        weak part that the count rejects may still pass that test.
        """
        # The usual line: no marks, too short to hold MAX_PIECES pieces.
        if MARK not in out:
            return out if len(out) < self._short or out.count(" ") < self._max_pieces else None
        texts, kinds = _split_marks(out)
        # Pieces and (ids) magnitude before the mark, summed from the last
        # place they were needed: a line costs one pass, however many marks.
        pieces = 0
        magnitude = 0.0
        summed = 0
        for k, allowed in enumerate(kinds):
            if allowed < 0:
                return None
            pieces += texts[k].count(" ")
            if pieces > self._allowed[allowed]:
                if not self.ids:
                    return None
                magnitude += self._magnitude("".join(texts[summed:k + 1]))
                summed = k + 1
                if magnitude > self._words.per_piece * self._allowed[allowed]:
                    return None
        out = "".join(texts)
        return None if not self._exact and out.count(" ") >= self._max_pieces else out

    def _magnitude(self, ids_text: str) -> float:
        """The sum of |score| over the ids in ``ids_text``: a
        bound on what they add to the accumulated score, infinite if an
        unknown or byte piece (whose id does not tell what the model added)
        is among them."""
        if self._id_magnitudes is None:
            magnitudes = [float("inf")] * len(self.owner.vocab.pieces)
            for piece_id, score in self._model.table.values():
                magnitudes[piece_id] = abs(score)
            self._id_magnitudes = magnitudes
        ids = map(int, ids_text.split())
        return sum(map(self._id_magnitudes.__getitem__, ids))

def _join(parts: list[Entry]) -> Entry:
    """Entries of consecutive parts as one, when no unknown pieces meet at
    a cut: a later part starts from the earlier parts' accumulated score,
    which lowers the offset it tolerates. (A plain loop: tokens have two or
    three parts.)"""
    texts = []
    count = 0
    robustness = float("inf")
    before = 0.0
    for text, pieces, tolerated, magnitude, _ in parts:
        texts.append(text)
        count += pieces
        if tolerated - before < robustness:
            robustness = tolerated - before
        before += magnitude
    return " ".join(texts), count, robustness, before, parts[0][4] & STARTS | parts[-1][4] & ENDS


def _allowed_pieces(max_pieces: int) -> list[int]:
    """The counts of pieces before a weak token that marks can allow, from
    0 to ``max_pieces``, about 19% apart."""
    steps = {int(2 ** (k / 4)) for k in range(4 * max_pieces.bit_length())}
    return sorted({0, max_pieces} | {n for n in steps if n < max_pieces})


def _no_shortcut(part: str, ids: bool) -> None:
    return None
