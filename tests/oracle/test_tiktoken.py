"""The tiktoken engine against tiktoken 0.14 itself, on the real cl100k_base
rank file: encode_ordinary, encode with special tokens, decoding, the
reference merge, the word shortcut, and bad rank files (the command line:
tests/cli/test_tiktoken_cli.py)."""

from __future__ import annotations

import pickle
import random
import re

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from _interop import (CL100K_FILE, CL100K_PATTERN, CL100K_SPECIALS, corpus_sample,
                      read_ranks_plainly, require, tiktoken_cl100k, tiktoken_sample)
from conftest import run_subtok
from subtok.errors import DisallowedSpecialToken, EncodeError, ModelFileError, UnknownToken
from subtok.formats.tiktoken import (KNOWN_HASHES, load_tiktoken, parse_ranks,
                                     ranks_text)
from subtok.models.bytelevel import Encoding
from subtok.models.bytelevel.encoding import valid_text
from subtok.models.bytelevel.model import merge_long, merge_parts, merge_short
from subtok.models.bytelevel.reference import plain_encode, plain_merge
from subtok.pretokenizers.tiktoken_patterns import OTHER_WHITESPACE, PATTERNS, RegexSplit


@pytest.fixture(scope="module")
def oracle():
    return tiktoken_cl100k()


@pytest.fixture(scope="module")
def enc() -> Encoding:
    return load_tiktoken(require(CL100K_FILE))


@pytest.fixture(scope="module")
def sample() -> list[str]:
    return tiktoken_sample()


# -- the pieces ----------------------------------------------------------------

def test_the_file_is_recognised_and_matches_tiktoken_s_definition(enc, oracle):
    assert enc.name == "cl100k_base"
    assert enc.pat_str == CL100K_PATTERN
    assert enc.special_tokens == CL100K_SPECIALS
    assert enc.mergeable_ranks == read_ranks_plainly(CL100K_FILE)
    assert (enc.n_vocab, enc.eot_token, enc.special_tokens_set, enc.max_token_value) == \
        (oracle.n_vocab, oracle.eot_token, oracle.special_tokens_set, oracle.max_token_value)
    assert repr(enc) == repr(oracle)


def test_other_whitespace_is_regex_s_whitespace_without_space_and_newline():
    spelled = re.compile("[%s]" % OTHER_WHITESPACE)
    chars = map(chr, range(0x110000))
    assert {c for c in chars if regex.match(r"\s", c)} - {" ", "\n"} == \
        {c for c in map(chr, range(0x110000)) if spelled.match(c)}


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=300))
def test_fast_merges_equal_the_plain_one_on_cl100k(enc, data):
    ranks = enc.mergeable_ranks
    plain = plain_merge(ranks, data)
    assert merge_short(ranks, data) == plain
    assert merge_long(ranks, data) == plain
    assert merge_parts(ranks, data) == plain


def test_fast_merges_equal_the_plain_one_on_random_rank_tables():
    rng = random.Random(7)
    for _ in range(200):
        alphabet = b"abc"
        ranks = {bytes([b]): i for i, b in enumerate(alphabet)}
        while len(ranks) < rng.randint(4, 40):  # random merges of existing tokens
            a, b = rng.choice(list(ranks)), rng.choice(list(ranks))
            ranks.setdefault(a + b, len(ranks))
        for _ in range(20):
            data = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 150)))
            plain = plain_merge(ranks, data)
            assert merge_short(ranks, data) == plain
            assert merge_long(ranks, data) == plain


def test_encoding_equals_the_plain_reference_on_real_text(enc, sample):
    split = regex.compile(CL100K_PATTERN).findall
    for text in sample[:2000]:
        text = valid_text(text)
        if len(text) < 5000:
            assert enc.encode_ordinary(text) == plain_encode(enc.mergeable_ranks, split(text))


@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="ab1 .'\u00e9\u0301\n\t\u00a0\u3000sT-", max_size=40))
def test_the_word_shortcut_gives_the_pattern_s_chunks(name, text):
    split = RegexSplit(PATTERNS[name])
    words = split.space_words(text)
    if words is not None:
        chunks = split.split(words[0]) + [c for w in words[1:] for c in split.split(" " + w)]
        assert chunks == split.split(text)


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_the_word_shortcut_on_real_lines(name):
    split = RegexSplit(PATTERNS[name])
    used = 0
    for text in corpus_sample(150, seed=3):
        words = split.space_words(text)
        if words is not None:
            used += 1
            chunks = split.split(words[0]) + [c for w in words[1:] for c in split.split(" " + w)]
            assert chunks == split.split(text)
    assert used > 1000


# -- against tiktoken ------------------------------------------------------------

def test_encode_ordinary_equals_tiktoken(enc, oracle, sample):
    mismatches = [t[:80] for t in sample if enc.encode_ordinary(t) != oracle.encode_ordinary(t)]
    assert mismatches == []


