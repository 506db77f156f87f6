"""Batches of lines through the library and the CLI's line engine: a batch
equals its lines one by one and sentencepiece 0.2.3, worker processes give
the same lines as one, and blocks hold exactly the lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import MODELS_DIR, needs_data

pytestmark = needs_data

LLAMA = str(MODELS_DIR / "llama2.model")
MAXTEXT = str(MODELS_DIR / "maxtext_c4_unigram32k.model")


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
    from subtok.lines.batch import LineEncoder, map_lines
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
    from subtok.lines.batch import LineEncoder
    from subtok.lines.streams import read_blocks, read_lines
    path = tmp_path_factory.mktemp("blocks") / "in.txt"
    path.write_bytes(data)
    blocks = list(read_blocks([str(path)], size))
    lines = list(read_lines([str(path)]))
    assert [line for block in blocks for line in block.split(b"\n")] == lines
    encoder = LineEncoder(_processor(MAXTEXT), "piece")
    for block in blocks:
        assert encoder.block(block) == b"".join(encoder(line) + b"\n" for line in block.split(b"\n"))
