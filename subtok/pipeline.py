"""A tokenizer as an assembly of the five pipeline stages.

    text --normalizer--> normalized --pre-tokenizer--> words
         --model (per word)--> (piece, id) pairs --post-processor--> pairs
    pairs --decoder--> text

Each stage is an interface (a ``Protocol`` in its package's ``base.py``)
with small implementations. :class:`Pipeline` is the generic assembly: a
new family is new components plus a ``Pipeline`` of them (a test builds a
toy word-level one, ``tests/unit/test_pipeline.py``), and nothing on the
SentencePiece path changes for it.

SentencePiece is one assembly of such components,
:class:`subtok.processor.SentencePieceProcessor`, which keeps the same stage
attributes (``normalizer``, ``pretokenizer``, ``model``, ``postprocessor``,
``decoder``) but drives them itself: its unigram model must see a whole
sentence's words at once (float32 sums cross words), and it caches per
word.
"""

from __future__ import annotations

from dataclasses import dataclass

from subtok.decoders.base import Decoder
from subtok.models.base import TokenModel
from subtok.normalizers.base import Normalizer
from subtok.postprocessors.base import PostProcessor
from subtok.pretokenizers.base import PreTokenizer

Pair = tuple[str, int]


@dataclass
class Pipeline:
    """The five stages, run in order; the model segments each word alone."""

    normalizer: Normalizer
    pretokenizer: PreTokenizer
    model: TokenModel
    postprocessor: PostProcessor
    decoder: Decoder

    def encode(self, text: str) -> list[Pair]:
        """``text`` as post-processed ``(piece, id)`` pairs."""
        encode = self.model.encode
        pairs: list[Pair] = []
        for word in self.pretokenizer.split(self.normalizer.normalize(text)):
            pairs.extend(encode(word))
        return self.postprocessor.process(pairs)

    def decode(self, pairs: list[Pair]) -> str:
        return self.decoder.decode(pairs)


__all__ = ["Pipeline"]
