"""``subtok encode|decode|export-vocab`` on a tiktoken rank file.

The per-line encoder and decoder are :class:`~subtok.cli.batch.PerLine`
functions, so ``map_blocks`` runs them in one process or several
(``--num_threads``) with the same output.

Output formats: ``id`` (the token ids, as tiktoken returns them) and
``piece`` (each token's bytes in GPT-2's byte-to-character spelling, the
strings of ``tokenizers``' ``tokens``). Encoding treats special-token text
as text (``encode_ordinary``), so any input line can be encoded; decoding
writes the tokens' bytes as they are (``decode_bytes``), special tokens as
their text.
"""

from __future__ import annotations

import os
import re
from itertools import accumulate, count, repeat
from operator import add

from subtok.cli.batch import PerLine, map_blocks
from subtok.cli.streams import input_paths, open_output, read_blocks, write_blocks
from subtok.errors import DecodeError, SubtokError
from subtok.formats.tiktoken import load_tiktoken
from subtok.models.bytelevel.encoding import Encoding, MemoCache, valid_text
from subtok.models.bytelevel.model import encode_piece
from subtok.postprocessors.extra_options import ExtraOptions, for_tiktoken
from subtok.pretokenizers.byte_level import bytes_to_text, text_to_bytes
from subtok.pretokenizers.tiktoken_patterns import OTHER_WHITESPACE

OUTPUT_FORMATS = ("piece", "id")

__all__ = ["load_tiktoken", "TiktokenLineEncoder", "TiktokenLineDecoder",
           "decode_command", "export_vocab_command"]


def _check_format(value: str, choices: tuple[str, ...], what: str) -> bool:
    """True for ``id``; an unknown value is an error naming the choices."""
    if value not in choices:
        raise SubtokError("%s %s is not available for a tiktoken rank file (choose %s)."
                          % (what, value, " or ".join(choices)))
    return value == "id"


# Whitespace that takes a line off the word shortcut (see
# RegexSplit.space_words): any but a space or a newline, and spaces that
# are not single spaces between words. Found by one scan for a character
# class and three substring searches, much faster than one regex with
# alternatives; the class spelled out is faster than [^\S \n].
_OTHER_SPACE = re.compile("[%s]" % OTHER_WHITESPACE)
_SPACE_RUNS = ("  ", "\n ", " \n")


def awkward_offsets(text: str) -> list[int]:
    """Offsets of the whitespace that keeps lines of ``text`` off the shortcut."""
    found = [m.start() for m in _OTHER_SPACE.finditer(text)]
    for needle in _SPACE_RUNS:
        at = text.find(needle)
        while at >= 0:
            found.append(at + 1 if needle == "\n " else at)
            at = text.find(needle, at + 1)
    if text.startswith(" "):
        found.append(0)
    if text.endswith(" "):
        found.append(len(text) - 1)
    return sorted(found)


def _positions_of_none(values: list) -> list[int]:
    """Where ``values`` holds None (each search runs in C)."""
    found = []
    at = -1
    try:
        while True:
            at = values.index(None, at + 1)
            found.append(at)
    except ValueError:
        return found


