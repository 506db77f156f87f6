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

#: Public names imported on first use (:func:`__getattr__`), so that each
#: command loads only what it runs: a tokenizer.json or a rank file never
#: loads the SentencePiece processor or the model-file schema, encoding
#: never loads training code, ``subtok train`` loads the schema only to
#: write its model.
_LAZY = {
    **dict.fromkeys(["ModelData", "load_model", "save_model"], "subtok.formats.sentencepiece"),
    **dict.fromkeys(["EncodedPiece", "SentencePieceProcessor", "Processor"], "subtok.processor"),
    "train": "subtok.training.api",
    "Tokenizer": "subtok.tokenizer",
    **dict.fromkeys(["ConvertToFlatbuffer", "SentencePieceNormalizer", "SentencePieceTrainer",
                     "SetDataDir", "SetMinLogLevel", "SetNBestTimeout", "SetRandomGeneratorSeed",
                     "ThreadPool", "convert_to_flatbuffer", "set_data_dir", "set_min_log_level",
                     "set_nbest_timeout", "set_random_generator_seed"],
                    "subtok.sentencepiece_api"),
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'subtok' has no attribute %r" % name)
    import importlib
    # Processor is the short alias of SentencePieceProcessor.
    value = getattr(importlib.import_module(module),
                    "SentencePieceProcessor" if name == "Processor" else name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


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
