"""``subtok encode``: lines of text to pieces or ids, like spm_encode."""

from __future__ import annotations

from collections import Counter

import click

from subtok.cli.options import (PATTERN_HELP, SPECIAL_TOKENS_HELP, Command, bert_vocab_options,
                                bool_option, option)
from subtok.lines.batch import map_blocks
from subtok.lines.encoders import PROTO_FORMATS, line_encoder
from subtok.lines.streams import input_paths, read_blocks, read_lines, write_blocks, write_lines
from subtok.progress import blocks_with_progress
from subtok.vocab import PieceType


@click.command(cls=Command)
@option("model", required=True, help="Model file: .model, tokenizer.json, tiktoken ranks, BERT "
        "vocab.txt, GPT-2 vocab.json with merges.txt beside it (told by content).")
@option("input", multiple=True, help="Input file(s); comma-separated or repeated. Default: stdin. "
        "With --scheduler, files or globs ('shards/*.txt').")
@option("output", default=None, help="Output file. Default: stdout.")
@option("output_format", default="piece", show_default=True,
        help="piece | id | sample_piece | sample_id | nbest_piece | nbest_id "
             "(proto | sample_proto | nbest_proto: checked, no output, as spm_encode)")
@option("extra_options", default="", help="':'-separated bos, eos, reverse, unk, applied in order.")
@option("nbest_size", type=int, default=10, show_default=True, help="For sampling / n-best formats.")
@option("alpha", type=float, default=0.5, show_default=True,
        help="For sampling formats: inverse temperature (unigram) or dropout rate (BPE).")
@option("random_seed", type=int, default=None,
        help="Seed for sampling formats (per line, so any --num_threads gives the same output).")
@option("vocabulary", default=None, help="Restrict the vocabulary to the pieces listed in this file.")
@option("vocabulary_threshold", type=int, default=0, show_default=True,
        help="Minimum frequency of a --vocabulary entry.")
@bool_option("generate_vocabulary", False, "Print piece<TAB>count of the encoded input instead.")
@option("num_threads", type=click.IntRange(1, 1024), default=1, show_default=True,
        help="Worker processes (forked; where the system cannot fork, one process).")
@bool_option("add_special_tokens", True,
             "tokenizer.json: add the post-processor's special tokens (tokenizers' default).")
@bool_option("stored_limits", True,
             "tokenizer.json: apply the truncation and padding stored in the file, as "
             "tokenizers' encode does (--no-stored_limits writes every token of every line).")
@option("minloglevel", type=int, default=0, hidden=True)
@option("pattern", default=None, help=PATTERN_HELP)
@option("special_tokens", default=None, help=SPECIAL_TOKENS_HELP)
@option("scheduler", default=None,
        help="Encode on Dask: local:N (a LocalCluster of N processes) or tcp://HOST:PORT "
             "(needs subtok[dask]); with --input GLOB... and --output_dir.")
@option("output_dir", default=None,
        help="With --scheduler: the directory (created if missing) that gets one output per "
             "input, named after the input's file name plus --output_suffix.")
@option("output_suffix", default=None,
        help="With --output_dir: appended to each input's file name [default: "
             "'.' + --output_format; '' keeps the name].")
@option("retries", type=click.IntRange(0, 100), default=1, show_default=True,
        help="With --scheduler: times a task that raised an error is run again (Dask "
             "reschedules the tasks of a lost worker by itself).")
@bert_vocab_options
@click.argument("files", nargs=-1, type=click.Path())
def encode(model, input, output, output_format, extra_options, nbest_size, alpha, random_seed,
           vocabulary, vocabulary_threshold, generate_vocabulary, num_threads, add_special_tokens,
           stored_limits, minloglevel, pattern, special_tokens, scheduler, output_dir, output_suffix,
           retries, files, **bert_flags):
    """Encode text lines into pieces or ids (like spm_encode)."""
    options = dict(output_format=output_format, extra_options=extra_options,
                   nbest_size=nbest_size, alpha=alpha, random_seed=random_seed,
                   vocabulary=vocabulary, vocabulary_threshold=vocabulary_threshold,
                   add_special_tokens=add_special_tokens, pattern=pattern,
                   special_tokens=special_tokens, stored_limits=stored_limits, **bert_flags)
    if scheduler or output_dir is not None:
        return _encode_on_cluster(model, input, files, output, output_dir, output_suffix,
                                  scheduler, retries, generate_vocabulary, options)
    encoder = line_encoder(model, generate_vocabulary=generate_vocabulary, **options)
    _note_stored_limits(encoder, model, minloglevel)
    paths = input_paths(input, files)
    if generate_vocabulary:
        processor = encoder.processor
        counts: Counter = Counter()
        for line in read_lines(paths):
            for piece, piece_id in encoder.pairs(line):
                kind = processor.vocab.types[piece_id]
                if kind not in (PieceType.UNKNOWN, PieceType.CONTROL):
                    counts[piece] += 1
        rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8", "surrogateescape")))
        write_lines((("%s\t%d" % kv).encode("utf-8", "surrogateescape") for kv in rows), output)
        return
    if output_format in PROTO_FORMATS:
        # Options are checked (above) and the input read, as spm_encode
        # does; encoding would produce nothing, so it is skipped.
        write_blocks((b"" for _ in read_blocks(paths)), output)
        return
    blocks = blocks_with_progress(read_blocks(paths), paths, "encoding")
    write_blocks(map_blocks(encoder, blocks, num_threads), output)


def _encode_on_cluster(model, inputs, files, output, output_dir, output_suffix, scheduler,
                       retries, generate_vocabulary, options) -> None:
    """``--scheduler`` with ``--output_dir``: one output per input file, on
    Dask (:mod:`subtok.dask`, imported only here)."""
    if not scheduler or output_dir is None:
        raise click.UsageError("--scheduler and --output_dir go together: the cluster writes "
                               "one file per input into --output_dir.")
    if output is not None:
        raise click.UsageError("--output is for one output; with --scheduler each input gets "
                               "its own file in --output_dir.")
    from subtok.dask import encode_on_cluster
    encode_on_cluster(model, [v for value in inputs for v in value.split(",") if v] + list(files),
                      output_dir, scheduler=scheduler, suffix=output_suffix, retries=retries,
                      generate_vocabulary=generate_vocabulary, **options)


def _note_stored_limits(encoder, model: str, minloglevel: int) -> None:
    """One warning line when a tokenizer.json's stored truncation or padding
    will shape the output, which a corpus encoder's user may not expect."""
    stored = encoder.stored_limits()
    if stored and minloglevel < 2:
        click.echo("subtok: warning: %s stores %s: lines are encoded with it, as tokenizers' "
                   "encode does (--no-stored_limits writes every token)."
                   % (model, " and ".join(stored)), err=True)
