"""Training from ``subtok count`` files against sentencepiece 0.2.3 on the text.

Each case counts a real corpus in two halves (one of them with a tiny
``--max_memory``, so that it spills), merges the halves with ``subtok count
--merge``, trains from the merged counts with ``subtok train --input_format
tsv`` and compares: its .vocab and .model byte for byte with ``subtok
train``'s on the whole text (the .model once the three TrainerSpec fields
that name the inputs and outputs, ``input``, ``input_format`` and
``model_prefix``, are set alike), and for BPE, char and word its .vocab byte
for byte with ``spm_train``'s on the whole text too. (subtok's unigram
trainer is not byte-identical to sentencepiece's even on text, see
tests/test_train_unigram.py; from counts it gives exactly what it gives on
the text.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CORPORA_DIR, needs_corpora, run_subtok

HASHIRE = dict(add_dummy_prefix="false", character_coverage="0.995", pad_id="3",
               pad_piece="[PAD]", user_defined_symbols="[PAD],[CLS],[SEP],[MASK]")
LLAMA = dict(byte_fallback="true", split_digits="true", normalization_rule_name="identity",
             allow_whitespace_only_pieces="true", remove_extra_whitespaces="false")

CASES = [
    ("botchan.txt", "bpe", 1000, {}),
    ("botchan.txt", "bpe", 2000, dict(treat_whitespace_as_suffix="true")),
    ("botchan.txt", "bpe", 1000, dict(split_by_whitespace="false")),
    ("botchan.txt", "bpe", 600, LLAMA),
    ("hashire_merosu_train.txt", "bpe", 1000, HASHIRE),
    ("ja.txt", "bpe", 3000, dict(character_coverage="0.9995")),
    ("de.txt", "bpe", 2000, dict(normalization_rule_name="nfkc_cf", control_symbols="<x>")),
    ("botchan.txt", "unigram", 1000, {}),
    ("botchan.txt", "unigram", 2000, dict(treat_whitespace_as_suffix="true")),
    ("hashire_merosu_train.txt", "unigram", 1000, HASHIRE),
    ("ja.txt", "unigram", 3000, dict(split_by_whitespace="false")),
    ("en.txt", "unigram", 2000, LLAMA),
    ("botchan.txt", "char", 100, {}),
    ("wagahaiwa_nekodearu.txt", "char", 1000, dict(character_coverage="0.99")),
    ("ru.txt", "char", 400, LLAMA),
    ("botchan.txt", "word", 3000, {}),
    ("fr.txt", "word", 2000, dict(user_defined_symbols="<sep>")),
    ("en.txt", "word", 1000, dict(treat_whitespace_as_suffix="true", add_dummy_prefix="false")),
]


def _flags(options: dict) -> list[str]:
    return ["--%s=%s" % item for item in options.items()]


def _split(corpus: Path, tmp_path: Path) -> tuple[Path, Path]:
    lines = corpus.read_bytes().split(b"\n")
    half = len(lines) // 2
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_bytes(b"\n".join(lines[:half]) + b"\n")
    second.write_bytes(b"\n".join(lines[half:]))
    return first, second


def count_in_halves(corpus: Path, tmp_path: Path, model_type: str, options: dict) -> Path:
    """Count both halves (the second spilling), merge; return the merged file."""
    first, second = _split(corpus, tmp_path)
    common = ["--model_type", model_type, *_flags(options)]
    run_subtok("count", "--input", str(first), "--output", str(tmp_path / "a.tsv"), *common)
    spills = tmp_path / "spills"
    spills.mkdir()
    run_subtok("count", "--input", str(second), "--output", str(tmp_path / "b.tsv"),
               "--max_memory", "64k", "--tmp_dir", str(spills), *common)
    assert list(spills.iterdir()) == []
    run_subtok("count", "--merge", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv"),
               "--output", str(tmp_path / "counts.tsv"))
    return tmp_path / "counts.tsv"


def comparable(path: Path) -> bytes:
    """A .model with the fields naming inputs and outputs set alike."""
    from sentencepiece import sentencepiece_model_pb2 as spm_pb2
    proto = spm_pb2.ModelProto.FromString(path.read_bytes())
    del proto.trainer_spec.input[:]
    proto.trainer_spec.input_format = ""
    proto.trainer_spec.model_prefix = ""
    return proto.SerializeToString()


def train_three(spm, tmp_path: Path, corpus: Path, counts: Path, model_type: str,
                vocab_size: int, options: dict) -> tuple[Path, Path, Path]:
    """Prefixes of subtok from the counts, subtok from the text, sentencepiece
    from the text."""
    counted, text, oracle = tmp_path / "counted", tmp_path / "text", tmp_path / "oracle"
    common = ["--model_type", model_type, "--vocab_size", str(vocab_size), "--minloglevel=2",
              *_flags(options)]
    run_subtok("train", "--input", str(counts), "--input_format", "tsv", "--model_prefix",
               str(counted), *common)
    run_subtok("train", "--input", str(corpus), "--model_prefix", str(text), *common)
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(oracle),
                                   model_type=model_type, vocab_size=vocab_size, num_threads=1,
                                   minloglevel=2, **options)
    return counted, text, oracle


def _file(prefix: Path, suffix: str) -> Path:
    return Path(str(prefix) + suffix)


@needs_corpora
@pytest.mark.parametrize("name, model_type, vocab_size, options", CASES,
                         ids=["%s-%s-%d-%d" % (c[0].split(".")[0], c[1], c[2], i)
                              for i, c in enumerate(CASES)])
def test_training_from_counts_equals_spm_on_text(name, model_type, vocab_size, options,
                                                   tmp_path, spm):
    corpus = CORPORA_DIR / name
    counts = count_in_halves(corpus, tmp_path, model_type, options)
    counted, text, oracle = train_three(spm, tmp_path, corpus, counts, model_type, vocab_size,
                                        options)
    assert _file(counted, ".vocab").read_bytes() == _file(text, ".vocab").read_bytes()
    assert comparable(_file(counted, ".model")) == comparable(_file(text, ".model"))
    if model_type != "unigram":
        assert _file(counted, ".vocab").read_bytes() == _file(oracle, ".vocab").read_bytes()
    else:
        # subtok's unigram trainer itself is within issue 4's bound of
        # sentencepiece (tests/test_train_unigram.py), not identical.
        ours = [line.split("\t")[0] for line in _file(counted, ".vocab").read_text().splitlines()]
        ref = [line.split("\t")[0] for line in _file(oracle, ".vocab").read_text().splitlines()]
        assert len(set(ours) & set(ref)) >= 0.95 * len(ref)


@needs_corpora
def test_counts_in_halves_equal_counts_of_the_whole(tmp_path):
    corpus = CORPORA_DIR / "botchan.txt"
    merged = count_in_halves(corpus, tmp_path, "bpe", {})
    run_subtok("count", "--input", str(corpus), "--output", str(tmp_path / "whole.tsv"),
               "--model_type", "bpe")
    assert merged.read_bytes() == (tmp_path / "whole.tsv").read_bytes()
