"""``subtok``: the command-line tools (train / encode / decode / export-vocab).

Thin by design: options are parsed here, everything else lives in the
library. Flags accept SentencePiece's spellings (``--output_format=id``) as
well as Click's (``--output-format id``), and SentencePiece's boolean
spelling ``--flag=false``. Every failure ends in one line on stderr and a
non-zero exit status, never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import click

from . import __version__
from .batch import LineDecoder, LineEncoder, SampleLineEncoder, map_blocks
from .errors import EncodeError, SubtokError
from .model_file import syms_text, vocab_text
from .processor import SentencePieceProcessor
from .streams import check_readable, open_output, read_blocks, read_lines
from .trainers.spec import coerce_bool
from .vocab import PieceType

SAMPLING_FORMATS = ("sample_piece", "sample_id", "nbest_piece", "nbest_id")

#: spm_encode accepts these and, since its first releases, writes nothing
#: for them (the line that printed the proto is commented out in
#: spm_encode_main.cc); each is checked as the format named here.
PROTO_FORMATS = {"proto": "piece", "sample_proto": "sample_piece", "nbest_proto": "nbest_piece"}


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
    :func:`_rewrite_bools`, which runs before Click parses the arguments.
    """
    dashed = name.replace("_", "-")
    return click.option("--%s/--no-%s" % (dashed, dashed), name, default=default,
                        help=help, show_default=True)


def _rewrite_bools(args: list[str], bool_names: set[str]) -> list[str]:
    """Turn ``--flag=false`` / ``--flag=true`` into Click's ``--no-flag`` / ``--flag``."""
    out = []
    for arg in args:
        if arg.startswith("--") and "=" in arg:
            flag, value = arg[2:].split("=", 1)
            key = flag.replace("-", "_")
            if key in bool_names:
                try:
                    on = coerce_bool(flag, value)
                except SubtokError:
                    raise click.UsageError("invalid boolean value for --%s: %r" % (flag, value)) from None
                out.append(("--" if on else "--no-") + key.replace("_", "-"))
                continue
        elif arg.startswith("--no") and arg[4:].lstrip("-_").replace("-", "_") in bool_names:
            arg = "--no-" + arg[4:].lstrip("-_").replace("_", "-")
        elif arg.startswith("--") and arg[2:].replace("-", "_") in bool_names:
            arg = "--" + arg[2:].replace("_", "-")
        out.append(arg)
    return out


class _Command(click.Command):
    """A command that accepts ``--flag=false`` for its boolean flags."""

    def parse_args(self, ctx, args):
        names = {p.name for p in self.params
                 if isinstance(p, click.Option) and p.is_bool_flag}
        return super().parse_args(ctx, _rewrite_bools(list(args), names))


