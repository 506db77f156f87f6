"""A new family is new components plus an assembly: a toy word-level
tokenizer built from the stage interfaces alone, touching nothing of the
SentencePiece path."""

from __future__ import annotations

from subtok.decoders.base import Decoder
from subtok.models.base import TokenModel
from subtok.normalizers.base import Normalizer
from subtok.pipeline import Pipeline
from subtok.postprocessors.base import PostProcessor
from subtok.pretokenizers.base import PreTokenizer


class Lowercase:
    def normalize(self, text: str) -> str:
        return text.lower()


class WhitespaceSplit:
    def split(self, normalized: str) -> list[str]:
        return normalized.split()


class WordLevel:
    """Each word is a token, or ``[UNK]``."""

    supports_sampling = False
    supports_nbest = False

    def __init__(self, words: list[str]) -> None:
        self.ids = {"[UNK]": 0, "[CLS]": 1}
        for word in words:
            self.ids.setdefault(word, len(self.ids))

    def encode(self, normalized: str) -> list[tuple[str, int]]:
        return [(normalized, self.ids.get(normalized, 0))]


class AddCls:
    def process(self, pairs):
        return [("[CLS]", 1)] + pairs


class JoinWords:
    def decode(self, pairs) -> str:
        return " ".join(piece for piece, piece_id in pairs if piece_id != 1)


def toy() -> Pipeline:
    return Pipeline(Lowercase(), WhitespaceSplit(), WordLevel(["the", "cat", "sat"]),
                    AddCls(), JoinWords())


def test_components_satisfy_the_stage_interfaces():
    pipeline = toy()
    assert isinstance(pipeline.normalizer, Normalizer)
    assert isinstance(pipeline.pretokenizer, PreTokenizer)
    assert isinstance(pipeline.model, TokenModel)
    assert isinstance(pipeline.postprocessor, PostProcessor)
    assert isinstance(pipeline.decoder, Decoder)


def test_a_toy_word_level_assembly_encodes_and_decodes():
    pipeline = toy()
    pairs = pipeline.encode("The  cat sat\ton the MAT")
    assert pairs == [("[CLS]", 1), ("the", 2), ("cat", 3), ("sat", 4), ("on", 0), ("the", 2),
                     ("mat", 0)]
    assert pipeline.decode(pairs) == "the cat sat on the mat"


def test_the_sentencepiece_assembly_has_the_same_stages():
    """SentencePiece's processor is one assembly of such components."""
    from tiny_models import META, N, S, make
    from subtok import SentencePieceProcessor
    sp = SentencePieceProcessor(model_proto=make(META + [(S, -1.0, N), ("a", -2.0, N)]))
    assert isinstance(sp.normalizer, Normalizer)
    assert isinstance(sp.pretokenizer, PreTokenizer)
    assert isinstance(sp.model, TokenModel)
    assert isinstance(sp.postprocessor, PostProcessor)
    assert isinstance(sp.decoder, Decoder)
    assert sp.decoder.decode(sp.postprocessor.process(sp.model.encode(sp.normalize("a a")))) == "a a"
