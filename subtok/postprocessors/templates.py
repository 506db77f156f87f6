"""Post-processors that add special tokens around one text or a pair:
TemplateProcessing, BertProcessing and RobertaProcessing
(``tokenizers/src/processors/{template,bert,roberta}.rs``).

Each works on :class:`~subtok.encoding.Encoding` objects: ``process`` gets
the encodings of the text (and of the pair's second text), already typed
0 and 1, and returns the encodings to concatenate.
"""

from __future__ import annotations

from dataclasses import dataclass

from subtok.encoding import Encoding
from subtok.errors import ModelFileError
from subtok.formats.json_fields import U32, field
from subtok.postprocessors.bytelevel import trim_offsets


@dataclass
class TemplateProcessing:
    """``single`` and ``pair`` templates: lists of ``("sequence", "A"|"B",
    type_id)`` and ``("token", special_token_name, type_id)``, the names
    resolved in ``special_tokens`` (each one or more ids and tokens)."""

    single: list
    pair: list
    special_tokens: dict

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> TemplateProcessing:
        specials = {}
        for name, value in field(spec, "special_tokens", dict, where).items():
            ids = value.get("ids") if isinstance(value, dict) else None
            tokens = value.get("tokens") if isinstance(value, dict) else None
            if (not isinstance(ids, list) or not isinstance(tokens, list) or len(ids) != len(tokens)
                    or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= U32
                               for i in ids)):
                raise ModelFileError("%s: special token %r needs \"ids\" and \"tokens\" of one "
                                     "length." % (where, name))
            specials[name] = (ids, tokens)
        single = _template(field(spec, "single", list, where), where + ": single")
        pair = _template(field(spec, "pair", list, where), where + ": pair")
        for kind, name, _ in single + pair:
            if kind == "token" and name not in specials:
                raise ModelFileError("%s: the template uses %r, which special_tokens lacks."
                                     % (where, name))
        return cls(single, pair, specials)

    def added_tokens(self, is_pair: bool) -> int:
        template = self.pair if is_pair else self.single
        return sum(len(self.special_tokens[name][0]) for kind, name, _ in template if kind == "token")

    def process(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        template = self.pair if len(encodings) == 2 else self.single
        with_offsets = encodings[0].offsets is not None
        out = []
        for kind, name, type_id in template:
            if kind == "sequence":
                encoding = encodings[0 if name == "A" else 1]
                encoding.type_ids = [type_id] * len(encoding)
                out.append(encoding)
            elif add_special_tokens:
                ids, tokens = self.special_tokens[name]
                out.append(Encoding.special(ids, tokens, type_id, with_offsets))
        return out


def _template(pieces: list, where: str) -> list[tuple[str, str, int]]:
    """``[{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id":
    "[CLS]", "type_id": 0}}, ...]`` as (kind, name, type_id) triples."""
    out = []
    for i, piece in enumerate(pieces):
        if not isinstance(piece, dict) or len(piece) != 1:
            raise ModelFileError("%s[%d]: must be {\"Sequence\": ...} or {\"SpecialToken\": ...}."
                                 % (where, i))
        kind, body = next(iter(piece.items()))
        name = body.get("id") if isinstance(body, dict) else None
        type_id = body.get("type_id") if isinstance(body, dict) else None
        if (kind not in ("Sequence", "SpecialToken") or not isinstance(name, str)
                or not isinstance(type_id, int) or isinstance(type_id, bool) or not 0 <= type_id <= U32
                or (kind == "Sequence" and name not in ("A", "B"))):
            raise ModelFileError("%s[%d]: %r is not a template piece." % (where, i, piece))
        out.append(("sequence" if kind == "Sequence" else "token", name, type_id))
    return out


def _pair_field(spec: dict, name: str, where: str) -> tuple[str, int]:
    value = field(spec, name, list, where)
    if (len(value) != 2 or not isinstance(value[0], str) or not isinstance(value[1], int)
            or isinstance(value[1], bool) or not 0 <= value[1] <= U32):
        raise ModelFileError("%s: field %r must be [token, id]." % (where, name))
    return value[0], value[1]


class BertProcessing:
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` (B's part typed 1)."""

    def __init__(self, sep: tuple[str, int], cls_token: tuple[str, int]) -> None:
        self.sep = sep
        self.cls = cls_token

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> BertProcessing:
        return cls(_pair_field(spec, "sep", where), _pair_field(spec, "cls", where))

    def added_tokens(self, is_pair: bool) -> int:
        return 3 if is_pair else 2

    def process(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if not add_special_tokens:
            return encodings
        with_offsets = encodings[0].offsets is not None
        out = [_special(self.cls, 0, with_offsets), encodings[0], _special(self.sep, 0, with_offsets)]
        if len(encodings) == 2:
            out += [encodings[1], _special(self.sep, 1, with_offsets)]
        return out


def _special(token: tuple[str, int], type_id: int, with_offsets: bool) -> Encoding:
    return Encoding.special([token[1]], [token[0]], type_id, with_offsets)


class RobertaProcessing:
    """``<s> A </s>`` and ``<s> A </s> </s> B </s>``, every type id 0, and
    the ByteLevel offset trimming first when ``trim_offsets``."""

    def __init__(self, sep: tuple[str, int], cls_token: tuple[str, int], trim_offsets: bool = True,
                 add_prefix_space: bool = True) -> None:
        self.sep = sep
        self.cls = cls_token
        self.trim_offsets = trim_offsets
        self.add_prefix_space = add_prefix_space

    @classmethod
    def from_json(cls, spec: dict, where: str = "") -> RobertaProcessing:
        return cls(_pair_field(spec, "sep", where), _pair_field(spec, "cls", where),
                   field(spec, "trim_offsets", bool, where, True),
                   field(spec, "add_prefix_space", bool, where, True))

    def added_tokens(self, is_pair: bool) -> int:
        return 4 if is_pair else 2

    def process(self, encodings: list[Encoding], add_special_tokens: bool) -> list[Encoding]:
        if self.trim_offsets:
            for encoding in encodings:
                trim_offsets(encoding, self.add_prefix_space)
        for encoding in encodings:
            encoding.type_ids = [0] * len(encoding)
        if not add_special_tokens:
            return encodings
        with_offsets = encodings[0].offsets is not None
        out = [_special(self.cls, 0, with_offsets), encodings[0], _special(self.sep, 0, with_offsets)]
        if len(encodings) == 2:
            out += [_special(self.sep, 0, with_offsets), encodings[1],
                    _special(self.sep, 0, with_offsets)]
        return out
