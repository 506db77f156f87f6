"""``import subtok as spm`` behaves as ``import sentencepiece as spm`` (0.2.3).

Each entry of CALLS is one use of sentencepiece's Python API, written once
and run on both modules with three real models (llama2: BPE with byte
fallback; ALBERT: unigram with user-defined symbols and no bos/eos;
test_model: sentencepiece's own unigram test model). A call that
sentencepiece answers must give the same answer in subtok; a call that it
refuses must raise an exception of the same type (subtok's own error
classes subclass the builtin ones). Protos are compared serialized, numpy
arrays by dtype and values. Sampled results are random in both libraries:
for them both must give a segmentation of the same text, of the same type.
The data must be present: a missing model fails these tests.
"""

from __future__ import annotations

import io
import pickle

import numpy
import pytest
import sentencepiece

import subtok
from conftest import DATA

MODELS = {"llama2": "llama2.model", "albert": "albert_base_v2_spiece.model",
          "unigram": "test_model.model"}
TEXT = "Hello  world, I'm ÀÉ ｂ 日本 𝄞!"
TEXTS = ["Hello world.", "", "  New York  ", "日本語のテキスト"]


def path(name: str) -> str:
    found = DATA / "models" / MODELS[name]
    assert found.is_file(), "shared data missing: %s" % found
    return str(found)


def ids(m, sp):
    return sp.encode(TEXT)


