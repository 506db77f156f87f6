"""Loading, validating and saving .model files."""

from __future__ import annotations

import re

import pytest

from conftest import model_id, model_paths, needs_data, run_subtok
from subtok import ModelFileError, SentencePieceProcessor
from subtok.formats.sentencepiece import ModelData, build_proto, load_model, parse_model, save_model, vocab_text
from subtok.vocab import PieceType


@needs_data
@pytest.mark.parametrize("model", model_paths(), ids=model_id)
def test_load_save_round_trip_is_byte_identical(model, tmp_path):
    data = load_model(model)
    out = tmp_path / "copy.model"
    save_model(data, out)
    assert out.read_bytes() == model.read_bytes()


@needs_data
@pytest.mark.parametrize("model", model_paths(), ids=model_id)
def test_export_vocab_matches_the_oracle(model, spm):
    sp = spm.SentencePieceProcessor(model_file=str(model))
    vocab = run_subtok("export-vocab", "--model", str(model)).stdout.decode("utf-8")
    expected = "".join("%s\t%s\n" % (sp.id_to_piece(i), "%g" % sp.get_score(i))
                       for i in range(sp.get_piece_size()))
    assert vocab == expected
    syms = run_subtok("export-vocab", "--model", str(model), "--output_format=syms").stdout
    assert syms.decode("utf-8") == "".join("%s\t%d\n" % (sp.id_to_piece(i), i)
                                           for i in range(sp.get_piece_size()))


@needs_data
@pytest.mark.parametrize("model", model_paths(), ids=model_id)
def test_special_ids_and_piece_types_match_the_oracle(model, spm):
    sp = spm.SentencePieceProcessor(model_file=str(model))
    mine = SentencePieceProcessor(model)
    assert mine.get_piece_size() == sp.get_piece_size()
    assert (mine.unk_id(), mine.bos_id(), mine.eos_id(), mine.pad_id()) == \
        (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id())
    for i in range(sp.get_piece_size()):
        assert (mine.is_unknown(i), mine.is_control(i), mine.is_unused(i), mine.is_byte(i)) == \
            (sp.is_unknown(i), sp.is_control(i), sp.is_unused(i), sp.is_byte(i))
    for i in range(0, sp.get_piece_size(), 97):
        piece = sp.id_to_piece(i)
        assert mine.id_to_piece(i) == piece
        assert mine.piece_to_id(piece) == sp.piece_to_id(piece)
        assert mine.get_score(i) == sp.get_score(i)
    assert mine.piece_to_id("no such piece \u2603") == sp.piece_to_id("no such piece \u2603")


def tiny(pieces, types=None, model_type="unigram", **trainer):
    types = types or [PieceType.UNKNOWN] + [PieceType.NORMAL] * (len(pieces) - 1)
    scores = [0.0 if t != PieceType.NORMAL else -float(i) for i, t in enumerate(types)]
    data = ModelData(list(pieces), scores, [int(t) for t in types], model_type=model_type)
    data.proto = build_proto(data, {"model_type": {"unigram": 1, "bpe": 2, "word": 3, "char": 4}[model_type],
                                    **trainer}, {"name": "identity"})
    return data.proto.SerializeToString()


@pytest.mark.parametrize("blob, message", [
    (b"", "the model file is empty"),
    (b"this is not a protobuf at all\n", "not a SentencePiece model"),
    (tiny(["<unk>", "a", "b"])[:-3], "not a SentencePiece model"),
    (tiny(["a", "b"], [PieceType.NORMAL, PieceType.NORMAL]), "unk is not defined."),
    (tiny(["<unk>", "a", "a"]), "a is already defined."),
    (tiny(["<unk>", "", "b"]), "piece must not be empty."),
    (tiny(["<unk>", "<u2>", "b"], [PieceType.UNKNOWN, PieceType.UNKNOWN, PieceType.NORMAL]),
     "unk is already defined."),
    (tiny(["<unk>", "<0x41>", "b"], [PieceType.UNKNOWN, PieceType.BYTE, PieceType.NORMAL]),
     "byte piece <0x41> is found although `byte_fallback` is false."),
    (tiny(["<unk>", "a"], byte_fallback=True), "there are not 256 byte pieces"),
])
def test_broken_models_give_one_clear_error(tmp_path, blob, message):
    path = tmp_path / "broken.model"
    path.write_bytes(blob)
    with pytest.raises(ModelFileError, match=message.replace(".", r"\.").replace("(", r"\(")):
        load_model(path)
    proc = run_subtok("encode", "--model", str(path), input=b"abc\n", check=False)
    assert proc.returncode != 0
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and message in lines[0], proc.stderr
    assert b"Traceback" not in proc.stderr and proc.stdout == b""


