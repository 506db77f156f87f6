"""``Encoding``: a tiktoken-compatible byte-level BPE tokenizer.

The public methods are those of ``tiktoken.Encoding`` (same names, same
keyword-only options, same results, same errors for special-token text),
so code written for tiktoken runs on it. Underneath: the split pattern
(:mod:`subtok.pretokenizers.tiktoken_patterns`) cuts text into chunks,
each chunk is merged by :mod:`subtok.models.bytelevel.model`.

Speed comes from caching. Chunks repeat, so their tokens are cached; for
the named patterns, words between single spaces can be split on their own
(see ``RegexSplit.space_words``), so whole words are cached too and most
text never reaches the regex engine at all.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from itertools import chain
from typing import AbstractSet, Literal

import regex

from subtok.errors import DisallowedSpecialToken, ModelFileError, UnknownToken
from subtok.models.bytelevel.model import encode_piece
from subtok.pretokenizers.tiktoken_patterns import RegexSplit

_SURROGATE = re.compile("[\ud800-\udfff]")

SpecialSet = Literal["all"] | AbstractSet[str]


def valid_text(text: str) -> str:
    """``text`` with surrogates fixed as tiktoken's ``encode`` fixes them: a
    pair becomes its character, a lone one U+FFFD (text must become UTF-8)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class MemoCache(dict):
    """A dict that computes a missing value with ``compute`` and keeps it,
    until it holds ``limit`` entries (the frequent keys come early; a
    bounded cache keeps memory bounded on endless input). Lookups of
    present keys run at C speed (``map(cache.__getitem__, keys)``)."""

    __slots__ = ("compute", "limit")

    def __init__(self, compute, limit: int) -> None:
        super().__init__()
        self.compute = compute
        self.limit = limit

    def __missing__(self, key):
        value = self.compute(key)
        if len(self) < self.limit:
            self[key] = value
        return value


def disallowed_message(token: str) -> str:
    """tiktoken's message for special-token text that was not allowed."""
    return ("Encountered text corresponding to disallowed special token %r.\n"
            "If you want this text to be encoded as a special token, "
            "pass it to `allowed_special`, e.g. `allowed_special={%r, ...}`.\n"
            "If you want this text to be encoded as normal text, disable the check for this token "
            "by passing `disallowed_special=(enc.special_tokens_set - {%r})`.\n"
            "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
            % (token, token, token))


def special_regex(tokens: Iterable[str]) -> regex.Pattern:
    """A pattern matching any of ``tokens``, the longest first where one
    token starts another (tiktoken's order is a hash map's, so undefined)."""
    ordered = sorted(tokens, key=lambda token: (-len(token), token))
    return regex.compile("|".join(regex.escape(token) for token in ordered))


