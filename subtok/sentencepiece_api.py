"""sentencepiece 0.2.3's module-level names: the trainer, the normalizer and
the process-wide settings.

* :class:`SentencePieceTrainer` (``train(**kwargs)``, the single
  ``"--input=... --model_prefix=..."`` string, ``model_writer=``,
  ``sentence_iterator=``, ``logstream=``) runs :func:`subtok.train`, which
  is imported only when training starts;
* :class:`SentencePieceNormalizer`: a normalizer from a model, a
  NormalizerSpec, a built-in rule name, a rule TSV or a rule list, as
  sentencepiece's (``spm_normalize`` is ``subtok normalize``);
* ``set_random_generator_seed`` seeds the generator that sampling shares;
  ``set_min_log_level`` sets the training log level (2: errors only).
  ``set_nbest_timeout`` and ``set_data_dir`` are accepted and have no
  effect: subtok's n-best has no timeout and its rule tables are built in.
"""

from __future__ import annotations

import contextlib
import os

from subtok import regularization
from subtok.compat import normalize_text
from subtok.errors import NormalizerError, TrainerError
from subtok.flags import parse_flag_string
from subtok.formats.sentencepiece import load_model, normalizer_from_proto, proto_messages
from subtok.normalizers.sentencepiece import Normalizer

#: ``set_min_log_level``'s value: the default ``minloglevel`` of training.
_settings = {"minloglevel": 0}


def set_random_generator_seed(seed: int) -> None:
    """Seed the generator every processor samples with (unless it has its own)."""
    regularization.seed_shared_rng(seed)


def set_min_log_level(level: int) -> None:
    """0 or 1: training prints warnings; 2 and above: errors only."""
    _settings["minloglevel"] = int(level)


def set_nbest_timeout(timeout) -> None:
    """Accepted for sentencepiece code; subtok's n-best search has no timeout."""


def set_data_dir(path) -> None:
    """Accepted for sentencepiece code; subtok's rule tables are built in."""


class ThreadPool:
    """sentencepiece's ``ThreadPool`` (accepted; subtok's API encodes in
    the calling thread)."""

    def __init__(self, num_threads: int) -> None:
        self._num_threads = int(num_threads)

    def num_threads(self) -> int:
        return self._num_threads


def convert_to_flatbuffer(*args, **kwargs):
    """Not supported: subtok reads and writes the protobuf ``.model`` only."""
    raise NotImplementedError("ConvertToFlatbuffer is not supported by subtok: it reads and "
                              "writes the protobuf .model format only.")


class SentencePieceTrainer:
    """``SentencePieceTrainer.train(...)`` as in sentencepiece."""

    @staticmethod
    def train(arg=None, logstream=None, **kwargs) -> None:
        """Train from keyword options or one ``"--flag=value ..."`` string.

        ``model_writer`` (an object with ``write(bytes)``) receives the
        model instead of files; ``sentence_iterator`` (or
        ``sentence_reader``) supplies sentences instead of ``input``.
        Output is written like spm_train's: ``<model_prefix>.model`` and
        ``.vocab``. ``logstream`` receives the messages.
        """
        from subtok.training.api import train

        if isinstance(arg, str):
            kwargs = dict(parse_flag_string(arg), **kwargs)
        if "sentence_reader" in kwargs:
            kwargs["sentence_iterator"] = kwargs.pop("sentence_reader")
        for unsupported in ("pretokenizer", "normalizer", "allow_inconsistent_pretokenization"):
            if kwargs.pop(unsupported, None):
                raise TrainerError("%s= is not supported by subtok's trainer (train with "
                                   "normalization_rule_name / normalization_rule_tsv, and "
                                   "pretokenization_delimiter)." % unsupported)
        kwargs.setdefault("minloglevel", _settings["minloglevel"])
        with _log_stream(logstream):
            train(kwargs.pop("input", None), kwargs.pop("model_prefix", None), **kwargs)
        return None

    Train = train


@contextlib.contextmanager
def _log_stream(stream):
    """Training messages go to ``stream`` (stderr when None)."""
    if stream is None:
        yield
        return
    with contextlib.redirect_stderr(stream):
        yield
    with contextlib.suppress(AttributeError, OSError, ValueError):
        stream.flush()


