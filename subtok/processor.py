"""The processor: load a model, then encode and decode.

Pipeline of one encode::

    text --normalizer--> normalized --model--> (piece, id) pairs
         --post-process--> byte fallback, unknown runs merged
         --extra options--> bos / eos / reverse / unk piece

Names follow ``sentencepiece.SentencePieceProcessor`` where they overlap, so
code written against sentencepiece mostly runs unchanged.
"""

from __future__ import annotations

import functools
import math
import operator
import os
from dataclasses import dataclass, replace

from subtok.decoders.sentencepiece import Decoder
from subtok.errors import EncodeError, IdOutOfRange, SubtokError
from subtok.formats.sentencepiece import ModelData, load_model, parse_model, serialize_model
from subtok.models import MODELS
from subtok.models.unigram.model import words_reusable
from subtok.models.bytewise import BytewiseSegmenter
from subtok.normalizers.charsmap import load_rules
from subtok.normalizers.sentencepiece import Normalizer
from subtok.cli.fastpath.output import ENDS, STARTS, OutputTexts, format_pairs, unknown_runs_stay_inside
from subtok.cli.fastpath.plain_lines import PlainLineEncoder, WordEntries, unmarked
from subtok.models.unigram import lattice as _sampling
from subtok.vocab import PieceType, byte_piece

Pair = tuple[str, int]

#: Words whose CLI output a processor keeps before its caches start over.
MAX_WORDS = 400_000

#: Word entries of the unigram word path kept before that cache starts
#: over: they are joined again cheaply from the cached parts (35.7k words
#: of gutenberg cost 0.15 s to compute at first, 11.6k recomputed 0.05 s).
MAX_LINE_WORDS = 16_384


@dataclass(frozen=True)
class EncodedPiece:
    """One piece with its place in the original text (byte offsets)."""

    piece: str
    id: int
    surface: str
    begin: int
    end: int


