"""Text normalization exactly as SentencePiece's ``Normalizer`` does it.

Normalization runs in steps over the input. Each step consumes a prefix of
the remaining text and emits a replacement:

1. the longest user-defined symbol that is a prefix, emitted unchanged;
2. else the longest charsmap key that is a prefix, emitted as its target;
3. else one character, unchanged; an invalid UTF-8 byte becomes U+FFFD.

The step outputs are then joined under the whitespace rules of the
NormalizerSpec (skip leading spaces, add the dummy prefix, collapse runs of
spaces, escape " " as "▁", drop trailing whitespace).

We work on ``str``. Input bytes are decoded with ``surrogateescape`` so every
invalid byte is one lone surrogate (U+DC80..U+DCFF); that is exactly the
unit SentencePiece replaces by one U+FFFD. Offsets are tracked in code
points of that string and turned into byte offsets by the caller.

Speed: most lines contain no character that any rule could touch. A regex
character class of such "trigger" characters (single-character keys, every
non-first character of longer keys, first characters of user-defined
symbols, lone surrogates) finds them; a line without any takes a fast path
made of ``str.split``/``join``, and a line with some skips straight to the
positions where a rule can start. A rule can only start at a trigger or
right before one, because the second character of a multi-character key is
itself a trigger.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from subtok.normalizers.bytewise import ByteSteps, char_offsets, needs_bytes
from subtok.normalizers.charsmap import CharsMap, DictRules, load_rules
from subtok.symbols import SPACE_SYMBOL  # "▁", SentencePiece's escaped space (re-exported)

_SPACE_RUN = re.compile(" {2,}")


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """A regex character class of code point ranges (see
    :func:`~subtok.normalizers.charsmap.char_ranges`)."""
    return "".join(re.escape(chr(lo)) if lo == hi else
                   "%s-%s" % (re.escape(chr(lo)), re.escape(chr(hi))) for lo, hi in ranges)


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping or adjacent ranges joined: the runs of
    consecutive code points of their union."""
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(lo, hi) for lo, hi in merged]


