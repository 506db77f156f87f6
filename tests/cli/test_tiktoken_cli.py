"""``subtok encode|decode|export-vocab`` with the real cl100k_base rank file,
against tiktoken 0.14: ids, pieces, decoding, worker processes, and the
``--pattern``/``--special_tokens`` flags of a file not recognised by hash."""

from __future__ import annotations

import pytest

from _interop import CL100K_FILE, CL100K_SPECIALS, corpus_sample, require, tiktoken_cl100k, tiktoken_sample
from conftest import run_subtok
from subtok.formats.tiktoken import load_tiktoken, looks_like_tiktoken
from subtok.models.bytelevel.encoding import valid_text
from subtok.pretokenizers.byte_level import bytes_to_text


@pytest.fixture(scope="module")
def oracle():
    return tiktoken_cl100k()


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    lines = []
    for text in tiktoken_sample():  # (high surrogates cannot come from a file)
        try:
            lines.append(text.replace("\n", " ").encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:
            pass
    data = b"\n".join(lines) + b"\n"
    path = tmp_path_factory.mktemp("tt") / "in.txt"
    path.write_bytes(data)
    return path, [line.decode("utf-8", "surrogateescape") for line in data.split(b"\n")[:-1]]


def test_cli_ids_equal_tiktoken_and_threads_change_nothing(corpus_file, oracle, tmp_path):
    path, lines = corpus_file
    expected = "".join(" ".join(map(str, oracle.encode_ordinary(t))) + "\n" for t in lines).encode()
    one = run_subtok("encode", "--model", str(CL100K_FILE), "--output_format=id", str(path)).stdout
    assert one == expected
    out = tmp_path / "ids.txt"
    run_subtok("encode", "--model", str(CL100K_FILE), "--output_format", "id", "--num_threads", "2",
               "--output", str(out), str(path))
    assert out.read_bytes() == expected


def test_cli_pieces_and_decode(corpus_file, oracle, tmp_path):
    path, lines = corpus_file
    pieces = run_subtok("encode", "--model", str(CL100K_FILE), str(path)).stdout
    expected = [" ".join(bytes_to_text(b) for b in oracle.decode_tokens_bytes(oracle.encode_ordinary(t)))
                for t in lines]
    assert pieces.decode("utf-8").split("\n")[:-1] == expected
    ids = run_subtok("encode", "--model", str(CL100K_FILE), "--output_format=id", str(path)).stdout
    for source, fmt in ((ids, "id"), (pieces, "piece")):
        back = run_subtok("decode", "--model", str(CL100K_FILE), "--input_format=" + fmt,
                          "--num_threads=2", input=source).stdout
        assert back == b"".join(valid_text(t).encode("utf-8") + b"\n" for t in lines)


def test_cli_special_token_ids_decode_to_their_text():
    out = run_subtok("decode", "--model", str(CL100K_FILE), "--input_format=id",
                     input=b"15339 100257 1917\n").stdout
    assert out == b"hello<|endoftext|> world\n"


def test_cli_export_vocab():
    enc = load_tiktoken(require(CL100K_FILE))
    out = run_subtok("export-vocab", "--model", str(CL100K_FILE)).stdout.decode("utf-8")
    rows = out.split("\n")[:-1]
    assert len(rows) == len(enc.mergeable_ranks) + len(CL100K_SPECIALS)
    assert rows[0] == "!\t0" and rows[100255] == "\u0120Conveyor\t100255"
    assert rows[-1] == "<|endofprompt|>\t100276"


def test_cli_pattern_and_special_tokens_flags(tmp_path):
    copy = tmp_path / "mine.tiktoken"
    copy.write_bytes(CL100K_FILE.read_bytes() + b"\n")  # another hash: not recognised
    assert looks_like_tiktoken(copy)
    proc = run_subtok("encode", "--model", str(copy), check=False, input=b"hi\n")
    assert proc.returncode != 0 and proc.stdout == b""
    assert proc.stderr.count(b"\n") == 1 and b"--pattern" in proc.stderr
    out = run_subtok("encode", "--model", str(copy), "--pattern", "cl100k", "--output_format=id",
                     input=b"hello world\n").stdout
    assert out == b"15339 1917\n"
    out = run_subtok("decode", "--model", str(copy), "--pattern", "cl100k", "--input_format=id",
                     "--special_tokens", "<|x|>=100300,<|y|>=100301", input=b"100300 15339\n").stdout
    assert out == b"<|x|>hello\n"


def test_cli_extra_options_apply_to_tiktoken_output(corpus_file, oracle, tmp_path):
    """bos and eos are <|endoftext|> (tiktoken's special token for both),
    reverse reverses, unk changes nothing (nothing is unknown)."""
    path, lines = corpus_file
    end = oracle.encode_single_token("<|endoftext|>")
    for options in ("bos:eos:reverse", "reverse:bos:unk", "eos"):
        rows = []
        for text in lines:
            ids = oracle.encode_ordinary(text)
            for option in options.split(":"):
                ids = ids[::-1] if option == "reverse" else [end] + ids if option == "bos" \
                    else ids + [end] if option == "eos" else ids
            rows.append(ids)
        want = "".join(" ".join(map(str, ids)) + "\n" for ids in rows).encode()
        # Two workers once: the options apply per line, wherever it is encoded.
        for threads in ("1", "2") if options == "bos:eos:reverse" else ("1",):
            got = run_subtok("encode", "--model", str(CL100K_FILE), "--output_format=id",
                             "--num_threads", threads, "--extra_options=" + options, str(path)).stdout
            assert got == want, (options, threads)
        pieces = run_subtok("encode", "--model", str(CL100K_FILE), "--extra_options=" + options,
                            str(path)).stdout.decode("utf-8").split("\n")[:-1]
        assert [p.split(" ") if p else [] for p in pieces] == [
            ["<|endoftext|>" if i == end else bytes_to_text(oracle.decode_single_token_bytes(i))
             for i in ids] for ids in rows]
    proc = run_subtok("encode", "--model", str(CL100K_FILE), "--special_tokens", "none",
                      "--extra_options=eos", input=b"x\n", check=False)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode().count("\n") == 1 and str(CL100K_FILE) in proc.stderr.decode()



def test_blocks_with_every_kind_of_whitespace(oracle, tmp_path):
    """The block path takes a block whole only when every line is words
    between single spaces; a block holding one line with a space run, a
    space at either end, an empty or all-space line, or other whitespace
    (inside a word or alone) comes out as tiktoken encodes each line,
    wherever that line sits in the block (first, middle, last), and so
    does the whole file through the CLI with one or two workers."""
    from subtok.lines.tiktoken_lines import TiktokenLineEncoder
    clean = [line for line in corpus_sample(12) if line.isprintable() and line.strip() == line
             and "  " not in line and line]
    odd = ["", " ", "   ", " lead", "trail ", "trail  ", "two  spaces", "three   spaces",
           "tab\there", "nbsp\xa0here", "ideo\u3000space", "cr\rhere", "thin\u2009x",
           "line\u2028sep", "nel\x85x", "vt\x0bff\x0cx",
           "\xa0", "end.\xa0", " \t ", "word\t", "\tword", "don't 's 'LL", "123 4567 89,."]
    encoder = TiktokenLineEncoder(load_tiktoken(CL100K_FILE), "id")
    everything = []
    for k, text in enumerate(odd):
        for at in (0, k % len(clean), len(clean)):
            lines = clean[:at] + [text] + clean[at:]
            everything += lines
            want = "".join(" ".join(map(str, oracle.encode_ordinary(t))) + "\n" for t in lines)
            assert encoder.block("\n".join(lines).encode("utf-8")).decode() == want, (text, at)
    path = tmp_path / "ws.txt"
    path.write_bytes("\n".join(everything).encode("utf-8") + b"\n")
    expected = "".join(" ".join(map(str, oracle.encode_ordinary(t))) + "\n" for t in everything).encode()
    for threads in ("1", "2"):
        got = run_subtok("encode", "--model", str(CL100K_FILE), "--output_format=id",
                         "--num_threads", threads, str(path)).stdout
        assert got == expected, threads


def test_cli_decode_extra_options_decode_the_transformed_tokens(corpus_file, oracle, tmp_path):
    """spm_decode applies --extra_options to the pieces read, then decodes:
    here tiktoken's decode_bytes of the ids (or pieces) transformed in the
    order given; bos and eos are <|endoftext|>, which decodes to its text."""
    path, lines = corpus_file
    end = oracle.encode_single_token("<|endoftext|>")
    rows = [oracle.encode_ordinary(text) for text in lines[:40]]
    ids_in = tmp_path / "ids.txt"
    ids_in.write_text("".join(" ".join(map(str, ids)) + "\n" for ids in rows))
    pieces_in = tmp_path / "pieces.txt"
    pieces_in.write_bytes("".join(" ".join(bytes_to_text(oracle.decode_single_token_bytes(i)) for i in ids)
                                  + "\n" for ids in rows).encode("utf-8"))
    for options in ("reverse", "bos:eos:reverse", "eos:unk:bos", "reverse:reverse"):
        want = []
        for ids in rows:
            for option in options.split(":"):
                ids = ids[::-1] if option == "reverse" else [end] + ids if option == "bos" \
                    else ids + [end] if option == "eos" else ids
            want.append(oracle.decode_bytes(ids) + b"\n")
        for source, fmt in ((ids_in, "id"), (pieces_in, "piece")):
            got = run_subtok("decode", "--model", str(CL100K_FILE), "--input_format=" + fmt,
                             "--extra_options=" + options, str(source)).stdout
            assert got == b"".join(want), (options, fmt)
    proc = run_subtok("decode", "--model", str(CL100K_FILE), "--special_tokens", "none",
                      "--extra_options=bos", input=b"15339\n", check=False)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode().count("\n") == 1 and str(CL100K_FILE) in proc.stderr.decode()
