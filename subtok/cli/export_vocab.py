"""``subtok export-vocab``: a model's pieces with scores or ids, like spm_export_vocab."""

from __future__ import annotations

import click

from subtok.cli.options import Command, option
from subtok.cli.streams import open_output
from subtok.errors import SubtokError
from subtok.formats.sentencepiece import syms_text, vocab_text
from subtok.processor import SentencePieceProcessor


@click.command("export-vocab", cls=Command)
@option("model", required=True, help="Model file (.model).")
@option("output", default=None, help="Output file. Default: stdout.")
@option("output_format", default="vocab", show_default=True,
        help="vocab (piece<TAB>score) | syms (piece<TAB>id)")
@option("minloglevel", type=int, default=0, hidden=True)
def export_vocab(model, output, output_format, minloglevel):
    """Print the vocabulary of a model (like spm_export_vocab)."""
    if output_format not in ("vocab", "syms"):
        raise SubtokError("unknown output format: %s (choose vocab or syms)." % output_format)
    data = SentencePieceProcessor(model).model_data
    text = vocab_text(data) if output_format == "vocab" else syms_text(data)
    with open_output(output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))
