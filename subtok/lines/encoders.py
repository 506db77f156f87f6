"""The line encoder of a model of any kind: what ``subtok encode`` runs
over its input (:func:`line_encoder`), built here so that the command and
:mod:`subtok.dask`'s workers build the same one from the same options, and
the checks of those options that the command and ``subtok decode`` /
``export-vocab`` share. A wrong combination of options is an
:class:`~subtok.errors.OptionError`, which the command line reports as a
usage error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from subtok.errors import EncodeError, OptionError, SubtokError
from subtok.formats import load_any, model_kind
from subtok.lines.streams import check_readable, read_lines
from subtok.processor import SentencePieceProcessor

if TYPE_CHECKING:
    from subtok.lines.batch import PerLine

SAMPLING_FORMATS = ("sample_piece", "sample_id", "nbest_piece", "nbest_id")

#: spm_encode accepts these and, since its first releases, writes nothing
#: for them (the line that printed the proto is commented out in
#: spm_encode_main.cc); each is checked as the format named here.
PROTO_FORMATS = {"proto": "piece", "sample_proto": "sample_piece", "nbest_proto": "nbest_piece"}

#: The BERT pipeline flags of a vocab.txt model: (flag, ``load_any`` keyword, help).
BERT_FLAGS = (
    ("lowercase", "lowercase", "vocab.txt: lowercase the text [default: true, as "
     "BertWordPieceTokenizer; --lowercase=false for a cased vocabulary]."),
    ("strip_accents", "strip_accents", "vocab.txt: strip accents [default: as --lowercase]."),
    ("tokenize_chinese_chars", "handle_chinese_chars",
     "vocab.txt: put spaces around CJK characters [default: true]."),
)


def is_tiktoken_model(model: str, pattern: str | None, special_tokens: str | None) -> bool:
    """True when ``--model`` is a tiktoken rank file (told by its content).
    ``--pattern`` / ``--special_tokens`` with any other model are an error."""
    from subtok.formats.tiktoken import looks_like_tiktoken
    if looks_like_tiktoken(model):
        return True
    if pattern is not None or special_tokens is not None:
        raise OptionError("--pattern and --special_tokens are for tiktoken rank files; "
                          "%s is not one." % model)
    return False


def bert_settings(model: str, **flags) -> dict:
    """``load_any``'s BERT keyword arguments from the flags; given with a
    model that is not a vocab.txt they are an error."""
    unknown = set(flags) - {flag for flag, _, _ in BERT_FLAGS}
    if unknown:  # a misspelt option of the Python API (subtok.dask.encode)
        raise TypeError("unknown encode option(s): %s" % ", ".join(sorted(unknown)))
    settings = {name: flags.get(flag) for flag, name, _ in BERT_FLAGS}
    if any(value is not None for value in settings.values()):
        if model_kind(model) != "vocab.txt":
            raise OptionError("--lowercase, --strip_accents and --tokenize_chinese_chars are "
                              "for BERT vocab.txt models; %s is not one." % model)
    return settings


def line_encoder(model: str, output_format: str = "piece", extra_options: str = "",
                 nbest_size: int = 10, alpha: float = 0.5, random_seed: int | None = None,
                 vocabulary: str | None = None, vocabulary_threshold: int = 0,
                 add_special_tokens: bool = True, pattern: str | None = None,
                 special_tokens: str | None = None, generate_vocabulary: bool = False,
                 stored_limits: bool = True, **bert_flags) -> PerLine:
    """The line encoder ``subtok encode`` runs over its input for ``model``
    (any kind) and the options (the command's flags): every check of the
    options and the model happens here, before any input is read. With
    ``generate_vocabulary`` (SentencePiece only), the plain piece encoder
    whose ``pairs`` are counted. :mod:`subtok.dask` builds the same
    encoder on its workers, so a cluster writes the same bytes."""
    # (The encoders are imported here: decode and export-vocab import this
    # module for its option checks alone.)
    from subtok.lines.batch import LineEncoder, SampleLineEncoder
    from subtok.postprocessors.extra_options import for_tiktoken, for_tokenizer
    if is_tiktoken_model(model, pattern, special_tokens):
        from subtok.lines import tiktoken_lines
        tiktoken_lines.reject_options(model, vocabulary=vocabulary,
                                      generate_vocabulary=generate_vocabulary)
        encoding = tiktoken_lines.load_tiktoken(model, pattern, special_tokens)
        extra = for_tiktoken(extra_options, encoding.special_tokens, model)
        return tiktoken_lines.TiktokenLineEncoder(encoding, output_format, extra)
    if output_format not in ("piece", "id") + SAMPLING_FORMATS + tuple(PROTO_FORMATS):
        raise EncodeError("unknown output format: %s (choose piece, id, %s, %s)."
                          % (output_format, ", ".join(SAMPLING_FORMATS), ", ".join(PROTO_FORMATS)))
    processor = load_any(model, **bert_settings(model, **bert_flags))
    if not isinstance(processor, SentencePieceProcessor):
        if vocabulary or generate_vocabulary:
            raise EncodeError("--vocabulary and --generate_vocabulary need a "
                              "SentencePiece model, not a tokenizer.json.")
        from subtok.lines.tokenizer_lines import TokenizerLineEncoder
        # Stored truncation and padding apply as in tokenizers' encode
        # unless asked otherwise (see subtok.lines.tokenizer_lines).
        if not stored_limits:
            processor.truncation = processor.padding = None
        extra = for_tokenizer(extra_options, processor, processor.source)
        return TokenizerLineEncoder(processor, output_format, add_special_tokens, random_seed,
                                    extra)
    if vocabulary:
        processor.set_vocabulary(read_vocabulary(vocabulary, vocabulary_threshold))
    if generate_vocabulary:
        return LineEncoder(processor, "piece", "")
    checked_as = PROTO_FORMATS.get(output_format, output_format)
    if checked_as in SAMPLING_FORMATS:
        return SampleLineEncoder(processor, checked_as, extra_options, nbest_size, alpha,
                                 random_seed)
    return LineEncoder(processor, checked_as, extra_options)


def read_vocabulary(path: str, threshold: int) -> list[str]:
    """``piece[<TAB>freq]`` lines; pieces with freq >= threshold are kept."""
    check_readable([path])
    keep = []
    for number, line in enumerate(read_lines([path]), 1):
        text = line.decode("utf-8", "surrogateescape")
        if not text:
            continue
        piece, _, freq = text.partition("\t")
        try:
            count = int(freq) if freq else 1
        except ValueError:
            raise SubtokError("%s:%d: frequency %r is not an integer." % (path, number, freq)) from None
        if count >= threshold:
            keep.append(piece)
    return keep


__all__ = ["line_encoder", "read_vocabulary", "is_tiktoken_model", "bert_settings", "BERT_FLAGS",
           "SAMPLING_FORMATS", "PROTO_FORMATS"]
