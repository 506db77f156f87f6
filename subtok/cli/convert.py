"""``subtok convert``: one tokenizer file format to another.

The input is told by its content: a SentencePiece ``.model``, a tiktoken
rank file, a ``tokenizer.json``, a GPT-2 ``vocab.json`` (with
``--merges``) or a BERT ``vocab.txt``. The output format comes from
``--output_format`` or the output's extension (``.model``, ``.tiktoken``,
anything else JSON):

=====================  =====================================================
input                  outputs
=====================  =====================================================
.model                 tokenizer.json (behaviours it cannot keep: warnings)
.tiktoken              tokenizer.json
tokenizer.json         .model (SentencePiece-shaped), .tiktoken (byte-level)
vocab.txt              tokenizer.json (BertWordPieceTokenizer's)
vocab.json + merges    tokenizer.json (ByteLevelBPETokenizer's)
=====================  =====================================================
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from subtok.cli.options import PATTERN_HELP, SPECIAL_TOKENS_HELP, Command, bool_option, option
from subtok.errors import ModelFileError, SubtokError
from subtok.formats import hf_json, model_kind

OUTPUT_FORMATS = ("json", "model", "tiktoken")


@click.command(cls=Command)
@option("model", required=True,
        help="Input: .model, .tiktoken, tokenizer.json, vocab.json or vocab.txt (told by content).")
@option("output", required=True, help="Output file.")
@option("output_format", default=None,
        help="json | model | tiktoken (default: from the output's extension, else json).")
@option("merges", default=None, help="merges.txt, to go with a GPT-2 vocab.json.")
@bool_option("lowercase", True, "vocab.txt: lowercase the text (BertWordPieceTokenizer's "
             "default; --lowercase=false for a cased vocabulary).")
@option("pattern", default=None, help=PATTERN_HELP)
@option("special_tokens", default=None, help=SPECIAL_TOKENS_HELP)
def convert(model, output, output_format, merges, lowercase, pattern, special_tokens):
    """Convert a tokenizer file to another format (see the table in the docs)."""
    target = output_format or _format_of(output)
    if target not in OUTPUT_FORMATS:
        raise SubtokError("unknown output format: %s (choose %s)." % (target, ", ".join(OUTPUT_FORMATS)))
    kind = input_kind(model)
    if kind == "tokenizer.json":
        return _from_json(model, output, target)
    if target != "json":
        raise SubtokError("%s: a %s converts to a tokenizer.json only, not to a %s file."
                          % (model, kind, target))
    hf_json.write_json(_to_json(kind, model, merges, lowercase, pattern, special_tokens), output)


def _format_of(output: str) -> str:
    suffix = Path(output).suffix.lower()
    return {".model": "model", ".tiktoken": "tiktoken"}.get(suffix, "json")


def input_kind(path: str) -> str:
    """What kind of tokenizer file ``path`` holds, by its content
    (:func:`subtok.formats.model_kind`); an unreadable file is an error."""
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise ModelFileError("%s: cannot read the model file: %s." % (path, exc.strerror or exc)) from None
    return model_kind(path)


def _to_json(kind: str, model: str, merges: str | None, lowercase: bool,
             pattern: str | None, special_tokens: str | None) -> dict:
    """The tokenizer.json of a non-JSON input."""
    if kind == "model":
        from subtok.formats.hf_export import sentencepiece_to_json
        return sentencepiece_to_json(model, warn=_warn)
    if kind == "tiktoken":
        from subtok.formats.tiktoken import load_tiktoken
        from subtok.formats.tiktoken_json import tiktoken_to_json
        encoding = load_tiktoken(model, pattern, special_tokens)
        return tiktoken_to_json(encoding.mergeable_ranks, encoding.pat_str, encoding.special_tokens)
    if kind == "vocab.json":
        if not merges:
            raise SubtokError("%s: a GPT-2 vocab.json needs its merges (--merges merges.txt)." % model)
        from subtok.formats.gpt2_files import byte_level_bpe_json
        return byte_level_bpe_json(model, merges)
    from subtok.formats.bert_vocab import bert_wordpiece_json
    return bert_wordpiece_json(model, lowercase=lowercase)


def _read_json(path: str) -> dict:
    try:
        return json.loads(Path(path).read_bytes().decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError("%s: not readable JSON (%s)." % (path, exc)) from None


def _from_json(model: str, output: str, target: str) -> None:
    """A tokenizer.json to a .model or a rank file."""
    data = _read_json(model)
    if target == "model":
        from subtok.formats.hf_export import json_to_sentencepiece, model_data_to_proto
        from subtok.formats.sentencepiece import write_atomically
        proto = model_data_to_proto(json_to_sentencepiece(data, model))
        write_atomically(output, proto.SerializeToString())
    elif target == "tiktoken":
        from subtok.formats.sentencepiece import write_atomically
        from subtok.formats.tiktoken import ranks_text
        from subtok.formats.tiktoken_json import json_to_tiktoken
        ranks, _, _ = json_to_tiktoken(data, model)
        write_atomically(output, ranks_text(ranks))
    else:
        raise SubtokError("%s is a tokenizer.json already." % model)


def _warn(message: str) -> None:
    click.echo("subtok: warning: %s" % message, err=True)
