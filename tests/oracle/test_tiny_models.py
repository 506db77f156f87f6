"""Hand-made tiny models of every type and flag, checked against the oracle.

Each model is built with subtok's own writer, loaded by both sentencepiece
and subtok, and must encode (ids and pieces) and decode identically.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import (CORPORA_DIR, MODELS_DIR, corpus_paths, model_id, model_paths, needs_data,
                      sample_lines)
from subtok import SentencePieceProcessor
from subtok.lines.fastpath.letters import LetterCuts
from subtok.lines.fastpath.lines import LineCache
from tiny_models import D, META, N, S, U, X, lines_of, make


UNIGRAM = META + [
    (S, -2.0, N), (S + "a", -3.0, N), ("a", -2.5, N), ("b", -2.5, N), ("ab", -4.0, N),
    ("abc", -4.5, N), ("c", -3.0, N), (S + "ab", -5.5, N), ("bc", -5.0, N), ("<x>", 0.0, D),
    ("aa", -5.0, N), ("aaa", -7.5, N), ("cc", -4.0, X), ("-", -1.0, N), ("--", -2.0, N),
    ("---", -3.0, N), ("\u65e5", -3.0, N), ("\u65e5\u672c", -5.0, N), ("\u672c", -3.0, N),
]
BPE = META + [
    (S + "a", 0.0, N), ("ab", -1.0, N), ("bc", -1.0, N), (S + "ab", -2.0, N), ("aa", -3.0, N),
    ("abc", -4.0, X), (S + "abc", -5.0, N), ("<x>", 0.0, D), ("cc", -6.0, N),
    (S, -7.0, N), ("a", -8.0, N), ("b", -9.0, N), ("c", -10.0, N), ("-", -11.0, N),
]
CHAR = META + [(S, -1.0, N), ("a", -2.0, N), ("b", -2.5, N), ("c", -3.0, N), ("<x>", 0.0, D)]
WORD = META + [(S + "a", -1.0, N), (S + "ab", -2.0, N), (S + "abc", -3.0, N), (S + "b", -2.0, N)]

MODELS = {
    "unigram": make(UNIGRAM),
    "unigram-bytes": make(UNIGRAM, byte_fallback=True),
    "unigram-keep-ws": make(UNIGRAM, add_dummy_prefix=False, remove_extra_whitespaces=False),
    "unigram-suffix": make([(p.replace(S, "") + S if p.startswith(S) and len(p) > 1 else p, s, t)
                            for p, s, t in UNIGRAM], suffix=True),
    "bpe": make(BPE, "bpe"),
    "bpe-bytes": make(BPE, "bpe", byte_fallback=True, remove_extra_whitespaces=False),
    "bpe-no-prefix": make(BPE, "bpe", add_dummy_prefix=False),
    "char": make(CHAR, "char"),
    "char-bytes": make(CHAR, "char", byte_fallback=True),
    "word": make(WORD, "word"),
    "word-suffix": make(WORD, "word", suffix=True),
}

ALPHABET = "abc -<x>\u65e5\u672czy\u2581\t"
SAMPLES = ["", " ", "a", "abc", "a b c", "aaaaa", "aaaa", "abcabc", "ab ab  abc", "<x>a<x>b",
           "a<x", "zz", "z a z", "---------", "-- -", "\u65e5\u672c\u65e5", "cc", "ccc",
           " \u2581 a\u2581", "a\tb", "  lead", "trail  ", "abc abcabc zabc"]
SAMPLES += ["".join(p) for p in itertools.product("ab c", repeat=4)]


@pytest.fixture(scope="module")
def pairs(spm):
    return {name: (spm.SentencePieceProcessor(model_proto=blob),
                   SentencePieceProcessor(model_proto=blob)) for name, blob in MODELS.items()}


def check(ref, mine, text):
    assert mine.encode(text, out_type=str) == ref.encode(text, out_type=str), text
    ids = ref.encode(text)
    assert mine.encode(text) == ids, text
    # The CLI's cached line paths (plain tokens, cached words), twice: cold, then warm.
    for _ in range(2):
        assert lines_of(mine).encode_line(text, True) == " ".join(map(str, ids)), text
        assert lines_of(mine).encode_line(text, False) == " ".join(ref.encode(text, out_type=str)), text
    assert mine.decode(ids) == ref.decode(ids), ids
    assert mine.decode(ref.encode(text, out_type=str)) == ref.decode(ref.encode(text, out_type=str))
    for flags in ({"add_bos": True}, {"add_eos": True, "reverse": True}, {"emit_unk_piece": True}):
        assert mine.encode(text, **flags) == ref.encode(text, **flags), (text, flags)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_samples_match_oracle(pairs, name):
    ref, mine = pairs[name]
    for text in SAMPLES:
        check(ref, mine, text)


@pytest.mark.parametrize("name", sorted(MODELS))
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=24))
def test_random_strings_match_oracle(pairs, name, text):
    ref, mine = pairs[name]
    check(ref, mine, text)


@settings(max_examples=80, deadline=None)
@given(ids=st.lists(st.integers(min_value=0, max_value=len(UNIGRAM) + 255), max_size=12))
def test_decode_arbitrary_ids_matches_oracle(pairs, ids):
    ref, mine = pairs["unigram-bytes"]
    assert mine.decode(ids) == ref.decode(ids)


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.sampled_from(["<unk>", "<s>", S, S + "a", "a", "zz", S + S + "q" + S,
                                        "<0xE3>", "<0x81>", "<0x82>", "<0xE2>", "<0x96>",
                                        "<0xFF>", "<x>", ""]), max_size=8))
def test_decode_arbitrary_pieces_matches_oracle(pairs, pieces):
    for name in ("unigram-bytes", "unigram-keep-ws", "bpe-bytes", "unigram"):
        ref, mine = pairs[name]
        assert mine.decode_pieces(pieces) == ref.decode_pieces(pieces), (name, pieces)


def test_bos_undefined_is_reported_like_sentencepiece():
    blob = make([("<unk>", 0.0, U), ("a", -1.0, N), ("<s>", 0.0, D)])
    sp = SentencePieceProcessor(model_proto=blob)
    with pytest.raises(ValueError, match="BOS token is not defined as a control symbol"):
        sp.encode("a", add_bos=True)


@needs_data
def test_offsets_match_sentencepiece_proto(spm):
    for name in ("hf_test_sentencepiece", "llama2", "maxtext_c4_unigram32k", "mistral_instruct_v3"):
        path = str(MODELS_DIR / (name + ".model"))
        ref = spm.SentencePieceProcessor(model_file=path)
        mine = SentencePieceProcessor(path)
        for text in ["  ab \u65e5\u672c\u8a9e \ufb01", "Hello \U0001f600 world  123", "\u3000x\u3000 y ",
                     "a\u0301b", "", "   "]:
            proto = ref.encode_as_proto(text)
            expected = [(p.piece, p.id, p.surface, p.begin, p.end) for p in proto.pieces]
            got = [(p.piece, p.id, p.surface, p.begin, p.end) for p in mine.encode_with_offsets(text)]
            assert got == expected, (name, text)


def test_float32_rounding_in_long_sentences_is_respected(spm):
    """A near-tie that float32 resolves one way alone and the other way at a
    large accumulated score: the per-word cache must not reuse the word."""
    model = make([("<unk>", 0.0, U), (S + "c", -10.0, N), (S, -1.0, N), ("a", -2.0, N),
                  ("b", -2.0, N), ("ab", -4.00001, N)])
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    alone = "ab"
    assert ref.encode(alone, out_type=str) == [S, "a", "b"]
    long_line = "c " * 1500 + "ab"
    expected = ref.encode(long_line, out_type=str)
    assert expected[-2:] == [S, "ab"]  # the tie collapsed: first (longest) wins
    mine.encode(alone)  # warm the cache with the standalone result
    assert mine.encode(long_line, out_type=str) == expected
    assert lines_of(mine).encode_line(long_line, False) == " ".join(expected)


def _spanned_cuts(model, word: str, parts: list[str]) -> list[str]:
    """The bigrams some piece holds at the places ``parts`` cut ``word``."""
    assert "".join(parts) == word
    spanned, at = [], 0
    for part in parts[:-1]:
        at += len(part)
        if word[at - 1:at + 1] in model.splitter.bigrams:
            spanned.append(word[at - 1:at + 1])
    return spanned


@needs_data
@pytest.mark.parametrize("path", model_paths(), ids=model_id)
def test_letter_parts_cut_only_where_no_piece_spans(path):
    """The plain path's C-level cut (letters / other runs) must only cut
    where :meth:`safe_parts` may: no piece holds the two characters."""
    model = SentencePieceProcessor(str(path)).model
    letters = LetterCuts(model.splitter)
    for corpus in corpus_paths():
        for line in sample_lines(corpus, 200):
            for token in line.decode("utf-8", "replace").split():
                parts = letters.letter_parts(token)
                if parts is not None:
                    assert _spanned_cuts(model, token, parts) == [], token


@needs_data
def test_token_texts_of_words_with_punctuation_after_them_join_their_letter_parts(spm):
    """A word with common punctuation after it ("said,") is cut into the
    word and the punctuation, and the text joined from those two parts is
    what sentencepiece gives for the token alone."""
    from subtok.lines.fastpath.plain_lines import REJECTED, WordEntries, unmarked
    path = str(MODELS_DIR / "maxtext_c4_unigram32k.model")
    processor = SentencePieceProcessor(path)
    ref = spm.SentencePieceProcessor(model_file=path)
    letters = LetterCuts(processor.pretokenizer)
    common = letters.clean
    for ids in (True, False):
        words = WordEntries(LineCache(processor), ids)
        seen = 0
        for line in sample_lines(CORPORA_DIR / "gutenberg_en.txt", 300):
            for token in line.decode("utf-8").split():
                body = token.rstrip(common)
                if not body.isalpha() or body == token or not processor.normalizer.is_plain(token):
                    continue
                parts = letters.letter_parts(token)
                assert parts == [body, token[len(body):]]
                text = words.token_text(token)
                if REJECTED in text:  # an unknown piece at a cut: the line goes elsewhere
                    continue
                expected = ref.encode(token, out_type=int if ids else str)
                assert unmarked(text) == " ".join(map(str, expected)), token
                seen += 1
        assert seen > 100


def test_letter_parts_leave_tokens_whose_neighbours_pieces_join_to_safe_parts():
    """A piece "a," puts "," next to a letter: "ba," must not be cut
    there, so letter_parts gives up and safe_parts finds the real cuts."""
    model = SentencePieceProcessor(model_proto=make(META + [(S, -1.0, N), ("a", -2.0, N),
                                                            ("b", -2.0, N), ("a,", -3.0, N),
                                                            (",", -2.0, N), ("-", -2.0, N)]))
    letters = LetterCuts(model.pretokenizer)
    assert letters.letter_parts("ba,") is None
    assert letters.letter_parts("b,") is None
    assert letters.letter_parts("b-a-") == ["b", "-", "a", "-"]
    assert model.pretokenizer.safe_parts(S + "ba,") == [S, "b", "a,"]  # no piece "▁b" or "ba"


def test_letter_parts_strip_common_punctuation_like_the_runs_split():
    """Words between common punctuation are cut by string methods, the
    rest by the regex split into runs: both give the same runs."""
    model = SentencePieceProcessor(model_proto=make(META + [(S, -1.0, N), ("a", -2.0, N),
                                                            ("b", -2.0, N), (",", -2.0, N)])).model
    letters = LetterCuts(model.splitter)
    runs = re.compile(r"([^\W\d_]+)").split  # runs of letters, as the fast path defines them
    for token in ["ab", "ab,", "\u201cab", "\u201cab!\u201d", "(ab).", "12ab", "a-b", "a,b,", ",,",
                  "éa."]:
        assert letters.letter_parts(token) == list(filter(None, runs(token))), token
    assert letters.letter_parts("\u201cab!\u201d") == ["\u201c", "ab", "!\u201d"]
    assert letters.clean  # the string-method path was taken


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_word_model_tokens_are_never_cut_at_punctuation(spm, byte_fallback):
    """A word model looks "▁a," up whole: the plain path's cut between
    letters and punctuation must not apply to it (with byte fallback the
    unknown word is its bytes, "▁" included)."""
    model = make(META + [(S + "a", -1.0, N), (S + "ab", -2.0, N), (",", -2.0, N), ("1", -2.0, N),
                         (S + "b", -2.0, N), (S + "a,", -3.0, N)], "word",
                 byte_fallback=byte_fallback)
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    lines = ["a, b", "ab1", "a,", "a,b", "b a, ab, ,a", "\uff41, b"]
    for ids in (True, False):
        expected = [" ".join(map(str, ref.encode(line, out_type=int if ids else str)))
                    for line in lines]
        assert lines_of(mine).encode_lines(lines, ids) == expected
        assert [lines_of(mine).encode_line(line, ids) for line in lines] == expected


@pytest.mark.parametrize("byte_fallback", [False, True])
@pytest.mark.parametrize("model_type, entries", [
    ("char", [(S, -1.0, N), ("a", -2.0, N), ("b", -2.5, X), ("c", -3.0, N)]),
    ("word", [(S + "a", -1.0, N), (S + "b", -2.0, X), (S + "c", -2.0, N)]),
    ("bpe", [(S + "a", 0.0, N), ("a", -1.0, N), ("b", -2.0, X), (S, -3.0, N), ("c", -4.0, N),
             ("ac", -5.0, X), ("acc", -6.0, N)]),
])
def test_unused_pieces_no_merge_made_are_unknown(spm, model_type, entries, byte_fallback):
    """sentencepiece 0.2.3's char, word and BPE models turn an UNUSED piece
    into the unknown piece (BPE first splits one a merge made back into
    its halves): with byte fallback, into its bytes."""
    model = make(META + entries, model_type, byte_fallback=byte_fallback)
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    for text in ("a b c", "ab", "b", "bb a", "acc ac", "c b"):
        expected = ref.encode(text)
        assert mine.encode(text) == expected, text
        assert mine.encode(text, out_type=str) == ref.encode(text, out_type=str), text
        assert lines_of(mine).encode_line(text, True) == " ".join(map(str, expected)), text


def test_bpe_stops_splitting_unused_pieces_back_past_depth_100(spm):
    """A chain of UNUSED merges ("▁a", "▁aa", ...): sentencepiece 0.2.3
    splits a symbol back at most 100 levels deep and keeps what is left
    whole, UNUSED id and all (from 102 characters on)."""
    entries = [(S, 0.0, N), ("a", -1.0, N)] + [(S + "a" * k, -1.0 - k, X) for k in range(1, 130)]
    model = make(META + entries, "bpe")
    ref = spm.SentencePieceProcessor(model_proto=model)
    mine = SentencePieceProcessor(model_proto=model)
    for length in (5, 100, 101, 102, 110, 129):
        assert mine.encode("a" * length) == ref.encode("a" * length), length
    assert mine.is_unused(ref.encode("a" * 110)[0])
