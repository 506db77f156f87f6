"""The command-line encoder's piece cache (lines cut before each space,
each piece's output remembered: ``_SpaceUnits`` in
subtok/lines/tokenizer_lines.py) against tokenizers 0.23.3, on lines made
to find where cutting at spaces would go wrong: a word first in one line
and later in another, added tokens glued to words and beside spaces
(Llama puts its mark before each text between added tokens), pieces that
end in characters no token joins to a mark, or in the mark itself, final
sigmas, spaces doubled or at the ends, and lines repeated once every
piece is known."""

from __future__ import annotations

import pytest

from conftest import run_subtok
from hf_data import INTEROP_DIR, oracle

FILES = ["gpt2", "bert_base_uncased", "llama2_chat", "whisper_large_v3"]

LINES = [
    "Hello world", "world Hello", "the cat sat on the mat.", "mat. the cat",
    "a <s>b", "a </s>", "<s> a", "a<s> b", "x <unk> y", "<|endoftext|> y", "y <|endoftext|>",
    "a [CLS] b", "[SEP]x y", "a <|startoftranscript|> b", "<|en|>x y<|0.00|>",
    "a\u2581 b", "\u2581a b", "a \u2581b", "\u2581 \u2581", "a\u2581\u2581 b c",
    "\U0001f600 x", "x \U0001f600 y", "\u8a9e \u8a9e\u8a9e x", "\u0d9e\u0d9e y", "\ua000 b",
    "\u03a3\u0391\u03a3 \u03a3 b\u03a3 \u03c3\u03a3.", "caf\u00e9 CAF\u00c9 e\u0301 x",
    "double  space", "triple   space", "a  ", " leading", "trailing ", "", "a", "a b", "b a", "don't can't 'tis",
    "1234 56,7 8.9 -- ... \u2014 x", "word, word; word: (word) [word] {word}",
]


@pytest.mark.parametrize("name", FILES)
def test_space_pieces_match_tokenizers(name, tmp_path):
    path = INTEROP_DIR / ("%s.tokenizer.json" % name)
    ref = oracle(path)
    lines = LINES + LINES[::-1] + LINES  # every piece known the second time
    source = tmp_path / "in.txt"
    source.write_bytes("\n".join(lines).encode("utf-8") + b"\n")
    for fmt, shown in (("id", lambda e: " ".join(map(str, e.ids))), ("piece", lambda e: " ".join(e.tokens))):
        out = run_subtok("encode", "--model", str(path), "--output_format", fmt, str(source)).stdout
        assert out.decode("utf-8").split("\n")[:-1] == [shown(ref.encode(t)) for t in lines], fmt
    bare = run_subtok("encode", "--model", str(path), "--output_format=id", "--no-add_special_tokens",
                      "--num_threads", "2", str(source)).stdout
    assert bare.decode("utf-8").split("\n")[:-1] == [
        " ".join(map(str, ref.encode(t, add_special_tokens=False).ids)) for t in lines]
