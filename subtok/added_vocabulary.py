"""Added tokens of a ``tokenizer.json``: cut out of the text before the
model sees it (``tokenizers/src/tokenizer/added_vocabulary.rs``).

Tokens with ``normalized: false`` are found in the raw text first; the
rest of the text is normalized, and tokens with ``normalized: true`` are
then found in it, written as the normalizer writes their content. Matching
is leftmost-longest over all contents at once (the Aho-Corasick automaton
of tokenizers), non-overlapping, scanning on from the end of each match;
then, per match:

- ``single_word``: dropped unless no word character touches it on either
  side (Rust regex ``\\w``);
- ``lstrip``: also takes the whitespace before it (not what an earlier
  match took); ``rstrip``: also takes the whitespace after it.

Ids are given as ``tokenizers`` gives them when it reads the file (not as
the file says): the model's id for a content it has, else the next id
from the model's vocabulary size on, in file order.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from subtok.errors import ModelFileError
from subtok.formats.json_fields import U32, count_field, field
from subtok.normalizers.aligned import AlignedString
from subtok.patterns import cover

#: Rust regex's Unicode ``\w``.
_WORD = r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]"
_ENDS_WITH_WORD = regex.compile(_WORD + r"\Z")
_STARTS_WITH_WORD = regex.compile(_WORD)
_SPACES_AT_END = regex.compile(r"\s*\Z")
_SPACES_AT_START = regex.compile(r"\s*")


@dataclass(frozen=True)
class AddedToken:
    """One entry of ``added_tokens``."""

    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True
    special: bool = False

    @classmethod
    def from_json(cls, spec: object, where: str) -> AddedToken:
        """Every field is required, as in tokenizers; ``id`` is read and
        checked, though ids are given anew (see the module docstring)."""
        if not isinstance(spec, dict):
            raise ModelFileError("%s: an added token must be a JSON object." % where)
        count_field(spec, "id", where, limit=U32)
        flags = {name: field(spec, name, bool, where)
                 for name in ("single_word", "lstrip", "rstrip", "normalized", "special")}
        return cls(field(spec, "content", str, where), **flags)


#: A piece of text after added tokens are cut out: the text, and the
#: added token's id when it is one (else None).
Split = tuple[AlignedString, "int | None"]


class AddedVocabulary:
    """The added tokens, their ids, and the two matchers."""

    def __init__(self, tokens: list[AddedToken], model, normalizer) -> None:
        self.ids: dict[str, int] = {}
        self.tokens: dict[int, AddedToken] = {}
        self.normalized_forms: dict[int, str] = {}
        next_id = model.get_vocab_size()
        for token in tokens:
            if not token.content or self.tokens.get(self.ids.get(token.content, -1)) == token:
                continue
            token_id = self.ids.get(token.content)
            if token_id is None:
                token_id = model.token_to_id(token.content)
            if token_id is None:
                token_id, next_id = next_id, next_id + 1
            if token.normalized and normalizer is not None:
                written = normalizer.normalize(token.content)
                if written != token.content:
                    self.normalized_forms[token_id] = written
            self.ids[token.content] = token_id
            self.tokens[token_id] = token
        self.special = {t.content for t in self.tokens.values() if t.special}
        self._raw = _Matcher({t.content: i for i, t in self.tokens.items() if not t.normalized})
        self._normalized = _Matcher({self.normalized_forms.get(i, t.content): i
                                     for i, t in self.tokens.items() if t.normalized})

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def token_string(self, token_id: int) -> str | None:
        """How an added token is written for decoding (its normalized form
        when it has one: ``simple_id_to_token``)."""
        token = self.tokens.get(token_id)
        if token is None:
            return None
        return self.normalized_forms.get(token_id, token.content)

    def extract(self, text: str, normalizer, track: bool) -> list[Split]:
        """The text cut at added tokens and normalized between them
        (``extract_and_normalize``); empty pieces are dropped."""
        pieces = self._cut(AlignedString.original(text, track=track), self._raw)
        out: list[Split] = []
        for piece, token_id in pieces:
            if token_id is not None:
                out.append((piece, token_id))
                continue
            if normalizer is not None:
                normalizer.normalize_aligned(piece)
            out.extend(self._cut(piece, self._normalized))
        return [(p, i) for p, i in out if p.text]

    def normalized_if_plain(self, text: str, normalizer) -> str | None:
        """``text`` normalized, when no added token is cut out of it (then
        :meth:`extract` gives this one piece, or nothing if it is empty);
        else None. Cheaper than :meth:`extract` for many short texts."""
        if self._raw and self._raw.pattern.search(text):
            return None
        value = normalizer.normalize(text) if normalizer is not None else text
        if self._normalized and self._normalized.pattern.search(value):
            return None
        return value

    def _cut(self, piece: AlignedString, matcher: _Matcher) -> list[Split]:
        value = piece.text
        if not value or not matcher:
            return [(piece, None)]
        spans = self._spans(value, matcher)
        if len(spans) == 1 and spans[0][1] is None:
            return [(piece, None)]
        return [(piece.slice(b, e), token_id) for b, e, token_id in spans if b < e]

    def _spans(self, text: str, matcher: _Matcher) -> list:
        """``find_matches``: (start, end, id or None) pieces covering ``text``."""
        return cover(self._kept(text, matcher), len(text), None)

    def _kept(self, text: str, matcher: _Matcher) -> list[tuple[int, int, int]]:
        """The matches that stay, widened by lstrip/rstrip."""
        out = []
        done = 0
        for begin, stop, token_id in matcher.matches(text):
            token = self.tokens[token_id]
            if token.single_word and ((begin and _ENDS_WITH_WORD.search(text, 0, begin))
                                      or (stop < len(text) and _STARTS_WITH_WORD.match(text, stop))):
                continue
            if token.lstrip:
                begin = max(_SPACES_AT_END.search(text, 0, begin).start(), done)
            if token.rstrip:
                stop = _SPACES_AT_START.match(text, stop).end()
            out.append((begin, stop, token_id))
            done = stop
        return out


class _Matcher:
    """Leftmost-longest, non-overlapping matching of a set of strings: an
    alternation, longest first, so the first alternative that matches at
    the leftmost place is the longest one there."""

    def __init__(self, ids: dict[str, int]) -> None:
        self.ids = ids
        ordered = sorted(ids, key=lambda s: (-len(s), s))
        self.pattern = regex.compile("|".join(map(regex.escape, ordered))) if ids else None

    def __bool__(self) -> bool:
        return self.pattern is not None

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        ids = self.ids
        return [(m.start(), m.end(), ids[m.group()]) for m in self.pattern.finditer(text)]
