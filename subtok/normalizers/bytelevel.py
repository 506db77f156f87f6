"""GPT-2's byte-level alphabet, and the ByteLevel normalizer.

Byte-level BPE works on the UTF-8 bytes of the text, each shown as one
printable character (``bytes_char`` in ``tokenizers/src/pre_tokenizers/
byte_level.rs``, after GPT-2's ``encoder.py``): the bytes ``!``..``~``,
``¡``..``¬`` and ``®``..``ÿ`` stand for themselves, the 68 others for
U+0100 + n in byte order (space is "Ġ", newline "Ċ"). The ByteLevel
pre-tokenizer, normalizer and decoder and the offset trimming of the
ByteLevel post-processor all use the table defined here.
"""

from __future__ import annotations

from subtok.normalizers.aligned import AlignedString, TextNormalizer


def _byte_chars() -> list[str]:
    """The character standing for each byte value."""
    kept = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    out = [""] * 256
    for b in kept:
        out[b] = chr(b)
    for n, b in enumerate(b for b in range(256) if b not in kept):
        out[b] = chr(0x100 + n)
    return out


#: byte value -> the character that stands for it.
BYTE_CHARS: list[str] = _byte_chars()
#: character -> the byte it stands for.
CHAR_BYTES: dict[str, int] = {c: b for b, c in enumerate(BYTE_CHARS)}
#: ``bytes.decode("latin-1").translate(TO_BYTE_CHARS)`` maps bytes to their characters.
TO_BYTE_CHARS = {b: c for b, c in enumerate(BYTE_CHARS)}
#: ``str.translate(FROM_BYTE_CHARS)`` maps the characters back to latin-1 bytes.
FROM_BYTE_CHARS = {ord(c): b for b, c in enumerate(BYTE_CHARS)}


def to_byte_chars(text: str) -> str:
    """The UTF-8 bytes of ``text``, one alphabet character each."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1").translate(TO_BYTE_CHARS)


def byte_level_aligned(text: AlignedString) -> None:
    """Rewrite ``text`` as its byte characters; every byte of a character
    takes that character's span (changes 0, 1, 1, ... in tokenizers)."""
    value = text.text
    if text.align is None or value.isascii():  # no span to spread over several bytes
        text.set_text(to_byte_chars(value))
        return
    text.expand([to_byte_chars(c) for c in value])


class ByteLevel(TextNormalizer):
    """The ByteLevel normalizer: the whole text in byte characters."""

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> ByteLevel:
        return cls()

    def normalize_aligned(self, text: AlignedString) -> None:
        if text.text:
            byte_level_aligned(text)
