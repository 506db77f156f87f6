"""``subtok decode``: lines of pieces or ids back to text, like spm_decode."""

from __future__ import annotations

import click

from subtok.cli.batch import LineDecoder, map_blocks
from subtok.cli.options import Command, option
from subtok.cli.streams import input_paths, read_blocks, write_blocks
from subtok.errors import SubtokError
from subtok.processor import SentencePieceProcessor


@click.command(cls=Command)
@option("model", required=True, help="Model file (.model).")
@option("input", multiple=True, help="Input file(s). Default: stdin.")
@option("output", default=None, help="Output file. Default: stdout.")
@option("input_format", default="piece", show_default=True, help="piece | id")
@option("output_format", default="string", show_default=True,
        help="string (proto: checked, no output, as spm_decode)")
@option("extra_options", default="", help="':'-separated bos, eos, reverse, unk, applied in order.")
@option("num_threads", type=click.IntRange(1, 1024), default=1, show_default=True,
        help="Worker processes (forked; where the system cannot fork, one process).")
@option("minloglevel", type=int, default=0, hidden=True)
@click.argument("files", nargs=-1, type=click.Path())
def decode(model, input, output, input_format, output_format, extra_options, num_threads,
           minloglevel, files):
    """Decode lines of pieces or ids back into text (like spm_decode)."""
    if input_format not in ("piece", "id"):
        raise SubtokError("unknown input format: %s (choose piece or id)." % input_format)
    if output_format not in ("string", "proto"):
        raise SubtokError("unknown output format: %s (choose string or proto)." % output_format)
    processor = SentencePieceProcessor(model)
    paths = input_paths(input, files)
    decoder = LineDecoder(processor, input_format, extra_options)
    blocks = map_blocks(decoder, read_blocks(paths), num_threads)
    if output_format == "proto":
        # spm_decode decodes each line into a proto it never prints (so
        # bad ids still fail); the output stays empty.
        blocks = (b"" for _ in blocks)
    write_blocks(blocks, output)
