"""``subtok decode``: lines of pieces or ids back to text, like spm_decode."""

from __future__ import annotations

import click

from subtok.cli.options import (PATTERN_HELP, SPECIAL_TOKENS_HELP, Command,
                                bert_vocab_options, bool_option, option)
from subtok.errors import DecodeError, SubtokError
from subtok.formats import load_any
from subtok.lines.batch import LineDecoder, map_blocks
from subtok.lines.encoders import bert_settings, is_tiktoken_model
from subtok.lines.streams import input_paths, read_blocks, write_blocks
from subtok.processor import SentencePieceProcessor


@click.command(cls=Command)
@option("model", required=True, help="Model file: .model, tokenizer.json, tiktoken ranks, BERT "
        "vocab.txt, GPT-2 vocab.json with merges.txt beside it (told by content).")
@option("input", multiple=True, help="Input file(s). Default: stdin.")
@option("output", default=None, help="Output file. Default: stdout.")
@option("input_format", default="piece", show_default=True, help="piece | id")
@option("output_format", default="string", show_default=True,
        help="string (proto: checked, no output, as spm_decode)")
@option("extra_options", default="", help="':'-separated bos, eos, reverse, unk, applied in order "
        "to each line's pieces or ids before decoding (as spm_decode).")
@option("num_threads", type=click.IntRange(1, 1024), default=1, show_default=True,
        help="Worker processes (forked; where the system cannot fork, one process).")
@bool_option("skip_special_tokens", True,
             "tokenizer.json: leave special added tokens out (tokenizers' default).")
@option("minloglevel", type=int, default=0, hidden=True)
@option("pattern", default=None, help=PATTERN_HELP)
@option("special_tokens", default=None, help=SPECIAL_TOKENS_HELP)
@bert_vocab_options
@click.argument("files", nargs=-1, type=click.Path())
def decode(model, input, output, input_format, output_format, extra_options, num_threads,
           skip_special_tokens, minloglevel, pattern, special_tokens, files, **bert_flags):
    """Decode lines of pieces or ids back into text (like spm_decode)."""
    if is_tiktoken_model(model, pattern, special_tokens):
        from subtok.lines import tiktoken_lines
        return tiktoken_lines.decode_command(model, pattern, special_tokens, input_format,
                                             input, files, output, num_threads, extra_options)
    if input_format not in ("piece", "id"):
        raise SubtokError("unknown input format: %s (choose piece or id)." % input_format)
    if output_format not in ("string", "proto"):
        raise SubtokError("unknown output format: %s (choose string or proto)." % output_format)
    processor = load_any(model, **bert_settings(model, **bert_flags))
    paths = input_paths(input, files)
    if not isinstance(processor, SentencePieceProcessor):
        if output_format == "proto":
            raise SubtokError("--output_format=proto needs a SentencePiece model, not a "
                              "tokenizer.json.")
        from subtok.lines.tokenizer_lines import decode_lines
        from subtok.postprocessors.extra_options import for_tokenizer
        extra = for_tokenizer(extra_options, processor, processor.source, DecodeError)
        return decode_lines(processor, paths, output, input_format, skip_special_tokens, num_threads,
                            extra)
    decoder = LineDecoder(processor, input_format, extra_options)
    blocks = map_blocks(decoder, read_blocks(paths), num_threads)
    if output_format == "proto":
        # spm_decode decodes each line into a proto it never prints (so
        # bad ids still fail); the output stays empty.
        blocks = (b"" for _ in blocks)
    write_blocks(blocks, output)
