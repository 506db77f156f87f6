"""A BERT ``vocab.txt`` and a GPT-2 ``vocab.json`` (with the ``merges.txt``
beside it, as the Hugging Face hub lays them out) are models wherever a
model is accepted: ``subtok encode|decode|export-vocab --model F`` and
``subtok.formats.load_any``, told apart by content. Every expected value
comes from tokenizers' own ``BertWordPieceTokenizer`` and
``ByteLevelBPETokenizer`` built from the same files."""

from __future__ import annotations

import shutil

import pytest

from _interop import HOSTILE_TEXT, INTEROP, corpus_sample, require, tiktoken_cl100k
from conftest import run_subtok
from subtok.errors import ModelFileError
from subtok.formats import load_any, model_kind

BERT_VOCAB = INTEROP / "bert_base_cased.vocab.txt"
GPT2_VOCAB = INTEROP / "gpt2" / "vocab.json"

#: CLI flags -> BertWordPieceTokenizer's keyword arguments.
BERT_CASES = [
    ([], {}),
    (["--lowercase=false"], {"lowercase": False}),
    (["--no-lowercase", "--strip_accents"], {"lowercase": False, "strip_accents": True}),
    (["--strip-accents=false", "--tokenize_chinese_chars=false"],
     {"strip_accents": False, "handle_chinese_chars": False}),
]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    lines = corpus_sample(25, seed=4) + HOSTILE_TEXT
    # One line each, as the CLI reads them; no lone surrogates (not text).
    return [t.encode("utf-8", "replace").decode("utf-8").replace("\n", " ").replace("\r", " ")
            for t in lines]


def _bert(**options):
    from tokenizers import BertWordPieceTokenizer
    return BertWordPieceTokenizer(str(require(BERT_VOCAB)), **options)._tokenizer


def _gpt2():
    from tokenizers import ByteLevelBPETokenizer
    return ByteLevelBPETokenizer(str(require(GPT2_VOCAB)),
                                 str(require(GPT2_VOCAB.with_name("merges.txt"))))._tokenizer


def _rows(stdout: bytes, count: int) -> list[bytes]:
    assert stdout.endswith(b"\n")
    rows = stdout[:-1].split(b"\n")
    assert len(rows) == count
    return rows


def _check_cli(model, flags: list[str], ref, texts: list[str], tmp_path) -> None:
    """ids (one and two workers), pieces, and decoding ids, as the oracle."""
    source = tmp_path / "in.txt"
    source.write_bytes("".join(t + "\n" for t in texts).encode("utf-8"))
    wanted = ref.encode_batch(texts)
    ids = run_subtok("encode", "--model", str(model), *flags, "--output_format=id", str(source)).stdout
    assert _rows(ids, len(texts)) == [" ".join(map(str, e.ids)).encode() for e in wanted]
    two = run_subtok("encode", "--model", str(model), *flags, "--output_format=id",
                     "--num_threads=2", str(source)).stdout
    assert two == ids
    pieces = run_subtok("encode", "--model", str(model), *flags, str(source)).stdout
    assert _rows(pieces, len(texts)) == [" ".join(e.tokens).encode("utf-8") for e in wanted]
    id_file = tmp_path / "ids.txt"
    id_file.write_bytes(ids)
    decoded = run_subtok("decode", "--model", str(model), *flags, "--input_format=id", str(id_file)).stdout
    assert _rows(decoded, len(texts)) == [t.encode("utf-8") for t in
                                          ref.decode_batch([e.ids for e in wanted])]


