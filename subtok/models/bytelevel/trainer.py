"""Byte-level BPE trainer (GPT-2, tiktoken): ``subtok train --model_type=byte_bpe``.

Phases:

1. *chunks* - every input line (line end included) is cut by the split
   pattern (``--pattern``: ``gpt2``, ``cl100k``, ``o200k`` or a regex) into
   chunks, counted per distinct chunk in worker processes
   (:func:`subtok.training.families.count_pretokens`); with
   ``--add_prefix_space`` a line not starting with a space gets one first
   (the ByteLevel pre-tokenizer's rule, so ``gpt2`` only);
2. *symbols* - a chunk is its UTF-8 bytes, one symbol per byte; chunks of
   one byte have no pair and are dropped;
3. *merges* - pairs are merged by frequency over the distinct chunks with
   their counts (:func:`subtok.training.pair_merges.merge_by_frequency`,
   which is ``tokenizers``' ``BpeTrainer`` loop), never crossing a chunk,
   until the vocabulary has ``--vocab_size`` tokens or no pair occurs
   ``--min_frequency`` times;
4. *files* - ``PREFIX.json`` (tokenizer.json: ByteLevel pre-tokenizer, or
   Split + ByteLevel for the other patterns; BPE model with the merges;
   ByteLevel decoder), ``PREFIX.tiktoken`` (rank = id of every non-special
   token, the 256 single bytes first) and ``PREFIX.vocab`` (token, count).

Ids and ties (``--ties``). Among equally frequent pairs the one whose left
token has the smaller id wins, then the smaller right id: older tokens
first. What the ids are differs:

* ``subtok`` (default): byte ``b`` is token ``b`` (tiktoken's and minbpe's
  order), merged tokens follow in merge order, special tokens come after the
  last merge (as GPT-2's ``<|endoftext|>``);
* ``tokenizers``: the ids ``tokenizers``' ``BpeTrainer`` gives with
  ``ByteLevel.alphabet()`` as initial alphabet (``ByteLevelBPETokenizer``):
  special tokens first, then the 256 byte stand-ins in code point order,
  then merged tokens. This reproduces ``ByteLevelBPETokenizer.train``
  merge for merge.

Tokens are written with GPT-2's printable stand-ins for bytes
(``bytes_char`` of ``tokenizers/src/pre_tokenizers/byte_level.rs``):
bytes ``!``..``~``, ``¡``..``¬`` and ``®``..``ÿ`` stand for themselves, the
other 68 are U+0100 + n in byte order (space is ``Ġ``, newline ``Ċ``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from subtok.errors import TrainerError
from subtok.formats.hf_files import added_token, scores_vocab, tiktoken_ranks, tokenizer_json
from subtok.training.corpus import Progress
from subtok.training.families import Trained, count_pretokens, sorted_by_count
from subtok.training.pair_merges import (Merge, PairTable, first_scores, merge_by_frequency,
                                         symbol_char)
from subtok.training.spec import TrainerOptions

#: The split patterns --pattern names. ``gpt2`` is the ByteLevel
#: pre-tokenizer's (GPT-2's ``encoder.py``); ``cl100k`` and ``o200k`` are
#: tiktoken's (``tiktoken_ext/openai_public.py``).
PATTERNS = {
    "gpt2": r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
    "cl100k": (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
               r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""),
    "o200k": "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]),
}


def byte_chars() -> list[str]:
    """GPT-2's stand-in character of every byte value."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = {b: chr(b) for b in printable}
    others = [b for b in range(256) if b not in chars]
    chars.update({b: chr(0x100 + n) for n, b in enumerate(others)})
    return [chars[b] for b in range(256)]


BYTE_CHARS = byte_chars()
#: stand-in character -> byte value.
CHAR_BYTES = {c: b for b, c in enumerate(BYTE_CHARS)}


class ChunkCounter:
    """Cuts lines into chunks with the split pattern and counts them."""

    def __init__(self, pattern: str, add_prefix_space: bool) -> None:
        import regex
        self.named = pattern in PATTERNS
        self.regex = regex.compile(PATTERNS.get(pattern, pattern))
        self.add_prefix_space = add_prefix_space

    def pieces(self, text: str) -> list[str]:
        """The chunks of ``text``: the pattern's matches, and (for a pattern
        of the user's) the text between them, as a ``Split`` pre-tokenizer
        with ``Isolated`` behaviour makes them. The named patterns match
        every character."""
        if self.named:
            return self.regex.findall(text)
        out, pos = [], 0
        for match in self.regex.finditer(text):
            start, end = match.span()
            if start > pos:
                out.append(text[pos:start])
            if end > start:
                out.append(text[start:end])
            pos = end
        if pos < len(text):
            out.append(text[pos:])
        return out

    def count(self, lines: list[tuple[str, int]]) -> Counter:
        """The chunks of ``(line, count)`` pairs, counted."""
        counts: Counter = Counter()
        pieces = self.pieces
        for text, freq in lines:
            if self.add_prefix_space and not text.startswith(" "):
                text = " " + text
            if freq == 1:
                counts.update(pieces(text))
            else:
                for piece in pieces(text):
                    counts[piece] += freq
        counts.pop("", None)
        return counts


def _count_chunk(counter: ChunkCounter, lines: list[tuple[str, int]]) -> Counter:
    """A counting task (module level: workers get it by reference)."""
    return counter.count(lines)