def _scored(pieces, scores, types, model_type="unigram", **trainer):
    data = ModelData(list(pieces), list(scores), [int(t) for t in types], model_type=model_type)
    data.proto = build_proto(data, {"model_type": {"unigram": 1, "bpe": 2}[model_type], **trainer},
                             {"name": "identity"})
    return data.proto.SerializeToString()


N, U, C = PieceType.NORMAL, PieceType.UNKNOWN, PieceType.CONTROL


@pytest.mark.parametrize("blob", [
    _scored(["<unk>", "a", "b"], [0.0, float("nan"), -1.0], [U, N, N]),
    _scored(["<unk>", "a", "b"], [0.0, -1.0, float("-inf")], [U, N, N]),
    _scored(["<unk>", "a" * 8000, "b"], [0.0, -1.0, -2.0], [U, N, N]),
    _scored(["<unk>", "<s>", "a", "<s>"], [0.0, 0.0, -1.0, -2.0], [U, C, N, N], "bpe"),
    _scored(["<unk>", "a", "x\0"], [0.0, -1.0, -2.0], [U, N, N]),
], ids=["nan score", "inf score", "8000-byte piece", "bpe control and normal alike", "nul"])
def test_models_sentencepiece_refuses_are_refused_with_its_message(spm, tmp_path, blob):
    with pytest.raises(RuntimeError) as theirs:
        spm.SentencePieceProcessor(model_proto=blob)
    message = str(theirs.value).split("INTERNAL: ")[-1].strip()
    path = tmp_path / "refused.model"
    path.write_bytes(blob)
    with pytest.raises(ModelFileError, match=re.escape(message)):
        load_model(path)


def test_a_nul_piece_beside_byte_pieces_is_taken_for_unused(spm):
    """sentencepiece 0.2.3 retypes a "\\0" piece to UNUSED when byte
    fallback is on (third-party conversions add one): the NUL then
    becomes the byte piece <0x00>."""
    pieces = ["<unk>", "\u2581", "a", "\0"] + ["<0x%02X>" % b for b in range(256)]
    types = [U, N, N, N] + [PieceType.BYTE] * 256
    blob = _scored(pieces, [0.0, -1.0, -1.0, -1.0] + [0.0] * 256, types, byte_fallback=True)
    ref = spm.SentencePieceProcessor(model_proto=blob)
    mine = SentencePieceProcessor(model_proto=blob)
    for text in ("a\0a", "\0", "a"):
        assert mine.encode(text) == ref.encode(text)
    assert mine.is_unused(3) == ref.is_unused(3)


def test_truncated_real_model_is_rejected(tmp_path):
    blob = tiny(["<unk>", "hello", "world"] + ["p%d" % i for i in range(50)])
    for cut in (1, 7, len(blob) // 2, len(blob) - 1):
        path = tmp_path / "cut.model"
        path.write_bytes(blob[:cut])
        with pytest.raises(ModelFileError):
            parse_model(path.read_bytes(), str(path))


def test_vocab_text_prints_scores_like_cpp():
    data = ModelData(["<unk>", "a", "b", "c"], [0.0, -0.0, -3.4068412, -1234567.0],
                     [2, 1, 1, 1])
    assert vocab_text(data) == "<unk>\t0\na\t-0\nb\t-3.40684\nc\t-1.23457e+06\n"


def test_processor_pickles_and_loads_from_bytes(tmp_path):
    import pickle
    blob = tiny(["<unk>", "\u2581a", "b", "\u2581"])
    sp = SentencePieceProcessor(model_proto=blob)
    clone = pickle.loads(pickle.dumps(sp))
    assert clone.encode("a b", out_type=str) == sp.encode("a b", out_type=str) == ["\u2581a", "\u2581", "b"]
