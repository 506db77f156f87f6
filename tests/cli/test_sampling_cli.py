"""Sampling and n-best through the command line: the nbest/sample output
formats against sentencepiece 0.2.3, ``--random_seed`` reproducibility with
several worker processes, and the errors spm_encode gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MODELS_DIR, needs_corpora, needs_data, run_subtok
from sampling_inputs import mixed_lines, oracle, processor

pytestmark = [needs_data, needs_corpora]


@pytest.fixture(scope="module")
def cli_input(tmp_path_factory) -> tuple[Path, list[str]]:
    lines = [line for line in mixed_lines(3) if "\r" not in line] + ["", "New York"]
    path = tmp_path_factory.mktemp("sampling") / "input.txt"
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))
    return path, lines


def test_cli_nbest_formats(cli_input, spm):
    path, lines = cli_input
    model = str(MODELS_DIR / "test_model.model")
    ref = oracle(spm, "test_model")
    pieces = run_subtok("encode", "--model", model, "--output_format=nbest_piece",
                        "--nbest_size=4", str(path)).stdout.decode("utf-8").split("\n")
    ids = run_subtok("encode", "--model", model, "--output-format", "nbest_id", "--nbest-size",
                     "4", str(path)).stdout.decode().split("\n")
    expected_pieces = [" ".join(h) for line in lines
                       for h in ref.nbest_encode(line, nbest_size=4, out_type=str)]
    expected_ids = [" ".join(map(str, h)) for line in lines
                    for h in ref.nbest_encode(line, nbest_size=4)]
    assert pieces == expected_pieces + [""]
    assert ids == expected_ids + [""]


def test_cli_sample_formats_and_seed(cli_input):
    path, lines = cli_input
    model = str(MODELS_DIR / "test_model.model")
    sp = processor("test_model")
    expected = [sp.decode(sp.encode(line, out_type=str)) for line in lines]
    base = ["--model", model, "--output_format=sample_piece", "--random_seed=7"]
    one = run_subtok("encode", *base, "--nbest_size=-1", "--alpha=0.2", str(path)).stdout
    two = run_subtok("encode", *base, "--nbest_size=-1", "--alpha=0.2", "--num_threads=2",
                     str(path)).stdout
    assert one == two
    rows = one.decode("utf-8").split("\n")[:-1]
    assert len(rows) == len(lines)
    assert [sp.decode([p for p in row.split(" ") if p]) for row in rows] == expected
    assert rows != [" ".join(sp.encode(line, out_type=str)) for line in lines]
    # Default n-best sampling (nbest_size 10, alpha 0.5): ids and pieces drawn from the
    # same per-line generators agree; extra options apply.
    default = ["--model", model, "--random_seed=7", "--extra_options=bos:eos"]
    ids = run_subtok("encode", *default, "--output_format=sample_id", str(path)).stdout
    pieces = run_subtok("encode", *default, "--output_format=sample_piece", str(path)).stdout
    id_rows = ids.decode().split("\n")[:-1]
    piece_rows = pieces.decode("utf-8").split("\n")[:-1]
    assert len(id_rows) == len(piece_rows) == len(lines)
    for id_row, piece_row, text in zip(id_rows, piece_rows, expected):
        values = [int(v) for v in id_row.split()]
        row_pieces = piece_row.split(" ")
        assert values[0] == sp.bos_id() and values[-1] == sp.eos_id()
        assert values == [sp.piece_to_id(p) for p in row_pieces]
        assert sp.decode(row_pieces[1:-1]) == text
    # BPE: alpha 0 is deterministic encoding.
    bpe = str(MODELS_DIR / "hf_test_sentencepiece_bpe.model")
    assert (run_subtok("encode", "--model", bpe, "--output_format=sample_piece", "--alpha=0",
                       str(path)).stdout
            == run_subtok("encode", "--model", bpe, str(path)).stdout)


def test_cli_sampling_errors(cli_input):
    path, _ = cli_input
    char = str(MODELS_DIR / "ewondo_char_nfkc_cf.model")
    failed = run_subtok("encode", "--model", char, "--output_format=sample_piece", str(path),
                        check=False)
    assert failed.returncode != 0
    assert b"SampleEncode is not available for the current model." in failed.stderr
    failed = run_subtok("encode", "--model", str(MODELS_DIR / "test_model.model"),
                        "--output_format=nbest_id", "--nbest_size=513", str(path), check=False)
    assert failed.returncode != 0 and b"nbest_size must be nbest_size <= 512" in failed.stderr


def test_cli_proto_formats_check_options_and_write_nothing(cli_input, tmp_path):
    """spm_encode accepts proto, sample_proto and nbest_proto but writes no
    output for them (src/spm_encode_main.cc: their ``process`` only calls
    Encode / SampleEncode / NBestEncode). Their options are checked as for
    piece, sample_piece and nbest_piece."""
    path, _ = cli_input
    model = str(MODELS_DIR / "test_model.model")
    for output_format in ("proto", "sample_proto", "nbest_proto"):
        out = tmp_path / (output_format + ".txt")
        done = run_subtok("encode", "--model", model, "--output_format=" + output_format,
                          "--output", str(out), str(path))
        assert out.read_bytes() == b"" and done.stdout == b"" and done.stderr == b""
    char = str(MODELS_DIR / "ewondo_char_nfkc_cf.model")
    failed = run_subtok("encode", "--model", char, "--output_format=sample_proto", str(path),
                        check=False)
    assert failed.returncode != 0
    assert b"SampleEncode is not available for the current model." in failed.stderr
    failed = run_subtok("encode", "--model", model, "--output_format=nbest_proto",
                        "--nbest_size=513", str(path), check=False)
    assert failed.returncode != 0 and b"nbest_size must be nbest_size <= 512" in failed.stderr
    failed = run_subtok("encode", "--model", model, "--output_format=proto",
                        "--extra_options=bos:nonsense", str(path), check=False)
    assert failed.returncode != 0 and b'option "nonsense" is not available.' in failed.stderr
    missing = run_subtok("encode", "--model", model, "--output_format=proto",
                         str(tmp_path / "absent.txt"), check=False)
    assert missing.returncode != 0 and b"absent.txt" in missing.stderr
