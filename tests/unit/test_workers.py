"""The CLI's worker protocol on its own (subtok.lines.batch.map_blocks over
subtok.lines.workers): a dead worker is reported, messages larger than a
pipe arrive whole and in order, no fork means one process, news passes
between workers. No model and no data needed."""

from __future__ import annotations

import os
import time

import pytest

from subtok.lines.batch import PerLine


class _DiesOnSomeLines(PerLine):
    """A worker function that ends its process on a line "die"."""

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        if line == b"die":
            os._exit(3)
        return line.upper()


def test_a_worker_that_dies_is_reported_not_waited_for():
    from subtok.lines.batch import map_blocks
    from subtok.errors import SubtokError
    blocks = [b"a\nb", b"c", b"d\ndie", b"e"]
    assert list(map_blocks(_DiesOnSomeLines(), blocks[:2], 2)) == [b"A\nB\n", b"C\n"]
    with pytest.raises(SubtokError, match="worker process stopped"):
        list(map_blocks(_DiesOnSomeLines(), blocks, 2))


class _Doubles(PerLine):
    """Each line twice, and the job's input as news: results and news
    many times a pipe's capacity."""

    def __init__(self) -> None:
        self.learned = 0
        self.last = b""

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        return line + line

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        self.last = block
        return super().block(block, first_line)

    def news(self):
        return self.last

    def learn(self, news) -> None:
        self.learned += len(news)


def test_messages_larger_than_a_pipe_go_through_whole():
    """Jobs, results and news of megabytes, more in flight than any pipe
    holds: the parent writes what fits and reads while it waits, so no
    side waits on the other forever, and every byte arrives in order."""
    from subtok.lines.batch import map_blocks
    blocks = [(b"%d" % k) * (300_000 + 7919 * k) + b"\nx" for k in range(12)]
    expected = [line + line + b"\n" + b"xx\n" for line in (b.split(b"\n")[0] for b in blocks)]
    # (The first block may come back in two: see batch._small_first.)
    assert b"".join(map_blocks(_Doubles(), blocks, 2)) == b"".join(expected)


def test_without_fork_the_jobs_are_done_in_this_process(monkeypatch):
    """Where the system cannot fork, --num_threads gives the same output
    from one process."""
    import multiprocessing
    from subtok.lines.batch import map_blocks
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])

    def no_process(*args, **kwargs):
        raise AssertionError("a process was started")

    monkeypatch.setattr(multiprocessing, "get_context", no_process)
    blocks = [b"a\nb", b"c", b"d"]
    assert list(map_blocks(_Doubles(), blocks, 2)) == [b"aa\nbb\n", b"cc\n", b"dd\n"]


class _CountsNews(PerLine):
    """Each line's output: how many news items its worker has taken in;
    each job's news is its input."""

    def __init__(self) -> None:
        self.learned: list = []
        self.last = b""

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        time.sleep(0.02)  # let the other worker's news come in
        self.last = block
        return b"%d\n" % len(self.learned)

    def news(self):
        return self.last

    def learn(self, news) -> None:
        self.learned.append(news)


def test_workers_pass_their_news_to_each_other():
    from subtok.lines.batch import map_blocks
    blocks = [b"%d" % k for k in range(40)]
    taken = [int(out) for out in map_blocks(_CountsNews(), blocks, 2)]
    assert len(taken) == 40
    # Each worker takes in the other's news (never its own) as it goes:
    # the counts grow, up to about the 20 jobs the other worker did.
    assert 5 < max(taken) < 40