def test_encode_with_special_tokens_allowed_equals_tiktoken(enc, oracle, sample):
    texts = sample + ["%s<|endoftext|>%s" % (a, b) for a, b in zip(sample[:300], sample[300:600])]
    for allowed in ("all", {"<|endoftext|>"}, {"<|fim_prefix|>", "<|endofprompt|>"}):
        got = [enc.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
        assert got == [oracle.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
    assert enc.encode("a<|endoftext|>b", allowed_special="all") == [64, 100257, 65]


def test_disallowed_special_text_raises_tiktoken_s_error(enc, oracle):
    for text, kwargs in [("x <|endoftext|>", {}), ("<|fim_middle|>", {"allowed_special": {"<|endoftext|>"}}),
                         ("<|endofprompt|>", {"disallowed_special": {"<|endofprompt|>"}})]:
        with pytest.raises(ValueError) as expected:
            oracle.encode(text, **kwargs)
        with pytest.raises(DisallowedSpecialToken) as got:
            enc.encode(text, **kwargs)
        assert str(got.value) == str(expected.value)
    assert enc.encode("<|endoftext|>", disallowed_special=()) == oracle.encode_ordinary("<|endoftext|>")


def test_batch_equals_map(enc, oracle, sample):
    texts = sample[:500]
    assert enc.encode_batch(texts, allowed_special="all") == \
        [enc.encode(t, allowed_special="all") for t in texts]
    assert enc.encode_ordinary_batch(texts) == oracle.encode_ordinary_batch(texts)


def test_decoding_round_trips_and_equals_tiktoken(enc, oracle, sample):
    rng = random.Random(1)
    for text in sample:
        tokens = enc.encode(text, allowed_special="all", disallowed_special=())
        assert enc.decode(tokens) == valid_text(text)
        assert enc.decode_bytes(tokens) == oracle.decode_bytes(tokens)
    ids = list(enc.mergeable_ranks.values()) + list(CL100K_SPECIALS.values())
    for _ in range(300):
        tokens = rng.sample(ids, rng.randint(0, 20))
        assert enc.decode_bytes(tokens) == oracle.decode_bytes(tokens)
        assert enc.decode(tokens) == oracle.decode(tokens)
        assert enc.decode_tokens_bytes(tokens) == oracle.decode_tokens_bytes(tokens)
    for token in (0, 100255, 100257, 100276):
        assert enc.decode_single_token_bytes(token) == oracle.decode_single_token_bytes(token)
        assert enc.encode_single_token(enc.decode_single_token_bytes(token)) == token


def test_unknown_tokens_are_key_errors_as_in_tiktoken(enc, oracle):
    for bad in (100256, 10**6):
        with pytest.raises(KeyError) as expected:
            oracle.decode_bytes([1, bad])
        with pytest.raises(UnknownToken) as got:
            enc.decode_bytes([1, bad])
        assert isinstance(got.value, KeyError)
        assert str(got.value) == expected.value.args[0]
    with pytest.raises(KeyError):
        enc.encode_single_token("not one token at all")


def test_pickling_keeps_the_definition(enc, sample):
    again = pickle.loads(pickle.dumps(enc))
    assert (again.name, again.pat_str, again.special_tokens) == (enc.name, enc.pat_str, enc.special_tokens)
    assert [again.encode_ordinary(t) for t in sample[:300]] == [enc.encode_ordinary(t) for t in sample[:300]]


def test_from_file_and_explicit_settings(enc):
    other = Encoding.from_file(CL100K_FILE, pattern="r50k", special_tokens="none")
    assert other.name == "cl100k_base" and other.special_tokens == {}
    assert other.pat_str == PATTERNS["r50k"]
    assert other.encode_ordinary("hello  world") != [] and other.n_vocab == 100256



# -- bad rank files ----------------------------------------------------------------

GOOD = b"YQ== 0\nYg== 1\nYWI= 2\n"


@pytest.mark.parametrize("content, message", [
    (b"", "the rank file is empty"),
    (GOOD + b"YWJi\n", ":4: not a rank file line"),
    (GOOD + b"YWJj 3 x\n", ":4: not a rank file line"),
    (b"YQ== 0\n\nYQ== 1\n", ":3: token b'a' is listed twice"),
    (b"YQ== 0\nYg== 0\n", ":2: rank 0 is given twice"),
    (b"YQ== 0\nYg 1\n", ":2: 'Yg' is not base64"),
    (b"YQ== 0\nYQ==== 1\n", ":2: 'YQ====' is not base64"),
    (b"YQ== 0\nY!Q== 1\n", ":2: 'Y!Q==' is not base64"),
    (b"YQ== 0\nYg== +1\n", ":2: rank '+1' is not a decimal number"),
    (b"YQ== 0\nYg== 4294967296\n", ":2: rank 4294967296 is over 4294967295"),
    (b"YQ== 0\rYg== 1\rYQ== 2\r", ":3: token b'a' is listed twice"),
])
def test_bad_rank_files_are_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(ModelFileError) as error:
        parse_ranks(content, str(path))
    assert message in str(error.value) and str(path) in str(error.value)
    out = tmp_path / "out.txt"
    proc = run_subtok("encode", "--model", str(path), "--pattern", "gpt2", "--output", str(out),
                      check=False, input=b"ab\n")
    if content:  # (an empty file is not recognised as a rank file at all)
        assert message in proc.stderr.decode()
    assert proc.returncode != 0 and proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr
    assert not out.exists()


def test_a_special_token_may_not_take_a_rank_s_id(tmp_path):
    path = tmp_path / "r.tiktoken"
    path.write_bytes(GOOD)
    with pytest.raises(ModelFileError, match="has id 1"):
        load_tiktoken(path, pattern="gpt2", special_tokens={"<|x|>": 1})


def test_ranks_written_back_are_byte_identical():
    data = require(CL100K_FILE).read_bytes()
    assert ranks_text(parse_ranks(data)) == data
    assert KNOWN_HASHES["223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"] == "cl100k_base"


def test_a_byte_without_a_rank_is_an_encode_error():
    ranks = {b"a": 0, b"b": 1, b"ab": 2}
    small = Encoding("small", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={})
    assert small.encode_ordinary("abab") == [2, 2]
    with pytest.raises(EncodeError, match="has no rank"):
        small.encode_ordinary("abc")
