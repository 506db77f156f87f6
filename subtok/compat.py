"""sentencepiece 0.2.3's Python API, laid over subtok's processor.

Code written for ``import sentencepiece as spm`` runs on ``import subtok as
spm``. :class:`SentencePieceAPI` is the processor's base class and holds
what sentencepiece's wrapper (``python/src/sentencepiece/__init__.py``)
adds around the C++ calls: the constructor's defaults that ``encode`` falls
back to, ``load`` returning True, the ``return_type`` / ``out_type``
shapes (int, str, bytes, 'proto', 'serialized_proto', 'numpy',
'offset_mapping'), batch inputs, ``__getitem__``, pickling with the
defaults, and "Model is not initialized" before a model is loaded.

Every other name (``EncodeAsPieces``, ``sample_encode_as_ids``,
``DecodeIdsAsProto``, ``GetScore`` ...) is generated from the one table
:data:`API` when the processor class is defined
(:meth:`SentencePieceAPI.__init_subclass__`), each with sentencepiece's
signature, in both spellings where sentencepiece has both.
"""

from __future__ import annotations

import inspect
import os

from subtok import regularization
from subtok.errors import EncodeError, IdOutOfRange, ModelNotInitialized, Unsupported

RETURN_TYPES = (int, str, bytes, "proto", "serialized_proto", "numpy", "offset_mapping")
#: Constructor defaults of 0.2.3 that encode() falls back to.
DEFAULTS = {"add_bos": False, "add_eos": False, "reverse": False, "emit_unk_piece": False,
            "enable_sampling": False, "nbest_size": -1, "alpha": 0.1, "num_threads": -1}
#: Attributes that exist once a model is loaded.
_MODEL_PARTS = frozenset({"vocab", "normalizer", "model", "decoder", "pretokenizer",
                          "postprocessor"})
_PROTO_OPTIONS_MESSAGE = ("add_bos, add_eos, reverse, and emit_unk_piece is not supported "
                          "in proto API")

#: sentencepiece's name (snake_case) -> (the method it calls, its parameters
#: after ``input`` in sentencepiece's order, fixed keyword arguments,
#: whether sentencepiece also spells it in CamelCase). A target of None:
#: the method itself (only the CamelCase spelling is added); "each": the
#: processor's method, also taking a sequence of ids (one result per id);
#: "each_piece": the same for pieces, given as str or bytes.
API: dict[str, tuple[str | None, tuple[str, ...], dict, bool]] = {
    "encode": (None, (), {}, True),
    "tokenize": ("encode", (), {}, True),
    "encode_as_pieces": ("encode", (), {"return_type": str}, True),
    "encode_as_ids": ("encode", (), {"return_type": int}, True),
    "encode_as_numpy": ("encode", (), {"return_type": "numpy"}, True),
    "encode_as_proto": ("encode", (), {"return_type": "proto"}, True),
    "encode_as_offset_mapping": ("encode", (), {"return_type": "offset_mapping"}, True),
    "sample_encode_as_pieces": ("encode", ("nbest_size", "alpha"),
                                {"return_type": str, "enable_sampling": True}, True),
    "sample_encode_as_ids": ("encode", ("nbest_size", "alpha"),
                             {"return_type": int, "enable_sampling": True}, True),
    "sample_encode_as_numpy": ("encode", ("nbest_size", "alpha"),
                               {"return_type": "numpy", "enable_sampling": True}, True),
    "sample_encode_as_proto": ("encode", ("nbest_size", "alpha"),
                               {"return_type": "proto", "enable_sampling": True}, True),
    "nbest_encode": (None, (), {}, True),
    "nbest_encode_as_pieces": ("nbest_encode", ("nbest_size",), {"return_type": str}, True),
    "nbest_encode_as_ids": ("nbest_encode", ("nbest_size",), {"return_type": int}, True),
    "nbest_encode_as_numpy": ("nbest_encode", ("nbest_size",), {"return_type": "numpy"}, True),
    "nbest_encode_as_proto": ("nbest_encode", ("nbest_size",), {"return_type": "proto"}, True),
    "parallel_encode": (None, (), {}, True),
    "parallel_encode_as_pieces": ("parallel_encode", (), {"return_type": str}, True),
    "parallel_encode_as_ids": ("parallel_encode", (), {"return_type": int}, True),
    "parallel_encode_as_numpy": ("parallel_encode", (), {"return_type": "numpy"}, True),
    "parallel_encode_as_proto": ("parallel_encode", (), {"return_type": "proto"}, True),
    "decode": (None, (), {}, True),
    "detokenize": ("decode", (), {}, True),
    "decode_ids": ("decode", ("return_type",), {}, True),
    "decode_pieces": ("decode", ("return_type",), {}, True),
    "decode_ids_as_proto": ("decode", (), {"return_type": "proto"}, True),
    "decode_pieces_as_proto": ("decode", (), {"return_type": "proto"}, True),
    "normalize": (None, (), {}, True),
    "load": (None, (), {}, True),
    "load_from_file": (None, (), {}, True),
    "load_from_serialized_proto": (None, (), {}, True),
    "get_piece_size": (None, (), {}, True),
    "piece_size": ("get_piece_size", (), {}, False),
    "vocab_size": ("get_piece_size", (), {}, False),
    "piece_to_id": ("each_piece", (), {}, True),
    "id_to_piece": ("each", (), {}, True),
    "get_score": ("each", (), {}, True),
    "is_unknown": ("each", (), {}, True),
    "is_control": ("each", (), {}, True),
    "is_unused": ("each", (), {}, True),
    "is_byte": ("each", (), {}, True),
}


