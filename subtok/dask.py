"""Counting on a Dask cluster (the optional extra ``subtok[dask]``).

``subtok count --scheduler local:N`` starts a ``distributed.LocalCluster``
of N single-threaded worker processes; ``--scheduler tcp://HOST:PORT``
uses a running scheduler. Each input file is one task: a worker counts it
with the options given (as :func:`subtok.training.counts.count` does, in
bounded memory, spilling on the worker's own temporary disk) and sends the
count file back as bytes; the client merges the partial files in input
order (a streaming k-way merge, which also joins unigram counts across
files), so the result is byte-identical to counting on one machine.
:func:`count_bag` does the same for a ``dask.bag`` of lines, one task per
partition, merged in partition order.

Nothing here is imported by ``import subtok`` or by any other command;
without dask and distributed installed, asking for a scheduler is a
one-line error saying what to install.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from subtok.errors import SubtokError
from subtok.training import counts

INSTALL_HINT = "pip install 'subtok[dask]' (dask and distributed)"
#: Seconds to wait for a tcp:// scheduler before giving up.
CONNECT_TIMEOUT = 10


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
        cluster = distributed.LocalCluster(n_workers=int(text), threads_per_worker=1,
                                           processes=True, dashboard_address=None)
        return distributed.Client(cluster)
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SubtokError("--scheduler=%s: cannot reach the Dask scheduler: %s."
                          % (scheduler, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from None


def count_file(path: str, options: dict[str, Any], max_memory: int | str,
               tmp_dir: str | None) -> bytes:
    """One task: the count file of ``path`` (run on a worker)."""
    with tempfile.TemporaryDirectory(prefix="subtok-dask-", dir=tmp_dir) as directory:
        output = os.path.join(directory, "part.tsv")
        counts.count(output, input=[path], max_memory=max_memory, tmp_dir=tmp_dir,
                     **dict(options, num_threads=1))
        with open(output, "rb") as handle:
            return handle.read()


def count_lines(lines, options: dict[str, Any], max_memory: int | str,
                tmp_dir: str | None) -> bytes:
    """One partition of a bag of lines: its count file (run on a worker)."""
    with tempfile.TemporaryDirectory(prefix="subtok-dask-", dir=tmp_dir) as directory:
        output = os.path.join(directory, "part.tsv")
        counts.count(output, lines=list(lines), max_memory=max_memory, tmp_dir=tmp_dir,
                     **dict(options, num_threads=1))
        with open(output, "rb") as handle:
            return handle.read()


def count_bag(bag, output: str, *, max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
              tmp_dir: str | None = None, **options: Any) -> dict:
    """Count a ``dask.bag`` of lines (str or bytes, one sentence each) into
    ``output``, its partitions merged in order (on the scheduler that is
    current, e.g. a ``distributed.Client``'s)."""
    counts.counting_options(**options)
    parts = bag.map_partitions(lambda part: [count_lines(part, options, max_memory, tmp_dir)])
    return _merge_parts(parts.compute(), output, tmp_dir)


def _merge_parts(blobs, output: str, tmp_dir: str | None) -> dict:
    """Write the partial count files and merge them, in order, into ``output``."""
    with tempfile.TemporaryDirectory(prefix="subtok-dask-", dir=tmp_dir) as directory:
        parts = []
        for number, blob in enumerate(blobs):
            part = os.path.join(directory, "part-%06d.tsv" % number)
            with open(part, "wb") as handle:
                handle.write(blob)
            parts.append(part)
        return counts.merge(parts, output)


def count(paths: list[str], output: str, client, *, max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
          tmp_dir: str | None = None, **options: Any) -> dict:
    """Count ``paths`` on the cluster of ``client`` into ``output``; return
    the header. ``options``: spm_train options, as for
    :func:`subtok.training.counts.count`."""
    counts.counting_options(input=list(paths), **options)  # bad options fail here, not on a worker
    futures = client.map(count_file, paths, options=options, max_memory=max_memory,
                         tmp_dir=tmp_dir, pure=False)
    return _merge_parts((future.result() for future in futures), output, tmp_dir)


def count_on_cluster(output: str, *, scheduler: str, max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
                     tmp_dir: str | None = None, **options: Any) -> dict:
    """``subtok count --scheduler``: connect (or start a local cluster),
    count, and close what was opened."""
    paths = list(options.pop("input"))
    if "-" in paths:
        raise SubtokError("--scheduler cannot count stdin (-): give files the workers can read.")
    options.pop("model_prefix", None)
    client = client_for(scheduler)
    try:
        return count(paths, output, client, max_memory=max_memory, tmp_dir=tmp_dir, **options)
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and scheduler.startswith("local:"):
            cluster.close()


__all__ = ["count", "count_bag", "count_on_cluster", "client_for", "count_file", "count_lines",
           "INSTALL_HINT"]
