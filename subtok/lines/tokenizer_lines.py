"""``subtok encode/decode/export-vocab`` with a Hugging Face ``tokenizer.json``.

The commands find out from the model file's content which kind it is
(:func:`subtok.formats.load_any`) and hand a :class:`~subtok.tokenizer.Tokenizer`
to the functions here. Lines are what lies between ``\\n`` bytes, as for
SentencePiece models; bytes that are not UTF-8 become U+FFFD (Python's
"replace": one per maximal invalid sequence) before encoding, since
``tokenizers`` takes only valid text.

Output per input line: the token ids, or the token strings, separated by
spaces; ``tokenizers``' ``encode`` default adds the post-processor's
special tokens (``--no-add_special_tokens`` leaves them out). Stored
``truncation`` and ``padding`` apply as in ``encode`` (each line is one
encoding); ``--no-stored_limits`` writes every token of every line (see
docs/tokenizer-json.md).
"""

from __future__ import annotations

from itertools import islice

from subtok.errors import DecodeError, EncodeError
from subtok.lines.batch import PerLine, map_blocks
from subtok.lines.streams import open_output, read_blocks, write_blocks
from subtok.models.tokens import CACHE_LIMIT
from subtok.postprocessors.extra_options import ExtraOptions
from subtok.regularization import line_rng
from subtok.tokenizer import Tokenizer


def _text(line: bytes) -> str:
    return line.decode("utf-8", "replace")


class TokenizerLineEncoder(PerLine):
    """One line of text -> one line of ids or tokens."""

    def __init__(self, tokenizer: Tokenizer, output_format: str, add_special_tokens: bool = True,
                 seed: int | None = None, extra: ExtraOptions | None = None) -> None:
        if output_format not in ("piece", "id"):
            raise EncodeError("output format %s is not available for a tokenizer.json "
                              "(choose piece or id)." % output_format)
        self.tokenizer = tokenizer
        self.ids = output_format == "id"
        self.add_special_tokens = add_special_tokens
        # BPE-dropout draws per line from (seed, line number), so the
        # output does not depend on how lines are shared among workers.
        self.seed = seed
        self.numbered = seed is not None and getattr(tokenizer.model, "dropout", None) is not None
        self.extra = extra or None  # --extra_options, if any
        # The per-piece cache shows each line as the model gives it; lines
        # that --extra_options rewrites take the plain path.
        self.units = (_SpaceUnits.for_tokenizer(tokenizer, self.ids, add_special_tokens)
                      if self.extra is None else None)

    def stored_limits(self) -> list[str]:
        return [name for name, value in (("truncation", self.tokenizer.truncation),
                                         ("padding", self.tokenizer.padding)) if value is not None]

    def encode_text(self, text: str) -> str:
        units = self.units
        if units is not None and units.fits(text):
            shown = units.line(text)
            if shown is not None:
                return shown
        encoding = self.tokenizer.encode_fast(text, add_special_tokens=self.add_special_tokens)
        ids, tokens = encoding.ids, encoding.tokens
        if self.extra is not None:
            ids, tokens = self.extra.apply(ids, tokens)
        return " ".join(map(str, ids)) if self.ids else " ".join(tokens)

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        if self.numbered:
            self.tokenizer.model.rng = line_rng(self.seed, number)  # type: ignore[arg-type]
        return self.encode_text(_text(line)).encode("utf-8", "surrogatepass")

    def block(self, block: bytes, first_line: int = 1) -> bytes:
        """A whole block decoded and re-encoded at once (invalid UTF-8 never
        spans a newline, so this equals decoding line by line)."""
        if self.numbered:
            return super().block(block, first_line)
        lines = _text(block).split("\n")
        try:
            if self.units is not None:
                self.units.learn(lines)
            out = "\n".join(map(self.encode_text, lines))
        except EncodeError:
            return super().block(block, first_line)
        return (out + "\n").encode("utf-8", "surrogatepass")


