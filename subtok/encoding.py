"""The result of encoding one text with a ``tokenizer.json`` tokenizer,
named after ``tokenizers.Encoding`` where it overlaps.

``offsets`` are spans of the original text in characters (code points),
as the Python binding of ``tokenizers`` reports them; added special tokens
have (0, 0). ``word_ids`` give, per token, the index of the pre-token it
came from (None for special tokens added by the post-processor).
The command-line encoder asks for no offsets: then ``offsets`` and
``word_ids`` are None, and everything else is filled in.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Encoding:
    """Token ids and what goes with them, for one text (or pair)."""

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]] | None = None
    word_ids: list[int | None] | None = None
    type_ids: list[int] = field(default_factory=list)
    special_tokens_mask: list[int] = field(default_factory=list)
    attention_mask: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        count = len(self.ids)
        if not self.type_ids and count:
            self.type_ids = [0] * count
        if not self.special_tokens_mask and count:
            self.special_tokens_mask = [0] * count
        if not self.attention_mask and count:
            self.attention_mask = [1] * count

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def special(cls, ids: list[int], tokens: list[str], type_id: int, with_offsets: bool) -> Encoding:
        """Tokens a post-processor adds: special, offsets (0, 0), no word."""
        count = len(ids)
        return cls(list(ids), list(tokens), [(0, 0)] * count if with_offsets else None,
                   [None] * count if with_offsets else None, [type_id] * count, [1] * count,
                   [1] * count)

    def _fields(self) -> list[str]:
        names = ["ids", "tokens", "type_ids", "special_tokens_mask", "attention_mask"]
        return names + (["offsets", "word_ids"] if self.offsets is not None else [])

    def truncate(self, max_length: int, direction: str = "Right") -> None:
        """Keep the first (``Right``) or last (``Left``) ``max_length``
        tokens (``Encoding::truncate``; the overflowing parts are not kept)."""
        if max_length >= len(self.ids):
            return
        keep = slice(0, max_length) if direction == "Right" else slice(len(self.ids) - max_length, None)
        for name in self._fields():
            setattr(self, name, getattr(self, name)[keep])

    def pad(self, length: int, pad_id: int, pad_type_id: int, pad_token: str,
            direction: str = "Right") -> None:
        """Pad to ``length`` tokens with the pad token: special, not
        attended, offsets (0, 0), no word (``Encoding::pad``)."""
        count = length - len(self.ids)
        if count <= 0:
            return
        fill = {"ids": pad_id, "tokens": pad_token, "type_ids": pad_type_id,
                "special_tokens_mask": 1, "attention_mask": 0, "offsets": (0, 0), "word_ids": None}
        for name in self._fields():
            padding = [fill[name]] * count
            value = getattr(self, name)
            setattr(self, name, value + padding if direction == "Right" else padding + value)

    @classmethod
    def merge(cls, encodings: list[Encoding]) -> Encoding:
        """One encoding after the other; offsets are not shifted
        (``Encoding::merge`` with ``growing_offsets`` false)."""
        with_offsets = all(e.offsets is not None for e in encodings)
        out = cls([], [], [] if with_offsets else None, [] if with_offsets else None)
        for e in encodings:
            out.ids += e.ids
            out.tokens += e.tokens
            if with_offsets:
                out.offsets += e.offsets  # type: ignore[operator]
                out.word_ids += e.word_ids  # type: ignore[operator]
            out.type_ids += e.type_ids
            out.special_tokens_mask += e.special_tokens_mask
            out.attention_mask += e.attention_mask
        return out
