"""``subtok export-vocab``: a model's pieces with scores or ids, like spm_export_vocab."""

from __future__ import annotations

import click

from subtok.cli.options import (PATTERN_HELP, SPECIAL_TOKENS_HELP, Command,
                                bert_vocab_options, option)
from subtok.errors import SubtokError
from subtok.formats import load_any
from subtok.formats.sentencepiece import syms_text, vocab_text
from subtok.lines.encoders import bert_settings, is_tiktoken_model
from subtok.lines.streams import open_output
from subtok.processor import SentencePieceProcessor


@click.command("export-vocab", cls=Command)
@option("model", required=True, help="Model file: .model, tokenizer.json, tiktoken ranks, BERT "
        "vocab.txt, GPT-2 vocab.json with merges.txt beside it (told by content).")
@option("output", default=None, help="Output file. Default: stdout.")
@option("output_format", default="vocab", show_default=True,
        help="vocab (piece<TAB>score) | syms (piece<TAB>id)")
@option("pattern", default=None, help=PATTERN_HELP)
@option("special_tokens", default=None, help=SPECIAL_TOKENS_HELP)
@bert_vocab_options
@option("minloglevel", type=int, default=0, hidden=True)
def export_vocab(model, output, output_format, pattern, special_tokens, minloglevel, **bert_flags):
    """Print the vocabulary of a model (like spm_export_vocab)."""
    if is_tiktoken_model(model, pattern, special_tokens):
        from subtok.lines import tiktoken_lines
        return tiktoken_lines.export_vocab_command(model, pattern, special_tokens, output)
    if output_format not in ("vocab", "syms"):
        raise SubtokError("unknown output format: %s (choose vocab or syms)." % output_format)
    processor = load_any(model, **bert_settings(model, **bert_flags))
    if not isinstance(processor, SentencePieceProcessor):
        from subtok.lines.tokenizer_lines import export_vocab as export_tokenizer_vocab
        return export_tokenizer_vocab(processor, output, output_format)
    data = processor.model_data
    text = vocab_text(data) if output_format == "vocab" else syms_text(data)
    with open_output(output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))
