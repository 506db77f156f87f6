"""Unigram language-model trainer (sentencepiece's ``unigram_model_trainer``).

Phases, each a function below (§6.5 and §6.11 of the reference):

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

Seeds. sentencepiece 0.2.3 builds a suffix array over the UTF-8 bytes of
the whole corpus (sentences joined by NUL) and takes the internal nodes of
its suffix tree that fall on character boundaries. We find the same
substrings without a suffix array: a substring is a node iff it occurs at
least twice and the characters following its occurrences start with at
least two different UTF-8 lead bytes (NUL at a sentence end, U+2585 after a
masked character, "▁" or the next word's first character at a word end).
Counting runs level by level on the distinct words (weighted by their
counts), extending only the substrings found at least twice at the
previous level and that can still become valid pieces, so long sentences
(Japanese, Chinese: no spaces) cost little.

Arithmetic. sentencepiece keeps scores, expected counts and losses in
float32; we round to float32 where a value is stored (scores, M-step sums,
losses) but run forward/backward in doubles, in linear space (probabilities,
not logs: no exp/log per edge) with exact power-of-two rescaling where long
units would underflow. Results are identical whatever ``num_threads``:
units are cut into chunks that do not depend on it, each chunk is summed
alone, and the chunk sums are added in chunk order.
"""

from __future__ import annotations

import gc
import logging
import math
import multiprocessing
import os
import struct
import time
from collections import Counter
from array import array
from itertools import accumulate, islice, repeat
from operator import add, xor

from .validity import PieceValidator

try:  # the corpus module of the training package (may be edited in parallel)
    from .corpus import split_into_words
except ImportError:  # pragma: no cover - fallback for a partial tree
    split_into_words = None

LOG = logging.getLogger(__name__)

SPACE = "\u2581"
UNK_CHAR = "\u2585"
NUL = "\x00"

_F32 = struct.Struct("<f")

#: M-step threshold on expected counts (``kExpectedFrequencyThreshold``).
EXPECTED_FREQUENCY_THRESHOLD = 0.5
#: Score of an unknown node below the lowest piece score (``kUnkPenalty``).
UNK_PENALTY = 10.0
#: Finalize: penalty step between alphabet characters that are not pieces.
MIN_SCORE_PENALTY_DELTA = 0.0001

# Linear-space forward/backward: rescale by 2**RESCALE_BITS (exact) when a
# prefix/suffix probability drops below 2**-RESCALE_BITS.
RESCALE_BITS = 400
_TINY = 2.0 ** -RESCALE_BITS
_BIG = 2.0 ** RESCALE_BITS

#: Work per chunk of units (sum of unit lengths, in characters). Chunks do
#: not depend on num_threads, which keeps the sums identical for any count.
CHUNK_CHARS = 150_000
#: Suffixes per partition of the seed search (bounds its memory).
SEED_PARTITION_SUFFIXES = 400_000
#: Below this many characters in all units, worker processes are not worth it.
PARALLEL_MIN_CHARS = 400_000


def f32(value: float) -> float:
    """Round to the nearest IEEE binary32 value (what a C++ ``float`` stores)."""
    return _F32.unpack(_F32.pack(value))[0]


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


def sorted_items(items):
    """sentencepiece's ``Sorted``: value descending, then key ascending."""
    return sorted(items, key=lambda kv: (-kv[1], kv[0]))


# ----------------------------------------------------------------------------
# progress