#: ``encode``'s keyword arguments, none given.
_NO_OPTIONS = (None,) * 12


def camel_case(name: str) -> str:
    """sentencepiece's CamelCase spelling of a snake_case name."""
    return "".join("NBest" if word == "nbest" else word.capitalize() for word in name.split("_"))


def _forwarder(name: str, target: str, params: tuple[str, ...], fixed: dict):
    """A method ``name(self, input, *params, **kwargs)`` that calls
    ``target`` with ``fixed`` keyword arguments added."""

    def method(self, input, *args, **kwargs):
        if len(args) > len(params):
            raise TypeError("%s() takes %d positional arguments but %d were given"
                            % (name, 2 + len(params), 2 + len(args)))
        kwargs.update(zip(params, args))
        kwargs.update(fixed)
        return getattr(self, target)(input, **kwargs)

    self_input = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                  inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    named = [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
             for p in params]
    method.__signature__ = inspect.Signature(
        self_input + named + [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])
    method.__name__ = name
    method.__doc__ = "sentencepiece's ``%s``: ``%s(input, %s)``." % (
        name, target, ", ".join(["%s=%r" % kv for kv in fixed.items()] + list(params)))
    return method


def _batch(value) -> list | tuple | None:
    """The items of ``value`` when sentencepiece's binding takes it as a
    batch (0.2.3's ``IdToPiece`` / ``PieceToId`` accept any sequence: a
    list, tuple, range, numpy array), else None (one id or piece)."""
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, (str, bytes, int)) or not hasattr(value, "__getitem__"):
        return None
    try:
        return list(value)
    except TypeError:  # a 0-d numpy array is one id
        return None


def _each(function):
    """``function(self, id)`` that also takes a sequence of ids, as 0.2.3's
    id methods do (every id is checked first)."""

    def method(self, id):  # noqa: A002 - sentencepiece's parameter name
        if type(id) is int:
            return function(self, id)
        items = _batch(id)
        if items is None:
            return function(self, id)
        for one in items:
            self.check_id(one)
        return [function(self, one) for one in items]

    method.__name__ = function.__name__
    method.__doc__ = function.__doc__
    return method


