"""Oniguruma patterns of ``tokenizer.json`` files, run with the ``regex`` package.

``tokenizers`` compiles the ``Regex`` patterns of ``Split`` and ``Replace``
with Oniguruma (``tokenizers/src/utils/onig.rs``, the Ruby syntax, no
options). The ``regex`` package reads almost all of that syntax the same
way: ``\\p{L}``, possessive quantifiers, atomic groups, lookarounds,
``(?i:...)``, and its ``\\s`` is Oniguruma's (the Unicode White_Space set).
What differs is rewritten by :func:`translate`:

- ``^`` and ``$`` are line anchors in Ruby syntax: compiled with MULTILINE;
- ``\\z`` (end of text) is ``regex``'s ``\\Z``; Oniguruma's ``\\Z`` (end, or
  before a final newline) becomes ``(?=\\n?\\Z)``;
- ``\\h`` / ``\\H`` are hex digits in Oniguruma;
- ``\\x{HHHH}`` code points are written as ``\\uHHHH`` / ``\\UHHHHHHHH``.

Known differences that are not rewritten (see docs/tokenizer-json.md):
Oniguruma's ``^`` does not match after a newline that ends the text, and
the Unicode tables of the two engines may differ for characters assigned
in the newest Unicode versions.

:func:`find_matches` reproduces how ``onig``'s ``find_iter`` steps over
empty matches (``tokenizers/src/utils/onig.rs`` + the ``onig`` crate's
``FindMatches``): an empty match right where the previous match ended is
skipped and the search goes on one character later. ``regex.finditer``
would instead report it and then look for a longer match at the same
place; the two only differ for patterns that can match the empty string.
"""

from __future__ import annotations

import functools
import re as _stdlib_re
from collections.abc import Iterable

import regex

from subtok.errors import ModelFileError

Match = tuple[int, int, bool]

_HEX = "[0-9a-fA-F]"
_NOT_HEX = "[^0-9a-fA-F]"


def translate(pattern: str) -> str:
    """An Oniguruma (Ruby syntax) pattern rewritten for ``regex``."""
    return _translated(pattern)[0]


