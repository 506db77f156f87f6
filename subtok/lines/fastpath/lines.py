"""The CLI's line cache: spm_encode output lines from cached word texts.

The CLI writes each line as ids or pieces joined by spaces. Computing that
text once per distinct word (or token) and joining cached texts is far
cheaper than encoding each line and formatting its pairs; this module does
it, with the checks that keep the output identical to encoding the line
(sentencepiece's result) wherever words may interact:

* a plain line (no normalization rule applies, no "▁" typed in it) is a
  join of cached token texts (:mod:`subtok.lines.fastpath.plain_lines`);
* other lines are cut into words whose entries are cached too and checked
  word by word (unknown runs that may cross words, unigram's float32
  offsets);
* a unigram line where some word may not be reused is recomputed in
  context (``UnigramModel.context_head``), and a line where an unknown run
  crosses a word boundary takes the general path,
  :meth:`SentencePieceProcessor.encode_pairs`.

It reads the processor only through its public attributes (normalizer,
model, pre-tokenizer, post-processor, vocabulary).
"""

from __future__ import annotations

import functools
import operator

from subtok.float32 import offset_bound
from subtok.lines.fastpath.output import OutputTexts, format_pairs
from subtok.lines.fastpath.plain_lines import PlainLineEncoder, WordEntries, unmarked
from subtok.models.unigram.model import words_reusable
from subtok.postprocessors.sentencepiece import unknown_runs_stay_inside
from subtok.processor import Pair, SentencePieceProcessor

#: Words whose CLI output a line cache keeps before it starts over.
MAX_WORDS = 400_000

#: Word entries of the unigram word path kept before that cache starts
#: over: they are joined again cheaply from the cached parts.
MAX_LINE_WORDS = 16_384


