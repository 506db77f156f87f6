"""The ``subtok`` command group: error handling and the table of commands.

Each command lives in a module of its own and is imported only when it is
run (or its help shown), so ``subtok encode`` never loads the trainer's
option spec. Every failure ends in one line on stderr and a non-zero exit
status, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click

from subtok import __version__
from subtok.cli.options import Command
from subtok.errors import SubtokError

#: Command name -> (module, function): the one place a command is registered.
COMMANDS = {
    "encode": ("subtok.cli.encode", "encode"),
    "decode": ("subtok.cli.decode", "decode"),
    "export-vocab": ("subtok.cli.export_vocab", "export_vocab"),
    "train": ("subtok.cli.train", "train_command"),
    "normalize": ("subtok.cli.normalize", "normalize"),
}
#: spm-style spellings that also work (not listed in the help).
ALIASES = {"export_vocab": "export-vocab"}


class _Group(click.Group):
    """Turns every error into one line on stderr and a non-zero exit."""

    command_class = Command

    def main(self, args=None, prog_name=None, **extra):
        extra.pop("standalone_mode", None)  # always False: errors are ours to print
        try:
            return super().main(args, prog_name, standalone_mode=False, **extra)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.NoArgsIsHelpError as exc:  # bare ``subtok``: the help
            click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
            sys.exit(0)
        except Terminated as exc:
            sys.exit(128 + exc.signum)
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

    def list_commands(self, ctx) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx, name: str):
        found = COMMANDS.get(ALIASES.get(name, name))
        if found is None:
            return None
        module, function = found
        return getattr(importlib.import_module(module), function)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="subtok")
def main() -> None:
    """Subword tokenizers compatible with SentencePiece models."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the program is, so that it unwinds
    as for SIGINT: atomic outputs remove their temporary files."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum, frame) -> None:
    raise Terminated(signum)


def handle_termination_signals() -> None:
    """SIGTERM and SIGHUP clean up like SIGINT, then exit 128 + signal
    (143 and 129, as a shell reports a process those signals killed)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _raise_terminated)


def run() -> None:
    """The console script (and ``python -m subtok``): the tool, then, once
    it succeeded and its output is flushed, an exit that skips tearing the
    interpreter down. Freeing the caches of a long encode object by object
    took about 0.11 s after a 35 MB encode, work whose only effect is
    memory the exit returns anyway. Errors take the usual exit."""
    handle_termination_signals()
    main(prog_name="subtok")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        os._exit(141)
    os._exit(0)
