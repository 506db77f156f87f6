"""The unigram per-word cache never changes a result.

The fast path reuses each word's standalone segmentation only when float32
rounding at the sentence's accumulated score cannot flip it; these tests
hold it against a plain whole-sentence Viterbi (no cache) and against
sentencepiece on the lines where the accumulated score is largest: the
longest paragraphs of gutenberg_en and runs of tie-prone characters.
"""

from __future__ import annotations

import pytest

from conftest import CORPORA_DIR, MODELS_DIR, needs_data

pytestmark = needs_data

TIE_PRONE = ["-" * 5000, "\u2026" * 700, ("ab " * 3000).strip(), "=-" * 2000,
             ". " * 2500, ("x" * 9 + " ") * 500]


def _longest_lines(count: int) -> list[str]:
    lines = (CORPORA_DIR / "gutenberg_en.txt").read_text(encoding="utf-8").split("\n")
    return sorted(lines, key=len)[-count:]


@pytest.mark.parametrize("name", ["maxtext_c4_unigram32k", "test_model", "chinese_llama_human_unigram"])
def test_cached_encoding_equals_whole_sentence_viterbi_and_oracle(spm, name):
    import subtok
    path = str(MODELS_DIR / (name + ".model"))
    mine = subtok.SentencePieceProcessor(path)
    ref = spm.SentencePieceProcessor(model_file=path)
    model = mine.model
    for text in _longest_lines(12) + TIE_PRONE:
        normalized = mine.normalizer.normalize(text)
        cached = model.encode(normalized)
        path_nodes, _ = model.viterbi(normalized)
        plain = [(normalized[b:b + n], i) for b, n, i, _ in path_nodes]
        assert cached == plain
        assert mine.encode(text) == ref.encode(text)
        assert mine.encode_line(text, True) == " ".join(map(str, ref.encode(text)))
