"""Byte-level BPE trainer (GPT-2, tiktoken): ``subtok train --model_type=byte_bpe``.

Phases:

1. *chunks* - every input line (line end included) is cut into chunks by
   the pre-tokenizer PREFIX.json will name, built by the tokenizer.json
   engine (:func:`pre_tokenizer`; ``--pattern``: ``gpt2``, ``r50k``,
   ``p50k``, ``cl100k``, ``o200k`` or a regex, see
   :mod:`subtok.pretokenizers.tiktoken_patterns`), and counted per
   distinct chunk in worker processes
   (:func:`subtok.training.families.count_pretokens`); with
   ``--add_prefix_space`` a line not starting with a space gets one first
   (the ByteLevel pre-tokenizer's rule, so ``gpt2`` only);
2. *symbols* - a chunk is its UTF-8 bytes (GPT-2's byte characters, one
   per byte), one symbol per byte; chunks of one byte have no pair and
   are dropped;
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
(:mod:`subtok.pretokenizers.byte_level`: space is ``Ġ``, newline ``Ċ``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from subtok.errors import TrainerError
from subtok.formats import hf_json
from subtok.formats.scored_vocab import scores_vocab
from subtok.formats.tiktoken import ranks_text
from subtok.pretokenizers.byte_level import BYTE_CHARS, text_to_bytes
from subtok.pretokenizers.hf import from_json as pre_tokenizer_from_json
from subtok.pretokenizers.tiktoken_patterns import GPT2_PATTERN, pattern_for
from subtok.progress import Progress
from subtok.training.units import sorted_by_count
from subtok.training.families import Trained, count_pretokens
from subtok.training.pair_merges import (Merge, PairTable, first_scores, merge_by_frequency,
                                         symbol_char)
from subtok.training.spec import TrainerOptions


class ChunkCounter:
    """Cuts lines into chunks and counts them, with the very pre-tokenizer
    the tokenizer.json engine builds from the trained file's
    ``pre_tokenizer`` (so training sees exactly the chunks encoding will).
    Chunks come out in GPT-2's byte characters, one character per byte."""

    def __init__(self, pre_tokenizer: dict) -> None:
        #: What decides the chunks: the header of their ``subtok count`` files.
        self.shape = {"units": "byte-level-chunks", "pre_tokenizer": pre_tokenizer}
        self.pre_tokenizer = pre_tokenizer_from_json(pre_tokenizer, "pre_tokenizer")

    def count(self, lines: list[tuple[str, int]]) -> Counter:
        """The chunks of ``(line, count)`` pairs, counted."""
        counts: Counter = Counter()
        split = self.pre_tokenizer.split
        for text, freq in lines:
            if freq == 1:
                counts.update(split(text))
            else:
                for piece in split(text):
                    counts[piece] += freq
        counts.pop("", None)
        return counts


def _count_chunk(counter: ChunkCounter, lines: list[tuple[str, int]]) -> Counter:
    """A counting task (module level: workers get it by reference)."""
    return counter.count(lines)


def pretoken_counter(options: TrainerOptions) -> tuple:
    """How training counts its chunks (:func:`subtok.training.families.pretoken_counter`)."""
    return _count_chunk, ChunkCounter(pre_tokenizer(options))


def initial_tokens(specials: list[str], ties: str) -> tuple[list[str], list[int]]:
    """(tokens before any merge, id of each byte value) for the --ties rule."""
    if ties == "tokenizers":
        tokens = list(dict.fromkeys([*specials, *sorted(BYTE_CHARS)]))
    else:
        tokens = list(BYTE_CHARS)
    index = {token: i for i, token in enumerate(tokens)}
    return tokens, [index[c] for c in BYTE_CHARS]


def symbol_words(chunks: Counter, byte_ids: list[int]) -> tuple[list[str], list[int]]:
    """Chunks (in byte characters) of two bytes or more as symbol strings,
    with their counts."""
    table = {ord(BYTE_CHARS[b]): symbol_char(byte_ids[b]) for b in range(256)}
    words, counts = [], []
    for chunk, count in sorted_by_count(chunks):
        if len(chunk) > 1:
            words.append(chunk.translate(table))
            counts.append(count)
    return words, counts


def train(options: TrainerOptions, progress: Progress, lines: Iterable | None) -> Trained:
    """Train byte-level BPE; return its tokens and files (see the module docstring)."""
    specials = list(options.special_tokens)
    chunks = count_pretokens(options, progress, lines, *pretoken_counter(options))
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
    """The tokenizer.json pre-tokenizer that splits as training does: GPT-2's
    ``ByteLevel``, or a ``Split`` by the pattern then ``ByteLevel`` without
    its own regex (the ``Split`` keeps the text between matches, as a
    ``Split`` with ``Isolated`` behaviour does)."""
    pattern = pattern_for(options.pattern)
    if pattern == GPT2_PATTERN:
        return hf_json.byte_level(options.add_prefix_space, True, True)
    split = {"type": "Split", "pattern": {"Regex": oniguruma_pattern(pattern)},
             "behavior": "Isolated", "invert": False}
    return hf_json.sequence("pre_tokenizer", [split, hf_json.byte_level(False, True, False)])


def _files(options: TrainerOptions, tokens: list[str], scores: list[float],
           merges: list[Merge]) -> dict[str, bytes]:
    """The three output files: tokenizer.json, the .tiktoken ranks and the scored .vocab."""
    specials = set(options.special_tokens)
    model = hf_json.bpe_model({token: i for i, token in enumerate(tokens)},
                              json_merges(tokens, merges),
                              continuing_subword_prefix=None, end_of_word_suffix=None)
    document = hf_json.tokenizer(
        model, added_tokens=[hf_json.added_token(i, t) for i, t in enumerate(tokens) if t in specials],
        pre_tokenizer=pre_tokenizer(options), post_processor=hf_json.byte_level(True, False),
        decoder=hf_json.byte_level(True, True))
    ranks = {text_to_bytes(t): i for i, t in enumerate(tokens) if t not in specials}
    return {".json": hf_json.json_bytes(document), ".tiktoken": ranks_text(ranks),
            ".vocab": scores_vocab(tokens, scores)}


__all__ = ["train", "ChunkCounter", "pretoken_counter", "initial_tokens", "json_merges", "pre_tokenizer",
           "oniguruma_pattern"]
