"""``subtok train`` as a command: spm_train's flag spellings, stdin input,
warnings and progress, one-line errors, nothing written on failure."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import subtok
from conftest import CORPORA_DIR, needs_corpora, run_subtok
from subtok.training.spec import TrainerOptions
from training_oracle import LLAMA, assert_same_encoding, held_out, oracle, ours, write_tsv


@needs_corpora
def test_cli_llama_recipe_from_stdin(tmp_path, spm):
    """The Llama-2 recipe, spm spellings, corpus on stdin."""
    corpus = CORPORA_DIR / "de.txt"
    flags = ["--byte_fallback", "--split_digits", "--normalization_rule_name=identity",
             "--allow_whitespace_only_pieces", "--remove_extra_whitespaces=false"]
    result = run_subtok("train", "--input", "-", "--model_prefix", str(tmp_path / "m"),
                        "--model_type=bpe", "--vocab_size=900", *flags, input=corpus.read_bytes())
    assert result.returncode == 0, result.stderr
    # Only the summary line (issue 21): no warning, no log.
    assert re.fullmatch(rb"wrote \S+m\.model and \S+m\.vocab: 900 pieces, bpe, \d+\.\d s\n",
                        result.stderr), result.stderr
    expected, _ = oracle(spm, tmp_path, str(corpus), model_type="bpe", vocab_size=900, **LLAMA)
    model = subtok.load_model(tmp_path / "m.model")
    assert ours(model) == expected
    assert model.byte_fallback and not model.normalizer.remove_extra_whitespaces
    assert_same_encoding(spm, str(tmp_path / "m.model"), held_out(20))


@needs_corpora
def test_cli_tsv_and_user_defined_symbols(tmp_path, spm):
    tsv = write_tsv(tmp_path / "w.tsv", CORPORA_DIR / "botchan.txt")
    result = run_subtok("train", "--input", str(tsv), "--input-format", "tsv",
                        "--model-prefix", str(tmp_path / "m"), "--model-type", "bpe",
                        "--vocab-size", "600", "--user_defined_symbols=<sep>,<cls>",
                        "--user-defined-symbols", "the")
    assert result.returncode == 0, result.stderr
    expected, _ = oracle(spm, tmp_path, str(tsv), model_type="bpe", vocab_size=600,
                         input_format="tsv", user_defined_symbols=["<sep>", "<cls>", "the"])
    assert ours(subtok.load_model(tmp_path / "m.model")) == expected


@needs_corpora
@pytest.mark.parametrize("spelling", ["--add_dummy_prefix=false", "--add-dummy-prefix=false",
                                      "--no-add-dummy-prefix", "--add_dummy_prefix=0"])
def test_cli_boolean_spellings(spelling, tmp_path):
    from click.testing import CliRunner
    from subtok.cli.app import main
    result = CliRunner().invoke(main, ["train", "--input", str(CORPORA_DIR / "ja.txt"),
                                       "--model_prefix", str(tmp_path / "m"), "--model_type=char",
                                       "--vocab_size=100", spelling])
    assert result.exit_code == 0, result.output
    assert subtok.load_model(tmp_path / "m.model").normalizer.add_dummy_prefix is False


@needs_corpora
def test_cli_warns_about_ignored_options_and_shows_progress(tmp_path):
    result = run_subtok("train", "--input", str(CORPORA_DIR / "de.txt"),
                        "--model_prefix", str(tmp_path / "m"), "--model_type=char",
                        "--vocab_size=100", "--train_extremely_large_corpus", "--progress")
    assert result.returncode == 0, result.stderr
    err = result.stderr.decode()
    assert err.count("subtok: warning: --train_extremely_large_corpus is ignored") == 1
    # The tqdm bar, forced on although stderr is a pipe: the input's bytes, with a total.
    assert re.search(r"reading:\s+\d+%\|", err), err
    quiet = run_subtok("train", "--input", str(CORPORA_DIR / "de.txt"),
                       "--model_prefix", str(tmp_path / "q"), "--model_type=char",
                       "--vocab_size=100", "--train_extremely_large_corpus", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == b""


def test_num_threads_is_not_reported_unused_for_any_model_type():
    """Every model type's corpus is normalized in num_threads workers; the
    unigram-only options are still reported for the others."""
    for model_type in ("unigram", "bpe", "char", "word"):
        options = TrainerOptions.from_kwargs(model_type=model_type, num_threads=4,
                                             shrinking_factor=0.5)
        warnings = options.ignored_option_warnings()
        assert not any("num_threads" in line for line in warnings)
        assert (("--shrinking_factor has no effect on %s training." % model_type in warnings)
                == (model_type != "unigram"))


def _error_cases(tmp: Path) -> dict:
    small = tmp / "small.txt"
    small.write_text("hello world\nthe quick brown fox jumps over the lazy dog\n" * 20)
    empty = tmp / "empty.txt"
    empty.write_text("\n\n")
    long = tmp / "long.txt"
    long.write_text(("x" * 50 + "\n") * 5)
    bad_tsv = tmp / "bad.tsv"
    bad_tsv.write_text("hello\t3\nworld\t2\nno tab here\n")
    bad_freq = tmp / "freq.tsv"
    bad_freq.write_text("hello\t3\nworld\tmany\n")
    out = tmp / "out" / "m"
    return {
        "missing-input": ([f"--input={tmp / 'nope.txt'}", f"--model_prefix={out}"],
                          "nope.txt: cannot open input file"),
        "no-input-flag": ([f"--model_prefix={out}"], "--input is required"),
        "empty-corpus": ([f"--input={empty}", f"--model_prefix={out}"], "corpus is empty"),
        "all-lines-too-long": ([f"--input={long}", f"--model_prefix={out}",
                                "--max_sentence_length=20"], "corpus is empty"),
        "vocab-too-large": ([f"--input={small}", f"--model_prefix={out}", "--model_type=bpe",
                             "--vocab_size=5000"],
                            "Vocabulary size too high (5000). Please set it to a value <= "),
        "vocab-below-alphabet": ([f"--input={small}", f"--model_prefix={out}", "--model_type=bpe",
                                  "--vocab_size=10"], "Vocabulary size is smaller than required_chars"),
        "vocab-below-meta": ([f"--input={small}", f"--model_prefix={out}", "--model_type=char",
                              "--vocab_size=100", "--byte_fallback"],
                             "smaller than the number of meta pieces (100 vs 259)"),
        "id-out-of-range": ([f"--input={small}", f"--model_prefix={out}", "--model_type=word",
                             "--vocab_size=2"], "--eos_id=2 is out of range"),
        "unknown-model-type": ([f"--input={small}", f"--model_prefix={out}", "--model_type=foo"],
                               'unknown model type "foo"'),
        "unknown-rule-name": ([f"--input={small}", f"--model_prefix={out}",
                               "--normalization_rule_name=nfkd"], "No precompiled charsmap is found: nfkd"),
        "bad-tsv-line": ([f"--input={bad_tsv}", f"--model_prefix={out}", "--input_format=tsv"],
                         "bad.tsv:3: Input format must be: word <tab> freq."),
        "bad-tsv-freq": ([f"--input={bad_freq}", f"--model_prefix={out}", "--input_format=tsv"],
                         "freq.tsv:2: Could not parse the frequency"),
        "unwritable-prefix": ([f"--input={small}", f"--model_prefix={tmp / 'no' / 'dir' / 'm'}"],
                              "does not exist (--model_prefix)"),
        "bad-coverage": ([f"--input={small}", f"--model_prefix={out}", "--character_coverage=0.5"],
                         "--character_coverage=0.5: must be in [0.98, 1.0]"),
        "bad-bool": ([f"--input={small}", f"--model_prefix={out}", "--byte_fallback=maybe"],
                     "invalid boolean value"),
    }


ERROR_CASES = [
    "missing-input", "no-input-flag", "empty-corpus", "all-lines-too-long", "vocab-too-large",
    "vocab-below-alphabet", "vocab-below-meta", "id-out-of-range", "unknown-model-type",
    "unknown-rule-name", "bad-tsv-line", "bad-tsv-freq", "unwritable-prefix", "bad-coverage",
    "bad-bool"]


@pytest.mark.parametrize("case", ERROR_CASES)
def test_cli_errors_are_one_line(case, tmp_path):
    args, message = _error_cases(tmp_path)[case]
    (tmp_path / "out").mkdir()
    result = run_subtok("train", *args, check=False)
    err = result.stderr.decode()
    assert result.returncode != 0
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if not line.startswith("subtok: warning:")]
    assert len(errors) == 1, err
    assert errors[0].startswith("subtok")
    assert message in errors[0]
    assert len(err.splitlines()) <= 2  # at most one warning (e.g. the too-long line)
    assert os.listdir(tmp_path / "out") == []
    assert result.stdout == b""


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can write into read-only directories")
def test_cli_read_only_directory(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("some text here\n" * 10)
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    try:
        result = run_subtok("train", "--input", str(src), "--model_prefix", str(out / "m"),
                            "--model_type=char", check=False)
    finally:
        out.chmod(0o700)
    assert result.returncode != 0 and b"not writable" in result.stderr
    assert os.listdir(out) == []
