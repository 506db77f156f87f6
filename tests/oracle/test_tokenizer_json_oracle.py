"""Every tokenizer.json of the shared data against tokenizers 0.23.3:
ids, tokens, offsets, type ids, word ids, special-token masks and decoded
text, for 300 lines of every corpus and for hostile lines, line for line
and in full."""

from __future__ import annotations

import pickle

import pytest

from hf_data import corpus_lines, file_id, hostile_lines, oracle, ours, tokenizer_files
from subtok.tokenizer import Tokenizer


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return corpus_lines()


def _compare(mine: Tokenizer, ref, text: str) -> None:
    got = mine.encode(text)
    want = ref.encode(text)
    assert got.ids == want.ids, text
    assert got.tokens == want.tokens, text
    assert got.offsets == want.offsets, text
    assert got.type_ids == want.type_ids, text
    assert got.word_ids == want.word_ids, text
    assert got.special_tokens_mask == want.special_tokens_mask, text
    assert got.attention_mask == want.attention_mask, text
    assert mine.decode(want.ids) == ref.decode(want.ids), text
    assert (mine.decode(want.ids, skip_special_tokens=False)
            == ref.decode(want.ids, skip_special_tokens=False)), text


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_corpus_lines_match_tokenizers(path, lines):
    mine, ref = ours(path), oracle(path)
    for text in lines:
        _compare(mine, ref, text)


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_hostile_lines_match_tokenizers(path):
    mine, ref = ours(path), oracle(path)
    for text in hostile_lines(path):
        _compare(mine, ref, text)
        fast = mine.encode_fast(text)
        want = ref.encode(text)
        assert (fast.ids, fast.tokens) == (want.ids, want.tokens), text


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_pair_and_no_special_tokens_match_tokenizers(path, lines):
    mine, ref = ours(path), oracle(path)
    for first, second in zip(lines[::97], lines[1::97]):
        for add in (True, False):
            got = mine.encode(first, second, add_special_tokens=add)
            want = ref.encode(first, second, add_special_tokens=add)
            assert (got.ids, got.tokens, got.offsets, got.type_ids, got.word_ids) == \
                   (want.ids, want.tokens, want.offsets, want.type_ids, want.word_ids)


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_vocabulary_matches_tokenizers(path):
    mine, ref = ours(path), oracle(path)
    assert mine.get_vocab() == ref.get_vocab()
    assert mine.get_vocab(with_added_tokens=False) == ref.get_vocab(with_added_tokens=False)
    assert mine.get_vocab_size() == ref.get_vocab_size()
    assert mine.get_vocab_size(False) == ref.get_vocab_size(False)
    top = max(ref.get_vocab().values()) + 2
    for token_id in list(range(0, top, 97)) + [top - 2, top - 1, top]:
        assert mine.id_to_token(token_id) == ref.id_to_token(token_id), token_id
    for token in list(ref.get_vocab())[::211] + ["not a token \u2581"]:
        assert mine.token_to_id(token) == ref.token_to_id(token), token


@pytest.mark.parametrize("path", tokenizer_files(), ids=file_id)
def test_batches_and_pickling_give_the_same(path, lines):
    mine = ours(path)
    sample = lines[::151]
    single = [mine.encode(t) for t in sample]
    assert [e.ids for e in mine.encode_batch(sample)] == [e.ids for e in single]
    assert [e.ids for e in mine.encode_batch_fast(sample)] == [e.ids for e in single]
    assert mine.decode_batch([e.ids for e in single]) == [mine.decode(e.ids) for e in single]
    copy = pickle.loads(pickle.dumps(mine))
    assert [copy.encode(t).offsets for t in sample] == [e.offsets for e in single]


def _regexes(value) -> list[str]:
    """Every {"Regex": pattern} inside a parsed tokenizer.json."""
    if isinstance(value, dict):
        found = [value["Regex"]] if isinstance(value.get("Regex"), str) and len(value) == 1 else []
        return found + [p for k, v in value.items() if k not in ("vocab", "merges") for p in _regexes(v)]
    if isinstance(value, list):
        return [p for item in value for p in _regexes(item)]
    return []


def test_every_regex_of_the_files_behaves_as_oniguruma(lines):
    """Each Oniguruma pattern in the shared files, run by the ``regex``
    package, cuts text where tokenizers cuts it."""
    import json

    import tokenizers

    from subtok.normalizers.aligned import AlignedString
    from subtok.patterns import compile_onig
    from subtok.pretokenizers.splitters import Split

    patterns = sorted({p for path in tokenizer_files()
                       for p in _regexes(json.loads(path.read_text(encoding="utf-8")))})
    assert patterns, "no Regex pattern found in the shared tokenizer.json files"
    texts = lines[::7] + [line for path in tokenizer_files()[:1] for line in hostile_lines(path)]
    for pattern in patterns:
        mine = Split(compile_onig(pattern), "Isolated")
        ref = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
        for text in texts:
            got = [(p.text, (p.start, p.end)) for p in mine.split_aligned(AlignedString.original(text))]
            assert got == ref.pre_tokenize_str(text), (pattern, text)