#: (name, call(module, processor, model path)); the processor is loaded
#: with default options.
CALLS = [
    # -- loading ---------------------------------------------------------
    ("load", lambda m, sp, p: m.SentencePieceProcessor().load(p)),
    ("load_kw", lambda m, sp, p: m.SentencePieceProcessor().load(model_file=p)),
    ("Load", lambda m, sp, p: m.SentencePieceProcessor().Load(model_file=p)),
    ("LoadFromFile", lambda m, sp, p: m.SentencePieceProcessor().LoadFromFile(p)),
    ("load_from_file", lambda m, sp, p: m.SentencePieceProcessor().load_from_file(p)),
    ("load_proto", lambda m, sp, p: m.SentencePieceProcessor().load(
        model_proto=sp.serialized_model_proto())),
    ("LoadFromSerializedProto", lambda m, sp, p: m.SentencePieceProcessor()
     .LoadFromSerializedProto(sp.serialized_model_proto())),
    ("load_nothing", lambda m, sp, p: m.SentencePieceProcessor().load()),
    ("load_both", lambda m, sp, p: m.SentencePieceProcessor().load(p, b"x")),
    ("load_missing", lambda m, sp, p: m.SentencePieceProcessor().load("/nonexistent.model")),
    ("load_garbage", lambda m, sp, p: m.SentencePieceProcessor()
     .load_from_serialized_proto(b"\xff\xff garbage")),
    ("from_file", lambda m, sp, p: m.SentencePieceProcessor.from_file(p).encode(TEXT)),
    ("from_file_opts", lambda m, sp, p: m.SentencePieceProcessor.from_file(
        p, out_type=str).encode(TEXT)),
    ("from_proto", lambda m, sp, p: m.SentencePieceProcessor.from_proto(
        sp.serialized_model_proto()).encode(TEXT, out_type=str)),
    ("from_file_twice", lambda m, sp, p: m.SentencePieceProcessor.from_file(p, model_file=p)),
    ("ctor_out_type", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, out_type=str).encode(TEXT)),
    ("ctor_return_type", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, return_type=str).encode(TEXT)),
    ("ctor_both_types", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, return_type=str, out_type=int)),
    ("ctor_bad_type", lambda m, sp, p: m.SentencePieceProcessor(model_file=p, out_type=float)),
    ("ctor_bos_eos", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, add_bos=True, add_eos=True).encode(TEXT)),
    ("ctor_reverse", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, reverse=True, out_type=str).encode(TEXT)),
    ("ctor_override", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, out_type=str).encode(TEXT, out_type=int)),
    ("ctor_emit_unk", lambda m, sp, p: m.SentencePieceProcessor(
        model_file=p, emit_unk_piece=True, out_type=str).encode(TEXT)),
    ("unloaded_encode", lambda m, sp, p: m.SentencePieceProcessor().encode(TEXT)),
    ("unloaded_encode_pieces", lambda m, sp, p: m.SentencePieceProcessor().EncodeAsPieces(TEXT)),
    # -- encode, every shape ------------------------------------------------
    ("encode", lambda m, sp, p: sp.encode(TEXT)),
    ("encode_str", lambda m, sp, p: sp.encode(TEXT, out_type=str)),
    ("encode_bytes", lambda m, sp, p: sp.encode(TEXT, out_type=bytes)),
    ("encode_return_type", lambda m, sp, p: sp.encode(TEXT, return_type=str)),
    ("encode_both_types", lambda m, sp, p: sp.encode(TEXT, return_type=str, out_type=int)),
    ("encode_bad_type", lambda m, sp, p: sp.encode(TEXT, out_type="foo")),
    ("encode_immutable", lambda m, sp, p: sp.encode(TEXT, out_type="immutable_proto")),
    ("encode_proto", lambda m, sp, p: sp.encode(TEXT, out_type="proto")),
    ("encode_proto_plain", lambda m, sp, p: sp.encode("Hello world", out_type="proto")),
    ("encode_serialized_proto", lambda m, sp, p: sp.encode(TEXT, out_type="serialized_proto")),
    ("encode_proto_bos", lambda m, sp, p: sp.encode(TEXT, out_type="proto", add_bos=True)),
    ("encode_numpy", lambda m, sp, p: sp.encode(TEXT, out_type="numpy")),
    ("encode_offsets", lambda m, sp, p: sp.encode(TEXT, out_type="offset_mapping")),
    ("encode_offsets_bytes_in", lambda m, sp, p: sp.encode(TEXT.encode(), out_type="offset_mapping")),
    ("encode_offsets_return_bytes", lambda m, sp, p: sp.encode(
        TEXT, out_type="offset_mapping", return_bytes=True)),
    ("encode_return_bytes_bad", lambda m, sp, p: sp.encode(TEXT, return_bytes=True)),
    ("encode_bytes_input", lambda m, sp, p: sp.encode(TEXT.encode(), out_type=str)),
    ("encode_batch", lambda m, sp, p: sp.encode(TEXTS)),
    ("encode_batch_str", lambda m, sp, p: sp.encode(TEXTS, out_type=str)),
    ("encode_batch_proto", lambda m, sp, p: sp.encode(TEXTS, out_type="proto")),
    ("encode_batch_numpy", lambda m, sp, p: sp.encode(TEXTS, out_type="numpy")),
    ("encode_batch_offsets", lambda m, sp, p: sp.encode(TEXTS, out_type="offset_mapping")),
    ("encode_empty", lambda m, sp, p: sp.encode("")),
    ("encode_int", lambda m, sp, p: sp.encode(5)),
    ("encode_none", lambda m, sp, p: sp.encode(None)),
    ("encode_bos", lambda m, sp, p: sp.encode(TEXT, add_bos=True)),
    ("encode_eos", lambda m, sp, p: sp.encode(TEXT, add_eos=True, out_type=str)),
    ("encode_reverse", lambda m, sp, p: sp.encode(TEXT, reverse=True)),
    ("encode_emit_unk", lambda m, sp, p: sp.encode(TEXT, emit_unk_piece=True, out_type=str)),
    ("encode_positional_bos", lambda m, sp, p: sp.encode(TEXT, True, True)),
    ("encode_threads_float", lambda m, sp, p: sp.encode(TEXT, num_threads=2.0)),
    ("encode_threads", lambda m, sp, p: sp.encode(TEXTS, num_threads=2)),
    ("encode_sampling_bad", lambda m, sp, p: sp.encode(TEXT, enable_sampling=True, nbest_size=1)),
    ("encode_sampling_no_alpha", lambda m, sp, p: sp.encode(
        TEXT, enable_sampling=True, alpha=None)),
    ("tokenize", lambda m, sp, p: sp.tokenize(TEXT)),
    ("Tokenize", lambda m, sp, p: sp.Tokenize(TEXT, out_type=str)),
    ("Encode", lambda m, sp, p: sp.Encode(TEXT)),
    ("EncodeAsPieces", lambda m, sp, p: sp.EncodeAsPieces(TEXT)),
    ("EncodeAsIds", lambda m, sp, p: sp.EncodeAsIds(TEXT)),
    ("encode_as_pieces", lambda m, sp, p: sp.encode_as_pieces(TEXT)),
    ("encode_as_ids", lambda m, sp, p: sp.encode_as_ids(TEXTS)),
    ("encode_as_numpy", lambda m, sp, p: sp.encode_as_numpy(TEXT)),
    ("EncodeAsProto", lambda m, sp, p: sp.EncodeAsProto(TEXT)),
    ("encode_as_proto", lambda m, sp, p: sp.encode_as_proto(TEXT)),
    ("encode_as_offset_mapping", lambda m, sp, p: sp.encode_as_offset_mapping(TEXT)),
    ("EncodeAsOffsetMapping", lambda m, sp, p: sp.EncodeAsOffsetMapping(TEXTS)),
    ("EncodeAsPieces_bos", lambda m, sp, p: sp.EncodeAsPieces(TEXT, add_bos=True)),
    # -- sampling (random: checked as segmentations of the text) -------------
    ("sample_encode_as_pieces", lambda m, sp, p: sp.sample_encode_as_pieces(TEXT, -1, 0.5)),
    ("SampleEncodeAsIds", lambda m, sp, p: sp.SampleEncodeAsIds(TEXT, nbest_size=-1, alpha=0.1)),
    ("sample_encode_as_numpy", lambda m, sp, p: sp.sample_encode_as_numpy(TEXT, -1, 0.5)),
    ("sample_encode_bad_size", lambda m, sp, p: sp.sample_encode_as_pieces(TEXT, 1, 0.5)),
    ("encode_sampling", lambda m, sp, p: sp.encode(TEXT, enable_sampling=True, alpha=0.1,
                                                   nbest_size=-1, out_type=str)),
    ("encode_sampling_batch", lambda m, sp, p: sp.encode(TEXTS, enable_sampling=True, alpha=0.1,
                                                         nbest_size=-1)),
    ("set_random_generator_seed", lambda m, sp, p: m.set_random_generator_seed(7)),
    ("SetRandomGeneratorSeed", lambda m, sp, p: m.SetRandomGeneratorSeed(7)),
    # -- n-best ----------------------------------------------------------------
    ("nbest_encode", lambda m, sp, p: sp.nbest_encode(TEXT, nbest_size=3)),
    ("nbest_encode_str", lambda m, sp, p: sp.nbest_encode(TEXT, nbest_size=3, out_type=str)),
    ("nbest_encode_zero", lambda m, sp, p: sp.nbest_encode(TEXT, nbest_size=0)),
    ("nbest_encode_as_pieces", lambda m, sp, p: sp.nbest_encode_as_pieces(TEXT, 4)),
    ("NBestEncodeAsIds", lambda m, sp, p: sp.NBestEncodeAsIds(TEXT, nbest_size=2)),
    ("nbest_encode_as_numpy", lambda m, sp, p: sp.nbest_encode_as_numpy(TEXT, 2)),
    ("nbest_encode_as_proto", lambda m, sp, p: sp.nbest_encode_as_proto("Hello world", 3)),
    ("nbest_encode_batch", lambda m, sp, p: sp.nbest_encode(TEXTS, nbest_size=2, out_type=str)),
    ("nbest_encode_bos", lambda m, sp, p: sp.nbest_encode(TEXT, add_bos=True, nbest_size=2)),
    ("nbest_too_big", lambda m, sp, p: sp.nbest_encode(TEXT, nbest_size=1000)),
    # -- parallel encode (one long text) ---------------------------------------
    ("parallel_encode", lambda m, sp, p: sp.parallel_encode(TEXT * 20, chunk_len=64)),
    ("ParallelEncodeAsPieces", lambda m, sp, p: sp.ParallelEncodeAsPieces(TEXT * 20,
                                                                        chunk_len=64)),
    ("parallel_encode_as_proto", lambda m, sp, p: sp.parallel_encode_as_proto(TEXT * 20,
                                                                            chunk_len=64)),
    ("parallel_encode_no_chunk", lambda m, sp, p: sp.parallel_encode(TEXT)),
    # -- decode ------------------------------------------------------------------
    ("decode_ids", lambda m, sp, p: sp.decode(sp.encode(TEXT))),
    ("decode_pieces", lambda m, sp, p: sp.decode(sp.encode(TEXT, out_type=str))),
    ("decode_bytes_pieces", lambda m, sp, p: sp.decode(sp.encode(TEXT, out_type=bytes))),
    ("decode_out_bytes", lambda m, sp, p: sp.decode(sp.encode(TEXT), out_type=bytes)),
    ("decode_int", lambda m, sp, p: sp.decode(7)),
    ("decode_one_piece", lambda m, sp, p: sp.decode("▁Hello")),
    ("decode_empty", lambda m, sp, p: sp.decode([])),
    ("decode_none", lambda m, sp, p: sp.decode(None)),
    ("decode_batch", lambda m, sp, p: sp.decode(sp.encode(TEXTS))),
    ("decode_batch_empty_first", lambda m, sp, p: sp.decode([[], ["▁a"]])),
    ("decode_proto", lambda m, sp, p: sp.decode(sp.encode(TEXT), out_type="proto")),
    ("decode_serialized_proto", lambda m, sp, p: sp.decode(sp.encode(TEXT),
                                                           out_type="serialized_proto")),
    ("decode_offsets", lambda m, sp, p: sp.decode(sp.encode(TEXT), out_type="offset_mapping")),
    ("decode_out_of_range", lambda m, sp, p: sp.decode([99999999])),
    ("decode_negative", lambda m, sp, p: sp.decode([-1])),
    ("decode_threads", lambda m, sp, p: sp.decode(sp.encode(TEXTS), num_threads=2)),
    ("decode_threads_float", lambda m, sp, p: sp.decode([1], num_threads=1.5)),
    ("decode_numpy_type", lambda m, sp, p: sp.decode([1], out_type="numpy")),
    ("detokenize", lambda m, sp, p: sp.detokenize(sp.encode(TEXT))),
    ("Decode", lambda m, sp, p: sp.Decode(sp.encode(TEXT))),
    ("DecodeIds", lambda m, sp, p: sp.DecodeIds(sp.encode(TEXT))),
    ("decode_ids_alias", lambda m, sp, p: sp.decode_ids(sp.encode(TEXTS))),
    ("DecodePieces", lambda m, sp, p: sp.DecodePieces(sp.encode(TEXT, out_type=str))),
    ("decode_pieces_alias", lambda m, sp, p: sp.decode_pieces(["▁New", "▁York"])),
    ("decode_ids_as_proto", lambda m, sp, p: sp.decode_ids_as_proto(sp.encode("Hello world"))),
    ("DecodePiecesAsProto", lambda m, sp, p: sp.DecodePiecesAsProto(["▁New", "▁York"])),
    ("decode_unloaded", lambda m, sp, p: m.SentencePieceProcessor().decode([1])),
    # -- vocabulary ----------------------------------------------------------------
    ("len", lambda m, sp, p: len(sp)),
    ("getitem", lambda m, sp, p: sp["▁the"]),
    ("getitem_missing", lambda m, sp, p: sp["no such piece"]),
    ("GetPieceSize", lambda m, sp, p: sp.GetPieceSize()),
    ("get_piece_size", lambda m, sp, p: sp.get_piece_size()),
    ("vocab_size", lambda m, sp, p: sp.vocab_size()),
    ("piece_size", lambda m, sp, p: sp.piece_size()),
    ("IdToPiece", lambda m, sp, p: sp.IdToPiece(5)),
    ("id_to_piece_list", lambda m, sp, p: sp.id_to_piece([0, 1, 2, 3])),
    ("id_to_piece_bad", lambda m, sp, p: sp.id_to_piece(len(sp))),
    ("id_to_piece_list_bad", lambda m, sp, p: sp.id_to_piece([1, len(sp)])),
    ("PieceToId", lambda m, sp, p: sp.PieceToId("▁the")),
    ("piece_to_id_list", lambda m, sp, p: sp.piece_to_id(["▁the", "zzzqqq", "<unk>"])),
    # ids and pieces as 0.2.3's binding takes them: any sequence, numpy
    # integers and arrays, pieces as bytes; anything else is a TypeError.
    ("id_to_piece_range", lambda m, sp, p: sp.id_to_piece(range(3))),
    ("id_to_piece_numpy", lambda m, sp, p: sp.id_to_piece(numpy.array([5, 6]))),
    ("id_to_piece_numpy_scalar", lambda m, sp, p: sp.IdToPiece(numpy.int64(5))),
    ("id_to_piece_str", lambda m, sp, p: sp.id_to_piece("5")),
    ("get_score_numpy", lambda m, sp, p: sp.get_score(numpy.array([5, 6]))),
    ("is_unknown_numpy", lambda m, sp, p: sp.is_unknown(numpy.array([0, 6]))),
    ("piece_to_id_bytes", lambda m, sp, p: sp.piece_to_id("▁the".encode())),
    ("piece_to_id_bytes_list", lambda m, sp, p: sp.PieceToId(["▁the".encode(), "a"])),
    ("piece_to_id_numpy", lambda m, sp, p: sp.piece_to_id(numpy.array(["▁the", "a"]))),
    ("piece_to_id_int", lambda m, sp, p: sp.piece_to_id(5)),
    ("piece_to_id_none", lambda m, sp, p: sp.piece_to_id(None)),
    ("GetScore", lambda m, sp, p: sp.GetScore(10)),
    ("get_score_list", lambda m, sp, p: sp.get_score([0, 10, 20])),
    ("get_score_bad", lambda m, sp, p: sp.get_score(-1)),
    ("IsUnknown", lambda m, sp, p: [sp.IsUnknown(i) for i in range(4)]),
    ("is_unknown_list", lambda m, sp, p: sp.is_unknown([0, 1, 2])),
    ("IsControl", lambda m, sp, p: sp.IsControl([0, 1, 2, 3, 4])),
    ("IsUnused", lambda m, sp, p: sp.IsUnused(3)),
    ("IsByte", lambda m, sp, p: sp.IsByte([3, 4, 300])),
    ("is_byte_bad", lambda m, sp, p: sp.is_byte(10 ** 8)),
    ("special_ids", lambda m, sp, p: (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id())),
    ("serialized_model_proto", lambda m, sp, p: len(sp.serialized_model_proto()) > 0),
    # -- normalization ----------------------------------------------------------------
    ("normalize", lambda m, sp, p: sp.normalize(TEXT)),
    ("Normalize", lambda m, sp, p: sp.Normalize("  ＡＢＣ  def ")),
    ("normalize_list", lambda m, sp, p: sp.normalize(TEXTS)),
    ("normalize_offsets", lambda m, sp, p: sp.normalize(TEXT, with_offsets=True)),
    ("normalize_offsets_bytes", lambda m, sp, p: sp.normalize(TEXT.encode(), with_offsets=True)),
    ("normalize_bytes", lambda m, sp, p: sp.normalize(TEXT.encode())),
    ("normalize_list_offsets", lambda m, sp, p: sp.normalize(TEXTS, with_offsets=True)),
    # -- pickling ------------------------------------------------------------------------
    ("pickle", lambda m, sp, p: pickle.loads(pickle.dumps(sp)).encode(TEXT)),
    ("pickle_options", lambda m, sp, p: pickle.loads(pickle.dumps(m.SentencePieceProcessor(
        model_file=p, out_type=str, add_eos=True))).encode(TEXT)),
    # -- module functions ---------------------------------------------------------------
    ("set_min_log_level", lambda m, sp, p: m.set_min_log_level(1)),
    ("SetMinLogLevel", lambda m, sp, p: m.SetMinLogLevel(0)),
    ("set_nbest_timeout", lambda m, sp, p: m.set_nbest_timeout(0)),
    ("thread_pool", lambda m, sp, p: m.ThreadPool(2).num_threads()),
    ("encode_thread_pool", lambda m, sp, p: sp.encode(TEXTS, num_threads=2,
                                                      thread_pool=m.ThreadPool(2))),
    # -- the normalizer ---------------------------------------------------------------
    ("normalizer_model", lambda m, sp, p: m.SentencePieceNormalizer(model_file=p).normalize(TEXT)),
    ("normalizer_model_offsets", lambda m, sp, p: m.SentencePieceNormalizer(
        model_file=p).normalize(TEXT, with_offsets=True)),
    ("normalizer_flags", lambda m, sp, p: m.SentencePieceNormalizer(
        model_file=p, add_dummy_prefix=False, escape_whitespaces=False,
        remove_extra_whitespaces=False).normalize(TEXTS)),
    ("normalizer_proto", lambda m, sp, p: m.SentencePieceNormalizer(
        model_proto=sp.serialized_model_proto()).Normalize(TEXT)),
    ("normalizer_rule_name", lambda m, sp, p: m.SentencePieceNormalizer(
        rule_name="nfkc_cf").normalize(TEXT)),
    ("normalizer_rule_bad", lambda m, sp, p: m.SentencePieceNormalizer(rule_name="nope")),
    ("normalizer_none", lambda m, sp, p: m.SentencePieceNormalizer()),
    ("normalizer_map", lambda m, sp, p: m.SentencePieceNormalizer(
        norm_map=[("a", "b"), ("ll", "L")]).normalize(TEXT)),
    ("normalizer_decompile", lambda m, sp, p: m.SentencePieceNormalizer(
        rule_name="nmt_nfkc").decompile()[:50]),
    ("normalizer_decompile_identity", lambda m, sp, p: m.SentencePieceNormalizer(
        rule_name="identity").Decompile()),
    ("normalizer_spec", lambda m, sp, p: m.SentencePieceNormalizer(
        model_file=p).serialized_normalizer_spec()),
    ("normalizer_model_proto", lambda m, sp, p: m.SentencePieceNormalizer(
        model_file=p, add_dummy_prefix=False).serialized_model_proto()),
    ("normalizer_pickle", lambda m, sp, p: pickle.loads(pickle.dumps(
        m.SentencePieceNormalizer(model_file=p))).normalize(TEXT)),
]

