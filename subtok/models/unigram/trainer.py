"""Unigram language-model trainer (sentencepiece's ``unigram_model_trainer``).

Phases, each a function below (``unigram_model_trainer.cc``: ``MakeSeedSentencePieces``,
``RunEStep``/``RunMStep``, ``PruneSentencePieces``, ``FinalizeSentencePieces``):

1. :func:`make_seed_pieces`: every character, then the frequent substrings
   (occurring at least twice, right-maximal, valid pieces) scored
   ``frequency x length``; the best ``seed_sentencepiece_size`` of them.
   Scores become log probabilities.
2. EM rounds. ``num_sub_iterations`` times :func:`run_e_step` (expected
   piece counts by forward/backward over each unit's lattice) then
   :func:`run_m_step` (drop pieces expected less than 0.5 times, Bayesian
   "digamma" re-estimation); then :func:`prune` (drop the pieces whose
   removal costs the least likelihood, down to ``shrinking_factor`` of the
   size). Like sentencepiece 0.2.3, training stops right after the prune
   that reaches ``int(vocab_size * 1.1)`` pieces: no final EM.
3. :func:`prune_unreachable` then :func:`finalize`: all alphabet characters,
   then the best-scoring pieces up to ``vocab_size - len(meta)``, in
   (score desc, piece asc) order.

Units. With ``split_by_whitespace`` (the default) no piece can span two
words, so every distinct word is one independent lattice weighted by its
count, as sentencepiece's ``SplitSentencesByWhitespace`` does; otherwise the
units are the distinct sentences. Nothing is ever kept per occurrence.
When the trainer owns the corpus, the units and the seeds are computed
in a forked child, and the sentences are dropped: the EM workers are
forked later from this process, whose heap then never held the seed
search's garbage (see docs/performance.md, the unigram trainer's memory).
A deferred corpus (``Corpus.load``: a large input file, as
:func:`subtok.training.api.train` loads it) is read and counted in one
child, which returns the units and seed entries (each as a few large
objects: :class:`_UnitTexts`, :class:`SeedEntries`), and the seeds are
searched in a second child forked from this process: the sentences never
exist here, and the seed search's workers do not inherit the pages they
left.

Lattices. The algorithms over them (nodes, forward/backward, Viterbi) are
in :mod:`subtok.models.unigram.lattice`, the piece table in
:mod:`subtok.models.unigram.trie`. Pieces only disappear during training, so
the lattice of every unit is built once, from the seed pieces, and kept as
flat arrays (:class:`~subtok.models.unigram.lattice.UnitLattices`) by the
process that owns its chunk of units (:class:`_LatticeRunner`: long-lived
forked workers, :class:`subtok.parallel.PersistentWorkers`, or this
process); each later E-step or Viterbi pass only renumbers the piece ids.
The workers inherit the seeds' table for the build and drop it after
(see :class:`_LatticeRunner`).

Seeds. sentencepiece 0.2.3 builds a suffix array over the UTF-8 bytes of
the corpus (sentences joined by NUL, none after the last) and takes the
internal nodes of its suffix tree that fall on character boundaries, plus
the nodes that end with a NUL, minus the NUL. Here a substring is such a
node iff it occurs at least twice and the characters following its
occurrences start with at least two different UTF-8 lead bytes (U+2585
after a masked character, "▁" or the next word's first character at a
word end, NUL + the next sentence at a sentence end). Valid pieces cannot
cross words, so the suffixes are those of the distinct words (weighted by
their counts) with their followers, cut to ``max_sentencepiece_length + 2``
characters: packed into integers, sorted, and scanned for LCP intervals
(see :func:`frequent_substrings`). That finds exactly sentencepiece
0.2.3's seeds (same number, same first EM step) on the test corpora:
botchan 16112 (suffix mode 18148, no dummy prefix 15872), ja 6232,
wagahaiwa 24370, gutenberg 227539.

Arithmetic. sentencepiece keeps scores, expected counts and losses in
float32; we round to float32 where a value is stored (scores, M-step sums,
losses) but run forward/backward in doubles, in linear space
(probabilities, not logs: no exp/log per edge), rescaling by powers of two
where long units would underflow. Results are identical whatever
``num_threads``: units are cut into chunks that do not depend on it, each
chunk is summed alone, and the chunk sums are added in chunk order.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import time
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, itemgetter, xor

from subtok.errors import TrainerError
from subtok.float32 import f32, f32_sum, f32_values
from subtok.models.unigram.lattice import (DROPPED, UNKNOWN, UnitLattices, populate_marginal,
                                           unit_viterbi)
from subtok.models.unigram.trie import index_table
from subtok.parallel import (PersistentWorkers, chunk_bounds, ordered_map, run_in_child,
                             worker_count)
from subtok.symbols import END_OF_TEXT, SPACE_SYMBOL, UNK_CHAR
from subtok.training.followers import split_entry
from subtok.training.units import sorted_by_count, sorted_items, split_into_words
from subtok.training.validity import PieceValidator

LOG = logging.getLogger(__name__)

NUL = "\x00"
#: Follower of the corpus's last stretch.

#: M-step threshold on expected counts (``kExpectedFrequencyThreshold``).
EXPECTED_FREQUENCY_THRESHOLD = 0.5
#: Score of an unknown node below the lowest piece score (``kUnkPenalty``).
UNK_PENALTY = 10.0
#: Finalize: penalty step between alphabet characters that are not pieces.
MIN_SCORE_PENALTY_DELTA = 0.0001

#: Units per chunk of an EM (or Viterbi) pass, by the sum of their lengths
#: in characters (+1 each), at most. Chunks do not depend on num_threads,
#: which keeps the sums identical for any count.
EM_CHUNK_CHARS = 100_000
#: Pieces per task of :func:`prune_unreachable`'s full search for
#: alternatives, by the sum of their lengths in characters times 4 (the
#: work of each search). (The prune's search runs between the lattice
#: workers' results, in shares of its own.)
PRUNE_CHUNK_COST = 100_000
#: Suffixes per partition of the seed search (bounds its memory).
SEED_PARTITION_SUFFIXES = 50_000
#: Up to this many distinct characters, the seed search counts the
#: suffixes' first characters with one ``str.count`` each (a pass over
#: the text per character, each quicker than a ``Counter``'s per item).
FEW_CHARS = 100
#: Below this much work in a pass (characters of the units in EM, suffixes
#: in the seed search, the cost of the pieces searched), worker processes
#: are not worth it.
PARALLEL_MIN_WORK = 200_000


def lead_byte(char: str) -> int:
    """First byte of the UTF-8 encoding of ``char``."""
    cp = ord(char)
    if cp < 0x80:
        return cp
    if cp < 0x800:
        return 0xC0 | (cp >> 6)
    if cp < 0x10000:
        return 0xE0 | (cp >> 12)
    return 0xF0 | (cp >> 18)


def digamma(x: float) -> float:
    """sentencepiece's ``Digamma`` (recurrence up to 7, then the series)."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += (math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4
               + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4)
    return result


# ----------------------------------------------------------------------------
# progress


