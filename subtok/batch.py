"""Line-by-line encoding and decoding, in one process or several.

A :class:`LineEncoder` / :class:`LineDecoder` turns one raw input line into
one output line. They are picklable, so ``map_lines`` can ship them to
worker processes, which each encode whole chunks of lines; results come back
in input order, byte-identical to a single process.
"""

from __future__ import annotations

import collections
import itertools
import multiprocessing
import os
import random
from collections.abc import Callable, Iterable, Iterator

from .errors import DecodeError, EncodeError, SubtokError
from .processor import Pair, SentencePieceProcessor, format_pairs
from .sampling import line_rng

EXTRA_OPTIONS = ("bos", "eos", "reverse", "unk", "unk_piece")


def parse_extra_options(text: str, processor: SentencePieceProcessor) -> list[str]:
    """Validate spm's ``--extra_options`` (``bos:eos:reverse:unk``)."""
    options = [o for o in text.split(":") if o] if text else []
    for option in options:
        if option not in EXTRA_OPTIONS:
            raise EncodeError('option "%s" is not available.' % option)
        if option in ("bos", "eos"):
            name = getattr(processor.vocab.special, option + "_piece")
            if processor.vocab.piece_to_id(name) == processor.vocab.unk_index:
                raise EncodeError("id for `%s` is not defined." % name)
    return options


def apply_extra_options(pairs: list[Pair], options: list[str],
                        processor: SentencePieceProcessor) -> list[Pair]:
    """Apply the options in the order given, as spm_encode/spm_decode do."""
    vocab = processor.vocab
    for option in options:
        if option == "reverse":
            pairs = pairs[::-1]
        elif option in ("bos", "eos"):
            name = getattr(vocab.special, option + "_piece")
            pair = (name, vocab.piece_to_id(name))
            pairs = [pair] + pairs if option == "bos" else pairs + [pair]
        else:  # unk / unk_piece: show unknown pieces as the unk piece
            unk = vocab.unk_index
            pairs = [(vocab.pieces[unk], i) if i == unk else (p, i) for p, i in pairs]
    return pairs


def _text(line: bytes) -> str:
    return line.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class LineEncoder:
    """Encode one line into the text of one output line (``piece`` or ``id``)."""

    def __init__(self, processor: SentencePieceProcessor, output_format: str,
                 extra_options: str = "") -> None:
        if output_format not in ("piece", "id"):
            raise EncodeError("unknown output format: %s" % output_format)
        self.processor = processor
        self.ids = output_format == "id"
        self.options = parse_extra_options(extra_options, processor)

    def pairs(self, line: bytes) -> list[Pair]:
        pairs = self.processor.encode_pairs(_text(line))
        if self.options:
            pairs = apply_extra_options(pairs, self.options, self.processor)
        return pairs

    def __call__(self, line: bytes) -> bytes:
        if not self.options:
            return _bytes(self.processor.encode_line(_text(line), self.ids))
        return _bytes(format_pairs(self.pairs(line), self.ids))


class SampleLineEncoder:
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
        self.options = parse_extra_options(extra_options, processor)
        # Fail before reading any input, as every line would.
        if self.nbest:
            processor._check_sampling(nbest_size, "NBestEncode")
        else:
            processor._check_sampling(nbest_size, "SampleEncode", alpha)
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
            pairs = apply_extra_options(pairs, self.options, self.processor)
        return _bytes(format_pairs(pairs, self.ids))

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        text = _text(line)
        if self.nbest:
            hypotheses = self.processor.nbest_pairs(text, self.nbest_size)
            return b"\n".join([self._format(pairs) for pairs in hypotheses])
        return self._format(self.processor.sample_pairs(text, self.nbest_size, self.alpha,
                                                        self.rng(number)))


class LineDecoder:
    """Decode one line of space-separated pieces or ids into text."""

    def __init__(self, processor: SentencePieceProcessor, input_format: str,
                 extra_options: str = "") -> None:
        if input_format not in ("piece", "id"):
            raise DecodeError("unknown input format: %s" % input_format)
        self.processor = processor
        self.ids = input_format == "id"
        self.options = parse_extra_options(extra_options, processor)

    def __call__(self, line: bytes) -> bytes:
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
                processor._check_id(piece_id)
                pairs.append((pieces[piece_id], piece_id))
        else:
            lookup = processor.vocab.piece_to_id
            pairs = [(f, lookup(f)) for f in fields]
        if self.options:
            pairs = apply_extra_options(pairs, self.options, processor)
        return _bytes(processor.decoder.decode(pairs))


# -- several processes ----------------------------------------------------
_worker_function: Callable[[bytes], bytes] | None = None


def _init_worker(function: Callable[[bytes], bytes]) -> None:
    global _worker_function
    _worker_function = function


def _apply(function: Callable[[bytes], bytes], first_line: int, chunk: list[bytes]) -> list[bytes]:
    """Run ``function`` over a chunk; errors say which input line failed.

    A function with a true ``numbered`` attribute also gets the line number.
    """
    out = []
    numbered = getattr(function, "numbered", False)
    for number, line in enumerate(chunk, first_line):
        try:
            out.append(function(line, number) if numbered else function(line))
        except SubtokError as exc:
            raise type(exc)("line %d: %s" % (number, exc)) from None
    return out


def _run_chunk(job: tuple[int, list[bytes]]) -> list[bytes]:
    assert _worker_function is not None
    return _apply(_worker_function, *job)


def _chunks(lines: Iterable[bytes], size: int) -> Iterator[tuple[int, list[bytes]]]:
    iterator = iter(lines)
    first = 1
    while True:
        chunk = list(itertools.islice(iterator, size))
        if not chunk:
            return
        yield first, chunk
        first += len(chunk)


#: Chunks encoded in the parent before worker processes are forked.
WARM_UP_CHUNKS = 3


def map_lines(function: Callable[[bytes], bytes], lines: Iterable[bytes],
              num_threads: int = 1, chunk_size: int = 2000) -> Iterator[bytes]:
    """Apply ``function`` to every line, in order, using worker processes.

    Lines are read lazily and only a few chunks per worker are in flight, so
    memory stays bounded on huge inputs. An error names its input line.
    """
    if num_threads <= 1:
        for first, chunk in _chunks(lines, chunk_size):
            yield from _apply(function, first, chunk)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    jobs = _chunks(lines, chunk_size)
    if "fork" in methods:
        # The first chunks are done here: forked workers then inherit the
        # caches they filled (the most frequent words, most of the cost of
        # a cold start) instead of each rebuilding them.
        for first, chunk in itertools.islice(jobs, WARM_UP_CHUNKS):
            yield from _apply(function, first, chunk)
    in_flight: collections.deque = collections.deque()
    with context.Pool(num_threads, _init_worker, (function,)) as pool:
        for job in jobs:
            in_flight.append(pool.apply_async(_run_chunk, (job,)))
            if len(in_flight) >= 2 * num_threads:
                yield from in_flight.popleft().get()
        while in_flight:
            yield from in_flight.popleft().get()
