"""``subtok count`` files: format, merging, spilling, clean-up, bad input.

No oracle here: these check the file format and that spilling, merging and
splitting the input never change the counts (which the oracle tests in
tests/oracle/test_train_from_counts.py then train from).
"""

from __future__ import annotations

import errno
import io
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT, run_subtok
from subtok.errors import InputError, OutputError
from subtok.training import counts
from subtok.training.counts import (SpillTable, escape, parse_size, read_records, sum_sorted,
                                    unescape)
from synthetic_corpora import synthetic


def records_of(path: Path) -> list[tuple[str, int]]:
    with open(path, "rb") as handle:
        counts.parse_header(handle.readline(), str(path))
        return [(unescape(unit), count) for unit, count in read_records(handle, str(path))]


# ----------------------------------------------------------------------------
# format


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1), st.integers(1, 2**40)), max_size=30))
def test_units_round_trip_through_the_file(items):
    table = Counter()
    for unit, count in items:
        table[unit] += count
    spill = SpillTable()
    spill.add({escape(unit): count for unit, count in table.items()})
    buffer = io.BytesIO()
    counts.write_records(buffer, spill.records())
    buffer.seek(0)
    back = [(unescape(unit), count) for unit, count in read_records(buffer, "<mem>")]
    assert dict(back) == dict(table)
    assert len(back) == len(table)
    written = [escape(unit) for unit, _ in back]
    assert written == sorted(written)
    assert all(b"\t" not in w and b"\n" not in w and b"\r" not in w for w in written)


def test_escapes_are_exact():
    assert escape("a\tb\\c\nd\re") == b"a\\tb\\\\c\\nd\\re"
    assert unescape(b"a\\tb\\\\c\\nd\\re") == "a\tb\\c\nd\re"
    for bad in (b"a\\", b"a\\x", b"\\0"):
        with pytest.raises(InputError):
            unescape(bad, "f.tsv", 7)


def test_unigram_records_keep_word_and_follower_apart():
    for word, follower in [("a\\", "\x00b"), ("\\>x", ">"), ("w", ""), ("t\tab", "\\")]:
        written = counts.escape_followed(word, follower)
        assert counts.unescape_followed(written, "f") == (word, follower)
    with pytest.raises(InputError):
        counts.unescape_followed(b"plain", "f")


def test_sizes():
    assert parse_size("512M") == 512 << 20
    assert parse_size("2G") == 2 << 30
    assert parse_size("100k") == 102400
    assert parse_size("1000") == 1000
    for bad in ("", "12X", "-1", "0"):
        with pytest.raises(Exception):
            parse_size(bad)


def test_header_records_the_shaping_options(tmp_path):
    corpus = synthetic(tmp_path / "c.txt", 200)
    fields = counts.count(str(tmp_path / "out.tsv"), input=[str(corpus)], model_type="bpe",
                          treat_whitespace_as_suffix=True, user_defined_symbols=["<x>"])
    assert fields["units"] == "words-suffix"
    assert fields["treat_whitespace_as_suffix"] is True
    assert "<x>" in fields["meta_pieces"]
    assert fields["sentences"] == 200
    first = (tmp_path / "out.tsv").read_bytes().split(b"\n", 1)[0]
    assert counts.parse_header(first, "out.tsv") == fields


