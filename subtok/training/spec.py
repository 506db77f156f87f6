"""Training options: one dataclass mirroring spm_train's flags and the proto.

Every field of :class:`TrainerOptions` is named after the spm_train flag
(``spm_train_main.cc``), which is also the TrainerSpec / NormalizerSpec
field it fills, with the same type and default. The few extras are
spm_train flags that are not proto fields (``*_file``,
``normalization_rule_name``, ``denormalization_rule_tsv``, ``random_seed``,
``minloglevel``) and subtok's own ``progress``.

:meth:`TrainerOptions.validate` is the one place that checks options; its
messages follow sentencepiece's (``VerifySpec``) but name the flag, the
value and the allowed range on one line. :meth:`to_trainer_spec` and
:meth:`to_normalizer_spec` produce the dicts that
:func:`subtok.formats.sentencepiece.build_proto` stores: like spm_train, every
TrainerSpec field is written, so the model records how it was trained.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from subtok.errors import TrainerError
from subtok.flags import parse_bool, split_csv
from subtok.float32 import f32
from subtok.training import TOKENIZER_FILE_TYPES, TRAINERS

#: spm's value of an unset --random_seed (uint32 max).
UNSET_SEED = 4294967295
#: Seed of the reservoir sampler when --random_seed is unset. sentencepiece
#: then uses std::random_device (a different sample every run); subtok stays
#: deterministic instead.
DEFAULT_SAMPLING_SEED = 12345678


#: Options that are repeated strings in the proto (CSV on the command line).
LIST_FIELDS = ("input", "accept_language", "control_symbols", "user_defined_symbols",
               "special_tokens")

#: Deprecated / no-op options of sentencepiece 0.2.3 that subtok accepts and
#: ignores with a warning when set to a non-default value.
IGNORED_OPTIONS = {
    "accept_language": "informational only",
    "self_test_sample_size": "deprecated in sentencepiece 0.2.3, no self-test data is written",
    "enable_differential_privacy": "deprecated in sentencepiece 0.2.3, not implemented",
    "differential_privacy_noise_level": "deprecated in sentencepiece 0.2.3, not implemented",
    "differential_privacy_clipping_threshold": "deprecated in sentencepiece 0.2.3, not implemented",
    "train_extremely_large_corpus": "deprecated in sentencepiece 0.2.3; subtok has no size limit",
    "mining_sentence_size": "deprecated and unused in sentencepiece",
    "training_sentence_size": "deprecated and unused in sentencepiece",
}


#: Options only the unigram trainer reads. (``num_threads`` is not one: the
#: corpus of every model type is normalized in that many worker processes.)
UNIGRAM_ONLY = ("seed_sentencepiece_size", "shrinking_factor", "num_sub_iterations")
#: Options that shape BPE/unigram pieces; CHAR and WORD do not look at them.
PIECE_SHAPE = ("max_sentencepiece_length", "split_by_unicode_script", "split_by_number",
               "split_by_whitespace", "split_digits", "allow_whitespace_only_pieces")


@dataclass
class TrainerOptions:
    """All options of ``spm_train`` (names, types and defaults as spm_train's)."""

    # -- input / output ------------------------------------------------------
    input: list[str] = field(default_factory=list)
    input_format: str = ""
    model_prefix: str = ""
    model_type: str = "unigram"
    vocab_size: int = 8000
    accept_language: list[str] = field(default_factory=list)
    self_test_sample_size: int = 0
    # -- corpus selection ----------------------------------------------------
    character_coverage: float = 0.9995
    input_sentence_size: int = 0
    shuffle_input_sentence: bool = True
    max_sentence_length: int = 4192
    # -- unigram -------------------------------------------------------------
    seed_sentencepiece_size: int = 1000000
    seed_sentencepieces_file: str = ""
    shrinking_factor: float = 0.75
    num_threads: int = 16  # (every model type: see UNIGRAM_ONLY)
    num_sub_iterations: int = 2
    # -- piece shape ---------------------------------------------------------
    max_sentencepiece_length: int = 16
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    split_by_whitespace: bool = True
    split_digits: bool = False
    pretokenization_delimiter: str = ""
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    # -- special pieces ------------------------------------------------------
    control_symbols: list[str] = field(default_factory=list)
    control_symbols_file: str = ""
    user_defined_symbols: list[str] = field(default_factory=list)
    user_defined_symbols_file: str = ""
    required_chars: str = ""
    required_chars_file: str = ""
    byte_fallback: bool = False
    vocabulary_output_piece_score: bool = True
    # -- normalization -------------------------------------------------------
    normalization_rule_name: str = "nmt_nfkc"
    normalization_rule_tsv: str = ""
    denormalization_rule_tsv: str = ""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    # -- vocabulary size -----------------------------------------------------
    hard_vocab_limit: bool = True
    use_all_vocab: bool = False
    # -- ids and names of the meta pieces ------------------------------------
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    unk_surface: str = " \u2047 "
    # -- deprecated in sentencepiece 0.2.3 -----------------------------------
    train_extremely_large_corpus: bool = False
    enable_differential_privacy: bool = False
    differential_privacy_noise_level: float = 0.0
    differential_privacy_clipping_threshold: int = 0
    auto_character_coverage: bool = False
    mining_sentence_size: int = 0
    training_sentence_size: int = 0
    #: spm_train 0.2.3's flag (not a proto field): sparse pruning of the
    #: unigram trainer, which subtok does not implement.
    use_sparse_pruning: bool = False
    # -- wordpiece and byte_bpe (the options of Hugging Face tokenizers'
    #    trainers; see FAMILY_OPTIONS) ---------------------------------------
    special_tokens: list[str] = field(default_factory=list)  # empty: the family's default
    min_frequency: int = 2
    wordpiece_criterion: str = "likelihood"
    unk_token: str = "[UNK]"
    lowercase: bool = True
    strip_accents: str = "auto"
    clean_text: bool = True
    handle_chinese_chars: bool = True
    limit_alphabet: int = 1000
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = 100
    pattern: str = "gpt2"
    add_prefix_space: bool = False
    ties: str = "subtok"
    # -- process -------------------------------------------------------------
    random_seed: int = UNSET_SEED
    minloglevel: int = 0
    #: Show tqdm progress bars on stderr (None: only when stderr is a TTY).
    progress: bool | None = False

    # ------------------------------------------------------------------------
    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> "TrainerOptions":
        """Build options from keyword arguments, spm style.

        Values may be given as Python values or as spm flag strings: bools
        as ``"false"``/``"1"``..., lists as CSV strings, ``model_type`` in
        any case. ``quiet=True`` means ``minloglevel=2``. Unknown names
        raise :class:`TrainerError`.
        """
        known = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        quiet = False
        for key, value in kwargs.items():
            if key == "quiet":
                quiet = coerce_bool("quiet", value)
                continue
            if key not in known:
                raise TrainerError('unknown option "%s" (not a spm_train flag).' % key)
            values[key] = _coerce(key, known[key], value)
        if quiet:  # after the loop: wins over minloglevel whatever the order
            values["minloglevel"] = max(2, int(values.get("minloglevel", 0)))
        return cls(**values)

    def replace(self, **changes: Any) -> "TrainerOptions":
        return dataclasses.replace(self, **changes)

    @property
    def model_type_name(self) -> str:
        return self.model_type.lower()

    @property
    def seed(self) -> int:
        """The seed of the reservoir sampler."""
        if self.random_seed == UNSET_SEED:
            return DEFAULT_SAMPLING_SEED
        return self.random_seed

    # ------------------------------------------------------------------------
    def load_files(self) -> "TrainerOptions":
        """Resolve ``--*_file`` options the way spm_train does.

        ``control_symbols_file`` / ``user_defined_symbols_file``: one symbol
        per line, appended after the flag's list. ``required_chars_file``:
        its lines concatenated, replacing ``required_chars``.
        """
        changes: dict[str, Any] = {}
        for name, target in (("control_symbols_file", "control_symbols"),
                             ("user_defined_symbols_file", "user_defined_symbols")):
            path = getattr(self, name)
            if path:
                lines = _read_lines(path, name)
                changes[target] = list(getattr(self, target)) + [s for s in lines if s]
                changes[name] = ""
        if self.required_chars_file:
            changes["required_chars"] = "".join(_read_lines(self.required_chars_file,
                                                            "required_chars_file"))
            changes["required_chars_file"] = ""
        return self.replace(**changes) if changes else self

    def validate(self) -> None:
        """Check the options; raise :class:`TrainerError` with spm's reason."""
        mt = self.model_type_name
        if mt not in TRAINERS:
            raise TrainerError('unknown model type "%s" (--model_type must be one of %s).'
                               % (self.model_type, ", ".join(TRAINERS)))
        if self.input_format not in ("", "text", "tsv"):
            raise TrainerError("--input_format=%s: Supported formats are 'text' and 'tsv'."
                               % self.input_format)
        if self.vocab_size <= 0:
            raise TrainerError("--vocab_size=%d: vocab_size must be > 0." % self.vocab_size)
        if self.use_all_vocab and mt not in ("word", "char"):
            raise TrainerError("--use_all_vocab=true is valid for WORD/CHAR model.")
        if self.seed_sentencepieces_file and mt != "unigram":
            raise TrainerError("seed_sentencepieces_file is only supported for UNIGRAM model.")
        # Float fields are checked as sentencepiece holds them: in float32.
        _check_range("character_coverage", f32(self.character_coverage), 0.98, 1.0)
        _check_range("max_sentencepiece_length", self.max_sentencepiece_length, 1, 512)
        _check_range("num_sub_iterations", self.num_sub_iterations, 1, 10)
        _check_range("num_threads", self.num_threads, 1, 1024)
        _check_range("self_test_sample_size", self.self_test_sample_size, 0, 1000)
        _check_range("shrinking_factor", f32(self.shrinking_factor), 0.5, 0.95)
        _check_range("max_sentence_length", self.max_sentence_length, 10, 1 << 30)
        if self.input_sentence_size < 0 or 0 < self.input_sentence_size <= 100:
            raise TrainerError("--input_sentence_size=%d: must be 0 (all sentences) or > 100."
                               % self.input_sentence_size)
        for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece"):
            if not getattr(self, name):
                raise TrainerError("--%s must not be empty." % name)
        if self.pretokenization_delimiter and mt not in ("unigram", "bpe"):
            raise TrainerError("--pretokenization_delimiter: PretokenizerForTraining is only "
                               "supported in UNIGRAM or BPE mode.")
        if not self.escape_whitespaces:
            raise TrainerError("--escape_whitespaces=false: training requires "
                               "escape_whitespaces to be true.")
        if self.auto_character_coverage:
            raise TrainerError("--auto_character_coverage is not supported by subtok: sentencepiece "
                               "0.2.3's automatic coverage search (with byte fallback and sparse "
                               "pruning) is not implemented; set --character_coverage instead.")
        if self.use_sparse_pruning:
            raise TrainerError("--use_sparse_pruning is not supported by subtok: sentencepiece "
                               "0.2.3's sparse unigram pruning is not implemented; without it "
                               "subtok trains as sentencepiece does by default.")
        if self.unk_id < 0:
            raise TrainerError("<unk> must be defined.")
        if not 0 <= self.random_seed <= UNSET_SEED:
            raise TrainerError("--random_seed=%d: must be in [0, %d]." % (self.random_seed, UNSET_SEED))
        for name in ("control_symbols", "user_defined_symbols"):
            for symbol in getattr(self, name):
                if not symbol:
                    raise TrainerError("--%s: a symbol must not be empty." % name)
        for name in TEXT_OPTIONS:
            value = getattr(self, name)
            for text in (value if isinstance(value, list) else [value]):
                if _has_surrogate(text):
                    raise TrainerError(
                        "--%s: %s is not UTF-8 text; pieces and symbols must be."
                        % (name, _shown(text)))
        if not self.normalization_rule_tsv:
            from subtok.normalizers.charsmap_builder import BUILTIN_RULE_NAMES
            if self.normalization_rule_name not in BUILTIN_RULE_NAMES:
                raise TrainerError(
                    'No precompiled charsmap is found: %s (--normalization_rule_name must be '
                    'one of %s, or give --normalization_rule_tsv).'
                    % (self.normalization_rule_name, ", ".join(BUILTIN_RULE_NAMES)))
        if mt in TOKENIZER_FILE_TYPES:
            validate_family(self)

    def ignored_option_warnings(self) -> list[str]:
        """One line per option that is set but has no effect (here or in spm)."""
        defaults = TrainerOptions()
        out = []
        for name, why in IGNORED_OPTIONS.items():
            if getattr(self, name) != getattr(defaults, name):
                out.append("--%s is ignored (%s)." % (name, why))
        mt = self.model_type_name
        out.extend(family_warnings(self, defaults))
        if mt in TOKENIZER_FILE_TYPES:
            return out
        unused = [] if mt == "unigram" else list(UNIGRAM_ONLY)
        if mt in ("char", "word"):
            unused += PIECE_SHAPE
        for name in unused:
            if getattr(self, name) != getattr(defaults, name):
                out.append("--%s has no effect on %s training." % (name, mt))
        return out

    # ------------------------------------------------------------------------
    def to_trainer_spec(self) -> dict[str, Any]:
        """Every TrainerSpec field, as spm_train stores them, but one.

        ``num_threads`` is left out: in subtok it changes only the speed,
        never the model, and leaving it out makes the files of a run
        byte-identical whatever thread count was used (sentencepiece, whose
        float sums depend on it, records it).
        """
        # Imported when the model is written: the model format (and what
        # it imports) is no part of training's start-up.
        from subtok.formats.sentencepiece import MODEL_TYPE_IDS
        return {
            "input": [_recorded(path) for path in self.input],
            "input_format": self.input_format,
            "model_prefix": _recorded(self.model_prefix),
            "model_type": MODEL_TYPE_IDS[self.model_type_name],
            "vocab_size": self.vocab_size,
            "accept_language": list(self.accept_language),
            "self_test_sample_size": self.self_test_sample_size,
            "character_coverage": self.character_coverage,
            "input_sentence_size": self.input_sentence_size,
            "seed_sentencepiece_size": self.seed_sentencepiece_size,
            "shrinking_factor": self.shrinking_factor,
            "num_sub_iterations": self.num_sub_iterations,
            "max_sentence_length": self.max_sentence_length,
            "shuffle_input_sentence": self.shuffle_input_sentence,
            "max_sentencepiece_length": self.max_sentencepiece_length,
            "split_by_unicode_script": self.split_by_unicode_script,
            "split_by_whitespace": self.split_by_whitespace,
            "split_by_number": self.split_by_number,
            "treat_whitespace_as_suffix": self.treat_whitespace_as_suffix,
            "split_digits": self.split_digits,
            "allow_whitespace_only_pieces": self.allow_whitespace_only_pieces,
            "control_symbols": list(self.control_symbols),
            "user_defined_symbols": list(self.user_defined_symbols),
            "vocabulary_output_piece_score": self.vocabulary_output_piece_score,
            "hard_vocab_limit": self.hard_vocab_limit,
            "use_all_vocab": self.use_all_vocab,
            "byte_fallback": self.byte_fallback,
            "required_chars": self.required_chars,
            "unk_id": self.unk_id,
            "bos_id": self.bos_id,
            "eos_id": self.eos_id,
            "pad_id": self.pad_id,
            "unk_surface": self.unk_surface,
            "unk_piece": self.unk_piece,
            "bos_piece": self.bos_piece,
            "eos_piece": self.eos_piece,
            "pad_piece": self.pad_piece,
            "train_extremely_large_corpus": self.train_extremely_large_corpus,
            "enable_differential_privacy": self.enable_differential_privacy,
            "differential_privacy_noise_level": self.differential_privacy_noise_level,
            "differential_privacy_clipping_threshold": self.differential_privacy_clipping_threshold,
            "pretokenization_delimiter": self.pretokenization_delimiter,
            "seed_sentencepieces_file": _recorded(self.seed_sentencepieces_file),
        }

    def charsmap(self) -> tuple[str, bytes]:
        """(normalizer name, precompiled_charsmap blob; b"" for identity)."""
        if self.normalization_rule_tsv:
            return "user_defined", _compiled_tsv(self.normalization_rule_tsv,
                                                 "normalization_rule_tsv")
        from subtok.normalizers import charsmap_builder as cb
        try:
            return self.normalization_rule_name, cb.builtin_charsmap(self.normalization_rule_name)
        except ValueError:
            raise TrainerError("No precompiled charsmap is found: %s"
                               % self.normalization_rule_name) from None

    def to_normalizer_spec(self) -> dict[str, Any]:
        """NormalizerSpec fields as spm_train stores them (name and blob filled in)."""
        name, blob = self.charsmap()
        return {
            "name": name,
            "precompiled_charsmap": blob,
            "add_dummy_prefix": self.add_dummy_prefix,
            "remove_extra_whitespaces": self.remove_extra_whitespaces,
            "normalization_rule_tsv": _recorded(self.normalization_rule_tsv),
        }

    def to_denormalizer_spec(self) -> dict[str, Any] | None:
        """The denormalizer spec, only when ``denormalization_rule_tsv`` is given."""
        if not self.denormalization_rule_tsv:
            return None
        return {
            "name": "user_defined",
            "precompiled_charsmap": _compiled_tsv(self.denormalization_rule_tsv,
                                                  "denormalization_rule_tsv"),
            "add_dummy_prefix": False,
            "remove_extra_whitespaces": False,
            "escape_whitespaces": False,
            "normalization_rule_tsv": _recorded(self.denormalization_rule_tsv),
        }


#: Options whose text becomes pieces or the text a model writes: they must
#: be UTF-8 (a command line may hold any bytes; they arrive here as lone
#: surrogates, which the model file's string fields cannot hold).
TEXT_OPTIONS = ("control_symbols", "user_defined_symbols", "unk_piece", "bos_piece",
                "eos_piece", "pad_piece", "unk_surface", "required_chars",
                "pretokenization_delimiter")


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def _shown(text: str) -> str:
    """``text`` with its undecodable bytes written as \\xNN."""
    return "'%s'" % text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _recorded(path: str) -> str:
    """A path as the model records it: a file name may be any bytes, the
    record must be text, so undecodable bytes are written as \\xNN."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# ----------------------------------------------------------------------------
# the tokenizer-file families (wordpiece, byte_bpe)

#: Model type -> the options only it reads.
FAMILY_OPTIONS = {
    "wordpiece": ("special_tokens", "min_frequency", "wordpiece_criterion", "unk_token",
                  "lowercase", "strip_accents", "clean_text", "handle_chinese_chars",
                  "limit_alphabet", "continuing_subword_prefix", "max_input_chars_per_word"),
    "byte_bpe": ("special_tokens", "min_frequency", "pattern", "add_prefix_space", "ties"),
}
#: Options every model type reads (the corpus, its sampling, the process).
SHARED_OPTIONS = ("input", "input_format", "model_prefix", "model_type", "vocab_size",
                  "input_sentence_size", "shuffle_input_sentence", "num_threads", "random_seed",
                  "minloglevel", "progress")


def family_warnings(options: TrainerOptions, defaults: TrainerOptions) -> list[str]:
    """A line per option that is set (not default) but unread by the model type:
    SentencePiece options for wordpiece/byte_bpe, theirs for the others."""
    mt = options.model_type_name
    own = FAMILY_OPTIONS.get(mt)
    if own is None:
        unread = [n for names in FAMILY_OPTIONS.values() for n in names]
    else:
        unread = [f.name for f in dataclasses.fields(TrainerOptions)
                  if f.name not in own and f.name not in SHARED_OPTIONS
                  and f.name not in IGNORED_OPTIONS]
    return ["--%s has no effect on %s training." % (name, mt)
            for name in dict.fromkeys(unread)
            if getattr(options, name) != getattr(defaults, name)]


def strip_accents_value(options: TrainerOptions) -> bool | None:
    """--strip_accents as BertNormalizer takes it: None follows --lowercase."""
    if options.strip_accents.strip().lower() == "auto":
        return None
    value = parse_bool(options.strip_accents)
    if value is None:
        raise TrainerError("--strip_accents=%s: must be auto (follow --lowercase), true or false."
                           % options.strip_accents)
    return value


def validate_family(options: TrainerOptions) -> None:
    """The checks of the wordpiece and byte_bpe options (called by validate)."""
    mt = options.model_type_name
    specials = options.special_tokens
    for token in specials:
        if not token or any(c in token for c in "\n\r"):
            raise TrainerError("--special_tokens: %r: a special token must be non-empty and on "
                               "one line." % token)
    if len(set(specials)) != len(specials):
        raise TrainerError("--special_tokens: %s is given twice."
                           % next(t for t in specials if specials.count(t) > 1))
    if mt == "wordpiece":
        _validate_wordpiece(options)
    else:
        _validate_byte_bpe(options)


def _validate_wordpiece(options: TrainerOptions) -> None:
    """The wordpiece options (see :func:`validate_family`)."""
    if options.wordpiece_criterion not in ("likelihood", "frequency"):
        raise TrainerError("--wordpiece_criterion=%s: must be likelihood or frequency."
                           % options.wordpiece_criterion)
    strip_accents_value(options)
    if options.special_tokens and options.unk_token not in options.special_tokens:
        raise TrainerError("--special_tokens must include the unknown token %s (--unk_token)."
                           % options.unk_token)
    if options.max_input_chars_per_word < 1:
        raise TrainerError("--max_input_chars_per_word=%d: must be >= 1."
                           % options.max_input_chars_per_word)
    prefix = options.continuing_subword_prefix
    if not prefix or any(c.isspace() for c in prefix):
        raise TrainerError("--continuing_subword_prefix=%r: must be non-empty, without "
                           "whitespace." % prefix)


def _validate_byte_bpe(options: TrainerOptions) -> None:
    """The byte_bpe options; a custom --pattern must compile."""
    if options.ties not in ("subtok", "tokenizers"):
        raise TrainerError("--ties=%s: must be subtok or tokenizers." % options.ties)
    needed = 256 + len(options.special_tokens)
    if options.vocab_size < needed:
        raise TrainerError("--vocab_size=%d: byte-level BPE needs at least %d (256 bytes and the "
                           "special tokens)." % (options.vocab_size, needed))
    from subtok.pretokenizers.tiktoken_patterns import GPT2_PATTERN, PATTERNS, pattern_for
    if pattern_for(options.pattern) not in PATTERNS.values():
        import regex
        try:
            regex.compile(options.pattern)
        except regex.error as exc:
            raise TrainerError("--pattern=%s: not a valid regular expression (%s); give one, or "
                               "one of %s." % (options.pattern, exc, ", ".join(PATTERNS))) from None
    if options.add_prefix_space and pattern_for(options.pattern) != GPT2_PATTERN:
        raise TrainerError("--add_prefix_space works with --pattern=gpt2 only (the ByteLevel "
                           "pre-tokenizer adds it before its own split).")


# ----------------------------------------------------------------------------
# value parsing


def coerce_bool(name: str, value: Any) -> bool:
    """A boolean option's value: a bool, an int, or one of spm's spellings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return bool(value)
    found = parse_bool(value) if isinstance(value, str) else None
    if found is None:
        raise TrainerError("--%s: invalid boolean value %r." % (name, value))
    return found


def _coerce(name: str, spec: dataclasses.Field, value: Any) -> Any:
    kind = spec.type
    if name in LIST_FIELDS:
        if isinstance(value, str):
            return split_csv(value)
        if isinstance(value, (list, tuple)):
            return [str(v) for v in value]
        raise TrainerError("--%s: expected a list or a comma-separated string, got %r."
                           % (name, value))
    if name == "progress":
        return None if value is None else coerce_bool(name, value)
    if kind == "bool":
        return coerce_bool(name, value)
    if kind == "int":
        if isinstance(value, bool):
            raise TrainerError("--%s: expected an integer, got %r." % (name, value))
        try:
            number = int(value) if not isinstance(value, str) else int(value.strip(), 10)
        except (TypeError, ValueError, OverflowError):
            raise TrainerError("--%s: expected an integer, got %r." % (name, value)) from None
        low, high, what = integer_range(name)
        if not low <= number <= high:
            raise TrainerError("--%s=%d: not a %s (must be in [%d, %d])."
                               % (name, number, what, low, high))
        return number
    if kind == "float":
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TrainerError("--%s: expected a number, got %r." % (name, value)) from None
    if kind == "str":
        if not isinstance(value, str):
            raise TrainerError("--%s: expected a string, got %r." % (name, value))
        return value
    return value


#: Integer options that are no TrainerSpec field: spm_train's flag types.
_FLAG_INTEGERS = {"random_seed": "uint32", "minloglevel": "int32",
                  # tokenizers' trainers: u64 and usize (64-bit) fields
                  "min_frequency": "uint64", "limit_alphabet": "uint64",
                  "max_input_chars_per_word": "uint64"}
#: The integer fields of TrainerSpec (proto/sentencepiece_model.proto) and
#: their types, written out so that parsing the options does not import
#: the protobuf module (a third of training's start-up before the corpus
#: is read); tests/unit/test_training_plumbing.py checks it against the
#: descriptor.
SPEC_INTEGERS = {"vocab_size": "int32", "self_test_sample_size": "int32",
                 "differential_privacy_clipping_threshold": "uint64",
                 "input_sentence_size": "uint64", "mining_sentence_size": "int32",
                 "training_sentence_size": "int32", "seed_sentencepiece_size": "int32",
                 "max_sentence_length": "int32", "num_threads": "int32",
                 "num_sub_iterations": "int32", "max_sentencepiece_length": "int32",
                 "unk_id": "int32", "bos_id": "int32", "eos_id": "int32", "pad_id": "int32"}
_INTEGER_TYPES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
                  "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 64) - 1)}


def integer_range(name: str) -> tuple[int, int, str]:
    """(lowest, highest, type name) of an integer option: the range of its
    TrainerSpec field's type, as spm_train parses the flag into it (a
    vocab_size is an int32, input_sentence_size a uint64)."""
    kind = _FLAG_INTEGERS.get(name) or SPEC_INTEGERS[name]
    low, high = _INTEGER_TYPES[kind]
    return low, high, _INTEGER_NAMES[kind]


_INTEGER_NAMES = {"int32": "32-bit integer", "int64": "64-bit integer",
                  "uint32": "32-bit unsigned integer", "uint64": "64-bit unsigned integer"}


def _check_range(name: str, value, low, high) -> None:
    if not low <= value <= high:
        raise TrainerError("--%s=%s: must be in [%s, %s]." % (name, value, low, high))


def _read_lines(path: str, option: str) -> list[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise TrainerError("%s: cannot read --%s: %s." % (path, option, exc.strerror or exc)) from None
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_TSV_CACHE: dict[tuple, bytes] = {}


def _compiled_tsv(path: str, option: str) -> bytes:
    """Compile a rule TSV once per (path, mtime, size) in this process."""
    from subtok.normalizers import charsmap_builder as cb
    import os
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _TSV_CACHE:
        return _TSV_CACHE[key]
    try:
        blob = cb.compile_charsmap(_load_tsv(path, option))
    except ValueError as exc:
        raise TrainerError("--%s=%s: %s." % (option, path, str(exc).rstrip("."))) from None
    if key is not None:
        _TSV_CACHE.clear()
        _TSV_CACHE[key] = blob
    return blob


def _load_tsv(path: str, option: str) -> dict[str, str]:
    from subtok.normalizers import charsmap_builder as cb
    try:
        return cb.load_rule_tsv(path)
    except OSError as exc:
        raise TrainerError("%s: cannot read --%s: %s." % (path, option, exc.strerror or exc)) from None
    except ValueError as exc:
        raise TrainerError("--%s: %s." % (option, str(exc).rstrip("."))) from None


__all__ = ["TrainerOptions", "split_csv", "coerce_bool", "UNSET_SEED", "DEFAULT_SAMPLING_SEED",
           "LIST_FIELDS", "IGNORED_OPTIONS", "FAMILY_OPTIONS", "SHARED_OPTIONS",
           "validate_family", "family_warnings", "strip_accents_value"]
