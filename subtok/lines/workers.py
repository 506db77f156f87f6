"""Worker processes for line jobs: forked, fed over pipes, results in order.

A job is one call of a :class:`~subtok.lines.batch.PerLine` method on a block or
a chunk of lines. Each worker is forked from the parent, so it starts with
everything the parent loaded and cached; with each result it sends the
news the others may reuse (see ``PerLine.news``), which the parent passes
on to them.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import multiprocessing
import os
import pickle
import select
import struct
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from subtok.errors import SubtokError
from subtok.parallel import reap

if TYPE_CHECKING:
    from subtok.lines.batch import PerLine


# Worker processes are forked, and talk to the parent over plain pipes, one
# message a frame: its length (8 bytes) and its pickle. A worker has no
# other thread: between jobs it takes in all that has come (news first,
# whatever jobs are queued before it), waits in poll() when nothing has,
# and writes its results with blocking calls. The parent never blocks on a
# pipe (it writes what fits and waits for room, see _Worker), so neither
# side can wait on the other forever. (A reader thread in each worker
# would also keep the parent from blocking, but handing the interpreter
# lock back and forth between two threads left workers idle: see
# docs/performance.md.)
_FRAME = struct.Struct("<Q")


def _framed(message: object) -> tuple[bytes, bytes]:
    """(length, pickle) of a message: two writes, no copy of a big pickle."""
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    return _FRAME.pack(len(data)), data


class _Inbox:
    """The reading end of a pipe of frames, read without blocking: what has
    come in whole is taken at once, the rest waits for more."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)
        self.buffer = bytearray()
        #: True once the writing end is closed and all was read.
        self.ended = False

    def received(self) -> list:
        """The messages come in whole since the last call."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 17)
            except BlockingIOError:
                break
            if not chunk:
                self.ended = True
                break
            self.buffer += chunk
        messages = []
        buffer = self.buffer
        start = 0
        while len(buffer) - start >= _FRAME.size:
            (size,) = _FRAME.unpack_from(buffer, start)
            end = start + _FRAME.size + size
            if end > len(buffer):
                break
            messages.append(pickle.loads(memoryview(buffer)[start + _FRAME.size:end]))
            start = end
        del buffer[:start]
        return messages


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# The caches of a long run only grow, and the collector's full passes
# over them cost a noticeable share of an encode (docs/performance.md):
# after each job, what survived it is frozen out of the collector's sight.
# Frozen objects are still freed by reference counting.
def _serve(function: PerLine, jobs_fd: int, results_fd: int, workers: int,
           parents_fds: list[int]) -> None:
    """A worker: ``function.block`` or ``function.lines`` on each job that
    comes in, the result (or the error) sent back with the worker's news
    (see ``PerLine.news``), until the parent closes the pipe. News from the
    other workers, which the parent passes on, is taken in before the next
    job. ``parents_fds`` are the parent's ends of the pipes, which the
    fork copied: closed here, so that the parent's closing them ends every
    worker."""
    for fd in parents_fds:
        os.close(fd)
    function.in_worker(workers)
    inbox = _Inbox(jobs_fd)
    waiting = select.poll()
    waiting.register(jobs_fd, select.POLLIN)
    queued: collections.deque = collections.deque()
    try:
        while True:
            # All that came in: news is taken in before the next job, even
            # news that came after jobs still queued.
            for message in inbox.received():
                if message[0] == _NEWS:
                    function.learn(pickle.loads(message[1]))
                else:
                    queued.append(message)
            if not queued:
                if inbox.ended:
                    return
                waiting.poll()
                continue
            index, method, first_line, payload = queued.popleft()
            try:
                result = (index, True, getattr(function, method)(payload, first_line))
            except Exception as exc:  # sent to the parent, which raises it
                result = (index, False, exc)
            gc.freeze()
            news = function.news()
            # Pickled here: the parent passes the bytes on as they are.
            result += (None if news is None else pickle.dumps(news, pickle.HIGHEST_PROTOCOL),)
            try:
                header, data = _framed(result)
                if not result[1]:  # the parent must be able to rebuild the error
                    pickle.loads(data)
            except Exception:
                # An error that cannot be pickled still reaches the parent.
                error = result[2]
                message = "%s: %s" % (type(error).__name__, error)
                header, data = _framed((index, False, SubtokError(message), None))
            _write_all(results_fd, header)
            _write_all(results_fd, data)
    except (KeyboardInterrupt, OSError):
        return  # interrupted, or the parent is gone: nothing to report


#: Tags a message to a worker that carries another worker's news, not a job.
_NEWS = "news"


#: Jobs per worker sent and not yet given back. Results are given back in
#: order, so one slow job holds the others' results back; four keep the
#: other worker busier than two, for a few MB more in flight
#: (docs/performance.md).
JOBS_PER_WORKER = 4


class _Worker:
    """A worker process, the parent's ends of its pipes (which never block),
    what is still to be written to it and read from it, and how many jobs
    it holds."""

    def __init__(self, context, function: PerLine, workers: int) -> None:
        jobs_read, self.jobs_fd = os.pipe()
        try:
            self.results_fd, results_write = os.pipe()
        except OSError:
            os.close(jobs_read)
            os.close(self.jobs_fd)
            raise
        _PARENTS_FDS.update((self.jobs_fd, self.results_fd))
        try:
            self.process = context.Process(
                target=_serve, daemon=True,
                args=(function, jobs_read, results_write, workers, sorted(_PARENTS_FDS)))
            self.process.start()
        except BaseException:
            self.close()
            raise
        finally:
            os.close(jobs_read)
            os.close(results_write)
        os.set_blocking(self.jobs_fd, False)
        #: Whether both pipes hold PIPE_SIZE (see GATHER_SECONDS).
        self.widened = _widen(self.jobs_fd) & _widen(self.results_fd)
        self.results = _Inbox(self.results_fd)
        self.outgoing: collections.deque[memoryview] = collections.deque()
        self.jobs = 0

    def send(self, message: object) -> None:
        self.send_framed(_framed(message))

    def send_framed(self, framed: tuple[bytes, bytes]) -> None:
        self.outgoing.extend(map(memoryview, framed))
        self.flush()

    def flush(self) -> None:
        """Write what the pipe takes now; the rest waits for room."""
        outgoing = self.outgoing
        while outgoing:
            try:
                written = os.write(self.jobs_fd, outgoing[0])
            except BlockingIOError:
                return
            except OSError:  # the worker is gone: its sentinel tells
                outgoing.clear()
                return
            if written < len(outgoing[0]):
                outgoing[0] = outgoing[0][written:]
            else:
                outgoing.popleft()

    def close(self) -> None:
        """Close the parent's ends: the worker ends after its current job."""
        for fd in (self.jobs_fd, self.results_fd):
            if fd in _PARENTS_FDS:
                _PARENTS_FDS.discard(fd)
                os.close(fd)


