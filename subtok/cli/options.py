"""Flag parsing shared by every command.

Flags accept SentencePiece's spellings (``--output_format=id``) as well as
Click's (``--output-format id``), and SentencePiece's boolean spelling
``--flag=false`` (see :mod:`subtok.flags`).
"""

from __future__ import annotations

import click

from subtok.errors import OptionError
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

    def invoke(self, ctx):
        """Run the command; the library's :class:`~subtok.errors.OptionError`
        is reported as click's usage errors are."""
        try:
            return super().invoke(ctx)
        except OptionError as exc:
            raise click.UsageError(str(exc), ctx) from None


# -- tiktoken rank files (see subtok.lines.tiktoken_lines) ----------------------
PATTERN_HELP = ("tiktoken rank files: the split pattern, gpt2 | r50k | p50k | cl100k | o200k "
                "or a regex (default: known from the file's sha256).")
SPECIAL_TOKENS_HELP = ("tiktoken rank files: the special tokens, an encoding's name "
                       "(cl100k_base ...), none, or TOKEN=ID,TOKEN=ID (default: known from the "
                       "file's sha256).")


# -- BERT vocab.txt (see subtok.formats.load_any, subtok.lines.encoders) ---------


def bert_vocab_options(command):
    """The BERT pipeline flags of a vocab.txt model. Their default is None
    (not given), so that they can be refused with other models."""
    # Here, not at the top: the commands that train or count load no encoder.
    from subtok.lines.encoders import BERT_FLAGS
    for flag, _, help in reversed(BERT_FLAGS):
        dashed = flag.replace("_", "-")
        command = click.option("--%s/--no-%s" % (dashed, dashed), flag, default=None,
                               help=help)(command)
    return command
