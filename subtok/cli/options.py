"""Flag parsing shared by every command.

Flags accept SentencePiece's spellings (``--output_format=id``) as well as
Click's (``--output-format id``), and SentencePiece's boolean spelling
``--flag=false`` (see :mod:`subtok.flags`).
"""

from __future__ import annotations

import click

from subtok.flags import parse_bool


def _names(name: str) -> tuple[str, str]:
    """Both spellings of a flag: ``--output-format`` and ``--output_format``."""
    return "--" + name.replace("_", "-"), "--" + name


def option(name: str, **kwargs):
    """A Click option reachable under both spellings, stored as ``name``."""
    dashed, underscored = _names(name)
    decls = [dashed] if dashed == underscored else [dashed, underscored]
    return click.option(*decls, name, **kwargs)


def bool_option(name: str, default: bool, help: str):
    """A ``--flag/--no-flag`` option.

    The underscore spelling and ``--flag=false`` reach it through
    :func:`rewrite_bools`, which runs before Click parses the arguments.
    """
    dashed = name.replace("_", "-")
    return click.option("--%s/--no-%s" % (dashed, dashed), name, default=default,
                        help=help, show_default=True)


def rewrite_bools(args: list[str], bool_names: set[str]) -> list[str]:
    """Turn ``--flag=false`` / ``--flag=true`` into Click's ``--no-flag`` / ``--flag``."""
    out = []
    for arg in args:
        if arg.startswith("--") and "=" in arg:
            flag, value = arg[2:].split("=", 1)
            key = flag.replace("-", "_")
            if key in bool_names:
                on = parse_bool(value)
                if on is None:
                    raise click.UsageError("invalid boolean value for --%s: %r" % (flag, value))
                out.append(("--" if on else "--no-") + key.replace("_", "-"))
                continue
        elif arg.startswith("--no") and arg[4:].lstrip("-_").replace("-", "_") in bool_names:
            arg = "--no-" + arg[4:].lstrip("-_").replace("_", "-")
        elif arg.startswith("--") and arg[2:].replace("-", "_") in bool_names:
            arg = "--" + arg[2:].replace("_", "-")
        out.append(arg)
    return out


class Command(click.Command):
    """A command that accepts ``--flag=false`` for its boolean flags."""

    def parse_args(self, ctx, args):
        names = {p.name for p in self.params
                 if isinstance(p, click.Option) and p.is_bool_flag}
        return super().parse_args(ctx, rewrite_bools(list(args), names))


# -- tiktoken rank files (see subtok.cli.tiktoken_lines) ------------------------
PATTERN_HELP = ("tiktoken rank files: the split pattern, gpt2 | r50k | p50k | cl100k | o200k "
                "or a regex (default: known from the file's sha256).")
SPECIAL_TOKENS_HELP = ("tiktoken rank files: the special tokens, an encoding's name "
                       "(cl100k_base ...), none, or TOKEN=ID,TOKEN=ID (default: known from the "
                       "file's sha256).")


def for_tiktoken(model: str, pattern: str | None, special_tokens: str | None) -> bool:
    """True when ``--model`` is a tiktoken rank file (told by its content).
    ``--pattern`` / ``--special_tokens`` with any other model are an error."""
    from subtok.formats.tiktoken import looks_like_tiktoken
    if looks_like_tiktoken(model):
        return True
    if pattern is not None or special_tokens is not None:
        raise click.UsageError("--pattern and --special_tokens are for tiktoken rank files; "
                               "%s is not one." % model)
    return False

# -- BERT vocab.txt (see subtok.formats.load_any) -------------------------------
_BERT_FLAGS = (
    ("lowercase", "lowercase", "vocab.txt: lowercase the text [default: true, as "
     "BertWordPieceTokenizer; --lowercase=false for a cased vocabulary]."),
    ("strip_accents", "strip_accents", "vocab.txt: strip accents [default: as --lowercase]."),
    ("tokenize_chinese_chars", "handle_chinese_chars",
     "vocab.txt: put spaces around CJK characters [default: true]."),
)


def bert_vocab_options(command):
    """The BERT pipeline flags of a vocab.txt model. Their default is None
    (not given), so that they can be refused with other models."""
    for flag, _, help in reversed(_BERT_FLAGS):
        dashed = flag.replace("_", "-")
        command = click.option("--%s/--no-%s" % (dashed, dashed), flag, default=None,
                               help=help)(command)
    return command


def bert_settings(model: str, **flags) -> dict:
    """``load_any``'s BERT keyword arguments from the flags; given with a
    model that is not a vocab.txt they are an error."""
    unknown = set(flags) - {flag for flag, _, _ in _BERT_FLAGS}
    if unknown:  # a misspelt option of the Python API (subtok.dask.encode)
        raise TypeError("unknown encode option(s): %s" % ", ".join(sorted(unknown)))
    settings = {name: flags.get(flag) for flag, name, _ in _BERT_FLAGS}
    if any(value is not None for value in settings.values()):
        from subtok.formats import model_kind
        if model_kind(model) != "vocab.txt":
            raise click.UsageError("--lowercase, --strip_accents and --tokenize_chinese_chars are "
                                   "for BERT vocab.txt models; %s is not one." % model)
    return settings
