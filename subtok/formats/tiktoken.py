"""``.tiktoken`` rank files: reading, writing, recognising OpenAI's encodings.

Importing this module is cheap (the encoder is imported when a file is
loaded), so a command can ask :func:`looks_like_tiktoken` of any model.

A rank file has one ``base64(token bytes) rank`` line per token
(``tiktoken/load.py``: ``load_tiktoken_bpe`` reads it, ``dump_tiktoken_bpe``
writes it sorted by rank). It carries neither the split pattern nor the
special tokens; for OpenAI's public encodings those are known, and the
files are recognised by their sha256 (the hashes tiktoken checks its
downloads against, ``tiktoken_ext/openai_public.py``). For any other file
the caller names a pattern.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from subtok.errors import ModelFileError, SubtokError
from subtok.pretokenizers.tiktoken_patterns import PATTERN_ALIASES, PATTERNS, pattern_for

if TYPE_CHECKING:
    from subtok.models.bytelevel.encoding import Encoding

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class NamedEncoding:
    """What a rank file does not say about one of OpenAI's encodings."""

    pattern: str  # a key of PATTERNS
    special_tokens: dict[str, int] = field(default_factory=dict)
    sha256: str | None = None  # of its rank file, where it has one
    n_vocab: int | None = None  # tiktoken's explicit_n_vocab, where it checks one


def _harmony_specials() -> dict[str, int]:
    """o200k_harmony: o200k_base's special tokens, the chat markers and
    the reserved ids up to 201087."""
    named = {"<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|return|>": 200002,
             "<|constrain|>": 200003, "<|channel|>": 200005, "<|start|>": 200006,
             "<|end|>": 200007, "<|message|>": 200008, "<|call|>": 200012,
             ENDOFPROMPT: 200018}
    reserved = {"<|reserved_%d|>" % i: i for i in (200000, 200001, 200004, 200009, 200010, 200011)}
    reserved.update({"<|reserved_%d|>" % i: i for i in range(200013, 201088)})
    reserved.update(named)  # 200018 is <|endofprompt|>, as in o200k_base
    return reserved


