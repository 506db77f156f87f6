"""The files ``subtok train --model_type=wordpiece|byte_bpe`` writes, encoded
by ``subtok encode`` (the tokenizer.json and tiktoken engines, through the
real command line) exactly as the reference libraries encode them, over
every shared corpus but the 35 MB one.

Oracles: ``tokenizers.Tokenizer.from_file(PREFIX.json)``,
``tokenizers.BertWordPieceTokenizer(PREFIX.txt)`` and a ``tiktoken.Encoding``
built from ``PREFIX.tiktoken`` with the training pattern. These tests need
``../shared/data`` and fail (not skip) without it.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import tiktoken
from tokenizers import BertWordPieceTokenizer, Tokenizer

import subtok
from conftest import run_subtok
from family_data import all_corpora, corpus
from subtok.pretokenizers.tiktoken_patterns import pattern_for


def corpus_input(tmp_path: Path) -> tuple[Path, list[str]]:
    """Every shared corpus but gutenberg in one file, and its lines as
    ``subtok encode`` reads them (cut at newlines)."""
    data = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in all_corpora())
    path = tmp_path / "all.txt"
    path.write_bytes(data)
    return path, data.decode("utf-8").split("\n")[:-1]


def subtok_ids(model: Path, source: Path, *flags: str) -> list[list[int]]:
    """``subtok encode --output_format=id`` of every line, two workers."""
    out = run_subtok("encode", "--model", str(model), "--output_format=id", "--num_threads", "2",
                     *flags, str(source)).stdout.decode()
    return [[int(i) for i in row.split()] for row in out.split("\n")[:-1]]


@pytest.mark.parametrize("criterion,lowercase", [("likelihood", True), ("frequency", False)])
def test_wordpiece_files_encode_alike_in_subtok_and_tokenizers(criterion, lowercase, tmp_path):
    files = [str(corpus(n)) for n in ("en.txt", "de.txt", "ja.txt", "zh.txt")]
    subtok.train(files, tmp_path / "wp", model_type="wordpiece", vocab_size=3000,
                 wordpiece_criterion=criterion, lowercase=lowercase)
    source, lines = corpus_input(tmp_path)
    from_json = Tokenizer.from_file(str(tmp_path / "wp.json"))
    expected = [e.ids for e in from_json.encode_batch(lines)]
    assert subtok_ids(tmp_path / "wp.json", source) == expected

    from_txt = BertWordPieceTokenizer(str(tmp_path / "wp.txt"), lowercase=lowercase)
    assert [e.ids for e in from_txt.encode_batch(lines)] == expected
    # vocab.txt in subtok: converted to a tokenizer.json, as BertWordPieceTokenizer builds one
    run_subtok("convert", "--model", str(tmp_path / "wp.txt"), "--output", str(tmp_path / "v.json"),
               "--lowercase" if lowercase else "--no-lowercase")
    assert subtok_ids(tmp_path / "v.json", source) == expected


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_byte_bpe_files_encode_alike_in_subtok_tokenizers_and_tiktoken(pattern, tmp_path):
    files = [str(corpus(n)) for n in ("en.txt", "ru.txt", "ja.txt", "hi.txt")]
    trained = subtok.train(files, tmp_path / "m", model_type="byte_bpe", vocab_size=3000,
                           pattern=pattern, special_tokens="<|endoftext|>")
    end = trained.tokens.index("<|endoftext|>")
    source, lines = corpus_input(tmp_path)

    hf = Tokenizer.from_file(str(tmp_path / "m.json"))
    expected = [e.ids for e in hf.encode_batch(lines)]
    assert subtok_ids(tmp_path / "m.json", source) == expected

    ranks = {}
    for row in (tmp_path / "m.tiktoken").read_bytes().splitlines():
        token, rank = row.split()
        ranks[base64.b64decode(token)] = int(rank)
    enc = tiktoken.Encoding(name="trained", pat_str=pattern_for(pattern), mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": end})
    assert enc.encode_ordinary_batch(lines) == expected
    assert subtok_ids(tmp_path / "m.tiktoken", source, "--pattern", pattern,
                      "--special_tokens", "<|endoftext|>=%d" % end) == expected
