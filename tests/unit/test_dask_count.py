"""Counting on a Dask ``LocalCluster`` (the optional extra ``subtok[dask]``)
gives the bytes one process gives; without the extra, or with a scheduler
that cannot be reached, ``--scheduler`` is a one-line error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_subtok
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
    run_subtok("count", "--input", ",".join(parts), "--output", str(tmp_path / "c.tsv"),
               "--scheduler", "local:2")
    run_subtok("count", "--input", ",".join(parts), "--output", str(tmp_path / "o.tsv"))
    assert (tmp_path / "c.tsv").read_bytes() == (tmp_path / "o.tsv").read_bytes()


def test_unreachable_scheduler_is_one_line(parts, tmp_path):
    proc = run_subtok("count", "--input", parts[0], "--output", str(tmp_path / "c.tsv"),
                      "--scheduler", "tcp://127.0.0.1:1", check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert "cannot reach the Dask scheduler" in err
    assert not (tmp_path / "c.tsv").exists()


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
