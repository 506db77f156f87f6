"""The ByteLevel decoder: byte characters back to bytes, and the bytes to
text (``Decoder for ByteLevel`` in ``tokenizers/src/pre_tokenizers/
byte_level.rs``). A token with a character outside the byte alphabet
stands for its own UTF-8 bytes; invalid UTF-8 becomes U+FFFD as Rust's
``from_utf8_lossy`` does it (one per maximal invalid sequence, which is
also what Python's "replace" handler does)."""

from __future__ import annotations

from subtok.formats.json_fields import field
from subtok.normalizers.bytelevel import CHAR_BYTES

#: Byte characters -> the latin-1 character of their byte; characters
#: below 256 that are not byte characters -> one latin-1 cannot encode.
_TO_LATIN1 = {code: "\uffff" for code in range(256)}
_TO_LATIN1.update({ord(c): chr(b) for c, b in CHAR_BYTES.items()})


def token_bytes(token: str) -> bytes:
    """The bytes one token stands for."""
    try:
        return token.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8", "surrogatepass")


class ByteLevel:
    """All tokens as one string of their bytes."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> ByteLevel:
        field(spec, "add_prefix_space", bool, where)
        field(spec, "trim_offsets", bool, where)
        field(spec, "use_regex", bool, where, True)
        return cls()

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [b"".join(map(token_bytes, tokens)).decode("utf-8", "replace")]