def to_text(value) -> str:
    """Accept ``str`` or UTF-8 ``bytes`` (invalid bytes are kept as escapes)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "surrogateescape")
    raise TypeError("expected str or bytes, got %s" % type(value).__name__)


class SentencePieceProcessor:
    """Encode and decode with a SentencePiece model (``.model`` file)."""

    def __init__(self, model_file: str | os.PathLike | None = None, *,
                 model_proto: bytes | None = None) -> None:
        self._data: ModelData | None = None
        if model_file is not None:
            self.load(model_file)
        elif model_proto is not None:
            self.load_from_serialized_proto(model_proto)

    # -- loading --------------------------------------------------------
    def load(self, model_file: str | os.PathLike) -> None:
        self._setup(load_model(model_file))

    def load_from_serialized_proto(self, data: bytes) -> None:
        self._setup(parse_model(bytes(data), "<model proto>"))

    @classmethod
    def from_model_data(cls, data: ModelData) -> "SentencePieceProcessor":
        processor = cls()
        processor._setup(data)
        return processor

    def _setup(self, data: ModelData) -> None:
        self._data = data
        vocab = data.vocabulary()
        self.vocab = vocab
        spec = data.normalizer
        self.normalizer = Normalizer(
            load_rules(spec.precompiled_charsmap),
            add_dummy_prefix=spec.add_dummy_prefix,
            remove_extra_whitespaces=spec.remove_extra_whitespaces,
            escape_whitespaces=spec.escape_whitespaces,
            treat_whitespace_as_suffix=data.treat_whitespace_as_suffix,
            user_defined_symbols=vocab.user_defined(),
        )
        denormalize = None
        if data.denormalizer is not None:
            d = data.denormalizer
            denormalize = Normalizer(
                load_rules(d.precompiled_charsmap),
                add_dummy_prefix=d.add_dummy_prefix,
                remove_extra_whitespaces=d.remove_extra_whitespaces,
                escape_whitespaces=d.escape_whitespaces,
            ).normalize
        self.model = MODELS[data.model_type](
            vocab, treat_whitespace_as_suffix=data.treat_whitespace_as_suffix)
        #: Only for a model whose rules are not all text (see models/bytewise.py).
        self._bytewise = BytewiseSegmenter(self.model) if self.normalizer.bytewise else None
        self.decoder = Decoder(vocab, add_dummy_prefix=spec.add_dummy_prefix,
                               remove_extra_whitespaces=spec.remove_extra_whitespaces,
                               denormalize=denormalize)
        self._byte_pairs = [(byte_piece(b), i) for b, i in enumerate(vocab.byte_ids)]
        self._line_cache: dict[bool, dict[str, tuple]] = {True: {}, False: {}}
        self._plain: dict[bool, PlainLineEncoder | None] = {True: None, False: None}
        self._word_entries: dict[bool, WordEntries | None] = {True: None, False: None}
        self._word_texts = {ids: OutputTexts(functools.partial(self._new_word_text, ids))
                            for ids in (True, False)}
        self._word_edges: dict[bool, dict[str, int]] = {True: {}, False: {}}
        self._plain_lines = (spec.add_dummy_prefix and spec.remove_extra_whitespaces
                             and spec.escape_whitespaces and not data.treat_whitespace_as_suffix
                             and self.normalizer.is_plain(" ")
                             and self.model.cuts_before_every_space)
        # Without byte fallback, unknown runs merge, also across words.
        self._merges_unknown = not vocab.byte_fallback
        #: The share of their full size (MAX_WORDS here, MAX_TOKENS and
        #: MAX_PARTS in plain_lines) that the CLI caches keep: each of N
        #: worker processes keeps 1/N, so that together they hold what one
        #: process would (see batch.PerLine.in_worker).
        self.cache_share = 1.0

    def __reduce__(self):
        return (_processor_from_proto, (self.serialized_model_proto(),))

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

    vocab_size = get_piece_size
    piece_size = get_piece_size

    def __len__(self) -> int:
        return len(self.vocab)

    def _check_id(self, piece_id: int) -> int:
        if not 0 <= piece_id < len(self.vocab):
            raise IdOutOfRange("piece id is out of range: %d (the model has %d pieces)."
                               % (piece_id, len(self.vocab)))
        return piece_id

    def piece_to_id(self, piece):
        if isinstance(piece, (list, tuple)):
            return [self.piece_to_id(p) for p in piece]
        return self.vocab.piece_to_id(piece)

    def id_to_piece(self, piece_id):
        if isinstance(piece_id, (list, tuple)):
            return [self.id_to_piece(i) for i in piece_id]
        return self.vocab.pieces[self._check_id(piece_id)]

    def get_score(self, piece_id: int) -> float:
        return self.vocab.scores[self._check_id(piece_id)]

    def _is(self, piece_id: int, kind: PieceType) -> bool:
        return self.vocab.types[self._check_id(piece_id)] == kind

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
        if data.model_type not in ("unigram", "bpe"):
            raise EncodeError("Vocabulary constraint is only enabled in subword units.")
        keep = set(valid)
        fixed = (PieceType.CONTROL, PieceType.UNKNOWN, PieceType.USER_DEFINED)
        types = [t if t in fixed else
                 (PieceType.NORMAL if p in keep or len(p) == 1 else PieceType.UNUSED)
                 for p, t in zip(data.pieces, data.types)]
        restricted = replace(data, types=types)
        if restricted.proto is not None:
            proto = type(restricted.proto)()
            proto.CopyFrom(restricted.proto)
            for entry, kind in zip(proto.pieces, types):
                entry.type = kind
            restricted.proto = proto
        self._setup(restricted)

    # -- normalization ----------------------------------------------------
    def normalize(self, text) -> str:
        return self.normalizer.normalize(to_text(text))

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
        if self._bytewise is not None and self._bytewise.applies(normalized):
            return self._post_process(self._bytewise.encode(normalized))
        model = self.model
        if not model.exact_per_word:
            return self._post_process(model.encode(normalized))
        out: list[Pair] = []
        prev_unk = False
        for word in model.split_words(normalized):
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
        pairs = self._post_process(self.model.encode_word(word, cache).pieces)
        edges = self._unknown_edges(pairs)
        return pairs, bool(edges & STARTS), bool(edges & ENDS)

    def encode_line(self, text: str, ids: bool) -> str:
        """One line of spm_encode output: ids or pieces joined by spaces.

        The fast path of the CLI. A plain line (no normalization rule
        applies, no "▁" typed in it) is a join of cached token outputs (see
        plain_lines.py); so is a line that normalization changes, from the
        tokens of its normalized text. A line the token cache cannot vouch
        for is split into words whose entries are cached too, from the same
        part entries, and checked word by word. A line where a unigram word
        may not be reused is recomputed in context from those words
        (:meth:`_context_line`); one where an unknown run crosses a word
        boundary takes the general path.
        """
        if self._plain_lines:
            out = self._plain_encoder(ids).encode_one(text)
            if out is not None:
                return out  # else the exact per-word checks below decide
        return self._normalized_line(text, ids)

    def encode_lines(self, lines: list[str], ids: bool) -> list[str]:
        """:meth:`encode_line` of each line, the plain ones in one go."""
        if not self._plain_lines:
            return [self._normalized_line(line, ids) for line in lines]
        out = self._plain_encoder(ids).lines(lines)
        if None in out:
            for number, found in enumerate(out):
                if found is None:
                    out[number] = self._normalized_line(lines[number], ids)
        return out

    def _normalized_line(self, text: str, ids: bool) -> str:
        """:meth:`encode_line` past the plain path: words of the normalized
        text, with the per-word checks."""
        normalized = self.normalizer.normalize(text)
        if not normalized:
            return ""
        if self._bytewise is not None and self._bytewise.applies(normalized):
            return self._general_line(text, ids)
        if self._plain_lines and not self.normalizer.is_plain(text):
            out = self._plain_encoder(ids).encode_normalized(normalized)
            if out is not None:
                return out
        words = self.model.split_words(normalized)
        if self.model.exact_per_word:
            return self._independent_words_line(text, words, ids)
        cache = self._line_cache[ids]
        get = cache.get
        entries = [get(w) or self._line_entry(w, ids, cache) for w in words]
        if self._merges_unknown and any(map(_UNK_EDGE, entries)) and \
                not unknown_runs_stay_inside(list(map(_UNK_EDGE, entries))):
            return self._general_line(text, ids)
        # Usual case in one comparison; else the exact per-word check.
        if min(map(_ROBUSTNESS, entries)) <= 1.01 * sum(map(_MAGNITUDE, entries)) + 1.0 \
                and not words_reusable(list(map(_ROBUSTNESS, entries)),
                                       list(map(_MAGNITUDE, entries))):
            return self._context_line(text, words, entries, ids)
        return unmarked(" ".join(map(_TEXT, entries)))

    def _context_line(self, text: str, words: list[str], entries: list, ids: bool) -> str:
        """A unigram line where some word may not be reused where it
        starts: the model recomputes such words in context
        (``UnigramModel.context_head``), up to where the rest can all be
        reused as cached. The words it walks are read back from their
        cached output when no character of the line can become an unknown
        piece (every one is a piece by itself), so their output is their
        pieces exactly; else the general path segments every word again."""
        model = self.model
        if not model.single_chars().issuperset("".join(words)):
            return self._general_line(text, ids)
        head, reused = model.context_head(words, _CachedLine(model, ids, entries))
        # No unknown piece anywhere, so nothing to post-process.
        texts = [format_pairs(head, ids)] if head else []
        texts.extend(unmarked(entry[0]) for entry in entries[reused:])
        return " ".join(texts)

    def _independent_words_line(self, text: str, words: list[str], ids: bool) -> str:
        """Words of a model whose words never interact (all but unigram):
        one cached output text per word, joined; only an unknown run that
        may cross words sends the line down the general path."""
        texts, edges = self._word_texts[ids], self._word_edges[ids]
        if len(texts) >= MAX_WORDS * self.cache_share:  # between lines: edges cover the line
            texts.clear()
            edges.clear()
        out = " ".join(map(texts.__getitem__, words))
        if edges and not edges.keys().isdisjoint(words) and \
                not unknown_runs_stay_inside([edges.get(w, 0) for w in words]):
            return self._general_line(text, ids)
        return out

    def _new_word_text(self, ids: bool, word: str) -> str:
        """Cache a new word's output text (and its unknown edges, if any)."""
        pairs = self._post_process(self.model.encode_word(word, cache=False).pieces)
        flags = self._unknown_edges(pairs)
        if flags:
            self._word_edges[ids][word] = flags
        text = self._word_texts[ids][word] = format_pairs(pairs, ids)
        return text

    def _unknown_edges(self, pairs: list[Pair]) -> int:
        """STARTS / ENDS if ``pairs`` starts / ends with an unknown piece that
        would merge with a neighbour's."""
        if not self._merges_unknown:
            return 0
        unk = self.vocab.unk_index
        return (STARTS if pairs[0][1] == unk else 0) | (ENDS if pairs[-1][1] == unk else 0)

    def _plain_encoder(self, ids: bool) -> PlainLineEncoder:
        encoder = self._plain[ids]
        if encoder is None:
            encoder = self._plain[ids] = PlainLineEncoder(self, ids, self.word_entries(ids))
        return encoder

    def word_entries(self, ids: bool) -> WordEntries:
        """Word entries for CLI output, shared by both line paths."""
        entries = self._word_entries[ids]
        if entries is None:
            entries = self._word_entries[ids] = WordEntries(self, ids)
        return entries

    def _general_line(self, text: str, ids: bool) -> str:
        return format_pairs(self.encode_pairs(text), ids)

    def _line_entry(self, word: str, ids: bool, cache: dict):
        """A word's cached CLI output entry (see plain_lines.WordEntries),
        joined from the part entries both line paths share."""
        entry = self.word_entries(ids).word(word)
        if len(cache) >= MAX_LINE_WORDS:
            cache.clear()
        cache[word] = entry
        return entry

    def _post_process(self, pairs) -> list[Pair]:
        """Byte fallback for unknown pieces, else merge runs of unknowns."""
        unk = self.vocab.unk_index
        out: list[Pair] = []
        byte_fallback = self.vocab.byte_fallback
        prev_unk = False
        for piece, piece_id in pairs:
            if piece_id != unk:
                out.append((piece, piece_id))
                prev_unk = False
            elif byte_fallback:
                byte_pairs = self._byte_pairs
                out.extend(byte_pairs[b] for b in piece.encode("utf-8", "surrogateescape"))
            elif prev_unk:
                out[-1] = (out[-1][0] + piece, unk)
            else:
                out.append((piece, piece_id))
                prev_unk = True
        return out

    def encode_with_offsets(self, text) -> list[EncodedPiece]:
        """Encode and report each piece's surface and byte span in ``text``.

        Mirrors the pieces of sentencepiece's ``SentencePieceText``: begin and
        end are byte offsets into the original input; of the byte pieces an
        unknown character expands to, only the last carries its surface.
        """
        original = to_text(text)
        normalized, norm_to_orig = self.normalizer.normalize_with_offsets(original)
        if not normalized:
            return []
        char_bytes = [0]
        for char in original:
            char_bytes.append(char_bytes[-1] + _utf8_length(char))
        raw = original.encode("utf-8", "surrogateescape")
        unk = self.vocab.unk_index
        out: list[EncodedPiece] = []
        position = 0
        if self._bytewise is not None and self._bytewise.applies(normalized):
            pairs = self._bytewise.encode(normalized)
        else:
            pairs = self.model.encode(normalized)
        for piece, piece_id in pairs:
            begin = char_bytes[norm_to_orig[position]]
            position += len(piece)
            end = char_bytes[norm_to_orig[position]]
            surface = raw[begin:end].decode("utf-8", "surrogateescape")
            if piece_id == unk and self.vocab.byte_fallback:
                data = piece.encode("utf-8", "surrogateescape")
                for k, value in enumerate(data):
                    last = k == len(data) - 1
                    name, byte_id = self._byte_pairs[value]
                    out.append(EncodedPiece(name, byte_id, surface if last else "",
                                            begin, end if last else begin))
            elif piece_id == unk and out and out[-1].id == unk:
                prev = out.pop()
                out.append(EncodedPiece(prev.piece + piece, unk, prev.surface + surface,
                                        prev.begin, end))
            else:
                out.append(EncodedPiece(piece, piece_id, surface, begin, end))
        return out

    def _extra(self, pairs: list[Pair], add_bos: bool, add_eos: bool, reverse: bool,
               emit_unk_piece: bool) -> list[Pair]:
        """sentencepiece's Python order: reverse, then bos, then eos."""
        if emit_unk_piece:
            unk = self.vocab.unk_index
            name = self.vocab.pieces[unk]
            pairs = [(name, i) if i == unk else (p, i) for p, i in pairs]
        if reverse:
            pairs = pairs[::-1]
        if add_bos:
            pairs = [self._control("bos")] + pairs
        if add_eos:
            pairs = pairs + [self._control("eos")]
        return pairs

    def _control(self, which: str) -> Pair:
        piece_id = self.bos_id() if which == "bos" else self.eos_id()
        if piece_id < 0:
            raise EncodeError("%s token is not defined as a control symbol in this model."
                              % which.upper())
        return self.vocab.pieces[piece_id], piece_id

    def encode(self, input, out_type=int, add_bos: bool = False, add_eos: bool = False,
               reverse: bool = False, emit_unk_piece: bool = False, *,
               enable_sampling: bool = False, nbest_size: int = -1, alpha: float = 0.1,
               num_threads: int | None = None):
        """Encode a string (or a list of strings) into ids or pieces."""
        if isinstance(input, (list, tuple)):
            return [self.encode(x, out_type, add_bos, add_eos, reverse, emit_unk_piece,
                                enable_sampling=enable_sampling, nbest_size=nbest_size,
                                alpha=alpha) for x in input]
        if enable_sampling:
            pairs = self._sample_pairs(input, nbest_size, alpha)
        else:
            pairs = self.encode_pairs(input)
        pairs = self._extra(pairs, add_bos, add_eos, reverse, emit_unk_piece)
        if out_type is int or out_type == "id":
            return [i for _, i in pairs]
        if out_type is str or out_type == "piece":
            return [p for p, _ in pairs]
        raise ValueError("out_type must be int or str, got %r" % (out_type,))

    # -- sampling and n-best (issue 5; the algorithms are in sampling.py) --
    def _sample_pairs(self, input, nbest_size: int, alpha: float, rng=None) -> list[Pair]:
        """``encode(enable_sampling=True)``: 0.2.3's Python checks, then sample.

        sentencepiece's Python wrapper refuses ``nbest_size`` 0 or 1 and a
        missing ``alpha`` before calling C++ (which itself would fall back to
        Viterbi); :meth:`sample_pairs` has the C++ behaviour. ``None`` stands
        for 0.2.3's constructor defaults (``nbest_size=-1``, ``alpha=0.1``).
        """
        if nbest_size is None:  # None means the constructor default, as in 0.2.3
            nbest_size = -1
        if alpha is None:
            alpha = 0.1
        if nbest_size == 0 or nbest_size == 1:
            raise EncodeError(_sampling.SAMPLING_ARGS_MESSAGE)
        return self.sample_pairs(input, nbest_size, alpha, rng)

    def _check_sampling(self, nbest_size: int, what: str, alpha: float | None = None) -> None:
        """sentencepiece's checks, in its order: alpha, the size, the model type.

        ``what`` is the C++ entry point: ``SampleEncode`` (unigram and BPE),
        ``NBestEncode``, ``SampleEncodeAndScore`` or ``CalculateEntropy``
        (unigram only). 0.2.3 requires a finite ``alpha >= 0`` for
        ``SampleEncode`` (without a message; this one is ours).
        """
        if alpha is not None and not (math.isfinite(alpha) and alpha >= 0.0):
            raise EncodeError("alpha must be a finite number >= 0, got %r." % (alpha,))
        if nbest_size > _sampling.MAX_NBEST_SIZE:
            raise EncodeError("nbest_size must be nbest_size <= %d" % _sampling.MAX_NBEST_SIZE)
        kinds = ("unigram", "bpe") if what == "SampleEncode" else ("unigram",)
        if self.model.name not in kinds:
            raise EncodeError("%s is not available for the current model." % what)

    def set_random_generator_seed(self, seed: int | None) -> None:
        """Seed the generator used when no ``rng`` is passed (None: fresh entropy)."""
        self._rng = _sampling.new_rng(seed)

    def _random(self, rng):
        if rng is not None:
            return rng
        own = self.__dict__.get("_rng")
        if own is None:
            own = self._rng = _sampling.new_rng()
        return own

    def _lattice(self, text) -> "_sampling.Lattice":
        return _sampling.Lattice(self.model, self.normalizer.normalize(to_text(text)))

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
        self._check_sampling(nbest_size, "SampleEncode", alpha)
        rng = self._random(rng)
        model = self.model
        if model.name == "bpe":
            normalized = self.normalizer.normalize(to_text(text))
            return self._post_process(model.merge(normalized, alpha, rng))
        if 0 <= nbest_size <= 1:
            return self.encode_pairs(text)
        lattice = self._lattice(text)
        if nbest_size < 0:
            path = lattice.sample(alpha, rng)
        elif lattice.text:
            path = _sampling.choose_hypothesis(lattice.nbest(nbest_size), alpha, rng)
        else:
            path = []
        return self._post_process(lattice.pairs(path))

    def nbest_pairs_and_scores(self, text, nbest_size: int) -> list[tuple[list[Pair], float]]:
        """The n best segmentations with their scores (C++ ``NBestEncode``).

        ``nbest_size`` above 512 fails; below 2 gives the Viterbi result
        with score 0, as sentencepiece.
        """
        self._check_sampling(nbest_size, "NBestEncode")
        nbest_size = max(1, min(nbest_size, 1024))
        if nbest_size == 1:
            return [(self.encode_pairs(text), 0.0)]
        lattice = self._lattice(text)
        if not lattice.text:
            return [([], 0.0)]
        return [(self._post_process(lattice.pairs(path)), score)
                for path, score in lattice.nbest(nbest_size)]

    def nbest_pairs(self, text, nbest_size: int) -> list[list[Pair]]:
        return [pairs for pairs, _ in self.nbest_pairs_and_scores(text, nbest_size)]

    def nbest_encode(self, input, nbest_size: int = -1, out_type=int, add_bos: bool = False,
                     add_eos: bool = False, reverse: bool = False, emit_unk_piece: bool = False):
        """The ``nbest_size`` best segmentations, best first (unigram only).

        As 0.2.3's Python ``nbest_encode``, ``nbest_size <= 0`` means 1.
        """
        if isinstance(input, (list, tuple)):
            return [self.nbest_encode(x, nbest_size, out_type, add_bos, add_eos, reverse,
                                      emit_unk_piece) for x in input]
        return [hyp for hyp, _ in self.nbest_encode_and_score(
            input, nbest_size, out_type, add_bos, add_eos, reverse, emit_unk_piece)]

    def nbest_encode_and_score(self, input, nbest_size: int = -1, out_type=int,
                               add_bos: bool = False, add_eos: bool = False,
                               reverse: bool = False, emit_unk_piece: bool = False):
        """Like :meth:`nbest_encode`, with each hypothesis' float32 score."""
        if isinstance(input, (list, tuple)):
            return [self.nbest_encode_and_score(x, nbest_size, out_type, add_bos, add_eos,
                                                reverse, emit_unk_piece) for x in input]
        hyps = self.nbest_pairs_and_scores(input, max(1, nbest_size))
        return [(self._output(self._extra(pairs, add_bos, add_eos, reverse, emit_unk_piece),
                              out_type), score) for pairs, score in hyps]

    def nbest_encode_as_pieces(self, input, nbest_size: int = -1, **kwargs):
        return self.nbest_encode(input, nbest_size, out_type=str, **kwargs)

    def nbest_encode_as_ids(self, input, nbest_size: int = -1, **kwargs):
        return self.nbest_encode(input, nbest_size, out_type=int, **kwargs)

    def sample_encode_as_pieces(self, input, nbest_size: int = -1, alpha: float = 0.1, **kwargs):
        return self.encode(input, out_type=str, enable_sampling=True, nbest_size=nbest_size,
                           alpha=alpha, **kwargs)

    def sample_encode_as_ids(self, input, nbest_size: int = -1, alpha: float = 0.1, **kwargs):
        return self.encode(input, out_type=int, enable_sampling=True, nbest_size=nbest_size,
                           alpha=alpha, **kwargs)

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
        self._check_sampling(0, "SampleEncodeAndScore")
        if include_best and not wor:
            raise EncodeError("include_best is only supported with wor=True.")
        lattice = self._lattice(input)
        found = []
        if lattice.text:
            found = _sampling.sample_encode_and_score(lattice, num_samples, alpha, wor,
                                                      include_best, self._random(rng))
        if not found:  # as sentencepiece (e.g. empty text)
            raise EncodeError("SampleEncodeAndScore returns empty result.")
        return [(self._output(self._extra(self._post_process(lattice.pairs(path)), add_bos,
                                          add_eos, reverse, emit_unk_piece), out_type), score)
                for path, score in found]

    def calculate_entropy(self, input, alpha: float = 0.1):
        """Entropy (nats) of the segmentation distribution ``p ∝ exp(alpha · score)``."""
        if isinstance(input, (list, tuple)):
            return [self.calculate_entropy(x, alpha) for x in input]
        self._check_sampling(0, "CalculateEntropy")
        return self._lattice(input).entropy(alpha)

    def encode_as_ids(self, input, **kwargs):
        return self.encode(input, out_type=int, **kwargs)

    def encode_as_pieces(self, input, **kwargs):
        return self.encode(input, out_type=str, **kwargs)

    # -- decoding ---------------------------------------------------------
    def decode_ids(self, ids) -> str:
        pieces = self.vocab.pieces
        return self.decoder.decode([(pieces[self._check_id(i)], i) for i in ids])

    def decode_pieces(self, pieces) -> str:
        lookup = self.vocab.piece_to_id
        return self.decoder.decode([(p, lookup(p)) for p in pieces])

    def decode(self, input):
        """Decode ids or pieces (or a list of such lists) into text."""
        if not input:
            return ""
        first = input[0]
        if isinstance(first, (list, tuple)):
            return [self.decode(x) for x in input]
        if isinstance(first, str):
            return self.decode_pieces(input)
        return self.decode_ids(input)


