"""WordPiece and byte-level BPE from ``subtok count`` files (issue 19).

Each case takes the first lines of a shared corpus, counts them in two
halves (the second with a tiny ``--max_memory``, so that it spills) and
merges the halves, then checks:

* the merged count file is byte for byte the count file of the whole slice;
* its units are the ones the oracle, ``tokenizers`` 0.23, makes of the
  slice's lines (line ends kept, as it trains) with the normalizer and
  pre-tokenizer of the tokenizer.json that training on the text wrote;
* training from the merged counts writes PREFIX.json, PREFIX.txt or
  PREFIX.tiktoken, and PREFIX.vocab byte for byte as training on the text.

Counting and training run in this process (``subtok.train`` and
:mod:`subtok.training.counts`, what the commands call); one case and the
errors go through the command line.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from tokenizers import Tokenizer

import subtok
from conftest import run_subtok
from family_data import head
from subtok.errors import InputError, TrainerError
from subtok.training import counts, families

SUFFIXES = {"wordpiece": (".json", ".txt", ".vocab"), "byte_bpe": (".json", ".tiktoken", ".vocab")}

CASES = [
    ("botchan.txt", "wordpiece", 1000, dict(wordpiece_criterion="likelihood")),
    ("de.txt", "wordpiece", 800, dict(wordpiece_criterion="frequency", lowercase=False,
                                      min_frequency=3)),
    ("ru.txt", "wordpiece", 900, dict(strip_accents="true", lowercase=False, clean_text=False,
                                      limit_alphabet=120)),
    ("ja.txt", "wordpiece", 1200, dict(wordpiece_criterion="frequency",
                                       handle_chinese_chars=False)),
    ("en.txt", "byte_bpe", 700, dict(pattern="gpt2")),
    ("botchan.txt", "byte_bpe", 600, dict(pattern="gpt2", add_prefix_space=True, min_frequency=2)),
    ("fr.txt", "byte_bpe", 700, dict(pattern="cl100k", special_tokens="<|endoftext|>",
                                     ties="tokenizers")),
    ("ko.txt", "byte_bpe", 600, dict(pattern="o200k")),
]

#: Bytes of each corpus taken (whole lines).
SLICE = 60_000


def halves(text: Path, tmp_path: Path) -> tuple[Path, Path]:
    lines = text.read_bytes().splitlines(keepends=True)
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_bytes(b"".join(lines[:len(lines) // 2]))
    second.write_bytes(b"".join(lines[len(lines) // 2:]))
    return first, second


def count_in_halves(text: Path, tmp_path: Path, model_type: str, options: dict) -> Path:
    """Count both halves (the second spilling), merge; return the merged file."""
    first, second = halves(text, tmp_path)
    spills = tmp_path / "spills"
    spills.mkdir()
    counts.count(str(tmp_path / "a.tsv"), input=[str(first)], model_type=model_type, **options)
    header = counts.count(str(tmp_path / "b.tsv"), input=[str(second)], model_type=model_type,
                          max_memory="8k", tmp_dir=str(spills), **options)
    assert header["sentences"] > 0 and list(spills.iterdir()) == []
    merged = tmp_path / "merged.tsv"
    counts.merge([str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv")], str(merged))
    return merged


def records(path: Path) -> Counter:
    """The units of a count file with their counts."""
    lines = path.read_bytes().split(b"\n")
    assert lines[0].startswith(b"#subtok-counts v1 ") and lines[-1] == b""
    out: Counter = Counter()
    for line in lines[1:-1]:
        unit, count = line.rsplit(b"\t", 1)
        out[counts.unescape(unit)] = int(count)
    return out


def oracle_units(tokenizer_json: Path, text: Path) -> Counter:
    """What ``tokenizers`` cuts the text's lines into with the trained
    file's normalizer and pre-tokenizer (lines with their ends, as it trains)."""
    tokenizer = Tokenizer.from_file(str(tokenizer_json))
    out: Counter = Counter()
    for line in text.read_bytes().decode("utf-8").splitlines(keepends=True):
        if tokenizer.normalizer is not None:
            line = tokenizer.normalizer.normalize_str(line)
        out.update(piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(line))
    return out


