"""Training the families that are written as Hugging Face / tiktoken files:
WordPiece (``tokenizer.json`` + BERT ``vocab.txt``) and byte-level BPE
(``tokenizer.json`` + ``.tiktoken`` ranks).

What both trainers share, on top of :mod:`subtok.training.corpus`:

* :func:`count_pretokens`: the input streamed as raw lines (line ends kept:
  ``tokenizers`` trains on lines so, and a byte-level model sees newlines
  as text; TSV lines give ``text<TAB>count``), sampled to
  ``--input_sentence_size`` (:func:`~subtok.training.reading.select`), cut
  into chunks of about :data:`CHUNK_CHARS` characters and counted by the
  family's function in worker processes (:mod:`subtok.parallel`). Counts
  are sums, so the result never depends on ``--num_threads``. From a
  ``subtok count`` file (:mod:`subtok.training.counts`) the counts are
  read instead, once its header shows they were made by the same
  counting (:func:`pretoken_counter`'s ``shape``); ``subtok count`` uses
  the chunks of :func:`pretoken_count_chunks`, so both count alike;
* :func:`train_family`: checks the output paths, runs the trainer and
  publishes all its files at once (:func:`subtok.atomic.atomic_writers`).

A trainer (``subtok.models.<family>.trainer.train(options, progress,
lines)``) returns a :class:`Trained`; its module's
``pretoken_counter(options)`` says how it counts.
"""

from __future__ import annotations

import os
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from subtok.errors import TrainerError
from subtok.parallel import chunks, ordered_map, run_in_child, worker_count
from subtok.progress import Progress
from subtok.training.reading import read_sentences, select
from subtok.training.spec import TrainerOptions

#: Characters per counting task (tasks depend on the data only). Small:
#: every worker and every task in flight holds a chunk and its counts, and
#: larger chunks raised the peak memory of the counting more than they
#: saved time (docs/performance.md).
CHUNK_CHARS = 500_000
#: Below this many bytes of input the counting runs in this process.
PARALLEL_MIN_BYTES = 2_000_000

#: Model type -> the suffixes of the files it writes, in writing order.
SUFFIXES = {
    "wordpiece": (".json", ".txt", ".vocab"),
    "byte_bpe": (".json", ".tiktoken", ".vocab"),
}


@dataclass
class Trained:
    """What a family trainer produced."""

    model_type: str
    #: id -> token, as in the written files.
    tokens: list[str]
    #: id -> score written to PREFIX.vocab (the count or gain at which the
    #: token was added; 0 for special tokens and the alphabet).
    scores: list[float]
    #: suffix -> file contents.
    files: dict[str, bytes]
    #: suffix -> where the file was written (set by :func:`train_family`).
    paths: dict[str, Path] = field(default_factory=dict)


def input_size(options: TrainerOptions, lines: Iterable | None) -> int | None:
    """Bytes (or characters) of input, when known without reading it."""
    if lines is not None:
        if isinstance(lines, (list, tuple)):
            return sum(len(line) for line in lines)
        return None
    if "-" in options.input:
        return None
    total = 0
    for path in options.input:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass  # read_sentences reports it with its reason
    return total


def counting_workers(options: TrainerOptions, size: int | None) -> int:
    """Worker processes for counting about ``size`` bytes of input."""
    if size is not None and size < PARALLEL_MIN_BYTES:
        return 1
    return worker_count(options.num_threads)


def count_pretokens(options: TrainerOptions, progress: Progress, lines: Iterable | None,
                    count_chunk: Callable[[Any, list[tuple[str, int]]], Counter],
                    shared: Any) -> Counter:
    """``count_chunk(shared, chunk)`` over the chunks of the input, summed.

    A chunk is a list of ``(line, count)``; ``count_chunk`` must be a
    module-level function (workers get it by reference), and ``shared``
    must have a ``shape`` (the header fields of its count files, see
    :func:`pretoken_counter`). A large input file is counted in a forked
    child (:func:`subtok.parallel.run_in_child`) that sends back only the
    counts: the trainer then starts from a heap without the garbage of
    reading and counting. Count files of ``subtok count`` (told by their
    header) are read instead of counted
    (:func:`subtok.training.counts.load_counted_pretokens`).
    """
    if lines is None:
        # (imported here: counts imports this module to count the families' units)
        from subtok.training import counts
        if counts.is_count_input(options):
            return counts.load_counted_pretokens(options, shared.shape)
    size = input_size(options, lines)
    if lines is None and size is not None and size >= PARALLEL_MIN_BYTES:
        return run_in_child(_count_all, options, progress, lines, count_chunk, shared)
    return _count_all(options, progress, lines, count_chunk, shared)


