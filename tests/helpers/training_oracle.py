"""Training sentencepiece 0.2.3 as the oracle, and comparing with what
subtok trained: shared by the library tests (tests/oracle/test_train.py)
and the command-line tests (tests/cli/test_train_cli.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import subtok
from conftest import CORPORA_DIR


HASHIRE = dict(add_dummy_prefix=False, character_coverage=0.995, pad_id=3, pad_piece="[PAD]",
               user_defined_symbols="[PAD],[CLS],[SEP],[MASK],[BOS],[EOS]")


LLAMA = dict(byte_fallback=True, split_digits=True, normalization_rule_name="identity",
             allow_whitespace_only_pieces=True, remove_extra_whitespaces=False)


def oracle(spm, tmp_path: Path, input, **options):
    """Train sentencepiece (the ``spm`` fixture); return [(piece, type, score)] of its model."""
    from sentencepiece import sentencepiece_model_pb2 as spm_pb2  # after the fixture's check
    prefix = tmp_path / "oracle"
    spm.SentencePieceTrainer.train(input=input, model_prefix=str(prefix), num_threads=1,
                                   minloglevel=2, **options)
    proto = spm_pb2.ModelProto.FromString((tmp_path / "oracle.model").read_bytes())
    return [(p.piece, p.type, p.score) for p in proto.pieces], str(prefix) + ".model"


def oracle_error(spm, tmp_path: Path, input, **options) -> str:
    with pytest.raises(RuntimeError) as info:
        oracle(spm, tmp_path, input, **options)
    return str(info.value)


def ours(model) -> list:
    return list(zip(model.pieces, model.types, model.scores))


def held_out(count: int = 60) -> list[str]:
    """Lines of corpora none of the test models was trained on, plus odd ones."""
    lines = []
    for name in ("en.txt", "fr.txt", "zh.txt", "ko.txt", "ru.txt"):
        data = (CORPORA_DIR / name).read_text(encoding="utf-8").splitlines()
        lines.extend(data[-count // 5:])
    lines += ["", "  leading and  double  spaces ", "digits 1234567 and ｆｕｌｌｗｉｄｔｈ",
              "tabs\tand\rreturns", "[CLS]走れメロス[EOS]", "<s> </s> <unk> <pad>"]
    return lines


def assert_same_encoding(spm, model_file: str, lines: list[str]) -> None:
    reference = spm.SentencePieceProcessor(model_file=model_file)
    mine = subtok.SentencePieceProcessor(model_file)
    expected = [reference.encode(line, out_type=str) for line in lines]
    got = [mine.encode(line, out_type=str) for line in lines]
    assert got == expected
    expected_ids = [reference.encode(line) for line in lines]
    assert [mine.encode(line) for line in lines] == expected_ids


def write_tsv(path: Path, corpus: Path, limit: int = 3000) -> Path:
    counts = Counter(corpus.read_text(encoding="utf-8").split())
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    path.write_text("".join("%s\t%d\n" % kv for kv in rows), encoding="utf-8")
    return path
