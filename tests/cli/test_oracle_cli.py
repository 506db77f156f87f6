"""Every shared model, lines from every corpus plus hostile lines, through
the real CLI: ``subtok encode`` ids and pieces and ``subtok decode`` output
must equal sentencepiece 0.2.3's, line for line."""

from __future__ import annotations

import pytest

from conftest import (HOSTILE_LINES, corpus_paths, model_id, model_paths, needs_data,
                      run_subtok, sample_lines, special_lines)

pytestmark = needs_data

LINES_PER_CORPUS = 40


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    out: list[bytes] = []
    for corpus in corpus_paths():
        out.extend(sample_lines(corpus, LINES_PER_CORPUS))
    out.extend(HOSTILE_LINES)
    assert all(b"\n" not in line for line in out)
    return out


def _split_output(stdout: bytes, expected_count: int) -> list[bytes]:
    assert stdout.endswith(b"\n") or expected_count == 0
    rows = stdout.split(b"\n")[:-1]
    assert len(rows) == expected_count
    return rows


@pytest.mark.parametrize("model", model_paths(), ids=model_id)
def test_encode_and_decode_match_sentencepiece(model, lines, spm, tmp_path):
    sp = spm.SentencePieceProcessor(model_file=str(model))
    all_lines = lines + special_lines(model)
    source = tmp_path / "in.txt"
    source.write_bytes(b"\n".join(all_lines) + b"\n")

    ref_ids = [sp.encode(line) for line in all_lines]
    ref_pieces = [sp.encode(line, out_type=str) for line in all_lines]

    got_ids = _split_output(run_subtok("encode", "--model", str(model), "--output_format=id",
                                       str(source)).stdout, len(all_lines))
    got_pieces = _split_output(run_subtok("encode", "--model=%s" % model, "--output-format",
                                          "piece", "--input", str(source)).stdout, len(all_lines))
    for line, ids, pieces, got_i, got_p in zip(all_lines, ref_ids, ref_pieces, got_ids, got_pieces):
        assert got_i == " ".join(map(str, ids)).encode(), line
        assert got_p == " ".join(pieces).encode("utf-8"), line

    # Decode the oracle's ids and pieces back; compare with the oracle's text.
    id_file = tmp_path / "ids.txt"
    id_file.write_text("".join(" ".join(map(str, ids)) + "\n" for ids in ref_ids))
    decoded = _split_output(run_subtok("decode", "--model", str(model), "--input_format=id",
                                       str(id_file)).stdout, len(all_lines))
    piece_file = tmp_path / "pieces.txt"
    piece_file.write_bytes(b"".join(" ".join(p).encode("utf-8") + b"\n" for p in ref_pieces))
    decoded_pieces = _split_output(run_subtok("decode", "--model", str(model),
                                              str(piece_file)).stdout, len(all_lines))
    for ids, pieces, got_text, got_text2 in zip(ref_ids, ref_pieces, decoded, decoded_pieces):
        assert got_text == sp.decode(ids).encode("utf-8"), ids
        assert got_text2 == sp.decode(pieces).encode("utf-8"), pieces