def pretoken_counter(options: TrainerOptions) -> tuple[Callable[[Any, list[tuple[str, int]]], Counter], Any]:
    """``(count_chunk, shared)``: how the trainer of ``options.model_type``
    counts its units (the trainer module's own ``pretoken_counter``), for
    :func:`count_pretokens` and :func:`pretoken_count_chunks`.
    ``shared.shape`` is a JSON object of everything that decides the units
    (the tokenizer.json components that cut and normalize them)."""
    from subtok.training import get_trainer
    return get_trainer(options.model_type_name, "pretoken_counter")(options)


def pretoken_count_chunks(options: TrainerOptions, progress: Progress, lines: Iterable | None,
                          count_chunk: Callable[[Any, list[tuple[str, int]]], Counter],
                          shared: Any) -> Iterator[tuple[int, Counter]]:
    """(lines in the chunk, ``count_chunk(shared, chunk)``) for every chunk
    of the input, in input order, as the workers give them back: the
    reading, sampling, chunks and workers of training, for callers that
    merge the counts themselves (:func:`_count_all`, and ``subtok count``,
    which spills them to disk)."""
    stream = read_sentences(options, progress, lines, raw=True)
    if options.input_sentence_size > 0:
        stream = select(stream, options)
    sizes: deque = deque()

    def tasks() -> Iterator[list[tuple[str, int]]]:
        for task in chunks(stream, lambda item: len(item[0]), CHUNK_CHARS):
            sizes.append(len(task))
            yield task

    workers = counting_workers(options, input_size(options, lines))
    results = ordered_map(count_chunk, tasks(), workers, shared=shared)
    with closing(results):
        for part in results:
            # (results come in task order, and a task is made before its result)
            yield sizes.popleft(), part


def _count_all(options: TrainerOptions, progress: Progress, lines: Iterable | None,
               count_chunk: Callable[[Any, list[tuple[str, int]]], Counter],
               shared: Any) -> Counter:
    """Read, sample, cut and count (see :func:`count_pretokens`)."""
    total: Counter = Counter()
    for _, part in pretoken_count_chunks(options, progress, lines, count_chunk, shared):
        total.update(part)
    if not total:
        raise TrainerError("the corpus is empty: no text in %s."
                           % (", ".join(options.input) if lines is None else "the given sentences"))
    return total


def output_paths(prefix: str, suffixes: Iterable[str]) -> list[Path]:
    """PREFIX + each suffix, checked for writability before any training."""
    paths = [Path(prefix + suffix) for suffix in suffixes]
    directory = paths[0].parent
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        reason = "does not exist" if not directory.is_dir() else "is not writable"
        raise TrainerError("%s: cannot write the model: directory %s %s (--model_prefix)."
                           % (paths[0], directory, reason))
    for path in paths:
        if path.is_dir():
            raise TrainerError("%s: cannot write the model: it is a directory (--model_prefix)."
                               % path)
    return paths


def train_family(options: TrainerOptions, progress: Progress, lines: Iterable | None) -> Trained:
    """Train a WordPiece or byte-level BPE model and write its files."""
    from subtok.training import get_trainer
    suffixes = SUFFIXES[options.model_type_name]
    paths = output_paths(options.model_prefix, suffixes)
    trained = get_trainer(options.model_type_name)(options, progress, lines)
    from subtok.atomic import atomic_writers  # (as the models of training.api: when writing)
    with atomic_writers(*paths) as outs:
        for out, suffix in zip(outs, suffixes):
            out.write(trained.files[suffix])
    trained.paths = dict(zip(suffixes, paths))
    return trained


__all__ = ["Trained", "count_pretokens", "pretoken_counter", "pretoken_count_chunks",
           "train_family", "output_paths",
           "counting_workers", "input_size", "SUFFIXES", "CHUNK_CHARS"]