class LineCache:
    """spm_encode output lines (ids or pieces) for one processor, cached."""

    def __init__(self, processor: SentencePieceProcessor) -> None:
        self.processor = processor
        self.normalizer = processor.normalizer
        self.model = processor.model
        self.vocab = processor.vocab
        self.postprocessor = processor.postprocessor
        self.pretokenizer = processor.pretokenizer
        self._split_words = processor.pretokenizer.split
        self._line_cache: dict[bool, dict[str, tuple]] = {True: {}, False: {}}
        self._plain: dict[bool, PlainLineEncoder | None] = {True: None, False: None}
        self._word_entries: dict[bool, WordEntries | None] = {True: None, False: None}
        self._word_texts = {ids: OutputTexts(functools.partial(self._new_word_text, ids))
                            for ids in (True, False)}
        self._word_edges: dict[bool, dict[str, int]] = {True: {}, False: {}}
        self._plain_lines = (self.normalizer.plain_words_at_spaces
                             and processor.pretokenizer.cuts_before_every_space)
        #: The share of their full size (MAX_WORDS here, MAX_TOKENS and
        #: MAX_PARTS in plain_lines) that the caches keep: each of N worker
        #: processes keeps 1/N, so that together they hold what one process
        #: would (see batch.LineEncoder.in_worker).
        self.cache_share = 1.0

    def encode_line(self, text: str, ids: bool) -> str:
        """One line of spm_encode output: ids or pieces joined by spaces.

        The fast path of the CLI. A plain line (no normalization rule
        applies, no "▁" typed in it) is a join of cached token outputs (see
        plain_lines.py); so is a line that normalization changes, from the
        tokens of its normalized text. A line the token cache cannot vouch
        for is split into words whose entries are cached too, from the same
        part entries, and checked word by word. A line where a unigram word
        may not be reused is recomputed in context from those words
        (:meth:`_context_line`); one where an unknown run crosses a word
        boundary takes the general path.
        """
        if self._plain_lines:
            out = self._plain_encoder(ids).encode_one(text)
            if out is not None:
                return out  # else the exact per-word checks below decide
        return self._normalized_line(text, ids)

    def encode_lines(self, lines: list[str], ids: bool) -> list[str]:
        """:meth:`encode_line` of each line, the plain ones in one go."""
        if not self._plain_lines:
            return [self._normalized_line(line, ids) for line in lines]
        out = self._plain_encoder(ids).lines(lines)
        if None in out:
            for number, found in enumerate(out):
                if found is None:
                    out[number] = self._normalized_line(lines[number], ids)
        return out

    def _normalized_line(self, text: str, ids: bool) -> str:
        """:meth:`encode_line` past the plain path: words of the normalized
        text, with the per-word checks."""
        normalized = self.normalizer.normalize(text)
        if not normalized:
            return ""
        bytewise = self.processor.bytewise
        if bytewise is not None and bytewise.applies(normalized):
            return self._general_line(text, ids)
        if self._plain_lines and not self.normalizer.is_plain(text):
            out = self._plain_encoder(ids).encode_normalized(normalized)
            if out is not None:
                return out
        words = self._split_words(normalized)
        if self.model.exact_per_word:
            return self._independent_words_line(text, words, ids)
        cache = self._line_cache[ids]
        get = cache.get
        entries = [get(w) or self._line_entry(w, ids, cache) for w in words]
        if self.postprocessor.merges_unknown and any(map(_UNK_EDGE, entries)) and \
                not unknown_runs_stay_inside(list(map(_UNK_EDGE, entries))):
            return self._general_line(text, ids)
        # Usual case in one comparison; else the exact per-word check.
        if min(map(_ROBUSTNESS, entries)) <= offset_bound(sum(map(_MAGNITUDE, entries))) \
                and not words_reusable(list(map(_ROBUSTNESS, entries)),
                                       list(map(_MAGNITUDE, entries))):
            return self._context_line(text, words, entries, ids)
        return unmarked(" ".join(map(_TEXT, entries)))

    def _context_line(self, text: str, words: list[str], entries: list, ids: bool) -> str:
        """A unigram line where some word may not be reused where it
        starts: the model recomputes such words in context
        (``UnigramModel.context_head``), up to where the rest can all be
        reused as cached. The words it walks are read back from their
        cached output when no character of the line can become an unknown
        piece (every one is a piece by itself), so their output is their
        pieces exactly; else the general path segments every word again."""
        model = self.model
        if not model.single_chars().issuperset("".join(words)):
            return self._general_line(text, ids)
        head, reused = model.context_head(words, _CachedLine(model, ids, entries))
        # No unknown piece anywhere, so nothing to post-process.
        texts = [format_pairs(head, ids)] if head else []
        texts.extend(unmarked(entry[0]) for entry in entries[reused:])
        return " ".join(texts)

    def _independent_words_line(self, text: str, words: list[str], ids: bool) -> str:
        """Words of a model whose words never interact (all but unigram):
        one cached output text per word, joined; only an unknown run that
        may cross words sends the line down the general path."""
        texts, edges = self._word_texts[ids], self._word_edges[ids]
        if len(texts) >= MAX_WORDS * self.cache_share:  # between lines: edges cover the line
            texts.clear()
            edges.clear()
        out = " ".join(map(texts.__getitem__, words))
        if edges and not edges.keys().isdisjoint(words) and \
                not unknown_runs_stay_inside([edges.get(w, 0) for w in words]):
            return self._general_line(text, ids)
        return out

    def _new_word_text(self, ids: bool, word: str) -> str:
        """Cache a new word's output text (and its unknown edges, if any)."""
        pairs = self.postprocessor.process(self.model.encode_word(word, cache=False).pieces)
        flags = self.postprocessor.unknown_edges(pairs)
        if flags:
            self._word_edges[ids][word] = flags
        text = self._word_texts[ids][word] = format_pairs(pairs, ids)
        return text

    def _plain_encoder(self, ids: bool) -> PlainLineEncoder:
        encoder = self._plain[ids]
        if encoder is None:
            encoder = self._plain[ids] = PlainLineEncoder(self, ids, self.word_entries(ids))
        return encoder

    def word_entries(self, ids: bool) -> WordEntries:
        """Word entries for CLI output, shared by both line paths."""
        entries = self._word_entries[ids]
        if entries is None:
            entries = self._word_entries[ids] = WordEntries(self, ids)
        return entries

    def _general_line(self, text: str, ids: bool) -> str:
        return format_pairs(self.processor.encode_pairs(text), ids)

    def _line_entry(self, word: str, ids: bool, cache: dict):
        """A word's cached CLI output entry (see plain_lines.WordEntries),
        joined from the part entries both line paths share."""
        entry = self.word_entries(ids).word(word)
        if len(cache) >= MAX_LINE_WORDS:
            cache.clear()
        cache[word] = entry
        return entry


# Fields of a CLI cache entry (see LineCache._line_entry).
_TEXT, _ROBUSTNESS, _MAGNITUDE, _UNK_EDGE = (operator.itemgetter(i) for i in (0, 2, 3, 4))


class _CachedLine:
    """A line's cached CLI output entries as ``UnigramModel.context_head``
    reads them (see ``EncodedWords``): the pieces of a run of words are
    read back from their output texts, joined, in one go, and only if
    asked for."""

    __slots__ = ("_model", "_ids", "_texts", "robustness", "magnitudes")

    def __init__(self, model, ids: bool, entries: list) -> None:
        self._model, self._ids = model, ids
        self._texts = list(map(_TEXT, entries))
        self.robustness = list(map(_ROBUSTNESS, entries))
        self.magnitudes = list(map(_MAGNITUDE, entries))

    def pieces(self, start: int, end: int) -> list[Pair]:
        if start >= end:
            return []
        fields = unmarked(" ".join(self._texts[start:end])).split(" ")
        model = self._model
        piece_ids = map(int, fields) if self._ids else (model.table[f][0] for f in fields)
        return list(map(model.pairs.__getitem__, piece_ids))