#: The parent's ends of every worker's pipes, of every run alive in this
#: process: each new worker closes its copies, so that closing them in the
#: parent is what ends a worker, even with two runs going at once.
_PARENTS_FDS: set[int] = set()


#: How long the parent sleeps while every worker has its next job, so
#: that it wakes once for several results: each wake takes a worker's core
#: for a moment. Longer sleeps preempt the workers less, but news then
#: reaches the other worker later, which segments more parts itself; 5 ms
#: lies between (docs/performance.md). Only with pipes that hold a few
#: jobs and results (PIPE_SIZE): in smaller ones a message takes several
#: wakes.
GATHER_SECONDS = 0.005


#: Bytes a pipe to or from a worker holds, where the system lets it be set
#: (Linux): a few jobs or results. A pipe of 64 KB holds less than one
#: result, and a worker then waits for the parent to read it. (Linux
#: counts what a user's pipes hold against a quota, 64 MB by default:
#: this leaves room for 64 workers.)
PIPE_SIZE = 1 << 19


def _widen(fd: int) -> bool:
    """Let the pipe ``fd`` hold PIPE_SIZE bytes, if the system allows; True
    if it does."""
    try:
        import fcntl
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)  # type: ignore[attr-defined]
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) >= PIPE_SIZE  # type: ignore[attr-defined]
    except (ImportError, AttributeError, OSError):
        return False  # a smaller pipe only means more waits


