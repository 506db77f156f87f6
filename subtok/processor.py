"""The processor: load a model, then encode and decode.

Pipeline of one encode::

    text --normalizer--> normalized --model--> (piece, id) pairs
         --post-process--> byte fallback, unknown runs merged
         --extra options--> bos / eos / reverse / unk piece

sentencepiece's own Python API (its names in both spellings, ``out_type``
and ``return_type`` shapes, constructor defaults, loading that returns True)
is laid over this core by :class:`subtok.compat.SentencePieceAPI`, from one
table of names; this module holds what subtok computes.
"""

from __future__ import annotations

import math
import os

from subtok import regularization
from subtok.compat import SentencePieceAPI
from subtok.decoders.sentencepiece import Decoder
from subtok.errors import EncodeError, IdOutOfRange, SubtokError, Unsupported
from subtok.formats.sentencepiece import (ModelData, load_model, parse_model, restrict_vocabulary,
                                         serialize_model)
from subtok.models import MODELS
from subtok.models.bytewise import BytewiseSegmenter
from subtok.normalizers.sentencepiece import Normalizer
from subtok.postprocessors.sentencepiece import ENDS, STARTS, EncodedPiece, SentencePiecePostProcessor
from subtok.vocab import PieceType

Pair = tuple[str, int]