class Normalizer:
    """Normalize text with a charsmap dict and the NormalizerSpec flags."""

    def __init__(
        self,
        rules: dict[str, str] | CharsMap | DictRules,
        *,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined_symbols: Iterable[str] = (),
    ) -> None:
        self.rules = rules if hasattr(rules, "longest_match") else DictRules(rules)
        self.user_defined = frozenset(s for s in user_defined_symbols if s)
        #: True where only bytes can say what sentencepiece makes of a text
        #: (see :mod:`subtok.normalizers.bytewise`): every text then takes
        #: the byte path, none the fast ones.
        self.bytewise = not self.rules.regular or needs_bytes(self.user_defined)
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        self.space = SPACE_SYMBOL if escape_whitespaces else " "
        self._max_user = max(map(len, self.user_defined), default=0)
        # On the byte path every character counts as a trigger (and the
        # rules' trigger characters may be no characters at all). The
        # triggers are handled as ranges of code points: a table has
        # thousands of trigger characters but a few hundred ranges.
        triggers = _merge([*(() if self.bytewise else self.rules.trigger_ranges),
                           *((ord(s[0]), ord(s[0])) for s in self.user_defined),
                           (0xD800, 0xDFFF)])
        #: The astral trigger characters (see :meth:`_next_trigger`).
        self._astral_triggers = frozenset(chr(point) for lo, hi in triggers if hi > 0xFFFF
                                          for point in range(max(lo, 0x10000), hi + 1))
        # ``re`` tests a class of BMP characters with a bitmap but a class
        # with astral ones range by range: screen with the BMP triggers plus
        # "any astral character", and look closer only when one is found.
        bmp = [(lo, min(hi, 0xFFFF)) for lo, hi in triggers if lo <= 0xFFFF]
        #: Finds nothing in a text that is plain (see :meth:`is_plain`).
        self.screen = re.compile("[%s\U00010000-\U0010ffff]" % _char_class(bmp)
                                 if not self.bytewise else "(?s:.)").search
        #: True if no printable ASCII character is a trigger (the usual
        #: case: rules touch ASCII control characters only), so that
        #: ``text.isascii() and text.isprintable()`` proves ``text`` plain.
        self.printable_ascii_plain = not self.bytewise and not any(
            lo <= 0x7E and hi >= 0x20 for lo, hi in triggers)
        self._prefix = self.space if add_dummy_prefix and not treat_whitespace_as_suffix else ""
        self._suffix = self.space if add_dummy_prefix and treat_whitespace_as_suffix else ""
        #: The strings the whole-sentence algorithm adds and looks for,
        #: as str and (for the byte path) as UTF-8.
        self._text_forms = _Forms(" ", self.space, self._prefix, self._suffix)
        self._byte_forms = _Forms(*(form.encode("utf-8") for form in self._text_forms))
        self._space_aliases: tuple[str, ...] | None = () if self.bytewise else None
        self._bytes = ByteSteps(self.rules, self.user_defined) if self.bytewise else None
        #: True when a plain line (:meth:`is_plain`) without "▁" normalizes
        #: to "▁" + each of its non-empty parts between spaces, joined: its
        #: words can be read from its spaces (a "▁" in front, runs of spaces
        #: made one "▁", prefix mode, and the space itself touched by no
        #: rule). The training counter and the CLI's line encoder both rely
        #: on it.
        self.plain_words_at_spaces = (add_dummy_prefix and remove_extra_whitespaces
                                      and escape_whitespaces and not treat_whitespace_as_suffix
                                      and self.is_plain(" "))

    @classmethod
    def from_spec(cls, spec, *, treat_whitespace_as_suffix: bool = False,
                  user_defined_symbols: Iterable[str] = ()) -> "Normalizer":
        """The normalizer of a model's NormalizerSpec (its compiled
        charsmap and flags; see ``subtok.formats.sentencepiece``)."""
        return cls(load_rules(spec.precompiled_charsmap),
                   add_dummy_prefix=spec.add_dummy_prefix,
                   remove_extra_whitespaces=spec.remove_extra_whitespaces,
                   escape_whitespaces=spec.escape_whitespaces,
                   treat_whitespace_as_suffix=treat_whitespace_as_suffix,
                   user_defined_symbols=user_defined_symbols)

    # -- public ---------------------------------------------------------
    def normalize(self, text: str) -> str:
        """Return the normalized text (no offsets)."""
        if not text:
            return ""
        if self._bytes is not None:
            data = self._assemble(self._bytes.steps(_raw(text)), None, self._byte_forms)
            return data.decode("utf-8", "surrogateescape")
        if self.is_plain(text):
            return self._normalize_plain(text)
        return self._normalize_steps(text, None)

    def is_plain(self, text: str) -> bool:
        """True if no rule or user-defined symbol can apply anywhere in ``text``."""
        # Printable ASCII proves it where no such character is a trigger
        # (printable_ascii_plain), quicker than the search for triggers.
        if self.printable_ascii_plain and text.isascii() and text.isprintable():
            return True
        return self._bytes is None and self._next_trigger(text, 0) < 0

    def resolve_spaces(self, text: str) -> str:
        """``text`` with each *space alias* already made a plain space.

        An alias is a character that the rules turn into one space and that
        takes part in no other rule and no user-defined symbol (nmt_nfkc's
        no-break space, tab, "▁"...), so the normalized text stays the same
        (offsets aside). A line whose only rule-touched characters were
        such aliases becomes plain: the CLI's fast line path takes it
        instead of normalizing it character by character. A newline is
        left alone (no line holds one), so this works on a block of lines.
        """
        for alias in self.space_aliases():
            if alias in text:
                text = text.replace(alias, " ")
        return text

    def space_aliases(self) -> tuple[str, ...]:
        """See :meth:`resolve_spaces`; found on first use."""
        if self._space_aliases is None:
            users = self.user_defined
            found = set() if any(" " in s for s in users) else self.rules.lone_space_chars()
            self._space_aliases = tuple(sorted(c for c in found if c != "\n"
                                               and not any(c in s for s in users)))
        return self._space_aliases

    def normalize_with_offsets(self, text: str) -> tuple[str, list[int]]:
        """Return (normalized, norm_to_orig).

        ``norm_to_orig[i]`` is the index in ``text`` of the character that
        produced normalized character ``i``; one extra entry at the end holds
        the position where consumption stopped.
        """
        offsets: list[int] = []
        if self._bytes is not None and text:
            data = _raw(text)
            normalized = self._assemble(self._bytes.steps(data), offsets, self._byte_forms)
            return char_offsets(normalized, offsets, text)
        normalized = self._normalize_steps(text, offsets) if text else ""
        # Empty or all-space input stops before any offset is recorded;
        # sentencepiece 0.2.3 reports [0] then.
        return normalized, offsets or [0]

    # -- fast path ------------------------------------------------------
    def _normalize_plain(self, text: str) -> str:
        """Whitespace rules only: valid when no rule can apply to ``text``."""
        space = self.space
        if not self.remove_extra_whitespaces:
            body = text.replace(" ", space) if self.escape_whitespaces else text
            return self._prefix + body + self._suffix
        tokens = list(filter(None, text.split(" ")))
        if not tokens:
            return ""
        out = (self._prefix + space.join(tokens)).rstrip(space)
        return out + self._suffix

    # -- general path ---------------------------------------------------
    def _step(self, text: str, i: int) -> tuple[str, int]:
        """One normalization step at ``i``: (output, characters consumed)."""
        n = len(text)
        if self._max_user:
            for length in range(min(self._max_user, n - i), 0, -1):
                if text[i:i + length] in self.user_defined:
                    return text[i:i + length], length
        match = self.rules.longest_match(text, i)
        if match is not None:
            return match
        char = text[i]
        if "\ud800" <= char <= "\udfff":
            return "\ufffd", 1
        return char, 1

    def _next_trigger(self, text: str, start: int) -> int:
        """Index of the first trigger character at or after ``start``, or -1."""
        screen = self.screen
        triggers = self._astral_triggers
        while True:
            found = screen(text, start)
            if found is None:
                return -1
            at = found.start()
            if found.group() <= "\uffff" or text[at] in triggers:
                return at
            start = at + 1

    def _steps(self, text: str, runs: bool = False) -> Iterator[tuple[str, int]]:
        """All steps over ``text``, skipping quickly over rule-free runs.

        With ``runs``, a rule-free stretch comes as one step (its text and
        length) instead of one step per character: enough when no offsets
        are wanted. Runs of spaces inside it are collapsed here already
        when extra whitespace goes, which is what the per-character steps
        would come to.
        """
        i, n = 0, len(text)
        collapse = self.remove_extra_whitespaces
        while i < n:
            at = self._next_trigger(text, i)
            stop = n if at < 0 else max(i, at - 1)
            if runs:
                if stop > i:
                    run = text[i:stop]
                    if collapse and "  " in run:
                        run = _SPACE_RUN.sub(" ", run)
                    yield run, stop - i
            else:
                for char in text[i:stop]:
                    yield char, 1
            i = stop
            if i < n:
                output, length = self._step(text, i)
                yield output, length
                i += length

    def _normalize_steps(self, text: str, offsets: list[int] | None) -> str:
        """SentencePiece's whole-sentence algorithm over the steps of ``text``."""
        return self._assemble(self._steps(text, offsets is None), offsets, self._text_forms)

    def _assemble(self, steps, offsets: list[int] | None, forms: "_Forms"):
        """SentencePiece's whole-sentence algorithm (``Normalizer::Normalize``)
        over the (output, length consumed) steps, all str or all bytes
        (``forms`` says which); offsets count the unit the steps do."""
        blank, space = forms.blank, forms.space
        remove_extra = self.remove_extra_whitespaces
        out: list = []
        consumed = 0
        first = None
        for output, length in steps:
            if remove_extra and output == blank:
                consumed += length
                continue
            first = (output, length)
            break
        if first is None:
            return blank[:0]

        def emit(piece) -> None:
            out.append(piece)
            if offsets is not None:
                offsets.extend([consumed] * len(piece))

        if forms.prefix:
            emit(forms.prefix)
        prev_space = remove_extra
        pending = [first]
        for output, length in _chain(pending, steps):
            if prev_space:
                output = output.lstrip(blank)
            if output:
                emit(output.replace(blank, space) if space != blank else output)
                prev_space = output.endswith(blank)
            consumed += length
            if not remove_extra:
                prev_space = False
        normalized = blank[:0].join(out)
        if remove_extra:
            kept = len(normalized)
            while kept and normalized.endswith(space, 0, kept):  # a suffix, not a set of bytes
                kept -= len(space)
            if kept != len(normalized):
                normalized = normalized[:kept]
                if offsets is not None:
                    consumed = offsets[kept]
                    del offsets[kept:]
        if forms.suffix:
            normalized += forms.suffix
            if offsets is not None:
                offsets.append(consumed)
        if offsets is not None:
            offsets.append(consumed)
        return normalized


class _Forms(NamedTuple):
    """What the whole-sentence algorithm writes: a space, the escaped
    space, the dummy prefix and suffix (empty when not wanted)."""

    blank: str | bytes
    space: str | bytes
    prefix: str | bytes
    suffix: str | bytes


def _raw(text: str) -> bytes:
    """The bytes ``text`` was decoded from (see the module docstring)."""
    return text.encode("utf-8", "surrogateescape")


def _chain(first: list, rest: Iterator) -> Iterator:
    yield from first
    yield from rest
