"""``subtok encode/decode/export-vocab`` with a tokenizer.json, through the
real command line, against tokenizers 0.23.3; and the errors a broken file
gives (one line, non-zero exit, no traceback, no output file)."""

from __future__ import annotations

import json
import shutil

import pytest

from _interop import require
from conftest import HOSTILE_LINES, MODELS_DIR, run_subtok
from hf_data import (EXTRA_HOSTILE, INTEROP_DIR, corpus_lines, file_id, oracle, special_strings,
                     tokenizer_files)

LINES_PER_CORPUS = 20


def _input_lines(path) -> list[bytes]:
    """Corpus lines, hostile lines (raw bytes, invalid UTF-8 included) and
    the file's special strings."""
    lines = [t.encode("utf-8") for t in corpus_lines(LINES_PER_CORPUS, seed=3)]
    lines += list(HOSTILE_LINES)
    lines += [t.encode("utf-8", "surrogatepass") for t in EXTRA_HOSTILE + special_strings(path)]
    return [line for line in lines if b"\n" not in line]


def _rows(stdout: bytes, count: int) -> list[bytes]:
    assert stdout.endswith(b"\n")
    rows = stdout[:-1].split(b"\n")
    assert len(rows) == count
    return rows


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_encode_and_decode_match_tokenizers(path, tmp_path):
    ref = oracle(path)
    lines = _input_lines(path)
    source = tmp_path / "in.txt"
    source.write_bytes(b"\n".join(lines) + b"\n")
    texts = [line.decode("utf-8", "replace") for line in lines]
    wanted = [ref.encode(t) for t in texts]

    ids_out = run_subtok("encode", "--model", str(path), "--output_format=id", str(source)).stdout
    assert _rows(ids_out, len(lines)) == [" ".join(map(str, e.ids)).encode() for e in wanted]
    two = run_subtok("encode", "--model", str(path), "--output_format=id", "--num_threads", "2",
                     str(source)).stdout
    assert two == ids_out

    pieces = run_subtok("encode", "--model", str(path), str(source)).stdout
    assert _rows(pieces, len(lines)) == [" ".join(e.tokens).encode("utf-8") for e in wanted]

    bare = run_subtok("encode", "--model", str(path), "--output_format=id",
                      "--no-add_special_tokens", str(source)).stdout
    assert _rows(bare, len(lines)) == [
        " ".join(map(str, ref.encode(t, add_special_tokens=False).ids)).encode() for t in texts]

    id_file = tmp_path / "ids.txt"
    id_file.write_bytes(ids_out)
    decoded = run_subtok("decode", "--model", str(path), "--input_format=id", str(id_file)).stdout
    assert _rows(decoded, len(lines)) == [ref.decode(e.ids).encode("utf-8") for e in wanted]
    kept = run_subtok("decode", "--model", str(path), "--input_format=id", "--num_threads=2",
                      "--skip_special_tokens=false", str(id_file)).stdout
    assert _rows(kept, len(lines)) == [
        ref.decode(e.ids, skip_special_tokens=False).encode("utf-8") for e in wanted]


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_decode_pieces_and_export_vocab(path, tmp_path):
    ref = oracle(path)
    encodings = [ref.encode(t) for t in corpus_lines(10, seed=5)]
    usable = [e for e in encodings   # tokens that a line of pieces can carry back
              if all(t and " " not in t and ref.token_to_id(t) is not None for t in e.tokens)]
    assert usable
    piece_file = tmp_path / "pieces.txt"
    piece_file.write_bytes(b"".join(" ".join(e.tokens).encode("utf-8") + b"\n" for e in usable))
    decoded = run_subtok("decode", "--model", str(path), str(piece_file)).stdout
    assert decoded == b"".join(
        ref.decode([ref.token_to_id(t) for t in e.tokens]).encode("utf-8") + b"\n" for e in usable)

    syms = run_subtok("export-vocab", "--model", str(path), "--output_format=syms").stdout
    vocab = sorted(ref.get_vocab().items(), key=lambda kv: (kv[1], kv[0]))
    assert syms == "".join("%s\t%d\n" % kv for kv in vocab).encode("utf-8")
    scores = run_subtok("export-vocab", "--model", str(path)).stdout.decode("utf-8").split("\n")
    # Unigram: the scores as tokenizers holds them (read by serde_json, one
    # ulp off the text for some), which its own serialization shows.
    model = json.loads(ref.to_str())["model"]
    if isinstance(model.get("vocab"), list):
        assert [float(row.split("\t")[1]) for row in scores[:len(model["vocab"])]] == \
               [score for _, score in model["vocab"]]


