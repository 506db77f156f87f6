"""Exception hierarchy of subtok.

Library code raises these; only the CLI turns them into exit codes and
one-line messages. Every message says what is wrong and where (file, line,
option), so that the CLI can print it unchanged.
"""


class SubtokError(Exception):
    """Base class of every error subtok raises on purpose."""


class ModelFileError(SubtokError, RuntimeError):
    """A .model file cannot be read, parsed or validated (a RuntimeError,
    as sentencepiece raises for the same)."""


class NormalizerError(SubtokError, ValueError, RuntimeError):
    """A precompiled charsmap or normalization rule is broken or missing
    (sentencepiece raises RuntimeError for these)."""


class EncodeError(SubtokError, ValueError):
    """An encode request cannot be honoured (e.g. BOS requested but undefined)."""


class DecodeError(SubtokError, ValueError):
    """A decode request is invalid (e.g. an id out of range)."""


class IdOutOfRange(DecodeError, IndexError):
    """An id outside [0, piece count) was passed to decode or id_to_piece."""


class TrainerError(SubtokError, RuntimeError):
    """Training options or training data are invalid (a RuntimeError, as
    sentencepiece's trainer raises for the same)."""


class Unsupported(EncodeError, RuntimeError):
    """A request the model or the API shape cannot serve (sentencepiece
    raises RuntimeError for these: n-best on BPE, bos with 'proto', ...)."""


class ModelNotInitialized(SubtokError, RuntimeError):
    """A processor was used before a model was loaded."""


class InputError(SubtokError):
    """An input file cannot be opened or read."""


class OutputError(SubtokError):
    """An output file cannot be written."""


class OptionError(SubtokError, ValueError):
    """Options that do not go together, or do not fit the model (the
    command line reports it as a usage error, status 2)."""


class DisallowedSpecialToken(EncodeError):
    """Text spells a special token that the caller did not allow (tiktoken's check)."""


class UnknownToken(DecodeError, KeyError):
    """A token id that the encoding does not have (a KeyError, as in tiktoken)."""

    def __str__(self) -> str:
        # KeyError would quote the message; it is a sentence, not a key.
        return str(self.args[0]) if self.args else ""
