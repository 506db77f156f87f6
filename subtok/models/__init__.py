"""Segmentation models, one module per algorithm, and their registry.

The registry maps the ``model_type`` names used on the command line and in
``TrainerSpec.model_type`` to the model class that encodes with them.
"""

from subtok.models.base import Model, WordEncoding
from subtok.models.bpe.model import BPEModel
from subtok.models.char.model import CharModel
from subtok.models.unigram.model import UnigramModel
from subtok.models.word.model import WordModel

#: model_type name -> model class (the TrainerSpec.ModelType numbers are in
#: ``subtok.formats.sentencepiece.MODEL_TYPE_IDS``).
MODELS: dict[str, type[Model]] = {
    "unigram": UnigramModel,
    "bpe": BPEModel,
    "word": WordModel,
    "char": CharModel,
}

__all__ = ["MODELS", "Model", "WordEncoding",
           "BPEModel", "CharModel", "UnigramModel", "WordModel"]
