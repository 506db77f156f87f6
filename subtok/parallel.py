"""Worker processes for work that splits into independent tasks (training).

One way to fork, used by every trainer: tasks are cut from the data alone
(:func:`chunk_bounds`, :func:`chunks`), never from the number of workers,
and results come back in task order, so the output is the same for any
``num_threads``. Three shapes of work:

* :func:`ordered_map`: a stream of tasks, each sent to a free worker;
* :class:`PersistentWorkers`: the same tasks pass after pass, each task
  owned by one worker that keeps what it built for it between passes
  (the unigram trainer's lattices);
* :func:`run_in_child`: one computation in a child, so that the parent's
  heap never holds its garbage.

Workers are forked, not spawned: they inherit the parent's data (a corpus,
a model) without pickling it. What a task function needs besides its task
is handed over as ``shared`` and reaches the workers by inheritance (it is
an argument of the forked process); only tasks, later jobs and results
travel, pickled, over one pipe per worker. The objects the workers
inherit are frozen out of the garbage collector (``gc.freeze``), whose
passes would otherwise write to, and so copy, every inherited page. For
:class:`PersistentWorkers` they stay frozen in the parent too until the
workers stop: a full pass in the parent writes the header of every object
it walks, and each page the parent writes is then held twice, the
workers keeping the original. For the same reason the C heap's free
pages are given back to the system before a fork and after each pass of
a persistent worker, and in the parent after each pass (:func:`_trim`).

The parent sends a task only to a worker that is waiting for one, so
neither side can block the other on a full pipe. A worker that dies (e.g.
killed for memory) ends the run with a one-line :class:`SubtokError`; an
exception in a task reaches the caller when its result would have (a
:class:`SubtokError` as it is, any other wrapped in one, the original and
the worker's traceback chained as its cause); no worker outlives a run.

Where the system cannot fork, or one worker is asked for, everything runs
in this process, with the same results (a task's exception is then raised
as it is). The CLI's streaming encoder has
its own protocol (:mod:`subtok.lines.workers`): it feeds an unbounded stream
and shares caches between workers.

``multiprocessing``, ``pickle`` and ``traceback`` are imported where they
are first needed, in the parent before it forks: a run that forks nothing
(a small corpus, an empty one) never loads them, which is a good part of
``subtok train``'s start-up otherwise (docs/performance.md).
:class:`PersistentWorkers` imports them (and ``ctypes``) when it is made,
before its caller builds the first job, not at the fork: their objects
would otherwise fill the free space among the job's, and keep its memory
from being given back when it is dropped.
"""

from __future__ import annotations

import collections
import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from subtok.errors import SubtokError


def cpu_count() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    import multiprocessing
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


# ----------------------------------------------------------------------------
# one worker: a forked process and the parent's end of its pipe


#: The parent's ends of the pipes of every live worker. A new worker closes
#: its copies (its own included), so that the parent's closing an end is
#: what tells that worker to stop, whatever was forked since.
_PARENT_ENDS: set = set()


class _Worker:
    """A forked process running ``loop(pipe, *args)``, and the parent's end
    of its pipe."""

    def __init__(self, loop: Callable, args: tuple) -> None:
        import multiprocessing.connection  # (and pickle): before the fork, so the worker has them
        context = multiprocessing.get_context("fork")
        self.pipe, child_end = context.Pipe()
        _PARENT_ENDS.add(self.pipe)
        try:
            self.process = context.Process(target=_serve, args=(child_end, loop, args),
                                           daemon=True)
            self.process.start()
        except BaseException:
            self.close()
            raise
        finally:
            child_end.close()

    def send(self, message: Any) -> None:
        try:
            self.pipe.send(message)
        except OSError:
            raise SubtokError(self.death()) from None

    def close(self) -> None:
        """Close the parent's end: the worker stops when it next reads."""
        _PARENT_ENDS.discard(self.pipe)
        self.pipe.close()

    def death(self) -> str:
        """One line on how the worker ended (it is gone or going)."""
        self.process.join(1.0)
        return _ended(self.process.exitcode)