class _Reporter:
    """Sends one line per EM step / prune to ``progress`` and the logger.

    ``progress`` may be None, a callable taking a string, or an object with
    ``bar()`` (subtok's :class:`~subtok.progress.Progress`): then a
    tqdm bar counts the EM steps and shows the last line as its postfix.
    """

    def __init__(self, progress) -> None:
        self.callback = None
        self.bar = None
        if progress is None:
            return
        if hasattr(progress, "bar"):
            try:
                self.bar = progress.bar(total=None, desc="unigram EM", unit=" steps")
            except TypeError:  # pragma: no cover - other bar signatures
                self.bar = None
        elif callable(progress):
            self.callback = progress

    def log(self, message: str, step: bool = False) -> None:
        LOG.info(message)
        if self.callback is not None:
            self.callback(message)
        if self.bar is not None:
            if step:
                self.bar.update(1)
            setter = getattr(self.bar, "set_postfix_str", None)
            if setter is not None:
                setter(message, refresh=False)

    def expect(self, steps: int) -> None:
        """Give the bar its total (an estimate: the M-step may drop more)."""
        if self.bar is not None and hasattr(self.bar, "total"):
            self.bar.total = max(steps, getattr(self.bar, "n", 0))
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def expected_steps(size: int, desired: int, shrinking_factor: float, sub_iterations: int) -> int:
    """EM steps and prunes to come for ``size`` seed pieces: each round
    runs ``sub_iterations`` EM steps and one prune to
    ``max(desired, shrinking_factor * size)``, until ``desired`` is reached."""
    rounds = 1
    size = max(desired, int(shrinking_factor * size))
    while size > desired:
        size = max(desired, int(shrinking_factor * size))
        rounds += 1
    return rounds * (sub_iterations + 1)


# ----------------------------------------------------------------------------
# units


def _split_words(text: str, options) -> list[str]:
    return split_into_words(text, options.treat_whitespace_as_suffix,
                            options.allow_whitespace_only_pieces)


def _seed_parts(text: str, options) -> list[str]:
    """The stretches of a sentence that seed pieces may not cross (pretokenization)."""
    delimiter = options.pretokenization_delimiter
    if delimiter:
        return [p for p in text.split(delimiter) if p]
    return [text]


def collect_units(corpus, options) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """EM units and seed entries in one pass over the sentences.

    Returns ``(units, entries)``. ``units`` are the distinct words (or
    sentences when ``split_by_whitespace`` is off) with summed frequencies,
    in sentencepiece's order (frequency desc, string asc).

    ``entries`` maps ``stretch + follower`` to its number of occurrences
    (sentence frequencies summed; with TSV input too, as 0.2.3 does rather
    than the snapshot's "every sentence twice"). A stretch is a word cut at
    U+2585; its follower is what comes next in sentencepiece's suffix array:
    the next character of the sentence (U+2585, "▁", the next word's first
    character), or at the end of a sentence NUL plus the first character
    of the next one, or :data:`END_OF_TEXT` after the last sentence (no separator
    follows it).
    """
    if getattr(corpus, "followed", None) is not None:
        return units_from_followed(corpus.followed)
    if getattr(corpus, "entries", None) is not None:
        return corpus.units, seed_entries(corpus.entries)
    split_ws = options.split_by_whitespace
    delimiter = options.pretokenization_delimiter
    simple_prefix = (split_ws and not options.treat_whitespace_as_suffix
                     and not options.allow_whitespace_only_pieces and not delimiter)
    unit_counts: Counter = Counter()
    followed: Counter = Counter()  # stretch + follower -> count
    # Fast path (prefix "▁", one occurrence per line): count the parts
    # between "▁"s; "▁" is put back on the distinct words only.
    mid: Counter = Counter()       # "▁"-words followed by "▁" (without their "▁")
    last: Counter = Counter()      # sentence-final "▁"-words
    head_mid: Counter = Counter()  # a first word without "▁", then "▁"
    pending = None    # the previous sentence's last stretch, waiting for its follower
    pending_count = 0
    for text, freq in corpus.sentences:
        if simple_prefix and freq == 1:
            if pending is not None:
                followed[pending + NUL + text[0]] += pending_count
            parts = text.split(SPACE_SYMBOL)
            if len(parts) == 1:
                unit_counts[text] += 1
                pending, pending_count = text, 1
                continue
            if parts[0]:
                head_mid[parts[0]] += 1
            mid.update(parts[1:-1])
            last[parts[-1]] += 1
            pending, pending_count = SPACE_SYMBOL + parts[-1], 1
            continue
        em_text = text.replace(delimiter, "") if delimiter else text
        if split_ws:
            for word in _split_words(em_text, options):
                unit_counts[word] += freq
        elif em_text:
            unit_counts[em_text] += freq
        for part in _seed_parts(text, options):
            if pending is not None:
                followed[pending + NUL + part[0]] += pending_count
            pieces = _split_words(part, options) if split_ws else [part]
            for i in range(len(pieces) - 1):
                followed[pieces[i] + pieces[i + 1][0]] += freq
            pending, pending_count = pieces[-1], freq
    if pending is not None:
        followed[pending + END_OF_TEXT] += pending_count
    for counter, prefix, follower in ((mid, SPACE_SYMBOL, SPACE_SYMBOL),
                                      (head_mid, "", SPACE_SYMBOL), (last, SPACE_SYMBOL, "")):
        for part, count in counter.items():
            word = prefix + part
            unit_counts[word] += count
            if follower:
                followed[word + follower] += count
        counter.clear()
    return sorted_by_count(unit_counts), seed_entries(followed)


def units_from_followed(followed: dict[tuple[str, str], int]) -> tuple[list[tuple[str, int]], dict[str, int]]:
    """:func:`collect_units`' result from (word, follower) counts (count
    files, :func:`subtok.training.followers.count_followed`); an empty
    follower is the end of the text (:data:`END_OF_TEXT`)."""
    unit_counts: Counter = Counter()
    flat: Counter = Counter()
    for (word, follower), count in followed.items():
        unit_counts[word] += count
        flat[word + (follower or END_OF_TEXT)] += count
    return sorted_by_count(unit_counts), seed_entries(flat)


def seed_entries(followed: dict[str, int]) -> dict[str, int]:
    """Seed entries from stretch + follower counts: stretches are cut at
    U+2585 (no piece contains it), each cut part followed by U+2585."""
    entries = dict(followed)
    for key in [key for key in followed if UNK_CHAR in key]:  # usually few
        stretch, follower = split_entry(key)
        if UNK_CHAR not in stretch:
            continue
        # No key made here has U+2585 in its stretch: this key's count is
        # its own.
        count = entries.pop(key)
        pieces = stretch.split(UNK_CHAR)
        for piece in pieces[:-1]:
            if piece:
                piece += UNK_CHAR
                entries[piece] = entries.get(piece, 0) + count
        if pieces[-1]:
            key = pieces[-1] + follower
            entries[key] = entries.get(key, 0) + count
    return entries


# ----------------------------------------------------------------------------
# 1. seeds


class _ValidityClasses:
    """``is_valid`` for many substrings, one validator call per character-class pattern.

    Whether a string is a valid piece depends on its length and, for each
    character, only on: being "▁", being forbidden (U+2585, NUL, TAB,
    space, surrogate), its script and being a digit
    (``TrainerInterface::IsValidSentencePiece``). Every character
    is replaced by the first character seen with the same properties, and
    the validator is asked once per distinct pattern.
    """

    def __init__(self, validator: PieceValidator, chars) -> None:
        from subtok.training.validity import is_digit, script_of
        representative: dict = {}
        table: dict[int, str] = {}
        for char in sorted(chars):
            forbidden = char in (UNK_CHAR, NUL, "\t", " ") or "\ud800" <= char <= "\udfff"
            key = (char == SPACE_SYMBOL, forbidden, None if forbidden else script_of(char),
                   is_digit(char))
            table[ord(char)] = representative.setdefault(key, char)
        self.table = table
        self.validator = validator
        self.cache: dict[str, bool] = {}

    def __call__(self, piece: str) -> bool:
        pattern = piece.translate(self.table)
        valid = self.cache.get(pattern)
        if valid is None:
            valid = self.cache[pattern] = self.validator.is_valid(pattern)
        return valid