def _translated(pattern: str, operators: bool = False) -> tuple[str, bool]:
    """The rewritten pattern, and whether it needs ``regex``'s VERSION1
    (a character class nested in another, or an ``&&`` intersection).

    Oniguruma's classes nest (``[^(\\s|[.,!?])]`` is one class, BLOOM's
    Split pattern) and intersect (``[a-z&&[^aeiou]]``). ``regex`` reads
    both only in VERSION1; in VERSION0 a ``[`` inside a class is literal,
    so BLOOM's pattern does not compile and ``[a[^b]]`` silently means
    something else. VERSION1 also reads ``||``, ``--`` and ``~~`` in a
    class as set operators, which Oniguruma reads as characters: in such
    a pattern (``operators``) their second character is escaped. Patterns
    without nested classes keep VERSION0, as before.

    A counted repetition followed by another quantifier stacks in Ruby
    syntax: ``X{n,m}+`` is ``(?:X{n,m})+`` ("possessive op. in
    ONIG_SYNTAX_JAVA and ONIG_SYNTAX_PERL only", Oniguruma's doc/RE), and
    so are ``X{n,m}*``, ``X{n}?`` and ``X{n}{m}`` (``X{n,m}?`` stays lazy).
    ``regex`` reads ``{n,m}+`` as possessive: tiktoken's cl100k pattern in a
    tokenizer.json (``\\p{N}{1,3}+``) cut "1800" as "180" "0" where
    tokenizers keeps "1800". The atom before the count (``atom``, an index
    into ``out``) is wrapped in a group.
    """
    out: list[str] = []
    i = 0
    in_class = 0
    version1 = False
    atom: int | None = None  # where the last atom outside classes starts in out
    class_start = 0
    groups: list[int] = []
    captured = 0  # capturing groups opened so far (for relative back-references)
    while i < len(pattern):
        char = pattern[i]
        if not in_class:
            if char == "{":
                interval = _INTERVAL.match(pattern, i)
                if interval is not None and (interval.group(1) or interval.group(3)):
                    end = interval.end()
                    after = pattern[end:end + 1]
                    if atom is not None and (after in ("+", "*", "{")
                                             or (after == "?" and not interval.group(2))):
                        out.insert(atom, "(?:")
                        out.append(interval.group() + ")")
                    else:
                        out.append(interval.group())
                    i = end
                    continue
                # Not a count: a brace (regex would read "{,}" as one).
                atom = len(out)
                out.append("\\{")
                i += 1
                continue
            elif char == "(":
                groups.append(len(out))
                if _CAPTURING.match(pattern, i):
                    captured += 1
            elif char == ")":
                atom = groups.pop() if groups else None
                out.append(char)
                i += 1
                continue
            elif char == "[":
                class_start = len(out)
            elif char == "|":
                atom = None
            elif char not in "*+?":
                atom = len(out)
        if char == "\\" and i + 1 < len(pattern):
            escape = pattern[i + 1]
            if escape == "x" and pattern.startswith("{", i + 2):
                close = pattern.find("}", i + 3)
                if close > 0:
                    out.append(_code_point(pattern[i + 3:close]))
                    i = close + 1
                    continue
            if escape in "pP" and pattern.startswith("{", i + 2):  # \p{..} whole
                close = pattern.find("}", i + 3)
                if close > 0:
                    out.append(pattern[i:close + 1])
                    i = close + 1
                    continue
            if escape in "pP":  # Ruby syntax has no \pL: a "p" or "P"
                out.append(escape)
                i += 2
                continue
            other = _other_escape(pattern, i, bool(in_class), captured)
            if other is not None:
                text, i = other
                out.append(text)
                continue
            if escape in _WORD_ESCAPES:
                replacement = _WORD_ESCAPES[escape][bool(in_class)]
                version1 = version1 or (bool(in_class) and escape == "w")
                out.append(replacement)
                i += 2
                continue
            out.append(_ESCAPES_IN_CLASS.get(escape) if in_class and escape in _ESCAPES_IN_CLASS
                       else _ESCAPES.get(escape, pattern[i:i + 2]))
            i += 2
            continue
        if char == "[":
            if in_class and not pattern.startswith("[:", i):
                version1 = True
            elif in_class:  # a POSIX bracket: [:alpha:] inside a class
                close = pattern.find(":]", i + 2)
                if close > 0:
                    name = pattern[i + 2:close]
                    out.append(_POSIX.get(name, pattern[i:close + 2]))
                    version1 = version1 or name == "word"
                    i = close + 2
                    continue
            in_class += 1
            out.append(char)
            # A "]" first in a class (after an optional "^") is a character.
            start = i + 1 + (pattern.startswith("^", i + 1))
            if pattern.startswith("]", start):
                out.append(pattern[i + 1:start] + "\\]")
                i = start + 1
                continue
        elif char == "]" and in_class:
            in_class -= 1
            out.append(char)
            if not in_class:
                atom = class_start
        elif in_class and char in "&|-~" and pattern.startswith(char, i + 1):
            if char == "&":
                version1 = True
                out.append("&&")
            else:
                out.append(char + "\\" + char if operators else char + char)
            i += 2
            continue
        else:
            out.append(char)
        i += 1
    if version1 and not operators:
        return _translated(pattern, True)
    return "".join(out), version1


