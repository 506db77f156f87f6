"""The command line: flag spellings, streams, extra options, errors (the
worker protocol underneath is tested in tests/unit/test_workers.py)."""

from __future__ import annotations

import pytest

from conftest import CORPORA_DIR, MODELS_DIR, needs_data, run_subtok, sample_lines

pytestmark = needs_data

LLAMA = str(MODELS_DIR / "llama2.model")
TEST_MODEL = str(MODELS_DIR / "test_model.model")
MAXTEXT = str(MODELS_DIR / "maxtext_c4_unigram32k.model")


def out_lines(proc):
    return proc.stdout.split(b"\n")[:-1]


def test_flag_spellings_are_equivalent(tmp_path, spm):
    source = tmp_path / "in.txt"
    source.write_bytes(b"Hello world\nI saw a girl\n")
    variants = [
        ["--model", TEST_MODEL, "--output_format=id", str(source)],
        ["--model=" + TEST_MODEL, "--output-format", "id", "--input", str(source)],
        ["--model", TEST_MODEL, "--output_format", "id", "--input=" + str(source)],
    ]
    outputs = {run_subtok("encode", *v).stdout for v in variants}
    assert len(outputs) == 1
    sp = spm.SentencePieceProcessor(model_file=TEST_MODEL)
    expected = b"".join(" ".join(map(str, sp.encode(line))).encode() + b"\n"
                        for line in ["Hello world", "I saw a girl"])
    assert outputs == {expected}


def test_stdin_stdout_and_line_semantics(spm):
    sp = spm.SentencePieceProcessor(model_file=LLAMA)
    data = b"first\r\n\n\xef\xbb\xbfbom line\n  spaced  \nno newline at end"
    proc = run_subtok("encode", "--model", LLAMA, "--output_format=id", input=data)
    lines = data.split(b"\n")
    assert out_lines(proc) == [" ".join(map(str, sp.encode(line))).encode() for line in lines]


def test_extra_options_apply_in_the_given_order(spm):
    sp = spm.SentencePieceProcessor(model_file=TEST_MODEL)
    ids = sp.encode("hello")
    proc = run_subtok("encode", "--model", TEST_MODEL, "--output_format=id",
                      "--extra_options=bos:eos:reverse", input=b"hello\n")
    expected = [sp.eos_id()] + ids[::-1] + [sp.bos_id()]
    assert out_lines(proc) == [" ".join(map(str, expected)).encode()]
    proc = run_subtok("encode", "--model", TEST_MODEL, "--extra_options", "reverse:bos",
                      input=b"hello\n")
    assert out_lines(proc) == [" ".join(["<s>"] + sp.encode("hello", out_type=str)[::-1]).encode()]
    proc = run_subtok("encode", "--model", MAXTEXT, "--extra_options=unk", input="a\u2603b\n".encode())
    assert b"<unk>" in proc.stdout
    maxtext = spm.SentencePieceProcessor(model_file=MAXTEXT)
    unk = maxtext.encode("a\u2603b", out_type=str, emit_unk_piece=True)
    assert out_lines(proc) == [" ".join(unk).encode("utf-8")]


def test_decode_round_trip_with_options(tmp_path, spm):
    sp = spm.SentencePieceProcessor(model_file=TEST_MODEL)
    ids = sp.encode("I saw a girl.", add_bos=True, add_eos=True)
    proc = run_subtok("decode", "--model", TEST_MODEL, "--input_format=id",
                      input=(" ".join(map(str, ids)) + "\n\n").encode())
    assert out_lines(proc) == [sp.decode(ids).encode(), b""]


def test_num_threads_gives_identical_bytes(tmp_path):
    corpus = CORPORA_DIR / "en.txt"
    one = run_subtok("encode", "--model", MAXTEXT, "--output_format=id", str(corpus)).stdout
    out = tmp_path / "two.txt"
    run_subtok("encode", "--model", MAXTEXT, "--output_format=id", "--num_threads=2",
               "--output", str(out), str(corpus))
    assert out.read_bytes() == one
    assert len(one.split(b"\n")) - 1 == len(corpus.read_bytes().split(b"\n")) - 1
    ids = tmp_path / "ids.txt"
    ids.write_bytes(one)
    dec1 = run_subtok("decode", "--model", MAXTEXT, "--input_format=id", str(ids)).stdout
    dec2 = run_subtok("decode", "--model", MAXTEXT, "--input_format=id", "--num_threads", "2",
                      str(ids)).stdout
    assert dec1 == dec2


def test_generate_vocabulary_counts_pieces(spm, tmp_path):
    sp = spm.SentencePieceProcessor(model_file=TEST_MODEL)
    lines = sample_lines(CORPORA_DIR / "en.txt", 50)
    source = tmp_path / "in.txt"
    source.write_bytes(b"\n".join(lines) + b"\n")
    proc = run_subtok("encode", "--model", TEST_MODEL, "--generate_vocabulary", str(source))
    from collections import Counter
    counts = Counter(p for line in lines for p, i in zip(sp.encode(line, out_type=str), sp.encode(line))
                     if not sp.is_unknown(i) and not sp.is_control(i))
    expected = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode()))
    assert proc.stdout.decode() == "".join("%s\t%d\n" % kv for kv in expected)
    off = run_subtok("encode", "--model", TEST_MODEL, "--generate_vocabulary=false", str(source))
    assert off.stdout == run_subtok("encode", "--model", TEST_MODEL, str(source)).stdout


