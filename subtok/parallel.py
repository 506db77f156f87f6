"""Worker processes for work that splits into independent tasks (training).

One way to fork, used by every trainer: tasks are cut from the data alone
(:func:`chunk_bounds`), never from the number of workers, and results come
back in task order, so the output is the same for any ``num_threads``.

Workers are forked, not spawned: they inherit the parent's data (a corpus,
a model) without pickling it. What a task function needs besides its task
is handed to :func:`ordered_map` as ``shared``; it reaches the workers by
inheritance and is passed to the function as its first argument. The
objects the workers inherit are frozen out of the garbage collector
(``gc.freeze``), whose passes would otherwise write to, and so copy, every
inherited page.

Where the system cannot fork, or one worker is asked for, everything runs
in this process, with the same results. The CLI's streaming encoder has
its own protocol (:mod:`subtok.cli.workers`): it feeds an unbounded stream
and shares caches between workers.
"""

from __future__ import annotations

import collections
import gc
import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from subtok.errors import SubtokError

#: What the task function of the running :func:`ordered_map` gets first;
#: set before the workers fork, so they inherit it.
_SHARED: list[Any] = []


def cpu_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def worker_count(num_threads: int, tasks: int = sys.maxsize) -> int:
    """Workers to use: at most ``num_threads``, the cores and the tasks; 1
    where the system cannot fork."""
    if num_threads < 2 or not can_fork():
        return 1
    return max(1, min(num_threads, cpu_count(), tasks))


def chunk_bounds(items: Sequence, cost: Callable[[Any], int], limit: int) -> list[tuple[int, int]]:
    """``(lo, hi)`` index ranges that cut ``items`` into runs costing about
    ``limit`` each (a run ends once it reaches the limit)."""
    bounds = [0]
    acc = 0
    for index, item in enumerate(items):
        acc += cost(item)
        if acc >= limit:
            bounds.append(index + 1)
            acc = 0
    if bounds[-1] != len(items):
        bounds.append(len(items))
    return list(zip(bounds, bounds[1:]))


def chunks(items: Iterable, cost: Callable[[Any], int], limit: int) -> Iterator[list]:
    """:func:`chunk_bounds` over a stream: lists of consecutive items."""
    chunk: list = []
    acc = 0
    for item in items:
        chunk.append(item)
        acc += cost(item)
        if acc >= limit:
            yield chunk
            chunk, acc = [], 0
    if chunk:
        yield chunk


def ordered_map(func: Callable, tasks: Iterable, workers: int, *, shared: Any = None,
                in_flight: int = 2) -> Iterator:
    """``func(shared, task)`` for every task, in task order.

    With ``workers > 1`` (and fork available) the tasks run in forked
    workers; at most ``in_flight`` tasks per worker are pending at once, so
    a stream of tasks is consumed as the results are taken, and the caller
    can merge results as they come without holding them all. ``func`` must
    be a module-level function (it is sent by reference).
    """
    if workers < 2 or not can_fork():
        for task in tasks:
            yield func(shared, task)
        return
    _SHARED[:] = [func, shared]
    gc.freeze()
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            pending: collections.deque = collections.deque()
            for task in tasks:
                if len(pending) >= in_flight * workers:
                    yield pending.popleft().get()
                pending.append(pool.apply_async(_run_task, (task,)))
            while pending:
                yield pending.popleft().get()
    finally:
        gc.unfreeze()
        _SHARED.clear()


def _run_task(task: Any) -> Any:
    func, shared = _SHARED
    return func(shared, task)


def run_in_child(func: Callable, *args: Any) -> Any:
    """``func(*args)`` computed in a forked child; its result (or exception)
    comes back pickled. The parent's heap then never holds the garbage the
    computation leaves (e.g. corpus reading before training). Without fork,
    it runs here."""
    if not hasattr(os, "fork"):
        return func(*args)
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        status = 0
        try:
            os.close(read_end)
            try:
                outcome = (True, func(*args))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the parent
                outcome = (False, exc)
            with os.fdopen(write_end, "wb") as out:
                pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        data = handle.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise SubtokError("a worker process failed (exit status %d)." % status)
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


__all__ = ["cpu_count", "can_fork", "worker_count", "chunk_bounds", "chunks", "ordered_map",
           "run_in_child"]