def assert_same_files(prefix: Path, other: Path, model_type: str) -> None:
    for suffix in SUFFIXES[model_type]:
        ours, theirs = Path(str(prefix) + suffix), Path(str(other) + suffix)
        assert ours.read_bytes() == theirs.read_bytes(), suffix


@pytest.mark.parametrize("name, model_type, vocab_size, options", CASES,
                         ids=["%s-%s-%d" % (c[0].split(".")[0], c[1], i)
                              for i, c in enumerate(CASES)])
def test_training_from_counts_equals_training_on_text(name, model_type, vocab_size, options,
                                                        tmp_path):
    text = head(name, SLICE, tmp_path)
    merged = count_in_halves(text, tmp_path, model_type, options)
    whole = tmp_path / "whole.tsv"
    counts.count(str(whole), input=[str(text)], model_type=model_type, **options)
    assert merged.read_bytes() == whole.read_bytes()

    common = dict(model_type=model_type, vocab_size=vocab_size, minloglevel=2, **options)
    subtok.train(str(text), str(tmp_path / "text"), **common)
    subtok.train(str(merged), str(tmp_path / "counted"), input_format="tsv", **common)
    assert_same_files(tmp_path / "counted", tmp_path / "text", model_type)

    oracle = oracle_units(tmp_path / "text.json", text)
    oracle.pop("", None)
    assert records(merged) == oracle


def test_counts_do_not_depend_on_the_worker_processes(tmp_path, monkeypatch):
    """The chunks go to forked workers (as a large input's would) and the
    count file is the same bytes."""
    text = head("en.txt", SLICE, tmp_path)
    for model_type in SUFFIXES:
        counts.count(str(tmp_path / "one.tsv"), input=[str(text)], model_type=model_type,
                     num_threads=1)
        with monkeypatch.context() as patch:
            patch.setattr(families, "PARALLEL_MIN_BYTES", 0)
            patch.setattr(families, "CHUNK_CHARS", 5_000)
            counts.count(str(tmp_path / "two.tsv"), input=[str(text)], model_type=model_type,
                         num_threads=2)
        assert (tmp_path / "one.tsv").read_bytes() == (tmp_path / "two.tsv").read_bytes()


def test_command_line_count_merge_train(tmp_path):
    text = head("botchan.txt", SLICE, tmp_path)
    first, second = halves(text, tmp_path)
    flags = ["--model_type=wordpiece", "--lowercase=false", "--strip_accents=true"]
    run_subtok("count", "--input", str(first), "--output", str(tmp_path / "a.tsv"), *flags)
    run_subtok("count", "--input", str(second), "--output", str(tmp_path / "b.tsv"),
               "--max_memory", "8k", "--num_threads", "2", *flags)
    run_subtok("count", "--merge", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv"),
               "--output", str(tmp_path / "all.tsv"))
    run_subtok("train", "--input", str(tmp_path / "all.tsv"), "--input_format", "tsv",
               "--model_prefix", str(tmp_path / "counted"), "--vocab_size=700",
               "--minloglevel=2", *flags)
    subtok.train(str(text), str(tmp_path / "text"), model_type="wordpiece", vocab_size=700,
                 lowercase=False, strip_accents="true", minloglevel=2)
    assert_same_files(tmp_path / "counted", tmp_path / "text", "wordpiece")


