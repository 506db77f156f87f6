"""Flag values as SentencePiece spells them, shared by the CLI and the trainer spec.

spm's tools read booleans as ``true``/``false``/``1``/``0``/... (absl's
spellings) and lists as CSV (``StrSplitAsCSV``); both ``subtok train``'s
options and the encode/decode flags accept the same spellings.
"""

from __future__ import annotations

_TRUE = frozenset({"1", "t", "true", "y", "yes", ""})
_FALSE = frozenset({"0", "f", "false", "n", "no"})


def parse_bool(text: str) -> bool | None:
    """``text`` as a boolean in spm's spellings (any case), or None if it is none."""
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return None


def split_csv(text: str) -> list[str]:
    """sentencepiece's ``StrSplitAsCSV``: ``a,"b,c"`` -> ``["a", "b,c"]``.

    Inside quotes ``""`` is a literal quote; a trailing comma adds nothing.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':
            i += 1
            chars = []
            while i < n:
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        chars.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                chars.append(text[i])
                i += 1
            end = text.find(",", i)
            end = n if end < 0 else end
            chars.append(text[i:end])
            out.append("".join(chars))
            i = end + 1
        else:
            end = text.find(",", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end + 1
    return out


def parse_flag_string(text: str) -> dict[str, str]:
    """sentencepiece's ``MergeSpecsFromArgs`` string form: ``"--input=a.txt
    --vocab_size=100 --split_digits"`` -> ``{"input": "a.txt", ...}``.

    Arguments are split at spaces (a value cannot hold one, as in
    sentencepiece); a flag without ``=`` is switched on.
    """
    out: dict[str, str] = {}
    for arg in text.split():
        key, sep, value = (arg[2:] if arg.startswith("--") else arg).partition("=")
        out[key] = value if sep else "true"
    return out