def _ended(code: int | None) -> str:
    """One line on how a worker process ended, from its exit code (negative:
    the signal that killed it; None: it has not ended)."""
    if code is None:
        return "a worker process stopped answering."
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal %d" % -code
        return "a worker process died (killed by %s)." % name
    return "a worker process died (exit status %d)." % code


def _serve(pipe, loop: Callable, args: tuple) -> None:
    """A worker's life: ``loop`` until the parent closes its end (or is gone)."""
    for end in _PARENT_ENDS:
        end.close()
    _PARENT_ENDS.clear()
    try:
        loop(pipe, *args)
    except (EOFError, OSError, KeyboardInterrupt):
        pass  # the parent closed its end, is gone, or the user interrupted


def _attempt(func: Callable, *args: Any) -> tuple[bool, Any]:
    """``(True, func(*args))``, or ``(False, failure)`` (see :func:`_failure`)."""
    try:
        return True, func(*args)
    except Exception as exc:  # noqa: BLE001 - raised again in the parent
        return False, _failure(exc)


def _reply(pipe, index: int, outcome: tuple[bool, Any]) -> None:
    """Send ``(index, ok, value)``; a result that cannot be pickled is
    sent as the failure it is."""
    import pickle
    try:
        data = pickle.dumps((index,) + outcome, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # noqa: BLE001 - the parent raises it
        data = pickle.dumps((index, False, _failure(exc)), pickle.HIGHEST_PROTOCOL)
    pipe.send_bytes(data)


def _failure(exc: BaseException) -> tuple[str, BaseException | None, str]:
    """What the parent needs to raise a task's exception: a one-line
    summary, the exception itself if it survives pickling, and the
    worker's traceback."""
    import pickle
    import traceback
    lines = str(exc).strip().splitlines()
    summary = type(exc).__name__ + (": " + lines[0] if lines else "")
    text = "".join(traceback.format_exception(exc))
    try:
        pickle.loads(pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - the summary and the text still go
        return summary, None, text
    return summary, exc, text


class _RemoteTraceback(Exception):
    """The traceback of a task's exception, as the worker printed it."""


def _raise_failure(failure: tuple[str, BaseException | None, str]) -> None:
    summary, exc, text = failure
    cause: BaseException = _RemoteTraceback("\n" + text)
    if exc is not None:
        exc.__cause__ = cause
        if isinstance(exc, SubtokError):
            raise exc  # an error with a user-facing message: as the task raised it
        cause = exc
    raise SubtokError("a worker process failed: %s" % summary) from cause


def _receive(workers: Iterable[_Worker]) -> list[tuple[_Worker, Any]]:
    """The messages that are in from ``workers`` (waits for one at least);
    a worker's death is a :class:`SubtokError`."""
    from multiprocessing.connection import wait
    by_pipe = {worker.pipe: worker for worker in workers}
    out = []
    for pipe in wait(list(by_pipe)):
        worker = by_pipe[pipe]
        try:
            out.append((worker, pipe.recv()))
        except EOFError:
            raise SubtokError(worker.death()) from None
    return out


def _start(count: int, loop: Callable, args_of: Callable[[int], tuple]) -> list[_Worker]:
    """Fork ``count`` workers; worker ``w`` runs ``loop(pipe, *args_of(w))``."""
    workers: list[_Worker] = []
    try:
        for number in range(count):
            workers.append(_Worker(loop, args_of(number)))
    except OSError as exc:  # too many processes or open files
        _stop(workers)
        raise SubtokError("cannot start %d worker processes: %s."
                          % (count, exc.strerror or exc)) from None
    except BaseException:
        _stop(workers)
        raise
    return workers


def _stop(workers: list[_Worker]) -> None:
    """Close the workers' pipes and reap them: a waiting worker stops at
    once, a busy one once its task is done."""
    for worker in workers:
        worker.close()
    reap([worker.process for worker in workers])
    workers.clear()


def reap(processes: list, grace: float = 1.0) -> None:
    """Wait for ``processes`` (multiprocessing ones, told to stop); after
    ``grace`` seconds, terminate those still running, and kill those that
    outlive that by another second. None is left running or unreaped."""
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join()


# ----------------------------------------------------------------------------
# a stream of tasks


def ordered_map(func: Callable, tasks: Iterable, workers: int, *, shared: Any = None,
                in_flight: int = 2) -> Iterator:
    """``func(shared, task)`` for every task, in task order.

    With ``workers > 1`` (and fork available) the tasks run in forked
    workers, each task sent to a worker that is free (one more is taken
    from ``tasks`` ahead, ready for the next free worker). At most
    ``in_flight`` tasks per worker are taken and not yet given back, so a
    stream of tasks is consumed as the results are taken, and the caller
    can merge results as they come without holding them all.
    """
    if workers < 2 or not can_fork():
        for task in tasks:
            yield func(shared, task)
        return
    gc.freeze()  # until the workers are gone: see the module's docstring
    _trim()
    team: list[_Worker] = []
    try:
        team = _start(workers, _task_loop, lambda _: (func, shared))
        yield from _dispatch(team, iter(tasks), in_flight * workers)
    finally:
        _stop(team)
        gc.unfreeze()


def _task_loop(pipe, func: Callable, shared: Any) -> None:
    """A worker of :func:`ordered_map`: one task at a time, until the end."""
    while True:
        index, task = pipe.recv()
        _reply(pipe, index, _attempt(func, shared, task))


def _dispatch(team: list[_Worker], tasks: Iterator, limit: int) -> Iterator:
    """Send the tasks to free workers; yield the results in task order."""
    free = list(team)
    busy: dict[_Worker, int] = {}
    ready: collections.deque = collections.deque()  # tasks taken, not sent
    done: dict[int, tuple[bool, Any]] = {}
    taken = given = 0
    more = True

    def take() -> bool:
        """Take the next task into ``ready``, if the limit allows one."""
        nonlocal taken, more
        if not more or taken - given >= limit:
            return False
        try:
            ready.append(next(tasks))
        except StopIteration:
            more = False
            return False
        taken += 1
        return True

    while True:
        # A free worker gets its task before anything else is done here
        # (taking a task can be reading a chunk of a file, and a result
        # is merged by the caller between two turns of this loop): at
        # the start, the first worker runs while the second one's task
        # is read; later, a task read ahead is sent the moment a worker
        # is free.
        while free and (ready or take()):
            worker = free.pop()
            index = taken - len(ready)
            worker.send((index, ready.popleft()))
            busy[worker] = index
        if not ready:
            take()  # ahead, for the next free worker, while all are busy
        if given in done:
            ok, value = done.pop(given)
            given += 1
            if not ok:
                _raise_failure(value)
            yield value
            continue
        if not busy:
            return
        for worker, (index, ok, value) in _receive(busy):
            done[index] = (ok, value)
            del busy[worker]
            free.append(worker)


# ----------------------------------------------------------------------------
# the same tasks, pass after pass


class PersistentWorkers:
    """Workers that own their tasks and keep state for them between passes.

    Tasks are the numbers ``0 .. tasks-1``; with ``N`` workers, worker
    ``w`` owns tasks ``w, w + N, ...`` and a private ``store`` (a dict).
    Each :meth:`run` is one pass: every worker runs
    ``func(shared, store, task, job)`` on its tasks, and the results are
    yielded in task order. The workers are forked by the first pass, whose
    ``job`` they inherit (so it may hold large objects, e.g. a model, that
    are never pickled); the ``job`` of a later pass is pickled to every
    worker. A worker holds a job only until its tasks of the pass are
    done, the inherited one included; :meth:`start` begins a pass at once
    and keeps no reference to its job (unless asked to hold it to the end
    of the pass), so the parent can drop a large first job while the
    workers still use it. With one worker (or without fork) the
    tasks run here, on one store. :meth:`close` stops the workers and
    drops the stores; a pass that is not run to its end closes them too.
    After :meth:`close`, a pass starts over with empty stores.
    """

    def __init__(self, func: Callable, tasks: int, workers: int, *, shared: Any = None) -> None:
        self.func = func
        self.tasks = tasks
        self.shared = shared
        self.count = workers if can_fork() else 1
        self.store: dict = {}  # the store of this process, when there are no workers
        self.team: list[_Worker] = []
        if self.count > 1:
            _ready_to_fork()

    def run(self, job: Any) -> Iterator:
        """One pass with ``job``: every task's result, in task order (the
        pass begins when the first result is asked for)."""
        if self.count < 2:
            for task in range(self.tasks):
                yield self.func(self.shared, self.store, task, job)
            return
        yield from self.start(job)

    def start(self, job: Any, hold: bool = False) -> Iterator:
        """:meth:`run`, begun now: the workers are forked (or sent ``job``)
        before this returns, and this object keeps no reference to
        ``job``. Take the results from the iterator to their end (or close
        it) before the next pass. With one worker, the same as :meth:`run`.

        Forked workers inherit the caller's frames as they are at the
        fork: for them to drop a first job after its pass, no local
        variable of the caller may refer to it (pass it as a fresh
        argument). ``hold``: this process keeps the job until the pass's
        last result has been taken, rather than dropping it at once (for
        an inherited job of many small objects: freeing it writes to the
        pages the workers are still reading, and so copies them)."""
        if self.count < 2:
            return self.run(job)
        # The workers inherit this frame (and every frame above it): only
        # the box, which each worker empties, may refer to the job.
        box = [job]
        del job
        held = None
        try:
            if not self.team:
                self._fork(box)
            else:
                for worker in self.team:
                    worker.send(box[0])
        except BaseException:
            self.close()
            raise
        finally:
            if hold and box:
                held = box[0]
            box.clear()
            _trim()
        return self._results(held)

    def _fork(self, box: list) -> None:
        count = self.count
        gc.freeze()  # see the module's docstring
        _trim()
        try:
            self.team = _start(count, _pass_loop, lambda w: (
                self.func, self.shared, range(w, self.tasks, count), box))
        except BaseException:
            gc.unfreeze()
            raise

    def _results(self, held: Any = None) -> Iterator:
        finished = False
        try:
            done: dict[int, tuple[bool, Any]] = {}
            for task in range(self.tasks):
                while task not in done:
                    for _, (index, ok, value) in _receive(self.team):
                        done[index] = (ok, value)
                ok, value = done.pop(task)
                if not ok:
                    _raise_failure(value)
                yield value
                del value
                _trim()
            finished = True
        finally:
            if not finished:
                self.close()
        del held
        # The pass's results (pickled, then unpickled) leave free space in
        # this heap too, which the next fork or pass would otherwise hold
        # (trimmed after each result as well: the caller sums them into
        # new arrays, whose growth leaves free pages behind).
        _trim()

    def close(self) -> None:
        """Stop the workers (and drop the stores)."""
        if self.team:
            gc.unfreeze()
        _stop(self.team)
        self.store.clear()

    def __enter__(self) -> "PersistentWorkers":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ready_to_fork() -> None:
    """Import now what forking workers and trimming the heap first import.

    A large first job (e.g. a table of many small objects) is often made
    between creating the workers' object and their fork; the thousands
    of long-lived objects of a module imported at the fork (``ctypes``,
    ``multiprocessing``'s fork and connection code) would then fill the
    free space among the job's objects, and keep their memory arenas from
    being given back when the job is dropped: in this process and in
    every worker, which each write to those pages as they free the job.
    """
    import pickle  # noqa: F401 (see above)
    import multiprocessing.connection
    import multiprocessing.popen_fork  # noqa: F401
    multiprocessing.get_context("fork")
    _trim()


def _trim() -> None:
    """Give the free pages of the C heap back to the system (glibc's
    ``malloc_trim``; nothing elsewhere). A forked process shares its
    parent's pages until one of them writes: a page that one of them has
    freed but still holds stays shared with the others, and is copied
    when either reuses it, so a heap is trimmed before forking and after
    a persistent worker's pass (its renumbered lattices leave freed
    arrays behind)."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes
            _malloc_trim = ctypes.CDLL(None).malloc_trim
        except (ImportError, OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None


def _pass_loop(pipe, func: Callable, shared: Any, mine: range, box: list) -> None:
    """A persistent worker: its tasks with each job (the first one
    inherited, in ``box``), until the end. A job is dropped as soon as the
    worker's tasks of its pass are done, not when the next one comes. The
    heap is trimmed after each task: a task's arrays grow by reallocation
    and leave freed pages behind, which would add up over the pass."""
    store: dict = {}
    job = box.pop()
    while True:
        for task in mine:
            _reply(pipe, task, _attempt(func, shared, store, task, job))
            _trim()
        del job
        _trim()
        job = pipe.recv()


# ----------------------------------------------------------------------------
# one computation


def child_pickles() -> bool:
    """Whether :func:`run_in_child` runs its function in a child, whose
    result then comes back pickled (it runs it here where there is no
    fork)."""
    return hasattr(os, "fork")


def run_in_child(func: Callable, *args: Any, meanwhile: Callable[[], Any] | None = None) -> Any:
    """``func(*args)`` computed in a forked child; its result comes back
    pickled, its exception as a task's does (see the module's docstring).
    The parent's heap then never holds the garbage the computation leaves
    (e.g. corpus reading before training). Without fork, it runs here.
    ``meanwhile()`` runs in this process while the child computes (after
    ``func`` without fork): work the caller needs next, done while this
    process would only wait; its exception is raised once the child is
    done.

    The result is pickled straight into the pipe (never whole in the
    child's memory), which is why this is a plain fork rather than a
    worker: a large result would otherwise exist twice at the child's peak.
    """
    if not child_pickles():
        result = func(*args)
        if meanwhile is not None:
            meanwhile()
        return result
    import pickle  # before the fork: the child pickles its result with it
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        os.close(read_end)
        os._exit(_child(func, args, write_end))
    os.close(write_end)
    failed = True
    try:
        if meanwhile is not None:
            meanwhile()
        failed = False
    finally:
        outcome = unreadable = None
        try:
            with os.fdopen(read_end, "rb") as handle:
                data = handle.read()
            # Unpickled before the child is waited for: its exit, which
            # gives its memory back, runs meanwhile. Not when ``meanwhile``
            # failed: its exception goes up instead.
            if data and not failed:
                try:
                    outcome = pickle.loads(data)
                except Exception as exc:  # noqa: BLE001 - judged with the exit status below
                    unreadable = exc
        finally:
            # (Always reaped, even when interrupted: no zombie is left.)
            _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0 and unreadable is not None:
        raise unreadable  # a complete result that cannot be read: the real error
    if code or outcome is None:
        raise SubtokError(_ended(code))
    ok, value = outcome
    if not ok:
        _raise_failure(value)
    return value


def _child(func: Callable, args: tuple, write_end: int) -> int:  # pragma: no cover - in the child
    """The child of :func:`run_in_child`: its exit status."""
    import pickle
    for end in _PARENT_ENDS:  # live workers stop when the parent says, not when this child ends
        end.close()
    try:
        outcome = _attempt(func, *args)
        with os.fdopen(write_end, "wb") as out:
            # A result that cannot be pickled fails here, after part of it
            # was written: the parent then reports the exit status.
            pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
        sys.stdout.flush()
        sys.stderr.flush()
        return 0
    except BaseException:  # noqa: BLE001 - the parent reports the status
        return 1


__all__ = ["cpu_count", "can_fork", "worker_count", "chunk_bounds", "chunks", "ordered_map",
           "PersistentWorkers", "run_in_child", "child_pickles", "reap"]
