"""The charsmap reader and the normalizer, against sentencepiece itself."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import HOSTILE_LINES, corpus_paths, model_id, model_paths, needs_data, sample_lines
from subtok import NormalizerError, SentencePieceProcessor
from subtok.formats.sentencepiece import load_model
from subtok.normalizers import Normalizer, decode_charsmap
from subtok.normalizers.charsmap_builder import compile_charsmap


@needs_data
@pytest.mark.parametrize("name", ["test_model", "maxtext_c4_unigram32k", "es_tweets_word_nfkc_cf"])
def test_charsmap_decodes_to_sentencepiece_decompile(spm, name):
    from conftest import MODELS_DIR
    path = MODELS_DIR / (name + ".model")
    ours = decode_charsmap(load_model(path).normalizer.precompiled_charsmap)
    theirs = dict(spm.SentencePieceNormalizer(model_file=str(path)).Decompile())
    assert ours == theirs


@needs_data
@pytest.mark.parametrize("model", model_paths(), ids=model_id)
def test_normalize_with_offsets_matches_sentencepiece(spm, model):
    sp = spm.SentencePieceProcessor(model_file=str(model))
    mine = SentencePieceProcessor(model)
    texts = [line.decode("utf-8") for corpus in corpus_paths() for line in sample_lines(corpus, 15)]
    texts += [line.decode("utf-8") for line in HOSTILE_LINES if _valid(line)]
    for text in texts:
        expected, offsets = sp.normalize(text, with_offsets=True)
        assert mine.normalize(text) == expected, text
        got, got_offsets = mine.normalizer.normalize_with_offsets(text)
        assert (got, got_offsets) == (expected, list(offsets)), text


def _valid(line: bytes) -> bool:
    try:
        line.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


RULES = {"\uff21": "A", "\uff22": "B", "\t": " ", "\u3000": " ", "\ufb01": "fi", "x\u0301": "X",
         "\u00a8": " \u0308", "\u0007": "", "\u2581": " ", "\U0001d400": "A", "\u2025": " .  . "}


def _handmade(spm, flags):
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    for piece, kind in (("<unk>", 2), ("a", 1), ("<u>", 4)):
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, -1.0, kind
    proto.normalizer_spec.precompiled_charsmap = compile_charsmap(RULES)
    for key in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
        setattr(proto.normalizer_spec, key, flags.get(key, True))
    proto.trainer_spec.treat_whitespace_as_suffix = flags.get("treat_whitespace_as_suffix", False)
    sp = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    return sp, Normalizer(RULES, user_defined_symbols=["<u>"], **flags)


@pytest.mark.parametrize("flags", [
    dict(), dict(add_dummy_prefix=False), dict(remove_extra_whitespaces=False),
    dict(add_dummy_prefix=False, remove_extra_whitespaces=False), dict(escape_whitespaces=False),
    dict(treat_whitespace_as_suffix=True),
])
def test_flags_match_sentencepiece_on_a_handmade_charsmap(spm, flags):
    sp, ours = _handmade(spm, flags)
    for text in ["", " ", "  a  ", "\uff21\uff22\t\u3000c", "\ufb01x\u0301y", "a\u00a8b", " \u00a8",
                 "\u0007\u0007", "a\u0007 b", "<u>\uff21<u>", "  <u> ", "\u2581 a\u2581", "x\u0301\u0301"]:
        expected, offsets = sp.normalize(text, with_offsets=True)
        assert ours.normalize(text) == expected, (text, flags)
        assert ours.normalize_with_offsets(text) == (expected, list(offsets)), (text, flags)


@pytest.mark.parametrize("flags", [dict(), dict(remove_extra_whitespaces=False),
                                   dict(treat_whitespace_as_suffix=True)])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="ab x\u0301\uff21\t\u3000\u00a8\u0007\u2581\U0001d400\U0001f600\u2025<u>",
                    max_size=30))
def test_whole_runs_normalize_like_sentencepiece(spm, flags, text):
    """normalize() takes rule-free stretches whole (collapsing their spaces
    at once); with offsets every character is a step. Both must agree
    with sentencepiece, astral characters (rule or not) included."""
    sp, ours = _handmade(spm, flags)
    expected, offsets = sp.normalize(text, with_offsets=True)
    assert ours.normalize(text) == expected
    assert ours.normalize_with_offsets(text) == (expected, list(offsets))


@pytest.mark.parametrize("blob, message", [
    (b"\x01\x02", "Blob for normalization rule is broken."),
    (b"\x00\x10\x00\x00" + b"\x00" * 8, "Trie data size exceeds the input blob size."),
    (b"\x04\x00\x00\x00" + b"\x00" * 8, "Trie data size is not divisible by 1024."),
    (b"\x00\x04\x00\x00" + b"\x00" * 1024 + b"ab", "normalized block must be null terminated."),
    (b"\x00\x04\x00\x00" + b"\x00" * 1024 + b"a\x00", "precompiled_charsmap is invalid."),
])
def test_broken_charsmaps_are_reported_like_sentencepiece(blob, message):
    with pytest.raises(NormalizerError, match=message.replace(".", r"\.")):
        decode_charsmap(blob)


def _models_with_charsmap():
    return [m for m in model_paths() if load_model(m).normalizer.precompiled_charsmap]


@needs_data
@pytest.mark.parametrize("model", _models_with_charsmap(), ids=model_id)
def test_lazy_charsmap_equals_the_decoded_rules(model):
    """Lookups on the double array agree with the fully decoded dict."""
    import random
    from subtok.normalizers.charsmap import CharsMap, DictRules
    blob = load_model(model).normalizer.precompiled_charsmap
    lazy, full = CharsMap(blob), DictRules(decode_charsmap(blob))
    assert lazy.trigger_chars == full.trigger_chars
    assert lazy.inner_chars == full.inner_chars
    assert lazy.lone_space_chars() == full.lone_space_chars()
    keys = sorted(full.rules)
    for key in random.Random(0).sample(keys, 2000):
        for text in (key, key + "\u0301x", "a" + key):
            for pos in range(min(2, len(text))):
                assert lazy.longest_match(text, pos) == full.longest_match(text, pos), text


ALIAS_TEXTS = ["a\u00a0b", "\u00a0I said", "x\u00a0\u0301y", "\t\ttab\t", "a\u2581\u00a0b",
               "\u3000\u2003z\u200b", "\u00a8\u00a0\u2025\u00a0", "\ufeffa\ufffdb", "r\r\n"]


@needs_data
@pytest.mark.parametrize("model", model_paths(), ids=model_id)
def test_resolving_space_aliases_keeps_the_normalized_text(spm, model):
    """A space alias made a space beforehand changes nothing sentencepiece
    makes of the text (but lets the CLI take its fast path)."""
    sp = spm.SentencePieceProcessor(model_file=str(model))
    normalizer = SentencePieceProcessor(model).normalizer
    texts = ALIAS_TEXTS + [line.decode("utf-8") for line in HOSTILE_LINES if _valid(line)]
    texts += [line.decode("utf-8") for corpus in corpus_paths() for line in sample_lines(corpus, 15)]
    for text in texts:
        resolved = normalizer.resolve_spaces(text)
        assert normalizer.normalize(resolved) == sp.normalize(text), text
        assert sp.encode(resolved) == sp.encode(text), text


def test_space_aliases_are_only_characters_in_no_other_rule():
    from subtok.normalizers.charsmap import DictRules
    rules = {"\t": " ", "\u3000": " ", "\u00a0": " ", "\u00a0x": "y", "\u2009": " ",
             "z\u2009": "q", "\u2002": "  ", "\u2003": " ", "\u2581": " "}
    assert DictRules(rules).lone_space_chars() == {"\t", "\u3000", "\u2003", "\u2581"}
    normalizer = Normalizer(DictRules(rules), user_defined_symbols=["<\u2003>"])
    assert normalizer.space_aliases() == ("\t", "\u2581", "\u3000")
    assert normalizer.resolve_spaces("a\tb\u3000c\u2003d\ne") == "a b c\u2003d\ne"
    # A key that starts with or holds a space could match where an alias stood.
    assert DictRules(dict(rules, **{" \u0301": "x"})).lone_space_chars() == set()
    assert DictRules(dict(rules, **{"a b": "x"})).lone_space_chars() == set()
    assert Normalizer(DictRules(rules), user_defined_symbols=["a b"]).space_aliases() == ()