#: Calls whose results are random: compared as segmentations.
SAMPLED = {"sample_encode_as_pieces", "SampleEncodeAsIds", "sample_encode_as_numpy",
           "encode_sampling", "encode_sampling_batch", "encode_sampling_no_alpha"}


def outcome(call):
    """("ok", comparable value) or ("raised", exception type)."""
    try:
        return "ok", comparable(call())
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return "raised", exc


def comparable(value):
    """Protos as bytes, numpy arrays as (dtype, list), containers inside out."""
    if hasattr(value, "SerializeToString"):
        return ("proto", value.SerializeToString())
    if hasattr(value, "dtype") and hasattr(value, "tolist"):
        return ("numpy", str(value.dtype), value.tolist())
    if isinstance(value, (list, tuple)):
        return type(value)(comparable(v) for v in value)
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items()}
    return value


_processors: dict = {}


def loaded(module, name: str):
    key = (module.__name__, name)
    if key not in _processors:
        _processors[key] = module.SentencePieceProcessor(model_file=path(name))
    return _processors[key]


def check_sample(ours, theirs, sp_ours):
    """Both results are segmentations of TEXT (TEXTS) of the same shape."""
    assert type(ours) is type(theirs)
    if isinstance(ours, tuple) and ours[0] == "numpy":  # as comparable() puts an array
        assert ours[1] == theirs[1]
        ours = ours[2]
    one = ours
    many = one if one and isinstance(one[0], list) else [one]
    texts = TEXTS if len(many) > 1 else [TEXT]
    for got, text in zip(many, texts, strict=True):
        kind = str if got and isinstance(got[0], str) else int
        assert sp_ours.decode(got) == sp_ours.decode(sp_ours.encode(text, out_type=kind))


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("name, call", CALLS, ids=[name for name, _ in CALLS])
def test_call_matches_sentencepiece(name, call, model):
    p = path(model)
    theirs = outcome(lambda: call(sentencepiece, loaded(sentencepiece, model), p))
    ours = outcome(lambda: call(subtok, loaded(subtok, model), p))
    if theirs[0] == "raised":
        assert ours[0] == "raised", "sentencepiece raised %r, subtok returned %r" % (
            theirs[1], ours[1])
        assert isinstance(ours[1], type(theirs[1])), (theirs[1], ours[1])
        return
    assert ours[0] == "ok", "subtok raised %r" % (ours[1],)
    if name in SAMPLED:
        check_sample(ours[1], theirs[1], loaded(subtok, model))
    else:
        assert ours[1] == theirs[1]


