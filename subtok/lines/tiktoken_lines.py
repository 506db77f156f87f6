"""``subtok encode|decode|export-vocab`` on a tiktoken rank file.

The per-line encoder and decoder are :class:`~subtok.lines.batch.PerLine`
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
from collections import deque
from itertools import filterfalse, repeat
from operator import add

from subtok.errors import DecodeError, SubtokError
from subtok.formats.tiktoken import load_tiktoken
from subtok.lines.batch import PerLine, map_blocks
from subtok.lines.streams import input_paths, open_output, read_blocks, write_blocks
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


#: Put between texts that are joined, and split at afterwards: no output
#: text holds it (ids are digits, pieces GPT-2's byte characters, which
#: stand for byte 0 by U+0100).
_MARK = "\x00"
_MARKS = ("", _MARK)


class TiktokenLineEncoder(PerLine):
    """One line of text -> its tokens, as ids or pieces, space-separated.

    The hot loop works on a whole block: its newlines become " \n" and
    ``split(" ")`` cuts it into words, so that a word that starts a line
    starts with a newline; each word's output text comes from a cache
    and the block's output is their concatenation. A cached text starts
    with what goes before it in the output: a word after a space has " "
    before its tokens, a word starting a line "\n". A block of known
    words costs a few C-level passes and one dict lookup per word.

    Which lines the shortcut cannot take shows in the words themselves:
    a space at either end of a line or beside another leaves an empty
    word, and other whitespace stays inside a word; neither is ever
    cached, so such a block fails at its first unknown word and goes line
    by line (only a line starting with a space needs a search). Below the
    words, the output text of each chunk the split pattern finds is
    cached too, also with the space that goes before it.
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
        self.chunks = MemoCache(self._chunk_text, encoding.cache_limit)
        self.words = MemoCache(self._word_text, encoding.cache_limit)
        #: (word, text) learnt since the last ``news``, kept only in workers.
        self.fresh: list[tuple[str, str]] | None = None

    def _chunk_text(self, chunk: str) -> str:
        """" " and the tokens of one chunk."""
        return " " + " ".join(map(self.token_text,
                                  encode_piece(self.encoding.mergeable_ranks, chunk.encode("utf-8"))))

    def _learn_chunks(self, chunks: list[str]) -> None:
        """Put the texts of the new ones of ``chunks`` in the cache, as many
        as fit, in one pass (a chunk that is a token, most of them, is
        looked up in C)."""
        cache = self.chunks
        room = cache.limit - len(cache)
        if room <= 0:
            return
        # Not set.difference: given a dict subclass, it walks the whole cache.
        new = list(filterfalse(cache.__contains__, set(chunks)))[:room]
        whole = list(map(self.encoding.mergeable_ranks.get, map(str.encode, new)))
        if None not in whole:
            cache.update(zip(new, map(" ".__add__, map(self.token_text, whole))))
            return
        chunk_text = self._chunk_text
        cache.update(zip(new, [chunk_text(chunk) if token is None else " " + self.token_text(token)
                               for chunk, token in zip(new, whole)]))

    def _spaced_text(self, text: str) -> str:
        """The output of ``text`` cut by the split pattern, with the space
        each chunk's cached text starts with."""
        return "".join(map(self.chunks.__getitem__, self.findall(text)))

    def _text(self, text: str) -> str:
        """The output of ``text`` cut by the split pattern."""
        return self._spaced_text(text)[1:]

    def _word_text(self, word: str) -> str:
        """"\nword": a word that starts a line; "word": one after a space."""
        if word[:1] == "\n":
            return "\n" + self._text(word[1:])
        return self._spaced_text(" " + word)

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

    def _fast(self, lines: str) -> str | None:
        """The output of lines (joined by newlines) if the shortcut takes
        every one, else None.

        Words not yet cached come out of ``dict.get`` as None, which makes
        the join fail (a check it does anyway); only then does
        ``list.index`` find them (in C), and only they are learnt
        (together) and filled in. A block of known words costs one split,
        one lookup per word and one join."""
        words = ("\n" + lines.replace("\n", " \n")).split(" ")
        cache = self.words
        texts = list(map(cache.get, words))
        try:
            return "".join(texts)[1:]
        except TypeError:
            pass
        new = _positions_of_none(texts)
        fresh = set(map(words.__getitem__, new))
        if "" in fresh or _OTHER_SPACE.search("".join(fresh)):
            return None
        self._learn(fresh)
        deque(map(texts.__setitem__, new, map(cache.__getitem__, map(words.__getitem__, new))), 0)
        return "".join(texts)[1:]

    def _learn(self, words: set[str]) -> None:
        """Put the texts of new words in the cache, as many as fit (the
        others are computed where used). The words that follow a space go
        through the split pattern in one call, joined by spaces: their
        chunks are those of each " " + word in turn (see
        ``RegexSplit.space_words``), so a word starts at each chunk that
        starts with a space, and no other chunk holds one. Everything but
        the pattern runs in C."""
        cache = self.words
        room = max(0, cache.limit - len(cache))
        spaced = [word for word in words if word[:1] != "\n"][:room]
        if spaced:
            chunks = self.findall(" " + " ".join(spaced))
            self._learn_chunks(chunks)
            texts = map(self.chunks.__getitem__, chunks)
            if len(chunks) != len(spaced):  # some words have several chunks
                starts = map(_MARKS.__getitem__, map(str.startswith, chunks, repeat(" ")))
                texts = "".join(map(add, starts, texts)).split(_MARK)[1:]
            self._remember(zip(spaced, texts))
        lines = [word for word in words if word[:1] == "\n"][:max(0, cache.limit - len(cache))]
        if lines:
            self._remember(zip(lines, map(self._word_text, lines)))

    def _remember(self, learnt) -> None:
        """Cache (word, text) pairs; a worker also keeps them for :meth:`news`."""
        if self.fresh is None:
            self.words.update(learnt)
        else:
            learnt = list(learnt)
            self.words.update(learnt)
            self.fresh.extend(learnt)

    def _parts(self, text: str) -> list[str]:
        """The outputs of runs of plain lines and of each awkward line."""
        if not self.shortcut:
            return list(map(self._text, text.split("\n")))
        # Carriage returns and tabs, the commonest other whitespace, are
        # searched for first (as fast as memchr), so that text full of them
        # skips the attempt.
        if text[:1] != " " and "\n " not in text and "\r" not in text and "\t" not in text:
            out = self._fast(text)
            if out is not None:
                return [out]
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
    extra = for_tiktoken(extra_options, encoding.special_tokens, model, DecodeError)
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