def _piece_text(piece) -> str:
    """A piece given as str or bytes (0.2.3's ``PieceToId`` takes both);
    bytes that are not UTF-8 become the lone surrogates pieces hold."""
    if isinstance(piece, str):
        return piece
    if isinstance(piece, bytes):
        return piece.decode("utf-8", "surrogateescape")
    raise TypeError("piece_to_id() takes str or bytes (or a sequence of them), not %s"
                    % type(piece).__name__)


def _each_piece(function):
    """``function(self, piece)`` for a str or bytes piece, or a sequence of them."""

    def method(self, piece):
        if type(piece) is str:
            return function(self, piece)
        items = _batch(piece)
        if items is None:
            return function(self, _piece_text(piece))
        return [function(self, _piece_text(one)) for one in items]

    method.__name__ = function.__name__
    method.__doc__ = function.__doc__
    return method


def install_api(cls) -> None:
    """Add every name of :data:`API` to ``cls``."""
    for name, (target, params, fixed, camel) in API.items():
        if target is None:
            method = getattr(cls, name)
        elif target in ("each", "each_piece"):
            method = (_each if target == "each" else _each_piece)(getattr(cls, name))
            setattr(cls, name, method)
        elif not params and not fixed:
            method = getattr(cls, target)
            setattr(cls, name, method)
        else:
            method = _forwarder(name, target, params, fixed)
            setattr(cls, name, method)
        if camel:
            setattr(cls, camel_case(name), method)


def resolve_return_type(return_type, out_type, default):
    """0.2.3's ``_resolve_return_type``: one of the two, else ``default``."""
    if out_type is not None:
        if return_type is not None:
            raise ValueError("Cannot specify both out_type and return_type. "
                             "Use return_type instead.")
        return_type = out_type
    if return_type is None:
        return_type = default
    if return_type == "immutable_proto":
        raise ValueError("immutable_proto is deprecated and no longer supported. "
                         "Use return_type='proto' instead.")
    if return_type not in RETURN_TYPES:
        raise ValueError("Invalid return_type: {}. Must be one of {}"
                         .format(return_type, RETURN_TYPES))
    return return_type


def _is_return_type(value) -> bool:
    """True for an ``out_type`` passed where 0.2.3 has ``add_bos`` (the
    positional form of sentencepiece <= 0.2.0: ``encode(text, str)``)."""
    return isinstance(value, (type, str)) and value in RETURN_TYPES


def load_numpy():
    try:
        import numpy
    except ImportError:
        raise ImportError("numpy is required when return_type='numpy'. "
                          "Please install numpy: pip install numpy") from None
    return numpy


