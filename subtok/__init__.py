"""subtok: SentencePiece-compatible subword tokenizers in Python.

Public API::

    from subtok import SentencePieceProcessor
    sp = SentencePieceProcessor("m.model")
    sp.encode("Hello world", out_type=str)

    from subtok import Tokenizer  # a Hugging Face tokenizer.json
    tok = Tokenizer.from_file("tokenizer.json")
    tok.encode("Hello world").ids
"""

__version__ = "0.1.0"

from subtok.errors import (DecodeError, EncodeError, IdOutOfRange, ModelFileError,  # noqa: E402
                     NormalizerError, SubtokError, TrainerError)
from subtok.formats.sentencepiece import ModelData, load_model, save_model  # noqa: E402
from subtok.processor import EncodedPiece, SentencePieceProcessor  # noqa: E402
from subtok.sentencepiece_api import (ConvertToFlatbuffer, SentencePieceNormalizer,  # noqa: E402
                                      SentencePieceTrainer, SetDataDir, SetMinLogLevel,
                                      SetNBestTimeout, SetRandomGeneratorSeed, ThreadPool,
                                      convert_to_flatbuffer, set_data_dir, set_min_log_level,
                                      set_nbest_timeout, set_random_generator_seed)

#: Short alias.
Processor = SentencePieceProcessor


def __getattr__(name: str):
    """``subtok.train`` and ``subtok.Tokenizer`` are imported on first use:
    encoding never loads training code, and a SentencePiece model never
    the tokenizer.json pipeline."""
    if name == "train":
        from subtok.training.api import train
        return train
    if name == "Tokenizer":
        from subtok.tokenizer import Tokenizer
        return Tokenizer
    raise AttributeError("module 'subtok' has no attribute %r" % name)

__all__ = [
    "SentencePieceProcessor", "Processor", "EncodedPiece", "ModelData", "load_model", "save_model",
    "SubtokError", "ModelFileError", "NormalizerError", "EncodeError", "DecodeError",
    "IdOutOfRange", "TrainerError", "train", "Tokenizer", "__version__",
    # sentencepiece's module-level names
    "SentencePieceTrainer", "SentencePieceNormalizer", "ThreadPool", "set_random_generator_seed",
    "set_min_log_level", "set_nbest_timeout", "set_data_dir", "convert_to_flatbuffer",
    "SetRandomGeneratorSeed", "SetMinLogLevel", "SetNBestTimeout", "SetDataDir",
    "ConvertToFlatbuffer",
]