def test_model_kind_is_told_by_content_not_name(tmp_path):
    tokenizer = INTEROP_DIR / "bert_base_uncased.tokenizer.json"
    disguised = tmp_path / "looks_like.model"
    shutil.copyfile(tokenizer, disguised)
    assert run_subtok("encode", "--model", str(disguised), input=b"Hello there\n").stdout == \
        b"[CLS] hello there [SEP]\n"
    sentencepiece = tmp_path / "looks_like.json"
    shutil.copyfile(MODELS_DIR / "test_model.model", sentencepiece)
    assert run_subtok("encode", "--model", str(sentencepiece), input=b"Hello there\n").stdout == \
        run_subtok("encode", "--model", str(MODELS_DIR / "test_model.model"),
                   input=b"Hello there\n").stdout


def _broken_files(tmp_path):
    """(name, file content, words the one-line message must hold)."""
    good = json.loads((INTEROP_DIR / "gpt2.tokenizer.json").read_text(encoding="utf-8"))
    unknown = dict(good, pre_tokenizer={"type": "Frobnicate"})
    merge = dict(good, model=dict(good["model"], merges=["\u0120 t", "zzz\u0120 qqq"]))
    nested = dict(good, normalizer={"type": "Sequence", "normalizers": [{"type": "NFC"},
                                                                       {"type": "Unknown2"}]})
    return [
        ("malformed.json", '{"model": {"type": "BPE", "vocab": {', ["not valid JSON"]),
        ("no_model.json", '{"version": "1.0"}', ["not a tokenizer.json"]),
        ("unknown.json", json.dumps(unknown), ["pre_tokenizer", "Frobnicate"]),
        ("nested.json", json.dumps(nested), ["normalizer.normalizers[1]", "Unknown2"]),
        ("merge.json", json.dumps(merge), ["merge 2", "zzz\u0120", "not in the vocabulary"]),
    ]


@pytest.mark.parametrize("case", range(5))
def test_broken_files_fail_in_one_line(case, tmp_path):
    name, content, words = _broken_files(tmp_path)[case]
    model = tmp_path / name
    model.write_text(content, encoding="utf-8")
    source = tmp_path / "in.txt"
    source.write_bytes(b"hello\n")
    target = tmp_path / "out.txt"
    for command in (["encode", "--output", str(target), str(source)],
                    ["decode", "--output", str(target), str(source)],
                    ["export-vocab", "--output", str(target)]):
        proc = run_subtok(command[0], "--model", str(model), *command[1:], check=False)
        assert proc.returncode != 0
        message = proc.stderr.decode("utf-8")
        assert message.count("\n") == 1 and "Traceback" not in message, message
        assert str(model) in message and all(w in message for w in words), message
        assert not target.exists()
        assert proc.stdout == b""


def test_options_for_sentencepiece_only_are_refused(tmp_path):
    model = str(INTEROP_DIR / "gpt2.tokenizer.json")
    for extra in (["--output_format=sample_id"], ["--generate_vocabulary"]):
        proc = run_subtok("encode", "--model", model, *extra, input=b"x\n", check=False)
        assert proc.returncode != 0 and proc.stdout == b""
        assert proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr


def _oracle_ends(ref) -> tuple[int | None, int | None]:
    """The BOS and EOS ids as docs/tokenizer-json.md defines them, read
    off tokenizers: the special tokens its post-processor puts before and
    after a text, else the first of the known names its vocabulary has."""
    from subtok.postprocessors.extra_options import BOS_NAMES, EOS_NAMES
    enc = ref.encode("a", add_special_tokens=True)
    plain = ref.encode("a", add_special_tokens=False).ids
    at = next((i for i in range(len(enc.ids)) if enc.ids[i:i + len(plain)] == plain), 0)
    bos = enc.ids[0] if at > 0 else None
    eos = enc.ids[-1] if at + len(plain) < len(enc.ids) else None
    names = lambda names: next((ref.token_to_id(n) for n in names if ref.token_to_id(n) is not None), None)
    return (bos if bos is not None else names(BOS_NAMES)), (eos if eos is not None else names(EOS_NAMES))