def _text_of(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    raise TypeError("Input must be str or bytes")


def _char_offsets(text: str) -> list[int]:
    """The character index of each UTF-8 byte offset of ``text`` (and of its end)."""
    out: list[int] = []
    for index, char in enumerate(text):
        out.extend([index] * len(char.encode("utf-8", "surrogateescape")))
    out.append(len(text))
    return out


class SentencePieceAPI:
    """sentencepiece's Python wrapper over the processor's core methods."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        install_api(cls)

    def __init__(self, model_file=None, model_proto=None, out_type=None, add_bos=False,
                 add_eos=False, reverse=False, emit_unk_piece=False, enable_sampling=False,
                 nbest_size=-1, alpha=0.1, num_threads=-1, return_type=None) -> None:
        self._return_type = resolve_return_type(return_type, out_type, int)
        self._options = {"add_bos": add_bos, "add_eos": add_eos, "reverse": reverse,
                         "emit_unk_piece": emit_unk_piece, "enable_sampling": enable_sampling,
                         "nbest_size": nbest_size, "alpha": alpha, "num_threads": num_threads}
        if model_file or model_proto:
            self.load(model_file=model_file, model_proto=model_proto)

    def __getattr__(self, name: str):
        """Only reached for a missing attribute: the stages before a load."""
        if name in _MODEL_PARTS:
            raise ModelNotInitialized("Model is not initialized.")
        if name in ("_options", "_return_type"):  # not set by __init__ (e.g. from_model_data)
            return dict(DEFAULTS) if name == "_options" else int
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))

    # -- loading ----------------------------------------------------------
    @classmethod
    def from_file(cls, model_file, **kwargs):
        processor = cls._unloaded("from_file", kwargs)
        processor.load_from_file(model_file)
        return processor

    @classmethod
    def from_proto(cls, model_proto, **kwargs):
        processor = cls._unloaded("from_proto", kwargs)
        processor.load_from_serialized_proto(model_proto)
        return processor

    @classmethod
    def _unloaded(cls, method: str, kwargs: dict):
        """A processor with the options of ``kwargs``, for ``method`` to load."""
        if "model_file" in kwargs or "model_proto" in kwargs:
            raise ValueError("model_file and model_proto cannot be passed via kwargs when "
                             "using %s classmethod." % method)
        return cls(**kwargs)

    def load(self, model_file=None, model_proto=None) -> bool:
        if model_file and model_proto:
            raise ValueError("model_file and model_proto must be exclusive.")
        if model_proto:
            return self.load_from_serialized_proto(model_proto)
        if model_file:
            return self.load_from_file(model_file)
        raise ValueError("Either model_file or model_proto must be specified.")

    def load_from_file(self, filename) -> bool:
        self.load_model_file(os.fspath(filename))
        return True

    def load_from_serialized_proto(self, serialized) -> bool:
        if hasattr(serialized, "SerializeToString"):
            serialized = serialized.SerializeToString()
        self.load_model_proto(serialized)
        return True

    def __getstate__(self):
        state = {key: value for key, value in self.__dict__.items()
                 if key in ("_options", "_return_type")}
        state["model_proto"] = self.serialized_model_proto()
        return state

    def __setstate__(self, state) -> None:
        if not isinstance(state, dict):  # a bare proto, as older pickles hold
            state = {"model_proto": state}
        state = dict(state)
        SentencePieceAPI.__init__(self)
        self.load_from_serialized_proto(state.pop("model_proto"))
        self.__dict__.update(state)

    def __getitem__(self, piece):
        return self.piece_to_id(piece)

    # -- encoding -----------------------------------------------------------
    def _settings(self, given: dict) -> dict:
        """The call's options, the constructor's where the call gave None."""
        options = self._options
        return {key: options[key] if value is None else value for key, value in given.items()}

    def encode(self, input, add_bos=None, add_eos=None, reverse=None, emit_unk_piece=None,
               enable_sampling=None, nbest_size=None, alpha=None, num_threads=None,
               thread_pool=None, return_type=None, out_type=None, return_bytes=None):
        """Encode a string (or a list of strings), as sentencepiece's ``Encode``."""
        if type(input) is str and (add_bos, add_eos, reverse, emit_unk_piece, enable_sampling,
                                   nbest_size, alpha, num_threads, thread_pool, return_type,
                                   out_type, return_bytes) == _NO_OPTIONS:
            plain = self._plain_output(input)
            if plain is not None:
                return plain
        if _is_return_type(add_bos) and out_type is None and return_type is None:
            out_type, add_bos = add_bos, None
        kind = resolve_return_type(return_type, out_type, self._return_type)
        if return_bytes is not None and kind != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        o = self._settings({"add_bos": add_bos, "add_eos": add_eos, "reverse": reverse,
                            "emit_unk_piece": emit_unk_piece, "enable_sampling": enable_sampling,
                            "nbest_size": nbest_size, "alpha": alpha, "num_threads": num_threads})
        if o["enable_sampling"] is True and o["nbest_size"] in (None, 0, 1) or (
                o["enable_sampling"] is True and o["alpha"] is None):
            raise EncodeError(regularization.SAMPLING_ARGS_MESSAGE)
        if not isinstance(o["num_threads"], int):
            raise TypeError("num_threads must be int")
        if isinstance(input, (list, tuple)):
            return [self._encode_one(text, kind, o, return_bytes) for text in input]
        return self._encode_one(input, kind, o, return_bytes)

    def _plain_output(self, text: str):
        """The ids or pieces of ``text`` when neither the call nor the
        constructor asks for anything but them (None otherwise): the common
        call skips the option resolution it does not need."""
        if self._options != DEFAULTS:
            return None
        kind = self._return_type
        if kind is int:
            return [i for _, i in self.encode_pairs(text)]
        if kind is str:
            return [p for p, _ in self.encode_pairs(text)]
        return None

    def _encode_one(self, input, kind, o: dict, return_bytes):
        text = _text_of(input)
        segment = None
        if o["enable_sampling"]:
            self.check_sampling(o["nbest_size"], "SampleEncode", o["alpha"])
            rng = self._random(None)
            segment = lambda normalized: self.model.sample(normalized, o["nbest_size"],  # noqa: E731
                                                           o["alpha"], rng)
        if kind in ("proto", "serialized_proto", "offset_mapping"):
            if o["add_bos"] or o["add_eos"] or o["reverse"] or o["emit_unk_piece"]:
                raise Unsupported(_PROTO_OPTIONS_MESSAGE)
            pieces = self.encode_with_offsets(text, segment)
            if kind == "offset_mapping":
                wants_bytes = isinstance(input, bytes) if return_bytes is None else return_bytes
                return _offset_mapping(text, pieces, wants_bytes, with_text=False)
            return self._proto(text, pieces, kind, leading_bytes_unset=True)
        if segment is None:
            pairs = self.encode_pairs(text)
        else:
            pairs = self.postprocessor.process(segment(self.normalizer.normalize(text)))
        pairs = self.postprocessor.extra(pairs, o["add_bos"], o["add_eos"], o["reverse"],
                                         o["emit_unk_piece"])
        return _shape(pairs, kind)

    @staticmethod
    def _proto(text: str, pieces, kind: str, score: float | None = None,
               leading_bytes_unset: bool = False):
        """A SentencePieceText. Encoding leaves the surface of the leading
        byte pieces of a character unset (decoding sets it to "")."""
        from subtok.formats.sentencepiece_text import sentencepiece_text
        def surface(p):
            unset = leading_bytes_unset and not p.surface and p.piece.startswith("<0x")
            return None if unset else p.surface

        message = sentencepiece_text(text, [(p.piece, p.id, surface(p), p.begin, p.end)
                                            for p in pieces], score)
        return message.SerializeToString() if kind == "serialized_proto" else message

    def nbest_encode(self, input, add_bos=None, add_eos=None, reverse=None,
                     emit_unk_piece=None, nbest_size=None, return_type=None, out_type=None):
        """The best ``nbest_size`` segmentations, as sentencepiece's ``NBestEncode``."""
        kind = resolve_return_type(return_type, out_type, self._return_type)
        o = self._settings({"add_bos": add_bos, "add_eos": add_eos, "reverse": reverse,
                            "emit_unk_piece": emit_unk_piece, "nbest_size": nbest_size})
        size = max(1, o["nbest_size"])
        if isinstance(input, (list, tuple)):
            return [self._nbest_one(text, kind, o, size) for text in input]
        return self._nbest_one(input, kind, o, size)

    def _nbest_one(self, input, kind, o: dict, size: int):
        text = _text_of(input)
        if kind in ("proto", "serialized_proto"):
            if o["add_bos"] or o["add_eos"] or o["reverse"] or o["emit_unk_piece"]:
                raise Unsupported(_PROTO_OPTIONS_MESSAGE)
            return self._nbest_proto(text, kind, size)
        if kind == "offset_mapping":
            raise ValueError("unknown return_type={}".format(kind))
        post = self.postprocessor
        return [_shape(post.extra(pairs, o["add_bos"], o["add_eos"], o["reverse"],
                                  o["emit_unk_piece"]), kind)
                for pairs, _ in self.nbest_pairs_and_scores(text, size)]

    def _nbest_proto(self, text: str, kind: str, size: int):
        from subtok.formats.sentencepiece_text import nbest_text
        self.check_sampling(size, "NBestEncode")
        hyps = self.model.nbest(self.normalizer.normalize(text), size)
        texts = [self._proto(text, self.encode_with_offsets(text, lambda _, h=pairs: h),
                             "proto", score, leading_bytes_unset=True) for pairs, score in hyps]
        message = nbest_text(texts)
        return message.SerializeToString() if kind == "serialized_proto" else message

    def parallel_encode(self, input, add_bos=None, add_eos=None, reverse=None,
                        emit_unk_piece=None, chunk_len=None, num_threads=None,
                        thread_pool=None, return_type=None, out_type=None):
        """sentencepiece's ``ParallelEncode``: one long text cut at whitespace
        into chunks encoded in parallel. subtok encodes it whole, which
        gives the same pieces whenever no piece spans a chunk border."""
        kind = resolve_return_type(return_type, out_type, self._return_type)
        if not isinstance(chunk_len, int) or chunk_len <= 0:
            raise ValueError("chunk_len must be positive.")
        return self.encode(input, add_bos, add_eos, reverse, emit_unk_piece,
                           enable_sampling=False, num_threads=num_threads, return_type=kind)

    # -- decoding -----------------------------------------------------------
    def decode(self, input, return_type=None, out_type=None, num_threads=None,
               thread_pool=None, return_bytes=None):
        """Ids or pieces (or a batch of such lists) to text, as ``Decode``."""
        kind = resolve_return_type(return_type, out_type, str)
        if return_bytes is not None and kind != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        threads = self._options["num_threads"] if num_threads is None else num_threads
        if not isinstance(threads, int):
            raise TypeError("num_threads must be int")
        if kind == "numpy" or kind is int:
            raise ValueError("unknown return_type={} or input type".format(kind))
        if input is None or (isinstance(input, (str, bytes)) and not input):
            input = []
        if isinstance(input, (str, bytes)) or not hasattr(input, "__len__"):
            input = [input]
        if len(input) and _is_sequence(input[0]):
            return [self._decode_one(list(item), kind, bool(return_bytes)) for item in input]
        return self._decode_one(list(input), kind, bool(return_bytes))

    def _decode_one(self, items: list, kind, return_bytes: bool):
        if self._data is None and items:  # as 0.2.3: no id is in range of no pieces
            raise IdOutOfRange("piece id is out of range.")
        as_bytes = bool(items) and isinstance(items[0], bytes)
        if items and isinstance(items[0], (str, bytes)):
            pairs = self.pairs_of_pieces([_text_of(p) for p in items])
        else:
            pairs = self.pairs_of_ids([int(i) for i in items])
        if kind in ("proto", "serialized_proto", "offset_mapping"):
            text, pieces = self._decoded_pieces(pairs)
            if kind == "offset_mapping":
                return _offset_mapping(text, pieces, return_bytes or as_bytes, with_text=True)
            return self._proto(text, pieces, kind)
        text = self.decode_pairs(pairs)
        if kind is bytes or as_bytes:
            return text.encode("utf-8", "surrogateescape")
        return text

    def _decoded_pieces(self, pairs):
        """The decoded text and each piece's surface and byte span in it.

        A piece's surface is what it adds to the decoded prefix; in a run of
        byte pieces each character goes to its last byte, an invalid byte
        becomes U+FFFD, as sentencepiece's ``Decode(..., SentencePieceText*)``.
        Decodes each prefix: quadratic, for the API's protos only.
        """
        from subtok.postprocessors.sentencepiece import EncodedPiece
        byte_values = self.vocab.byte_values
        is_byte = [i in byte_values for _, i in pairs]
        surfaces: list[str] = []
        done, start = "", 0
        while start < len(pairs):
            end = start + 1
            if is_byte[start]:
                while end < len(pairs) and is_byte[end]:
                    end += 1
                surfaces.extend(_byte_run_surfaces(bytes(byte_values[i]
                                                         for _, i in pairs[start:end])))
                done = self.decode_pairs(pairs[:end])
            else:
                now = self.decode_pairs(pairs[:end])
                surfaces.append(now[len(done):])
                done = now
            start = end
        out, offset = [], 0
        for (piece, piece_id), surface in zip(pairs, surfaces):
            size = len(surface.encode("utf-8", "surrogateescape"))
            out.append(EncodedPiece(piece, piece_id, surface, offset, offset + size))
            offset += size
        return done, out

    # -- normalization ------------------------------------------------------
    def normalize(self, input, with_offsets=None):
        """The normalized text (and, ``with_offsets``, the original offset
        of each normalized character and of the end: characters for str,
        bytes for bytes, as 0.2.3's ``Normalize``)."""
        if isinstance(input, list):
            return [self.normalize(item, with_offsets) for item in input]
        return normalize_text(self.normalizer, input, with_offsets)


def normalize_text(normalizer, input, with_offsets):
    """``normalizer`` applied as sentencepiece's Python ``Normalize`` does."""
    text = _text_of(input)
    if not with_offsets:
        normalized = normalizer.normalize(text)
        return normalized.encode("utf-8", "surrogateescape") if isinstance(input, bytes) \
            else normalized
    normalized, offsets = normalizer.normalize_with_offsets(text)
    if not isinstance(input, bytes):
        return normalized, offsets
    starts = [0]
    for char in text:
        starts.append(starts[-1] + len(char.encode("utf-8", "surrogateescape")))
    byte_offsets = []
    for char, at in zip(normalized, offsets):
        byte_offsets.extend([starts[at]] * len(char.encode("utf-8", "surrogateescape")))
    byte_offsets.append(starts[offsets[-1]])
    return normalized.encode("utf-8", "surrogateescape"), byte_offsets


def _byte_run_surfaces(run: bytes) -> list[str]:
    """Per byte of a run: the character it completes ("" before that),
    U+FFFD for an invalid byte."""
    out: list[str] = []
    for char in run.decode("utf-8", "surrogateescape"):
        width = len(char.encode("utf-8", "surrogateescape"))
        out.extend([""] * (width - 1))
        out.append("\ufffd" if "\udc80" <= char <= "\udcff" else char)
    return out


def _is_sequence(value) -> bool:
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes))


