"""Reading the fields of one ``tokenizer.json`` component, with errors that
say where.

Every component's ``from_json(spec, where)`` reads its fields through
:func:`field`; ``where`` names the file and the component's place in it
("tokenizer.json: normalizer.normalizers[1] (Replace)"), so a wrong or
missing field is one :class:`~subtok.errors.ModelFileError` line that
points at it. Types are checked as strictly as ``tokenizers``' serde
structs check them: a bool is not an int, an int is not a string.
"""

from __future__ import annotations

from typing import Any

from subtok.errors import ModelFileError

#: Marks a field without a default: it must be present.
REQUIRED = object()
#: The largest u32 (token ids) and u64 (usize) values.
U32 = 2 ** 32 - 1
U64 = 2 ** 64 - 1

_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
          list: "a list", dict: "an object"}


def field(spec: dict, name: str, kind: type | tuple[type, ...], where: str,
          default: Any = REQUIRED, nullable: bool = False) -> Any:
    """``spec[name]`` checked to be of ``kind`` (None allowed if ``nullable``
    or if it is the default)."""
    if name not in spec:
        if default is REQUIRED:
            raise ModelFileError("%s: missing field %r." % (where, name))
        return default
    value = spec[name]
    if value is None and (nullable or default is None):
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not _is(value, kinds):
        wanted = " or ".join(_NAMES.get(k, k.__name__) for k in kinds)
        raise ModelFileError("%s: field %r must be %s, not %s." % (where, name, wanted,
                                                                   _describe(value)))
    if type(value) is int and not -2 ** 63 <= value <= U64:
        # serde_json reads a larger integer as a float, which no integer
        # field of tokenizers takes.
        raise ModelFileError("%s: field %r is out of range: %d." % (where, name, value))
    return value


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int) and float in kinds:
        return True
    return isinstance(value, kinds)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return _NAMES[type(value)]
    return repr(value)


def char_field(spec: dict, name: str, where: str, default: Any = REQUIRED) -> str:
    """A field that ``tokenizers`` reads as one ``char``."""
    value = field(spec, name, str, where, default)
    if value is not None and len(value) != 1:
        raise ModelFileError("%s: field %r must be one character, not %r." % (where, name, value))
    return value


def count_field(spec: dict, name: str, where: str, default: Any = REQUIRED, limit: int = U64) -> int:
    """A non-negative integer field (a ``usize`` in tokenizers; ``limit=U32``
    for a ``u32``, as ids are)."""
    value = field(spec, name, int, where, default)
    if value is not None and value < 0:
        raise ModelFileError("%s: field %r must not be negative, not %d." % (where, name, value))
    if value is not None and value > limit:
        raise ModelFileError("%s: field %r must be at most %d, not %d." % (where, name, limit, value))
    return value


def pattern_field(spec: dict, where: str, name: str = "pattern") -> tuple[str, str]:
    """A ``{"String": s}`` or ``{"Regex": r}`` pattern: (kind, text)."""
    value = field(spec, name, dict, where)
    if len(value) != 1 or next(iter(value)) not in ("String", "Regex"):
        raise ModelFileError("%s: field %r must be {\"String\": ...} or {\"Regex\": ...}."
                             % (where, name))
    kind, text = next(iter(value.items()))
    if not isinstance(text, str):
        raise ModelFileError("%s: the %s of field %r must be a string." % (where, kind, name))
    return kind, text
