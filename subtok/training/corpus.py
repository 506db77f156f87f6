"""Loading a training corpus: sentencepiece's ``LoadSentences`` and friends.

Phases (``TrainerInterface::InitMetaPieces`` and ``LoadSentences``), each a
short function below:

1. :func:`build_meta` places the meta pieces (unk/bos/eos/pad, control and
   user-defined symbols, byte pieces) at their ids.
2. :func:`read_sentences` streams ``(sentence, freq)`` pairs from the input
   files (or stdin, or an iterable, or the byte range of a file that one
   Dask task counts, :class:`FileRange`), one per "\\n"-terminated line, skipping
   empty lines, lines longer than ``max_sentence_length`` bytes (one
   warning) and lines containing U+2585; ``input_format=tsv`` lines are
   ``sentence<TAB>freq``.
3. :func:`select` keeps them all, the first N, or a seeded reservoir sample
   of N (``input_sentence_size``).
4. :func:`normalize_pass` runs the model's normalizer, turns every
   meta-piece string and the ``pretokenization_delimiter`` into TAB (a hard
   boundary; 0.2.3 keeps the delimiter out of the alphabet) and drops empty
   results by swapping in the last sentence (sentencepiece's order).
5. :func:`compute_alphabet` counts characters (weighted by freq) and keeps
   the most frequent ones up to ``character_coverage`` (float32 comparison,
   required chars first).
6. Characters outside the alphabet (TAB included) become U+2585, which no
   piece may contain.

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
follows it, :func:`count_entries`), merged and masked once per distinct
string (:func:`_entries_corpus`); only where that would differ from the
kept sentences (a sentence normalizing to "", "▁" outside the alphabet,
NUL, a pretokenization delimiter) are the sentences kept.
"""

from __future__ import annotations

import functools
import itertools
import os
import random
import re
import sys
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from contextlib import closing, contextmanager
from dataclasses import dataclass, field

from subtok.collector import collector_paused
from subtok.errors import TrainerError
from subtok.float32 import f32
from subtok.normalizers.charsmap import load_rules
from subtok.normalizers.sentencepiece import Normalizer
from subtok.parallel import chunks, ordered_map, run_in_child, worker_count
from subtok.progress import input_size
from subtok.symbols import BOUNDARY, END_OF_TEXT, UNK_CHAR
from subtok.symbols import SPACE_SYMBOL as SPACE
from subtok.vocab import PieceType, byte_piece
from subtok.training.spec import TrainerOptions

_UNK_BYTES = UNK_CHAR.encode("utf-8")


# ----------------------------------------------------------------------------
# progress and messages


class Progress:
    """Progress bars (tqdm on stderr), warnings and the summary of one run.

    ``enabled=None`` shows bars only when stderr is a terminal. Bars carry
    a total (and so an ETA) wherever it is known; a phase of unknown
    length shows a live clock (:meth:`phase`). Warnings and the summary are
    printed unless ``minloglevel >= 2``, through tqdm's writer while bars
    are shown, so that a bar is redrawn below the message instead of being
    cut by it.
    """

    def __init__(self, enabled: bool | None = False, minloglevel: int = 0) -> None:
        if enabled is None:
            enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.enabled = enabled
        self.minloglevel = minloglevel

    def bar(self, iterable: Iterable | None = None, *, total: int | None = None,
            desc: str = "", unit: str = "it", unit_scale: bool = False,
            bar_format: str | None = None):
        """``tqdm(iterable)`` when enabled, else a no-op stand-in."""
        if not self.enabled:
            return _NoBar(iterable)
        from tqdm import tqdm
        return tqdm(iterable, total=total, desc=desc, unit=unit, unit_scale=unit_scale,
                    file=sys.stderr, leave=False, dynamic_ncols=True, bar_format=bar_format)

    @contextmanager
    def phase(self, desc: str):
        """A bar for a step that reports nothing while it runs: it shows
        the time spent, redrawn twice a second by a helper thread."""
        if not self.enabled:
            yield
            return
        bar = self.bar(desc=desc, bar_format="{desc}: {elapsed}")
        done = threading.Event()

        def tick() -> None:
            while not done.wait(0.5):
                bar.refresh()

        ticker = threading.Thread(target=tick, name="subtok-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
            bar.close()

    def warning(self, message: str) -> None:
        self.say("subtok: warning: %s" % message)

    def say(self, line: str) -> None:
        """Print one line on stderr (unless quiet), keeping bars intact."""
        if self.minloglevel >= 2:
            return
        if self.enabled:
            from tqdm import tqdm
            tqdm.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)


