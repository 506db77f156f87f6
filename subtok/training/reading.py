"""Reading training input: sentencepiece's ``LoadSentences`` line filters
and its ``--input_sentence_size`` selection.

:func:`read_sentences` streams ``(sentence, freq)`` from the input files
(or stdin, an iterable, or one :class:`FileRange` of a file); :func:`select`
keeps all, the first N, or a reservoir sample (:class:`MT19937`, seeded
like sentencepiece's ``std::mt19937``).
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from subtok.errors import TrainerError
from subtok.progress import input_size
from subtok.symbols import UNK_CHAR

if TYPE_CHECKING:
    from subtok.progress import Progress
    from subtok.training.spec import TrainerOptions

_UNK_BYTES = UNK_CHAR.encode("utf-8")


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


__all__ = ["FileRange", "byte_ranges", "read_sentences", "select", "MT19937", "INT64_MAX"]
