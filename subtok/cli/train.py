"""``subtok train``: spm_train's flags on top of :func:`subtok.train`.

Every option of :class:`~subtok.training.spec.TrainerOptions` becomes a
flag with its default, under both spellings (``--vocab_size`` and
``--vocab-size``); boolean flags also accept ``--flag=false`` and
``--no-flag``. Repeated-string options take spm's CSV syntax
(``--user_defined_symbols='<a>,"b,c"'``) and may be repeated. The command
only builds the options and calls the library.
"""

from __future__ import annotations

import dataclasses

import click

from subtok.cli.options import Command, bool_option, option
from subtok.flags import split_csv
from subtok.training.spec import LIST_FIELDS, TrainerOptions

#: One line of help per flag (spm_train's wording where it has one).
HELP = {
    "input": "Input corpus files, comma-separated (CSV) or repeated; - reads stdin.",
    "input_format": "text (one sentence per line) or tsv (sentence<TAB>freq).",
    "model_prefix": "Output prefix: writes PREFIX.model and PREFIX.vocab.",
    "model_type": "unigram, bpe, word, char (PREFIX.model), wordpiece or byte_bpe (PREFIX.json).",
    "vocab_size": "Vocabulary size, meta pieces included.",
    "accept_language": "Informational list of languages (ignored).",
    "self_test_sample_size": "Deprecated in sentencepiece 0.2.3 (ignored).",
    "character_coverage": "Fraction of character occurrences covered by the alphabet.",
    "input_sentence_size": "Maximum number of sentences loaded (0 = all).",
    "shuffle_input_sentence": "Sample input_sentence_size sentences at random (else the first N).",
    "max_sentence_length": "Skip lines longer than this many bytes.",
    "seed_sentencepiece_size": "Unigram: number of seed pieces.",
    "seed_sentencepieces_file": "Unigram: seed pieces from a piece<TAB>freq file.",
    "shrinking_factor": "Unigram: fraction of pieces kept per pruning round.",
    "num_threads": "Worker processes for loading the corpus and for unigram EM; the model is "
                   "the same for any value.  [default: 16, as spm_train; at most one per "
                   "core is used]",
    "num_sub_iterations": "Unigram: EM iterations per pruning round.",
    "max_sentencepiece_length": "Maximum piece length in characters.",
    "split_by_unicode_script": "Pieces do not cross Unicode script changes.",
    "split_by_number": "Digits count as their own script.",
    "split_by_whitespace": "Pieces do not cross whitespace.",
    "split_digits": "Every digit is a piece of its own.",
    "pretokenization_delimiter": "Pieces never cross this string (unigram/bpe).",
    "treat_whitespace_as_suffix": "Put the whitespace marker at word ends.",
    "allow_whitespace_only_pieces": "Allow pieces made only of whitespace.",
    "control_symbols": "Control symbols, comma-separated.",
    "control_symbols_file": "File with one control symbol per line.",
    "user_defined_symbols": "User-defined symbols, comma-separated.",
    "user_defined_symbols_file": "File with one user-defined symbol per line.",
    "required_chars": "Characters always kept in the alphabet.",
    "required_chars_file": "File of required characters (replaces --required_chars).",
    "byte_fallback": "Add the 256 byte pieces; unknown characters become bytes.",
    "vocabulary_output_piece_score": "Write scores into the .vocab file.",
    "normalization_rule_name": "nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf or identity.",
    "normalization_rule_tsv": "Normalization rules from a TSV file (overrides the name).",
    "denormalization_rule_tsv": "Denormalization rules from a TSV file.",
    "add_dummy_prefix": "Add a whitespace marker before the text.",
    "remove_extra_whitespaces": "Drop leading/trailing and repeated whitespace.",
    "hard_vocab_limit": "vocab_size must be reached exactly.",
    "use_all_vocab": "Word/char: keep every word/character.",
    "unk_id": "Id of <unk>.", "bos_id": "Id of <s> (-1 disables).",
    "eos_id": "Id of </s> (-1 disables).", "pad_id": "Id of <pad> (-1 disables).",
    "unk_piece": "Piece name of the unknown token.", "bos_piece": "Piece name of BOS.",
    "eos_piece": "Piece name of EOS.", "pad_piece": "Piece name of PAD.",
    "unk_surface": "Text that <unk> decodes to.",
    "train_extremely_large_corpus": "Deprecated in sentencepiece 0.2.3 (ignored).",
    "enable_differential_privacy": "Deprecated in sentencepiece 0.2.3 (ignored).",
    "differential_privacy_noise_level": "Deprecated in sentencepiece 0.2.3 (ignored).",
    "differential_privacy_clipping_threshold": "Deprecated in sentencepiece 0.2.3 (ignored).",
    "auto_character_coverage": "Not supported by subtok (refused if true); use "
                               "--character_coverage.",
    "use_sparse_pruning": "Not supported by subtok (refused if true).",
    "mining_sentence_size": "Deprecated in sentencepiece (ignored, with a warning).",
    "training_sentence_size": "Deprecated in sentencepiece (ignored, with a warning).",
    "special_tokens": "wordpiece/byte_bpe: special tokens, comma-separated (wordpiece default: "
                      "[PAD],[UNK],[CLS],[SEP],[MASK]; byte_bpe: none).",
    "min_frequency": "wordpiece/byte_bpe: merge only pairs seen at least this often.",
    "wordpiece_criterion": "wordpiece: likelihood (merge by likelihood gain) or frequency "
                           "(tokenizers' WordPieceTrainer).",
    "unk_token": "wordpiece: the unknown token (one of --special_tokens).",
    "lowercase": "wordpiece: lowercase the text (BertNormalizer).",
    "strip_accents": "wordpiece: auto (follow --lowercase), true or false.",
    "clean_text": "wordpiece: drop control characters, map whitespace to spaces.",
    "handle_chinese_chars": "wordpiece: put spaces around CJK ideographs.",
    "limit_alphabet": "wordpiece: keep at most this many characters (0: all).",
    "continuing_subword_prefix": "wordpiece: prefix of word-internal pieces.",
    "max_input_chars_per_word": "wordpiece: longer words encode as the unknown token.",
    "pattern": "byte_bpe: split pattern: gpt2, r50k, p50k, cl100k, o200k or a regex.",
    "add_prefix_space": "byte_bpe: add a space before each line (--pattern=gpt2 only).",
    "ties": "byte_bpe: ids and ties: subtok (bytes first in byte order) or tokenizers "
            "(as ByteLevelBPETokenizer.train).",
    "random_seed": "Seed of the sentence sampler (default: a fixed seed).",
    "minloglevel": "0/1 = warnings, 2 = errors only.",
}