def to_text(value) -> str:
    """Accept ``str`` or UTF-8 ``bytes`` (invalid bytes are kept as escapes)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    raise TypeError("expected str or bytes, got %s" % type(value).__name__)


class SentencePieceProcessor(SentencePieceAPI):
    """Encode and decode with a SentencePiece model (``.model`` file).

    The constructor, ``load`` and the sentencepiece-shaped ``encode`` /
    ``decode`` come from :class:`~subtok.compat.SentencePieceAPI`.
    """

    _data: ModelData | None = None

    # -- loading --------------------------------------------------------
    def load_model_file(self, model_file: str | os.PathLike) -> None:
        self.set_model(load_model(model_file))

    def load_model_proto(self, data: bytes) -> None:
        self.set_model(parse_model(bytes(data), "<model proto>"))

    @classmethod
    def from_model_data(cls, data: ModelData) -> "SentencePieceProcessor":
        processor = cls()
        processor.set_model(data)
        return processor

    def set_model(self, data: ModelData) -> None:
        """Build the stages from ``data`` (replacing any loaded model)."""
        self._data = data
        vocab = data.vocabulary()
        self.vocab = vocab
        spec = data.normalizer
        self.normalizer = Normalizer.from_spec(
            spec, treat_whitespace_as_suffix=data.treat_whitespace_as_suffix,
            user_defined_symbols=vocab.user_defined())
        denormalize = None
        if data.denormalizer is not None:
            denormalize = Normalizer.from_spec(data.denormalizer).normalize
        self.model = MODELS[data.model_type](
            vocab, treat_whitespace_as_suffix=data.treat_whitespace_as_suffix)
        #: Only for a model whose rules are not all text (see models/bytewise.py).
        self.bytewise = (BytewiseSegmenter(self.model, data.model_type)
                         if self.normalizer.bytewise else None)
        self.decoder = Decoder(vocab, add_dummy_prefix=spec.add_dummy_prefix,
                               remove_extra_whitespaces=spec.remove_extra_whitespaces,
                               denormalize=denormalize)
        #: The pre-tokenizer, owned by the model: words no piece spans.
        self.pretokenizer = self.model.splitter
        self.postprocessor = SentencePiecePostProcessor(vocab)

    @property
    def model_data(self) -> ModelData:
        if self._data is None:
            raise SubtokError("no model is loaded.")
        return self._data

    def serialized_model_proto(self) -> bytes:
        return serialize_model(self.model_data)

    # -- vocabulary -----------------------------------------------------
    def get_piece_size(self) -> int:
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def check_id(self, piece_id: int) -> int:
        """``piece_id`` if it is in range, else :class:`IdOutOfRange`."""
        if not 0 <= piece_id < len(self.vocab):
            raise IdOutOfRange("piece id is out of range: %d (the model has %d pieces)."
                               % (piece_id, len(self.vocab)))
        return piece_id

    def piece_to_id(self, piece):
        if isinstance(piece, (list, tuple)):
            return [self.piece_to_id(p) for p in piece]
        return self.vocab.piece_to_id(piece)

    def id_to_piece(self, piece_id: int) -> str:
        return self.vocab.pieces[self.check_id(piece_id)]

    def get_score(self, piece_id: int) -> float:
        return self.vocab.scores[self.check_id(piece_id)]

    def _is(self, piece_id: int, kind: PieceType) -> bool:
        return self.vocab.types[self.check_id(piece_id)] == kind

    def is_unknown(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.UNKNOWN)

    def is_control(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.CONTROL)

    def is_unused(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.UNUSED)

    def is_byte(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.BYTE)

    def is_user_defined(self, piece_id: int) -> bool:
        return self._is(piece_id, PieceType.USER_DEFINED)

    def unk_id(self) -> int:
        return self.vocab.unk_id()

    def bos_id(self) -> int:
        return self.vocab.bos_id()

    def eos_id(self) -> int:
        return self.vocab.eos_id()

    def pad_id(self) -> int:
        return self.vocab.pad_id()

    def set_vocabulary(self, valid: list[str]) -> None:
        """Restrict encoding to ``valid`` pieces, as spm's ``SetVocabulary``.

        Every piece that is not CONTROL, UNKNOWN or USER_DEFINED becomes
        NORMAL if listed or one character long, else UNUSED (never emitted).
        Only unigram and BPE models support this.
        """
        data = self.model_data
        if not self.model.supports_vocabulary_restriction:
            raise EncodeError("Vocabulary constraint is only enabled in subword units.")
        self.set_model(restrict_vocabulary(data, valid))

    # -- encoding ---------------------------------------------------------
    def encode_pairs(self, text) -> list[Pair]:
        """Encode one sentence into post-processed ``(piece, id)`` pairs.

        The model's word results are post-processed once per distinct word
        and cached; only an unknown run that crosses a word boundary needs
        merging here.
        """
        normalized = self.normalizer.normalize(to_text(text))
        if not normalized:
            return []
        if self.bytewise is not None and self.bytewise.applies(normalized):
            return self.postprocessor.process(self.bytewise.encode(normalized))
        model = self.model
        if not model.exact_per_word:
            return self.postprocessor.process(model.encode(normalized))
        out: list[Pair] = []
        prev_unk = False
        for word in self.pretokenizer.split(normalized):
            pairs, starts_unk, ends_unk = self._word_pairs(word)
            if prev_unk and starts_unk:
                piece, piece_id = out.pop()
                out.append((piece + pairs[0][0], piece_id))
                out.extend(pairs[1:])
            else:
                out.extend(pairs)
            prev_unk = ends_unk
        return out

    def _word_pairs(self, word: str, cache: bool = True) -> tuple[list[Pair], bool, bool]:
        """A word's post-processed pairs, and whether it starts / ends with
        an unknown piece that may merge with a neighbour's."""
        pairs = self.postprocessor.process(self.model.encode_word(word, cache).pieces)
        edges = self.postprocessor.unknown_edges(pairs)
        return pairs, bool(edges & STARTS), bool(edges & ENDS)

    def encode_with_offsets(self, text, segment=None) -> list[EncodedPiece]:
        """Encode and report each piece's surface and byte span in ``text``.

        Mirrors the pieces of sentencepiece's ``SentencePieceText``: begin and
        end are byte offsets into the original input; of the byte pieces an
        unknown character expands to, only the last carries its surface.
        ``segment(normalized)`` gives the model's pairs (default: the best
        segmentation; a sample or an n-best hypothesis for the API's protos).
        """
        original = to_text(text)
        normalized, norm_to_orig = self.normalizer.normalize_with_offsets(original)
        if not normalized:
            return []
        if segment is not None:
            pairs = segment(normalized)
        elif self.bytewise is not None and self.bytewise.applies(normalized):
            pairs = self.bytewise.encode(normalized)
        else:
            pairs = self.model.encode(normalized)
        return self.postprocessor.with_offsets(pairs, original, norm_to_orig)

    # -- sampling and n-best (the algorithms are the model's) -----------
    def check_sampling(self, nbest_size: int, what: str, alpha: float | None = None) -> None:
        """sentencepiece's checks, in its order: alpha, the size, the model type.

        ``what`` is the C++ entry point: ``SampleEncode`` (unigram and BPE),
        ``NBestEncode``, ``SampleEncodeAndScore`` or ``CalculateEntropy``
        (unigram only). 0.2.3 requires a finite ``alpha >= 0`` for
        ``SampleEncode`` (without a message; this one is ours).
        """
        if alpha is not None and not (math.isfinite(alpha) and alpha >= 0.0):
            raise EncodeError("alpha must be a finite number >= 0, got %r." % (alpha,))
        if nbest_size > regularization.MAX_NBEST_SIZE:
            raise Unsupported("nbest_size must be nbest_size <= %d"
                              % regularization.MAX_NBEST_SIZE)
        model = self.model
        able = model.supports_sampling if what == "SampleEncode" else model.supports_nbest
        if not able:
            raise Unsupported("%s is not available for the current model." % what)

    def set_random_generator_seed(self, seed: int | None) -> None:
        """Give this processor a generator of its own, seeded with ``seed``
        (None: fresh entropy); otherwise it shares the module's generator
        (``subtok.set_random_generator_seed``)."""
        self._rng = regularization.new_rng(seed)

    def _random(self, rng):
        if rng is not None:
            return rng
        return self.__dict__.get("_rng") or regularization.shared_rng()

    def _lattice(self, text):
        return self.model.lattice(self.normalizer.normalize(to_text(text)))

    @staticmethod
    def _output(pairs: list[Pair], out_type):
        if out_type is int or out_type == "id":
            return [i for _, i in pairs]
        if out_type is str or out_type == "piece":
            return [p for p, _ in pairs]
        raise ValueError("out_type must be int or str, got %r" % (out_type,))

    def sample_pairs(self, text, nbest_size: int = -1, alpha: float = 0.1, rng=None) -> list[Pair]:
        """One sampled segmentation as post-processed pairs (C++ ``SampleEncode``).

        Unigram: ``nbest_size < 0`` samples the whole lattice, 0 or 1 is
        Viterbi, ``> 1`` samples among the n-best with ``p ∝ exp(alpha ·
        score)``. BPE: dropout with probability ``alpha`` (``nbest_size``
        ignored). ``rng`` is a ``random.Random``; by default the processor's
        own (see :meth:`set_random_generator_seed`).
        """
        self.check_sampling(nbest_size, "SampleEncode", alpha)
        normalized = self.normalizer.normalize(to_text(text))
        return self.postprocessor.process(
            self.model.sample(normalized, nbest_size, alpha, self._random(rng)))

    def nbest_pairs_and_scores(self, text, nbest_size: int) -> list[tuple[list[Pair], float]]:
        """The n best segmentations with their scores (C++ ``NBestEncode``).

        ``nbest_size`` above 512 fails; below 2 gives the Viterbi result
        with score 0, as sentencepiece.
        """
        self.check_sampling(nbest_size, "NBestEncode")
        normalized = self.normalizer.normalize(to_text(text))
        process = self.postprocessor.process
        return [(process(pairs), score) for pairs, score in self.model.nbest(normalized, nbest_size)]

    def nbest_pairs(self, text, nbest_size: int) -> list[list[Pair]]:
        return [pairs for pairs, _ in self.nbest_pairs_and_scores(text, nbest_size)]

    def sample_encode_and_score(self, input, num_samples: int = 1, alpha: float = 0.1,
                                wor: bool = False, include_best: bool = False, out_type=int,
                                add_bos: bool = False, add_eos: bool = False,
                                reverse: bool = False, emit_unk_piece: bool = False, *, rng=None):
        """``num_samples`` sampled segmentations with scores (unigram only).

        ``wor=False``: independent draws scored by their log-probability
        under ``p ∝ exp(alpha · score)``. ``wor=True``: distinct paths
        (Gumbel-top-k) scored by their log inclusion probability;
        ``include_best`` puts the Viterbi path first with score 0. Returns
        a list of (pieces or ids, score) pairs.
        """
        if isinstance(input, (list, tuple)):
            return [self.sample_encode_and_score(
                x, num_samples, alpha, wor, include_best, out_type, add_bos, add_eos,
                reverse, emit_unk_piece, rng=rng) for x in input]
        self.check_sampling(0, "SampleEncodeAndScore")
        if include_best and not wor:
            raise EncodeError("include_best is only supported with wor=True.")
        normalized = self.normalizer.normalize(to_text(input))
        found = self.model.sample_and_score(normalized, num_samples, alpha, wor, include_best,
                                            self._random(rng))
        if not found:  # as sentencepiece (e.g. empty text)
            raise EncodeError("SampleEncodeAndScore returns empty result.")
        post = self.postprocessor
        return [(self._output(post.extra(post.process(pairs), add_bos, add_eos, reverse,
                                         emit_unk_piece), out_type), score)
                for pairs, score in found]

    def nbest_encode_and_score(self, input, nbest_size: int = -1, out_type=int,
                               add_bos: bool = False, add_eos: bool = False,
                               reverse: bool = False, emit_unk_piece: bool = False):
        """The n best segmentations with each one's float32 score (unigram
        only; ``nbest_size <= 0`` means 1, as 0.2.3's ``nbest_encode``)."""
        if isinstance(input, (list, tuple)):
            return [self.nbest_encode_and_score(x, nbest_size, out_type, add_bos, add_eos,
                                                reverse, emit_unk_piece) for x in input]
        post = self.postprocessor
        return [(self._output(post.extra(pairs, add_bos, add_eos, reverse, emit_unk_piece),
                              out_type), score)
                for pairs, score in self.nbest_pairs_and_scores(input, max(1, nbest_size))]

    def calculate_entropy(self, input, alpha: float = 0.1):
        """Entropy (nats) of the segmentation distribution ``p ∝ exp(alpha · score)``."""
        if isinstance(input, (list, tuple)):
            return [self.calculate_entropy(x, alpha) for x in input]
        self.check_sampling(0, "CalculateEntropy")
        return self._lattice(input).entropy(alpha)

    # -- decoding ---------------------------------------------------------
    def pairs_of_ids(self, ids) -> list[Pair]:
        """``(piece, id)`` of each id; :class:`IdOutOfRange` for a bad one."""
        pieces = self.vocab.pieces
        return [(pieces[self.check_id(i)], i) for i in ids]

    def pairs_of_pieces(self, pieces) -> list[Pair]:
        lookup = self.vocab.piece_to_id
        return [(p, lookup(p)) for p in pieces]

    def decode_pairs(self, pairs: list[Pair]) -> str:
        return self.decoder.decode(pairs)
