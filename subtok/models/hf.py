"""The models a ``tokenizer.json`` can name, by ``type``; and the type of a
model written before files named it.

Files of tokenizers before 0.9 or so have no ``type`` in ``model``;
``tokenizers`` then tries BPE, WordPiece, WordLevel and Unigram in turn
(``ModelWrapper``'s untagged deserialization). The same order, on what each
needs: ``merges`` -> BPE; a vocabulary that is a list of [piece, score]
pairs -> Unigram; ``continuing_subword_prefix`` and
``max_input_chars_per_word`` -> WordPiece; an ``unk_token`` -> WordLevel.
"""

from __future__ import annotations

from typing import Any

from subtok.components import build
from subtok.errors import ModelFileError
from subtok.models.mergebpe.model import MergeBPE
from subtok.models.tokens import TokenModel
from subtok.models.unigram.hf_model import HFUnigram
from subtok.models.wordlevel.model import WordLevel
from subtok.models.wordpiece.model import WordPiece

MODELS: dict[str, type] = {"BPE": MergeBPE, "Unigram": HFUnigram, "WordPiece": WordPiece,
                           "WordLevel": WordLevel}


def infer_type(spec: dict, where: str) -> str:
    """The ``type`` of a model that has none."""
    if "merges" in spec:
        return "BPE"
    if isinstance(spec.get("vocab"), list):
        return "Unigram"
    if "continuing_subword_prefix" in spec and "max_input_chars_per_word" in spec:
        return "WordPiece"
    if "unk_token" in spec:
        return "WordLevel"
    raise ModelFileError("%s: the model has no \"type\" and its fields fit none of "
                         "BPE, Unigram, WordPiece, WordLevel." % where)


#: The order in which tokenizers' untagged ``ModelWrapper`` tries the types.
UNTAGGED_ORDER = ["BPE", "WordPiece", "WordLevel", "Unigram"]


def from_json(spec: Any, where: str) -> TokenModel:
    """The model ``spec`` describes. A model without ``type`` that its
    inferred type refuses is what the next type in tokenizers' order that
    takes it makes of it (a WordPiece whose ``continuing_subword_prefix``
    is no string loads there as a WordLevel); if none does, the inferred
    type's error stands."""
    if not isinstance(spec, dict) or "type" in spec:
        return build(spec, MODELS, "model", where)
    inferred = infer_type(spec, where)
    try:
        return build(dict(spec, type=inferred), MODELS, "model", where)
    except ModelFileError as error:
        refusal = error
    for later in UNTAGGED_ORDER[UNTAGGED_ORDER.index(inferred) + 1:]:
        try:
            return build(dict(spec, type=later), MODELS, "model", where)
        except ModelFileError:
            continue
    raise refusal