class _SpaceUnits:
    """Output text per piece of a line cut before each space, remembered:
    for a tokenizer that encodes such pieces alone as in the line
    (:meth:`Tokenizer.space_cuts`), a line that holds no whitespace but
    single spaces inside is one C-level ``split``, dictionary lookups and
    a ``join``, instead of the pre-tokenizer's regex and a Python call per
    word. Pieces are stored without their space; unless the tokenizer is
    of the prepended kind, the first piece of a line is kept apart from
    the others, which are encoded with their space in front."""

    def __init__(self, tokenizer: Tokenizer, ids: bool, prepended: bool, ends: frozenset[str] | None,
                 before: str, after: str) -> None:
        self.tokenizer = tokenizer
        self.ids = ids
        self.ends = ends
        self.prepended = prepended
        self.before = before
        self.after = after
        self.first: dict[str, str | None] = {}
        self.rest: dict[str, str | None] = self.first if prepended else {}
        #: pieces whose encoding alone differs (an added token in a
        #: prepended piece), and pieces after which a line cannot be cut
        self.unsafe: set[str] = set()
        self.no_cut: set[str] = set()

    @classmethod
    def for_tokenizer(cls, tokenizer: Tokenizer, ids: bool, add_special_tokens: bool) -> _SpaceUnits | None:
        cuts = tokenizer.space_cuts()
        if cuts is None:
            return None
        wrapping = tokenizer.special_wrapping(add_special_tokens)
        if wrapping is None:
            return None
        before = wrapping[0] if ids else wrapping[1]
        after = wrapping[2] if ids else wrapping[3]
        return cls(tokenizer, ids, cuts[0], cuts[1], " ".join(map(str, before)), " ".join(map(str, after)))

    @staticmethod
    def fits(line: str) -> bool:
        """Only single spaces, none at the ends, and no other whitespace
        (every whitespace character is unprintable for Python)."""
        return line.isprintable() and "  " not in line and line[:1] != " " and line[-1:] != " "

    def learn(self, lines: list[str]) -> None:
        """Encode, all at once, the pieces of these lines not yet known."""
        first, rest = set(), set()
        fits = self.fits
        for line in lines:
            if fits(line):
                head, _, tail = line.partition(" ")
                first.add(head)
                if tail:
                    rest.update(tail.split(" "))
        if self.prepended:
            first |= rest
            rest = set()
        # difference, not difference_update: that one walks the whole cache
        first = first.difference(self.first)
        rest = rest.difference(self.rest)
        if len(self.first) + len(first) + len(rest) > CACHE_LIMIT:
            self.first.clear()
            self.rest.clear()
            self.unsafe.clear()
            self.no_cut.clear()
        new_first, new_rest = list(first), list(rest)
        found = self.tokenizer.encode_pieces(new_first + [" " + piece for piece in new_rest])
        texts = list(map(self._shown, found))
        self.first.update(zip(new_first, texts))
        self.rest.update(zip(new_rest, texts[len(new_first):]))
        if self.prepended:
            ends = self.ends
            self.unsafe.update(piece for piece, (_, _, added) in zip(new_first, found) if added)
            if ends is not None:
                self.no_cut.update(piece for piece in new_first if not piece or piece[-1] not in ends)

    def _shown(self, found: tuple[list[int], list[str], bool]) -> str | None:
        ids, tokens, _ = found
        if not ids:
            return None  # nothing, not an empty token
        return " ".join(map(str, ids)) if self.ids else " ".join(tokens)

    def line(self, text: str) -> str | None:
        """The output line for ``text``, which :meth:`fits`; None when it
        cannot be cut (see ``unsafe``)."""
        parts = text.split(" ")
        try:
            shown = [self.first[parts[0]]]
            shown += map(self.rest.__getitem__, islice(parts, 1, None))
        except KeyError:
            self.learn([text])
            return self.line(text)
        if self.unsafe and not self.unsafe.isdisjoint(parts):
            return None
        if self.no_cut and len(parts) > 1 and not self.no_cut.isdisjoint(islice(parts, len(parts) - 1)):
            return None
        if self.before:
            shown.insert(0, self.before)
        if self.after:
            shown.append(self.after)
        if None in shown:
            shown = [part for part in shown if part is not None]
        return " ".join(shown)


class TokenizerLineDecoder(PerLine):
    """One line of ids or tokens -> one line of text."""

    def __init__(self, tokenizer: Tokenizer, input_format: str, skip_special_tokens: bool = True,
                 extra: ExtraOptions | None = None) -> None:
        if input_format not in ("piece", "id"):
            raise DecodeError("unknown input format: %s (choose piece or id)." % input_format)
        self.tokenizer = tokenizer
        self.ids = input_format == "id"
        self.skip_special_tokens = skip_special_tokens
        # --extra_options, applied to the ids before decoding as spm_decode
        # applies them to the pieces (SentencePieceProcessor::Decode calls
        # ApplyExtraOptions first): the BOS / EOS token is what encode adds.
        self.extra = extra or None

    def _id(self, field: str) -> int:
        if self.ids:
            try:
                value = int(field)
            except ValueError:
                raise DecodeError("%r is not an id." % field) from None
            if value < 0:
                raise DecodeError("%r is not an id." % field)
            return value
        found = self.tokenizer.token_to_id(field)
        if found is None:
            raise DecodeError("%r is not a token of this tokenizer." % field)
        return found

    def __call__(self, line: bytes, number: int = 1) -> bytes:
        ids = [self._id(f) for f in _text(line).split(" ") if f]
        if self.extra is not None:
            ids, _ = self.extra.apply(ids, ids)
        text = self.tokenizer.decode(ids, skip_special_tokens=self.skip_special_tokens)
        return text.encode("utf-8", "surrogatepass")


def decode_lines(tokenizer: Tokenizer, paths: list[str], output: str | None, input_format: str,
                 skip_special_tokens: bool, num_threads: int,
                 extra: ExtraOptions | None = None) -> None:
    """``subtok decode`` for a tokenizer.json."""
    decoder = TokenizerLineDecoder(tokenizer, input_format, skip_special_tokens, extra)
    write_blocks(map_blocks(decoder, read_blocks(paths), num_threads), output)


def vocab_text(tokenizer: Tokenizer, output_format: str) -> str:
    """``subtok export-vocab``: ``token<TAB>score`` (``vocab``) or
    ``token<TAB>id`` (``syms``) per line, by id, added tokens included.
    Only a Unigram model has scores; others show 0."""
    scores = {}
    pieces = getattr(tokenizer.model, "pieces", None)
    if pieces is not None:
        scores = {i: score for i, (_, score) in enumerate(pieces)}
    rows = sorted(tokenizer.get_vocab().items(), key=lambda kv: (kv[1], kv[0]))
    if output_format == "syms":
        return "".join("%s\t%d\n" % (token, i) for token, i in rows)
    return "".join("%s\t%r\n" % (token, scores.get(i, 0)) for token, i in rows)


def export_vocab(tokenizer: Tokenizer, output: str | None, output_format: str) -> None:
    """``subtok export-vocab`` for a tokenizer.json."""
    text = vocab_text(tokenizer, output_format)
    with open_output(output) as out:
        out.write(text.encode("utf-8", "surrogatepass"))


__all__ = ["TokenizerLineEncoder", "TokenizerLineDecoder", "decode_lines",
           "export_vocab", "vocab_text"]