class Encoding:
    """A byte-level BPE encoding, with the interface of ``tiktoken.Encoding``."""

    #: Entries each cache may hold (see :class:`MemoCache`).
    cache_limit = 1 << 20

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: dict[bytes, int],
                 special_tokens: dict[str, int], explicit_n_vocab: int | None = None) -> None:
        self.name = name
        self.pat_str = pat_str
        self.mergeable_ranks = mergeable_ranks
        self.special_tokens = dict(special_tokens)
        self._decoder = dict(zip(mergeable_ranks.values(), mergeable_ranks.keys()))
        if len(self._decoder) != len(mergeable_ranks):
            raise ModelFileError("%s: two tokens have the same rank." % name)
        self.max_token_value = max(chain(mergeable_ranks.values(), special_tokens.values()))
        if explicit_n_vocab is not None and (
                len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab
                or self.max_token_value != explicit_n_vocab - 1):
            raise ModelFileError("%s: expected %d tokens with ids 0..%d." % (
                name, explicit_n_vocab, explicit_n_vocab - 1))
        for text, rank in self.special_tokens.items():
            self._decoder.setdefault(rank, text.encode("utf-8"))
        self.pretokenizer = RegexSplit(pat_str)
        self._reset_caches()

    def _reset_caches(self) -> None:
        ranks = self.mergeable_ranks
        self._chunks = MemoCache(lambda chunk: encode_piece(ranks, chunk.encode("utf-8")),
                                 self.cache_limit)
        self._first_words = MemoCache(self.encode_chunks, self.cache_limit)
        self._spaced_words = MemoCache(lambda word: self.encode_chunks(" " + word),
                                       self.cache_limit)

    def __repr__(self) -> str:
        return "<Encoding %r>" % self.name

    # -- pickling: the definition, not the caches ---------------------------
    def __getstate__(self) -> dict:
        return {"name": self.name, "pat_str": self.pat_str,
                "mergeable_ranks": self.mergeable_ranks, "special_tokens": self.special_tokens}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["name"], pat_str=state["pat_str"],
                      mergeable_ranks=state["mergeable_ranks"],
                      special_tokens=state["special_tokens"])

    @classmethod
    def from_file(cls, path, *, pattern: str | None = None,
                  special_tokens: dict[str, int] | str | None = None) -> Encoding:
        """Load a ``.tiktoken`` rank file (see ``subtok.formats.tiktoken.load_tiktoken``)."""
        from subtok.formats.tiktoken import load_tiktoken
        return load_tiktoken(path, pattern=pattern, special_tokens=special_tokens)

    # -- encoding ---------------------------------------------------------------
    def encode_chunks(self, text: str) -> tuple[int, ...]:
        """The tokens of valid text, split by the pattern (chunks cached, not
        the text itself: for callers that cache larger units)."""
        chunks = self._chunks
        return tuple(chain.from_iterable(map(chunks.__getitem__, self.pretokenizer.findall(text))))

    def _ordinary(self, text: str) -> list[int]:
        """encode_ordinary of text already made valid."""
        words = self.pretokenizer.space_words(text)
        if words is None:
            return list(self.encode_chunks(text))
        out = list(self._first_words[words[0]])
        out.extend(chain.from_iterable(map(self._spaced_words.__getitem__, words[1:])))
        return out

    def encode_ordinary(self, text: str) -> list[int]:
        """The tokens of ``text``, special-token text encoded as plain text."""
        return self._ordinary(valid_text(text))

    def encode(self, text: str, *, allowed_special: SpecialSet = set(),  # noqa: B006
               disallowed_special: Literal["all"] | Collection[str] = "all") -> list[int]:
        """The tokens of ``text``; special tokens in ``allowed_special`` become
        their ids, text spelling one in ``disallowed_special`` (by default
        every special token not allowed) raises :class:`DisallowedSpecialToken`
        (a ValueError) with tiktoken's message."""
        allowed = self.special_tokens_set if allowed_special == "all" else set(allowed_special)
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - allowed
        if disallowed_special:
            found = special_regex(disallowed_special).search(text)
            if found:
                raise DisallowedSpecialToken(disallowed_message(found.group()))
        text = valid_text(text)
        allowed &= self.special_tokens_set
        if not allowed:
            return self._ordinary(text)
        out: list[int] = []
        start = 0
        for found in special_regex(allowed).finditer(text):
            # The pattern sees each stretch between special tokens as a
            # whole text (its end is an end), as tiktoken's encode does.
            out.extend(self._ordinary(text[start:found.start()]))
            out.append(self.special_tokens[found.group()])
            start = found.end()
        out.extend(self._ordinary(text[start:]))
        return out

    def encode_batch(self, text: list[str], *, num_threads: int = 8,
                     allowed_special: SpecialSet = set(),  # noqa: B006
                     disallowed_special: Literal["all"] | Collection[str] = "all") -> list[list[int]]:
        """``encode`` of each text. ``num_threads`` is accepted for tiktoken's
        signature; threads cannot run Python in parallel, so the texts are
        encoded one after the other (``subtok encode --num_threads`` uses
        processes)."""
        return [self.encode(t, allowed_special=allowed_special,
                            disallowed_special=disallowed_special) for t in text]

    def encode_ordinary_batch(self, text: list[str], *, num_threads: int = 8) -> list[list[int]]:
        """``encode_ordinary`` of each text (see :meth:`encode_batch` on threads)."""
        return [self.encode_ordinary(t) for t in text]

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of text that is exactly one token (special tokens included);
        KeyError otherwise, as in tiktoken."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
        found = self.mergeable_ranks.get(data)
        if found is None:
            found = self.special_tokens.get(data.decode("utf-8", "replace"))
        if found is None:
            raise KeyError(data)
        return found

    # -- decoding ---------------------------------------------------------------
    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token (special tokens included)."""
        try:
            return self._decoder[token]
        except (KeyError, TypeError):
            raise UnknownToken("Invalid token for decoding: %s" % token) from None

    def decode_bytes(self, tokens: Iterable[int]) -> bytes:
        """The bytes of a token sequence."""
        if not isinstance(tokens, (list, tuple)):
            tokens = list(tokens)
        try:
            return b"".join(map(self._decoder.__getitem__, tokens))
        except (KeyError, TypeError):
            for token in tokens:
                self.decode_single_token_bytes(token)
            raise

    def decode(self, tokens: Iterable[int], errors: str = "replace") -> str:
        """The text of a token sequence; bytes that are not UTF-8 are
        handled by ``errors`` (default: U+FFFD, as tiktoken)."""
        return self.decode_bytes(tokens).decode("utf-8", errors)

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_batch(self, batch: Iterable[Iterable[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list[str]:
        return [self.decode(tokens, errors) for tokens in batch]

    # -- vocabulary ---------------------------------------------------------------
    def token_byte_values(self) -> list[bytes]:
        """The bytes of every mergeable token, sorted."""
        return sorted(self.mergeable_ranks)

    @property
    def eot_token(self) -> int:
        return self.special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    def is_special_token(self, token: int) -> bool:
        return token in self.special_tokens.values()

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken's definition)."""
        return self.max_token_value + 1
