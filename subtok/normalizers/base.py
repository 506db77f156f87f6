"""Stage 1 of the pipeline: the normalizer interface.

A normalizer turns raw text into the text a model segments. SentencePiece's
(:mod:`subtok.normalizers.sentencepiece`) applies the model's charsmap,
collapses whitespace, escapes spaces as "▁" and adds the dummy prefix, all
in one pass, because its rules and its whitespace handling interact.

Adding a normalizer (Unicode forms, BERT's, a ``tokenizer.json`` Sequence,
...) means adding a module in this package with a class that has the method
below; nothing on the SentencePiece path changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from subtok.normalizers.aligned import AlignedString


@runtime_checkable
class Normalizer(Protocol):
    """Raw text -> normalized text."""

    def normalize(self, text: str) -> str:
        ...


@runtime_checkable
class AlignedNormalizer(Normalizer, Protocol):
    """A ``tokenizer.json`` normalizer: it also edits an
    :class:`~subtok.normalizers.aligned.AlignedString` in place, keeping
    each character's span of the original text (for offsets)."""

    def normalize_aligned(self, text: AlignedString) -> None:
        ...