class _NoBar:
    def __init__(self, iterable) -> None:
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None


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


#: Masking makes NUL U+2585 (:func:`mask_units`), so no unit holds it.
_UNIT_SEPARATOR = "\x00"


def sorted_items(items):
    """sentencepiece's ``Sorted``: value descending, then key ascending."""
    return sorted(items, key=lambda kv: (-kv[1], kv[0]))


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
# 2. reading


def _open_input(path: str):
    """``path`` opened for reading bytes, or the one-line error naming it."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise TrainerError("%s: cannot open input file: %s." % (path, exc.strerror or exc)) from None


class FileRange:
    """The lines of a file that start in its bytes ``[start, end)``, with
    their "\\n" (the last line of the file may have none): the lines a
    worker counts when a large file is split into byte ranges
    (:mod:`subtok.dask`). A line starts at byte 0 or after a "\\n", so the
    ranges of :func:`byte_ranges` give every line of the file exactly once,
    in order, however they cut it: a range skips the rest of a line begun
    before it and reads on past its end to finish its last one.

    Given as ``lines`` to :func:`read_sentences`, its lines get the filters
    of a file given as ``input`` (the same line splitting; errors and
    warnings name ``name``, lines numbered from the range's start).
    """

    def __init__(self, path: str, start: int, end: int) -> None:
        if not 0 <= start <= end:
            raise ValueError("bad byte range %d-%d" % (start, end))
        self.path, self.start, self.end = path, start, end
        self.name = path if start == 0 else "%s (the lines starting in bytes %d-%d)" % (path, start, end)

    def __repr__(self) -> str:
        return "FileRange(%r, %d, %d)" % (self.path, self.start, self.end)

    def __iter__(self) -> Iterator[bytes]:
        handle = _open_input(self.path)
        try:
            position = self.start
            if position > 0:
                # The byte before the range: a "\\n" there makes the line at
                # ``start`` ours; otherwise the line we are in is the range
                # before's, and ours start after the next "\\n".
                handle.seek(position - 1)
                position += len(handle.readline()) - 1
            for line in handle:
                if position >= self.end:
                    break
                position += len(line)
                yield line
        except OSError as exc:
            raise TrainerError("%s: cannot read input: %s." % (self.name, exc.strerror or exc)) from None
        finally:
            handle.close()


def byte_ranges(path: str, size: int, chunk_size: int) -> list[FileRange]:
    """``path`` (``size`` bytes) cut into ranges of about ``chunk_size``
    bytes, in order; a file of at most ``chunk_size`` bytes is one range."""
    if chunk_size < 1:
        raise ValueError("chunk_size must be >= 1")
    pieces = max(1, -(-size // chunk_size))
    cuts = [size * i // pieces for i in range(pieces + 1)]
    return [FileRange(path, a, b) for a, b in zip(cuts, cuts[1:])]


def _source_lines(options: TrainerOptions, lines: Iterable | None,
                  keep_ends: bool = False) -> Iterator[tuple[str, int, bytes]]:
    """(source name, line number, raw line bytes without "\\n", or with it
    where it has one if ``keep_ends``)."""
    if lines is not None:
        name = lines.name if isinstance(lines, FileRange) else "<sentences>"
        for number, line in enumerate(lines, 1):
            if isinstance(line, str):
                line = line.encode("utf-8", "surrogateescape")
            yield name, number, line[:-1] if line.endswith(b"\n") and not keep_ends else line
        return
    if not options.input:
        raise TrainerError("--input is required: give one or more files (or - for stdin).")
    for path in options.input:
        if path == "-":
            handle, name, close = sys.stdin.buffer, "<stdin>", False
        else:
            handle, name, close = _open_input(path), path, True
        try:
            for number, line in enumerate(handle, 1):
                yield name, number, line[:-1] if line.endswith(b"\n") and not keep_ends else line
        except OSError as exc:
            raise TrainerError("%s: cannot read input: %s." % (name, exc.strerror or exc)) from None
        finally:
            if close:
                handle.close()


_INT_RE = re.compile(rb"\s*[+-]?\d+\s*\Z")
INT64_MAX = (1 << 63) - 1


def read_sentences(options: TrainerOptions, progress: Progress,
                   lines: Iterable | None = None, *, raw: bool = False) -> Iterator[tuple[str, int]]:
    """Stream (raw sentence, freq), applying ``LoadSentences``' per-line filters.

    ``raw``: text lines exactly as they are, line end included (Hugging
    Face ``tokenizers`` trains on them so), and none of sentencepiece's
    filters (length, U+2585); only empty lines are skipped.
    """
    tsv = options.input_format == "tsv"
    max_len = options.max_sentence_length if not raw else sys.maxsize
    too_long = 0
    total = input_size(options.input) if lines is None else None
    with progress.bar(total=total, desc="reading", unit="B", unit_scale=True) as bar:
        for name, number, line in _source_lines(options, lines, raw and not tsv):
            bar.update(len(line) + (not line.endswith(b"\n")))
            freq = 1
            if tsv:
                cols = line.split(b"\t")
                if len(cols) != 2:
                    raise TrainerError("%s:%d: Input format must be: word <tab> freq." % (name, number))
                line, text = cols
                if not _INT_RE.match(text):
                    raise TrainerError("%s:%d: Could not parse the frequency %r."
                                       % (name, number, text.decode("utf-8", "replace")))
                freq = int(text)
                if freq > INT64_MAX:  # spm reads it with absl::SimpleAtoi into an int64
                    raise TrainerError("%s:%d: Could not parse the frequency %r (it is over %d)."
                                       % (name, number, text.decode("utf-8", "replace"), INT64_MAX))
                if freq < 1:
                    raise TrainerError("%s:%d: the frequency must be >= 1 (got %d)." % (name, number, freq))
            if not line:
                continue
            if len(line) > max_len:
                if too_long == 0:
                    progress.warning("%s:%d: found a line longer than --max_sentence_length=%d bytes "
                                     "(%d); such lines are skipped." % (name, number, max_len, len(line)))
                too_long += 1
                continue
            if _UNK_BYTES in line and not raw:
                continue
            yield line.decode("utf-8", "surrogateescape"), freq


# ----------------------------------------------------------------------------
# 3. selection


class MT19937:
    """``std::mt19937`` (via Python's Mersenne Twister, seeded like C++)."""

    def __init__(self, seed: int) -> None:
        state = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            state.append((1812433253 * (state[-1] ^ (state[-1] >> 30)) + i) & 0xFFFFFFFF)
        self._random = random.Random()
        self._random.setstate((3, tuple(state) + (624,), None))

    def next32(self) -> int:
        return self._random.getrandbits(32)

    def uniform(self, low: int, high: int) -> int:
        """libstdc++ ``uniform_int_distribution<uint64>(low, high)`` for ranges < 2**32."""
        span = high - low + 1
        if span > 1 << 32:
            raise ValueError("range too large")
        if span == 1 << 32:
            return low + self.next32()
        product = self.next32() * span
        low_bits = product & 0xFFFFFFFF
        if low_bits < span:
            threshold = ((1 << 32) - span) % span
            while low_bits < threshold:
                product = self.next32() * span
                low_bits = product & 0xFFFFFFFF
        return low + (product >> 32)


def select(sentences: Iterable[tuple[str, int]], options: TrainerOptions) -> list[tuple[str, int]]:
    """All sentences, the first N, or a reservoir sample of N (seeded)."""
    size = options.input_sentence_size
    if size <= 0:
        return list(sentences)
    if not options.shuffle_input_sentence:
        out = []
        for item in sentences:
            out.append(item)
            if len(out) >= size:
                break
        return out
    rng = MT19937(options.seed)
    out = []
    for total, item in enumerate(sentences, 1):
        if total <= size:
            out.append(item)
            continue
        slot = rng.uniform(0, total - 1)
        if slot < size:
            out[slot] = item
    return out


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
NORMALIZE_MIN_CHUNK_CHARS = 250_000


def normalize_workers(options: TrainerOptions, size: int) -> int:
    """Worker processes of a normalization pass over about ``size``
    characters (bytes, for a file not yet read)."""
    return worker_count(options.num_threads) if size >= NORMALIZE_PARALLEL_MIN_CHARS else 1


def chunk_chars(size: int) -> int:
    """Characters per chunk of a pass over about ``size`` characters: from
    the input's size alone, never from num_threads."""
    return min(NORMALIZE_CHUNK_CHARS, max(NORMALIZE_MIN_CHUNK_CHARS, size // NORMALIZE_MIN_CHUNKS))


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


#: Characters of count-1 sentences whose words :func:`_count_units` counts in one call.
_COUNT_BATCH_CHARS = 65536


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
            if batched >= _COUNT_BATCH_CHARS:
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
    printable_plain = normalizer.printable_ascii_plain

    def plain_words(text: str) -> bool:
        if search is not None and search(text) is not None:
            return False
        if text.isascii():  # (then without "▁"; the test is free, as str knows it)
            # Printable ASCII proves it plain (printable_ascii_plain) in a
            # fraction of the time of is_plain's search for triggers.
            return (printable_plain and text.isprintable()) or is_plain(text)
        return SPACE not in text and is_plain(text)

    return plain_words


def count_followed(texts: list[str], chunk: list[tuple[str, int]], units: tuple):
    """Unigram's units with what follows them, which its seed search needs
    (see :func:`subtok.models.unigram.trainer.collect_units`): a Counter of
    (word, follower) over the non-empty ``texts`` in order, the follower
    being the next word's first character or NUL + the next sentence's
    first character; and, to stitch chunks together, the first character
    of the first sentence and the last word with its count (its follower
    is in the next chunk). ``units``: ``("followed", suffix,
    whitespace_only, split_by_whitespace)``.
    """
    out, inner, first, last, last_count, _ = _walk_followed(texts, chunk, units)
    for part, count in inner.items():
        if part[-1:] == "\x00":
            out[(SPACE + part[:-1], "\x00" + SPACE)] += count
        else:
            out[(SPACE + part, SPACE)] += count
    return out, first, last, last_count


def _walk_followed(texts: list[str], chunk: list[tuple[str, int]], units: tuple):
    """:func:`count_followed`'s walk: its pairs (word, follower) -> count,
    but those of the batched runs of sentences (see :func:`_count_run`),
    counted as parts; then its first character, last word and count, and
    the number of non-empty texts."""
    _, suffix, ws_only, split_ws = units
    out: Counter = Counter()
    first = pending = None
    pending_count = 0
    # Default flags: runs of count-1 sentences that start with "▁" (as the
    # dummy prefix makes them) and hold no NUL are joined by NUL and split
    # at "▁" in one call per batch (see _count_run), instead of a tuple
    # per word.
    fast = not suffix and not ws_only and split_ws
    inner: Counter = Counter()  # see _count_run
    run: list[str] = []
    run_chars = nonempty = 0
    for text, (_, freq) in zip(texts, chunk):
        if not text:
            continue
        nonempty += 1
        if fast and freq == 1 and text[0] == SPACE and "\x00" not in text:
            if not run:
                if pending is None:
                    first = SPACE
                else:
                    out[(pending, "\x00" + SPACE)] += pending_count
            run.append(text)
            run_chars += len(text)
            if run_chars >= _COUNT_BATCH_CHARS:
                pending, pending_count = _count_run(run, inner), 1
                run_chars = 0
            continue
        if run:
            pending, pending_count = _count_run(run, inner), 1
            run_chars = 0
        if pending is None:
            first = text[0]
        else:
            out[(pending, "\x00" + text[0])] += pending_count
        words = split_into_words(text, suffix, ws_only) if split_ws else [text]
        for i in range(len(words) - 1):
            out[(words[i], words[i + 1][0])] += freq
        pending, pending_count = words[-1], freq
    if run:
        pending, pending_count = _count_run(run, inner), 1
    return out, inner, first, pending, pending_count, nonempty


def _count_run(run: list[str], inner: Counter) -> str:
    """Count the words of ``run`` (sentences starting with "▁", without NUL)
    but its last one into ``inner``, and empty ``run``; return that last word.

    Joined by NUL and split at "▁", the sentences give "" first, then one
    part per word without its "▁": the part of a word followed by "▁"
    (the next word's first character), or by NUL + "▁" (the next sentence's
    first character) with that NUL at its end.
    """
    parts = "\x00".join(run).split(SPACE)
    run.clear()
    last = parts.pop()
    inner.update(itertools.islice(parts, 1, None))
    return SPACE + last


class FollowedStitch:
    """Joins the chunks of :func:`count_followed`, in order: the last word
    of a chunk is followed by NUL + the next chunk's first character."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.pending: str | None = None
        self.count = 0

    def edge(self, first: str | None, last: str | None,
             last_count: int) -> tuple[tuple[str, str], int] | None:
        """Take the next chunk's edges; return the (word, follower) pair
        it completes with its count, or None."""
        if first is None:
            return None
        if self.first is None:
            self.first = first
        joined = None
        if self.pending is not None:
            joined = (self.pending, "\x00" + first), self.count
        self.pending, self.count = last, last_count
        return joined

    def chunk(self, counts: Counter, first: str | None, last: str | None,
              last_count: int) -> Counter:
        """``counts`` with the pair from the previous chunk's last word added."""
        joined = self.edge(first, last, last_count)
        if joined is not None:
            counts[joined[0]] += joined[1]
        return counts

    def end(self) -> dict[tuple[str, str], int]:
        """The last word: followed by the end of the text (an empty follower)."""
        if self.pending is None:
            return {}
        return {(self.pending, ""): self.count}


def mask_followed(followed: dict[tuple[str, str], int], alphabet: dict[str, int],
                  counts: Counter) -> Counter:
    """Characters outside the alphabet masked in the words and followers of
    :func:`count_followed`'s counts (the NUL before a next sentence's
    character stays)."""
    items = list(followed.items())
    words = mask_unknown([(word, 0) for (word, _), _ in items], alphabet, counts)
    chars = mask_unknown([(follower[-1:], 0) for (_, follower), _ in items], alphabet, counts)
    out: Counter = Counter()
    for ((_, follower), count), (word, _), (char, _) in zip(items, words, chars):
        out[(word, follower[:-1] + char)] += count
    return out


def count_entries(texts: Iterable[str], chunk: list[tuple[str, int]], units: tuple):
    """What unigram's trainer takes from the normalized ``texts`` (see
    :func:`subtok.models.unigram.trainer.collect_units`), for one chunk:
    the parts of :func:`_count_run` -> count, ``word + follower`` -> count
    for the other words (the follower as in :func:`count_followed`),
    character -> count, then the first character and the last word with
    its count (see :class:`FollowedStitch`), and the number of non-empty
    texts. :func:`entries_of` makes them entries; the words are in those
    (:func:`entry_words`), but the last one. ``units``: ``("entries",
    suffix, whitespace_only, split_by_whitespace)``.
    """
    pairs, parts, first, last, last_count, nonempty = _walk_followed(
        texts, chunk, ("followed",) + units[1:])
    # The words cover the texts: their characters are the texts' ones,
    # counted once per distinct word. A part is a word without its "▁",
    # with NUL at the end of a sentence (the only NUL: no text of a run
    # holds one).
    chars = weighted_chars(parts, parts.values())
    chars.pop("\x00", None)
    if parts:
        chars[SPACE] += sum(parts.values())
    entries: dict[str, int] = {}
    words: dict[str, int] = {}
    if last is not None:
        words[last] = last_count
    # (The words straight from the pairs, not from the entries: a word
    # holding NUL must show in the characters, see _entries_corpus.)
    for (word, follower), count in pairs.items():
        words[word] = words.get(word, 0) + count
        key = word + follower
        entries[key] = entries.get(key, 0) + count
    del pairs
    chars.update(weighted_chars(words, words.values()))
    return parts, entries, chars, first, last, last_count, nonempty


def entries_of(parts: Counter, entries: dict[str, int]) -> dict[str, int]:
    """:func:`count_entries`' parts and entries as entries only."""
    # A part's entry is "▁" + part + "▁", whether it ends with NUL or not
    # (see _count_run).
    out = dict(zip(map(f"{SPACE}%s{SPACE}".__mod__, parts), parts.values()))
    get = out.get
    for key, count in entries.items():
        out[key] = get(key, 0) + count
    return out


def entry_words(entries: dict[str, int]) -> dict[str, int]:
    """The words of :func:`count_entries`' entries (whose words hold no
    NUL) with their counts: each entry's key without its follower."""
    words: dict[str, int] = {}
    get = words.get
    find = str.find
    for key, count in entries.items():
        cut = find(key, "\x00")
        word = key[:cut] if cut >= 0 else key[:-1]
        words[word] = get(word, 0) + count
    return words


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


def weighted_chars(texts: Iterable[str], freqs: Iterable[int]) -> Counter:
    """Character counts of ``texts`` weighted by ``freqs`` (texts grouped by weight)."""
    groups: dict[int, list[str]] = {}
    for text, freq in zip(texts, freqs):
        groups.setdefault(freq, []).append(text)
    counts: Counter = Counter()
    for freq, group in groups.items():
        if freq == 1:
            counts.update("".join(group))
        else:
            for char, n in Counter("".join(group)).items():
                counts[char] += n * freq
    return counts


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
                      normalizer: Normalizer | None = None) -> Iterator[tuple[int, Counter, int]]:
    """The chunk results of :func:`normalize_pass` as they come, for callers
    that merge the unit counts themselves (:mod:`subtok.training.counts`
    spills them to disk): (sentences in the chunk, unit -> weighted count,
    non-empty sentences). The chunks and their workers are those of the
    training pass, so the units are exactly the ones a trainer sees."""
    job = _make_job(options, meta, units, False, normalizer)
    workers = normalize_workers(options, size)
    results = ordered_map(_chunk_job, chunks(raw, _text_size, chunk_chars(size)), workers,
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


def mask_unknown(sentences: list[tuple[str, int]], alphabet: dict[str, int],
                 counts: Iterable[str]) -> list[tuple[str, int]]:
    """Replace every character outside ``alphabet`` by U+2585."""
    table, pattern = _mask_table(alphabet, counts)
    search = pattern.search
    return [(text.translate(table), freq) if search(text) else (text, freq)
            for text, freq in sentences]


def _mask_table(alphabet, counts: Iterable[str], nul: bool = True):
    """str.translate table of :func:`mask_unknown`, and a regex finding its
    keys; without ``nul``, NUL is left alone (where it is a separator)."""
    table = {ord(c): UNK_CHAR for c in counts if c not in alphabet}
    table[ord(BOUNDARY)] = UNK_CHAR
    if nul:
        table[0] = UNK_CHAR
    else:
        table.pop(0, None)
    table[0x20] = UNK_CHAR
    pattern = re.compile("[%s]" % "".join("\\U%08x" % c for c in sorted(table)))
    return table, pattern


def mask_units(units: Counter, alphabet: dict[str, int], counts: Iterable[str],
               groups: list[tuple[int, list[str]]] | None = None) -> list[tuple[str, int]]:
    """Masked distinct units (merged when masking makes them equal), sorted by
    (count desc, unit asc). ``groups``: see :func:`masked_groups`."""
    return _pairs(masked_groups(units, alphabet, counts, groups))


def masked_groups(units: Counter, alphabet: dict[str, int], counts: Iterable[str],
                  groups: list[tuple[int, list[str]]] | None = None) -> list[tuple[int, list[str]]]:
    """:func:`mask_units` grouped by count (as :func:`count_groups`).
    ``groups``: the units' own groups (:func:`count_groups` of ``units``),
    if made already (they are changed); masking then moves the keys it
    changes to their new groups, and nothing is sorted again."""
    if groups is None:
        groups = count_groups(units)
    table, pattern = _mask_table(alphabet, counts)
    masked = _to_mask(units, counts, pattern)
    if masked:
        groups = _remask_groups(groups, units, masked, table)
    return groups


def _to_mask(units: dict[str, int], chars: Iterable[str], pattern: "re.Pattern[str]") -> list[str]:
    """The keys of ``units`` in which ``pattern`` (:func:`_mask_table`'s)
    finds a character, in ``units``' order; ``chars``: every character of
    the keys but NUL and space (:func:`checked_alphabet`'s counts)."""
    # Usually none or a few (rare characters): one scan over all units,
    # joined by a character that none holds and the pattern never finds,
    # finds them; the separators around a match delimit its unit.
    chars = set(chars)
    separator = next(char for char in map(chr, range(1, sys.maxunicode + 1))
                     if char not in chars and char not in (BOUNDARY, " "))
    joined = separator.join(units)
    found: list[str] = []
    end = -1
    for match in pattern.finditer(joined):
        at = match.start()
        if at < end:
            continue  # in the unit found last
        end = joined.find(separator, at)
        if end < 0:
            end = len(joined)
        found.append(joined[joined.rfind(separator, 0, at) + 1:end])
    return found


def _remask(counts: dict[str, int], keys: list[str], table: dict[int, str]) -> None:
    """Replace ``keys`` of ``counts`` by their masked strings (``table``),
    adding up the counts of strings that become equal. All of them leave
    first: a masked string can then never be mistaken for a key that
    still has to be masked."""
    moved = [(key.translate(table), counts.pop(key)) for key in keys]
    for key, count in moved:
        counts[key] = counts.get(key, 0) + count


def sorted_by_count(counts: dict[str, int]) -> list[tuple[str, int]]:
    """Items sorted by (count desc, key asc), i.e. sentencepiece's ``Sorted``."""
    return _pairs(count_groups(counts))


def count_groups(counts: dict[str, int]) -> list[tuple[int, list[str]]]:
    """:func:`sorted_by_count` grouped: (count, its keys sorted), by count
    descending."""
    # Keys grouped by count, each group sorted alone: the strings are
    # compared only within a group (about half the units have count 1),
    # and compare faster alone than in (key, count) tuples.
    groups: dict[int, list[str]] = {}
    for key, count in counts.items():
        group = groups.get(count)
        if group is None:
            groups[count] = [key]
        else:
            group.append(key)
    out = []
    for count in sorted(groups, reverse=True):
        keys = groups[count]
        keys.sort()
        out.append((count, keys))
    return out


def _pairs(groups: list[tuple[int, list[str]]]) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for count, keys in groups:
        out.extend(zip(keys, itertools.repeat(count)))
    return out


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


def _remask_groups(groups: list[tuple[int, list[str]]], units: dict[str, int], keys: list[str],
                   table: dict[int, str]) -> list[tuple[int, list[str]]]:
    """``groups`` (:func:`count_groups` of ``units``) after ``keys`` of
    ``units`` are masked (:func:`_remask`), without sorting the groups
    again: only the keys that move (the masked ones, and a unit equal to
    a masked string, whose count grows) leave their group, and join
    their new one."""
    leaving = set(keys)
    moved = {key: units[key] for key in keys}
    _remask(moved, keys, table)
    for key in moved:
        if key in units and key not in leaving:
            leaving.add(key)
            moved[key] += units[key]
    # count -> (key, joins) of the keys that leave (False) or join (True) its group
    edits: dict[int, list[tuple[str, bool]]] = {}
    for key in leaving:
        edits.setdefault(units[key], []).append((key, False))
    for key, count in moved.items():
        edits.setdefault(count, []).append((key, True))
    by_count = dict(groups)
    for count, changes in edits.items():
        by_count[count] = _edited(by_count.get(count, []), changes)
    return [(count, by_count[count]) for count in sorted(by_count, reverse=True) if by_count[count]]


def _edited(keys: list[str], changes: list[tuple[str, bool]]) -> list[str]:
    """``keys`` (sorted) with ``changes`` made: (key, True) inserts a key
    it lacks, (key, False) removes one it holds; sorted, the unchanged
    keys copied in runs between the changes (found by bisection)."""
    out: list[str] = []
    start = 0
    for key, joins in sorted(changes):
        at = bisect_left(keys, key, start)
        out += keys[start:at]
        if joins:
            out.append(key)
            start = at
        else:
            start = at + 1  # keys[at] is the key
    out += keys[start:]
    return out


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
        with collector_paused():
            return run_in_child(_load_corpus, options, progress, lines, keep_sentences,
                                False, True, meanwhile=meanwhile)
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
        unit_list = (packed and _joined(groups)) or _pairs(groups)
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
                raw, options, meta, units, size, normalizer):
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
        table, pattern = _mask_table(alphabet, chars, nul=False)
        search = pattern.search
        for counter in (parts, entries):
            _remask(counter, [key for key in counter if search(key)], table)
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


# ----------------------------------------------------------------------------
# words


_PREFIX_WS_RUN = re.compile("(?<=[^%s])(?=%s)" % (SPACE, SPACE))
_SUFFIX_WS_RUN = re.compile("(?<=%s)(?=[^%s])" % (SPACE, SPACE))


def split_into_words(text: str, treat_whitespace_as_suffix: bool = False,
                     allow_whitespace_only_pieces: bool = False) -> list[str]:
    """sentencepiece's ``SplitIntoWords``.

    Prefix mode: a word starts at the beginning and at every "▁" (with
    ``allow_whitespace_only_pieces`` only at the first "▁" of a run, so the
    run sticks to the next word). Suffix mode: a word ends after every "▁"
    (with ``allow_whitespace_only_pieces`` only after the last of a run).
    """
    if not text:
        return []
    if not treat_whitespace_as_suffix:
        if allow_whitespace_only_pieces:
            return _PREFIX_WS_RUN.split(text)
        parts = text.split(SPACE)
        words = [parts[0]] if parts[0] else []
        words.extend(SPACE + p for p in parts[1:])
        return words
    if allow_whitespace_only_pieces:
        return _SUFFIX_WS_RUN.split(text)
    parts = text.split(SPACE)
    words = [p + SPACE for p in parts[:-1]]
    if parts[-1]:
        words.append(parts[-1])
    return words


def count_words(sentences: Iterable[tuple[str, int]], treat_whitespace_as_suffix: bool = False,
                allow_whitespace_only_pieces: bool = False) -> list[tuple[str, int]]:
    """Distinct words with summed counts, sorted by (count desc, word asc)."""
    counts: Counter = Counter()
    for text, freq in sentences:
        words = split_into_words(text, treat_whitespace_as_suffix, allow_whitespace_only_pieces)
        if freq == 1:
            counts.update(words)
        else:
            for word in words:
                counts[word] += freq
    return sorted_items(counts.items())


def words_with_counts(corpus: Corpus, options: TrainerOptions) -> list[tuple[str, int]]:
    """``SplitSentencesByWhitespace`` with the trainer's whitespace flags."""
    return count_words(corpus.sentences, options.treat_whitespace_as_suffix,
                       options.allow_whitespace_only_pieces)


__all__ = ["Corpus", "Progress", "load_corpus", "build_meta", "read_sentences", "select",
           "normalize_pass", "normalize_workers", "unit_count_chunks", "count_followed", "count_entries",
           "entries_of", "entry_words", "FollowedStitch", "mask_followed", "training_units", "mask_units", "compute_alphabet", "checked_alphabet", "check_vocab_fits", "weighted_chars", "chars_and_order", "count_groups", "masked_groups", "split_into_words", "count_words",
           "words_with_counts", "make_normalizer", "MT19937", "FileRange", "byte_ranges"]