_GPT2_SPECIALS = {ENDOFTEXT: 50256}
#: tiktoken's encoding name -> its definition.
ENCODINGS: dict[str, NamedEncoding] = {
    "gpt2": NamedEncoding("gpt2", _GPT2_SPECIALS, None, 50257),
    "r50k_base": NamedEncoding(
        "r50k", _GPT2_SPECIALS, "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930", 50257),
    "p50k_base": NamedEncoding(
        "p50k", _GPT2_SPECIALS, "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069", 50281),
    "p50k_edit": NamedEncoding(
        "p50k", {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}),
    "cl100k_base": NamedEncoding(
        "cl100k", {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260,
                   ENDOFPROMPT: 100276},
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": NamedEncoding(
        "o200k", {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "o200k_harmony": NamedEncoding("o200k", _harmony_specials()),
}
#: sha256 of a rank file -> the encoding it is the ranks of.
KNOWN_HASHES = {spec.sha256: name for name, spec in ENCODINGS.items() if spec.sha256}

# One line: a base64 token, blanks, a decimal rank (blanks and a CR may
# end it). One regex finds every line that is right; a file is good when
# that is every line but the empty ones.
_LINE = rb"([A-Za-z0-9+/]+={0,2})[ \t]+([0-9]+)[ \t\r]*"
_GOOD_LINES = re.compile(rb"(?m)^%s$" % _LINE)
_VALID_LINE = re.compile(_LINE)
_TOKEN = re.compile(rb"[A-Za-z0-9+/]+={0,2}")
#: tiktoken's Rank is a u32 (src/lib.rs); CoreBPE refuses a larger one.
MAX_RANK = 2 ** 32 - 1


def looks_like_tiktoken(path: str | os.PathLike) -> bool:
    """True if the file starts like a rank file (checked by content, not name)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    first = head.splitlines()[:1]  # a line ends at LF, CR or CRLF, as tiktoken reads it
    return bool(first) and _VALID_LINE.fullmatch(first[0]) is not None


def _split_lines(data: bytes, source: str) -> list[tuple[bytes, bytes]]:
    """(token, rank) fields of every line, split as tiktoken's
    ``load_tiktoken_bpe`` splits them (``bytes.splitlines``, so a CR alone
    also ends a line; fields at ASCII whitespace; empty lines skipped),
    where the one-regex pass did not take the whole file. Stricter than
    tiktoken where it would silently change the file's meaning: a token
    with characters that are not base64 (``b64decode`` drops them, or
    what follows its padding) and a rank not in decimal digits
    (``int`` takes ``+7`` and ``1_0``) are refused."""
    fields = []
    for number, line in enumerate(data.splitlines(), 1):
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ModelFileError("%s:%d: not a rank file line (expected 'base64-token rank'): %r."
                                 % (source, number, line[:60]))
        token, rank = parts
        if not _TOKEN.fullmatch(token):
            raise ModelFileError("%s:%d: %r is not base64 (characters other than A-Z a-z 0-9 + / "
                                 "and final '=')." % (source, number, token[:60].decode("latin-1")))
        if not rank.isdigit():
            raise ModelFileError("%s:%d: rank %r is not a decimal number."
                                 % (source, number, rank[:30].decode("latin-1")))
        fields.append((token, rank))
    return fields


def _line_of(lines: list[bytes], index: int) -> int:
    """The line number of the ``index``-th non-empty line of ``lines``."""
    count = 0
    for number, line in enumerate(lines, 1):
        if line:
            if count == index:
                return number
            count += 1
    return count


def parse_ranks(data: bytes, source: str = "<bytes>") -> dict[bytes, int]:
    """Token bytes -> rank, from a rank file's content. A malformed line,
    a token or a rank given twice, a rank over 32 bits (tiktoken's rank
    type), raises ModelFileError naming the line."""
    if not data.strip():
        raise ModelFileError("%s: the rank file is empty." % source)
    found = _GOOD_LINES.findall(data)
    lines = data.split(b"\n")
    if len(found) != len(lines) - lines.count(b""):
        found = _split_lines(data, source)
        lines = data.splitlines()
    tokens, ranks = zip(*found)
    ranks = list(map(int, ranks))
    try:
        decoded = list(map(binascii.a2b_base64, tokens))
    except binascii.Error:
        for index, token in enumerate(tokens):
            try:
                binascii.a2b_base64(token)
            except binascii.Error as exc:
                raise ModelFileError("%s:%d: %r is not base64 (%s)." % (
                    source, _line_of(lines, index), token.decode("ascii"), exc)) from None
        raise
    if max(ranks) > MAX_RANK:
        index = next(i for i, rank in enumerate(ranks) if rank > MAX_RANK)
        raise ModelFileError("%s:%d: rank %d is over %d (ranks are 32-bit)."
                             % (source, _line_of(lines, index), ranks[index], MAX_RANK))
    result = dict(zip(decoded, ranks))
    if len(result) != len(decoded):
        raise ModelFileError("%s:%d: token %r is listed twice." % (
            source, _line_of(lines, _second(decoded)), decoded[_second(decoded)]))
    if len(set(ranks)) != len(ranks):
        raise ModelFileError("%s:%d: rank %d is given twice." % (
            source, _line_of(lines, _second(ranks)), ranks[_second(ranks)]))
    return result


def _second(values: list) -> int:
    """The index of the first value seen before."""
    seen = set()
    for index, value in enumerate(values):
        if value in seen:
            return index
        seen.add(value)
    raise ValueError("no repeated value")


def read_ranks(path: str | os.PathLike) -> tuple[dict[bytes, int], str]:
    """(ranks, sha256 of the file) of a rank file."""
    import hashlib
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ModelFileError("%s: cannot read the rank file: %s." % (path, exc.strerror or exc)) from None
    return parse_ranks(data, str(path)), hashlib.sha256(data).hexdigest()


def ranks_text(ranks: dict[bytes, int]) -> bytes:
    """A rank file's content: lines sorted by rank, as tiktoken writes them."""
    return b"".join(base64.b64encode(token) + b" %d\n" % rank
                    for token, rank in sorted(ranks.items(), key=lambda item: item[1]))


def parse_special_tokens(value: str) -> dict[str, int]:
    """A ``--special_tokens`` value: an encoding's name (cl100k_base, or cl100k
    for short), ``none``, or ``TOKEN=ID,TOKEN=ID``."""
    name = _encoding_name(value)
    if name is not None:
        return dict(ENCODINGS[name].special_tokens)
    if value in ("", "none"):
        return {}
    tokens = {}
    for item in value.split(","):
        token, equals, number = item.rpartition("=")
        if not equals or not token or not number.isdigit():
            raise SubtokError("--special_tokens: %r is not TOKEN=ID (or one of: %s, none)."
                              % (item, ", ".join(ENCODINGS)))
        tokens[token] = int(number)
    return tokens


def _encoding_name(value: str) -> str | None:
    """The encoding a short or full name means (``cl100k`` -> ``cl100k_base``)."""
    if value in ENCODINGS:
        return value
    for name in ENCODINGS:
        if PATTERN_ALIASES.get(name) == value and name.endswith("_base"):
            return name
    return None


def load_tiktoken(path: str | os.PathLike, pattern: str | None = None,
                  special_tokens: dict[str, int] | str | None = None) -> Encoding:
    """An :class:`Encoding` from a rank file.

    ``pattern``: a name (gpt2, r50k, p50k, cl100k, o200k, or tiktoken's
    encoding names) or a regex; ``special_tokens``: a dict or a
    ``--special_tokens`` string. Both default to what the file's sha256
    says it is; a file of no known encoding needs a pattern.
    """
    from subtok.models.bytelevel.encoding import Encoding
    ranks, digest = read_ranks(path)
    known = KNOWN_HASHES.get(digest)
    spec = ENCODINGS.get(known) if known else None
    if pattern is None:
        if spec is None:
            raise ModelFileError(
                "%s: not the rank file of a known encoding; name its split pattern "
                "(--pattern %s or a regex)." % (path, "|".join(PATTERNS)))
        pattern = spec.pattern
    if isinstance(special_tokens, str):
        special_tokens = parse_special_tokens(special_tokens)
    elif special_tokens is None:
        special_tokens = dict(spec.special_tokens) if spec else {}
    _check_special_ids(path, ranks, special_tokens)
    pat_str = pattern_for(pattern)
    name = known if known and pat_str == PATTERNS[spec.pattern] and \
        special_tokens == spec.special_tokens else Path(path).stem
    return Encoding(name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special_tokens)


def _check_special_ids(path, ranks: dict[bytes, int], special_tokens: dict[str, int]) -> None:
    """A special token may not take a rank's id: decoding would be ambiguous."""
    taken = set(ranks.values())
    for token, token_id in special_tokens.items():
        if token_id in taken:
            raise ModelFileError("%s: special token %r has id %d, which a token of the file has."
                                 % (path, token, token_id))
