"""subtok.parallel: ordered results, bounded streams, errors and clean ends.

Every test that forks checks afterwards that no child process is left (not
even a zombie), and tasks report the process they ran in, so that a test
meant to run in workers fails if everything ran in this process.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from subtok import parallel
from subtok.errors import SubtokError, TrainerError

forks = pytest.mark.skipif(not parallel.can_fork(), reason="the system cannot fork")


def _children() -> set[int]:
    """Processes (zombies included) whose parent is this process (Linux)."""
    pids: set[int] = set()
    for thread in os.listdir("/proc/self/task"):
        with open("/proc/self/task/%s/children" % thread) as handle:
            pids.update(map(int, handle.read().split()))
    return pids


@pytest.fixture
def no_leftovers():
    before = _children()
    yield
    assert _children() <= before


def _square(shared, task):
    """task**2 + shared, and the process it ran in; tasks of odd number are
    slower, so that results come in out of task order."""
    time.sleep(0.02 if task % 2 else 0.0)
    return task * task + shared, os.getpid()


def _fail_at_three(kind, task):
    if task == 3:
        raise kind("task 3 went wrong\nsecond line")
    return task


def _die_at_three(shared, task):
    if task == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return task


# ----------------------------------------------------------------------------
# chunks


def test_chunk_bounds_and_chunks_agree():
    items = ["ab", "c", "defg", "", "hi", "j"]
    bounds = parallel.chunk_bounds(items, len, 3)
    assert bounds == [(0, 2), (2, 3), (3, 6)]
    assert list(parallel.chunks(items, len, 3)) == [items[lo:hi] for lo, hi in bounds]
    assert parallel.chunk_bounds([], len, 3) == []
    assert list(parallel.chunks([], len, 3)) == []


def test_worker_count():
    assert parallel.worker_count(1) == 1
    assert parallel.worker_count(64, tasks=1) == 1
    assert 1 <= parallel.worker_count(64) <= parallel.cpu_count()


# ----------------------------------------------------------------------------
# ordered_map


@pytest.mark.parametrize("workers", [1, 2])
def test_ordered_map_gives_results_in_task_order(workers, no_leftovers):
    if workers > 1 and not parallel.can_fork():
        pytest.skip("the system cannot fork")
    results = list(parallel.ordered_map(_square, range(12), workers, shared=100))
    assert [value for value, _ in results] == [t * t + 100 for t in range(12)]
    pids = {pid for _, pid in results}
    if workers == 1:
        assert pids == {os.getpid()}
    else:
        assert len(pids) == 2 and os.getpid() not in pids


def _cube(shared, task):
    return task ** 3


@pytest.mark.parametrize("workers, in_flight", [(1, 2), (2, 1), (2, 2)])
def test_ordered_map_takes_tasks_at_most_in_flight_per_worker_ahead(workers, in_flight,
                                                                     no_leftovers):
    if workers > 1 and not parallel.can_fork():
        pytest.skip("the system cannot fork")
    taken = 0

    def tasks():
        nonlocal taken
        for task in range(20):
            taken += 1
            yield task

    ahead = []
    for number, value in enumerate(parallel.ordered_map(_cube, tasks(), workers,
                                                        in_flight=in_flight)):
        assert value == number ** 3
        ahead.append(taken - number)  # tasks taken, this one included, not given back before
        time.sleep(0.005)  # a slow consumer: the workers could run far ahead
    # (ordered_map also takes one task ahead for the next free worker: 3
    # with two workers when nothing limits it)
    assert max(ahead) == (1 if workers == 1 else in_flight * workers)
    assert taken == 20


@pytest.mark.parametrize("workers", [1, 2])
def test_ordered_map_raises_a_task_error_in_its_place(workers, no_leftovers):
    if workers > 1 and not parallel.can_fork():
        pytest.skip("the system cannot fork")
    got = []
    with pytest.raises(TrainerError) as info:
        for value in parallel.ordered_map(_fail_at_three, range(8), workers, shared=TrainerError):
            got.append(value)
    assert got == [0, 1, 2]
    assert str(info.value) == "task 3 went wrong\nsecond line"  # as the task raised it

    got = []
    expected = ValueError if workers == 1 else SubtokError
    with pytest.raises(expected) as info:
        for value in parallel.ordered_map(_fail_at_three, range(8), workers, shared=ValueError):
            got.append(value)
    assert got == [0, 1, 2]
    if workers > 1:
        # one line for the CLI; the original, with the worker's traceback, as its cause
        assert str(info.value) == "a worker process failed: ValueError: task 3 went wrong"
        assert isinstance(info.value.__cause__, ValueError)
        assert "_fail_at_three" in str(info.value.__cause__.__cause__)


@forks
def test_ordered_map_worker_killed_is_one_line_error(no_leftovers):
    got = []
    with pytest.raises(SubtokError) as info:
        for value in parallel.ordered_map(_die_at_three, range(8), 2):
            got.append(value)
    assert str(info.value) == "a worker process died (killed by SIGKILL)."
    assert got == list(range(len(got))) and len(got) <= 3  # nothing from task 3 on


@forks
def test_ordered_map_stopped_early_leaves_no_worker(no_leftovers):
    results = parallel.ordered_map(_square, range(100), 2, shared=0)
    assert next(results)[0] == 0
    results.close()


# ----------------------------------------------------------------------------
# run_in_child


def _pid_plus(a, b):
    return os.getpid(), a + b


def _raise(kind):
    raise kind("no good\nmore")


def _die():
    os.kill(os.getpid(), signal.SIGKILL)


@forks
def test_run_in_child_result_and_errors(no_leftovers):
    pid, total = parallel.run_in_child(_pid_plus, 2, 3)
    assert total == 5 and pid != os.getpid()
    with pytest.raises(TrainerError, match="^no good\nmore$"):
        parallel.run_in_child(_raise, TrainerError)
    with pytest.raises(SubtokError) as info:
        parallel.run_in_child(_raise, KeyError)
    assert str(info.value) == "a worker process failed: KeyError: 'no good\\nmore'"
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(SubtokError, match=r"^a worker process died \(killed by SIGKILL\)\.$"):
        parallel.run_in_child(_die)
    # A result the child sent whole but this process cannot read: its own error.
    with pytest.raises(ValueError, match="^unreadable$"):
        parallel.run_in_child(_Unreadable)


def _unreadable():
    raise ValueError("unreadable")


class _Unreadable:
    """Pickles fine, fails to unpickle."""

    def __reduce__(self):
        return _unreadable, ()


def _wait_for(path):
    """Whether ``path`` appeared within 10 s, and this process's id."""
    deadline = time.monotonic() + 10
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            return False, os.getpid()
        time.sleep(0.01)
    return True, os.getpid()


