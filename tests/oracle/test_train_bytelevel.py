"""Byte-level BPE training (``--model_type=byte_bpe``) against tokenizers and tiktoken.

Oracles: ``tokenizers`` 0.23.3 (``ByteLevelBPETokenizer.train`` for
``--ties=tokenizers``; its ByteLevel and Split pre-tokenizers for the
chunks; ``Tokenizer.from_file`` for the written tokenizer.json) and
``tiktoken`` 0.14 (an ``Encoding`` built from the written ``.tiktoken``
file and the split pattern, offline).

These tests need ``../shared/data`` and fail (not skip) without it.
"""

from __future__ import annotations

import base64
import json
import os
from collections import Counter
from pathlib import Path

import pytest
import tiktoken
from tokenizers import ByteLevelBPETokenizer, Regex, Tokenizer, pre_tokenizers

import subtok
from conftest import HOSTILE_LINES, run_subtok
from family_data import all_corpora, assert_train_error, corpus, head
from subtok.models.bytelevel.trainer import ChunkCounter, oniguruma_pattern, pre_tokenizer
from subtok.pretokenizers.byte_level import BYTE_CHARS
from subtok.pretokenizers.tiktoken_patterns import pattern_for
from subtok.training.spec import TrainerOptions


def file_lines(path: Path) -> list[str]:
    """A file's lines as tokenizers trains on them: line ends kept."""
    parts = path.read_bytes().decode("utf-8").split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def to_byte_level(text: str) -> str:
    return "".join(BYTE_CHARS[b] for b in text.encode("utf-8"))


def tiktoken_encoding(prefix: Path, pattern: str, specials: dict[str, int]) -> tiktoken.Encoding:
    ranks = {}
    for line in prefix.with_suffix(".tiktoken").read_bytes().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(name="trained", pat_str=pattern_for(pattern),
                             mergeable_ranks=ranks, special_tokens=specials)


def chunk_counter(pattern: str, add_prefix_space: bool) -> ChunkCounter:
    """The trainer's chunk counter for these options (chunks in byte characters)."""
    return ChunkCounter(pre_tokenizer(TrainerOptions.from_kwargs(
        model_type="byte_bpe", pattern=pattern, add_prefix_space=add_prefix_space)))


def oracle_json(files: list[Path], vocab_size: int, **train) -> dict:
    """``ByteLevelBPETokenizer.train`` and its saved model, as JSON."""
    add_prefix_space = train.pop("add_prefix_space", False)
    tok = ByteLevelBPETokenizer(add_prefix_space=add_prefix_space)
    tok.train([str(f) for f in files], vocab_size=vocab_size, show_progress=False, **train)
    return json.loads(tok._tokenizer.to_str())


# --------------------------------------------------------------------------
# chunks


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_gpt2_chunks_equal_the_byte_level_pre_tokenizer(add_prefix_space):
    ref = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=True)
    counter = chunk_counter("gpt2", add_prefix_space)
    for path in all_corpora():
        lines = file_lines(path)
        expected = Counter(piece for line in lines for piece, _ in ref.pre_tokenize_str(line))
        assert counter.count([(line, 1) for line in lines]) == expected, path.name


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_named_pattern_chunks_equal_tokenizers_split(pattern):
    ref = pre_tokenizers.Split(Regex(oniguruma_pattern(pattern_for(pattern))), behavior="isolated")
    split = chunk_counter(pattern, False).pre_tokenizer.split
    hostile = [line.decode("utf-8", "replace") for line in HOSTILE_LINES]
    for path in all_corpora():
        for line in file_lines(path) + hostile:
            expected = [to_byte_level(p) for p, _ in ref.pre_tokenize_str(line)]
            assert split(line) == expected, repr(line)


def test_user_pattern_keeps_the_text_between_matches():
    split = chunk_counter(r"\d+", False).pre_tokenizer.split
    assert split("ab12cd345") == ["ab", "12", "cd", "345"]
    ref = pre_tokenizers.Split(Regex(r"\d+"), behavior="isolated")
    assert [p for p, _ in ref.pre_tokenize_str("ab12cd345")] == split("ab12cd345")


