"""Training: subtok.train / ``subtok train`` against sentencepiece 0.2.3.

sentencepiece is only an oracle here: it trains the same corpus with the
same options (``num_threads=1``) into ``tmp_path`` and we require the very
same vocabulary - every piece, type and score, in order - and the same
encodings of held-out text with the model subtok wrote.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

import subtok
from subtok import parallel
from conftest import CORPORA_DIR, needs_corpora, run_subtok
from subtok.training.corpus import MT19937, build_meta, split_into_words
from subtok.training.spec import TrainerOptions, split_csv
from subtok.training.validity import PieceValidator

HASHIRE = dict(add_dummy_prefix=False, character_coverage=0.995, pad_id=3, pad_piece="[PAD]",
               user_defined_symbols="[PAD],[CLS],[SEP],[MASK],[BOS],[EOS]")
LLAMA = dict(byte_fallback=True, split_digits=True, normalization_rule_name="identity",
             allow_whitespace_only_pieces=True, remove_extra_whitespaces=False)


# --------------------------------------------------------------------------
# helpers


def oracle(spm, tmp_path: Path, input, **options):
    """Train sentencepiece (the ``spm`` fixture); return [(piece, type, score)] of its model."""
    from sentencepiece import sentencepiece_model_pb2 as spm_pb2  # after the fixture's check
    prefix = tmp_path / "oracle"
    spm.SentencePieceTrainer.train(input=input, model_prefix=str(prefix), num_threads=1,
                                   minloglevel=2, **options)
    proto = spm_pb2.ModelProto.FromString((tmp_path / "oracle.model").read_bytes())
    return [(p.piece, p.type, p.score) for p in proto.pieces], str(prefix) + ".model"


def oracle_error(spm, tmp_path: Path, input, **options) -> str:
    with pytest.raises(RuntimeError) as info:
        oracle(spm, tmp_path, input, **options)
    return str(info.value)


def ours(model) -> list:
    return list(zip(model.pieces, model.types, model.scores))


def held_out(count: int = 60) -> list[str]:
    """Lines of corpora none of the test models was trained on, plus odd ones."""
    lines = []
    for name in ("en.txt", "fr.txt", "zh.txt", "ko.txt", "ru.txt"):
        data = (CORPORA_DIR / name).read_text(encoding="utf-8").splitlines()
        lines.extend(data[-count // 5:])
    lines += ["", "  leading and  double  spaces ", "digits 1234567 and ｆｕｌｌｗｉｄｔｈ",
              "tabs\tand\rreturns", "[CLS]走れメロス[EOS]", "<s> </s> <unk> <pad>"]
    return lines


def assert_same_encoding(spm, model_file: str, lines: list[str]) -> None:
    reference = spm.SentencePieceProcessor(model_file=model_file)
    mine = subtok.SentencePieceProcessor(model_file)
    expected = [reference.encode(line, out_type=str) for line in lines]
    got = [mine.encode(line, out_type=str) for line in lines]
    assert got == expected
    expected_ids = [reference.encode(line) for line in lines]
    assert [mine.encode(line) for line in lines] == expected_ids


def write_tsv(path: Path, corpus: Path, limit: int = 3000) -> Path:
    counts = Counter(corpus.read_text(encoding="utf-8").split())
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    path.write_text("".join("%s\t%d\n" % kv for kv in rows), encoding="utf-8")
    return path


# --------------------------------------------------------------------------
# vocabularies identical to sentencepiece 0.2.3

VOCAB_CASES = {
    "bpe-botchan": ("botchan.txt", dict(model_type="bpe", vocab_size=1000)),
    "bpe-ja": ("ja.txt", dict(model_type="bpe", vocab_size=2000)),
    "bpe-de": ("de.txt", dict(model_type="bpe", vocab_size=1000)),
    "bpe-hashire": ("hashire_merosu_train.txt", dict(model_type="bpe", vocab_size=1500, **HASHIRE)),
    "bpe-llama-recipe": ("botchan.txt", dict(model_type="bpe", vocab_size=800, **LLAMA)),
    "bpe-suffix": ("de.txt", dict(model_type="bpe", vocab_size=600, treat_whitespace_as_suffix=True)),
    "bpe-no-ws-split": ("de.txt", dict(model_type="bpe", vocab_size=600, split_by_whitespace=False)),
    "bpe-symbols": ("de.txt", dict(model_type="bpe", vocab_size=600, control_symbols="<c>,der",
                                   user_defined_symbols="und,<u>", required_chars="XQ@",
                                   bos_id=-1, pad_id=4, unk_id=1, eos_id=0)),
    "bpe-number-script": ("ja.txt", dict(model_type="bpe", vocab_size=2500, split_by_number=False,
                                         split_by_unicode_script=False, character_coverage=1.0,
                                         max_sentencepiece_length=4)),
    "bpe-delimiter": ("de.txt", dict(model_type="bpe", vocab_size=600, pretokenization_delimiter="e")),
    "bpe-soft-limit": ("hashire_merosu_train.txt", dict(model_type="bpe", vocab_size=50000,
                                                        hard_vocab_limit=False)),
    "char-botchan": ("botchan.txt", dict(model_type="char", vocab_size=50)),
    "char-ja-all": ("ja.txt", dict(model_type="char", vocab_size=100, use_all_vocab=True)),
    "char-hashire": ("hashire_merosu_train.txt", dict(model_type="char", vocab_size=400, **HASHIRE)),
    "word-botchan": ("botchan.txt", dict(model_type="word", vocab_size=800)),
    "word-de": ("de.txt", dict(model_type="word", vocab_size=500, user_defined_symbols="und")),
    "word-ja": ("ja.txt", dict(model_type="word", vocab_size=300, treat_whitespace_as_suffix=True)),
}


@needs_corpora
@pytest.mark.parametrize("case", sorted(VOCAB_CASES))
def test_vocabulary_and_encoding_match_sentencepiece(case, tmp_path, spm):
    corpus, options = VOCAB_CASES[case]
    path = str(CORPORA_DIR / corpus)
    expected, _ = oracle(spm, tmp_path, path, **options)
    model = subtok.train(path, tmp_path / "m", **options)
    assert ours(model) == expected
    # the files: .model loads in sentencepiece and encodes like subtok
    assert_same_encoding(spm, str(tmp_path / "m.model"), held_out())
    assert (tmp_path / "m.vocab").read_bytes() == (tmp_path / "oracle.vocab").read_bytes()


@pytest.mark.parametrize("rows", [
    ["aaaa\t10", "bc\t25"],      # overlapping pairs count: "aaaa" gives "aa" 3
    ["aaaa\t10", "bc\t35"],
    ["abab ab ba\t3", "aba\t7", "baba b\t2"],
])
@pytest.mark.parametrize("model_type", ["bpe", "char", "word"])
def test_tiny_tsv_corpora(rows, model_type, tmp_path, spm):
    path = tmp_path / "tiny.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    options = dict(model_type=model_type, vocab_size=60, hard_vocab_limit=False,
                   character_coverage=1.0, input_format="tsv")
    expected, _ = oracle(spm, tmp_path, str(path), **options)
    assert ours(subtok.train(str(path), tmp_path / "m", **options)) == expected


@needs_corpora
def test_tsv_input_matches(tmp_path, spm):
    tsv = write_tsv(tmp_path / "words.tsv", CORPORA_DIR / "de.txt")
    options = dict(model_type="bpe", vocab_size=700, input_format="tsv")
    expected, _ = oracle(spm, tmp_path, str(tsv), **options)
    assert ours(subtok.train(str(tsv), tmp_path / "m", **options)) == expected


@needs_corpora
def test_too_high_vocab_size_reports_spm_limit(tmp_path, spm):
    path = str(CORPORA_DIR / "hashire_merosu_train.txt")
    message = oracle_error(spm, tmp_path, path, model_type="bpe", vocab_size=20000)
    limit = message.split("<= ")[1].rstrip(".")
    with pytest.raises(subtok.TrainerError) as info:
        subtok.train(path, tmp_path / "m", model_type="bpe", vocab_size=20000)
    assert str(info.value) == ("Vocabulary size too high (20000). Please set it to a value <= %s."
                               % limit)
    assert not list(tmp_path.glob("m.*"))


# --------------------------------------------------------------------------
# library API


@needs_corpora
def test_inputs_path_list_and_iterator_agree(tmp_path):
    path = CORPORA_DIR / "de.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    a = subtok.train(str(path), tmp_path / "a", model_type="bpe", vocab_size=400)
    b = subtok.train([path], tmp_path / "b", model_type="bpe", vocab_size=400)
    c = subtok.train(iter(lines), tmp_path / "c", model_type="bpe", vocab_size=400)
    d = subtok.train(sentence_iterator=(s.encode() for s in lines), model_prefix=tmp_path / "d",
                     model_type="bpe", vocab_size=400)
    assert ours(a) == ours(b) == ours(c) == ours(d)
    loaded = subtok.load_model(tmp_path / "a.model")
    assert ours(loaded) == ours(a)


@needs_corpora
def test_same_seed_gives_identical_files(tmp_path):
    path = str(CORPORA_DIR / "botchan.txt")
    options = dict(model_type="bpe", vocab_size=500, input_sentence_size=1500, random_seed=7)
    outputs = []
    for _ in range(2):
        subtok.train(path, tmp_path / "m", **options)
        outputs.append(((tmp_path / "m.model").read_bytes(), (tmp_path / "m.vocab").read_bytes()))
    assert outputs[0] == outputs[1]
    subtok.train(path, tmp_path / "m", **dict(options, random_seed=8))
    assert (tmp_path / "m.vocab").read_bytes() != outputs[0][1]


@needs_corpora
@pytest.mark.parametrize("model_type", ["bpe", "char", "word"])
def test_files_are_identical_whatever_num_threads(model_type, tmp_path, monkeypatch):
    from subtok.training import corpus
    # Small chunks and no size thresholds: the corpus is loaded in a child,
    # whose normalization pass runs in workers, each on several chunks.
    monkeypatch.setattr(corpus, "LOAD_IN_CHILD_MIN_BYTES", 0)
    monkeypatch.setattr(corpus, "NORMALIZE_PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(corpus, "NORMALIZE_CHUNK_CHARS", 5000)

    def ordered_map(func, tasks, workers, **options):
        with open("workers.log", "a") as handle:  # in the run's directory, from the child
            handle.write("%d\n" % workers)
        return parallel.ordered_map(func, tasks, workers, **options)

    monkeypatch.setattr(corpus, "ordered_map", ordered_map)
    outputs = []
    for threads in (1, 2):
        (tmp_path / str(threads)).mkdir()
        monkeypatch.chdir(tmp_path / str(threads))
        prefix = Path("m")  # the same prefix in both runs: it is recorded in the model
        subtok.train(str(CORPORA_DIR / "de.txt"), prefix, model_type=model_type, vocab_size=600,
                     num_threads=threads, input_sentence_size=1200, random_seed=3)
        outputs.append((prefix.with_suffix(".model").read_bytes(),
                        prefix.with_suffix(".vocab").read_bytes()))
    assert outputs[0] == outputs[1]
    for threads in (1, 2):
        workers = (tmp_path / str(threads) / "workers.log").read_text().split()
        assert set(workers) == {str(min(threads, parallel.cpu_count()))}


@needs_corpora
def test_model_records_every_trainer_spec_field(tmp_path):
    model = subtok.train(str(CORPORA_DIR / "de.txt"), tmp_path / "m", model_type="char",
                         vocab_size=5000)
    spec = model.proto.trainer_spec
    names = {f.name for f, _ in spec.ListFields()}
    assert {"vocab_size", "character_coverage", "split_digits", "byte_fallback", "unk_surface",
            "pretokenization_delimiter", "hard_vocab_limit"} <= names
    assert spec.vocab_size == len(model.pieces)  # CHAR lowers vocab_size to the real size
    assert model.proto.normalizer_spec.name == "nmt_nfkc"


def test_meta_piece_layout():
    options = TrainerOptions.from_kwargs(user_defined_symbols="<a>,<b>,<pad>", control_symbols="<c>",
                                         pad_id=5, bos_id=-1, byte_fallback=True, vocab_size=300)
    meta = build_meta(options)
    assert meta[:7] == [(0, "<unk>", 2), (1, "<c>", 3), (2, "</s>", 3), (3, "<a>", 4),
                        (4, "<b>", 4), (5, "<pad>", 4), (6, "<0x00>", 6)]
    assert meta[-1] == (261, "<0xFF>", 6)


def test_split_into_words():
    s = "\u2581"
    text = "%sab%s%s%scd%s" % (s, s, s, s, s)
    assert split_into_words(text) == [s + "ab", s, s, s + "cd", s]
    assert split_into_words(text, False, True) == [s + "ab", s * 3 + "cd", s]
    assert split_into_words("ab%scd%s%s" % (s, s, s), True) == ["ab" + s, "cd" + s, s]
    assert split_into_words("ab%s%scd" % (s, s), True, True) == ["ab" + s * 2, "cd"]
    assert split_into_words("") == []


def test_piece_validity():
    v = PieceValidator(TrainerOptions())
    assert [v.is_valid(p) for p in ["\u2581a", "a\u2581", "a1", "1,", "\u3042\u30a2\u6f22",
                                    "e\u0301", "\u2585", "a b", "x" * 17]] == \
        [True, False, False, True, True, True, False, False, False]
    v = PieceValidator(TrainerOptions(split_by_number=False, split_digits=True))
    assert v.is_valid("1") and not v.is_valid("a1")
    v = PieceValidator(TrainerOptions(split_by_number=False))
    assert v.is_valid("a1b")
    v = PieceValidator(TrainerOptions(split_by_whitespace=False))
    assert v.is_valid("a\u2581b") and not v.is_valid("ab\u2581")
    v = PieceValidator(TrainerOptions(allow_whitespace_only_pieces=True))
    assert v.is_valid("\u2581\u2581") and not v.is_valid("a\u2581\u2581")


def test_csv_and_mt19937():
    assert split_csv('a,"b,c",d""e,"f""g",') == ["a", "b,c", 'd""e', 'f"g']
    rng = MT19937(5489)  # std::mt19937's default seed
    assert rng.next32() == 3499211612


def test_option_errors():
    with pytest.raises(subtok.TrainerError, match="unknown option"):
        TrainerOptions.from_kwargs(vocab_sizes=5)
    with pytest.raises(subtok.TrainerError, match="character_coverage"):
        TrainerOptions.from_kwargs(character_coverage="0.5").validate()
    with pytest.raises(subtok.TrainerError, match="use_all_vocab=true is valid for WORD/CHAR"):
        TrainerOptions.from_kwargs(use_all_vocab="true", model_type="bpe").validate()


# --------------------------------------------------------------------------
# command line


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
