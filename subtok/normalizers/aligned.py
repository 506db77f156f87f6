"""A normalized string that remembers where each of its characters came from.

Hugging Face ``tokenizers`` reports, for every token, the span of the
*original* text it covers, even after normalizers and pre-tokenizers have
rewritten the text. It does so with ``NormalizedString``
(``tokenizers/src/tokenizer/normalizer.rs``): beside the normalized text it
keeps, per normalized byte, the span of original bytes it came from, and
every edit says how each new character relates to the old ones.

:class:`AlignedString` is that idea for the ``tokenizer.json`` components,
in code points instead of bytes. Every byte of one character always shares
one alignment in ``tokenizers`` (each edit gives all bytes of a new
character the same span), so one span per character loses nothing, and
spans in code points of the original are what the Python binding reports.
Spans here are absolute: positions in the whole input line, not in the
piece, so slicing never has to shift them.

``align`` may be None: then no alignment is kept and every edit is plain
string work. The command-line encoder, which prints ids or tokens but no
offsets, uses that mode; both modes share the code that decides what the
normalized text becomes, so they cannot disagree on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

Span = tuple[int, int]


class AlignedString:
    """Normalized text, the original span of each of its characters, and
    the span of original text the whole piece covers (``start``, ``end``)."""

    __slots__ = ("text", "align", "start", "end")

    def __init__(self, text: str, align: list[Span] | None, start: int, end: int) -> None:
        self.text = text
        self.align = align
        self.start = start
        self.end = end

    @classmethod
    def original(cls, text: str, offset: int = 0, track: bool = True) -> AlignedString:
        """``text`` as read: each character is its own original span. With
        ``track`` false no alignment is kept (see the module docstring)."""
        align = [(i, i + 1) for i in range(offset, offset + len(text))] if track else None
        return cls(text, align, offset, offset + len(text))

    def __repr__(self) -> str:
        return "AlignedString(%r, %d..%d)" % (self.text, self.start, self.end)

    # -- reading -----------------------------------------------------------
    def span(self, begin: int, stop: int) -> Span:
        """The original span of normalized characters ``begin..stop``: from
        the first one's start to the last one's end, as ``convert_offsets``
        does (an empty range keeps its normalized positions, shifted)."""
        if begin >= stop or self.align is None:
            return (self.start + begin, self.start + stop)
        return (self.align[begin][0], self.align[stop - 1][1])

    def slice(self, begin: int, stop: int) -> AlignedString:
        """Characters ``begin..stop`` as a piece of their own
        (``NormalizedString::slice``)."""
        text = self.text[begin:stop]
        if self.align is None:
            return AlignedString(text, None, self.start, self.end)
        start, end = self.span(begin, stop)
        return AlignedString(text, self.align[begin:stop], start, end)

    def slices(self, ranges: Iterable[Span]) -> list[AlignedString]:
        """The non-empty pieces at ``ranges``: ``PreTokenizedString::split``
        drops empty ones."""
        return [self.slice(b, e) for b, e in ranges if b < e]

    # -- edits that keep each character's own span ---------------------------
    def set_text(self, text: str) -> None:
        """Replace every character by one other (a text of the same length):
        spans stay. Without alignments any text may be set."""
        self.text = text

    def keep(self, kept: list[int]) -> None:
        """Keep only the characters at the indices ``kept`` (in order); each
        keeps its span (``NormalizedString::filter``)."""
        text = self.text
        self.text = "".join([text[i] for i in kept])
        if self.align is not None:
            align = self.align
            self.align = [align[i] for i in kept]

    def remove(self, pattern) -> None:
        """Drop every character a match of the compiled ``pattern`` covers;
        the others keep their spans (``NormalizedString::filter``)."""
        text = self.text
        kept: list[Span] = []
        last = 0
        for found in pattern.finditer(text):
            begin, stop = found.span()
            if last < begin:
                kept.append((last, begin))
            last = max(last, stop)
        if not kept and last == 0:
            return
        if last < len(text):
            kept.append((last, len(text)))
        self.text = "".join([text[b:e] for b, e in kept])
        if self.align is not None:
            align = self.align
            self.align = [span for b, e in kept for span in align[b:e]]

    def strip_ends(self, leading: int, trailing: int) -> None:
        """Drop ``leading`` and ``trailing`` characters (``lrstrip``)."""
        stop = len(self.text) - trailing
        self.text = self.text[leading:stop]
        if self.align is not None:
            self.align = self.align[leading:stop]

    def expand(self, outputs: list[str]) -> None:
        """Replace character ``i`` by the non-empty string ``outputs[i]``;
        every new character gets the span of the character it replaces
        (what ``transform`` does with changes 0, 1, 1, ...)."""
        self.text = "".join(outputs)
        if self.align is not None:
            align = self.align
            self.align = [align[i] for i, out in enumerate(outputs) for _ in out]

    def prepend(self, prefix: str) -> None:
        """``NormalizedString::prepend``: the prefix takes the first
        character's span. Nothing happens to an empty string."""
        if not self.text or not prefix:
            return
        self.text = prefix + self.text
        if self.align is not None:
            self.align[:0] = [self.align[0]] * len(prefix)

    # -- the general edit ------------------------------------------------------
    def transform(self, items: Iterable[tuple[str, int]], initial_offset: int = 0) -> None:
        """``NormalizedString::transform`` over the whole string.

        ``items`` are the new characters, each with its change: 0 replaces
        the next old character (and takes its span), 1 is inserted (and
        takes the span of the old character before it), -n replaces the
        next old character and removes the n after it. ``initial_offset``
        old characters are removed before the first item.
        """
        self.transform_segments([(0, len(self.text), items, initial_offset)])

    def transform_segments(self, segments: Iterable[tuple[int, int, Iterable[tuple[str, int]], int]]) -> None:
        """:meth:`transform` of some ranges only, in order and apart, each
        as ``(begin, stop, items, initial_offset)``; the text between them
        stays as it is (as if each of its characters came with change 0)."""
        text, align = self.text, self.align
        empty = (self.start, self.start)
        chars: list[str] = []
        spans: list[Span] = []
        last = 0
        for begin, stop, items, skipped in segments:
            chars.append(text[last:begin])
            if align is not None:
                spans.extend(align[last:begin])
            pos = begin + skipped
            for char, change in items:
                chars.append(char)
                if align is None:
                    continue
                if change > 0:
                    spans.append(align[pos - 1] if pos >= 1 else empty)
                else:
                    spans.append(align[pos])
                    pos += 1 - change
            last = stop
        chars.append(text[last:])
        self.text = "".join(chars)
        if align is not None:
            spans.extend(align[last:])
            self.align = spans

    def replace_matches(self, matches: Iterable[Span], content: str) -> None:
        """Replace each (non-overlapping, ordered) range by ``content``
        (``NormalizedString::replace``): the new characters are inserted
        after the replaced ones are removed, so they take the span of the
        last character replaced, or, for an empty match, of the character
        before it."""
        inserted = [(char, 1) for char in content]
        self.transform_segments([(b, e, inserted, e - b) for b, e in matches])