#: Oniguruma's word characters are Alphabetic, marks, Nd and Pc
#: (``ONIGENC_CTYPE_WORD``); regex's ``\w`` also has the joiners U+200C
#: and U+200D (UTS #18's Join_Control), which occur inside Persian and
#: Indic words and emoji ZWJ sequences. Each escape's form outside and
#: inside a class (the latter needs VERSION1 for ``\w``).
_JOINERS = "\u200c\u200d"
_WORD = "[^\\W%s]" % _JOINERS
_WORD_ESCAPES = {
    "w": (_WORD, "[\\w--[%s]]" % _JOINERS),
    "W": ("[\\W%s]" % _JOINERS, "\\W" + _JOINERS),
    "b": ("(?:(?<=%s)(?!%s)|(?<!%s)(?=%s))" % (_WORD, _WORD, _WORD, _WORD), "\\b"),
    "B": ("(?:(?<=%s)(?=%s)|(?<!%s)(?!%s))" % (_WORD, _WORD, _WORD, _WORD), "\\B"),
}
#: POSIX brackets whose Unicode reading differs between the engines
#: (Oniguruma: digit is Nd, alnum is Alphabetic or Nd, punct is P or S;
#: regex: ASCII digits, and P only).
_POSIX = {"digit": "\\p{Nd}", "alnum": "\\p{Alphabetic}\\p{Nd}", "punct": "\\p{P}\\p{S}",
          "word": _WORD_ESCAPES["w"][1]}
_HEX_DIGITS = {"u": 4, "x": 2}
#: Escapes of letters that are the letter itself in Oniguruma (Ruby
#: syntax) and an error or something else in regex.
_LITERAL_LETTERS = frozenset("ijklmoquxEFIJLQTUV")
_CONTROL = regex.compile(r"\\(?:c|C-)(.)", regex.DOTALL)
_OCTAL = regex.compile(r"\\o\{([0-7]+)\}")
_BACKREF = regex.compile(r"\\k<(-?\d+|\w+)>")
#: At a "(" outside a class: a capturing group's opening, "(" not followed
#: by "?", or a named group ("(?<name>", "(?P<name>"; not the look-behinds
#: "(?<=", "(?<!").
_CAPTURING = regex.compile(r"\((?:(?!\?)|\?P?<(?![=!]))")


def _other_escape(pattern: str, i: int, in_class: bool, captured: int) -> tuple[str, int] | None:
    """The regex text of an Oniguruma escape at ``pattern[i]`` that regex
    reads otherwise, and where the escape ends; None for the others.
    ``\\uHHHH`` and ``\\xHH`` are taken whole (a count after them applies
    to the character); ``\\e`` is ESC, ``\\cX``/``\\C-X`` control
    characters, ``\\o{..}`` octal, ``\\N`` not a newline, ``\\O`` any
    character, ``\\k<name>`` a back-reference (``\\k<-n>``: the n-th of
    the ``captured`` groups opened before it, counting back); other
    letters in ``_LITERAL_LETTERS`` are themselves."""
    escape = pattern[i + 1]
    digits = _HEX_DIGITS.get(escape)
    if digits and i + 2 + digits <= len(pattern) and _HEX_RUN.fullmatch(pattern, i + 2, i + 2 + digits):
        return pattern[i:i + 2 + digits], i + 2 + digits
    if escape == "x":
        found = _HEX_RUN.match(pattern, i + 2, i + 4)  # \xH or \xHH (\x{..}: the caller)
        if found:
            return "\\x%02x" % int(found.group(), 16), found.end()
        if pattern.startswith("{", i + 2):
            return None
    if escape == "e":
        return "\\x1b", i + 2
    found = _CONTROL.match(pattern, i)
    if found:
        return "\\x%02x" % (ord(found.group(1)) & 0x1F), found.end()
    found = _OCTAL.match(pattern, i)
    if found:
        return _code_point("%x" % int(found.group(1), 8)), found.end()
    if not in_class and escape in "NO":
        return ("[^\\n]" if escape == "N" else "[\\s\\S]"), i + 2
    found = _BACKREF.match(pattern, i)
    if found:
        name = found.group(1)
        if name.startswith("-"):  # relative: the n-th group opened before this point
            name = str(captured + 1 - int(name[1:]))
        return ("(?P=%s)" % name if not name.isdigit() else "\\" + name), found.end()
    if escape in _LITERAL_LETTERS:
        return escape, i + 2
    return None