def _text(data: bytes) -> str:
    """Input bytes as the text tiktoken would see: a byte that is not UTF-8
    becomes U+FFFD (``valid_text`` of its surrogate escape). UTF-8 that
    decodes strictly has no surrogates, so most input skips that search."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return valid_text(data.decode("utf-8", "surrogateescape"))


class TiktokenLineEncoder(PerLine):
    """One line of text -> its tokens, as ids or pieces, space-separated.

    The hot loop works on a whole block: its newlines become " \n" and
    ``split(" ")`` cuts it into words, so that a word that starts a line
    starts with a newline; each word's output text comes from a cache
    (a line-starting word's text starts with the newline), and the joined
    texts are the output lines once " \n" is made "\n" again (no output
    text has a space before a newline otherwise). A block of known words
    costs a few C-level passes and one dict lookup per word. Lines with
    other whitespace are cut by the split pattern one by one. Below the
    words, the output text of each chunk the pattern finds is cached too.
    """

    def __init__(self, encoding: Encoding, output_format: str = "piece",
                 extra: ExtraOptions | None = None) -> None:
        ids = _check_format(output_format, OUTPUT_FORMATS, "output format")
        #: --extra_options, if any, applied to each output line's fields
        #: (no token's text holds a space: ids are digits, pieces GPT-2's
        #: byte characters or a special token's text).
        self.extra = extra or None
        self.id_output = ids
        self.encoding = encoding
        self.findall = encoding.pretokenizer.findall
        self.shortcut = encoding.pretokenizer.space_separable
        if ids:
            id_texts = [str(token) for token in range(encoding.n_vocab)]
            self.token_text = id_texts.__getitem__
        else:
            self.token_text = lambda token: bytes_to_text(encoding.decode_single_token_bytes(token))
        ranks = encoding.mergeable_ranks
        self.chunks = MemoCache(
            lambda chunk: " ".join(map(self.token_text, encode_piece(ranks, chunk.encode("utf-8")))),
            encoding.cache_limit)
        self.words = MemoCache(self._word_text, encoding.cache_limit)
        #: (word, text) learnt since the last ``news``, kept only in workers.
        self.fresh: list[tuple[str, str]] | None = None

    def _text(self, text: str) -> str:
        """The output of ``text`` cut by the split pattern."""
        return " ".join(map(self.chunks.__getitem__, self.findall(text)))

    def _word_text(self, word: str) -> str:
        """"\nword": a word that starts a line; "word": one after a space."""
        if word[:1] == "\n":
            return "\n" + self._text(word[1:])
        return self._text(" " + word)

    def in_worker(self, workers: int) -> None:
        # Each worker keeps its share of the cache (see PerLine.in_worker)
        # and tells the others the words it learnt.
        self.words.limit = self.chunks.limit = self.encoding.cache_limit // workers
        if workers > 1:
            self.fresh = []

    def news(self) -> object:
        fresh, self.fresh = self.fresh, ([] if self.fresh is not None else None)
        return fresh or None

    def learn(self, news: object) -> None:
        if len(self.words) < self.words.limit:
            self.words.update(news)  # type: ignore[arg-type]

    def _fast(self, lines: str) -> str:
        """The output of lines (joined by newlines) that the shortcut takes.

        Words not yet cached come out of ``dict.get`` as None, which makes
        the join fail (a check it does anyway); only then does
        ``list.index`` find them (in C), and only they are learnt
        (together) and filled in. A block of known words costs one split,
        one lookup per word and one join."""
        words = ("\n" + lines.replace("\n", " \n")).split(" ")
        cache = self.words
        texts = list(map(cache.get, words))
        try:
            out = " ".join(texts)
        except TypeError:
            new = _positions_of_none(texts)
            self._learn({words[i] for i in new})
            for i in new:
                texts[i] = cache[words[i]]
            out = " ".join(texts)
        return out.replace(" \n", "\n")[1:]

    def _learn(self, words: set[str]) -> None:
        """Put the texts of new words in the cache, as many as fit (the
        others are computed where used). The words that follow a space go
        through the split pattern in one call, joined by spaces: their
        chunks are those of each " " + word in turn (see
        ``RegexSplit.space_words``), told apart by where their lengths add
        up to a word's end. Everything but the pattern runs in C."""
        cache = self.words
        room = cache.limit - len(cache)
        spaced = [word for word in words if word[:1] != "\n"][:room]
        if spaced:
            chunks = self.findall(" " + " ".join(spaced))
            texts = list(map(self.chunks.__getitem__, chunks))
            if len(chunks) != len(spaced):  # some words have several chunks
                cut = dict(zip(accumulate(map(len, chunks)), count(1)))
                ends = list(map(cut.__getitem__, accumulate(map(add, map(len, spaced), repeat(1)))))
                texts = list(map(" ".join, map(texts.__getitem__, map(slice, [0] + ends, ends))))
            cache.update(zip(spaced, texts))
            if self.fresh is not None:
                self.fresh.extend(zip(spaced, texts))
        for word in words:
            if word[:1] == "\n" and len(cache) < cache.limit:
                cache[word] = self._word_text(word)
                if self.fresh is not None:
                    self.fresh.append((word, cache[word]))

    def _parts(self, text: str) -> list[str]:
        """The outputs of runs of plain lines and of each awkward line."""
        if not self.shortcut:
            return list(map(self._text, text.split("\n")))
        out = []
        done = 0
        for offset in awkward_offsets(text):
            if offset < done:
                continue  # in a line already done
            start = text.rfind("\n", 0, offset) + 1
            end = text.find("\n", offset)
            end = len(text) if end < 0 else end
            if start > done:
                out.append(self._fast(text[done:start - 1]))
            out.append(self._text(text[start:end]))
            done = end + 1
        if done <= len(text):
            out.append(self._fast(text[done:]))
        return out

    def _with_options(self, line: str) -> str:
        """One output line with --extra_options applied."""
        fields = line.split(" ") if line else []
        ids, tokens = self.extra.apply(fields, fields)  # type: ignore[union-attr]
        return " ".join(map(str, ids)) if self.id_output else " ".join(tokens)

    def _lines(self, text: str) -> str:
        out = "\n".join(self._parts(text))
        if self.extra is None:
            return out
        return "\n".join(map(self._with_options, out.split("\n")))

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        return self._lines(_text(line)).encode("utf-8")

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        """The whole block at once; a failure (a byte the rank file lacks) is
        located by going over it line by line."""
        text = _text(block)
        try:
            out = self._lines(text)
        except SubtokError:
            return super().block(block, first_line)
        return (out + "\n").encode("utf-8")


class TiktokenLineDecoder(PerLine):
    """One line of space-separated ids or pieces -> the tokens' bytes."""

    def __init__(self, encoding: Encoding, input_format: str = "piece",
                 extra: ExtraOptions | None = None) -> None:
        self.ids = _check_format(input_format, OUTPUT_FORMATS, "input format")
        self.encoding = encoding
        #: --extra_options, applied to the line's tokens before decoding, as
        #: spm_decode applies them to its pieces; the BOS / EOS token is
        #: written as its text, as the encoder's piece output shows it.
        self.extra = extra or None

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        fields = line.decode("utf-8", "surrogateescape").split()
        if not self.ids:
            if self.extra is not None:
                _, fields = self.extra.apply(fields, fields)
            return b"".join(map(text_to_bytes, fields))
        try:
            tokens = list(map(int, fields))
        except ValueError:
            bad = next(f for f in fields if not f.lstrip("-").isdigit())
            raise DecodeError("%r is not an id." % bad) from None
        if self.extra is not None:
            tokens, _ = self.extra.apply(tokens, tokens)
        return self.encoding.decode_bytes(tokens)


def decode_command(model: str, pattern: str | None, special_tokens: str | None,
                   input_format: str, inputs: tuple[str, ...], files: tuple[str, ...],
                   output: str | None, num_threads: int, extra_options: str = "") -> None:
    """``subtok decode`` for a rank file."""
    encoding = load_tiktoken(model, pattern, special_tokens)
    extra = for_tiktoken(extra_options, encoding.special_tokens, model)
    decoder = TiktokenLineDecoder(encoding, input_format, extra)
    paths = input_paths(inputs, files)
    write_blocks(map_blocks(decoder, read_blocks(paths), num_threads), output)


def export_vocab_command(model: str, pattern: str | None, special_tokens: str | None,
                         output: str | None) -> None:
    """``subtok export-vocab`` for a rank file: ``piece<TAB>id`` per token
    in id order, special tokens as their text."""
    encoding = load_tiktoken(model, pattern, special_tokens)
    rows = [(rank, bytes_to_text(token)) for token, rank in encoding.mergeable_ranks.items()]
    rows += [(token_id, text) for text, token_id in encoding.special_tokens.items()]
    rows.sort()
    with open_output(output) as out:
        out.write("".join("%s\t%d\n" % (text, token_id) for token_id, text in rows)
                  .encode("utf-8", "surrogateescape"))


def reject_options(model: str, **given) -> None:
    """Options of the SentencePiece path that mean nothing for a rank file."""
    for name, value in given.items():
        if value:
            raise SubtokError("--%s is not available for a tiktoken rank file (%s)."
                              % (name, os.path.basename(model)))
