"""The split patterns of OpenAI's encodings, and the pre-tokenizer that uses them.

tiktoken cuts text with one regular expression before byte-pair merging;
each match (a "chunk") is merged on its own. The patterns are data: the
values ``tiktoken_ext/openai_public.py`` gives each encoding, written out
here, plus GPT-2's original spelling (the one ``tokenizers``' ByteLevel
pre-tokenizer uses), which tiktoken documents as equivalent to r50k's.
They are compiled with the ``regex`` package, which has the ``\\p{..}``
classes and possessive quantifiers they need, and whose ``\\s`` is
Unicode White_Space as in Rust's ``regex`` crate.

:class:`RegexSplit` is the pre-tokenizer. For the named patterns it also
offers a shortcut (:meth:`RegexSplit.space_words`), see there.
"""

from __future__ import annotations

import re

from subtok.errors import SubtokError

#: GPT-2's pattern as first released (``encoder.py``).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: r50k_base and p50k_base: GPT-2's, with possessive quantifiers.
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
                  r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")

O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

#: ``--pattern`` name -> pattern.
PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "r50k": R50K_PATTERN,
    "p50k": R50K_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
}
#: Other spellings of the names: tiktoken's encoding names.
PATTERN_ALIASES = {"r50k_base": "r50k", "p50k_base": "p50k", "p50k_edit": "p50k",
                   "cl100k_base": "cl100k", "o200k_base": "o200k", "o200k_harmony": "o200k"}

_KNOWN = frozenset(PATTERNS.values())

#: Unicode White_Space but the space and the newline (the \s of regex and
#: of Rust's regex crate, less those two), as the inside of a character
#: class. The property is stable; a test checks it against regex's \s.
OTHER_WHITESPACE = "\t\x0b\x0c\r\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_OTHER_SPACE = re.compile("[\n%s]" % OTHER_WHITESPACE)


def pattern_for(name_or_regex: str) -> str:
    """The pattern a ``--pattern`` value names, or the value itself as a regex."""
    name = PATTERN_ALIASES.get(name_or_regex, name_or_regex)
    return PATTERNS.get(name, name_or_regex)


def compile_pattern(pattern: str):
    """Compile a split pattern (a ``regex.Pattern``); a bad one raises
    :class:`SubtokError` saying why. ``regex`` is imported here, not by the
    SentencePiece path, which never needs it."""
    import regex
    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise SubtokError("cannot compile the split pattern %r: %s." % (pattern, exc)) from None


class RegexSplit:
    """Pre-tokenizer: the chunks a tiktoken-style pattern finds (each match
    kept, as tokenizers' ``Split`` with behaviour ``Isolated``; text between
    matches, which these patterns never leave, would be dropped)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        #: ``findall`` of the compiled pattern (what :meth:`split` calls).
        self.findall = compile_pattern(pattern).findall
        #: The shortcut of :meth:`space_words` is proven for these only.
        self.space_separable = pattern in _KNOWN

    def split(self, normalized: str) -> list[str]:
        return self.findall(normalized)

    def space_words(self, text: str) -> list[str] | None:
        """``text.split(" ")`` when each of its words can be split alone, else None.

        Why this is exact for the named patterns: when text has no
        whitespace but single spaces between non-empty words, every match
        of these patterns either lies inside a word or is the space that
        starts a word followed by that word's beginning; none reaches past
        the next space, and none looks past it (the lookahead ``(?!\\S)``
        and ``$`` only matter after a run of whitespace, of which such text
        has none). A match depends on the text from its start onwards only
        (no lookbehind). So the chunks of the text are the chunks of the
        first word followed by those of each ``" " + word``, and results can
        be cached per word: words repeat far more than lines do.
        """
        if not self.space_separable or not text or _OTHER_SPACE.search(text):
            return None
        words = text.split(" ")
        return None if "" in words else words
