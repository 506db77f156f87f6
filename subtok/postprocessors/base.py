"""Stage 4 of the pipeline: the post-processor interface.

A post-processor takes the ``(piece, id)`` pairs a model produced for one
text and gives the pairs that are output: SentencePiece's
(:mod:`subtok.postprocessors.sentencepiece`) turns unknown pieces into byte
pieces (byte fallback) or merges runs of them, and adds bos/eos, reverses
or shows the unknown piece on request; a ``tokenizer.json`` template adds
special tokens.

Adding one means adding a module in this package with a class that has the
method below; nothing on the SentencePiece path changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from subtok.encoding import Encoding

Pair = tuple[str, int]


@runtime_checkable
class PostProcessor(Protocol):
    """A model's ``(piece, id)`` pairs -> the pairs that are output."""

    def process(self, pairs: list[Pair]) -> list[Pair]:
        ...


@runtime_checkable
class EncodingPostProcessor(Protocol):
    """A ``tokenizer.json`` post-processor (``tokenizers``' trait): the
    encodings of a text (and of its pair) -> the encodings to join, with
    special tokens added when asked; ``added_tokens`` says how many, for
    truncation."""

    def added_tokens(self, is_pair: bool) -> int:
        ...

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        ...
