"""``subtok.train``: train a model and write ``<prefix>.model`` / ``<prefix>.vocab``.

The steps mirror ``spm_train``:

1. options: :class:`~subtok.training.spec.TrainerOptions` from keyword
   arguments (spm's names and value spellings), ``*_file`` options read,
   :meth:`~subtok.training.spec.TrainerOptions.validate` run, and a one-line
   warning for every option that has no effect in subtok;
2. corpus: :func:`~subtok.training.corpus.load_corpus` (meta pieces,
   sentences, alphabet);
3. the model type's trainer (:mod:`subtok.training`) returns NORMAL pieces;
4. serialize (``TrainerInterface::Serialize``): meta pieces at their ids, trained pieces in the other
   slots in order; with ``hard_vocab_limit`` (and not CHAR) the size must
   be exactly ``vocab_size``, otherwise vocab_size becomes the real size;
5. both files are written atomically: on any failure neither is left
   behind.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from subtok.errors import TrainerError
from subtok.flags import parse_flag_string, split_csv
from subtok.training import TOKENIZER_FILE_TYPES
from subtok.vocab import PieceType

# The trainers (subtok.training.*) are imported inside train(): importing
# subtok for encoding never loads training code. The model format and the
# atomic writer are imported once the model is trained: they are no part of
# the start-up before the corpus is read (docs/performance.md).


def train(input: Any = None, model_prefix: str | os.PathLike | None = None, *,
          sentence_iterator: Iterable | None = None, model_writer: Any = None,
          **options: Any) -> Any:
    """Train a model like ``spm_train`` and return it.

    ``input`` is a path, a list/tuple of paths (``"-"`` = stdin), or any
    other iterable of sentences (str or bytes; a generator, a file object).
    ``sentence_iterator`` is sentencepiece's name for the latter. Every other
    keyword is a spm_train option (``vocab_size=8000``, ``model_type="bpe"``,
    ``user_defined_symbols=["<sep>"]`` or ``"<sep>,<cls>"``, ...), plus
    ``random_seed``, ``minloglevel``/``quiet`` and ``progress``.
    Writes ``<model_prefix>.model`` and ``<model_prefix>.vocab`` and
    returns the :class:`~subtok.formats.sentencepiece.ModelData`, or,
    given ``model_writer`` (an object with ``write(bytes)``), hands it the
    model and writes no file. ``input`` may also be spm_train's flags in
    one string (``"--input=a.txt --model_prefix=m --vocab_size=100"``).
    The ``wordpiece`` and ``byte_bpe`` model types write
    ``<model_prefix>.json`` (a ``tokenizer.json``), ``.txt`` (BERT vocab) or
    ``.tiktoken`` (ranks) and ``.vocab``, and return a
    :class:`~subtok.training.families.Trained`.
    Raises :class:`~subtok.errors.TrainerError` (or another
    :class:`~subtok.errors.SubtokError`) with a one-line message.
    """
    from subtok.training import get_trainer
    from subtok.progress import Progress
    from subtok.training.corpus import load_corpus
    from subtok.training.spec import TrainerOptions

    started = time.monotonic()
    if isinstance(input, str) and input.lstrip().startswith("--"):
        options = dict(parse_flag_string(input), **options)
        input, model_prefix = options.pop("input", None), options.pop("model_prefix", model_prefix)
    paths, lines = _split_input(input, sentence_iterator)
    if model_writer is not None and not model_prefix:
        model_prefix = ""
    elif model_prefix is None or str(model_prefix) == "":
        raise TrainerError("--model_prefix is required: the output files are <prefix>.model "
                           "and <prefix>.vocab.")
    opts = TrainerOptions.from_kwargs(input=paths, model_prefix=str(model_prefix), **options)
    opts = opts.load_files()
    opts.validate()
    progress = Progress(opts.progress, opts.minloglevel)
    for message in opts.ignored_option_warnings():
        progress.warning(message)
    if opts.model_type_name in TOKENIZER_FILE_TYPES:  # no .model: tokenizer.json and others
        if model_writer is not None:
            raise TrainerError("model_writer takes a .model; --model_type=%s writes files of "
                               "its own: give --model_prefix." % opts.model_type_name)
        from subtok.training.families import train_family
        return train_family(opts, progress, lines)
    if model_writer is None:
        model_path, vocab_path = _output_paths(opts.model_prefix)
    normalizer_spec = opts.to_normalizer_spec()
    denormalizer_spec = opts.to_denormalizer_spec()

    def prepare() -> None:
        # What follows loading, imported while a forked child loads (this
        # process would only wait): the trainer, the model format and its
        # protobuf messages (which the format imports on first use).
        get_trainer(opts.model_type_name)
        from subtok.formats.sentencepiece import proto_messages
        proto_messages()

    if lines is None:
        from subtok.training import counts  # subtok count's files (told by their header)
        corpus = (counts.load_counted_corpus(opts, progress) if counts.is_count_input(opts)
                  else load_corpus(opts, progress, lines, meanwhile=prepare, defer=True))
    else:
        corpus = load_corpus(opts, progress, lines, meanwhile=prepare)
    corpus.consumable = True  # nobody else sees it: the trainer may free what it has taken
    trainer = get_trainer(opts.model_type_name)
    trained = trainer(corpus, opts, progress)
    pieces, scores, types = assemble(corpus.meta_by_id(), trained, opts.vocab_size)
    size = len(pieces)
    if opts.hard_vocab_limit and opts.model_type_name != "char":
        if size != opts.vocab_size:
            raise TrainerError("Vocabulary size too high (%d). Please set it to a value <= %d."
                               % (opts.vocab_size, size))
    opts = opts.replace(vocab_size=size)

    from subtok.formats.sentencepiece import ModelData, build_proto, model_from_proto, vocab_text
    data = ModelData(pieces=pieces, scores=scores, types=types)
    proto = build_proto(data, opts.to_trainer_spec(), normalizer_spec, denormalizer_spec)
    model = model_from_proto(proto)
    model.vocabulary()  # the same checks a loader makes
    blob = proto.SerializeToString()
    if model_writer is not None:
        model_writer.write(blob)
        progress.say("trained %d pieces, %s, %.1f s" % (size, opts.model_type_name,
                                                         time.monotonic() - started))
        return model
    text = vocab_text(model, opts.vocabulary_output_piece_score).encode("utf-8", "surrogateescape")
    _write_pair(model_path, blob, vocab_path, text)
    progress.say("wrote %s and %s: %d pieces, %s, %.1f s" % (
        model_path, vocab_path, size, opts.model_type_name, time.monotonic() - started))
    return model


def assemble(by_id: dict[int, tuple[str, int]], trained: list[tuple[str, float]],
             vocab_size: int) -> tuple[list[str], list[float], list[int]]:
    """Meta pieces at their ids (``by_id``: id -> (piece, type), from
    :meth:`~subtok.training.corpus.Corpus.meta_by_id`), trained pieces in
    the free slots (``TrainerInterface::Serialize``)."""
    pieces: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    seen: set[str] = set()
    k = 0
    limit = max(vocab_size, len(by_id) + len(trained))
    for piece_id in range(limit):
        if piece_id in by_id:
            piece, kind = by_id[piece_id]
            score = 0.0
        elif k < len(trained):
            piece, score = trained[k]
            kind = PieceType.NORMAL
            k += 1
        else:
            continue
        if not piece:
            raise TrainerError("piece %d is empty." % len(pieces))
        if piece in seen:
            raise TrainerError("%s is already defined." % piece)
        seen.add(piece)
        pieces.append(piece)
        scores.append(score)
        types.append(int(kind))
    return pieces, scores, types


def _split_input(input: Any, sentence_iterator: Iterable | None):
    """(paths, sentence iterable or None) from the ``input`` argument."""
    if sentence_iterator is not None:
        if input is not None:
            raise TrainerError("give either input or sentence_iterator, not both.")
        return [], sentence_iterator
    if input is None:
        raise TrainerError("--input is required: give one or more files (or - for stdin).")
    if isinstance(input, (str, os.PathLike)):
        paths = split_csv(os.fspath(input)) if isinstance(input, str) else [os.fspath(input)]
        return [p for p in paths if p], None
    if isinstance(input, (list, tuple)):
        if not all(isinstance(p, (str, os.PathLike)) for p in input):
            raise TrainerError("input: a list must hold file paths; pass sentences as an "
                               "iterator (e.g. iter(lines)).")
        return [os.fspath(p) for p in input], None
    if isinstance(input, (bytes, bytearray)):
        raise TrainerError("input: expected a path, a list of paths or an iterable of "
                           "sentences, got bytes.")
    try:
        iter(input)
    except TypeError:
        raise TrainerError("input: expected a path, a list of paths or an iterable of "
                           "sentences, got %s." % type(input).__name__) from None
    return [], input


def _output_paths(prefix: str) -> tuple[Path, Path]:
    """The two output paths, checked for writability before any training."""
    model_path, vocab_path = Path(prefix + ".model"), Path(prefix + ".vocab")
    directory = model_path.parent
    if not directory.is_dir():
        raise TrainerError("%s: cannot write the model: directory %s does not exist "
                           "(--model_prefix)." % (model_path, directory))
    if not os.access(directory, os.W_OK | os.X_OK):
        raise TrainerError("%s: cannot write the model: directory %s is not writable "
                           "(--model_prefix)." % (model_path, directory))
    for path in (model_path, vocab_path):
        if path.is_dir():
            raise TrainerError("%s: cannot write the model: it is a directory (--model_prefix)."
                               % path)
    return model_path, vocab_path


def _write_pair(model_path: Path, blob: bytes, vocab_path: Path, text: bytes) -> None:
    """Publish both files or neither: each is written to a temporary file,
    then both are renamed under one lock (see :func:`subtok.atomic.publish`),
    so two runs on one prefix never leave a model beside the other's vocab."""
    from subtok.atomic import atomic_writers
    with atomic_writers(vocab_path, model_path) as (vocab_out, model_out):
        vocab_out.write(text)
        model_out.write(blob)


__all__ = ["train", "assemble"]
