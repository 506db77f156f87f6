"""SentencePiece-style pre-tokenizer (``Metaspace`` in ``tokenizers/src/
pre_tokenizers/metaspace.rs``): spaces become the replacement character
("▁"), which is put in front of the text (always, for the first piece
only, or never), and the text is cut before each replacement character.
The Metaspace decoder lives in :mod:`subtok.decoders.metaspace`."""

from __future__ import annotations

import regex

from subtok.errors import ModelFileError
from subtok.formats.json_fields import char_field, field
from subtok.normalizers.aligned import AlignedString

PREPEND_SCHEMES = ("always", "first", "never")


def metaspace_fields(spec: dict, where: str) -> tuple[str, str, bool]:
    """(replacement, prepend_scheme, split) of a Metaspace pre-tokenizer or
    decoder. A legacy ``add_prefix_space: false`` means "never" (tokenizers
    0.23.3 refuses it unless prepend_scheme says "never" too; older files
    have it alone, so we accept it)."""
    replacement = char_field(spec, "replacement", where)
    scheme = field(spec, "prepend_scheme", str, where, None)
    legacy = field(spec, "add_prefix_space", bool, where, None)
    if scheme is None:
        scheme = "never" if legacy is False else "always"
    elif legacy is False and scheme != "never":
        raise ModelFileError("%s: add_prefix_space false does not match prepend_scheme %r."
                             % (where, scheme))
    if scheme not in PREPEND_SCHEMES:
        raise ModelFileError("%s: unknown prepend_scheme %r (one of %s)."
                             % (where, scheme, ", ".join(PREPEND_SCHEMES)))
    return replacement, scheme, field(spec, "split", bool, where, True)


class Metaspace:
    """Spaces to ``replacement``, a leading one as ``prepend_scheme`` says,
    then (``split``) one piece per replacement character and what follows
    it (the MergedWithNext behavior)."""

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always",
                 split: bool = True) -> None:
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split_pieces = split
        mark = regex.escape(replacement)
        self._pieces = regex.compile("%s?[^%s]+|%s" % (mark, mark, mark))

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Metaspace:
        return cls(*metaspace_fields(spec, where))

    @property
    def needs_alignment(self) -> bool:
        """"first" asks whether a piece starts the original text, which
        only the alignments know once normalizers have run."""
        return self.prepend_scheme == "first"

    def _prepend(self, text: str, at_start: bool) -> bool:
        if text.startswith(self.replacement) or self.prepend_scheme == "never":
            return False
        return self.prepend_scheme == "always" or at_start

    def split(self, text: str) -> list[str]:
        text = text.replace(" ", self.replacement)
        if text and self._prepend(text, True):
            text = self.replacement + text
        if not self.split_pieces:
            return [text] if text else []
        return self._pieces.findall(text)

    def split_aligned(self, piece: AlignedString) -> list[AlignedString]:
        value = piece.text
        if " " in value:
            piece.replace_matches([(i, i + 1) for i, c in enumerate(value) if c == " "],
                                  self.replacement)
        if self._prepend(piece.text, piece.start == 0):
            piece.prepend(self.replacement)
        if not self.split_pieces:
            return [piece] if piece.text else []
        return piece.slices(m.span() for m in self._pieces.finditer(piece.text))
