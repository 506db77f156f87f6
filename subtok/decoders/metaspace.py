"""The Metaspace decoder (``Decoder for Metaspace`` in ``tokenizers/src/
pre_tokenizers/metaspace.rs``): the replacement character becomes a
space, except in the first token, where it is dropped (every one of them)
unless the prepend scheme is "never"."""

from __future__ import annotations

from subtok.pretokenizers.metaspace import metaspace_fields


class Metaspace:
    """Replacement characters back to spaces."""

    def __init__(self, replacement: str = "\u2581", prepend_scheme: str = "always") -> None:
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> Metaspace:
        replacement, scheme, _ = metaspace_fields(spec, where)
        return cls(replacement, scheme)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = [token.replace(self.replacement, " ") for token in tokens]
        if out and self.prepend_scheme != "never":
            out[0] = tokens[0].replace(self.replacement, "")
        return out