# --------------------------------------------------------------------------
# --ties=tokenizers: ByteLevelBPETokenizer.train


PARITY_CASES = {
    "gutenberg_1mb_3000": (["gutenberg_en.txt"], 1_000_000, 3000, {}),
    "botchan_crlf_specials": (["botchan.txt"], 0, 1500,
                              {"special_tokens": ["<|endoftext|>", "<pad>"], "min_frequency": 5}),
    "multilingual_prefix_space": (["ja.txt", "ru.txt", "hi.txt"], 0, 2500,
                                  {"add_prefix_space": True}),
}


@pytest.mark.parametrize("case", sorted(PARITY_CASES))
def test_ties_tokenizers_reproduces_byte_level_bpe_tokenizer(case, tmp_path):
    """Same vocabulary (ids included) and the same merges in the same order.
    tokenizers' byte-level result does not vary between runs (no ## forms,
    the alphabet is sorted): two runs are compared to show it."""
    names, size, vocab_size, extra = PARITY_CASES[case]
    files = [head(n, size, tmp_path) if size else corpus(n) for n in names]
    expected = oracle_json(files, vocab_size, **dict(extra))
    assert oracle_json(files, vocab_size, **dict(extra))["model"] == expected["model"]
    trained = subtok.train([str(f) for f in files], tmp_path / "bl", model_type="byte_bpe",
                           vocab_size=vocab_size, ties="tokenizers", **extra)
    ours = json.loads((tmp_path / "bl.json").read_text(encoding="utf-8"))
    assert ours["model"]["vocab"] == expected["model"]["vocab"]
    assert ours["model"]["merges"] == expected["model"]["merges"]
    assert ours["model"] == expected["model"]
    assert ours["pre_tokenizer"] == expected["pre_tokenizer"]
    assert ours["added_tokens"] == expected["added_tokens"]
    assert len(trained.tokens) == vocab_size


def test_tie_rules_hand_computed(tmp_path):
    """One " a" and one "ab": both pairs are seen once. subtok's ids put
    the space (byte 32) before "a" (97), so "Ġa" wins; tokenizers' ids put
    the 188 printable stand-ins first and "Ġ" (U+0120) after them, so
    "ab" wins there."""
    data = tmp_path / "tiny.txt"
    data.write_text(" a\nab\n", encoding="utf-8")
    mine = subtok.train(str(data), tmp_path / "s", model_type="byte_bpe", vocab_size=258,
                        min_frequency=1)
    assert mine.tokens[256:] == ["Ġa", "ab"]
    theirs = subtok.train(str(data), tmp_path / "t", model_type="byte_bpe", vocab_size=258,
                          min_frequency=1, ties="tokenizers")
    assert theirs.tokens[256:] == ["ab", "Ġa"]
    expected = oracle_json([data], 258, min_frequency=1)
    assert json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))["model"] == expected["model"]


# --------------------------------------------------------------------------
# the files, loaded by tokenizers and tiktoken


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_tokenizer_json_and_tiktoken_encode_alike(pattern, tmp_path):
    files = [corpus(n) for n in ("en.txt", "fr.txt", "ru.txt", "ja.txt")]
    trained = subtok.train([str(f) for f in files], tmp_path / "m", model_type="byte_bpe",
                           vocab_size=3000, pattern=pattern, special_tokens="<|endoftext|>")
    assert trained.tokens[:256] == BYTE_CHARS and trained.tokens[-1] == "<|endoftext|>"
    hf = Tokenizer.from_file(str(tmp_path / "m.json"))
    enc = tiktoken_encoding(tmp_path / "m", pattern, {"<|endoftext|>": 2999})
    assert enc.n_vocab == 3000 and hf.get_vocab_size() == 3000
    hostile = [line.decode("utf-8", "replace") for line in HOSTILE_LINES]
    for path in all_corpora() + [None]:
        lines = file_lines(path) if path else hostile
        a = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        assert a == enc.encode_ordinary_batch(lines), path
        assert hf.decode_batch(a, skip_special_tokens=False) == lines
    assert hf.encode("a<|endoftext|>b").ids[1] == 2999
    assert enc.encode("a<|endoftext|>b", allowed_special="all")[1] == 2999
    vocab = (tmp_path / "m.vocab").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in vocab] == trained.tokens


