"""Byte ranges of a file (:class:`subtok.training.reading.FileRange`, what
one Dask task counts): every line once, in order, read through the one
reader, so the ranges' count files merged in order are the bytes of
counting the files whole (no Dask here; tests/unit/test_dask_count.py runs
the same on a cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs_corpora
from range_corpora import range_corpus
from subtok.errors import TrainerError
from subtok.training import counts
from subtok.training.reading import FileRange, byte_ranges

SHAPES = [b"", b"\n", b"\n\n", b"a", b"a\n", b"a\r\nbb\n\n\nccc\r\n" + b"x" * 40 + b"\nlast",
          b"\r\n\r\n\xe3\x81\x82\xe3\x81\x84\n" + b"y" * 30 + b"\n\n"]


@pytest.mark.parametrize("data", SHAPES)
def test_ranges_give_every_line_once_in_order(tmp_path, data):
    """For every range size, the ranges' lines are the lines of iterating
    the file (the reader's split: CR kept, the last line without "\\n")."""
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        whole = list(handle)
    for size in range(1, len(data) + 2):
        ranges = byte_ranges(str(path), len(data), size)
        assert ranges[0].start == 0 and ranges[-1].end == len(data)
        assert all(a.end == b.start for a, b in zip(ranges, ranges[1:]))
        assert [line for r in ranges for line in r] == whole, size


def test_range_sizes():
    ranges = byte_ranges("f", 10_000, 3000)
    assert [(r.start, r.end) for r in ranges] == [(0, 2500), (2500, 5000), (5000, 7500), (7500, 10000)]
    assert [(r.start, r.end) for r in byte_ranges("f", 3000, 3000)] == [(0, 3000)]
    assert [(r.start, r.end) for r in byte_ranges("f", 0, 3000)] == [(0, 0)]


@needs_corpora
@pytest.mark.parametrize("options", [dict(model_type="unigram"), dict(model_type="bpe"),
                                     dict(model_type="char"), dict(model_type="word"),
                                     dict(model_type="unigram", split_by_whitespace=False)])
def test_ranges_merged_in_order_equal_the_whole_count(tmp_path, options):
    # Normalization is per line, whatever the ranges: the identity rule
    # spares each count the nmt_nfkc table's decoding.
    options = dict(options, normalization_rule_name="identity")
    paths = range_corpus(tmp_path)
    counts.count(str(tmp_path / "whole.tsv"), input=paths, **options)
    parts = []
    for path in paths:
        for piece in byte_ranges(path, Path(path).stat().st_size, 2048):
            parts.append(str(tmp_path / ("part%03d.tsv" % len(parts))))
            counts.count(parts[-1], lines=piece, **options)
    assert len(parts) > 12
    counts.merge(parts, str(tmp_path / "merged.tsv"))
    whole = (tmp_path / "whole.tsv").read_bytes()
    assert (tmp_path / "merged.tsv").read_bytes() == whole
    # Every line read once: the non-empty lines of at most 4192 bytes.
    lines = [line.rstrip(b"\n") for path in paths for line in open(path, "rb")]
    kept = [line for line in lines if line and len(line) <= 4192]
    empty = lines.count(b"")
    assert empty > 10 and sum(line.endswith(b"\r") for line in lines) > 100
    assert len(kept) == len(lines) - empty - 1  # -1: the long line
    header = counts.parse_header(whole.split(b"\n", 1)[0], "whole")
    assert header["sentences"] == len(kept)


def test_errors_name_the_file_and_where_the_range_starts(tmp_path):
    path = tmp_path / "s.tsv"
    path.write_bytes(b"a\t1\nb\t2\nc 3\n")
    with pytest.raises(TrainerError, match=r"s\.tsv \(the lines starting in bytes 4-12\):2: Input format"):
        counts.count(str(tmp_path / "c.tsv"), lines=FileRange(str(path), 4, 12), input_format="tsv",
                     normalization_rule_name="identity")
    with pytest.raises(TrainerError, match=r"s\.tsv:3: Input format"):
        counts.count(str(tmp_path / "c.tsv"), lines=FileRange(str(path), 0, 12), input_format="tsv",
                     normalization_rule_name="identity")
    with pytest.raises(TrainerError, match=r"nothere\.txt: cannot open input file"):
        list(FileRange(str(tmp_path / "nothere.txt"), 0, 5))