class _Group(click.Group):
    """Turns every error into one line on stderr and a non-zero exit."""

    command_class = _Command

    def main(self, args=None, prog_name=None, **extra):
        try:
            return super().main(args, prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("subtok: aborted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            where = ("subtok %s" % exc.ctx.info_name) if getattr(exc, "ctx", None) and exc.ctx.parent else "subtok"
            click.echo("%s: error: %s" % (where, exc.format_message()), err=True)
            sys.exit(exc.exit_code)
        except SubtokError as exc:
            click.echo("subtok: error: %s" % exc, err=True)
            sys.exit(1)
        except BrokenPipeError:
            sys.stderr.close()
            sys.exit(141)
        except KeyboardInterrupt:
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="subtok")
def main() -> None:
    """Subword tokenizers compatible with SentencePiece models."""


def run() -> None:
    """The console script (and ``python -m subtok``): the tool, then, once
    it succeeded and its output is flushed, an exit that skips tearing the
    interpreter down. Freeing the caches of a long encode object by object
    took about 0.11 s after a 35 MB encode, work whose only effect is
    memory the exit returns anyway. Errors take the usual exit."""
    main(prog_name="subtok")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        os._exit(141)
    os._exit(0)


def _load(model: str) -> SentencePieceProcessor:
    return SentencePieceProcessor(model)


def _inputs(input_option: tuple[str, ...], files: tuple[str, ...]) -> list[str]:
    paths = [p for value in input_option for p in value.split(",") if p] + list(files)
    check_readable(paths)
    return paths


def _write_blocks(blocks, output: str | None) -> None:
    """Write output blocks; to stdout, each as soon as it is ready."""
    with open_output(output) as out:
        for block in blocks:
            out.write(block)
            if output is None or output == "-":
                out.flush()


def _write_lines(outputs, output: str | None) -> None:
    with open_output(output) as out:
        write = out.write
        for line in outputs:
            write(line)
            write(b"\n")


@main.command()
@option("model", required=True, help="Model file (.model).")
@option("input", multiple=True, help="Input file(s); comma-separated or repeated. Default: stdin.")
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
@option("minloglevel", type=int, default=0, hidden=True)
@click.argument("files", nargs=-1, type=click.Path())
def encode(model, input, output, output_format, extra_options, nbest_size, alpha, random_seed,
           vocabulary, vocabulary_threshold, generate_vocabulary, num_threads, minloglevel, files):
    """Encode text lines into pieces or ids (like spm_encode)."""
    if output_format not in ("piece", "id") + SAMPLING_FORMATS + tuple(PROTO_FORMATS):
        raise EncodeError("unknown output format: %s (choose piece, id, %s, %s)."
                          % (output_format, ", ".join(SAMPLING_FORMATS), ", ".join(PROTO_FORMATS)))
    processor = _load(model)
    if vocabulary:
        processor.set_vocabulary(_read_vocabulary(vocabulary, vocabulary_threshold))
    paths = _inputs(input, files)
    if generate_vocabulary:
        encoder = LineEncoder(processor, "piece", "")
        counts: Counter = Counter()
        for line in read_lines(paths):
            for piece, piece_id in encoder.pairs(line):
                kind = processor.vocab.types[piece_id]
                if kind not in (PieceType.UNKNOWN, PieceType.CONTROL):
                    counts[piece] += 1
        rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8", "surrogateescape")))
        _write_lines((("%s\t%d" % kv).encode("utf-8", "surrogateescape") for kv in rows), output)
        return
    checked_as = PROTO_FORMATS.get(output_format, output_format)
    if checked_as in SAMPLING_FORMATS:
        encoder = SampleLineEncoder(processor, checked_as, extra_options, nbest_size, alpha,
                                    random_seed)
    else:
        encoder = LineEncoder(processor, checked_as, extra_options)
    if output_format in PROTO_FORMATS:
        # Options are checked (above) and the input read, as spm_encode
        # does; encoding would produce nothing, so it is skipped.
        _write_blocks((b"" for _ in read_blocks(paths)), output)
        return
    _write_blocks(map_blocks(encoder, read_blocks(paths), num_threads), output)


def _read_vocabulary(path: str, threshold: int) -> list[str]:
    """``piece[<TAB>freq]`` lines; pieces with freq >= threshold are kept."""
    check_readable([path])
    keep = []
    for number, line in enumerate(read_lines([path]), 1):
        text = line.decode("utf-8", "surrogateescape")
        if not text:
            continue
        piece, _, freq = text.partition("\t")
        try:
            count = int(freq) if freq else 1
        except ValueError:
            raise SubtokError("%s:%d: frequency %r is not an integer." % (path, number, freq)) from None
        if count >= threshold:
            keep.append(piece)
    return keep


@main.command()
@option("model", required=True, help="Model file (.model).")
@option("input", multiple=True, help="Input file(s). Default: stdin.")
@option("output", default=None, help="Output file. Default: stdout.")
@option("input_format", default="piece", show_default=True, help="piece | id")
@option("output_format", default="string", show_default=True, help="string")
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
    if output_format != "string":
        raise SubtokError("unknown output format: %s (only string is supported)." % output_format)
    processor = _load(model)
    paths = _inputs(input, files)
    decoder = LineDecoder(processor, input_format, extra_options)
    _write_blocks(map_blocks(decoder, read_blocks(paths), num_threads), output)


@main.command("export-vocab")
@option("model", required=True, help="Model file (.model).")
@option("output", default=None, help="Output file. Default: stdout.")
@option("output_format", default="vocab", show_default=True,
        help="vocab (piece<TAB>score) | syms (piece<TAB>id)")
def export_vocab(model, output, output_format):
    """Print the vocabulary of a model (like spm_export_vocab)."""
    if output_format not in ("vocab", "syms"):
        raise SubtokError("unknown output format: %s (choose vocab or syms)." % output_format)
    data = _load(model).model_data
    text = vocab_text(data) if output_format == "vocab" else syms_text(data)
    with open_output(output) as out:
        out.write(text.encode("utf-8", "surrogateescape"))


# spm-style aliases, so `subtok export_vocab` works too.
main.add_command(export_vocab, "export_vocab")

# The train command lives in its own module (registered on import).
from . import cli_train  # noqa: E402,F401