_HEX_RUN = regex.compile("[0-9a-fA-F]+")
_INTERVAL = regex.compile(r"\{(\d*)(,?)(\d*)\}")
_ESCAPES = {"z": r"\Z", "Z": r"(?=\n?\Z)", "h": _HEX, "H": _NOT_HEX}
_ESCAPES_IN_CLASS = {"h": "0-9a-fA-F"}


def _code_point(digits: str) -> str:
    value = int(digits, 16)
    return "\\U%08x" % value if value > 0xFFFF else "\\u%04x" % value


@functools.lru_cache(maxsize=256)
def compile_onig(pattern: str, where: str = "") -> regex.Pattern:
    """Compile an Oniguruma pattern; a pattern neither engine would take
    is a :class:`ModelFileError` naming ``where``."""
    text, version1 = _translated(pattern)
    flags = regex.MULTILINE | (regex.VERSION1 if version1 else 0)
    if _folds_to_several(pattern):
        flags |= regex.FULLCASE
    try:
        return regex.compile(text, flags)
    except (regex.error, ValueError, OverflowError) as exc:
        raise ModelFileError("%sbad regex %r: %s." % (where, pattern, exc)) from None


def _folds_to_several(pattern: str) -> bool:
    """Whether a case-insensitive pattern holds a character whose case
    folding is several characters (``(?i)\u00df`` matches "ss" and "SS" in
    Oniguruma, whose default case fold is multi-character:
    ``ONIGENC_CASE_FOLD_DEFAULT``). ``regex`` does that only with FULLCASE,
    which costs a little on every case-insensitive match, so other
    patterns (Llama 3's ``(?i:'s|'t|...)``) go without it."""
    return "(?" in pattern and any(len(char.casefold()) > 1 for char in pattern) \
        and regex.search(r"\(\?[a-zA-Z]*i", pattern) is not None


def compile_literal(text: str) -> regex.Pattern:
    """A pattern matching ``text`` itself (``regex::escape`` in tokenizers)."""
    return regex.compile(_stdlib_re.escape(text))


def find_matches(pattern: regex.Pattern, text: str) -> list[Match]:
    """Cover ``text`` with ``(start, end, is_match)`` ranges, in order
    (``Pattern::find_matches`` for a ``SysRegex``). Empty text gives one
    empty non-match."""
    if not text:
        return [(0, 0, False)]
    return cover([(b, e, True) for b, e in match_spans(pattern, text)], len(text), False)


def cover(found: Iterable[tuple], length: int, gap: object) -> list[tuple]:
    """``(start, end, tag)`` ranges in order, with the text between and
    after them added as ``(start, end, gap)``."""
    out: list[tuple] = []
    last = 0
    for begin, stop, tag in found:
        if last < begin:
            out.append((last, begin, gap))
        out.append((begin, stop, tag))
        last = stop
    if last < length:
        out.append((last, length, gap))
    return out


def match_spans(pattern: regex.Pattern, text: str) -> list[tuple[int, int]]:
    """The spans ``onig``'s ``find_iter`` reports, in order (see the module
    docstring for empty matches)."""
    spans = [m.span() for m in pattern.finditer(text)]
    if all(b < e for b, e in spans):
        return spans
    return _stepped_spans(pattern, text)


def _stepped_spans(pattern: regex.Pattern, text: str) -> list[tuple[int, int]]:
    """``FindMatches::next`` step by step: slower, used only when some
    match is empty."""
    spans: list[tuple[int, int]] = []
    position = 0
    last_end = -1
    while position <= len(text):
        found = pattern.search(text, position)
        if found is None:
            break
        begin, stop = found.span()
        if begin == stop and begin == last_end:
            position = begin + 1
            continue
        spans.append((begin, stop))
        position = last_end = stop
    return spans


def invert(matches: list[Match]) -> list[Match]:
    """The same cover with matches and gaps swapped (tokenizers' ``Invert``)."""
    return [(b, e, not m) for b, e, m in matches]