# Fields of a CLI cache entry (see SentencePieceProcessor._line_entry).
_TEXT, _ROBUSTNESS, _MAGNITUDE, _UNK_EDGE = (operator.itemgetter(i) for i in (0, 2, 3, 4))


def _utf8_length(char: str) -> int:
    code = ord(char)
    if code < 0x80 or 0xDC80 <= code <= 0xDCFF:
        return 1
    if code < 0x800:
        return 2
    if code < 0x10000:
        return 3
    return 4


def _processor_from_proto(data: bytes) -> SentencePieceProcessor:
    return SentencePieceProcessor(model_proto=data)


class _CachedLine:
    """A line's cached CLI output entries as ``UnigramModel.context_head``
    reads them (see ``EncodedWords``): the pieces of a run of words are
    read back from their output texts, joined, in one go, and only if
    asked for."""

    __slots__ = ("_model", "_ids", "_texts", "robustness", "magnitudes")

    def __init__(self, model, ids: bool, entries: list) -> None:
        self._model, self._ids = model, ids
        self._texts = list(map(_TEXT, entries))
        self.robustness = list(map(_ROBUSTNESS, entries))
        self.magnitudes = list(map(_MAGNITUDE, entries))

    def pieces(self, start: int, end: int) -> list[Pair]:
        if start >= end:
            return []
        fields = unmarked(" ".join(self._texts[start:end])).split(" ")
        model = self._model
        piece_ids = map(int, fields) if self._ids else (model.table[f][0] for f in fields)
        return list(map(model.pairs.__getitem__, piece_ids))
