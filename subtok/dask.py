"""Counting on a Dask cluster (the optional extra ``subtok[dask]``).

``subtok count --scheduler local:N`` starts a ``distributed.LocalCluster``
of N single-threaded worker processes; ``--scheduler tcp://HOST:PORT``
uses a running scheduler. Each input file, or each byte range of about
``--chunk_size`` bytes of a larger file
(:class:`subtok.training.corpus.FileRange`: the lines that start in it),
is one task: a worker counts it with the options given (as
:func:`subtok.training.counts.count` does, in bounded memory, spilling on
the worker's own temporary disk). The partial count files are merged on
the workers, a few at a time, in a tree that keeps them in corpus order
(:func:`merge_tree`; the merge joins unigram counts across parts), and
only the merged file comes back to the client, so the result is
byte-identical to counting on one machine. :func:`count_bag` does the
same for a ``dask.bag`` of lines, one task per partition, merged in
partition order.

Nothing here is imported by ``import subtok`` or by any other command;
without dask and distributed installed, asking for a scheduler is a
one-line error saying what to install.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

from subtok.errors import SubtokError, TrainerError
from subtok.training import counts
from subtok.training.corpus import FileRange, byte_ranges

INSTALL_HINT = "pip install 'subtok[dask]' (dask and distributed)"
#: Seconds to wait for a tcp:// scheduler before giving up.
CONNECT_TIMEOUT = 10
#: Default of ``--chunk_size``: a file larger than this is counted in byte
#: ranges of about this size, one task each (large enough that a task's
#: start-up and its count file are small beside its counting).
DEFAULT_CHUNK_SIZE = 128 << 20
#: Count files merged by one task of the merge tree.
MERGE_FAN_IN = 4


def _dask():
    """The ``dask`` module, or the one-line error saying what to install."""
    try:
        import dask
    except ImportError:
        raise SubtokError("--scheduler needs Dask, which is not installed: %s." % INSTALL_HINT) from None
    return dask


def _distributed():
    """The ``distributed`` module, or the one-line error saying what to install."""
    try:
        import distributed
    except ImportError:
        raise SubtokError("--scheduler needs Dask, which is not installed: %s." % INSTALL_HINT) from None
    return distributed


def client_for(scheduler: str):
    """A ``distributed.Client`` for ``local:N`` or a scheduler address.
    The caller closes it (and, for ``local:N``, its cluster)."""
    distributed = _distributed()
    if scheduler.startswith("local:"):
        text = scheduler[len("local:"):]
        if not text.isdigit() or int(text) < 1:
            raise SubtokError("--scheduler=%s: expected local:N with N >= 1 worker processes."
                              % scheduler)
        # A task's SubtokError comes back to the client, which prints it as
        # one line; the workers would also log it, with a traceback. The
        # scheduler's HTTP server takes a free port: with dashboard_address
        # None it still tries 8787 and warns when another cluster has it.
        cluster = distributed.LocalCluster(n_workers=int(text), threads_per_worker=1,
                                           processes=True, dashboard_address=":0",
                                           silence_logs=logging.CRITICAL)
        return distributed.Client(cluster)
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SubtokError("--scheduler=%s: cannot reach the Dask scheduler: %s."
                          % (scheduler, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from None


def file_size(path: str) -> int:
    """One task: the size of ``path`` as a worker sees it (the client may not
    see the workers' files)."""
    try:
        return os.path.getsize(path)
    except OSError as exc:
        raise TrainerError("%s: cannot open input file: %s." % (path, exc.strerror or exc)) from None


def count_range(piece: FileRange, options: dict[str, Any], max_memory: int | str,
                tmp_dir: str | None) -> bytes:
    """One task: the count file of the lines that start in a byte range of a
    file (a whole small file is one range), as bytes."""
    return _count_bytes(piece, options, max_memory, tmp_dir)


def count_file(path: str, options: dict[str, Any], max_memory: int | str,
               tmp_dir: str | None) -> bytes:
    """One task: the count file of the whole of ``path`` (run on a worker)."""
    return _count_bytes(FileRange(path, 0, file_size(path)), options, max_memory, tmp_dir)


def count_lines(lines, options: dict[str, Any], max_memory: int | str,
                tmp_dir: str | None) -> bytes:
    """One partition of a bag of lines: its count file (run on a worker)."""
    return _count_bytes(list(lines), options, max_memory, tmp_dir)


def _count_bytes(lines, options: dict[str, Any], max_memory: int | str,
                 tmp_dir: str | None) -> bytes:
    """The count file of ``lines`` (see :func:`subtok.training.counts.count`),
    as bytes, counted in this process (the worker's one thread)."""
    with tempfile.TemporaryDirectory(prefix="subtok-dask-", dir=tmp_dir) as directory:
        output = os.path.join(directory, "part.tsv")
        counts.count(output, lines=lines, max_memory=max_memory, tmp_dir=tmp_dir,
                     **dict(options, num_threads=1))
        with open(output, "rb") as handle:
            return handle.read()


def merge_counts(*blobs: bytes, tmp_dir: str | None = None) -> bytes:
    """One task of the merge tree: count files (bytes) merged in the order
    given, as :func:`subtok.training.counts.merge` merges files (which joins
    unigram counts of consecutive parts), as bytes."""
    with tempfile.TemporaryDirectory(prefix="subtok-dask-", dir=tmp_dir) as directory:
        parts = []
        for number, blob in enumerate(blobs):
            part = os.path.join(directory, "part-%06d.tsv" % number)
            with open(part, "wb") as handle:
                handle.write(blob)
            parts.append(part)
        output = os.path.join(directory, "merged.tsv")
        counts.merge(parts, output)
        with open(output, "rb") as handle:
            return handle.read()


def merge_tree(parts: list, tmp_dir: str | None = None, fan_in: int = MERGE_FAN_IN):
    """A ``dask.delayed`` count file: ``parts`` (delayed count files, in
    corpus order) merged ``fan_in`` at a time, level by level, each merge a
    task on a worker, so no one process ever holds all the parts. Neighbours
    are merged with neighbours and left stays left: unigram counts join the
    end of one part to the start of the next, so the order matters (a
    merge of other groupings of the same order gives the same bytes)."""
    delayed = _dask().delayed
    if not parts:
        raise ValueError("no count files to merge")
    if fan_in < 2:
        raise ValueError("fan_in must be >= 2")
    merge = delayed(merge_counts, pure=False)
    level = list(parts)
    while len(level) > 1:
        level = [group[0] if len(group) == 1 else merge(*group, tmp_dir=tmp_dir)
                 for group in (level[i:i + fan_in] for i in range(0, len(level), fan_in))]
    return level[0]


def chunk_bytes(chunk_size: int | str) -> int:
    """``--chunk_size`` (bytes, or a size such as 128M) in bytes."""
    if isinstance(chunk_size, int) and not isinstance(chunk_size, bool):
        if chunk_size < 1:
            raise SubtokError("--chunk_size=%d: must be at least 1 byte." % chunk_size)
        return chunk_size
    try:
        return counts.parse_size(chunk_size)
    except SubtokError:
        raise SubtokError("--chunk_size=%s: expected a size such as 64M or 1G." % chunk_size) from None


def count_bag(bag, output: str, *, max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
              tmp_dir: str | None = None, **options: Any) -> dict:
    """Count a ``dask.bag`` of lines (str or bytes, one sentence each) into
    ``output``, its partitions merged in order, in a tree (on the scheduler
    that is current, e.g. a ``distributed.Client``'s)."""
    counts.counting_options(**options)
    count = _dask().delayed(count_lines, pure=False)
    parts = [count(partition, options, max_memory, tmp_dir) for partition in bag.to_delayed()]
    return _write(merge_tree(parts, tmp_dir).compute(), output)


def _write(blob: bytes, output: str) -> dict:
    """The merged count file written to ``output`` (atomically); its header."""
    from subtok.atomic import atomic_writer
    with atomic_writer(output) as out:
        out.write(blob)
    return counts.parse_header(blob.split(b"\n", 1)[0], output)


def count(paths: list[str], output: str, client, *, chunk_size: int | str = DEFAULT_CHUNK_SIZE,
          max_memory: int | str = counts.DEFAULT_MAX_MEMORY, tmp_dir: str | None = None,
          fan_in: int = MERGE_FAN_IN, **options: Any) -> dict:
    """Count ``paths`` on the cluster of ``client`` into ``output``; return
    the header. Files over ``chunk_size`` bytes are counted in ranges of
    about that size, one task each; the parts are merged ``fan_in`` at a
    time on the workers (:func:`merge_tree`) and only the merged file comes
    back. ``options``: spm_train options, as for
    :func:`subtok.training.counts.count`."""
    if not paths:
        raise TrainerError("--input is required: give one or more files.")
    counts.counting_options(input=list(paths), **options)  # bad options fail here, not on a worker
    chunk = chunk_bytes(chunk_size)
    sizes = client.gather(client.map(file_size, paths, pure=False))
    count = _dask().delayed(count_range, pure=False)
    parts = [count(piece, options, max_memory, tmp_dir)
             for path, size in zip(paths, sizes) for piece in byte_ranges(path, size, chunk)]
    return _write(client.compute(merge_tree(parts, tmp_dir, fan_in)).result(), output)


def count_on_cluster(output: str, *, scheduler: str, chunk_size: int | str = DEFAULT_CHUNK_SIZE,
                     max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
                     tmp_dir: str | None = None, **options: Any) -> dict:
    """``subtok count --scheduler``: connect (or start a local cluster),
    count, and close what was opened."""
    paths = list(options.pop("input"))
    if "-" in paths:
        raise SubtokError("--scheduler cannot count stdin (-): give files the workers can read.")
    options.pop("model_prefix", None)
    chunk_bytes(chunk_size)  # bad sizes fail before a cluster is started
    if isinstance(max_memory, str):
        counts.parse_size(max_memory)
    counts.counting_options(input=paths, **options)
    client = client_for(scheduler)
    try:
        return count(paths, output, client, chunk_size=chunk_size, max_memory=max_memory,
                     tmp_dir=tmp_dir, **options)
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and scheduler.startswith("local:"):
            cluster.close()


__all__ = ["count", "count_bag", "count_on_cluster", "client_for", "count_file", "count_lines",
           "count_range", "merge_counts", "merge_tree", "file_size", "chunk_bytes", "INSTALL_HINT",
           "DEFAULT_CHUNK_SIZE", "MERGE_FAN_IN"]
