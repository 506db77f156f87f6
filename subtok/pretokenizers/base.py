"""Stage 2 of the pipeline: the pre-tokenizer interface.

A pre-tokenizer cuts normalized text into pieces (words) that a model can
segment one by one; a model's results are then cached per word. For
SentencePiece (:mod:`subtok.pretokenizers.sentencepiece`) the cuts are not
part of the format: they are places no vocabulary piece can span, found
from the vocabulary, so cutting there never changes the result.

Adding a pre-tokenizer (byte-level regex splits, BERT's punctuation split,
...) means adding a module in this package with a class that has the method
below; nothing on the SentencePiece path changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from subtok.normalizers.aligned import AlignedString


@runtime_checkable
class PreTokenizer(Protocol):
    """Normalized text -> the words a model segments independently."""

    def split(self, normalized: str) -> list[str]:
        ...


@runtime_checkable
class AlignedPreTokenizer(PreTokenizer, Protocol):
    """A ``tokenizer.json`` pre-tokenizer: it also cuts an
    :class:`~subtok.normalizers.aligned.AlignedString` (and may rewrite the
    pieces, as ByteLevel and Metaspace do), keeping spans."""

    def split_aligned(self, piece: AlignedString) -> list[AlignedString]:
        ...