def initial_tokens(specials: list[str], ties: str) -> tuple[list[str], list[int]]:
    """(tokens before any merge, id of each byte value) for the --ties rule."""
    if ties == "tokenizers":
        tokens = list(dict.fromkeys([*specials, *sorted(BYTE_CHARS)]))
    else:
        tokens = list(BYTE_CHARS)
    index = {token: i for i, token in enumerate(tokens)}
    return tokens, [index[c] for c in BYTE_CHARS]


def symbol_words(chunks: Counter, byte_ids: list[int]) -> tuple[list[str], list[int]]:
    """Chunks of two bytes or more as symbol strings, with their counts."""
    table = {b: symbol_char(byte_ids[b]) for b in range(256)}
    words, counts = [], []
    for chunk, count in sorted_by_count(chunks):
        data = chunk.encode("utf-8", "surrogateescape")
        if len(data) > 1:
            words.append(data.decode("latin-1").translate(table))
            counts.append(count)
    return words, counts


def token_bytes(token: str) -> bytes:
    """The bytes a token written with byte stand-ins stands for."""
    return bytes(CHAR_BYTES[c] for c in token)


def train(options: TrainerOptions, progress: Progress, lines: Iterable | None) -> Trained:
    """Train byte-level BPE; return its tokens and files (see the module docstring)."""
    specials = list(options.special_tokens)
    counter = ChunkCounter(options.pattern, options.add_prefix_space)
    chunks = count_pretokens(options, progress, lines, _count_chunk, counter)
    tokens, byte_ids = initial_tokens(specials, options.ties)
    words, counts = symbol_words(chunks, byte_ids)
    del chunks
    table = PairTable(words, counts)
    base = len(tokens)
    target = options.vocab_size - (len(specials) if options.ties == "subtok" else 0)
    with progress.bar(total=max(0, target - base), desc="byte-level merges", unit=" tokens") as bar:
        merges = merge_by_frequency(table, tokens, join=str.__add__, vocab_size=target,
                                    min_frequency=options.min_frequency, bar=bar)
    del table
    scores = first_scores(len(tokens), merges)
    if options.ties == "subtok":
        clash = [s for s in specials if s in set(tokens)]
        if clash:
            raise TrainerError("--special_tokens: %s is also a learned token; choose a special "
                               "token the text cannot form." % clash[0])
        tokens.extend(specials)
        scores.extend(0.0 for _ in specials)
    return Trained(model_type="byte_bpe", tokens=tokens, scores=scores,
                   files=_files(options, tokens, scores, merges))


def json_merges(tokens: list[str], merges: list[Merge]) -> list[list[str]]:
    """The merges as ``tokenizers`` saves them: a pair merged more than once
    appears once, at its last rank (its trainer keeps merges in a map)."""
    last = {(m.left, m.right): rank for rank, m in enumerate(merges)}
    ordered = sorted(last.items(), key=lambda item: item[1])
    return [[tokens[left], tokens[right]] for (left, right), _ in ordered]


def oniguruma_pattern(pattern: str) -> str:
    """``pattern`` as ``tokenizers``' regex engine (Oniguruma, Ruby syntax)
    reads it the way tiktoken and the ``regex`` module do: Ruby has no
    possessive interval, and reads ``\\p{N}{1,3}+`` as "one or more runs of
    1 to 3 digits". In the named patterns the possessive interval ends its
    alternative, where greedy matches the same, so the ``+`` is dropped (a
    pattern of the user's may need more care)."""
    return re.sub(r"(?<!\\)(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def pre_tokenizer(options: TrainerOptions) -> dict:
    """The tokenizer.json pre-tokenizer that splits as training did."""
    if options.pattern == "gpt2":
        return {"type": "ByteLevel", "add_prefix_space": options.add_prefix_space,
                "trim_offsets": True, "use_regex": True}
    pattern = oniguruma_pattern(PATTERNS.get(options.pattern, options.pattern))
    split = {"type": "Split", "pattern": {"Regex": pattern},
             "behavior": "Isolated", "invert": False}
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": False}
    return {"type": "Sequence", "pretokenizers": [split, byte_level]}


def _files(options: TrainerOptions, tokens: list[str], scores: list[float],
           merges: list[Merge]) -> dict[str, bytes]:
    """The three output files: tokenizer.json, the .tiktoken ranks and the scored .vocab."""
    specials = set(options.special_tokens)
    model = {"type": "BPE", "dropout": None, "unk_token": None,
             "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
             "byte_fallback": False, "ignore_merges": False,
             "vocab": {token: i for i, token in enumerate(tokens)},
             "merges": json_merges(tokens, merges)}
    byte_level = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                  "use_regex": True}
    document = tokenizer_json(
        model=model,
        added_tokens=[added_token(i, t) for i, t in enumerate(tokens) if t in specials],
        normalizer=None, pre_tokenizer=pre_tokenizer(options),
        post_processor=dict(byte_level, trim_offsets=False), decoder=byte_level)
    ranks = [(token_bytes(t), i) for i, t in enumerate(tokens) if t not in specials]
    return {".json": document, ".tiktoken": tiktoken_ranks(ranks),
            ".vocab": scores_vocab(tokens, scores)}


__all__ = ["train", "PATTERNS", "BYTE_CHARS", "CHAR_BYTES", "ChunkCounter", "initial_tokens",
           "json_merges"]
