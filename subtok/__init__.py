"""subtok: SentencePiece-compatible subword tokenizers in Python.

Public API::

    from subtok import SentencePieceProcessor
    sp = SentencePieceProcessor("m.model")
    sp.encode("Hello world", out_type=str)
"""

__version__ = "0.1.0"

from subtok.errors import (DecodeError, EncodeError, IdOutOfRange, ModelFileError,  # noqa: E402
                     NormalizerError, SubtokError, TrainerError)
from subtok.formats.sentencepiece import ModelData, load_model, save_model  # noqa: E402
from subtok.processor import EncodedPiece, SentencePieceProcessor  # noqa: E402
from subtok.training.api import train  # noqa: E402

#: Short alias.
Processor = SentencePieceProcessor


def __getattr__(name: str):
    """``subtok.Tokenizer`` (a Hugging Face tokenizer.json), imported on first
    use so that the SentencePiece path never loads it."""
    if name == "Tokenizer":
        from subtok.tokenizer import Tokenizer
        return Tokenizer
    raise AttributeError("module 'subtok' has no attribute %r" % name)

__all__ = [
    "SentencePieceProcessor", "Processor", "EncodedPiece", "ModelData", "load_model", "save_model",
    "SubtokError", "ModelFileError", "NormalizerError", "EncodeError", "DecodeError",
    "IdOutOfRange", "TrainerError", "train", "__version__", "Tokenizer",
]