@forks
def test_run_in_child_meanwhile_runs_here_while_the_child_works(no_leftovers, tmp_path):
    flag = str(tmp_path / "flag")
    # The child waits for a file only ``meanwhile`` (in this process) creates.
    found, pid = parallel.run_in_child(_wait_for, flag, meanwhile=lambda: open(flag, "w").close())
    assert found and pid != os.getpid()
    # An exception of ``meanwhile`` is raised once the child is done (and reaped).
    with pytest.raises(KeyError):
        parallel.run_in_child(_pid_plus, 1, 2, meanwhile=lambda: {}["missing"])


# ----------------------------------------------------------------------------
# PersistentWorkers


def _tally(shared, store, task, job):
    """Adds ``job`` to the task's running total (in the worker's store)."""
    if isinstance(job, tuple):  # the first job, with a lock: never pickled
        job = job[0]
    store[task] = store.get(task, shared) + job
    return store[task], os.getpid()


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_persistent_workers_keep_state_between_passes(workers, no_leftovers):
    if workers > 1 and not parallel.can_fork():
        pytest.skip("the system cannot fork")
    with parallel.PersistentWorkers(_tally, 7, workers, shared=1000) as team:
        first = list(team.run((1, threading.Lock())))
        second = list(team.run(10))
        third = list(team.run(100))
    assert [v for v, _ in first] == [1001] * 7
    assert [v for v, _ in second] == [1011] * 7
    assert [v for v, _ in third] == [1111] * 7
    owners = [pid for _, pid in first]
    assert [pid for _, pid in second] == [pid for _, pid in third] == owners
    if workers == 1:
        assert set(owners) == {os.getpid()}
    else:
        assert [owners.index(pid) for pid in owners] == [t % workers for t in range(7)]
        assert os.getpid() not in owners