class _Reporter:
    """Sends one line per EM step / prune to ``progress`` and the logger.

    ``progress`` may be None, a callable taking a string, or an object with
    ``bar()`` (subtok's :class:`~subtok.trainers.corpus.Progress`): then a
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

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# ----------------------------------------------------------------------------
# units


def _split_words(text: str, options) -> list[str]:
    if split_into_words is not None:
        return split_into_words(text, options.treat_whitespace_as_suffix,
                                options.allow_whitespace_only_pieces)
    # Same rules, used only if corpus.py is missing.
    import re
    if options.treat_whitespace_as_suffix:
        pattern = "[^▁]*▁+|[^▁]+" if options.allow_whitespace_only_pieces else "[^▁]*▁|[^▁]+"
    else:
        pattern = "▁+[^▁]*|[^▁]+" if options.allow_whitespace_only_pieces else "▁[^▁]*|[^▁]+"
    return re.findall(pattern, text)


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
    in sentencepiece's order (frequency desc, string asc). ``entries`` maps
    ``stretch + follower`` to its raw occurrence count (what the suffix
    array of sentencepiece counts: one per sentence line, two for TSV
    input): a stretch is a word cut at U+2585, the follower the character
    after it in the corpus (NUL at a sentence end).
    """
    split_ws = options.split_by_whitespace
    tsv = options.input_format == "tsv"
    delimiter = options.pretokenization_delimiter
    simple_prefix = (split_ws and not options.treat_whitespace_as_suffix
                     and not options.allow_whitespace_only_pieces and not delimiter)
    unit_counts: Counter = Counter()
    followed: Counter = Counter()  # stretch + follower -> seed count
    # Fast path (prefix "▁", one occurrence per line): count the parts
    # between "▁"s; "▁" is put back on the distinct words only.
    mid: Counter = Counter()      # "▁"-words followed by "▁" (without their "▁")
    last: Counter = Counter()     # sentence-final "▁"-words
    head_mid: Counter = Counter()  # a first word without "▁", then "▁"
    head_last: Counter = Counter()  # a whole sentence without "▁"
    for text, freq in corpus.sentences:
        if simple_prefix and freq == 1 and not tsv:
            parts = text.split(SPACE)
            if len(parts) == 1:
                head_last[text] += 1
                continue
            if parts[0]:
                head_mid[parts[0]] += 1
            mid.update(parts[1:-1])
            last[parts[-1]] += 1
            continue
        seed_weight = 2 if tsv else freq
        em_text = text.replace(delimiter, "") if delimiter else text
        if split_ws:
            for word in _split_words(em_text, options):
                unit_counts[word] += freq
        elif em_text:
            unit_counts[em_text] += freq
        for part in _seed_parts(text, options):
            pieces = _split_words(part, options) if split_ws else [part]
            for i, piece in enumerate(pieces):
                follower = pieces[i + 1][0] if i + 1 < len(pieces) else NUL
                followed[piece + follower] += seed_weight
    for counter, prefix, follower in ((mid, SPACE, SPACE), (last, SPACE, NUL),
                                      (head_mid, "", SPACE), (head_last, "", NUL)):
        for part, count in counter.items():
            word = prefix + part
            unit_counts[word] += count
            followed[word + follower] += count
        counter.clear()
    entries: dict[str, int] = {}
    for text, count in followed.items():
        if UNK_CHAR in text:
            stretches = text.split(UNK_CHAR)
            for stretch in stretches[:-1]:
                if stretch:
                    key = stretch + UNK_CHAR
                    entries[key] = entries.get(key, 0) + count
            text = stretches[-1]
            if len(text) < 2:  # only the follower is left
                continue
        entries[text] = entries.get(text, 0) + count
    units = sorted_items(unit_counts.items())
    return units, entries


# ----------------------------------------------------------------------------
# 1. seeds