def in_workers(function: PerLine, method: str, jobs: Iterator[tuple[int, object]],
                num_threads: int) -> Iterator:
    """Results of the jobs, in order, from ``num_threads`` forked worker
    processes.

    Each job goes to the worker holding the fewest; at most JOBS_PER_WORKER
    jobs per worker are sent and not yet given back, so a worker always
    has its next job queued while the output stays in order and bounded.
    The parent waits only in ``poll``: for results, for a worker's end,
    for room in a pipe it has more to write to, or for the next job it
    asked for (a thread of its own reads the input, see _Feed). No pool
    threads: they would take the workers' CPU time.
    """
    context = multiprocessing.get_context("fork")
    workers: list[_Worker] = []
    try:
        for _ in range(num_threads):
            workers.append(_Worker(context, function, num_threads))
    except OSError as exc:  # too many processes or open files
        _stop(workers)
        raise SubtokError("cannot start %d worker processes: %s." % (num_threads, exc.strerror or exc)) from None
    by_results = {worker.results_fd: worker for worker in workers}
    by_sentinel = {worker.process.sentinel: worker for worker in workers}
    by_jobs = {worker.jobs_fd: worker for worker in workers}
    # poll, not select: no limit on the descriptors' numbers in a host program.
    poller = select.poll()
    for fd in [*by_results, *by_sentinel]:
        poller.register(fd, select.POLLIN)
    waiting_for_room: set[int] = set()
    done: dict[int, tuple[bool, object]] = {}
    sent = given = 0
    in_flight = JOBS_PER_WORKER * num_threads  # jobs sent and not yet given back, at most
    feed = _Feed(jobs, in_flight)
    poller.register(feed.signal_fd, select.POLLIN)
    try:
        while True:
            while sent - given < in_flight:
                job = feed.take()
                if job is None:
                    break
                worker = min(workers, key=_held)
                worker.send((sent, method) + tuple(job))
                worker.jobs += 1
                sent += 1
            while given in done:
                ok, value = done.pop(given)
                given += 1
                if not ok:
                    raise value  # type: ignore[misc]
                yield value
            if given == sent and feed.finished():
                return
            if sent - given < in_flight and not feed.ask():
                continue  # a job came in meanwhile: room for it was freed
            for worker in workers:
                if bool(worker.outgoing) != (worker.jobs_fd in waiting_for_room):
                    if worker.outgoing:
                        poller.register(worker.jobs_fd, select.POLLOUT)
                        waiting_for_room.add(worker.jobs_fd)
                    else:
                        poller.unregister(worker.jobs_fd)
                        waiting_for_room.discard(worker.jobs_fd)
            if min(map(_held, workers)) >= 2 and all(
                    worker.widened and not worker.outgoing for worker in workers):
                # Every worker has its next job: let results gather rather
                # than wake for each (the parent's time comes off a worker's).
                time.sleep(GATHER_SECONDS)
            ready = poller.poll()
            for fd, _ in ready:
                if fd in by_jobs:
                    by_jobs[fd].flush()
                elif fd == feed.signal_fd and feed.clear_signal():
                    poller.unregister(fd)  # the input ended: no more signals
            for fd, _ in ready:
                worker = by_results.get(fd) or by_sentinel.get(fd)
                if worker is None:
                    continue
                for index, ok, value, news in worker.results.received():
                    worker.jobs -= 1
                    done[index] = (ok, value)
                    if news is not None:
                        _pass_on(news, worker, workers)
                if fd in by_sentinel:  # its results are in: none is to come
                    raise SubtokError("a worker process stopped unexpectedly.")
    finally:
        feed.close()
        _stop(workers)


class _Feed:
    """The jobs, taken from their iterator by a thread, a few ahead: the
    parent then never waits for input (a pipe that a co-process fills one
    line at a time, waiting for each answer) while results are in that it
    could give back. A byte on ``signal_fd`` tells of a job added when the
    parent asked for one (:meth:`ask`), and of the end: signalling every
    job would wake the parent for jobs it has no room to send yet."""

    def __init__(self, jobs: Iterator, ahead: int) -> None:
        """``ahead``: jobs taken and not yet sent. As many as the parent may
        send at once: fewer starve the workers of small jobs
        (docs/performance.md)."""
        self._ready: collections.deque = collections.deque()
        self._room = threading.Semaphore(ahead)
        self.signal_fd, self._signal = os.pipe()
        os.set_blocking(self.signal_fd, False)
        self._ended = False
        self._closed = False
        self._error: BaseException | None = None
        self._asked = False
        threading.Thread(target=self._fill, args=(jobs,), daemon=True).start()

    def _fill(self, jobs: Iterator) -> None:
        try:
            for job in jobs:
                self._room.acquire()
                if self._closed:
                    return
                self._ready.append(job)
                if self._asked:
                    self._asked = False
                    self._tell()
        except BaseException as exc:  # an input error: raised by take()
            self._error = exc
        finally:
            self._ended = True
            self._tell()
            os.close(self._signal)

    def _tell(self) -> None:
        with contextlib.suppress(OSError):  # closed: nobody listens
            os.write(self._signal, b".")

    def take(self):
        """The next job, or None if none is ready (yet)."""
        if self._ready:
            self._room.release()
            return self._ready.popleft()
        if self._error is not None:
            raise self._error
        return None

    def ask(self) -> bool:
        """Have the next job signalled; False if a job (or an error) is
        ready already. (The flag is set before the test, and the thread
        tests it after adding a job: one of the two sees the other. The
        end is always signalled.)"""
        self._asked = True
        if self._ready or self._error is not None:
            self._asked = False
            return False
        return True

    def finished(self) -> bool:
        """True once every job was taken."""
        return self._ended and not self._ready and self._error is None

    def clear_signal(self) -> bool:
        """Read the signals; True once the thread has ended (and closed its end)."""
        try:
            while os.read(self.signal_fd, 4096):
                pass
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        """Let the thread end (once its input gives it a job or ends)."""
        self._closed = True
        self._room.release()
        os.close(self.signal_fd)


def _pass_on(news: bytes, source: _Worker, workers: list[_Worker]) -> None:
    """Send one worker's (pickled) news to the others."""
    framed = _framed((_NEWS, news))
    for worker in workers:
        if worker is not source:
            worker.send_framed(framed)


def _held(worker: _Worker) -> int:
    return worker.jobs


def _stop(workers: list[_Worker]) -> None:
    """Let the workers end; end those still busy after a second (after an
    error), kill those that do not end then."""
    for worker in workers:
        worker.close()
    reap([worker.process for worker in workers])
