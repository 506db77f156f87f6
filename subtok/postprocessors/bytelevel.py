"""The ByteLevel post-processor: it adds nothing, it only trims offsets
(``process_offsets`` in ``tokenizers/src/pre_tokenizers/byte_level.rs``)
so that a token's span leaves out the spaces it starts or ends with."""

from __future__ import annotations

import regex

from subtok.encoding import Encoding
from subtok.formats.json_fields import field

#: "Ġ" (the byte character of a space) or any White_Space character.
_LEADING = regex.compile(r"\A[\u0120\s]*")
_TRAILING = regex.compile(r"[\u0120\s]*\Z")
#: Quick test before the regexes: most tokens neither start nor end with a space.
_SPACE_ENDS = frozenset("\u0120 ")


def trim_offsets(encoding: Encoding, add_prefix_space: bool) -> None:
    """Move each token's start past its leading spaces and its end before
    its trailing ones; the single space ``add_prefix_space`` put before
    the first token stays (it was not in the text)."""
    offsets = encoding.offsets
    if offsets is None:
        return
    for i, token in enumerate(encoding.tokens):
        if not token or (token[0] not in _SPACE_ENDS and token[-1] not in _SPACE_ENDS
                         and not token[0].isspace() and not token[-1].isspace()):
            continue
        leading = _LEADING.match(token).end()
        trailing = len(token) - _TRAILING.search(token).start()
        if not leading and not trailing:
            continue
        start, end = offsets[i]
        if leading:
            if (i == 0 or start == 0) and add_prefix_space and leading == 1:
                leading = 0
            start = min(start + leading, end)
        if trailing and end >= trailing:
            end = max(end - trailing, start)
        offsets[i] = (start, end)


class ByteLevel:
    """Trims offsets when ``trim_offsets``; ids and tokens stay."""

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> ByteLevel:
        return cls(field(spec, "add_prefix_space", bool, where),
                   field(spec, "trim_offsets", bool, where))

    def added_tokens(self, is_pair: bool) -> int:
        return 0

    def process_encodings(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if self.trim_offsets:
            for encoding in encodings:
                trim_offsets(encoding, self.add_prefix_space)
        return encodings
