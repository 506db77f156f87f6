"""Training plumbing on its own, no oracle: the meta-piece layout, word
splitting, piece validity, CSV options, the Mersenne twister and option
errors (subtok.training)."""

from __future__ import annotations

import pickle

import pytest

import subtok
from conftest import CORPORA_DIR, needs_corpora
from subtok.progress import Progress
from subtok.training.corpus import Corpus, build_meta, load_corpus
from subtok.training.reading import MT19937
from subtok.training.units import count_groups, mask_units, split_into_words, weighted_chars
from subtok.training.spec import TrainerOptions, split_csv
from subtok.training.validity import PieceValidator


def test_meta_piece_layout():
    options = TrainerOptions.from_kwargs(user_defined_symbols="<a>,<b>,<pad>", control_symbols="<c>",
                                         pad_id=5, bos_id=-1, byte_fallback=True, vocab_size=300)
    meta = build_meta(options)
    assert meta[:7] == [(0, "<unk>", 2), (1, "<c>", 3), (2, "</s>", 3), (3, "<a>", 4),
                        (4, "<b>", 4), (5, "<pad>", 4), (6, "<0x00>", 6)]
    assert meta[-1] == (261, "<0xFF>", 6)


@needs_corpora
def test_corpus_units_survive_pickling():
    """A corpus loaded in a child comes back pickled, its units packed in
    one string: the same units, in the same order; a unit holding the
    packing's separator (only possible outside mask_units) goes as it is."""
    options = TrainerOptions.from_kwargs(input=[str(CORPORA_DIR / "botchan.txt")], model_prefix="m",
                                         model_type="bpe", vocab_size=1000, minloglevel=2)
    corpus = load_corpus(options.load_files(), Progress(False, 2))
    assert len(corpus.units) > 1000
    back = pickle.loads(pickle.dumps(corpus, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == corpus and back.units == corpus.units
    odd = Corpus(sentences=[], alphabet={}, meta=[], units=[("a\x00b", 2), ("c", 1)])
    assert pickle.loads(pickle.dumps(odd)).units == [("a\x00b", 2), ("c", 1)]
    assert pickle.loads(pickle.dumps(Corpus(sentences=[], alphabet={}, meta=[]))).units is None


def test_masking_units_moves_the_keys_it_changes():
    """sentencepiece masks every character outside the alphabet (and TAB,
    NUL, space) as U+2585, which merges units that become equal, and
    sorts by count desc, unit asc. mask_units moves only the keys that
    change within the units' groups by count, made before or given (as
    the loading makes them while the characters are counted): the same
    as masking every unit and sorting all again. Here U+2585 is in the
    alphabet, so a unit holding it takes the counts of those masked
    into it."""
    s, m = "\u2581", "\u2585"
    units = {s + "ab": 3, s + "a\u00e9": 2, s + "a" + m: 1, s + "a\u00fc": 1, "\u00e9": 5,
             s + "b": 2, "x\x00": 1, "\tb": 2, s + "a b": 1, s + "ba": 3, "a": 1, "b": 1}
    alphabet = {s: 9, "a": 9, "b": 9, "x": 1, m: 1}
    chars = weighted_chars(units, units.values())
    for bad in ("\x00", " "):
        chars.pop(bad)
    masked: dict[str, int] = {}
    for unit, count in units.items():
        key = "".join(c if c in alphabet else m for c in unit)
        masked[key] = masked.get(key, 0) + count
    expected = sorted(masked.items(), key=lambda item: (-item[1], item[0]))
    assert expected[:3] == [(m, 5), (s + "a" + m, 4), (s + "ab", 3)]
    assert mask_units(units, alphabet, chars) == expected
    assert mask_units(units, alphabet, chars, count_groups(units)) == expected
    assert mask_units(units, dict(alphabet, **{"\u00e9": 5, "\u00fc": 1, "\t": 2}), chars) == \
        sorted(((u.replace("\x00", m).replace(" ", m).replace("\t", m), c) for u, c in units.items()),
               key=lambda item: (-item[1], item[0]))
    # Characters given short of the units' ones: the separator of the one
    # scan may then be in a unit, and each unit is searched alone instead.
    odd = {"a\x01b ": 2, "ab": 1}
    assert mask_units(odd, {"a": 1, "b": 1}, ["a", "b"]) == [("a\x01b" + m, 2), ("ab", 1)]


@needs_corpora
def test_a_corpus_loaded_without_fork_has_its_units_as_pairs(monkeypatch):
    """Without fork the load runs in this process: nothing is pickled, so
    the units must not be left packed as their pickle has them."""
    import os
    from subtok.training import corpus as corpus_module
    options = TrainerOptions.from_kwargs(input=[str(CORPORA_DIR / "botchan.txt")], model_prefix="m",
                                         model_type="bpe", vocab_size=1000, minloglevel=2)
    monkeypatch.setattr(corpus_module, "LOAD_IN_CHILD_MIN_BYTES", 0)
    forked = load_corpus(options, Progress(False, 2))
    monkeypatch.delattr(os, "fork")
    here = load_corpus(options, Progress(False, 2))
    assert isinstance(here.units, list) and here.units == forked.units and len(here.units) > 1000


def test_split_into_words():
    s = "\u2581"
    text = "%sab%s%s%scd%s" % (s, s, s, s, s)
    assert split_into_words(text) == [s + "ab", s, s, s + "cd", s]
    assert split_into_words(text, False, True) == [s + "ab", s * 3 + "cd", s]
    assert split_into_words("ab%scd%s%s" % (s, s, s), True) == ["ab" + s, "cd" + s, s]
    assert split_into_words("ab%s%scd" % (s, s), True, True) == ["ab" + s * 2, "cd"]
    assert split_into_words("") == []


def test_piece_validity():
    v = PieceValidator(TrainerOptions())
    assert [v.is_valid(p) for p in ["\u2581a", "a\u2581", "a1", "1,", "\u3042\u30a2\u6f22",
                                    "e\u0301", "\u2585", "a b", "x" * 17]] == \
        [True, False, False, True, True, True, False, False, False]
    v = PieceValidator(TrainerOptions(split_by_number=False, split_digits=True))
    assert v.is_valid("1") and not v.is_valid("a1")
    v = PieceValidator(TrainerOptions(split_by_number=False))
    assert v.is_valid("a1b")
    v = PieceValidator(TrainerOptions(split_by_whitespace=False))
    assert v.is_valid("a\u2581b") and not v.is_valid("ab\u2581")
    v = PieceValidator(TrainerOptions(allow_whitespace_only_pieces=True))
    assert v.is_valid("\u2581\u2581") and not v.is_valid("a\u2581\u2581")


def test_csv_and_mt19937():
    assert split_csv('a,"b,c",d""e,"f""g",') == ["a", "b,c", 'd""e', 'f"g']
    rng = MT19937(5489)  # std::mt19937's default seed
    assert rng.next32() == 3499211612


def test_integer_option_types_are_the_trainer_spec_fields():
    """The table that spares option parsing the protobuf import holds
    exactly TrainerSpec's integer fields with their types."""
    from google.protobuf.descriptor import FieldDescriptor as F

    from subtok._proto import sentencepiece_model_pb2 as pb2
    from subtok.training.spec import SPEC_INTEGERS
    names = {F.TYPE_INT32: "int32", F.TYPE_INT64: "int64", F.TYPE_UINT32: "uint32",
             F.TYPE_UINT64: "uint64"}
    assert SPEC_INTEGERS == {field.name: names[field.type]
                             for field in pb2.TrainerSpec.DESCRIPTOR.fields if field.type in names}
    with pytest.raises(subtok.TrainerError, match=r"--vocab_size=2147483648: not a 32-bit integer"):
        TrainerOptions.from_kwargs(vocab_size=1 << 31)


def test_option_errors():
    with pytest.raises(subtok.TrainerError, match="unknown option"):
        TrainerOptions.from_kwargs(vocab_sizes=5)
    with pytest.raises(subtok.TrainerError, match="character_coverage"):
        TrainerOptions.from_kwargs(character_coverage="0.5").validate()
    with pytest.raises(subtok.TrainerError, match="use_all_vocab=true is valid for WORD/CHAR"):
        TrainerOptions.from_kwargs(use_all_vocab="true", model_type="bpe").validate()


@pytest.mark.parametrize("model_type", ["wordpiece", "byte_bpe"])
def test_model_writer_is_refused_for_families_that_write_their_own_files(model_type, tmp_path):
    """``model_writer`` receives a .model; the tokenizer-file families
    write other files, so asking for one is an error, and nothing is
    written."""
    import io
    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c\n" * 10)
    sink = io.BytesIO()
    with pytest.raises(subtok.TrainerError, match="model_writer takes a .model"):
        subtok.train(str(corpus), model_writer=sink, model_type=model_type, vocab_size=300)
    assert sink.getvalue() == b"" and sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]