@pytest.fixture(scope="module")
def count_files(tmp_path_factory):
    """Count files of one text: WordPiece (lowercased), byte-level (gpt2,
    cl100k, o200k), BPE."""
    tmp = tmp_path_factory.mktemp("counts")
    text = head("fr.txt", 20_000, tmp)
    counts.count(str(tmp / "wp.tsv"), input=[str(text)], model_type="wordpiece")
    counts.count(str(tmp / "bb.tsv"), input=[str(text)], model_type="byte_bpe")
    for pattern in ("cl100k", "o200k"):
        counts.count(str(tmp / ("bb-%s.tsv" % pattern)), input=[str(text)],
                     model_type="byte_bpe", pattern=pattern)
    counts.count(str(tmp / "bpe.tsv"), input=[str(text)], model_type="bpe",
                 normalization_rule_name="identity")
    return tmp


@pytest.mark.parametrize("file, options, message", [
    ("wp.tsv", dict(model_type="wordpiece", lowercase=False),
     "normalizer.lowercase: counted true, training false"),
    ("wp.tsv", dict(model_type="wordpiece", handle_chinese_chars=False),
     "normalizer.handle_chinese_chars: counted true, training false"),
    ("bb.tsv", dict(model_type="byte_bpe", add_prefix_space=True),
     "pre_tokenizer.add_prefix_space: counted false, training true"),
    ("bb-cl100k.tsv", dict(model_type="byte_bpe", pattern="o200k"), "pre_tokenizer.pretokenizers"),
    ("bb.tsv", dict(model_type="byte_bpe", pattern="cl100k"), "pre_tokenizer: counted"),
    ("bb.tsv", dict(model_type="wordpiece"),
     'units: counted "byte-level-chunks", training "bert-words"'),
    ("bpe.tsv", dict(model_type="byte_bpe"),
     'units: counted "words-prefix", training "byte-level-chunks"'),
    ("wp.tsv", dict(model_type="bpe", normalization_rule_name="identity"),
     'units: counted "bert-words", training "words-prefix"'),
    ("wp.tsv", dict(model_type="char", normalization_rule_name="identity"),
     'units: counted "bert-words", training "words-prefix"'),
    ("wp.tsv", dict(model_type="wordpiece", input_sentence_size=1000),
     "--input_sentence_size=1000 cannot sample count files"),
])
def test_training_with_other_options_is_refused(count_files, file, options, message, tmp_path):
    with pytest.raises(TrainerError) as caught:
        subtok.train(str(count_files / file), str(tmp_path / "m"), input_format="tsv",
                     vocab_size=600, minloglevel=2, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert os.listdir(tmp_path) == []


def test_merging_other_options_is_refused(count_files, tmp_path):
    with pytest.raises(InputError, match=r"\(pre_tokenizer.pretokenizers differ\)"):
        counts.merge([str(count_files / "bb-cl100k.tsv"), str(count_files / "bb-o200k.tsv")],
                     str(tmp_path / "m.tsv"))
    with pytest.raises(InputError, match=r"\(pre_tokenizer differ\)"):
        counts.merge([str(count_files / "bb.tsv"), str(count_files / "bb-cl100k.tsv")],
                     str(tmp_path / "m.tsv"))
    with pytest.raises(InputError, match=r"\(units differ\)"):
        counts.merge([str(count_files / "wp.tsv"), str(count_files / "bb.tsv")],
                     str(tmp_path / "m.tsv"))
    assert os.listdir(tmp_path) == []


def test_command_line_errors_are_one_line(count_files, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = run_subtok("train", "--input", str(count_files / "wp.tsv"), "--input_format=tsv",
                        "--model_type=wordpiece", "--lowercase=false", "--vocab_size=600",
                        "--model_prefix", str(out / "m"), check=False)
    err = result.stderr.decode()
    assert result.returncode == 1 and err.count("\n") == 1, err
    assert err.startswith("subtok: error: %s: counted with other options" % (count_files / "wp.tsv"))
    result = run_subtok("count", "--merge", str(count_files / "wp.tsv"),
                        str(count_files / "bb.tsv"), "--output", str(out / "all.tsv"), check=False)
    err = result.stderr.decode()
    assert result.returncode == 1 and err.count("\n") == 1, err
    assert "(units differ)" in err
    assert os.listdir(out) == []