@pytest.mark.parametrize("flags, options", BERT_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_bert_vocab_txt_through_the_cli_is_bert_wordpiece_tokenizer(flags, options, texts, tmp_path):
    _check_cli(require(BERT_VOCAB), flags, _bert(**options), texts, tmp_path)


def test_gpt2_vocab_json_through_the_cli_is_byte_level_bpe_tokenizer(texts, tmp_path):
    _check_cli(require(GPT2_VOCAB), [], _gpt2(), texts, tmp_path)


def test_export_vocab_of_both(tmp_path):
    for model, ref in ((BERT_VOCAB, _bert()), (GPT2_VOCAB, _gpt2())):
        syms = run_subtok("export-vocab", "--model", str(require(model)), "--output_format=syms").stdout
        vocab = sorted(ref.get_vocab().items(), key=lambda kv: (kv[1], kv[0]))
        assert syms == "".join("%s\t%d\n" % kv for kv in vocab).encode("utf-8")


def test_load_any_gives_the_same_tokenizers(texts):
    for mine, ref in ((load_any(BERT_VOCAB), _bert()),
                      (load_any(BERT_VOCAB, lowercase=False, handle_chinese_chars=False),
                       _bert(lowercase=False, handle_chinese_chars=False)),
                      (load_any(GPT2_VOCAB), _gpt2())):
        for text in texts:
            got, want = mine.encode(text), ref.encode(text)
            assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets), text


def test_load_any_reads_a_rank_file_as_tiktoken_does(texts):
    mine, ref = load_any(INTEROP / "cl100k_base.tiktoken"), tiktoken_cl100k()
    assert mine.name == "cl100k_base"
    for text in texts:
        assert mine.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all"), text


def test_kinds_are_told_by_content_not_name(tmp_path):
    disguised = tmp_path / "bert.model"
    shutil.copyfile(require(BERT_VOCAB), disguised)
    folder = tmp_path / "hub"
    folder.mkdir()
    shutil.copyfile(require(GPT2_VOCAB), folder / "tokenizer.model")
    shutil.copyfile(GPT2_VOCAB.with_name("merges.txt"), folder / "merges.txt")
    ranks = tmp_path / "ranks.json"
    shutil.copyfile(require(INTEROP / "cl100k_base.tiktoken"), ranks)
    assert [model_kind(p) for p in (disguised, folder / "tokenizer.model", ranks,
                                    INTEROP / "gpt2.tokenizer.json", INTEROP / "MANIFEST.md")] == \
        ["vocab.txt", "vocab.json", "tiktoken", "tokenizer.json", "model"]
    text = b"Hello there, General Kenobi\n"
    assert run_subtok("encode", "--model", str(disguised), "--lowercase=false", input=text).stdout == \
        (" ".join(_bert(lowercase=False).encode(text.decode().strip()).tokens) + "\n").encode()
    assert run_subtok("encode", "--model", str(folder / "tokenizer.model"), input=text).stdout == \
        (" ".join(_gpt2().encode(text.decode().strip()).tokens) + "\n").encode()


def _one_line_failure(*args: str, words: list[str]) -> None:
    proc = run_subtok(*args, input=b"hello\n", check=False)
    message = proc.stderr.decode("utf-8")
    assert proc.returncode != 0 and proc.stdout == b""
    assert message.count("\n") == 1 and "Traceback" not in message, message
    assert all(w in message for w in words), message


def test_bad_vocab_files_are_one_line_errors(tmp_path):
    duplicate = tmp_path / "vocab.txt"
    duplicate.write_bytes(b"[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\nhello\n")
    for command in ("encode", "decode", "export-vocab"):
        _one_line_failure(command, "--model", str(duplicate),
                          words=["%s:7" % duplicate, "'hello' is already on line 5"])
    lonely = tmp_path / "alone" / "vocab.json"
    lonely.parent.mkdir()
    shutil.copyfile(require(GPT2_VOCAB), lonely)
    _one_line_failure("encode", "--model", str(lonely), words=[str(lonely), "merges.txt"])
    bad_merges = tmp_path / "merged" / "vocab.json"
    bad_merges.parent.mkdir()
    bad_merges.write_text('{"a": 0, "b": 1}', encoding="utf-8")
    (bad_merges.parent / "merges.txt").write_text("#version: 0.2\na b\n", encoding="utf-8")
    _one_line_failure("encode", "--model", str(bad_merges),
                      words=["merges.txt:2", "'ab' is not in the vocabulary"])
    _one_line_failure("encode", "--model", str(INTEROP / "gpt2.tokenizer.json"), "--lowercase",
                      words=["--lowercase", "vocab.txt"])
    with pytest.raises(ModelFileError, match="vocab.txt:7: token 'hello' is already on line 5"):
        load_any(duplicate)