def split_ranges(matches: Iterable[tuple[int, int, bool]], behavior: str) -> list[Span]:
    """The pieces a split makes, from a cover of the text by ranges that are
    or are not a delimiter match (``NormalizedString::split``).

    ``behavior`` is one of tokenizers' ``SplitDelimiterBehavior`` names:
    Removed drops the matches, Isolated keeps them as pieces, the Merged
    ones glue each match to its neighbour, Contiguous glues runs of
    matches together. Empty ranges stay in the result (callers drop them).
    """
    if behavior == "Isolated":
        return [(b, e) for b, e, _ in matches]
    if behavior == "Removed":
        return [(b, e) for b, e, is_match in matches if not is_match]
    if behavior == "MergedWithNext":
        reverse = [(-e, -b, m) for b, e, m in reversed(list(matches))]
        return [(-e, -b) for b, e in reversed(_glue(reverse, _glue_to_previous))]
    if behavior == "MergedWithPrevious":
        return _glue(matches, _glue_to_previous)
    if behavior == "Contiguous":
        return _glue(matches, _glue_same)
    raise ValueError("unknown split behavior: %s" % behavior)


def _glue_to_previous(is_match: bool, previous: bool) -> bool:
    return is_match and not previous


def _glue_same(is_match: bool, previous: bool) -> bool:
    return is_match == previous


def _glue(matches: Iterable[tuple[int, int, bool]], glue: Callable[[bool, bool], bool]) -> list[Span]:
    """Fold the ranges left to right, extending the last piece over a range
    when ``glue(is_match, previous_is_match)`` says so (MergedWithNext is
    the same fold over the mirrored ranges, as tokenizers folds from the
    right)."""
    out: list[list[int]] = []
    previous = False
    for begin, stop, is_match in matches:
        if glue(is_match, previous) and out:
            out[-1][1] = stop
        else:
            out.append([begin, stop])
        previous = is_match
    return [(b, e) for b, e in out]


class TextNormalizer:
    """Base of the ``tokenizer.json`` normalizers: a subclass writes
    ``normalize_aligned`` once, and gets ``normalize`` (plain text, no
    alignment) from it, so the two can never disagree."""

    def normalize(self, text: str) -> str:
        piece = AlignedString(text, None, 0, len(text))
        self.normalize_aligned(piece)
        return piece.text

    def normalize_aligned(self, text: AlignedString) -> None:
        raise NotImplementedError