def test_units_are_the_normalized_words(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("Hello  world\nhello world\n\n ｈｅｌｌｏ\n", encoding="utf-8")
    counts.count(str(tmp_path / "o.tsv"), input=[str(corpus)], model_type="bpe")
    assert records_of(tmp_path / "o.tsv") == sorted(
        [("▁Hello", 1), ("▁world", 2), ("▁hello", 2)], key=lambda kv: escape(kv[0]))


# ----------------------------------------------------------------------------
# spilling and merging


def test_spilled_counts_equal_unspilled(tmp_path):
    corpus = synthetic(tmp_path / "c.txt", 3000)
    counts.count(str(tmp_path / "whole.tsv"), input=[str(corpus)], model_type="word")
    spills = tmp_path / "spills"
    spills.mkdir()
    with SpillTable(4096, str(spills)) as table:
        fields = counts.count_corpus(counts.counting_options(input=[str(corpus)],
                                                             model_type="word"), table)
        assert table.spills > 0 and len(table.runs) == table.spills
        counts.write_count_file(str(tmp_path / "spilled.tsv"), fields, table.records())
    assert list(spills.iterdir()) == []
    assert (tmp_path / "spilled.tsv").read_bytes() == (tmp_path / "whole.tsv").read_bytes()


def test_many_runs_are_merged_as_they_pile_up(tmp_path, monkeypatch):
    monkeypatch.setattr(counts, "MAX_RUNS", 3)
    with SpillTable(1, str(tmp_path)) as table:
        for n in range(10):
            table.add({b"w%d" % (n % 4): 1, b"common": 2})
        assert len(table.runs) < 3
        merged = dict(table.records())
    assert merged == {b"common": 20, b"w0": 3, b"w1": 3, b"w2": 2, b"w3": 2}
    assert list(tmp_path.iterdir()) == []


def test_the_budget_covers_the_process_not_only_the_table(tmp_path, monkeypatch):
    """--max_memory bounds the counting process: the process as it stands,
    a chunk in flight and each forked normalizing worker are set aside and
    the table gets the rest; a budget too small for that keeps an eighth
    for the table and says so in one warning line."""
    monkeypatch.setattr(counts, "resident_bytes", lambda: 40 << 20)
    assert counts.counting_reserve(1) == (40 << 20) + counts.CHUNK_RESERVE
    assert counts.counting_reserve(3) == (40 << 20) + counts.CHUNK_RESERVE + 3 * counts.WORKER_RESERVE
    assert SpillTable(1 << 30, reserve=300 << 20).limit == (1 << 30) - (300 << 20)
    starved = SpillTable(64 << 20, reserve=300 << 20)
    assert (starved.limit, starved.starved) == (8 << 20, True)
    assert not SpillTable(1 << 30, reserve=300 << 20).starved
    corpus = synthetic(tmp_path / "c.txt", 300)
    outputs = {}
    for size in ("64M", "2G"):
        proc = run_subtok("count", "--input", str(corpus), "--output", str(tmp_path / size),
                          "--max_memory", size, "--num_threads", "1")
        outputs[size] = (tmp_path / size).read_bytes()
        warned = [line for line in proc.stderr.decode().splitlines() if "--max_memory" in line]
        if size == "2G":
            assert warned == []
        else:
            assert len(warned) == 1 and warned[0].startswith(
                "subtok: warning: --max_memory=64M is less than counting needs besides its table")
    assert outputs["64M"] == outputs["2G"]


@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_merge_of_parts_equals_count_of_the_whole(model_type, tmp_path):
    """For unigram the merge also joins the parts in order: the last word
    of a part is followed by the next part's first character."""
    corpus = synthetic(tmp_path / "c.txt", 2000)
    lines = [line + b"\n" for line in corpus.read_bytes().split(b"\n")[:-1]]
    parts = []
    for n, (start, end) in enumerate(((0, 700), (700, 701), (701, 2000))):
        part = tmp_path / ("p%d.txt" % n)
        part.write_bytes(b"".join(lines[start:end]))
        run_subtok("count", "--input", str(part), "--output", str(part) + ".tsv",
                   "--max_memory", "8k", "--model_type", model_type)
        parts.append(str(part) + ".tsv")
    run_subtok("count", "--merge", *parts, "--output", str(tmp_path / "merged.tsv"))
    run_subtok("count", "--input", str(corpus), "--output", str(tmp_path / "whole.tsv"),
               "--model_type", model_type)
    assert (tmp_path / "merged.tsv").read_bytes() == (tmp_path / "whole.tsv").read_bytes()


# ----------------------------------------------------------------------------
# clean-up


def test_failure_while_counting_leaves_no_temporary_files(tmp_path):
    corpus = synthetic(tmp_path / "c.txt", 3000)
    spills = tmp_path / "spills"
    spills.mkdir()
    proc = run_subtok("count", "--input", "%s,%s" % (corpus, tmp_path / "missing.txt"),
                      "--output", str(tmp_path / "out.tsv"), "--max_memory", "4k",
                      "--tmp_dir", str(spills), check=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().count("\n") == 1 and "missing.txt" in proc.stderr.decode()
    assert list(spills.iterdir()) == []
    assert not (tmp_path / "out.tsv").exists()


def test_full_disk_while_spilling_is_one_error_and_no_files(tmp_path, monkeypatch):
    corpus = synthetic(tmp_path / "c.txt", 2000)
    real = counts.write_records

    def full(out, records):
        if "run-" in getattr(out, "name", ""):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(out, records)

    monkeypatch.setattr(counts, "write_records", full)
    with pytest.raises(OutputError, match="run-000000.tsv: cannot spill counts: No space left"):
        counts.count(str(tmp_path / "out.tsv"), input=[str(corpus)], max_memory=1024,
                     tmp_dir=str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)])
def test_interrupt_while_spilling_leaves_no_temporary_files(signum, status, tmp_path):
    corpus = synthetic(tmp_path / "c.txt", 200_000, vocabulary=10**6)
    spills = tmp_path / "spills"
    spills.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "subtok", "count", "--input", str(corpus),
                             "--output", str(tmp_path / "out.tsv"), "--max_memory", "16k",
                             "--num_threads", "1", "--tmp_dir", str(spills)],
                            cwd=ROOT, stderr=subprocess.PIPE)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if any(d.is_dir() and any(d.iterdir()) for d in spills.iterdir()):
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the count ended before it spilled"
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    assert b"Traceback" not in err
    assert list(spills.iterdir()) == []
    assert not (tmp_path / "out.tsv").exists()