class SentencePieceNormalizer:
    """A normalizer on its own, as sentencepiece's ``SentencePieceNormalizer``."""

    def __init__(self, model_file=None, model_proto=None, normalizer_spec=None, rule_tsv=None,
                 rule_name=None, norm_map=None, add_dummy_prefix=None,
                 escape_whitespaces=None, remove_extra_whitespaces=None) -> None:
        self._spec = _spec_from(model_file, model_proto, normalizer_spec, rule_tsv, rule_name,
                                norm_map)
        for name, value in (("add_dummy_prefix", add_dummy_prefix),
                            ("escape_whitespaces", escape_whitespaces),
                            ("remove_extra_whitespaces", remove_extra_whitespaces)):
            if value is not None:
                setattr(self._spec, name, bool(value))
        self._normalizer = Normalizer.from_spec(normalizer_from_proto(self._spec))

    def normalize(self, input, with_offsets=None):
        """Normalized text (a list for a list), with offsets if asked."""
        if isinstance(input, list):
            return [self.normalize(item, with_offsets) for item in input]
        return normalize_text(self._normalizer, input, with_offsets)

    def decompile(self) -> list[tuple[str, str]]:
        """The rules of the compiled charsmap, (source, target), sorted by source."""
        from subtok.normalizers.charsmap import decode_charsmap
        blob = self._spec.precompiled_charsmap
        if not blob:
            raise NormalizerError("No precompiled charsmap found in model.")
        return sorted(decode_charsmap(bytes(blob)).items())

    def serialized_normalizer_spec(self) -> bytes:
        return self._spec.SerializeToString()

    def serialized_model_proto(self) -> bytes:
        model = proto_messages().ModelProto()
        model.normalizer_spec.CopyFrom(self._spec)
        return model.SerializeToString()

    def __getstate__(self):
        return self.serialized_model_proto()

    def __setstate__(self, state) -> None:
        self.__init__(model_proto=state)

    Normalize = normalize
    Decompile = decompile


def _spec_from(model_file, model_proto, normalizer_spec, rule_tsv, rule_name, norm_map):
    """The NormalizerSpec message of the first source given, as
    sentencepiece's ``SentencePieceNormalizer`` picks it."""
    messages = proto_messages()
    if model_file:
        # The loaded proto uses the bytes-field schema; re-read its normalizer
        # in the writing schema so it can be copied into a ModelProto.
        return _parsed(messages.NormalizerSpec,
                       load_model(os.fspath(model_file)).proto.normalizer_spec, "NormalizerSpec")
    if model_proto:
        return _parsed(messages.ModelProto, model_proto, "model proto").normalizer_spec
    if normalizer_spec:
        return _parsed(messages.NormalizerSpec, normalizer_spec, "NormalizerSpec")
    from subtok.normalizers import charsmap_builder
    if rule_tsv:
        rules = _rules_of_tsv(os.fspath(rule_tsv))
        return messages.NormalizerSpec(name="user_defined", normalization_rule_tsv=rule_tsv,
                                       precompiled_charsmap=charsmap_builder.compile_charsmap(rules))
    if rule_name:
        try:
            blob = charsmap_builder.builtin_charsmap(rule_name)
        except ValueError as exc:
            raise NormalizerError("No precompiled charsmap is found: %s (%s)."
                                  % (rule_name, exc)) from None
        return messages.NormalizerSpec(name=rule_name, precompiled_charsmap=blob)
    if norm_map:
        blob = charsmap_builder.compile_charsmap(dict(norm_map))
        return messages.NormalizerSpec(precompiled_charsmap=blob)
    raise ValueError("no model is specified")


def _parsed(message_class, data, what: str):
    """``data`` (bytes or a message) parsed as ``message_class``; only the
    normalizer is needed, so a model without pieces is fine here."""
    if hasattr(data, "SerializeToString"):
        data = data.SerializeToString()
    message = message_class()
    try:
        message.ParseFromString(bytes(data))
    except Exception:
        raise NormalizerError("cannot parse the serialized %s." % what) from None
    return message


def _rules_of_tsv(path: str) -> dict[str, str]:
    from subtok.normalizers.charsmap_builder import load_rule_tsv
    try:
        return load_rule_tsv(path)
    except OSError as exc:
        raise NormalizerError("%s: cannot read the rule TSV: %s." % (path, exc.strerror or exc)) \
            from None
    except ValueError as exc:
        raise NormalizerError(str(exc)) from None


SetRandomGeneratorSeed = set_random_generator_seed
SetMinLogLevel = set_min_log_level
SetNBestTimeout = set_nbest_timeout
SetDataDir = set_data_dir
ConvertToFlatbuffer = convert_to_flatbuffer

__all__ = ["SentencePieceTrainer", "SentencePieceNormalizer", "ThreadPool",
           "set_random_generator_seed", "set_min_log_level", "set_nbest_timeout", "set_data_dir",
           "convert_to_flatbuffer", "SetRandomGeneratorSeed", "SetMinLogLevel", "SetNBestTimeout",
           "SetDataDir", "ConvertToFlatbuffer"]
