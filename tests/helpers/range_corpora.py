"""Small real-text files with the line shapes that byte ranges must cut
right (counting a file in ranges must give what counting it whole gives)."""

from __future__ import annotations

from pathlib import Path

from conftest import CORPORA_DIR

#: Bytes of the line longer than the default --max_sentence_length (4192):
#: several ranges of a few KB fall inside it.
LONG_LINE = 9000


def range_corpus(directory: Path) -> list[str]:
    """Four files: English with CRLF on every third line, empty lines, a line over
    --max_sentence_length in the middle and no final newline; Japanese
    (multi-byte UTF-8, cut mid-character by byte ranges) ending in an empty
    line; a one-line file smaller than any range; an empty file."""
    english = (CORPORA_DIR / "botchan.txt").read_bytes()[:24000].split(b"\n")[:-1]
    # (botchan.txt has CRLF lines and no empty ones: make every third line
    # CRLF, the rest LF, and put an empty line after every 20th)
    english = [text for n, line in enumerate(english)
               for text in [line.rstrip(b"\r") + b"\r" * (n % 3 == 0)] + [b""] * (n % 20 == 19)]
    middle = len(english) // 2
    long = (b"long " * LONG_LINE)[:LONG_LINE]
    first = b"\n".join(english[:middle] + [long] + english[middle:])  # no final "\n"
    japanese = (CORPORA_DIR / "ja.txt").read_bytes()[:12000]
    japanese = japanese[:japanese.rindex(b"\n") + 1] + b"\n"
    files = {"en.txt": first, "ja.txt": japanese, "one.txt": b"one short line\n", "empty.txt": b""}
    paths = []
    for name, data in files.items():
        (directory / name).write_bytes(data)
        paths.append(str(directory / name))
    return paths