def _shape(pairs, kind):
    """Pairs as sentencepiece returns them for ``kind``."""
    if kind is int:
        return [i for _, i in pairs]
    if kind is str:
        return [p for p, _ in pairs]
    if kind is bytes:
        return [p.encode("utf-8", "surrogateescape") for p, _ in pairs]
    if kind == "numpy":
        numpy = load_numpy()
        return numpy.array([i for _, i in pairs], dtype=numpy.int32)
    raise ValueError("unknown return_type={}".format(kind))


def _offset_mapping(text: str, pieces, as_bytes: bool, with_text: bool) -> dict:
    """0.2.3's ``ExtractOffsetMapping``: ids, pieces and (begin, end) spans,
    in bytes or in characters of ``text``."""
    if as_bytes:
        spans = [(p.begin, p.end) for p in pieces]
        names = [p.piece.encode("utf-8", "surrogateescape") for p in pieces]
    else:
        chars = _char_offsets(text)
        spans = [(chars[p.begin], chars[p.end]) for p in pieces]
        names = [p.piece for p in pieces]
    result = {"text": text.encode("utf-8", "surrogateescape") if as_bytes else text} \
        if with_text else {}
    result.update({"ids": [p.id for p in pieces], "pieces": names, "offsets": spans})
    return result


__all__ = ["API", "SentencePieceAPI", "camel_case", "install_api", "resolve_return_type",
           "normalize_text", "load_numpy", "RETURN_TYPES", "DEFAULTS", "EncodeError"]
