"""The command line: flag spellings, streams, extra options, errors."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPORA_DIR, MODELS_DIR, needs_data, run_subtok, sample_lines
from subtok.cli.batch import PerLine

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


@settings(max_examples=25, deadline=None)
@given(texts=st.lists(st.text(max_size=40), min_size=1, max_size=6))
def test_batch_equals_map_and_round_trip_matches_oracle(spm, texts):
    for path in (LLAMA, MAXTEXT, str(MODELS_DIR / "ewondo_char_nfkc_cf.model")):
        sp = spm.SentencePieceProcessor(model_file=path)
        mine = _processor(path)
        batch = mine.encode(texts)
        assert batch == [mine.encode(t) for t in texts]
        for text, ids in zip(texts, batch):
            ref_ids = sp.encode(text)
            assert ids == ref_ids, text
            assert mine.decode(ids) == sp.decode(ref_ids)


_CACHE: dict = {}


def _processor(path):
    import subtok
    if path not in _CACHE:
        _CACHE[path] = subtok.SentencePieceProcessor(path)
    return _CACHE[path]


@settings(max_examples=8, deadline=None)
@given(lines=st.lists(st.text(max_size=30).map(lambda s: s.replace("\n", " ").encode("utf-8")),
                      min_size=10, max_size=40))
def test_worker_processes_give_the_same_lines(lines):
    """map_lines with 2 workers (tiny chunks, so workers really run) == 1."""
    from subtok.cli.batch import LineEncoder, map_lines
    for path in (MAXTEXT, LLAMA):
        encoder = LineEncoder(_processor(path), "id")
        one = list(map_lines(encoder, lines, 1, chunk_size=2))
        two = list(map_lines(encoder, lines, 2, chunk_size=2))
        assert two == one and len(one) == len(lines)


@settings(max_examples=200, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"\n", b"\r", b"bc", b"\xe3\x81", b"\x82", b" "]),
                     max_size=30).map(b"".join),
       size=st.integers(1, 8))
def test_blocks_hold_exactly_the_lines(tmp_path_factory, data, size):
    """read_blocks cuts the input into blocks of whole lines whatever the
    read size; split back, they are read_lines' lines. A block's encoding
    is the lines' encodings, each followed by a newline, and an error
    names the line (counted across blocks) it is about."""
    from subtok.cli.batch import LineEncoder
    from subtok.cli.streams import read_blocks, read_lines
    path = tmp_path_factory.mktemp("blocks") / "in.txt"
    path.write_bytes(data)
    blocks = list(read_blocks([str(path)], size))
    lines = list(read_lines([str(path)]))
    assert [line for block in blocks for line in block.split(b"\n")] == lines
    encoder = LineEncoder(_processor(MAXTEXT), "piece")
    for block in blocks:
        assert encoder.block(block) == b"".join(encoder(line) + b"\n" for line in block.split(b"\n"))


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


class _DiesOnSomeLines(PerLine):
    """A worker function that ends its process on a line "die"."""

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        if line == b"die":
            os._exit(3)
        return line.upper()


def test_a_worker_that_dies_is_reported_not_waited_for():
    from subtok.cli.batch import map_blocks
    from subtok.errors import SubtokError
    blocks = [b"a\nb", b"c", b"d\ndie", b"e"]
    assert list(map_blocks(_DiesOnSomeLines(), blocks[:2], 2)) == [b"A\nB\n", b"C\n"]
    with pytest.raises(SubtokError, match="worker process stopped"):
        list(map_blocks(_DiesOnSomeLines(), blocks, 2))


class _Doubles(PerLine):
    """Each line twice, and the job's input as news: results and news
    many times a pipe's capacity."""

    def __init__(self) -> None:
        self.learned = 0
        self.last = b""

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        return line + line

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        self.last = block
        return super().block(block, first_line)

    def news(self):
        return self.last

    def learn(self, news) -> None:
        self.learned += len(news)


def test_messages_larger_than_a_pipe_go_through_whole():
    """Jobs, results and news of megabytes, more in flight than any pipe
    holds: the parent writes what fits and reads while it waits, so no
    side waits on the other forever, and every byte arrives in order."""
    from subtok.cli.batch import map_blocks
    blocks = [(b"%d" % k) * (300_000 + 7919 * k) + b"\nx" for k in range(12)]
    expected = [line + line + b"\n" + b"xx\n" for line in (b.split(b"\n")[0] for b in blocks)]
    # (The first block may come back in two: see batch._small_first.)
    assert b"".join(map_blocks(_Doubles(), blocks, 2)) == b"".join(expected)


def test_without_fork_the_jobs_are_done_in_this_process(monkeypatch):
    """Where the system cannot fork, --num_threads gives the same output
    from one process."""
    import multiprocessing
    from subtok.cli.batch import map_blocks
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])

    def no_process(*args, **kwargs):
        raise AssertionError("a process was started")

    monkeypatch.setattr(multiprocessing, "get_context", no_process)
    blocks = [b"a\nb", b"c", b"d"]
    assert list(map_blocks(_Doubles(), blocks, 2)) == [b"aa\nbb\n", b"cc\n", b"dd\n"]


class _CountsNews(PerLine):
    """Each line's output: how many news items its worker has taken in;
    each job's news is its input."""

    def __init__(self) -> None:
        self.learned: list = []
        self.last = b""

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        time.sleep(0.02)  # let the other worker's news come in
        self.last = block
        return b"%d\n" % len(self.learned)

    def news(self):
        return self.last

    def learn(self, news) -> None:
        self.learned.append(news)


def test_workers_pass_their_news_to_each_other():
    from subtok.cli.batch import map_blocks
    blocks = [b"%d" % k for k in range(40)]
    taken = [int(out) for out in map_blocks(_CountsNews(), blocks, 2)]
    assert len(taken) == 40
    # Each worker takes in the other's news (never its own) as it goes:
    # the counts grow, up to about the 20 jobs the other worker did.
    assert 5 < max(taken) < 40


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