#: Options whose help states the default in words (the bare number misleads).
_DEFAULT_IN_HELP = {"num_threads"}

#: TrainerSpec fields that have no spm_train flag.
_NO_FLAG = {"escape_whitespaces", "progress"}

_TYPES = {"int": int, "float": float, "str": str}


def _decorators():
    decorators = []
    for spec in dataclasses.fields(TrainerOptions):
        name = spec.name
        if name in _NO_FLAG:
            continue
        help_text = HELP.get(name, "")
        if name in LIST_FIELDS:
            decorators.append(option(name, multiple=True, metavar="CSV", help=help_text))
        elif spec.type == "bool":
            decorators.append(bool_option(name, spec.default, help_text))
        else:
            decorators.append(option(name, type=_TYPES[spec.type], default=spec.default,
                                     show_default=name not in _DEFAULT_IN_HELP and (
                                         spec.type != "str" or bool(spec.default)),
                                     help=help_text))
    decorators.append(click.option("--quiet", "-q", is_flag=True, default=False,
                                   help="Errors only (same as --minloglevel=2)."))
    decorators.append(click.option("--progress/--no-progress", "progress", default=None,
                                   help="Progress bars on stderr [default: when stderr is a terminal]."))
    return decorators


#: The flags of ``subtok train`` as click decorators (``subtok count`` takes them too).
option_decorators = _decorators


def _apply(func):
    for decorator in reversed(_decorators()):
        func = decorator(func)
    return func


@click.command("train", cls=Command)
@_apply
def train_command(**kwargs) -> None:
    """Train a model from text (like spm_train)."""
    from subtok.training.api import train

    for name in LIST_FIELDS:
        kwargs[name] = [item for value in kwargs[name] for item in split_csv(value)]
    paths = kwargs.pop("input")
    prefix = kwargs.pop("model_prefix")
    if not paths:
        raise click.UsageError("--input is required (files, comma-separated, or - for stdin).")
    if not prefix:
        raise click.UsageError("--model_prefix is required (writes PREFIX.model and PREFIX.vocab).")
    train(paths, prefix, **kwargs)


__all__ = ["train_command"]
