"""Loading a training corpus: sentencepiece's ``LoadSentences`` and friends.

Phases (``TrainerInterface::InitMetaPieces`` and ``LoadSentences``), each a
short function:

1. :func:`build_meta` places the meta pieces (unk/bos/eos/pad, control and
   user-defined symbols, byte pieces) at their ids.
2. :func:`~subtok.training.reading.read_sentences` streams ``(sentence,
   freq)`` pairs from the input files (or stdin, or an iterable, or the
   byte range of a file that one Dask task counts,
   :class:`~subtok.training.reading.FileRange`), one per "\\n"-terminated
   line, skipping empty lines, lines longer than ``max_sentence_length``
   bytes (one warning) and lines containing U+2585; ``input_format=tsv``
   lines are ``sentence<TAB>freq``.
3. :func:`~subtok.training.reading.select` keeps them all, the first N,
   or a seeded reservoir sample of N (``input_sentence_size``).
4. :func:`normalize_pass` runs the model's normalizer, turns every
   meta-piece string and the ``pretokenization_delimiter`` into TAB (a hard
   boundary; 0.2.3 keeps the delimiter out of the alphabet) and drops empty
   results by swapping in the last sentence (sentencepiece's order).
5. :func:`compute_alphabet` counts characters (weighted by freq) and keeps
   the most frequent ones up to ``character_coverage`` (float32 comparison,
   required chars first).
6. Characters outside the alphabet (TAB included) become U+2585, which no
   piece may contain (:mod:`subtok.training.units` masks them).

Steps 2-3 live in :mod:`subtok.training.reading`; the word splitting,
character counts, masking and ``Sorted`` order that every step shares in
:mod:`subtok.training.units`; unigram's word-and-follower counts in
:mod:`subtok.training.followers`.

The result is a :class:`Corpus`: what every trainer starts from.

Speed and memory: files are streamed; step 4 runs over fixed chunks of
about :data:`NORMALIZE_CHUNK_CHARS` characters (fewer for a small input,
:func:`chunk_chars`), in forked worker processes
(:func:`subtok.parallel.ordered_map`) when the input is large and
``num_threads`` > 1 (chunk results are merged in chunk order, so the
result never depends on ``num_threads``), and counts the characters on the
way. Only unigram keeps the sentences; BPE and WORD get
the distinct words (or sentences) with counts (``Corpus.units``), counted
in the chunks and masked once per distinct unit, and the characters are
counted from those (with workers, in a forked child while the units are
sorted: :func:`chars_and_order`). A large corpus without kept sentences is
loaded in a forked child (:func:`subtok.parallel.run_in_child`), so the
trainer starts from a clean heap, and sends its units laid end to end in
one string (as ``Corpus`` pickles them); one with kept sentences can be deferred
(``load_corpus(..., defer=True)``, ``Corpus.load``) for the trainer to
read in a child of its own. That read keeps no sentences either: the
chunks count unigram's words and seed entries (each word with what
follows it, :func:`~subtok.training.followers.count_entries`), merged and masked once per distinct
string (:func:`_entries_corpus`); only where that would differ from the
kept sentences (a sentence normalizing to "", "▁" outside the alphabet,
NUL, a pretokenization delimiter) are the sentences kept.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from contextlib import closing
from dataclasses import dataclass, field

from subtok.collector import collector_paused
from subtok.errors import TrainerError
from subtok.float32 import f32
from subtok.normalizers.charsmap import load_rules
from subtok.normalizers.sentencepiece import Normalizer
from subtok.parallel import child_pickles, chunks, ordered_map, run_in_child, worker_count
from subtok.progress import Progress
from subtok.symbols import BOUNDARY, END_OF_TEXT
from subtok.symbols import SPACE_SYMBOL as SPACE
from subtok.vocab import PieceType, byte_piece
from subtok.training.followers import (FollowedStitch, count_entries, count_followed, entries_of,
                                      entry_words)
from subtok.training.reading import INT64_MAX, read_sentences, select
from subtok.training.spec import TrainerOptions
from subtok.training.units import (COUNT_BATCH_CHARS, count_groups, count_words, flatten_groups,
                                   mask_table, mask_unknown, masked_groups, remask, sorted_by_count,
                                   sorted_items, split_into_words, weighted_chars)


# ----------------------------------------------------------------------------
# the result


@dataclass
class Corpus:
    """Normalized training data and the vocabulary frame around it."""

    #: (normalized sentence, frequency); "▁" for spaces, U+2585 for every
    #: character outside the alphabet and every meta-piece occurrence.
    sentences: list[tuple[str, int]]
    #: alphabet character -> count (``LoadSentences``' required_chars_), in Sorted
    #: order: count desc, then code point asc.
    alphabet: dict[str, int]
    #: meta pieces (piece, PieceType) in id order; their ids in ``meta_ids``.
    meta: list[tuple[str, int]]
    meta_ids: list[int] = field(default_factory=list)
    #: when ``sentences`` is not kept (model types other than unigram, and
    #: unigram with ``entries``): the distinct masked training units
    #: (:func:`training_units`) with summed counts, sorted by (count desc,
    #: unit asc); None otherwise. (In a loading child, about to send the
    #: corpus, they may already be in the form they are pickled in: see
    #: ``__getstate__``.)
    units: list[tuple[str, int]] | None = None
    #: unigram from count files: (word, follower) -> count, masked, for
    #: its seed search (see :func:`count_followed`); None otherwise.
    followed: dict | None = None
    #: unigram from a deferred load (:func:`_entries_corpus`): its seed
    #: entries, ``word + follower`` -> count, masked (the follower as in
    #: :func:`count_followed`, :data:`~subtok.symbols.END_OF_TEXT` at the
    #: end), with its words in ``units``; None otherwise.
    entries: dict | None = None
    #: True when the trainer owns the corpus (:func:`subtok.training.api.train`):
    #: it may then drop ``units`` once it has taken what it needs.
    consumable: bool = False
    #: A deferred corpus (``load_corpus(..., defer=True)``): nothing read
    #: yet, ``sentences`` and ``alphabet`` empty; calling ``load`` reads
    #: the input and returns the loaded corpus, in the process that calls
    #: it (the unigram trainer calls it in a forked child). None otherwise.
    load: Callable[[], "Corpus"] | None = None

    def meta_by_id(self) -> dict[int, tuple[str, int]]:
        return dict(zip(self.meta_ids, self.meta))

    # A corpus loaded in a child process comes back pickled: its units go
    # as one string and one list of counts, which pickle (and unpickle)
    # much faster than a tuple per unit; the loading child makes them in
    # that form (_joined), and they are then sent as they are.
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        units = state["units"]
        if isinstance(units, list) and units:
            joined = _UNIT_SEPARATOR.join([unit for unit, _ in units])
            if joined.count(_UNIT_SEPARATOR) == len(units) - 1:  # no unit holds it
                state["units"] = (joined, [count for _, count in units])
        return state

    def __setstate__(self, state: dict) -> None:
        units = state["units"]
        if isinstance(units, tuple):
            joined, counts = units
            state["units"] = list(zip(joined.split(_UNIT_SEPARATOR), counts))
        self.__dict__.update(state)


#: Masking makes NUL U+2585 (:func:`~subtok.training.units.masked_groups`), so no unit holds it.
_UNIT_SEPARATOR = "\x00"


# ----------------------------------------------------------------------------
# 1. meta pieces


def build_meta(options: TrainerOptions) -> list[tuple[int, str, int]]:
    """(id, piece, type) of every meta piece, sorted by id (``TrainerInterface::InitMetaPieces``)."""
    vocab_size = options.vocab_size
    placed: dict[int, tuple[str, int]] = {}
    has_unk = False
    for name in ("unk", "bos", "eos", "pad"):
        piece_id = getattr(options, name + "_id")
        piece = getattr(options, name + "_piece")
        if piece_id < 0:
            continue
        if piece_id >= vocab_size:
            raise TrainerError("--%s_id=%d is out of range: ids must be < vocab_size (%d)."
                               % (name, piece_id, vocab_size))
        if piece_id in placed:
            raise TrainerError("--%s_id=%d is already used by %s." % (name, piece_id, placed[piece_id][0]))
        if has_unk and piece == options.unk_piece:
            raise TrainerError("--%s_piece=%s: the unknown piece is defined twice." % (name, piece))
        is_unk = piece == options.unk_piece
        has_unk = has_unk or is_unk
        placed[piece_id] = (piece, PieceType.UNKNOWN if is_unk else PieceType.CONTROL)
    if not has_unk:
        raise TrainerError("<unk> must be defined.")

    special_ids = {getattr(options, n + "_piece"): getattr(options, n + "_id")
                   for n in ("pad", "eos", "bos") if getattr(options, n + "_id") >= 0}
    seen: set[str] = set()
    next_id = 0

    def add(symbol: str, kind: int) -> None:
        nonlocal next_id
        if symbol in seen:
            raise TrainerError("%s is already defined. duplicated symbols are not allowed." % symbol)
        seen.add(symbol)
        if symbol == options.unk_piece:
            raise TrainerError("%s must not be defined with --control_symbols and "
                               "--user_defined_symbols." % options.unk_piece)
        if symbol in special_ids:
            sid = special_ids[symbol]
            placed[sid] = (symbol, kind)
            return
        while next_id in placed:
            next_id += 1
        placed[next_id] = (symbol, kind)

    for symbol in options.control_symbols:
        add(symbol, PieceType.CONTROL)
    word_model = options.model_type_name == "word"
    for symbol in options.user_defined_symbols:
        add(symbol, PieceType.USER_DEFINED)
        if word_model and SPACE + symbol not in seen:
            # 0.2.3's WORD trainer also defines "▁X" for every user-defined
            # X: the word encoder looks words up whole, "▁" included.
            add(SPACE + symbol, PieceType.USER_DEFINED)
    if options.byte_fallback:
        for value in range(256):
            add(byte_piece(value), PieceType.BYTE)
    if len(placed) > vocab_size:
        raise TrainerError("Vocabulary size is smaller than the number of meta pieces (%d vs %d). "
                           "Increase --vocab_size." % (vocab_size, len(placed)))
    return [(i, placed[i][0], int(placed[i][1])) for i in sorted(placed)]


# ----------------------------------------------------------------------------
# 4. normalization


def make_normalizer(options: TrainerOptions) -> Normalizer:
    """The normalizer the model will use, minus the user-defined matcher (``Normalizer::SetPrefixMatcher``).

    Its rules are read from the compiled blob the model stores
    (:func:`~subtok.normalizers.charsmap.load_rules`, as a loaded model
    reads them), not decoded into a dict of every rule: decoding a built-in
    table was most of training's start-up (docs/performance.md).
    """
    _, blob = options.charsmap()
    return Normalizer(load_rules(blob), add_dummy_prefix=options.add_dummy_prefix,
                      remove_extra_whitespaces=options.remove_extra_whitespaces,
                      escape_whitespaces=True,
                      treat_whitespace_as_suffix=options.treat_whitespace_as_suffix)


def meta_pattern(pieces: Iterable[str]) -> "re.Pattern[str] | None":
    """A regex of the meta-piece strings, longest first (what the
    normalization pass replaces by TAB), or None when there are none."""
    strings = sorted({p for p in pieces if p}, key=lambda s: (-len(s), s))
    if not strings:
        return None
    return re.compile("|".join(re.escape(s) for s in strings))


#: Characters per chunk of the normalization pass (chunks never depend on
#: num_threads, and their results are merged in chunk order).
NORMALIZE_CHUNK_CHARS = 2_000_000
#: Below this many characters the normalization pass runs in this process.
NORMALIZE_PARALLEL_MIN_CHARS = 2_000_000
#: An input too small for this many NORMALIZE_CHUNK_CHARS chunks is cut
#: into about this many (of at least NORMALIZE_MIN_CHUNK_CHARS): an odd
#: number of full chunks leaves one of two workers idle for a whole chunk
#: at the end; more chunks cost more merging of their counts
#: (docs/performance.md).
NORMALIZE_MIN_CHUNKS = 4
#: The same for unigram's pass that counts seed entries
#: (:func:`_entries_corpus`): each worker holds its chunk's entries at once,
#: so smaller chunks lower the loading phase's memory peak
#: (docs/performance.md).
ENTRIES_MIN_CHUNKS = 8
NORMALIZE_MIN_CHUNK_CHARS = 250_000


def normalize_workers(options: TrainerOptions, size: int) -> int:
    """Worker processes of a normalization pass over about ``size``
    characters (bytes, for a file not yet read)."""
    return worker_count(options.num_threads) if size >= NORMALIZE_PARALLEL_MIN_CHARS else 1


def chunk_chars(size: int, parts: int = NORMALIZE_MIN_CHUNKS) -> int:
    """Characters per chunk of a pass over about ``size`` characters: from
    the input's size alone, never from num_threads (``parts``: the chunks
    of a smaller input, see :data:`NORMALIZE_MIN_CHUNKS`)."""
    return min(NORMALIZE_CHUNK_CHARS, max(NORMALIZE_MIN_CHUNK_CHARS, size // parts))


#: From this many bytes of input files on, a corpus without kept sentences
#: is loaded in a forked child (see :func:`load_corpus`).
LOAD_IN_CHILD_MIN_BYTES = 2_000_000


@dataclass(frozen=True)
class _NormalizeJob:
    """What every chunk of one normalization pass needs besides the chunk
    (the workers inherit it, see :func:`subtok.parallel.ordered_map`)."""

    normalize: Callable[[str], str]
    replace: Callable[[str], str] | None   # meta-piece strings -> BOUNDARY
    delimiter: str                         # pretokenization_delimiter ("" for none)
    units: tuple | None                    # see training_units()
    keep: bool                             # keep the normalized sentences
    plain_words: Callable[[str], bool] | None = None   # see _plain_words()


@dataclass
class _Pass:
    sentences: list[tuple[str, int]]   # normalized, empty ones removed (if kept)
    counts: Counter                    # character -> weighted count ("\0" and " " included); empty with units
    units: Counter | None              # unit (word / sentence) -> weighted count (unmasked)
    nonempty: int                      # number of non-empty normalized sentences
    total: int                         # number of sentences


def _count_units(texts: list[str], chunk: list[tuple[str, int]], units: tuple, plain: list[str] = ()):
    """Distinct units of the normalized ``texts`` with their weighted counts
    (for ``("followed", ...)`` see :func:`count_followed`), and of the raw
    ``plain`` lines (count 1 each; see :func:`_plain_words`)."""
    if units[0] == "followed":
        return count_followed(texts, chunk, units)
    out: Counter = Counter()
    if units[0] == "sentences":
        for text, (_, freq) in zip(texts, chunk):
            if text:
                out[text] += freq
        return out
    _, suffix, ws_only = units
    if ws_only:
        for text, (_, freq) in zip(texts, chunk):
            for word in split_into_words(text, suffix, True):
                out[word] += freq
        return out
    # split_into_words without building the words: count the parts between
    # "▁"s and put "▁" back on the distinct ones only.
    inner: Counter = Counter()  # parts that get a "▁" (before in prefix mode, after in suffix mode)
    # A plain line's words are its parts between spaces (the normalizer
    # would join them with "▁" after a "▁" of its own): counted straight
    # from the raw lines, before any other part, so that the "" of runs
    # of spaces can be taken out.
    for start in range(0, len(plain), 256):
        inner.update(" ".join(plain[start:start + 256]).split(" "))
    if plain:
        inner.pop("", None)
    # Sentences of count 1 that start (prefix mode) or end (suffix mode)
    # with "▁", as the dummy prefix makes them, have no bare part: joined,
    # they split into exactly their parts (and one "" at the joined text's
    # start or end), counted in one call per batch instead of one per
    # sentence. Batches stay small so that the joined text and its parts
    # add little to a worker's peak memory.
    batch: list[str] = []

    def count_batch() -> None:
        parts = "".join(batch).split(SPACE)
        inner.update(parts[:-1] if suffix else parts[1:])
        batch.clear()

    batched = 0
    for text, (_, freq) in zip(texts, chunk):
        if not text:
            continue
        if freq == 1 and (text[-1] if suffix else text[0]) == SPACE:
            batch.append(text)
            batched += len(text)
            if batched >= COUNT_BATCH_CHARS:
                count_batch()
                batched = 0
            continue
        parts = text.split(SPACE)
        bare = parts.pop() if suffix else parts.pop(0)  # the part without "▁"
        if bare:
            out[bare] += freq
        if freq == 1:
            inner.update(parts)
        else:
            for part in parts:
                inner[part] += freq
    if batch:
        count_batch()
    # The parts given their "▁" in C; no bare part has one, so the two sets
    # of units are disjoint and the bare ones are simply added.
    words = map(str.__add__, inner, itertools.repeat(SPACE)) if suffix else map(SPACE.__add__, inner)
    units: Counter = Counter(dict(zip(words, inner.values())))
    dict.update(units, out)
    return units


def _make_job(options: TrainerOptions, meta: list[tuple[int, str, int]], units: tuple | None,
              keep: bool, normalizer: Normalizer | None) -> _NormalizeJob:
    """The job of one pass (``normalizer`` default: :func:`make_normalizer`)."""
    if normalizer is None:
        normalizer = make_normalizer(options)
    pieces = [piece for _, piece, _ in meta]
    pattern = meta_pattern(pieces)
    replace = None if pattern is None else functools.partial(pattern.sub, BOUNDARY)
    return _NormalizeJob(normalize=normalizer.normalize, replace=replace,
                         delimiter=options.pretokenization_delimiter, units=units, keep=keep,
                         plain_words=None if keep else _plain_words(normalizer, pieces, pattern,
                                                                    units,
                                                                    options.pretokenization_delimiter))


def _plain_words(normalizer: Normalizer, meta: list[str], pattern: "re.Pattern[str] | None",
                 units: tuple | None, delimiter: str) -> Callable[[str], bool] | None:
    """A test of the raw lines whose words can be counted from their spaces
    alone, or None when there are none.

    Where the normalizer allows it (``plain_words_at_spaces``), a line that
    no rule touches (``is_plain``) and that holds no "▁" has the words
    "▁" + each of its non-empty parts between spaces. Meta pieces
    (``pattern`` finds them) are replaced in the normalized text: a line
    holding one takes the normal path (one without spaces or "▁" can only
    be found inside a part, so the raw line shows it).
    """
    if (units != ("words", False, False) or delimiter or not normalizer.plain_words_at_spaces
            or any(" " in piece or SPACE in piece for piece in meta)):
        return None
    search = None if pattern is None else pattern.search
    is_plain = normalizer.is_plain

    def plain_words(text: str) -> bool:
        # (An ASCII text holds no "▁": str knows it is ASCII without a scan.)
        return ((search is None or search(text) is None)
                and (text.isascii() or SPACE not in text) and is_plain(text))

    return plain_words


def _chunk_job(job: _NormalizeJob, chunk: list[tuple[str, int]]):
    """Normalize one chunk: (its size, normalized sentences or None, char counts
    or None, unit counts or None, number of non-empty sentences).

    With units, the characters are counted later from the merged units
    (they cover the sentences exactly), which is much cheaper; unigram's
    ``("entries", ...)`` counts them here, from the chunk's words (see
    :func:`count_entries`).
    """
    normalize = job.normalize
    replace = job.replace
    delimiter = job.delimiter
    units = job.units
    plain_words = job.plain_words
    plain: list[str] = []  # raw lines of count 1 with words (see _plain_words)
    rest = chunk  # the sentences of ``texts``
    if plain_words is not None:
        rest = []
        for item in chunk:
            text, freq = item
            if freq == 1 and plain_words(text):
                if text.strip(" "):
                    plain.append(text)
            else:
                rest.append(item)

    def normalized() -> Iterator[str]:
        for text, _ in rest:
            text = normalize(text)
            if replace is not None:
                text = replace(text)
            if delimiter:
                text = text.replace(delimiter, BOUNDARY)
            yield text

    if units is not None and units[0] == "entries":
        # Counted as they come: the chunk's normalized texts never exist together.
        unit_counts = count_entries(normalized(), rest, units)
        return len(chunk), None, None, unit_counts[:-1], unit_counts[-1]
    texts = list(normalized())
    counts = unit_counts = sentences = None
    if units is not None:
        unit_counts = _count_units(texts, rest, units, plain)
    else:
        counts = weighted_chars(texts, [f for _, f in rest])
    if job.keep:
        sentences = [(t, f) for t, (_, f) in zip(texts, rest)]
    nonempty = len(plain) + sum(1 for t in texts if t)
    return len(chunk), sentences, counts, unit_counts, nonempty


#: With a forked child, the share of the units whose characters it counts
#: (this process sorts all of them, then counts the characters of the
#: rest): sorting costs less than counting, so that both end together
#: (docs/performance.md).
FORKED_CHARS_SHARE = 0.8


def chars_and_order(units: Counter, fork: bool) -> tuple[Counter, list[tuple[int, list[str]]]]:
    """The weighted characters of ``units`` (:func:`weighted_chars`) and
    their order (:func:`count_groups`). With ``fork`` most characters are
    counted in a forked child (:func:`subtok.parallel.run_in_child`)
    while this process sorts, then counts the others: neither needs the
    other, both walk every unit, and they run at the end of the load,
    when the normalizing workers are done and a core is free."""
    order: list = []
    if not fork:
        chars = weighted_chars(units, units.values())
        return chars, count_groups(units)
    cut = int(len(units) * FORKED_CHARS_SHARE)

    def here() -> None:
        order.append(count_groups(units))
        order.append(weighted_chars(itertools.islice(units, cut, None),
                                    itertools.islice(units.values(), cut, None)))

    chars = run_in_child(weighted_chars, itertools.islice(units, cut),
                         itertools.islice(units.values(), cut), meanwhile=here)
    groups, rest = order
    chars.update(rest)
    return chars, groups


def _text_size(item: tuple[str, int]) -> int:
    return len(item[0])


def normalize_pass(raw: Iterable[tuple[str, int]], options: TrainerOptions,
                   meta: list[tuple[int, str, int]], progress: Progress, *,
                   keep_sentences: bool, units: tuple | None, size: int | None = None,
                   normalizer: Normalizer | None = None) -> _Pass:
    """Normalize ``raw`` (a list, or a stream of about ``size`` characters)
    in chunks, in worker processes when it is large.

    ``normalizer`` (default: :func:`make_normalizer`) lets several passes
    share one normalizer (building it decodes the charsmap). The workers
    inherit it with the rest of the :class:`_NormalizeJob` (it is never
    pickled).

    Each chunk also counts its characters (weighted by freq) or, with
    ``units`` (``("words", suffix, whitespace_only)`` or ``("sentences",)``),
    its distinct units, whose characters the caller counts once merged
    (:func:`chars_and_order`); the chunk results are merged in chunk order, so
    the result does not depend on ``num_threads``.
    """
    job = _make_job(options, meta, units, keep_sentences, normalizer)
    out: list[tuple[str, int]] = []
    counts: Counter = Counter()
    unit_counts: Counter | None = Counter() if units is not None else None
    nonempty = total = 0
    if size is None:
        size = sum(len(text) for text, _ in raw)
    workers = normalize_workers(options, size)
    results = ordered_map(_chunk_job, chunks(raw, _text_size, chunk_chars(size)), workers,
                          shared=job)
    # Streamed input has no known length: the reading bar (in bytes, with
    # a total) then shows the progress of both.
    counting = progress if isinstance(raw, list) else Progress(False)
    with closing(results), counting.bar(total=len(raw) if isinstance(raw, list) else None,
                                        desc="normalizing", unit=" lines") as bar:
        for chunk_size, sentences, chunk_counts, chunk_units, chunk_nonempty in results:
            bar.update(chunk_size)
            total += chunk_size
            if sentences is not None:
                out.extend(sentences)
            if chunk_counts is not None:
                counts.update(chunk_counts)
            if unit_counts is not None:
                unit_counts.update(chunk_units)
            nonempty += chunk_nonempty
    # Remove empty sentences the way sentencepiece does: swap in the last one
    # (which is not checked again) and shorten the list.
    i = 0
    while i < len(out):
        if not out[i][0]:
            out[i] = out[-1]
            out.pop()
        i += 1
    return _Pass(out, counts, unit_counts, nonempty, total)


def unit_count_chunks(raw: Iterable[tuple[str, int]], options: TrainerOptions,
                      meta: list[tuple[int, str, int]], units: tuple, size: int,
                      normalizer: Normalizer | None = None,
                      parts: int = NORMALIZE_MIN_CHUNKS) -> Iterator[tuple[int, Counter, int]]:
    """The chunk results of :func:`normalize_pass` as they come, for callers
    that merge the unit counts themselves (:mod:`subtok.training.counts`
    spills them to disk): (sentences in the chunk, unit -> weighted count,
    non-empty sentences). The chunks and their workers are those of the
    training pass, so the units are exactly the ones a trainer sees
    (``parts``: see :func:`chunk_chars`)."""
    job = _make_job(options, meta, units, False, normalizer)
    workers = normalize_workers(options, size)
    results = ordered_map(_chunk_job, chunks(raw, _text_size, chunk_chars(size, parts)), workers,
                          shared=job)
    with closing(results):
        for chunk_size, _, _, chunk_units, nonempty in results:
            yield chunk_size, chunk_units, nonempty


# ----------------------------------------------------------------------------
# 5. alphabet


def compute_alphabet(options: TrainerOptions, counts: Counter) -> dict[str, int]:
    """Characters kept in the alphabet, with their counts, in Sorted order.

    ``counts``: character -> weighted count, without "\\0" and " "; it is
    not modified (the caller masks with its keys). Required characters
    missing from it take part with count 0.
    """
    required = {c for c in options.required_chars if c not in ("\x00", " ")}
    total = sum(counts.values())
    coverage_limit = f32(options.character_coverage)
    items = list(counts.items())
    items.extend((char, 0) for char in required if char not in counts)
    ordered = sorted(items, key=lambda kv: (kv[0] not in required, -kv[1], kv[0]))
    alphabet: dict[str, int] = {}
    accumulated = 0
    for char, count in ordered:
        if total and not options.use_all_vocab and f32(accumulated / total) >= coverage_limit:
            break
        accumulated += count
        if char == BOUNDARY or "\ud800" <= char <= "\udfff":
            continue
        alphabet[char] = count
    return dict(sorted_items(alphabet.items()))


def _joined(groups: list[tuple[int, list[str]]]) -> tuple[str, list[int]] | None:
    """The keys of ``groups`` laid end to end, as a :class:`Corpus`
    pickles its units: joined by NUL, and their counts; None when a key
    holds NUL.

    Each key is read once, in order, into one string; a list of (key,
    count) pairs would be walked again to be pickled, each key then
    fetched from wherever it was made.
    """
    parts: list[str] = []
    counts: list[int] = []
    for count, keys in groups:
        parts.append(_UNIT_SEPARATOR.join(keys))
        counts.extend(itertools.repeat(count, len(keys)))
    joined = _UNIT_SEPARATOR.join(parts)
    if joined.count(_UNIT_SEPARATOR) != len(counts) - 1:
        return None
    return joined, counts


# ----------------------------------------------------------------------------
# all phases


def load_corpus(options: TrainerOptions, progress: Progress | None = None,
                lines: Iterable | None = None, meanwhile: Callable[[], Any] | None = None, *,
                defer: bool = False) -> Corpus:
    """Read, select, normalize and mask the training sentences (``LoadSentences``).

    ``lines`` (an iterable of str or bytes) replaces ``options.input``.
    ``meanwhile()`` (e.g. importing the trainer) runs once, in this process
    while a forked child loads, or after loading when no child does (so
    that a corpus found empty or bad never pays for it).
    Only unigram keeps ``Corpus.sentences``; for the other model types only
    ``Corpus.units`` is filled (None for CHAR): the distinct units the
    model type trains on (:func:`training_units`), which is much smaller.

    ``defer``: a large input file whose sentences are kept (unigram) is not
    read here; the corpus returned has only its meta pieces and
    ``Corpus.load``, which reads it. The caller can then read the
    sentences in a child process that keeps them, so that they never
    exist in this one (``meanwhile`` is then not called: nothing is loaded
    here to wait for).
    """
    progress = progress or Progress(False, options.minloglevel)
    keep_sentences = options.model_type_name == "unigram"
    large = (lines is None and "-" not in options.input
             and sum(map(_file_size, options.input)) >= LOAD_IN_CHILD_MIN_BYTES)
    if defer and keep_sentences and large:
        meta = build_meta(options)  # (its errors come now, as without defer)
        return Corpus(sentences=[], alphabet={}, meta=[(piece, kind) for _, piece, kind in meta],
                      meta_ids=[i for i, _, _ in meta],
                      load=functools.partial(_load_corpus, options, progress, lines, True,
                                             entries=True))
    if not keep_sentences and large:
        # Load in a forked child and take back only the result: the
        # trainer then starts from a small, unfragmented heap instead of
        # the garbage of the reading and counting.
        # Collector off in both processes (the child and its workers
        # inherit it): the child builds lists of tuples by the hundred
        # thousand and its garbage goes when it ends; this process
        # unpickles the result, made of the same.
        # (Units packed only where the corpus is pickled.)
        with collector_paused():
            return run_in_child(_load_corpus, options, progress, lines, keep_sentences,
                                False, child_pickles(), meanwhile=meanwhile)
    corpus = _load_corpus(options, progress, lines, keep_sentences)
    if meanwhile is not None:
        meanwhile()
    return corpus


def _load_corpus(options: TrainerOptions, progress: Progress, lines: Iterable | None,
                 keep_sentences: bool, entries: bool = False, packed: bool = False) -> Corpus:
    """The corpus of ``options`` (see :func:`load_corpus`). ``entries``
    (unigram, with ``keep_sentences``): no sentences are kept but
    ``Corpus.units`` and ``Corpus.entries``, unless the sentences would
    give others (see :func:`_entries_corpus`). ``packed`` (a corpus to be
    pickled): its units may be left in the form their pickle takes (see
    :class:`Corpus`)."""
    units = None if keep_sentences else training_units(options)
    meta = build_meta(options)
    normalizer = make_normalizer(options)  # shared by both passes

    def source(progress: Progress):
        """(sentences, size): a list, or a stream when the input can be read
        again (files) and no random sample is needed."""
        stream = read_sentences(options, progress, lines)
        rereadable = lines is None and "-" not in options.input
        if not rereadable or (options.input_sentence_size > 0 and options.shuffle_input_sentence):
            raw = select(stream, options)
            return raw, sum(len(text) for text, _ in raw)
        if options.input_sentence_size > 0:
            stream = itertools.islice(stream, options.input_sentence_size)
        return stream, sum(_file_size(path) for path in options.input)

    raw, size = source(progress)
    if entries and keep_sentences and not options.pretokenization_delimiter:
        corpus = _entries_corpus(raw, size, options, meta, progress, normalizer,
                                  _describe_input(options, lines))
        if corpus is not None:
            return corpus
        if not isinstance(raw, list):  # read again, quietly
            raw, size = source(Progress(False, 2))
    result = normalize_pass(raw, options, meta, progress, keep_sentences=keep_sentences,
                            units=units, size=size, normalizer=normalizer)
    if not result.total:
        raise TrainerError("the corpus is empty: no usable sentence in %s (empty lines, lines longer "
                           "than --max_sentence_length=%d bytes and lines with U+2585 are skipped)."
                           % (_describe_input(options, lines), options.max_sentence_length))
    # sentencepiece's removal of empty sentences (normalize_pass) leaves an
    # empty list only when the one sentence read normalizes to "".
    if not (result.sentences if keep_sentences else result.nonempty or result.total > 1):
        raise TrainerError("the corpus is empty after normalization (%s)."
                           % _describe_input(options, lines))
    order = None  # the units' groups (see chars_and_order)
    if units is None:
        counts = result.counts
    else:
        counts, order = chars_and_order(result.units, normalize_workers(options, size) > 1)
    alphabet = checked_alphabet(options, counts, _describe_input(options, lines))
    unit_list = None
    if units is not None:
        if units[0] == "words" and SPACE in counts and SPACE not in alphabet:
            # "▁" itself is masked: no sentence splits any more, so the
            # units are the whole (masked) sentences. (Read again, quietly.)
            units = ("sentences",)
            if not isinstance(raw, list):
                raw, size = source(Progress(False, 2))
            result = normalize_pass(raw, options, meta, progress, keep_sentences=False,
                                    units=units, size=size, normalizer=normalizer)
            order = None
        groups = masked_groups(result.units, alphabet, counts, order)
        # (Masked, no unit holds NUL, the separator: _joined finds none.)
        unit_list = (packed and _joined(groups)) or flatten_groups(groups)
    del raw
    sentences = mask_unknown(result.sentences, alphabet, counts) if keep_sentences else []
    del result
    check_vocab_fits(options, alphabet, meta)
    return Corpus(sentences=sentences, alphabet=alphabet,
                  meta=[(piece, kind) for _, piece, kind in meta],
                  meta_ids=[i for i, _, _ in meta], units=unit_list)


def _entries_corpus(raw: Iterable[tuple[str, int]], size: int, options: TrainerOptions,
                    meta: list[tuple[int, str, int]], progress: Progress, normalizer: Normalizer,
                    where: str) -> Corpus | None:
    """Unigram's corpus without sentences: its units (``Corpus.units``) and
    seed entries (``Corpus.entries``), counted by the normalizing workers
    chunk by chunk (:func:`count_entries`), merged, and masked once per
    distinct string: the sentences never exist together, and nothing
    walks them serially.

    None when the kept sentences would give other units or entries (the
    caller then loads those): some sentence normalizes to "" (sentencepiece
    swaps the last sentence into its place, which changes what follows
    what), "▁" falls outside the alphabet (masked, it no longer splits
    words), or a sentence holds NUL (the entries' separator) or
    :data:`~subtok.symbols.END_OF_TEXT`; and when the corpus is empty (the
    caller's checks say so).
    """
    units = ("entries", options.treat_whitespace_as_suffix,
             options.allow_whitespace_only_pieces, options.split_by_whitespace)
    parts: Counter = Counter()    # (see count_entries)
    entries: Counter = Counter()
    counts: Counter = Counter()
    stitch = FollowedStitch()
    total = nonempty = 0
    counting = progress if isinstance(raw, list) else Progress(False)
    with counting.bar(total=len(raw) if isinstance(raw, list) else None,
                      desc="normalizing", unit=" lines") as bar:
        for chunk_size, chunk_units, chunk_nonempty in unit_count_chunks(
                raw, options, meta, units, size, normalizer, ENTRIES_MIN_CHUNKS):
            bar.update(chunk_size)
            total += chunk_size
            nonempty += chunk_nonempty
            chunk_parts, chunk_entries, chunk_counts, first, last, last_count = chunk_units
            del chunk_units
            joined = stitch.edge(first, last, last_count)
            if joined is not None:
                (word, follower), count = joined
                entries[word + follower] += count
            parts.update(chunk_parts)
            entries.update(chunk_entries)
            counts.update(chunk_counts)
            del chunk_parts, chunk_entries
    if not total or nonempty != total or "\x00" in counts or END_OF_TEXT in counts:
        return None
    chars = list(counts)  # (checked_alphabet takes space out of counts)
    alphabet = checked_alphabet(options, counts, where)
    if SPACE in counts and SPACE not in alphabet:
        return None
    check_vocab_fits(options, alphabet, meta)
    # The end of the text follows the last word.
    entries[stitch.pending + END_OF_TEXT] += stitch.count
    if any(char not in alphabet for char in chars):
        # NUL stays: only the separator before a next sentence (see count_entries).
        table, pattern = mask_table(alphabet, chars, nul=False)
        search = pattern.search
        for counter in (parts, entries):
            remask(counter, [key for key in counter if search(key)], table)
    # The words: "▁" + each part, without the NUL that ends a sentence's
    # last part, and those of the other entries.
    words = dict(zip(map(SPACE.__add__, parts), parts.values()))
    get = words.get
    for part in [part for part in parts if "\x00" in part]:
        count = words.pop(SPACE + part)
        word = SPACE + part[:-1]
        words[word] = get(word, 0) + count
    for word, count in entry_words(entries).items():
        words[word] = get(word, 0) + count
    units = sorted_by_count(words)
    del words
    entries = entries_of(parts, entries)
    return Corpus(sentences=[], alphabet=alphabet, meta=[(piece, kind) for _, piece, kind in meta],
                  meta_ids=[i for i, _, _ in meta], units=units, entries=entries)


def checked_alphabet(options: TrainerOptions, counts: Counter, where: str) -> dict[str, int]:
    """:func:`compute_alphabet` after sentencepiece's checks on the character
    counts (``counts`` loses "\\0" and " "); ``where`` names the input."""
    for bad in ("\x00", " "):
        counts.pop(bad, None)
    total = sum(count for char, count in counts.items() if not "\ud800" <= char <= "\udfff")
    if not total:
        # sentencepiece's all_chars_count > 0, for every model type: only
        # whitespace (or what normalization deletes) is left.
        raise TrainerError("the corpus has no characters to train on after normalization: %s "
                           "holds only whitespace or characters the normalizer removes." % where)
    if total > INT64_MAX:
        raise TrainerError("%s: the characters counted add up to %d, over %d (sentencepiece "
                           "counts in 64 bits); lower the frequencies." % (where, total, INT64_MAX))
    return compute_alphabet(options, counts)


def check_vocab_fits(options: TrainerOptions, alphabet: dict[str, int], meta: list) -> None:
    """Unigram and BPE need room for every alphabet character and meta piece."""
    if options.model_type_name in ("unigram", "bpe") and len(alphabet) + len(meta) > options.vocab_size:
        raise TrainerError(
            "Vocabulary size is smaller than required_chars. %d vs %d. Increase vocab_size or "
            "decrease character_coverage with --character_coverage option."
            % (options.vocab_size, len(alphabet) + len(meta)))


def training_units(options: TrainerOptions) -> tuple | None:
    """What ``Corpus.units`` holds for the model type: BPE's words (its
    whitespace flags) or whole sentences (no split_by_whitespace), WORD's
    words (default flags); None for CHAR (the alphabet is enough)."""
    kind = options.model_type_name
    if kind == "bpe":
        if not options.split_by_whitespace:
            return ("sentences",)
        return ("words", options.treat_whitespace_as_suffix, options.allow_whitespace_only_pieces)
    if kind == "word":
        return ("words", False, False)
    return None


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _describe_input(options: TrainerOptions, lines) -> str:
    if lines is not None:
        return "the given sentences"
    return ", ".join(options.input) or "<none>"


def words_with_counts(corpus: Corpus, options: TrainerOptions) -> list[tuple[str, int]]:
    """``SplitSentencesByWhitespace`` with the trainer's whitespace flags."""
    return count_words(corpus.sentences, options.treat_whitespace_as_suffix,
                       options.allow_whitespace_only_pieces)


__all__ = ["Corpus", "load_corpus", "build_meta", "normalize_pass", "normalize_workers",
           "unit_count_chunks", "training_units", "compute_alphabet", "checked_alphabet",
           "check_vocab_fits", "words_with_counts", "make_normalizer", "meta_pattern"]