class _ValidityClasses:
    """``is_valid`` for many substrings, one validator call per character-class pattern.

    Whether a string is a valid piece depends on its length and, for each
    character, only on: being "▁", being forbidden (U+2585, NUL, TAB,
    space, surrogate), its script and being a digit (§6.4). Every character
    is replaced by the first character seen with the same properties, and
    the validator is asked once per distinct pattern.
    """

    def __init__(self, validator: PieceValidator, chars) -> None:
        from .validity import is_digit, script_of
        representative: dict = {}
        table: dict[int, str] = {}
        for char in sorted(chars):
            forbidden = char in (UNK_CHAR, NUL, "\t", " ") or "\ud800" <= char <= "\udfff"
            key = (char == SPACE, forbidden, None if forbidden else script_of(char),
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


def _seed_partition(pattern: str) -> list[tuple[str, int]]:
    """Suffix-tree nodes among the suffixes starting with a character of ``pattern``.

    Every suffix (cut to ``max_length + 1`` characters, zero-padded)
    becomes an integer: its dense character codes, most significant first,
    then its rank in the low bits. Sorting the integers sorts the suffixes;
    the bit length of the XOR of two neighbours gives their longest common
    prefix. A bottom-up scan of these LCPs enumerates the LCP intervals,
    i.e. the internal nodes of the suffix tree, with their depth.
    """
    st = _STATE
    scan, encoded, weight_at = st["scan"], st["encoded"], st["weight_at"]
    leads, bits, max_length, is_valid = st["leads"], st["bits"], st["max_length"], st["is_valid"]
    import re
    positions = [m.start() for m in re.finditer(pattern, scan)]
    count = len(positions)
    if count < 2:
        return []
    width = max_length + 1          # characters per key
    unit = bits // 8                # bytes per character
    span = width * unit
    id_bits = count.bit_length()
    from_bytes = int.from_bytes
    keys = [(from_bytes(encoded[p * unit:p * unit + span], "big") << id_bits) | n
            for n, p in enumerate(positions)]
    keys.sort()
    id_mask = (1 << id_bits) - 1
    positions = [positions[key & id_mask] for key in keys]
    cumulative = [0]
    cumulative.extend(accumulate([weight_at[p] for p in positions]))
    key_bits = width * bits + id_bits
    depths = [width if xb <= id_bits else (key_bits - xb) // bits
              for xb in map(int.bit_length, map(xor, keys, islice(keys, 1, None)))]
    depths.append(0)
    code_mask = (1 << bits) - 1
    found: list[tuple[str, int]] = []
    stack = [(0, 0)]  # (depth, left bound)
    top = 0
    for i, depth in enumerate(depths, 1):
        left = i - 1
        while depth < top:
            node_depth, left = stack.pop()
            top = stack[-1][0]
            if 2 <= node_depth <= max_length:
                # The node: sorted suffixes left..i-1 share node_depth characters.
                shift = id_bits + bits * (width - 1 - node_depth)
                if (leads[(keys[left] >> shift) & code_mask]
                        != leads[(keys[i - 1] >> shift) & code_mask]):
                    p = positions[left]
                    piece = scan[p:p + node_depth]
                    if is_valid(piece):  # (rejects NUL: no stretch end inside)
                        found.append((piece, cumulative[i] - cumulative[left]))
        if depth > top:
            stack.append((depth, left))
            top = depth
    return found


def frequent_substrings(entries: dict[str, int], max_length: int, validator: PieceValidator,
                        runner: "_Runner | None" = None) -> list[tuple[str, int]]:
    """Valid right-maximal substrings occurring at least twice, with their counts.

    ``entries`` maps ``stretch + follower`` to a count (see
    :func:`collect_units`); substrings lie inside the stretches. A
    substring qualifies when it has 2 .. ``max_length`` characters, is a
    valid piece and its occurrences are followed by characters with at
    least two different UTF-8 lead bytes: a node of the byte-level suffix
    tree of the corpus that ends on a character boundary (what sentencepiece
    0.2.3 extracts). Suffixes are split by their first character into
    independent partitions (no node spans two), which may run in worker
    processes; the result is sorted by (count desc, string asc) whatever
    the partitioning.

    Layout: all stretches are joined, each followed by max_length + 2
    padding positions. ``scan`` has NUL at the follower and padding
    positions (so neither starts a suffix nor ends up inside a piece);
    ``encoded`` has the dense code of the follower and zeros for padding.
    """
    texts = list(entries)
    if not texts:
        return []
    padding = max_length + 1
    scan = ("\0" * (padding + 1)).join(t[:-1] for t in texts) + "\0" * (padding + 1)
    chars = sorted(set(scan) | {t[-1] for t in texts} | {NUL})
    code_of = {c: n + 1 for n, c in enumerate(chars)}   # 0 pads the keys
    leads = [-1] + [lead_byte(c) for c in chars]
    top = len(chars) + 1
    bits = 8 if top <= 0x100 else 16 if top <= 0x10000 else 32
    table = {ord(c): n for c, n in code_of.items()}
    text = ("\uffff" * padding).join(texts) + "\uffff" * padding
    table[0xFFFF] = 0
    text = text.translate(table)
    if bits == 8:
        encoded = text.encode("latin-1")
    else:
        encoded = text.encode("utf-16-be" if bits == 16 else "utf-32-be", "surrogatepass")
    del text
    weight_at = array("Q")
    for t in texts:
        weight_at.extend(repeat(entries[t], len(t) + padding))
    # Partitions by first character, balanced by suffix count.
    starts = Counter(scan)
    starts.pop(NUL, None)
    total = sum(starts.values())
    groups = max(1, -(-total // SEED_PARTITION_SUFFIXES))
    bins: list[list[str]] = [[] for _ in range(groups)]
    loads = [0] * groups
    for char, n in sorted(starts.items(), key=lambda kv: (-kv[1], kv[0])):
        g = loads.index(min(loads))
        bins[g].append(char)
        loads[g] += n
    import re
    tasks = [("[%s]" % "".join(re.escape(c) for c in sorted(b)),) for b in bins if b]
    is_valid = _ValidityClasses(validator, chars)
    state = dict(scan=scan, encoded=encoded, weight_at=weight_at, leads=leads, bits=bits,
                 max_length=max_length, is_valid=is_valid)
    if runner is None:
        runner = _Runner([], 1)
    found: list[tuple[str, int]] = []
    for part in runner.map(_seed_partition, tasks, total, **state):
        found.extend(part)
    return sorted_items(found)


def make_seed_pieces(corpus, options, entries: dict[str, int], validator: PieceValidator,
                     runner: "_Runner | None" = None) -> list[tuple[str, float]]:
    """Seed pieces with log-probability scores (``MakeSeedSentencePieces``).

    Characters first (every character of the corpus, ``Sorted`` by count),
    then the frequent substrings of :func:`frequent_substrings` that are
    valid pieces, by score ``count x length`` (desc; ties by string), at
    most ``seed_sentencepiece_size`` of them. ``seed_sentencepieces_file``
    (``piece<TAB>freq`` lines) replaces the substrings. Scores are
    ``log(v) - log(sum v)`` with the sum in float32.
    """
    chars = {c: n for c, n in corpus.alphabet.items() if n > 0 and c not in (UNK_CHAR, NUL)}
    seeds: list[tuple[str, float]] = sorted_items(chars.items())
    size = options.seed_sentencepiece_size
    if options.seed_sentencepieces_file:
        extra = []
        with open(options.seed_sentencepieces_file, encoding="utf-8") as handle:
            for line in handle:
                line = line.rstrip("\n")
                if not line:
                    continue
                fields = line.split("\t")
                if len(fields) < 2:
                    from ..errors import TrainerError
                    raise TrainerError("seed_sentencepieces_file: expected piece<TAB>freq, got %r" % line)
                piece, freq = fields[0], int(fields[1])
                if validator.is_valid(piece):
                    extra.append((piece, freq * len(piece)))
        seeds = sorted_items(seeds + extra)[:size]
    else:
        found = frequent_substrings(entries, options.max_sentencepiece_length, validator, runner)
        candidates = sorted_items((s, count * len(s)) for s, count in found)[:size]
        seeds.extend(candidates)
    total = 0.0
    for _, value in seeds:
        total = f32(total + value)
    logsum = f32(math.log(total))
    return [(piece, f32(math.log(value) - logsum)) for piece, value in seeds]


# ----------------------------------------------------------------------------
# lattices (shared by the E-step, the Viterbi of the prune and the workers)


class _Model:
    """The current pieces as the lattice code needs them.

    ``table`` maps every piece to its index and every proper prefix of a
    piece that is not itself a piece to -1, so a scan from one position can
    stop as soon as no piece can start with what was read.
    """

    def __init__(self, pieces: list[tuple[str, float]]) -> None:
        table: dict[str, int] = {}
        for index, (piece, _) in enumerate(pieces):
            table[piece] = index
        for piece, _ in pieces:
            for end in range(len(piece) - 1, 0, -1):
                prefix = piece[:end]
                if prefix in table:
                    break
                table[prefix] = -1
        self.table = table
        self.scores = [score for _, score in pieces]
        self.probs = [math.exp(score) for score in self.scores]
        self.max_length = max((len(p) for p, _ in pieces), default=1)
        self.min_score = min(self.scores)
        # sentencepiece's training model leaves unk_id at 0: unknown nodes
        # count for piece 0.
        self.unk_index = 0
        self.unk_score = f32(self.min_score - UNK_PENALTY)
        self.unk_prob = math.exp(self.unk_score)
        self.size = len(pieces)


# Worker state: set by the parent before forking, read by the children.
_STATE: dict = {}


def _estep_range(lo: int, hi: int):
    """Expected counts over units ``lo..hi-1``: (list, sum of w * log Z).

    Forward and backward run on probabilities, not logs. alpha[j] is
    accumulated from the nodes ending at j (pushed from their begin, whose
    alpha is final by then) while the lattice is scanned; the backward pass
    walks the same nodes in reverse, so beta[j] is final when a node ending
    at j is met, and adds the node's marginal at the same time.
    """
    units = _STATE["units"]
    model: _Model = _STATE["model"]
    table, probs, max_length = model.table, model.probs, model.max_length
    unk_index, unk_prob = model.unk_index, model.unk_prob
    expected = [0.0] * model.size
    loglik = 0.0
    log = math.log
    get = table.get
    for u in range(lo, hi):
        text, weight = units[u]
        n = len(text)
        alpha = [0.0] * (n + 1)
        alpha[0] = 1.0
        nodes = []
        append = nodes.append
        shifts = None  # per-position binary exponent, once rescaling started
        shift = 0
        for i in range(n):
            ai = alpha[i]
            if ai < _TINY:
                shift += _rescale(alpha, i, min(n, i + max_length))
                ai = alpha[i]
                if shifts is None:
                    shifts = [0] * (n + 1)
            if shifts is not None:
                shifts[i] = shift
            k = get(text[i])
            if k is not None and k >= 0:
                p = probs[k]
                append((i, i + 1, k, p))
                alpha[i + 1] += ai * p
            else:  # no one-character piece: an unknown node
                append((i, i + 1, unk_index, unk_prob))
                alpha[i + 1] += ai * unk_prob
                if k is None:
                    continue
            for j in range(i + 2, min(n, i + max_length) + 1):
                k = get(text[i:j])
                if k is None:
                    break
                if k >= 0:
                    p = probs[k]
                    append((i, j, k, p))
                    alpha[j] += ai * p
        z = alpha[n]
        if shifts is None and z >= _TINY:
            beta = [0.0] * (n + 1)
            beta[n] = 1.0
            scale = weight / z
            alpha = [a * scale for a in alpha]
            nodes.reverse()
            for i, j, k, p in nodes:
                x = p * beta[j]
                beta[i] += x
                expected[k] += alpha[i] * x
            loglik += weight * log(z)
            continue
        if shifts is None:
            shifts = [0] * (n + 1)
        if z < _TINY:
            shift += _rescale(alpha, n, n)
            z = alpha[n]
        shifts[n] = shift
        loglik += weight * (log(z) - shift * _LN2)
        _scaled_backward(nodes, n, alpha, shifts, weight, expected, max_length)
    return expected, loglik


_LN2 = math.log(2.0)


def _rescale(values: list, lo: int, hi: int) -> int:
    """Multiply ``values[lo..hi]`` by the power of two that brings their max near 1."""
    top = max(values[lo:hi + 1])
    if top <= 0.0:
        return 0
    e = -math.frexp(top)[1]
    ldexp = math.ldexp
    for j in range(lo, hi + 1):
        values[j] = ldexp(values[j], e)
    return e


def _scaled_backward(nodes, n, alpha, shifts, weight, expected, max_length) -> None:
    """Backward pass and marginals of a unit that needed rescaling.

    True alpha[i] is ``alpha[i] * 2**-shifts[i]``; beta values inside the
    window the remaining nodes can reach share one exponent ``bshift``, so a
    marginal ``alpha_i * p * beta_j / Z`` is computed on the scaled values
    and corrected by ``2**(shifts[n] - shifts[i] - bshift)``.
    """
    beta = [0.0] * (n + 1)
    beta[n] = 1.0
    bshift = 0
    current = n
    scale = weight / alpha[n]
    zshift = shifts[n]
    ldexp = math.ldexp
    for i, j, k, p in reversed(nodes):
        if i != current:
            if beta[current] < _TINY:
                bshift += _rescale(beta, current, min(n, current + max_length))
            current = i
        x = p * beta[j]
        beta[i] += x
        expected[k] += ldexp(alpha[i] * x * scale, zshift - shifts[i] - bshift)


def _viterbi_range(lo: int, hi: int):
    """Viterbi piece frequencies over units ``lo..hi-1``: (freq list, tokens)."""
    units = _STATE["units"]
    model: _Model = _STATE["model"]
    table, scores, max_length = model.table, model.scores, model.max_length
    unk_index, unk_score = model.unk_index, model.unk_score
    freq = [0.0] * model.size
    tokens = 0
    get = table.get
    ninf = -math.inf
    for u in range(lo, hi):
        text, weight = units[u]
        n = len(text)
        best = [ninf] * (n + 1)
        best[0] = 0.0
        back_pos = [0] * (n + 1)
        back_id = [0] * (n + 1)
        for i in range(n):
            bi = best[i]
            k = get(text[i])
            if k is None or k < 0:  # no one-character piece: an unknown node
                v = bi + unk_score
                if v > best[i + 1]:
                    best[i + 1] = v
                    back_pos[i + 1] = i
                    back_id[i + 1] = unk_index
                if k is None:
                    continue
            else:
                v = bi + scores[k]
                if v > best[i + 1]:
                    best[i + 1] = v
                    back_pos[i + 1] = i
                    back_id[i + 1] = k
            for j in range(i + 2, min(n, i + max_length) + 1):
                k = get(text[i:j])
                if k is None:
                    break
                if k >= 0:
                    v = bi + scores[k]
                    if v > best[j]:
                        best[j] = v
                        back_pos[j] = i
                        back_id[j] = k
        j = n
        count = 0
        while j > 0:
            freq[back_id[j]] += weight
            j = back_pos[j]
            count += 1
        tokens += count * weight
    return freq, tokens


def _alternatives_range(lo: int, hi: int) -> list:
    """``NBest(2)`` verdicts for pieces ``lo..hi-1`` (see :func:`piece_alternatives`)."""
    model: _Model = _STATE["model"]
    pieces = _STATE["pieces"]
    return [piece_alternatives(model, pieces[i][0]) for i in range(lo, hi)]


def piece_alternatives(model: _Model, piece: str):
    """How ``piece`` would be segmented without itself (``NBest(2)`` on its string).

    Returns None when its lattice has a single path (a one-character piece:
    always kept, no alternative), False when its best segmentation is not
    the piece itself (never chosen: removable), else the ids of the best
    segmentation that does not use it (the second best path). On equal
    scores the piece itself wins, as the Viterbi prefers the longest node.
    """
    n = len(piece)
    if n == 1:
        return None
    table, scores, max_length = model.table, model.scores, model.max_length
    get = table.get
    best = [-math.inf] * (n + 1)
    best[0] = 0.0
    back_pos = [0] * (n + 1)
    back_id = [0] * (n + 1)
    for i in range(n):
        bi = best[i]
        limit = min(n, i + max_length)
        single = False
        j = i + 1
        while j <= limit:
            k = get(piece[i:j])
            if k is None:
                break
            if k >= 0 and not (i == 0 and j == n):
                v = bi + scores[k]
                if v > best[j]:
                    best[j] = v
                    back_pos[j] = i
                    back_id[j] = k
            if k >= 0 and j == i + 1:
                single = True
            j += 1
        if not single:
            v = bi + model.unk_score
            if v > best[i + 1]:
                best[i + 1] = v
                back_pos[i + 1] = i
                back_id[i + 1] = model.unk_index
    own = table.get(piece, -1)
    if own < 0:
        return False
    if f32(best[n]) > scores[own]:
        return False
    path = []
    j = n
    while j > 0:
        path.append(back_id[j])
        j = back_pos[j]
    path.reverse()
    return path


# ----------------------------------------------------------------------------
# running chunks, in this process or in forked workers


class _Runner:
    """Runs a range function over fixed chunks, optionally in worker processes.

    Chunks depend on the data only; results come back in chunk order, so
    whatever ``num_threads`` is, the caller merges the same partial results
    in the same order. Workers are forked per call (they inherit the state
    in ``_STATE`` without pickling it).
    """

    def __init__(self, units: list[tuple[str, int]], num_threads: int) -> None:
        self.units = units
        self.unit_chunks = self.chunk(units, lambda u: len(u[0]) + 1)
        self.total_chars = sum(len(text) + 1 for text, _ in units)
        cpus = os.cpu_count() or 1
        self.processes = max(1, min(num_threads, cpus))
        self.can_fork = "fork" in multiprocessing.get_all_start_methods()

    @staticmethod
    def chunk(items, cost) -> list[tuple[int, int]]:
        bounds = [0]
        acc = 0
        for index, item in enumerate(items):
            acc += cost(item)
            if acc >= CHUNK_CHARS:
                bounds.append(index + 1)
                acc = 0
        if bounds[-1] != len(items):
            bounds.append(len(items))
        return list(zip(bounds, bounds[1:]))

    def map(self, func, chunks: list[tuple[int, int]], work: int, **state) -> list:
        _STATE.clear()
        _STATE["units"] = self.units
        _STATE.update(state)
        try:
            if (self.processes < 2 or not self.can_fork or len(chunks) < 2
                    or work < PARALLEL_MIN_CHARS):
                return [func(*args) for args in chunks]
            context = multiprocessing.get_context("fork")
            gc.collect()
            gc.freeze()  # keep the children from touching (copying) inherited pages
            try:
                with context.Pool(min(self.processes, len(chunks))) as pool:
                    return pool.starmap(func, chunks, chunksize=1)
            finally:
                gc.unfreeze()
        finally:
            _STATE.clear()


# ----------------------------------------------------------------------------
# 2. EM


def run_e_step(model: _Model, runner: _Runner) -> tuple[list[float], float]:
    """Expected count of every piece and the objective (``RunEStep``).

    For every unit: forward/backward over its lattice (all pieces of the
    model, plus an unknown node of piece 0 where no one-character piece
    starts); each node adds ``freq * P(node)`` to its piece. The objective
    is the mean negative log likelihood per unit occurrence.
    """
    parts = runner.map(_estep_range, runner.unit_chunks, runner.total_chars, model=model)
    expected = [0.0] * model.size
    loglik = 0.0
    for part, ll in parts:
        expected = list(map(add, expected, part))
        loglik += ll
    total = sum(w for _, w in runner.units)
    return expected, -loglik / total


def run_m_step(pieces: list[tuple[str, float]], expected: list[float]) -> list[tuple[str, float]]:
    """Drop pieces expected < 0.5 times; score = digamma(count) - digamma(sum)."""
    kept = []
    total = 0.0
    for (piece, _), count in zip(pieces, expected):
        count = f32(count)
        if count < EXPECTED_FREQUENCY_THRESHOLD:
            continue
        kept.append((piece, count))
        total = f32(total + count)
    logsum = f32(digamma(total))
    return [(piece, f32(digamma(count) - logsum)) for piece, count in kept]


def _piece_chunks(pieces) -> list[tuple[int, int]]:
    return _Runner.chunk(pieces, lambda p: len(p[0]) * 4)


def prune(pieces: list[tuple[str, float]], model: _Model, runner: _Runner, desired: int,
          shrinking_factor: float) -> tuple[list[tuple[str, float]], int]:
    """Keep the pieces whose removal would cost the most (``PruneSentencePieces``).

    Every piece's best segmentation without itself (:func:`piece_alternatives`)
    stands in for it; with Viterbi frequencies ``freq`` over all units, the
    loss of removing piece i is ``F * (log p_i - sum_alt log p'_j)`` where
    ``F = freq_i / sum(unit freqs)`` and ``p'`` re-assigns ``freq_i`` to the
    alternatives. Pieces never used are dropped, pieces without an
    alternative kept, then candidates by loss (desc) until
    ``max(desired, shrinking_factor * size)``. Returns the pieces and the
    Viterbi token count.
    """
    piece_chunks = _piece_chunks(pieces)
    alternatives: list = []
    for part in runner.map(_alternatives_range, piece_chunks,
                           sum(len(p) for p, _ in pieces) * 4, model=model, pieces=pieces):
        alternatives.extend(part)
    freq = [0.0] * model.size
    tokens = 0
    for part, count in runner.map(_viterbi_range, runner.unit_chunks, runner.total_chars,
                                  model=model):
        freq = list(map(add, freq, part))
        tokens += count
    vsum = f32(sum(w for _, w in runner.units))
    total = f32(sum(f32(x) for x in freq))
    logsum = f32(math.log(total))
    log = math.log
    kept: list[tuple[str, float]] = []
    candidates: list[tuple[int, float]] = []
    for i, (entry, alt) in enumerate(zip(pieces, alternatives)):
        fi = f32(freq[i])
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
            logprob_alt = f32(logprob_alt + (log(f32(f32(freq[j]) + fi)) - logsum_alt))
        candidates.append((i, f32(share * f32(logprob_sp - logprob_alt))))
    size = max(desired, int(f32(f32(shrinking_factor) * len(pieces))))
    for i, _ in sorted(candidates, key=lambda c: (-c[1], c[0])):
        if len(kept) >= size:
            break
        kept.append(pieces[i])
    return kept, tokens


def prune_unreachable(pieces: list[tuple[str, float]], runner: _Runner) -> list[tuple[str, float]]:
    """Drop pieces the encoder could never output (0.2.3's ``PruneUnreachableSentencePieces``).

    A piece whose own string is better segmented otherwise can never be on
    a best path. (0.2.3 logs this step; its exact rule is not public.)
    """
    model = _Model(pieces)
    verdicts: list = []
    for part in runner.map(_alternatives_range, _piece_chunks(pieces),
                           sum(len(p) for p, _ in pieces) * 4, model=model, pieces=pieces):
        verdicts.extend(part)
    return [entry for entry, verdict in zip(pieces, verdicts) if verdict is not False]


# ----------------------------------------------------------------------------
# 3. finalize


def finalize(pieces: list[tuple[str, float]], alphabet: dict[str, int],
             size: int) -> list[tuple[str, float]]:
    """Alphabet characters first, then the best pieces, ``size`` in all (``FinalizeSentencePieces``).

    A character that is not a piece gets the lowest score plus a penalty
    growing by 0.0001 per such character (frequent characters first).
    Output order: score desc, piece asc.
    """
    if size <= 0:
        from ..errors import TrainerError
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


def train(corpus, options, progress=None) -> list[tuple[str, float]]:
    """Train a unigram model: the NORMAL pieces with scores, in output order.

    Returns ``vocab_size - len(corpus.meta)`` pieces (fewer if the corpus
    does not yield that many; the caller enforces ``hard_vocab_limit``).
    """
    reporter = _Reporter(progress)
    started = time.time()
    try:
        validator = PieceValidator(options)
        units, entries = collect_units(corpus, options)
        runner = _Runner(units, options.num_threads)
        pieces = make_seed_pieces(corpus, options, entries, validator, runner)
        del entries
        reporter.log("seeds: %d pieces, %d units (%.1fs)"
                     % (len(pieces), len(units), time.time() - started))
        desired = int(options.vocab_size * 1.1)
        while True:
            for sub_iter in range(options.num_sub_iterations):
                model = _Model(pieces)
                expected, objective = run_e_step(model, runner)
                pieces = run_m_step(pieces, expected)
                del expected, model
                reporter.log("EM sub_iter=%d size=%d obj=%g (%.1fs)"
                             % (sub_iter, len(pieces), objective, time.time() - started), step=True)
            model = _Model(pieces)
            before = len(pieces)
            pieces, tokens = prune(pieces, model, runner, desired, options.shrinking_factor)
            del model
            reporter.log("prune size=%d->%d num_tokens=%d num_tokens/piece=%g (%.1fs)"
                         % (before, len(pieces), tokens, tokens / max(1, before),
                            time.time() - started), step=True)
            if len(pieces) <= desired:
                break
        before = len(pieces)
        pieces = prune_unreachable(pieces, runner)
        if len(pieces) != before:
            reporter.log("pruned %d unreachable pieces out of %d" % (before - len(pieces), before))
        return finalize(pieces, corpus.alphabet, options.vocab_size - len(corpus.meta))
    finally:
        reporter.close()


__all__ = ["train", "make_seed_pieces", "frequent_substrings", "collect_units", "run_e_step",
           "run_m_step", "prune", "prune_unreachable", "finalize", "piece_alternatives", "digamma"]