@forks
def test_persistent_workers_close_cleanly_and_start_over(no_leftovers):
    team = parallel.PersistentWorkers(_tally, 4, 2, shared=0)
    assert [v for v, _ in team.run(5)] == [5] * 4
    processes = [worker.process for worker in team.team]
    team.close()
    assert [p.exitcode for p in processes] == [0, 0]  # they ended, not killed
    assert team.team == []
    assert [v for v, _ in team.run(7)] == [7] * 4  # new workers, empty stores
    team.close()


def _slow_or_die(shared, store, task, job):
    if job == "die" and task == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    if job == "fail" and task == 2:
        raise ValueError("bad chunk")
    time.sleep(0.01)
    return task


@forks
def test_persistent_worker_killed_mid_pass_is_one_line_error(no_leftovers):
    team = parallel.PersistentWorkers(_slow_or_die, 8, 2)
    assert list(team.run("ok")) == list(range(8))
    got = []
    with pytest.raises(SubtokError) as info:
        for value in team.run("die"):
            got.append(value)
    assert str(info.value) == "a worker process died (killed by SIGKILL)."
    assert got == list(range(len(got))) and len(got) <= 3  # nothing from task 3 on
    assert team.team == []  # the others are stopped too


@forks
def test_persistent_worker_exception_is_one_line_error(no_leftovers):
    team = parallel.PersistentWorkers(_slow_or_die, 8, 2)
    with pytest.raises(SubtokError) as info:
        list(team.run("fail"))
    assert str(info.value) == "a worker process failed: ValueError: bad chunk"
    assert team.team == []


class _Job:
    """A job that leaves a file named after the process that drops it."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __del__(self) -> None:
        open(os.path.join(self.folder, "dropped.%d" % os.getpid()), "w").close()


def _holding(shared, store, task, job):
    return os.getpid()


@forks
def test_persistent_workers_start_now_and_drop_the_inherited_job_after_its_pass(
        no_leftovers, tmp_path):
    team = parallel.PersistentWorkers(_holding, 4, 2)
    try:
        # (No name for the job here: the workers inherit this frame too.)
        results = team.start(_Job(str(tmp_path)))
        assert len(team.team) == 2  # forked before any result was asked for
        assert (tmp_path / ("dropped.%d" % os.getpid())).exists()  # the team keeps none
        owners = set(results)
        assert len(owners) == 2 and os.getpid() not in owners
        # Each worker dropped the job it inherited once its tasks were
        # done, before any next job came (and none is sent here).
        deadline = time.monotonic() + 10
        while not all((tmp_path / ("dropped.%d" % pid)).exists() for pid in owners):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert list(team.run(1)) == [pid for pid in team.run(2)]  # the same owners after
    finally:
        team.close()


@forks
def test_persistent_pass_left_early_stops_the_workers(no_leftovers):
    team = parallel.PersistentWorkers(_slow_or_die, 8, 2)
    results = team.run("ok")
    assert next(results) == 0
    results.close()
    assert team.team == []


_ORPHAN_SCRIPT = """
import os, sys, time
from subtok import parallel

def slow(shared, store, task, job):
    time.sleep(0.05)
    return task

team = parallel.PersistentWorkers(slow, 40, 2)
results = team.run(0)
next(results)  # mid-pass: the workers go on sending results nobody reads
print(" ".join(str(worker.process.pid) for worker in team.team), flush=True)
time.sleep(60)
"""


def _running(pid: int) -> bool:
    try:
        with open("/proc/%d/stat" % pid, "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] != b"Z"


@forks
def test_workers_end_when_their_parent_is_killed():
    """Each worker holds no copy of any worker's parent end (its own
    included), so the parent's death closes their pipes and they end."""
    import subprocess
    import sys
    from pathlib import Path
    parent = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT], stdout=subprocess.PIPE,
                              cwd=Path(__file__).resolve().parents[2])
    pids = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(pids) == 2
    parent.kill()
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 30
    while any(map(_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if _running(pid)]
    for pid in left:  # do not leave them behind even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert left == []