def _seed_partition(state: dict, pattern: str) -> tuple:
    """Suffix-tree nodes among the suffixes starting with a character of ``pattern``.

    Every suffix (cut to ``max_length + 2`` characters, zero-padded)
    becomes an integer: its dense character codes, most significant first,
    then its position in the low bits (equal suffixes keep their order, and
    the sorted positions are read straight from the integers). Sorting the
    integers sorts the suffixes;
    the bit length of the XOR of two neighbours gives their longest common
    prefix. A bottom-up scan of these LCPs enumerates the LCP intervals,
    i.e. the internal nodes of the suffix tree, with their depth. The
    integers go once the positions and LCPs are read from them (the scan
    reads the few characters it needs from ``encoded``): they are most of
    a worker's memory.

    Returns the pieces found (see :func:`_packed`).
    """
    st = state
    scan, encoded, weight_at = st["scan"], st["encoded"], st["weight_at"]
    leads, bits, max_length, is_valid = st["leads"], st["bits"], st["max_length"], st["is_valid"]
    nul_code = st["nul_code"]
    positions = array("q", map(re.Match.start, re.finditer(pattern, scan)))
    if len(positions) < 2:
        return _packed({})
    width = max_length + 2          # characters per key
    unit = bits // 8                # bytes per character
    span = width * unit
    id_bits = positions[-1].bit_length()  # (the positions are ascending)
    from_bytes = int.from_bytes
    keys = [(from_bytes(encoded[p * unit:p * unit + span], "big") << id_bits) | p
            for p in positions]
    del positions
    keys.sort()
    id_mask = (1 << id_bits) - 1
    positions = array("q", map(id_mask.__and__, keys))
    key_bits = width * bits + id_bits
    depths = [width if xb <= id_bits else (key_bits - xb) // bits
              for xb in map(int.bit_length, map(xor, keys, islice(keys, 1, None)))]
    del keys
    depths.append(0)
    try:
        cumulative = array("q", accumulate(map(weight_at.__getitem__, positions), initial=0))
    except OverflowError:  # counts beyond 64 bits (count files can give any)
        cumulative = list(accumulate(map(weight_at.__getitem__, positions), initial=0))
    if unit == 1:
        code_at = encoded.__getitem__
    else:
        def code_at(index: int) -> int:
            return from_bytes(encoded[index * unit:(index + 1) * unit], "big")
    find = scan.find
    found: dict[str, int] = {}
    stack = [(0, 0)]  # (depth, left bound)
    top = 0
    for i, depth in enumerate(depths, 1):
        left = i - 1
        while depth < top:
            node_depth, left = stack.pop()
            top = stack[-1][0]
            if node_depth < 2 or node_depth >= width:
                continue
            # The node: sorted suffixes left..i-1 share node_depth characters;
            # it is one of the byte-level tree if the next lead bytes differ.
            p = positions[left]
            if leads[code_at(p + node_depth)] == leads[code_at(positions[i - 1] + node_depth)]:
                continue
            # (A piece holding NUL, i.e. a follower, is invalid: most nodes
            # are, and are told so without a string or a call to is_valid.)
            if node_depth <= max_length and find(NUL, p, p + node_depth) < 0:
                piece = scan[p:p + node_depth]
                if is_valid(piece):
                    found[piece] = found.get(piece, 0) + cumulative[i] - cumulative[left]
            # 0.2.3 also keeps a node that ends with a sentence separator, minus it.
            if (node_depth >= 3 and code_at(p + node_depth - 1) == nul_code
                    and scan[p + node_depth - 2] != NUL):
                piece = scan[p:p + node_depth - 1]
                if is_valid(piece):
                    found[piece] = found.get(piece, 0) + cumulative[i] - cumulative[left]
        if depth > top:
            stack.append((depth, left))
            top = depth
    return _packed(found)


def _packed(found: dict[str, int]) -> tuple:
    """``found`` as three objects (the pieces joined, their lengths, their
    counts): what a worker sends back, and what the process that collects
    the partitions holds while others still run, instead of a string and
    an int per piece."""
    return ("".join(found), _int_array(map(len, found), max(map(len, found), default=0)),
            _int_array(found.values(), max(found.values(), default=0)))


def _unpacked(packed: tuple) -> Iterator[tuple[str, int]]:
    """The (piece, count) pairs of a :func:`_packed` result."""
    text, lengths, counts = packed
    return zip(_cut(text, lengths), counts)


def _cut(text: str, lengths: Iterable[int], start: int = 0, gap: int = 0) -> Iterator[str]:
    """The strings laid one after another in ``text`` from ``start``, of
    ``lengths``, ``gap`` characters apart: how the compact forms here
    (:class:`SeedEntries`, :class:`_UnitTexts`, packed seed results) hold
    many strings as one."""
    for length in lengths:
        yield text[start:start + length]
        start += length + gap


class SeedEntries:
    """Seed entries (see :func:`collect_units`) in a few large objects.

    ``text`` has every key followed by U+FFFF (the search's separator; the
    keys are cut by ``lengths``), ``lengths`` the length of each key and
    ``counts`` their counts, in the dict's order; except the keys that
    hold :data:`END_OF_TEXT`, which are in ``ends`` (a dict: usually one key, the
    corpus's last stretch), after the others. END_OF_TEXT is beyond the BMP: in
    ``text``, it would make every character take four bytes. (The order
    of the entries is not the seeds': it only orders equal suffixes.)
    This is what a child that reads the corpus hands over: the process
    that runs the seed search, and its workers, inherit a few objects
    instead of a string per entry, which they would write (their
    reference counts) and so copy.
    """

    SEPARATOR = "\uffff"

    def __init__(self, entries: dict[str, int]) -> None:
        self.ends = {key: count for key, count in entries.items() if END_OF_TEXT in key}
        ends = self.ends
        self.text = self.SEPARATOR.join(chain((k for k in entries if k not in ends), ("",)))
        self.lengths = array("I", (len(k) for k in entries if k not in ends))
        self.counts = _int_array((c for k, c in entries.items() if k not in ends),
                                 max(entries.values(), default=0))

    def __len__(self) -> int:
        return len(self.lengths) + len(self.ends)

    def items(self) -> Iterator[tuple[str, int]]:
        return chain(zip(_cut(self.text, self.lengths, gap=len(self.SEPARATOR)), self.counts),
                     self.ends.items())


def _int_array(values, top: int) -> "array | list[int]":
    """``values`` (none above ``top``) in the smallest array that holds
    them (a list beyond 64 bits)."""
    for code in "BHIQ":
        if top < 1 << 8 * array(code).itemsize:
            return array(code, values)
    return list(values)


def frequent_substrings(entries: "dict[str, int] | SeedEntries", max_length: int,
                        validator: PieceValidator, num_threads: int = 1) -> list[tuple[str, int]]:
    """The seed substrings with their counts, by (count desc, string asc).

    See :func:`substring_counts`.
    """
    return sorted_by_count(substring_counts(entries, max_length, validator, num_threads))