def test_gpt2_files_on_gutenberg_encode_alike(tmp_path):
    data = head("gutenberg_en.txt", 1_500_000, tmp_path)
    subtok.train(str(data), tmp_path / "m", model_type="byte_bpe", vocab_size=4000)
    hf = Tokenizer.from_file(str(tmp_path / "m.json"))
    enc = tiktoken_encoding(tmp_path / "m", "gpt2", {})
    lines = file_lines(corpus("gutenberg_en.txt"))[-3000:]
    assert [e.ids for e in hf.encode_batch(lines)] == enc.encode_ordinary_batch(lines)


def test_files_are_identical_across_runs_and_threads(tmp_path):
    data = head("gutenberg_en.txt", 2_500_000, tmp_path)  # above the parallel threshold
    outputs = []
    for run, threads in enumerate((1, 2, 2)):
        subtok.train(str(data), tmp_path / ("m%d" % run), model_type="byte_bpe",
                     vocab_size=1200, num_threads=threads, pattern="cl100k")
        outputs.append([(tmp_path / ("m%d%s" % (run, s))).read_bytes()
                        for s in (".json", ".tiktoken", ".vocab")])
    assert outputs[0] == outputs[1] == outputs[2]


def test_tsv_counts_and_iterables(tmp_path):
    lines = corpus("de.txt").read_text(encoding="utf-8").splitlines()
    counts = Counter(lines)
    tsv = tmp_path / "lines.tsv"
    tsv.write_text("".join("%s\t%d\n" % kv for kv in counts.items()), encoding="utf-8")
    a = subtok.train(str(tsv), tmp_path / "a", model_type="byte_bpe", vocab_size=700,
                     input_format="tsv")
    b = subtok.train(iter(lines), tmp_path / "b", model_type="byte_bpe", vocab_size=700)
    assert a.tokens == b.tokens


# --------------------------------------------------------------------------
# the command line


def test_cli_writes_three_files(tmp_path):
    result = run_subtok("train", "--input", str(corpus("botchan.txt")), "--model_prefix",
                        str(tmp_path / "m"), "--model_type=byte_bpe", "--vocab_size=400",
                        "--special_tokens=<|endoftext|>", "--pattern=o200k", "--quiet")
    assert result.stderr == b"" and result.stdout == b""
    assert sorted(os.listdir(tmp_path)) == ["m.json", "m.tiktoken", "m.vocab"]
    ranks = (tmp_path / "m.tiktoken").read_text(encoding="ascii").splitlines()
    assert len(ranks) == 399 and ranks[0] == "AA== 0" and ranks[32] == "IA== 32"


ERRORS = {
    "pattern": (["--pattern=(unclosed"], "--pattern=(unclosed: not a valid regular expression"),
    "prefix_space": (["--pattern=cl100k", "--add_prefix_space"],
                     "--add_prefix_space works with --pattern=gpt2 only"),
    "small": (["--vocab_size=200"], "--vocab_size=200: byte-level BPE needs at least 256"),
    "ties": (["--ties=random"], "--ties=random: must be subtok or tokenizers."),
    "tsv": (["--input_format=tsv"], ":1: Input format must be: word <tab> freq."),
    "directory": (["--model_prefix=/nonexistent/dir/m"], "directory /nonexistent/dir does not exist"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_cli_errors_are_one_line_and_write_nothing(case, tmp_path):
    assert_train_error("byte_bpe", *ERRORS[case], tmp_path)


def test_failed_publication_leaves_no_file(tmp_path, monkeypatch):
    from subtok import atomic
    calls = []
    real = os.replace

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(src, dst)
    monkeypatch.setattr(atomic.os, "replace", flaky)
    with pytest.raises(subtok.SubtokError, match="No space left on device"):
        subtok.train(str(corpus("de.txt")), tmp_path / "m", model_type="byte_bpe", vocab_size=300)
    assert sorted(os.listdir(tmp_path)) == []
