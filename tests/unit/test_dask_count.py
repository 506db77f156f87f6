"""Counting on a Dask ``LocalCluster`` (the optional extra ``subtok[dask]``)
gives the bytes one process gives; without the extra, or with a scheduler
that cannot be reached, ``--scheduler`` is a one-line error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, needs_corpora, run_subtok
from range_corpora import range_corpus
from synthetic_corpora import synthetic


@pytest.fixture()
def parts(tmp_path):
    return [str(synthetic(tmp_path / ("p%d.txt" % n), 1500, seed=n)) for n in range(3)]


@pytest.mark.parametrize("options", [dict(model_type="unigram"), dict(model_type="bpe"),
                                     dict(model_type="bpe", split_by_whitespace=False,
                                          normalization_rule_name="identity"),
                                     dict(model_type="wordpiece", lowercase=False),
                                     dict(model_type="byte_bpe", pattern="cl100k")])
def test_cluster_counts_equal_one_process_counts(dask_client, parts, tmp_path, options):
    from subtok import dask as subtok_dask
    from subtok.training import counts
    subtok_dask.count(parts, str(tmp_path / "cluster.tsv"), dask_client, max_memory="16k",
                      **options)
    counts.count(str(tmp_path / "one.tsv"), input=parts, **options)
    assert (tmp_path / "cluster.tsv").read_bytes() == (tmp_path / "one.tsv").read_bytes()


@needs_corpora
@pytest.mark.parametrize("options", [dict(model_type="unigram"), dict(model_type="bpe"),
                                     dict(model_type="char"), dict(model_type="word")])
def test_byte_ranges_on_the_cluster_equal_one_process_counts(dask_client, tmp_path, options):
    """Files cut into ranges of 2 KB (CRLF lines, a line over
    --max_sentence_length across several ranges, no final newline, an empty
    last line, a file smaller than a range, an empty file), counted on the
    workers and merged there in a tree, give the bytes of one process."""
    from subtok import dask as subtok_dask
    from subtok.training import counts
    # Normalization is per line, whatever the ranges: the identity rule
    # spares each task the nmt_nfkc table's decoding (the test above has it).
    options = dict(options, normalization_rule_name="identity")
    paths = range_corpus(tmp_path)
    header = subtok_dask.count(paths, str(tmp_path / "cluster.tsv"), dask_client, chunk_size="2k",
                               **options)
    counts.count(str(tmp_path / "one.tsv"), input=paths, **options)
    assert (tmp_path / "cluster.tsv").read_bytes() == (tmp_path / "one.tsv").read_bytes()
    assert header == counts.parse_header((tmp_path / "one.tsv").read_bytes().split(b"\n")[0], "one")


@needs_corpora
@pytest.mark.parametrize("fan_in", [2, 3])
def test_merge_tree_with_an_odd_number_of_parts(dask_client, tmp_path, fan_in):
    """An odd number of parts at some level of the tree: the one left over
    goes up a level unmerged, and order is kept."""
    from subtok import dask as subtok_dask
    from subtok.training import counts
    from subtok.training.reading import byte_ranges
    options = dict(model_type="unigram", normalization_rule_name="identity")
    paths = range_corpus(tmp_path)
    ranges = [r for path in paths for r in byte_ranges(path, Path(path).stat().st_size, 4500)]
    assert len(ranges) % 2 == 1 and len(ranges) % 3 and len(ranges) > fan_in ** 2
    subtok_dask.count(paths, str(tmp_path / "cluster.tsv"), dask_client, chunk_size=4500,
                      fan_in=fan_in, **options)
    counts.count(str(tmp_path / "one.tsv"), input=paths, **options)
    assert (tmp_path / "cluster.tsv").read_bytes() == (tmp_path / "one.tsv").read_bytes()


def test_merge_tree_shape():
    """Neighbours merged with neighbours, fan_in at a time, level by level;
    the last merge is the only result the client gets."""
    import dask
    from subtok import dask as subtok_dask
    parts = [dask.delayed(n, name="part-%d" % n) for n in range(7)]
    final = subtok_dask.merge_tree(parts, fan_in=2)
    graph = dict(final.__dask_graph__())
    merges = [key for key in graph if str(key).startswith("merge_counts")]
    assert len(merges) == 6  # 7 -> 4 (3 merges, one left over) -> 2 -> 1
    assert subtok_dask.merge_tree(parts[:1]) is parts[0]


def test_bag_of_lines_counts_equal_one_process_counts(dask_client, parts, tmp_path):
    import dask.bag
    from subtok import dask as subtok_dask
    from subtok.training import counts
    lines = [line for path in parts for line in Path(path).read_bytes().split(b"\n")[:-1]]
    bag = dask.bag.from_sequence(lines, npartitions=4)
    subtok_dask.count_bag(bag, str(tmp_path / "bag.tsv"), model_type="unigram")
    counts.count(str(tmp_path / "one.tsv"), input=parts, model_type="unigram")
    ours = (tmp_path / "bag.tsv").read_bytes().split(b"\n", 1)[1]
    assert ours == (tmp_path / "one.tsv").read_bytes().split(b"\n", 1)[1]


def test_cli_local_cluster(parts, tmp_path):
    # 6 ranges a file; the identity rule spares each task the nmt_nfkc
    # table's decoding (the API tests above count with nmt_nfkc)
    run_subtok("count", "--input", ",".join(parts), "--output", str(tmp_path / "c.tsv"),
               "--scheduler", "local:2", "--chunk_size", "16k", "--normalization_rule_name",
               "identity")
    run_subtok("count", "--input", ",".join(parts), "--output", str(tmp_path / "o.tsv"),
               "--normalization_rule_name", "identity")
    assert (tmp_path / "c.tsv").read_bytes() == (tmp_path / "o.tsv").read_bytes()


def test_unreachable_scheduler_is_one_line(parts, tmp_path):
    proc = run_subtok("count", "--input", parts[0], "--output", str(tmp_path / "c.tsv"),
                      "--scheduler", "tcp://127.0.0.1:1", check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert "cannot reach the Dask scheduler" in err
    assert not (tmp_path / "c.tsv").exists()


@pytest.mark.parametrize("args, message", [
    (["--scheduler", "local:2", "--chunk_size", "lots"], "--chunk_size=lots: expected a size"),
    (["--chunk_size", "1M"], "--chunk_size splits files into Dask tasks: it needs --scheduler"),
])
def test_bad_chunk_size_is_one_line(parts, tmp_path, args, message):
    """Refused before any cluster is started."""
    proc = run_subtok("count", "--input", parts[0], "--output", str(tmp_path / "c.tsv"), *args,
                      check=False)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and message in err, err
    assert not (tmp_path / "c.tsv").exists()


def test_a_task_error_comes_back_as_the_reader_says_it(dask_client, tmp_path):
    """A bad line in a range: the error names the file and the range (the
    worker's exception, raised again on the client)."""
    from subtok import dask as subtok_dask
    from subtok.errors import TrainerError
    path = tmp_path / "s.tsv"
    path.write_bytes(b"a\t1\n" * 10 + b"b c\n")
    with pytest.raises(TrainerError, match=r"s\.tsv \(the lines starting in bytes 29-44\):3: "
                                           r"Input format must be"):
        subtok_dask.count([str(path)], str(tmp_path / "c.tsv"), dask_client, chunk_size=20,
                          input_format="tsv", normalization_rule_name="identity")
    assert not (tmp_path / "c.tsv").exists()


def test_cli_task_error_is_one_line(tmp_path):
    """The local workers do not log the task's exception as well."""
    proc = run_subtok("count", "--input", str(tmp_path / "missing.txt"), "--output",
                      str(tmp_path / "c.tsv"), "--scheduler", "local:1", check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert "missing.txt: cannot open input file" in err


def test_without_the_extra_says_what_to_install(parts, tmp_path):
    code = ("import sys\nsys.modules['distributed'] = None\nsys.modules['dask'] = None\n"
            "from subtok.cli.app import main\n"
            "main(['count', '--input', sys.argv[1], '--output', sys.argv[2], "
            "'--scheduler', 'local:2'])\n")
    proc = subprocess.run([sys.executable, "-c", code, parts[0], str(tmp_path / "c.tsv")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pip install 'subtok[dask]'" in proc.stderr
    assert not (tmp_path / "c.tsv").exists()


def _hold_one_range(marker: str, path: str) -> None:
    """Run on every worker: the first task to count the range of ``path``
    that starts at byte 0 counts half its lines, writes its process id to
    ``marker`` and then waits to be killed; every other task (and the same
    range run again) counts as usual. ``marker`` is made exclusively, so
    only one task ever waits."""
    import itertools
    import os
    import time
    from subtok.training import counts
    from subtok.training.reading import FileRange
    original = counts.count

    def holding(output, *, lines=None, **kwargs):
        if not (isinstance(lines, FileRange) and lines.path == path and lines.start == 0):
            return original(output, lines=lines, **kwargs)
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return original(output, lines=lines, **kwargs)
        every = list(lines)

        def halted():
            yield from itertools.islice(every, len(every) // 2)
            os.write(fd, b"%d" % os.getpid())
            os.close(fd)
            time.sleep(120)  # killed long before, unless the test failed first
            raise RuntimeError("the held task was not killed")

        return original(output, lines=halted(), **kwargs)

    holding.original = original
    counts.count = holding


def _release() -> None:
    from subtok.training import counts
    counts.count = getattr(counts.count, "original", counts.count)


def test_a_worker_killed_mid_count_changes_nothing(dask_client, parts, tmp_path):
    """The worker counting the first range of a file is killed (SIGKILL)
    half-way through it, with its temporary directory on disk; the
    scheduler runs the range again elsewhere. The merged counts are those
    of one process, and neither the output's directory nor --tmp_dir keeps
    anything of the killed task."""
    import os
    import signal
    import time
    from concurrent.futures import ThreadPoolExecutor
    from subtok import dask as subtok_dask
    from subtok.training import counts
    options = dict(model_type="unigram", normalization_rule_name="identity")
    marker, spill, out = tmp_path / "held", tmp_path / "spill", tmp_path / "out"
    spill.mkdir()
    out.mkdir()
    dask_client.run(_hold_one_range, str(marker), parts[1])
    try:
        with ThreadPoolExecutor(1) as pool:
            job = pool.submit(subtok_dask.count, parts, str(out / "cluster.tsv"), dask_client,
                              chunk_size="32k", max_memory="4k", tmp_dir=str(spill), **options)
            deadline = time.monotonic() + 60
            while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert marker.read_text(), job
            # The held task has made its directory: what a kill leaves behind.
            assert os.listdir(spill)
            os.kill(int(marker.read_text()), signal.SIGKILL)
            job.result(120)
    finally:
        dask_client.run(_release)
    counts.count(str(tmp_path / "one.tsv"), input=parts, **options)
    assert (out / "cluster.tsv").read_bytes() == (tmp_path / "one.tsv").read_bytes()
    assert os.listdir(out) == ["cluster.tsv"]
    assert os.listdir(spill) == []
