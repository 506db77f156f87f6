"""Models and corpus lines shared by the sampling tests of the library
(tests/oracle) and of the command line (tests/cli): loaded once per run."""

from __future__ import annotations

import functools
import random

from conftest import CORPORA_DIR, MODELS_DIR
from subtok import SentencePieceProcessor


UNIGRAM_MODELS = ["test_model", "hf_test_sentencepiece", "maxtext_c4_unigram32k", "test_ja_model",
                  "albert_base_v2_spiece", "opus_mt_en_mg_source",
                  "chinese_llama_human_unigram", "fastai_frwiki_unigram30k"]


BPE_MODELS = ["hf_test_sentencepiece_bpe", "llama2", "atmt_en_fr_bpe16k", "hashire_merosu_bpe1500"]


CORPUS_NAMES = ["en", "botchan", "ja", "de", "zh", "ru"]


@functools.lru_cache(maxsize=None)
def processor(name: str) -> SentencePieceProcessor:
    return SentencePieceProcessor(str(MODELS_DIR / (name + ".model")))


@functools.lru_cache(maxsize=None)
def oracle(spm, name: str):
    """sentencepiece 0.2.3 (the ``spm`` fixture) with one of the shared models."""
    return spm.SentencePieceProcessor(model_file=str(MODELS_DIR / (name + ".model")))


@functools.lru_cache(maxsize=None)
def corpus_lines(name: str, count: int, max_chars: int = 300) -> tuple[str, ...]:
    """``count`` non-empty lines of a corpus (seeded choice), at most ``max_chars`` long."""
    text = (CORPORA_DIR / (name + ".txt")).read_text(encoding="utf-8", errors="surrogateescape")
    lines = [line for line in text.split("\n") if line.strip() and len(line) <= max_chars]
    return tuple(random.Random(name).sample(lines, min(count, len(lines))))


def mixed_lines(per_corpus: int) -> list[str]:
    return [line for name in CORPUS_NAMES for line in corpus_lines(name, per_corpus)]
