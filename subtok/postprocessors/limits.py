"""Stored ``truncation`` and ``padding`` of a ``tokenizer.json``
(``tokenizers/src/utils/{truncation,padding}.rs``), applied by
:class:`~subtok.tokenizer.Tokenizer` around the post-processor as
``TokenizerImpl::post_process`` applies them. The command-line encoder
switches both off: a corpus encoder writes every token of every line."""

from __future__ import annotations

from dataclasses import dataclass

from subtok.encoding import Encoding
from subtok.errors import EncodeError, ModelFileError
from subtok.formats.json_fields import U32, count_field, field

_DIRECTIONS = ("Left", "Right")
_STRATEGIES = ("LongestFirst", "OnlyFirst", "OnlySecond")


def _direction(spec: dict, where: str) -> str:
    value = field(spec, "direction", str, where, "Right")
    if value not in _DIRECTIONS:
        raise ModelFileError("%s: direction must be Left or Right, not %r." % (where, value))
    return value


@dataclass
class Truncation:
    """``max_length``, ``strategy`` (LongestFirst, OnlyFirst, OnlySecond),
    ``direction``; ``stride`` only shapes the overflowing parts, which are
    not kept, but must stay below the length as in tokenizers."""

    max_length: int
    strategy: str = "LongestFirst"
    stride: int = 0
    direction: str = "Right"

    @classmethod
    def from_json(cls, spec: dict, where: str) -> Truncation:
        strategy = field(spec, "strategy", str, where)
        if strategy not in _STRATEGIES:
            raise ModelFileError("%s: unknown truncation strategy %r." % (where, strategy))
        return cls(count_field(spec, "max_length", where), strategy,
                   count_field(spec, "stride", where), _direction(spec, where))

    def apply(self, first: Encoding, second: Encoding | None, added: int) -> None:
        """Shorten the encodings in place; ``added`` special tokens will be
        added after (``truncate_encodings``)."""
        limit = self.max_length - added
        if limit < 0:
            raise EncodeError("truncation max_length %d leaves no room for %d special tokens."
                              % (self.max_length, added))
        total = len(first) + (len(second) if second is not None else 0)
        if limit and total <= limit:
            return
        if limit == 0:
            first.truncate(0, self.direction)
            if second is not None:
                second.truncate(0, self.direction)
            return
        if self.strategy == "LongestFirst":
            self._longest_first(first, second, limit, total)
            return
        target = first if self.strategy == "OnlyFirst" else second
        if target is None:
            raise EncodeError("truncation error: second sequence not provided.")
        if len(target) <= total - limit:
            raise EncodeError("truncation error: sequence to truncate too short to respect "
                              "max_length %d." % limit)
        self._cut(target, len(target) - (total - limit))

    def _cut(self, encoding: Encoding, length: int) -> None:
        if length < len(encoding) and self.stride >= length:
            raise EncodeError("truncation stride %d must be less than the length kept, %d."
                              % (self.stride, length))
        encoding.truncate(length, self.direction)

    def _longest_first(self, first: Encoding, second: Encoding | None, limit: int, total: int) -> None:
        if second is None:
            self._cut(first, limit)
            return
        short, long_ = sorted((len(first), len(second)))
        long_ = short if short > limit else max(short, limit - short)
        if short + long_ > limit:
            short, long_ = limit // 2, limit // 2 + limit % 2
        sizes = (short, long_) if len(first) <= len(second) else (long_, short)
        self._cut(first, sizes[0])
        self._cut(second, sizes[1])


@dataclass
class Padding:
    """``strategy`` ("BatchLongest": ``length`` None, or {"Fixed": n}),
    ``pad_to_multiple_of``, ``direction``, and the pad token's id, type id
    and string."""

    length: int | None
    multiple: int | None
    direction: str
    pad_id: int
    pad_type_id: int
    pad_token: str

    @classmethod
    def from_json(cls, spec: dict, where: str) -> Padding:
        strategy = spec.get("strategy")
        if strategy == "BatchLongest":
            length = None
        elif (isinstance(strategy, dict) and list(strategy) == ["Fixed"]
              and isinstance(strategy["Fixed"], int) and strategy["Fixed"] >= 0):
            length = strategy["Fixed"]
        else:
            raise ModelFileError("%s: padding strategy must be \"BatchLongest\" or {\"Fixed\": n}."
                                 % where)
        return cls(length, field(spec, "pad_to_multiple_of", int, where, None),
                   _direction(spec, where), count_field(spec, "pad_id", where, limit=U32),
                   count_field(spec, "pad_type_id", where, limit=U32), field(spec, "pad_token", str, where))

    def apply(self, encodings: list[Encoding]) -> None:
        """Pad every encoding to one length (``pad_encodings``)."""
        if not encodings:
            return
        length = self.length if self.length is not None else max(map(len, encodings))
        if self.multiple and length % self.multiple:
            length += self.multiple - length % self.multiple
        for encoding in encodings:
            encoding.pad(length, self.pad_id, self.pad_type_id, self.pad_token, self.direction)