def substring_counts(entries: "dict[str, int] | SeedEntries", max_length: int,
                     validator: PieceValidator, num_threads: int = 1) -> dict[str, int]:
    """The seed substrings with their counts (in no particular order).

    ``entries`` maps ``stretch + follower`` to a count (see
    :func:`collect_units`; a dict or :class:`SeedEntries`). A substring of a
    stretch is a seed when it has
    2 .. ``max_length`` characters, is a valid piece, and is a node of the
    byte-level suffix tree of the corpus that ends on a character boundary:
    its occurrences are followed by characters with at least two different
    UTF-8 lead bytes. sentencepiece 0.2.3 also takes a node that ends with
    a sentence separator, without the separator: a sentence ending that
    occurs at least twice before sentences starting with different lead
    bytes (never with the dummy prefix "▁", always there). A string found
    both ways gets the sum of the two counts (0.2.3's scores add up).

    Suffixes are split by their first character into independent
    partitions (no node spans two), which run in up to ``num_threads``
    worker processes when they are large.
    Layout: all entries are joined, each followed by one separator
    position, and ``max_length + 2`` padding positions end the whole.
    ``scan`` has the stretches and NUL elsewhere (so no suffix starts and
    no piece extends there); ``encoded`` has the dense code of every
    character, follower included, and 0 for the separators and padding.
    A suffix's key may read past its separator into the next entry: two
    suffixes equal up to their separators then differ, but every node
    deeper than a separator holds a NUL in ``scan`` and is not a valid
    piece, and the nodes above it have the same suffixes either way.
    """
    if not entries:
        return {}
    if not isinstance(entries, SeedEntries):
        entries = SeedEntries(entries)
    padding = max_length + 2
    separator = SeedEntries.SEPARATOR
    scan, weight_at = _scan_layout(entries, padding)
    # ``encoded`` in the order of ``entries.items()``: the keys of ``text``,
    # those of ``ends``, the padding.
    parts = (entries.text, separator.join(chain(entries.ends, ("",))), separator * padding)
    chars = sorted(set().union(*parts) - {separator} | {NUL})
    code_of = {c: n + 1 for n, c in enumerate(chars)}   # 0 pads the keys
    leads = [-1] + [-2 if c == END_OF_TEXT else lead_byte(c) for c in chars]
    top = len(chars) + 1
    bits = 8 if top <= 0x100 else 16 if top <= 0x10000 else 32
    table = {ord(c): n for c, n in code_of.items()}
    table[ord(separator)] = 0
    if bits == 8:
        encoded = b"".join(part.translate(table).encode("latin-1") for part in parts)
    else:
        codec = "utf-16-be" if bits == 16 else "utf-32-be"
        encoded = b"".join(part.translate(table).encode(codec, "surrogatepass") for part in parts)
    del parts
    # Partitions by first character, balanced by suffix count.
    if len(chars) <= FEW_CHARS:
        starts = {c: n for c in chars if c != NUL for n in (scan.count(c),) if n}
    else:
        starts = Counter(scan)
        starts.pop(NUL, None)
    total = sum(starts.values())
    groups = max(1, -(-total // SEED_PARTITION_SUFFIXES))
    bins: list[list[str]] = [[] for _ in range(groups)]
    loads = [0] * groups
    for char, n in sorted_items(starts.items()):
        g = loads.index(min(loads))
        bins[g].append(char)
        loads[g] += n
    tasks = ["[%s]" % "".join(re.escape(c) for c in sorted(b)) for b in bins if b]
    is_valid = _ValidityClasses(validator, chars)
    state = dict(scan=scan, encoded=encoded, weight_at=weight_at, leads=leads, bits=bits,
                 max_length=max_length, is_valid=is_valid, nul_code=code_of[NUL])
    # The partitions' pieces are unpacked once the workers are gone.
    parts = list(_ordered(_seed_partition, tasks, total, num_threads, state))
    del state, scan, encoded, weight_at
    # A piece starts with a character of its partition's (the first of
    # the suffixes of its node): no two partitions find the same piece.
    found: dict[str, int] = {}
    for part in parts:
        found.update(_unpacked(part))
    del parts
    return found


def _scan_layout(entries: SeedEntries, padding: int) -> "tuple[str, array | list[int]]":
    """:func:`substring_counts`' ``scan`` and ``weight_at`` for ``entries``:
    every key's stretch, then NUL for its follower and separator, and the
    key's count at each of those positions; ``padding`` NULs (count 0) end
    them."""
    text, lengths, counts = entries.text, entries.lengths, entries.counts
    weight_at = array(counts.typecode) if isinstance(counts, array) else []
    # The keys of ``text`` are made over with C-level passes when each is
    # what the search's own entries are (not empty, no separator inside,
    # a NUL only as the first of a two-character follower): the follower
    # and separator are the last two positions of a key without NUL, the
    # last three of one with it.
    with_nul = without_nul = -1
    if text.count(SeedEntries.SEPARATOR) == len(lengths) and 0 not in lengths:
        scan, with_nul = re.subn("(?s)\x00.\uffff", NUL * 3, text)
        scan, without_nul = re.subn("(?s).\uffff", NUL * 2, scan)
    if with_nul == text.count(NUL) and with_nul + without_nul == len(lengths):
        # Each count repeated over its key and separator.
        if isinstance(counts, array):
            size = counts.itemsize
            packed = counts.tobytes()
            weight_at.frombytes(b"".join(map(bytes.__mul__,
                                             map(packed.__getitem__,
                                                 map(slice, range(0, len(packed), size),
                                                     range(size, len(packed) + size, size))),
                                             map((1).__add__, lengths))))
        else:
            weight_at.extend(chain.from_iterable(map(repeat, counts,
                                                     map((1).__add__, lengths))))
        parts = [scan]
        keys: Iterable[tuple[str, int]] = entries.ends.items()
    else:
        parts = []
        keys = entries.items()
    # (The keys of ``ends``, or all of them for other entries: a batch of
    # strings at a time, none per entry living longer than its batch.)
    masks = {1: NUL * 2, 2: NUL * 3}  # follower and separator, by follower length
    batch: list[str] = []
    for key, count in keys:
        stretch, follower = split_entry(key)
        batch.append(stretch)
        batch.append(masks[len(follower)])
        weight_at.extend(repeat(count, len(key) + 1))
        if len(batch) >= 8192:
            parts.append("".join(batch))
            batch.clear()
    batch.append(NUL * padding)
    weight_at.extend(repeat(0, padding))
    parts.append("".join(batch))
    del batch
    return "".join(parts), weight_at


def make_seed_pieces(corpus, options, entries: "dict[str, int] | SeedEntries",
                     validator: PieceValidator, num_threads: int = 1) -> list[tuple[str, float]]:
    """Seed pieces with log-probability scores (``MakeSeedSentencePieces``).

    Characters first (every character of the corpus, ``Sorted`` by count),
    then the frequent substrings of :func:`frequent_substrings` that are
    valid pieces, by score ``count x length`` (desc; ties by string), at
    most ``seed_sentencepiece_size`` of them. ``seed_sentencepieces_file``
    (``piece<TAB>freq`` lines) replaces the substrings. Scores are
    ``log(v) - log(sum v)`` with the sum in float32.
    """
    names, scores = _seed_columns(corpus, options, entries, validator, num_threads)
    return list(zip(names, scores))


def _seed_columns(corpus, options, entries: "dict[str, int] | SeedEntries",
                  validator: PieceValidator, num_threads: int) -> tuple[list[str], array]:
    """:func:`make_seed_pieces`' pieces and scores (an ``array("d")``)."""
    chars = {c: n for c, n in corpus.alphabet.items() if n > 0 and c not in (UNK_CHAR, NUL)}
    seeds: list[tuple[str, float]] = sorted_items(chars.items())
    size = options.seed_sentencepiece_size
    if options.seed_sentencepieces_file:
        extra = _read_seed_file(options.seed_sentencepieces_file, validator)
        seeds = sorted_items(seeds + extra)[:size]
    else:
        # One dict, scored in place, and one sorted list: this is the
        # seed search's peak once its workers are gone.
        found = substring_counts(entries, options.max_sentencepiece_length, validator,
                                 num_threads)
        for piece, count in found.items():
            found[piece] = count * len(piece)
        candidates = sorted_by_count(found)
        del found
        del candidates[size:]
        seeds.extend(candidates)
        del candidates
    # The sum rounded as it goes (f32_sum); the scores rounded in one pass
    # as they are stored (f32_values), which casts the same way.
    total = f32_sum(map(itemgetter(1), seeds))
    logsum = f32(math.log(total))
    scores = array("d", f32_values(map(float.__sub__, map(math.log, map(itemgetter(1), seeds)),
                                       repeat(logsum))))
    return list(map(itemgetter(0), seeds)), scores


def _read_seed_file(path: str, validator: PieceValidator) -> list[tuple[str, int]]:
    """``piece<TAB>freq`` lines: the valid pieces with score ``freq x length``."""
    extra = []
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            for number, line in enumerate(handle, 1):
                fields = line.rstrip("\n").split("\t")
                if len(fields) == 1 and not fields[0]:
                    continue
                try:
                    freq = int(fields[1])
                except (IndexError, ValueError):
                    raise TrainerError("%s:%d: expected piece<TAB>freq in "
                                       "--seed_sentencepieces_file." % (path, number)) from None
                if validator.is_valid(fields[0]):
                    extra.append((fields[0], freq * len(fields[0])))
    except OSError as error:
        raise TrainerError("%s: cannot read --seed_sentencepieces_file: %s."
                           % (path, error.strerror)) from None
    return extra


# ----------------------------------------------------------------------------
# lattices


class _Model:
    """The current pieces as the lattice code needs them.

    ``table`` (built on first use: only building lattices and the prune's
    alternatives need it) maps every piece to its index
    (:func:`~subtok.models.unigram.trie.index_table`); a scan from one
    position goes up to :attr:`max_length`.

    Everything else is computed on first use too, where it is used: the
    model of the seeds is built in this process with its table and its
    probabilities (an array), before the lattice workers fork and share
    them (see :class:`_LatticeRunner`).
    """

    def __init__(self, pieces: "Sequence[tuple[str, float]]") -> None:
        self.pieces = pieces
        self.size = len(pieces)
        # sentencepiece's training model leaves unk_id at 0: unknown nodes
        # count for piece 0.
        self.unk_index = 0

    @cached_property
    def scores(self) -> list[float]:
        return [score for _, score in self.pieces]

    @cached_property
    def node_probs(self) -> array:
        """Probabilities by node id: every piece's, then DROPPED's (0) and
        UNKNOWN's (from the end). Doubles in an array rather than a list
        of float objects: what a worker keeps and is sent holds no float
        object per piece (after the first pass, the lattice code reads a
        list made for each chunk's run, which is quicker to read from)."""
        return array("d", chain((math.exp(score) for _, score in self.pieces),
                                (0.0, self.unk_prob)))

    @cached_property
    def max_length(self) -> int:
        return max((len(p) for p, _ in self.pieces), default=1)

    @cached_property
    def unk_score(self) -> float:
        return f32(min(score for _, score in self.pieces) - UNK_PENALTY)

    @cached_property
    def unk_prob(self) -> float:
        return math.exp(self.unk_score)

    @cached_property
    def node_scores(self) -> list[float]:
        """Scores by node id: UNKNOWN and DROPPED index them from the end."""
        return self.scores + [-math.inf, self.unk_score]

    @cached_property
    def table(self) -> dict[str, int]:
        return index_table(piece for piece, _ in self.pieces)


class _CompactPieces(Sequence):
    """Pieces with scores, read-only, as one string and two arrays.

    What the seed child sends back and what the lattice workers inherit:
    a list of (str, float) tuples is three objects per piece, which the
    parent frees as EM goes on and so writes to pages the workers still
    hold (each then kept twice); three large objects are never written.
    Items are made as they are read.
    """

    def __init__(self, pieces: "Iterable[tuple[str, float]]") -> None:
        names: list[str] = []
        scores = array("d")
        for piece, score in pieces:
            names.append(piece)
            scores.append(score)
        self._fill(names, scores)

    @classmethod
    def from_columns(cls, names: list[str], scores: array) -> "_CompactPieces":
        """The pieces ``names`` with ``scores`` (an ``array("d")``, taken as it is)."""
        pieces = cls.__new__(cls)
        pieces._fill(names, scores)
        return pieces

    def _fill(self, names: list[str], scores: array) -> None:
        self.scores = scores
        self.text = "".join(names)
        self.ends = _int_array(accumulate(map(len, names)), len(self.text))

    def __len__(self) -> int:
        return len(self.scores)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        start = self.ends[index - 1] if index > 0 else 0
        return self.text[start:self.ends[index]], self.scores[index]

    def __iter__(self) -> Iterator[tuple[str, float]]:
        return zip(self.names(), self.scores)

    def names(self) -> Iterator[str]:
        """The pieces' strings, in order."""
        text = self.text
        return map(text.__getitem__, map(slice, chain((0,), self.ends), self.ends))


def _alternatives_range(shared: tuple, bounds: tuple[int, int]) -> list:
    """``NBest(2)`` verdicts for pieces ``lo..hi-1`` (see :func:`piece_alternatives`)."""
    model, pieces = shared
    lo, hi = bounds
    return _alternatives_of(AlternativeSearch(model), pieces, range(lo, hi))


def _alternatives_of(search: "AlternativeSearch", pieces, indices) -> list:
    """``search`` of the pieces at ``indices``, in that order; searched in
    string order, where each piece shares the prefix columns of the last."""
    verdicts = dict.fromkeys(indices)
    for i in sorted(verdicts, key=lambda i: pieces[i][0]):
        verdicts[i] = search(pieces[i][0])
    return list(verdicts.values())


def piece_alternatives(model: _Model, piece: str):
    """How ``piece`` would be segmented without itself (``NBest(2)`` on its string).

    Returns None when its lattice has a single path (a one-character piece:
    always kept, no alternative), False when its best segmentation is not
    the piece itself (never chosen: removable), else the ids of the best
    segmentation that does not use it (the second best path: the Viterbi
    path of its lattice without the piece's own node). On equal scores the
    piece itself wins, as the Viterbi prefers the longest node.
    """
    return AlternativeSearch(model)(piece)


class AlternativeSearch:
    """:func:`piece_alternatives` for many pieces, best given in string order.

    The Viterbi of a piece's lattice (:func:`~subtok.models.unigram.lattice.unit_viterbi`
    over :func:`~subtok.models.unigram.lattice.populate_nodes`) has, at
    every position j before the end, the best path of the prefix of length
    j, whatever follows it: only nodes ending at or before j reach it. So
    the columns of a prefix are computed once and kept on a stack while the
    next pieces share it (strings in sorted order share their common
    prefix with the previous one), and a column j looks up only the j
    strings ending at j. The nodes ending at j are offered by begin, and
    only a strictly larger sum replaces, as in ``unit_viterbi``: the same
    sums, the same ties.
    """

    def __init__(self, model: _Model) -> None:
        self.model = model
        self.get = model.table.get
        self.scores = model.node_scores
        self.text = ""
        # Column j of self.text: its best sum, and the (begin, piece id) of
        # the last node of that path.
        self.best = [0.0]
        self.back: list = [None]

    def __call__(self, piece: str):
        n = len(piece)
        if n == 1:
            return None
        get = self.get
        own = get(piece, -1)
        if own < 0:
            return False
        # Columns of the common prefix with the last piece are kept.
        last = self.text
        shared = 0
        limit = min(n - 1, len(last))
        while shared < limit and piece[shared] == last[shared]:
            shared += 1
        scores, best, back = self.scores, self.best, self.back
        del best[shared + 1:], back[shared + 1:]
        for j in range(shared + 1, n + 1):
            # Column j: the nodes ending at j by begin, the one-character
            # node last; at the end (j == n) without the piece's own node.
            top, node = -math.inf, None
            for i in range(0 if j < n else 1, j - 1):
                k = get(piece[i:j])
                if k is not None:
                    v = best[i] + scores[k]
                    if v > top:
                        top, node = v, (i, k)
            k = get(piece[j - 1])
            if k is None:
                k = UNKNOWN
            v = best[j - 1] + scores[k]
            if v > top:
                top, node = v, (j - 1, k)
            if j < n:
                best.append(top)
                back.append(node)
        # The piece's own column, for the pieces it is a prefix of: its
        # own node (begin 0) comes first and keeps a tie.
        mine = best[0] + scores[own]
        if top > mine:
            best.append(top)
            back.append(node)
        else:
            best.append(mine)
            back.append((0, own))
        self.text = piece
        if f32(top) > self.model.scores[own]:
            return False
        unk_index = self.model.unk_index
        path = []
        while True:
            i, k = node
            path.append(unk_index if k == UNKNOWN else k)
            if i == 0:
                break
            node = back[i]
        path.reverse()
        return path


# ----------------------------------------------------------------------------
# running chunks, in this process or in forked workers


def _ordered(func, tasks: list, work: int, num_threads: int, shared) -> Iterator:
    """``func(shared, task)`` for every task, in task order: in up to
    ``num_threads`` forked workers when ``work`` pays for them."""
    workers = worker_count(num_threads, len(tasks)) if work >= PARALLEL_MIN_WORK else 1
    return ordered_map(func, tasks, workers, shared=shared)


def _length_cost(length: int) -> int:
    """A unit's share of a chunk: its length in characters, plus one."""
    return length + 1


class _UnitTexts:
    """The units as one string, their lengths and their weights (arrays).

    What the lattice workers inherit: a list of (str, int) tuples costs a
    few objects per unit, and a forked worker that reads them writes their
    reference counts, so every page it reads becomes its own copy; one
    string and two arrays are a few large objects, read without copying.
    """

    def __init__(self, units: list[tuple[str, int]]) -> None:
        names = list(map(itemgetter(0), units))
        self.text = "".join(names)
        # (The smallest arrays that hold them: every lattice worker shares
        # them. Each column is made once, then measured and packed.)
        lengths = list(map(len, names))
        del names
        self.lengths = _int_array(lengths, max(lengths, default=0))
        del lengths
        weights = list(map(itemgetter(1), units))
        self.weights = _int_array(weights, max(weights, default=0))

    def texts(self, lo: int, hi: int, start: int) -> list[str]:
        """The texts of units ``lo..hi-1``; ``start`` is where unit ``lo`` begins in :attr:`text`."""
        return list(_cut(self.text, self.lengths[lo:hi], start))


class _LatticeRunner:
    """EM passes over the units, with the lattices cached in long-lived workers.

    Units are cut into chunks that do not depend on ``num_threads``; each
    chunk is a task of :class:`~subtok.parallel.PersistentWorkers`, whose
    store keeps the chunk's lattices between passes (with one worker or
    without fork, everything stays in this process). Each chunk is summed
    alone and the chunk sums are added in chunk order, so the result is
    the same whatever the number of workers.

    The workers are forked by the first pass, which builds the lattices
    (and runs the first E-step on them) from the seeds' table: they
    inherit it, and drop it once their chunks are built, as this process
    does at the end of that pass. The table is built in the order a dict
    frees its entries (:func:`~subtok.models.unigram.trie.index_table`),
    so dropping it gives its memory back as it goes rather than copying
    it first; what the workers add up is kept in arrays, which leave no
    float objects behind. So the later passes run in workers that hold
    their lattices and little else (see docs/performance.md, d19mem7).
    """

    def __init__(self, units: "list[tuple[str, int]] | _UnitTexts", num_threads: int) -> None:
        if not isinstance(units, _UnitTexts):
            units = _UnitTexts(units)
        # An even number of chunks of equal cost: workers take every N-th
        # chunk, so two get equal shares (chunks of EM_CHUNK_CHARS and a
        # small last one left one worker a whole chunk behind the other).
        self.total_chars = sum(map(_length_cost, units.lengths))
        count = max(1, -(-self.total_chars // EM_CHUNK_CHARS))
        count += count % 2
        self.chunks = chunk_bounds(units.lengths, _length_cost,
                                   max(1, -(-self.total_chars // count)))
        # Where each chunk's first unit begins in the joined text.
        starts = [0]
        for lo, hi in self.chunks[:-1]:
            starts.append(starts[-1] + sum(units.lengths[lo:hi]))
        self.total_weight = sum(units.weights)
        self.count = len(units.lengths)
        workers = 1
        if self.total_chars >= PARALLEL_MIN_WORK:
            workers = worker_count(num_threads, len(self.chunks))
        self.workers = PersistentWorkers(_do_chunk, len(self.chunks), workers,
                                         shared=(units, self.chunks, starts))
        #: What the lattices' piece ids refer to: the strings of the pieces
        #: of the last pass (nothing before the first).
        self.pieces: Iterable[str] | None = None

    def _mapping(self, pieces: "Sequence[tuple[str, float]]") -> array:
        """Old piece id -> new id (or UNKNOWN, DROPPED), as the workers
        get it: an array of ints, not a list (which each worker would
        unpickle as an int object per old piece, held through the pass)."""
        index = {piece: i for i, (piece, _) in enumerate(pieces)}
        mapping = array("i", [index.get(p, UNKNOWN if len(p) == 1 else DROPPED)
                              for p in self.pieces])
        mapping.extend((DROPPED, UNKNOWN))  # indices -2 and -1 map to themselves
        return mapping

    def run(self, kind: str, model: _Model, pieces: "Sequence[tuple[str, float]]"):
        """One pass with the model of ``pieces``: yield every chunk's result in chunk order.

        ``kind`` "expected": (expected counts, sum of w * log Z); "viterbi":
        (Viterbi frequencies, token count). The first pass builds the
        lattices (and must be "expected"); give it the pieces compactly
        (:class:`_CompactPieces`, as the seeds are).
        """
        if self.pieces is None:
            self.pieces = pieces.names() if isinstance(pieces, _CompactPieces) else [
                p for p, _ in pieces]
            # Begun at once, the job passed fresh: the workers inherit the
            # model and its table (built here, once) and each drops it once
            # its chunks are built; this process holds it to the end of the
            # pass (``hold``), so that it does not write to the table's
            # pages (freeing it) while the workers still read them, which
            # would copy them (see PersistentWorkers.start).
            return self.workers.start(("build", _table_built(_Model(pieces))), hold=True)
        mapping = self._mapping(pieces)
        if kind == "expected":
            job = ("expected", mapping, model.node_probs, model.max_length)
        else:
            # (An array: a list would be unpickled as a float object per
            # piece in each worker.)
            job = ("viterbi", mapping, array("d", model.node_scores))
        self.pieces = [p for p, _ in pieces]
        # Begun at once: the caller may prepare what it does beside the
        # workers (the prune's search) while they run.
        return self.workers.start(job)

    def close(self) -> None:
        """Stop the workers and drop the lattices."""
        self.workers.close()
        self.pieces = None


def _table_built(model: _Model) -> _Model:
    """``model`` with what every lattice worker reads of it made here,
    once, before they fork (and share it)."""
    model.table, model.node_probs, model.max_length
    return model


def _build_chunk(shared: tuple, number: int, model: _Model) -> tuple[UnitLattices, array, float]:
    """The lattices of chunk ``number`` from the pieces of ``model``, its
    expected counts and its sum of w * log Z (the first E-step, run on
    each unit's nodes as they are built)."""
    units, chunks, starts = shared
    lo, hi = chunks[number]
    lengths, weights = units.lengths[lo:hi], units.weights[lo:hi]
    probs = model.node_probs  # (made before the fork, see _table_built)
    max_length = model.max_length
    values = _zeros(len(probs))
    total = 0.0

    def e_step(u: int, nodes: list) -> None:
        nonlocal total
        weight = weights[u]
        total += weight * populate_marginal(nodes, lengths[u], weight, probs, values, max_length)

    lattices = UnitLattices(units.texts(lo, hi, starts[number]), model.table, max_length, e_step)
    size = len(probs) - 2
    values[0] += values[-1]  # unknown nodes count for piece 0
    return lattices, values[:size], total


def _zeros(size: int) -> array:
    """Sums for ``size`` pieces: doubles in an array, not a float object
    each (as quick to add to, and a worker holds one per piece)."""
    return array("d", bytes(8 * size))


def _do_chunk(shared: tuple, store: dict, number: int, job: tuple):
    """One job on chunk ``number`` (building it first): its result."""
    kind = job[0]
    if kind == "build":
        store[number], values, total = _build_chunk(shared, number, job[1])
        return values, total
    units, chunks, _ = shared
    lo, hi = chunks[number]
    lengths, weights = units.lengths[lo:hi], units.weights[lo:hi]
    total = 0.0
    lattices = store[number]
    lattices.renumber(job[1])
    if kind == "expected":
        # A list while the chunk runs: reading a float from it makes no
        # new object, as reading from the array does, twice per node.
        # (Not in the first pass, whose seed pieces are the most: one
        # float object each would add to the workers' peak.)
        probs, max_length = list(job[2]), job[3]
    else:
        scores = job[2]
    size = len(probs if kind == "expected" else scores) - 2
    values = _zeros(size + 2)
    if kind == "expected":
        for u, (n, weight) in enumerate(zip(lengths, weights)):
            total += weight * populate_marginal(lattices.nodes(u), n, weight, probs,
                                                values, max_length)
    else:
        tokens = 0
        for u, (n, weight) in enumerate(zip(lengths, weights)):
            path, _ = unit_viterbi(lattices.nodes(u), n, scores)
            for k in path:
                values[k] += weight
            tokens += len(path) * weight
        total = tokens
    values[0] += values[-1]  # unknown nodes count for piece 0
    return values[:size], total


# ----------------------------------------------------------------------------
# 2. EM


def run_e_step(model: _Model, pieces: list[tuple[str, float]],
               lattices: "_LatticeRunner") -> tuple[array, float]:
    """Expected count of every piece and the objective (``RunEStep``).

    For every unit: forward/backward over its lattice (all pieces of the
    model, plus an unknown node counting for piece 0 where no one-character
    piece starts); each node adds ``freq * P(node)`` to its piece. The
    objective is the mean negative log likelihood per unit occurrence.
    """
    # Sums in an array of doubles (the same additions, in chunk order):
    # a list would hold a float object per piece in this process while the
    # workers run.
    expected = _zeros(model.size)
    loglik = 0.0
    for values, part in lattices.run("expected", model, pieces):
        expected = array("d", map(add, expected, values))
        loglik += part
    return expected, -loglik / lattices.total_weight


def run_m_step(pieces: list[tuple[str, float]],
               expected: "Sequence[float]") -> list[tuple[str, float]]:
    """Drop pieces expected < 0.5 times; score = digamma(count) - digamma(sum)."""
    # Rounded to float32 by f32_values, which casts as f32 does, in one C
    # pass rather than a call per piece (this runs while every lattice
    # worker waits for the next pass).
    counts = f32_values(expected)
    kept = [not count < EXPECTED_FREQUENCY_THRESHOLD for count in counts]
    counts = f32_values(compress(counts, kept))
    total = f32_sum(counts)
    logsum = f32(digamma(total))
    scores = f32_values([digamma(count) - logsum for count in counts])
    return list(zip(compress(map(itemgetter(0), pieces), kept), scores))


def _piece_cost(entry: tuple[str, float]) -> int:
    return len(entry[0]) * 4


def _piece_ranges(pieces: list[tuple[str, float]], parts: int) -> list[tuple[int, int]]:
    """``pieces`` cut into ``parts`` consecutive ranges of about equal
    :func:`_piece_cost` (the prune's share of each lattice chunk)."""
    cumulative = list(accumulate(map(_piece_cost, pieces)))
    total = cumulative[-1] if cumulative else 0
    cuts = [0] + [bisect_left(cumulative, total * k // parts) for k in range(1, parts)]
    cuts.append(len(pieces))
    return list(zip(cuts, cuts[1:]))


def _alternatives(model: _Model, pieces: list[tuple[str, float]], num_threads: int) -> list:
    """:func:`piece_alternatives` of every piece, in chunks of pieces (in
    worker processes when they are many)."""
    model.table  # built once, before workers fork
    tasks = chunk_bounds(pieces, _piece_cost, PRUNE_CHUNK_COST)
    verdicts: list = []
    for part in _ordered(_alternatives_range, tasks, sum(map(_piece_cost, pieces)), num_threads,
                         (model, pieces)):
        verdicts.extend(part)
    return verdicts


def prune(pieces: list[tuple[str, float]], model: _Model,
          lattices: "_LatticeRunner", desired: int,
          shrinking_factor: float) -> tuple[list[tuple[str, float]], int]:
    """Keep the pieces whose removal would cost the most (``PruneSentencePieces``).

    Every piece's best segmentation without itself (:func:`piece_alternatives`)
    stands in for it; with Viterbi frequencies ``freq`` over all units, the
    loss of removing piece i is ``F * (log p_i - sum_alt log p'_j)`` where
    ``F = freq_i / sum(unit freqs)`` and ``p'`` re-assigns ``freq_i`` to the
    alternatives. Pieces never used are dropped, pieces without an
    alternative kept, then candidates by loss (desc) until
    ``max(desired, shrinking_factor * size)``. Returns the pieces and the
    Viterbi token count. The lattice workers are the only workers.
    """
    # The search for alternatives runs here, a share before each chunk's
    # Viterbi result is taken, while the lattice workers run the chunks: no
    # other worker is forked for it (see docs/performance.md, d19em), and
    # the pass is begun before the table is built (the workers do not need
    # it), so that none of this search waits for the workers, or they for it.
    results = lattices.run("viterbi", model, pieces)
    # In string order, where each piece shares the columns of the last one's
    # prefix (see AlternativeSearch).
    order = sorted(range(len(pieces)), key=lambda i: pieces[i][0])
    ranges = _piece_ranges([pieces[i] for i in order], max(1, len(lattices.chunks)))
    search = AlternativeSearch(model)
    freq = _zeros(model.size)  # (an array, as run_e_step's sums)
    tokens = 0
    alternatives: list = [None] * len(pieces)
    shares = iter(ranges)

    def search_share(share: tuple[int, int]) -> None:
        lo, hi = share
        for i in order[lo:hi]:
            alternatives[i] = search(pieces[i][0])

    search_share(next(shares, (0, 0)))
    for part, count in results:  # (taken to the end: that ends the pass)
        freq = array("d", map(add, freq, part))
        tokens += count
        search_share(next(shares, (0, 0)))
    vsum = f32(lattices.total_weight)
    freq = f32_values(freq)  # every frequency is read rounded to float32
    total = f32(sum(freq))
    logsum = f32(math.log(total))
    log = math.log
    kept: list[tuple[str, float]] = []
    candidates: list[tuple[int, float]] = []
    for i, (entry, alt) in enumerate(zip(pieces, alternatives)):
        fi = freq[i]
        if fi == 0 or alt is False:
            continue
        if not alt:
            kept.append(entry)
            continue
        share = f32(fi / vsum)
        logprob_sp = f32(log(fi) - logsum)
        logsum_alt = f32(log(f32(total + f32(fi * (len(alt) - 1)))))
        logprob_alt = 0.0
        for j in alt:
            logprob_alt = f32(logprob_alt + (log(f32(freq[j] + fi)) - logsum_alt))
        candidates.append((i, f32(share * f32(logprob_sp - logprob_alt))))
    size = max(desired, int(f32(f32(shrinking_factor) * len(pieces))))
    for i, _ in sorted(candidates, key=lambda c: (-c[1], c[0])):
        if len(kept) == size:  # (sentencepiece's test: with more kept already, all go in)
            break
        kept.append(pieces[i])
    return kept, tokens


def prune_unreachable(pieces: list[tuple[str, float]], num_threads: int = 1,
                      pruned: bool = False) -> list[tuple[str, float]]:
    """Drop pieces the encoder could never output (0.2.3's ``PruneUnreachableSentencePieces``).

    A piece whose own string is better segmented otherwise can never be on
    a best path. (0.2.3 logs this step; its exact rule is not public.)

    ``pruned``: ``pieces`` are what :func:`prune` kept, scores unchanged.
    Then only a piece holding a character that is not a piece needs the
    search. The prune found every kept piece reachable among a superset
    of these pieces, with the same scores; without the dropped pieces,
    the lattice of a piece whose characters are all pieces has a subset of
    the nodes it had then (no unknown node: its characters were pieces then
    too), so its best segmentation without itself can only be worse. An
    unknown node is what can change: its score follows the lowest piece
    score, which the prune may have raised.
    """
    if pruned:
        singles = {piece for piece, _ in pieces if len(piece) == 1}
        suspects = [i for i, (piece, _) in enumerate(pieces)
                    if len(piece) > 1 and not singles.issuperset(piece)]
        verdicts = _alternatives_of(AlternativeSearch(_Model(pieces)), pieces, suspects)
        gone = {i for i, verdict in zip(suspects, verdicts) if verdict is False}
        return [entry for i, entry in enumerate(pieces) if i not in gone]
    verdicts = _alternatives(_Model(pieces), pieces, num_threads)
    return [entry for entry, verdict in zip(pieces, verdicts) if verdict is not False]


# ----------------------------------------------------------------------------
# 3. finalize


def finalize(pieces: list[tuple[str, float]], alphabet: dict[str, int],
             size: int) -> list[tuple[str, float]]:
    """All alphabet characters, then the best pieces: ``size`` in all (``FinalizeSentencePieces``).

    A character that is not a piece gets the lowest score plus a penalty
    growing by 0.0001 per such character (frequent characters first).
    Output order: score desc, piece asc.
    """
    if size <= 0:
        raise TrainerError("vocab_size must be larger than the number of meta pieces.")
    scores = dict(pieces)
    min_score = min(scores.values())
    final: dict[str, float] = {}
    penalty = 0.0
    delta = f32(MIN_SCORE_PENALTY_DELTA)
    for char, _ in sorted_items(alphabet.items()):
        if char in scores:
            final[char] = scores[char]
        else:
            final[char] = f32(min_score + penalty)
            penalty = f32(penalty + delta)
    for piece, score in sorted_items(pieces):
        if piece in final:
            continue
        if len(final) == size:
            break
        final[piece] = score
    return sorted_items(final.items())


# ----------------------------------------------------------------------------
# entry point


def _units_and_seeds(corpus, options, validator: PieceValidator) -> tuple[_UnitTexts, list]:
    """The EM units (compactly) and the seed pieces of ``corpus``."""
    units, entries = collect_units(corpus, options)
    units = _UnitTexts(units)
    return units, _seed_pieces(corpus, options, entries, validator)


def _load_units(corpus, options) -> tuple[_UnitTexts, SeedEntries, dict[str, int]]:
    """Read a deferred corpus (``Corpus.load``): its EM units (compactly),
    seed entries and alphabet (see :func:`collect_units`)."""
    loaded = corpus.load()
    units, entries = collect_units(loaded, options)
    return _UnitTexts(units), SeedEntries(entries), loaded.alphabet


def _seed_pieces(corpus, options, entries: SeedEntries,
                 validator: PieceValidator) -> _CompactPieces:
    return _CompactPieces.from_columns(*_seed_columns(corpus, options, entries, validator,
                                                      options.num_threads))


def train(corpus, options, progress=None) -> list[tuple[str, float]]:
    """Train a unigram model: the NORMAL pieces with scores, in output order.

    Returns ``vocab_size - len(corpus.meta)`` pieces (fewer if the corpus
    does not yield that many; the caller enforces ``hard_vocab_limit``).
    """
    phase = getattr(progress, "phase", None)
    started = time.time()
    lattices = reporter = None
    try:
        validator = PieceValidator(options)
        with phase("unigram seeds") if phase else contextlib.nullcontext():
            if getattr(corpus, "load", None) is not None:
                # The sentences are read and counted in one child, and the
                # seeds searched in another, forked from this process: the
                # seed search's workers then inherit a heap that never held
                # the sentences, and neither does this one.
                units, entries, corpus.alphabet = run_in_child(_load_units, corpus, options)
                pieces = run_in_child(_seed_pieces, corpus, options, entries, validator)
                del entries
            elif getattr(corpus, "consumable", False):
                # In a forked child: the EM workers are forked later from
                # this process, and inherit its heap, which then never held
                # the seed search's garbage.
                units, pieces = run_in_child(_units_and_seeds, corpus, options, validator)
                corpus.sentences = []  # the units and seeds are all that is needed of them
            else:
                units, pieces = _units_and_seeds(corpus, options, validator)
        if not pieces:
            raise TrainerError("no character to train on: every character of the corpus is "
                               "outside the alphabet.")
        lattices = _LatticeRunner(units, options.num_threads)
        del units
        reporter = _Reporter(progress)
        reporter.log("seeds: %d pieces, %d units (%.1fs)"
                     % (len(pieces), lattices.count, time.time() - started))
        desired = int(options.vocab_size * 1.1)
        steps = 0
        while True:
            reporter.expect(steps + expected_steps(len(pieces), desired,
                                                   options.shrinking_factor,
                                                   options.num_sub_iterations))
            steps += options.num_sub_iterations + 1
            for sub_iter in range(options.num_sub_iterations):
                model = _Model(pieces)
                expected, objective = run_e_step(model, pieces, lattices)
                pieces = run_m_step(pieces, expected)
                del expected, model
                reporter.log("EM sub_iter=%d size=%d obj=%g (%.1fs)"
                             % (sub_iter, len(pieces), objective, time.time() - started), step=True)
            model = _Model(pieces)
            before = len(pieces)
            pieces, tokens = prune(pieces, model, lattices, desired, options.shrinking_factor)
            del model
            reporter.log("prune size=%d->%d num_tokens=%d num_tokens/piece=%g (%.1fs)"
                         % (before, len(pieces), tokens, tokens / max(1, before),
                            time.time() - started), step=True)
            if len(pieces) <= desired:
                break
        lattices.close()
        before = len(pieces)
        pieces = prune_unreachable(pieces, options.num_threads, pruned=True)
        if len(pieces) != before:
            reporter.log("pruned %d unreachable pieces out of %d" % (before - len(pieces), before))
        return finalize(pieces, corpus.alphabet, options.vocab_size - len(corpus.meta))
    finally:
        if lattices is not None:
            lattices.close()
        if reporter is not None:
            reporter.close()


__all__ = ["train", "make_seed_pieces", "frequent_substrings", "substring_counts", "SeedEntries",
           "collect_units", "units_from_followed", "seed_entries", "run_e_step",
           "run_m_step", "prune", "prune_unreachable", "finalize", "piece_alternatives",
           "AlternativeSearch", "digamma"]