@pytest.mark.parametrize("name", ["bert_base_uncased", "llama2_chat", "gpt2"])
def test_extra_options_apply_to_tokenizers_output(name, tmp_path):
    """bos, eos, reverse, unk in the order given, on what tokenizers gives
    (with and without the post-processor's tokens): BERT's ends come from
    its template, Llama 2's BOS from its template and EOS by name, GPT-2's
    both by name."""
    path = require(INTEROP_DIR / ("%s.tokenizer.json" % name))
    ref = oracle(path)
    bos, eos = _oracle_ends(ref)
    assert bos is not None and eos is not None
    texts = [t for t in corpus_lines(3, seed=5) if "\n" not in t][:12] + [""]
    source = tmp_path / "in.txt"
    source.write_bytes("".join(t + "\n" for t in texts).encode("utf-8", "surrogatepass"))
    cases = [("bos:eos:reverse", True), ("reverse:bos:unk", False), ("eos:eos", True)]
    for options, special in cases:
        want_rows = []
        for text in texts:
            enc = ref.encode(text, add_special_tokens=special)
            ids, tokens = list(enc.ids), list(enc.tokens)
            for option in options.split(":"):
                if option == "reverse":
                    ids, tokens = ids[::-1], tokens[::-1]
                elif option == "bos":
                    ids, tokens = [bos] + ids, [ref.id_to_token(bos)] + tokens
                elif option == "eos":
                    ids, tokens = ids + [eos], tokens + [ref.id_to_token(eos)]
            want_rows.append((" ".join(map(str, ids)), " ".join(tokens)))
        flags = ["--extra_options=" + options] + ([] if special else ["--no-add_special_tokens"])
        got_ids = run_subtok("encode", "--model", str(path), "--output_format=id", *flags,
                             str(source)).stdout.decode("utf-8")
        assert got_ids.split("\n")[:-1] == [row[0] for row in want_rows], options
        got_pieces = run_subtok("encode", "--model", str(path), "--num_threads=2", *flags,
                                str(source)).stdout.decode("utf-8")
        assert got_pieces.split("\n")[:-1] == [row[1] for row in want_rows], options


@pytest.mark.parametrize("name", ["bert_base_uncased", "llama2_chat", "gpt2"])
def test_decode_extra_options_decode_the_transformed_ids(name, tmp_path):
    """spm_decode applies --extra_options to the pieces it reads, then
    decodes them (SentencePieceProcessor::Decode): here tokenizers' decode
    of the ids (or tokens) transformed in the order given, with the BOS and
    EOS tokens encode adds, with and without skipping special tokens."""
    path = require(INTEROP_DIR / ("%s.tokenizer.json" % name))
    ref = oracle(path)
    bos, eos = _oracle_ends(ref)
    rows = [ref.encode(t, add_special_tokens=False).ids
            for t in corpus_lines(2, seed=7) if "\n" not in t][:16] + [[]]
    ids_in = tmp_path / "ids.txt"
    ids_in.write_text("".join(" ".join(map(str, ids)) + "\n" for ids in rows))
    tokens_in = tmp_path / "tokens.txt"
    tokens_in.write_bytes("".join(" ".join(ref.id_to_token(i) for i in ids) + "\n" for ids in rows)
                          .encode("utf-8"))
    for options, skip in [("bos:eos:reverse", False), ("eos:unk:bos", True), ("reverse:bos", False)]:
        want = []
        for ids in rows:
            for option in options.split(":"):
                ids = ids[::-1] if option == "reverse" else [bos] + ids if option == "bos" \
                    else ids + [eos] if option == "eos" else ids
            want.append(ref.decode(ids, skip_special_tokens=skip))
        flags = ["--extra_options=" + options] + ([] if skip else ["--no-skip_special_tokens"])
        for source, fmt in ((ids_in, "id"), (tokens_in, "piece")):
            got = run_subtok("decode", "--model", str(path), "--input_format=" + fmt, *flags,
                             str(source)).stdout.decode("utf-8")
            assert got.split("\n")[:-1] == want, (options, fmt)


def test_decode_extra_options_without_a_bos_token_fail_in_one_line():
    path = require(INTEROP_DIR / "t5_small.tokenizer.json")
    for options in ("bos", "nonsense"):
        proc = run_subtok("decode", "--model", str(path), "--input_format=id",
                          "--extra_options=" + options, input=b"1 2\n", check=False)
        assert proc.returncode == 1 and proc.stdout == b"" and b"Traceback" not in proc.stderr
        assert proc.stderr.count(b"\n") == 1, proc.stderr


def test_extra_options_without_a_bos_token_fail_in_one_line():
    """t5 has an EOS (its template's </s>) and no BOS."""
    path = require(INTEROP_DIR / "t5_small.tokenizer.json")
    ref = oracle(path)
    assert ref.token_to_id("</s>") is not None and _oracle_ends(ref)[0] is None
    proc = run_subtok("encode", "--model", str(path), "--extra_options=eos", input=b"x\n")
    assert proc.stdout.split() == [ref.id_to_token(i).encode() for i in ref.encode("x").ids] + [b"</s>"]
    for options in ("bos", "eos:bos", "bos:nonsense", "nonsense"):
        proc = run_subtok("encode", "--model", str(path), "--extra_options=" + options,
                          input=b"x\n", check=False)
        assert proc.returncode == 1 and proc.stdout == b"" and b"Traceback" not in proc.stderr
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 1, proc.stderr
        if "nonsense" in options:
            assert lines[0].endswith('option "nonsense" is not available.')
        else:
            assert str(path) in lines[0] and "BOS" in lines[0]
