"""The Precompiled normalizer of ``tokenizer.json``: a SentencePiece charsmap
applied the way ``tokenizers`` applies it.

The charsmap is the blob of a SentencePiece model (base64 in the JSON),
looked up in place by :class:`subtok.normalizers.charsmap.CharsMap`.
``tokenizers`` does not apply it as SentencePiece does (longest match over
the text). Following ``normalizers/precompiled.rs`` and the
``spm_precompiled`` crate (``Precompiled::transform``):

- the text is cut into extended grapheme clusters;
- a cluster shorter than 6 UTF-8 bytes whose *shortest* prefix is a key is
  replaced whole by that key's target (so "И" + U+0301 loses its accent
  when "И" alone is a key: tokenizers#2116);
- otherwise each character that is a key is replaced by its target;
- the trie walk stops at a NUL byte, so nothing at or after a NUL matches.

Alignments follow ``precompiled.rs``'s ``replace``: new characters take the
spans of the old ones in order, extra ones take the last old span, and when
the target is shorter the last new character removes the surplus (when the
target is empty that removal lands on the previous cluster's last
character, as in tokenizers).
"""

from __future__ import annotations

import base64
import binascii

import regex

from subtok.errors import ModelFileError, NormalizerError
from subtok.formats.json_fields import field
from subtok.normalizers.aligned import AlignedString, TextNormalizer
from subtok.normalizers.charsmap import load_rules

_GRAPHEME = regex.compile(r"\X")
Item = tuple[str, int]


class Precompiled(TextNormalizer):
    """A charsmap, applied per grapheme cluster."""

    def __init__(self, blob: bytes) -> None:
        self.rules = load_rules(blob)
        singles = "".join(sorted(self.rules.trigger_chars))
        self._singles = regex.compile("[%s]" % regex.escape(singles)) if singles else None

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Precompiled:
        encoded = field(spec, "precompiled_charsmap", str, where, nullable=True)
        try:
            blob = base64.b64decode(encoded or "", validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ModelFileError("%s: precompiled_charsmap is not base64: %s." % (where, exc)) from None
        try:
            return cls(blob)
        except NormalizerError as exc:  # (a ValueError too: checked apart from base64's)
            raise ModelFileError("%s: %s" % (where, exc)) from None

    def lookup(self, chunk: str) -> str | None:
        """The target of the shortest prefix of ``chunk`` that is a key: the
        longest key within the first n characters, for n = 1, 2, ... (a key
        found there is n characters long, or it would have been found for a
        smaller n)."""
        for size in range(1, len(chunk) + 1):
            if chunk[size - 1] == "\0":
                return None
            found = self.rules.longest_match(chunk[:size], 0)
            if found is not None:
                return found[0]
        return None

    def _untouched(self, text: str) -> bool:
        """No cluster can change: no character is part of a key on its own
        account and every cluster is one character (a longer key needs a
        longer cluster)."""
        if self._singles is not None and self._singles.search(text):
            return False
        return len(_GRAPHEME.findall(text)) == len(text)

    def normalize_aligned(self, text: AlignedString) -> None:
        value = text.text
        if self._singles is None or self._untouched(value):
            return
        items: list[Item] = []
        modified = False
        for cluster in _GRAPHEME.findall(value):
            if len(cluster.encode("utf-8")) < 6:
                target = self.lookup(cluster)
                if target is not None:
                    modified = True
                    _replace(items, cluster, target)
                    continue
            for char in cluster:
                target = self.lookup(char)
                if target is None:
                    items.append((char, 0))
                else:
                    modified = True
                    _replace(items, char, target)
        if modified:
            text.transform(items)


def _replace(items: list[Item], old: str, new: str) -> None:
    """``precompiled.rs``'s ``replace``: the (character, change) items that
    put ``new`` where ``old`` was."""
    items.extend((char, 0) for char in new)
    diff = len(new) - len(old)
    if diff > 0:
        for i in range(len(items) - diff, len(items)):
            items[i] = (items[i][0], 1)
    elif diff < 0 and items:
        char, change = items[-1]
        items[-1] = (char, change + diff)