def test_the_parity_list_is_long_enough():
    assert len(CALLS) >= 110


def test_every_public_name_of_sentencepiece_exists():
    """Every public name of 0.2.3's processor and module exists in subtok,
    with the same parameters."""
    import inspect
    for name in dir(sentencepiece.SentencePieceProcessor):
        if name.startswith("_"):
            continue
        theirs = getattr(sentencepiece.SentencePieceProcessor, name)
        ours = getattr(subtok.SentencePieceProcessor, name)
        want = list(inspect.signature(theirs).parameters)
        assert list(inspect.signature(ours).parameters) == want, name
    for name in ("SentencePieceTrainer", "SentencePieceNormalizer", "ThreadPool",
                 "set_random_generator_seed", "SetRandomGeneratorSeed", "set_min_log_level",
                 "SetMinLogLevel", "set_nbest_timeout", "set_data_dir", "SetDataDir"):
        assert hasattr(subtok, name), name
    for name in ("train", "Train"):
        assert hasattr(subtok.SentencePieceTrainer, name)
    for name in ("normalize", "Normalize", "decompile", "Decompile", "serialized_model_proto",
                 "serialized_normalizer_spec"):
        assert hasattr(subtok.SentencePieceNormalizer, name)


class _Writer:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data


def _trained_pieces(module, **kwargs) -> list[str]:
    writer = _Writer()
    assert module.SentencePieceTrainer.train(model_writer=writer, **kwargs) is None
    sp = module.SentencePieceProcessor(model_proto=writer.data)
    return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


