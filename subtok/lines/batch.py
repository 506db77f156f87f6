"""Line-by-line encoding and decoding, in one process or several.

A :class:`LineEncoder` / :class:`LineDecoder` turns one raw input line into
one output line, and a block of lines (``streams.read_blocks``) into a block
of output lines. They are picklable, so ``map_blocks`` can ship them to
worker processes, which each take whole blocks; results come back in input
order, byte-identical to a single process.
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import random
from collections.abc import Iterable, Iterator

from subtok.errors import DecodeError, EncodeError, SubtokError
from subtok.lines.fastpath.lines import LineCache
from subtok.lines.fastpath.output import format_pairs
from subtok.lines.workers import in_workers
from subtok.postprocessors.sentencepiece import apply_extra_options, parse_extra_options
from subtok.processor import Pair, SentencePieceProcessor
from subtok.regularization import line_rng

def _text(line: bytes) -> str:
    return line.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class PerLine:
    """A function of one input line; :meth:`block` applies it to a block.

    A block is lines joined by ``\\n`` (see ``streams.read_blocks``); its
    output is one output line per input line, each ending in ``\\n``.
    A subclass with ``numbered = True`` also gets each line's number.
    """

    numbered = False

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        raise NotImplementedError

    def stored_limits(self) -> list[str]:
        """What the model file stores that cuts or pads every line's output
        (a tokenizer.json's ``truncation`` / ``padding``), by name."""
        return []

    def in_worker(self, workers: int) -> None:
        """Called in each of ``workers`` worker processes before its first
        job: caches that grow with the input keep 1/``workers`` of their
        size, so the workers together stay within one process's memory."""

    def news(self) -> object:
        """In a worker: what it computed since the last call that the other
        workers may reuse (picklable), or None."""
        return None

    def learn(self, news: object) -> None:
        """In a worker: take in another worker's :meth:`news`."""

    def lines(self, lines: list[bytes], first_line: int = 1) -> list[bytes]:
        """The output of each line; an error names the input line it is about."""
        out = []
        for number, line in enumerate(lines, first_line):
            try:
                out.append(self(line, number) if self.numbered else self(line))
            except SubtokError as exc:
                raise type(exc)("line %d: %s" % (number, exc)) from None
        return out

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        """The output of a block of lines."""
        out = self.lines(block.split(b"\n"), first_line)
        out.append(b"")
        return b"\n".join(out)


class LineEncoder(PerLine):
    """Encode one line into the text of one output line (``piece`` or ``id``)."""

    def __init__(self, processor: SentencePieceProcessor, output_format: str,
                 extra_options: str = "") -> None:
        if output_format not in ("piece", "id"):
            raise EncodeError("unknown output format: %s" % output_format)
        self.processor = processor
        self.ids = output_format == "id"
        self.options = parse_extra_options(extra_options, processor.vocab)
        self.lines_cache = LineCache(processor)

    def in_worker(self, workers: int) -> None:
        self.lines_cache.cache_share = 1.0 / workers
        if workers > 1:
            self.lines_cache.word_entries(self.ids).collect_news()

    def news(self) -> object:
        return self.lines_cache.word_entries(self.ids).take_news()

    def learn(self, news: object) -> None:
        self.lines_cache.word_entries(self.ids).learn(news)  # type: ignore[arg-type]

    def pairs(self, line: bytes) -> list[Pair]:
        pairs = self.processor.encode_pairs(_text(line))
        if self.options:
            pairs = apply_extra_options(pairs, self.options, self.processor.vocab)
        return pairs

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        if not self.options:
            return _bytes(self.lines_cache.encode_line(_text(line), self.ids))
        return _bytes(format_pairs(self.pairs(line), self.ids))

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        """Decode, encode and re-encode the whole block at once (the CLI's
        hot loop); an error is located by going over it line by line."""
        if self.options:
            return super().block(block, first_line)
        try:
            text = self.processor.normalizer.resolve_spaces(_text(block))
            out = "\n".join(self.lines_cache.encode_lines(text.split("\n"), self.ids))
        except SubtokError:
            return super().block(block, first_line)
        return _bytes(out + "\n")


class SampleLineEncoder(PerLine):
    """spm_encode's ``sample_*`` and ``nbest_*`` output formats.

    ``sample_piece`` / ``sample_id``: one sampled segmentation per line
    (``SampleEncode(nbest_size, alpha)``). ``nbest_piece`` / ``nbest_id``:
    the n-best hypotheses of a line, one output line each, with nothing
    between inputs — returned as one item joined by newlines.

    The encoder has ``numbered = True``, so :func:`map_lines` passes each
    line's 1-based number: with a ``seed`` every line gets its own generator
    seeded from (seed, line number), so the output does not depend on how
    lines are split among worker processes. Without a seed each process
    draws from its own freshly seeded generator.
    """

    numbered = True

    def __init__(self, processor: SentencePieceProcessor, output_format: str,
                 extra_options: str = "", nbest_size: int = 10, alpha: float = 0.5,
                 seed: int | None = None) -> None:
        kind, _, unit = output_format.partition("_")
        if kind not in ("sample", "nbest") or unit not in ("piece", "id"):
            raise EncodeError("unknown output format: %s" % output_format)
        self.processor = processor
        self.nbest = kind == "nbest"
        self.ids = unit == "id"
        self.nbest_size = nbest_size
        self.alpha = alpha
        self.seed = seed
        self.options = parse_extra_options(extra_options, processor.vocab)
        # Fail before reading any input, as every line would.
        if self.nbest:
            processor.check_sampling(nbest_size, "NBestEncode")
        else:
            processor.check_sampling(nbest_size, "SampleEncode", alpha)
        self._own: tuple[int, random.Random] | None = None

    def rng(self, number: int) -> random.Random:
        """The generator for input line ``number``."""
        if self.seed is not None:
            return line_rng(self.seed, number)
        pid = os.getpid()  # never share one unseeded stream across forks
        if self._own is None or self._own[0] != pid:
            self._own = (pid, random.Random())
        return self._own[1]

    def _format(self, pairs: list[Pair]) -> bytes:
        if self.options:
            pairs = apply_extra_options(pairs, self.options, self.processor.vocab)
        return _bytes(format_pairs(pairs, self.ids))

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        text = _text(line)
        if self.nbest:
            hypotheses = self.processor.nbest_pairs(text, self.nbest_size)
            return b"\n".join([self._format(pairs) for pairs in hypotheses])
        return self._format(self.processor.sample_pairs(text, self.nbest_size, self.alpha,
                                                        self.rng(number)))


class LineDecoder(PerLine):
    """Decode one line of space-separated pieces or ids into text."""

    def __init__(self, processor: SentencePieceProcessor, input_format: str,
                 extra_options: str = "") -> None:
        if input_format not in ("piece", "id"):
            raise DecodeError("unknown input format: %s" % input_format)
        self.processor = processor
        self.ids = input_format == "id"
        self.options = parse_extra_options(extra_options, processor.vocab, DecodeError)

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        fields = [f for f in _text(line).split(" ") if f]
        processor = self.processor
        if self.ids:
            pieces = processor.vocab.pieces
            pairs = []
            for field in fields:
                try:
                    piece_id = int(field)
                except ValueError:
                    raise DecodeError("%r is not an id." % field) from None
                processor.check_id(piece_id)
                pairs.append((pieces[piece_id], piece_id))
        else:
            lookup = processor.vocab.piece_to_id
            pairs = [(f, lookup(f)) for f in fields]
        if self.options:
            pairs = apply_extra_options(pairs, self.options, processor.vocab)
        return _bytes(processor.decoder.decode(pairs))


# -- several processes ----------------------------------------------------
#: Jobs done in the parent before worker processes are forked.
WARM_UP_JOBS = 1


def _map(function: PerLine, method: str, jobs: Iterator[tuple[int, object]], num_threads: int):
    """Results of ``function.<method>`` over (first line, payload) jobs, in
    order. Only a few jobs per worker are in flight, so memory stays bounded
    on huge inputs. Worker processes are forked: where the system cannot
    fork, the jobs are all done here, with the same output."""
    run = getattr(function, method)
    # Freezing (see workers._serve) is undone at the end, so it is done only when
    # nothing was frozen before: a host program's own freeze stays as it was.
    owns_freeze = gc.get_freeze_count() == 0
    freeze = gc.freeze if owns_freeze else _nothing
    try:
        if num_threads <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            for first, payload in jobs:
                yield run(payload, first)
                freeze()
            return
        # The first jobs are done here: forked workers then inherit the
        # caches they filled (the most frequent words, most of the cost
        # of a cold start) instead of each rebuilding them.
        for first, payload in itertools.islice(jobs, WARM_UP_JOBS):
            yield run(payload, first)
        # Objects the workers inherit stay out of their garbage collections,
        # which would otherwise write to (and so copy) every inherited page.
        freeze()
        yield from in_workers(function, method, jobs, num_threads)
    finally:
        if owns_freeze:
            gc.unfreeze()


def _nothing() -> None:
    pass


def map_blocks(function: PerLine, blocks: Iterable[bytes], num_threads: int = 1) -> Iterator[bytes]:
    """Apply ``function`` to every block of lines (see ``streams.read_blocks``)
    in order, in ``num_threads`` worker processes; yields each block's output
    (one line per input line, each ending in ``\\n``). Output is identical
    for any number of workers; an error names its input line."""

    def jobs() -> Iterator[tuple[int, bytes]]:
        first = 1
        for block in _small_first(blocks) if num_threads > 1 else blocks:
            yield first, block
            first += block.count(b"\n") + 1

    return _map(function, "block", jobs(), num_threads)


#: Bytes of the first block done before workers are forked (see _map).
WARM_UP_BYTES = 1 << 15


def _small_first(blocks: Iterable[bytes]) -> Iterator[bytes]:
    """The blocks, the first one cut after its first WARM_UP_BYTES (at a
    line end): the words most frequent in a text show up within its first
    few thousand, and the parent, which encodes that first job alone while
    both cores wait, need not do more for the workers to inherit them."""
    iterator = iter(blocks)
    for block in iterator:
        cut = block.find(b"\n", WARM_UP_BYTES)
        if cut < 0:
            yield block
        else:
            yield block[:cut]
            yield block[cut + 1:]
        break
    yield from iterator


def map_lines(function: PerLine, lines: Iterable[bytes], num_threads: int = 1,
              chunk_size: int = 2000) -> Iterator[bytes]:
    """Apply ``function`` to every line, in order, shipping ``chunk_size``
    lines to a worker at a time; yields one output per input line."""

    def jobs() -> Iterator[tuple[int, list[bytes]]]:
        iterator = iter(lines)
        first = 1
        while True:
            chunk = list(itertools.islice(iterator, chunk_size))
            if not chunk:
                return
            yield first, chunk
            first += len(chunk)

    for outputs in _map(function, "lines", jobs(), num_threads):
        yield from outputs