def test_vocabulary_restriction_matches_sentencepiece(spm, tmp_path):
    # sentencepiece's SetVocabulary (not exposed by the 0.2.3 Python API)
    # retypes pieces in the proto; do the same and let the oracle load it.
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto.FromString(open(TEST_MODEL, "rb").read())
    keep = {"\u2581I", "\u2581a", "\u2581girl"}
    for piece in proto.pieces:
        if piece.type in (piece.NORMAL, piece.UNUSED, piece.BYTE):
            one_char = len(piece.piece) == 1
            piece.type = piece.NORMAL if piece.piece in keep or one_char else piece.UNUSED
    sp = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\u2581I\t5\n\u2581saw\t1\n\u2581a\t9\n\u2581girl\t3\n")
    text = "I saw a girl with a telescope."
    proc = run_subtok("encode", "--model", TEST_MODEL, "--vocabulary", str(vocab),
                      "--vocabulary_threshold=2", input=text.encode() + b"\n")
    assert out_lines(proc) == [" ".join(sp.encode(text, out_type=str)).encode()]


@pytest.mark.parametrize("args, stdin, message", [
    (["encode", "--model", "missing.model"], b"x\n", "missing.model: cannot read the model file"),
    (["encode", "--model", TEST_MODEL, "no-such-input.txt"], b"", "no-such-input.txt: cannot open input file"),
    (["encode", "--model", TEST_MODEL, "--output_format=json"], b"x\n", "unknown output format: json"),
    (["encode", "--model", TEST_MODEL, "--extra_options=bos:oops"], b"x\n", 'option "oops" is not available'),
    (["decode", "--model", TEST_MODEL, "--input_format=id"], b"1 2\n5 999999\n", "line 2: piece id is out of range: 999999"),
    (["decode", "--model", TEST_MODEL, "--input_format=id"], b"1 x2\n", "line 1: 'x2' is not an id"),
    (["decode", "--model", TEST_MODEL, "--input_format=json"], b"", "unknown input format: json"),
    (["export-vocab", "--model", TEST_MODEL, "--output_format=csv"], b"", "unknown output format: csv"),
    (["encode", "--model", TEST_MODEL, "--no-such-flag"], b"", "--no-such-flag"),
    (["encode", "--model", TEST_MODEL, "--generate_vocabulary=maybe"], b"", "invalid boolean value"),
])
def test_errors_are_one_line_and_non_zero(args, stdin, message):
    proc = run_subtok(*args, input=stdin, check=False)
    assert proc.returncode != 0
    err = proc.stderr.decode()
    assert len(err.strip().splitlines()) == 1, err
    assert message in err and "Traceback" not in err


def test_failed_run_leaves_no_output_file(tmp_path):
    out = tmp_path / "out.txt"
    proc = run_subtok("decode", "--model", TEST_MODEL, "--input_format=id", "--output", str(out),
                      input=b"1 2\n3 4\n-7\n", check=False)
    assert proc.returncode != 0 and not out.exists()
    assert list(tmp_path.iterdir()) == []
    proc = run_subtok("encode", "--model", TEST_MODEL, "--output", str(tmp_path / "nodir" / "o.txt"),
                      input=b"x\n", check=False)
    assert proc.returncode != 0 and "cannot write output file" in proc.stderr.decode()


def test_decode_error_names_the_line_across_blocks(tmp_path):
    model = str(MODELS_DIR / "maxtext_c4_unigram32k.model")
    text = b"".join(b"%d %d\n" % (i, i + 1) for i in range(5000)) + b"1 99999999\n"
    result = run_subtok("decode", "--model", model, "--input_format=id", input=text, check=False)
    assert result.returncode != 0
    assert b"line 5001" in result.stderr and result.stderr.count(b"\n") == 1


def test_an_error_in_a_worker_names_its_line_and_leaves_no_output(tmp_path):
    """The bad line lies past the parent's warm-up job, so a worker meets
    it: one line on stderr naming it, non-zero exit, no output file."""
    model = str(MODELS_DIR / "maxtext_c4_unigram32k.model")
    ids = tmp_path / "ids.txt"
    ids.write_bytes(b"".join(b"%d %d\n" % (i % 999, i % 999 + 1) for i in range(60000))
                    + b"1 99999999\n")
    out = tmp_path / "out.txt"
    result = run_subtok("decode", "--model", model, "--input_format=id", "--num_threads=2",
                        "--output", str(out), str(ids), check=False)
    assert result.returncode != 0
    assert result.stderr.count(b"\n") == 1 and b"line 60001" in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [ids]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_a_line_piped_in_is_answered_before_the_input_ends(spm, threads):
    """Blocks take what the pipe has: a co-process gets each answer at once,
    also from worker processes (the parent does not wait for more input
    while it holds an answer)."""
    import select
    import subprocess
    import sys
    ref = spm.SentencePieceProcessor(model_file=MAXTEXT)
    proc = subprocess.Popen([sys.executable, "-m", "subtok", "encode", "--model", MAXTEXT,
                             "--output_format=id", "--num_threads", threads],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for text in ["Hello world", "A second line.", "A third one", "And a fourth."]:
            proc.stdin.write(text.encode() + b"\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            assert ready, "no answer while the input is still open"
            assert proc.stdout.readline() == (" ".join(map(str, ref.encode(text))) + "\n").encode()
    finally:
        proc.stdin.close()
        proc.wait(30)