# ----------------------------------------------------------------------------
# bad input


def _count_file(tmp_path: Path, name: str, body: bytes) -> Path:
    corpus = tmp_path / "seed.txt"
    corpus.write_text("a b\n", encoding="utf-8")
    counts.count(str(tmp_path / "seed.tsv"), input=[str(corpus)])
    header = (tmp_path / "seed.tsv").read_bytes().split(b"\n", 1)[0] + b"\n"
    path = tmp_path / name
    path.write_bytes(header + body)
    return path


BAD = [
    (b"\xe2\x96\x81a\t1\nb\n", "bad.tsv:3: expected unit<TAB>count"),
    (b"a\tx1\n", "bad.tsv:2: the count 'x1' is not a whole number"),
    (b"a\t0\n", "bad.tsv:2: the count 0 is out of range"),
    (b"a\t9223372036854775808\n", "bad.tsv:2: the count 9223372036854775808 is out of range"),
    (b"b\t1\na\t1\n", "bad.tsv:3: units are not in strictly ascending"),
    (b"a\t1\na\t1\n", "bad.tsv:3: units are not in strictly ascending"),
    (b"a\\q\t1\n", "bad.tsv:2: bad escape"),
]


@pytest.mark.parametrize("body, message", BAD)
def test_bad_count_lines_are_one_line_errors(body, message, tmp_path):
    bad = _count_file(tmp_path, "bad.tsv", body)
    for args in (["count", "--merge", str(bad), "--output", str(tmp_path / "out.tsv")],
                 ["train", "--input", str(bad), "--input_format", "tsv", "--model_prefix",
                  str(tmp_path / "m"), "--vocab_size", "5", "--model_type", "char"]):
        proc = run_subtok(*args, check=False)
        err = proc.stderr.decode()
        assert proc.returncode == 1 and err.count("\n") == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tsv", "seed.tsv", "seed.txt"]


def test_sums_over_64_bits_are_refused(tmp_path):
    half = 2**62 + 1
    a = _count_file(tmp_path, "a.tsv", b"\xe2\x96\x81a\t%d\n" % half)
    b = _count_file(tmp_path, "b.tsv", b"\xe2\x96\x81a\t%d\n" % half)
    proc = run_subtok("count", "--merge", str(a), str(b), "--output", str(tmp_path / "o.tsv"),
                      check=False)
    assert proc.returncode == 1 and "over 9223372036854775807" in proc.stderr.decode()
    assert not (tmp_path / "o.tsv").exists()
    with pytest.raises(Exception, match="over"):
        list(sum_sorted([[(b"x", half)], [(b"x", half)]], "here"))


def test_mixing_options_is_refused(tmp_path):
    corpus = synthetic(tmp_path / "c.txt", 50)
    run_subtok("count", "--input", str(corpus), "--output", str(tmp_path / "a.tsv"))
    run_subtok("count", "--input", str(corpus), "--output", str(tmp_path / "b.tsv"),
               "--normalization_rule_name", "identity")
    proc = run_subtok("count", "--merge", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv"),
                      "--output", str(tmp_path / "o.tsv"), check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1
    assert "b.tsv: counted with other options than" in err and "normalization" in err
    assert not (tmp_path / "o.tsv").exists()
    # and training with options other than the counts' own
    proc = run_subtok("train", "--input", str(tmp_path / "a.tsv"), "--input_format", "tsv",
                      "--model_prefix", str(tmp_path / "m"), "--vocab_size", "60",
                      "--model_type", "bpe", "--add_dummy_prefix=false", check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "add_dummy_prefix: counted true, training false" in err, err


def test_not_a_count_file(tmp_path):
    other = tmp_path / "x.tsv"
    other.write_bytes(b"hello\t3\n")
    proc = run_subtok("count", "--merge", str(other), "--output", str(tmp_path / "o.tsv"),
                      check=False)
    assert proc.returncode == 1 and "x.tsv:1: not a subtok count file" in proc.stderr.decode()


def test_a_count_file_read_as_text_is_refused(tmp_path):
    corpus = synthetic(tmp_path / "c.txt", 20)
    counts.count(str(tmp_path / "c.tsv"), input=[str(corpus)])
    proc = run_subtok("train", "--input", str(tmp_path / "c.tsv"), "--model_prefix",
                      str(tmp_path / "m"), "--vocab_size", "30", check=False)
    assert proc.returncode == 1
    assert "c.tsv is a subtok count file: train from it with --input_format=tsv" in proc.stderr.decode()
