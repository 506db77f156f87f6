"""Training: subtok.train against sentencepiece 0.2.3 (the command line is
tested in tests/cli/test_train_cli.py).

sentencepiece is only an oracle here: it trains the same corpus with the
same options (``num_threads=1``) into ``tmp_path`` and we require the very
same vocabulary - every piece, type and score, in order - and the same
encodings of held-out text with the model subtok wrote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import subtok
from conftest import CORPORA_DIR, needs_corpora
from subtok import parallel
from training_oracle import (HASHIRE, LLAMA, assert_same_encoding, held_out, oracle,
                             oracle_error, ours, write_tsv)


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