@pytest.mark.parametrize("model_type", ["bpe", "char", "word"])
def test_trainer_keyword_form_with_model_writer(model_type):
    corpus = str(DATA / "corpora" / "botchan.txt")
    size = {"bpe": 300, "char": 60, "word": 300}[model_type]
    options = dict(input=corpus, vocab_size=size, model_type=model_type, minloglevel=2)
    ours = _trained_pieces(subtok, **options)
    theirs = _trained_pieces(sentencepiece, **options)
    assert ours == theirs


def test_trainer_sentence_iterator_and_string_form(tmp_path):
    corpus = DATA / "corpora" / "en.txt"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    ours = _trained_pieces(subtok, sentence_iterator=iter(lines), vocab_size=400,
                           model_type="bpe", minloglevel=2)
    theirs = _trained_pieces(sentencepiece, sentence_iterator=iter(lines), vocab_size=400,
                             model_type="bpe", minloglevel=2)
    assert ours == theirs
    flags = "--input=%s --model_prefix=%s --vocab_size=400 --model_type=bpe --minloglevel=2"
    sentencepiece.SentencePieceTrainer.train(flags % (corpus, tmp_path / "ref"))
    subtok.SentencePieceTrainer.train(flags % (corpus, tmp_path / "ours"))
    subtok.train(flags % (corpus, tmp_path / "lib"))
    ref = (tmp_path / "ref.vocab").read_bytes()
    assert (tmp_path / "ours.vocab").read_bytes() == ref
    assert (tmp_path / "lib.vocab").read_bytes() == ref


def test_trainer_errors_are_runtime_errors(tmp_path):
    corpus = str(DATA / "corpora" / "botchan.txt")
    for module in (sentencepiece, subtok):
        with pytest.raises(RuntimeError):
            module.SentencePieceTrainer.train(input=corpus, model_prefix=str(tmp_path / "m"),
                                              no_such_flag=1, minloglevel=2)
        with pytest.raises(RuntimeError):
            module.SentencePieceTrainer.train(input=str(tmp_path / "missing.txt"),
                                              model_prefix=str(tmp_path / "m"), minloglevel=2)
        with pytest.raises(RuntimeError):
            module.SentencePieceTrainer.train(input=corpus, model_prefix=str(tmp_path / "m"),
                                              vocab_size=100000, minloglevel=2)


def test_trainer_logstream(tmp_path):
    stream = io.StringIO()
    corpus = str(DATA / "corpora" / "botchan.txt")
    subtok.SentencePieceTrainer.train(input=corpus, model_prefix=str(tmp_path / "m"),
                                      vocab_size=200, model_type="bpe", logstream=stream,
                                      accept_language="en")
    assert "accept_language" in stream.getvalue()
