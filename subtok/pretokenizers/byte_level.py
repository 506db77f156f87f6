"""GPT-2's byte-to-character table: token bytes as printable text.

Byte-level BPE works on bytes, but ``vocab.json``, ``merges.txt`` and
``tokenizer.json`` store tokens as strings. GPT-2 maps each byte to one
character: the printable Latin-1 bytes (``!``-``~``, ``¡``-``¬``,
``®``-``ÿ``) to themselves and the 68 others, in byte order, to U+0100
onwards (space becomes ``Ġ``, newline ``Ċ``). The same table is
``bytes_char`` in tokenizers' ``pre_tokenizers/byte_level.rs``.
"""

from __future__ import annotations

from subtok.errors import ModelFileError


def _byte_chars() -> list[str]:
    """The character each byte value stands for (index = byte)."""
    printable = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    table = []
    shifted = 0
    for value in range(256):
        if value in printable:
            table.append(chr(value))
        else:
            table.append(chr(0x100 + shifted))
            shifted += 1
    return table


#: byte value -> its character.
BYTE_CHARS: list[str] = _byte_chars()
#: character -> its byte value.
CHAR_BYTES: dict[str, int] = {char: value for value, char in enumerate(BYTE_CHARS)}
# str.translate tables: bytes decoded as Latin-1 <-> the GPT-2 characters.
_TO_CHARS = {value: char for value, char in enumerate(BYTE_CHARS)}
_TO_LATIN1 = {value: "\U0010ffff" for value in range(256)}  # no byte stands for these
_TO_LATIN1.update({ord(char): value for value, char in enumerate(BYTE_CHARS)})


def bytes_to_text(data: bytes) -> str:
    """Token bytes as their GPT-2 string (``b" hi"`` -> ``"Ġhi"``)."""
    return data.decode("latin-1").translate(_TO_CHARS)


def text_to_bytes(text: str) -> bytes:
    """The inverse of :func:`bytes_to_text`; a character outside the table
    raises :class:`ModelFileError` naming it."""
    latin1 = text.translate(_TO_LATIN1)
    try:
        return latin1.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise ModelFileError("token %r has the character %r, which no byte stands for."
                             % (text, text[exc.start])) from None


def is_byte_level(text: str) -> bool:
    """True when every character of ``text`` stands for a byte."""
    return all(char in CHAR_BYTES for char in text)
