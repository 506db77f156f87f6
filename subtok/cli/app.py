"""The ``subtok`` command group: error handling and the table of commands.

Each command lives in a module of its own and is imported only when it is
run (or its help shown), so ``subtok encode`` never loads the trainer's
option spec. Every failure ends in one line on stderr and a non-zero exit
status, never a traceback.
"""

from __future__ import annotations

import contextlib
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
    "convert": ("subtok.cli.convert", "convert"),
    "normalize": ("subtok.cli.normalize", "normalize"),
    "count": ("subtok.cli.count", "count_command"),
}
#: spm-style spellings that also work (not listed in the help).
ALIASES = {"export_vocab": "export-vocab"}


class _Group(click.Group):
    """Turns every error into one line on stderr and a non-zero exit.

    A user's mistake or the system's refusal (a SubtokError, an OSError,
    running out of memory) is one line and status 1; anything else is a
    bug in subtok: one line saying so, status 70 (EX_SOFTWARE), and the
    traceback only with ``--debug`` (anywhere on the command line). A
    closed stdout (``subtok encode ... | head -1``) ends the run quietly,
    with status 0, as a stage of a pipeline whose reader has all it wants.
    SIGTERM and SIGHUP unwind like an error, so no temporary file is left,
    then end the process by that signal.
    """

    command_class = Command

    def main(self, args=None, prog_name=None, **extra):
        extra.pop("standalone_mode", None)  # always False: errors are ours to print
        args = list(sys.argv[1:] if args is None else args)
        debug = _take_flag(args, "--debug")
        with _signals_unwind():
            try:
                return super().main(args, prog_name, standalone_mode=False, **extra)
            except click.exceptions.Exit as exc:
                sys.exit(exc.exit_code)
            except click.exceptions.NoArgsIsHelpError as exc:  # bare ``subtok``: the help
                click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message())
                sys.exit(0)
            except click.Abort:
                click.echo("subtok: aborted", err=True)
                sys.exit(130)
            except click.ClickException as exc:
                where = ("subtok %s" % exc.ctx.info_name) if getattr(exc, "ctx", None) and exc.ctx.parent else "subtok"
                _fail("%s: error: %s" % (where, exc.format_message()), exc.exit_code)
            except (BrokenPipeError, _PipeClosed):
                _end_quietly()
            except KeyboardInterrupt:
                sys.exit(130)
            except Terminated as exc:
                _die_by(exc.signum)
            except (SubtokError, OSError, MemoryError) as exc:
                if debug:
                    _print_traceback()
                _fail("subtok: error: %s" % _describe(exc), 1)
            except Exception as exc:
                if debug:
                    _print_traceback()
                _fail("subtok: internal error: %s: %s (a bug in subtok; rerun with --debug "
                      "for the traceback)" % (type(exc).__name__, exc), 70)

    def invoke(self, ctx):
        """Run the command; a closed stdout passes click by (it would end
        the run with status 1) to :meth:`main`."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _PipeClosed() from None

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


def run() -> None:
    """The console script (and ``python -m subtok``): the tool, then, once
    it succeeded and its output is flushed, an exit that skips tearing the
    interpreter down. Freeing the caches of a long encode object by object
    is work whose only effect is memory the exit returns anyway
    (docs/performance.md has what it cost). Errors take the usual exit."""
    main(prog_name="subtok")
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        _end_quietly()
    except OSError as exc:
        _fail("subtok: error: <stdout>: cannot write output: %s." % (exc.strerror or exc), 1)
    os._exit(0)


class _PipeClosed(BaseException):
    """stdout's reader went away (a BaseException: click catches OSErrors)."""


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the run like an interrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_unwind():
    """While the command runs, SIGTERM and SIGHUP raise :class:`Terminated`
    in this process (a forked worker just dies of them, as before)."""
    main_pid = os.getpid()

    def handler(signum, frame):
        if os.getpid() != main_pid:
            _die_by(signum)
        raise Terminated(signum)

    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    previous = {}
    try:
        for signum in wanted:
            previous[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread: leave signals alone
        pass
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _die_by(signum: int) -> None:
    """End the process by ``signum``, now that it has cleaned up, so that
    whoever waits for it sees how it ended."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    sys.exit(128 + signum)  # if the signal is blocked


def _end_quietly() -> None:
    """stdout's reader is gone: nothing more can be delivered, and nothing
    is wrong. stdout is pointed at /dev/null so that no later flush
    complains, then the run ends with status 0."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(0)


def _fail(message: str, status: int) -> None:
    """One line on stderr (a message holding a newline, say a piece's
    text, gets it escaped), then exit with ``status``."""
    line = message.replace("\n", "\\n").replace("\r", "\\r")
    with contextlib.suppress(OSError):
        click.echo(line, err=True)
    sys.exit(status)


def _describe(exc: BaseException) -> str:
    """A SubtokError's own message; a system error's reason and file."""
    if isinstance(exc, MemoryError):
        return "out of memory."
    if isinstance(exc, OSError) and not isinstance(exc, SubtokError):
        where = exc.filename if exc.filename is not None else "<system>"
        return "%s: %s." % (where, exc.strerror or exc)
    return str(exc)


def _print_traceback() -> None:
    """``--debug``: the traceback of the error being handled (traceback is
    imported only then: it is no small part of the start-up otherwise)."""
    import traceback
    traceback.print_exc()


def _take_flag(args: list[str], flag: str) -> bool:
    """Remove ``flag`` from ``args`` (before any ``--``); True if it was there."""
    end = args.index("--") if "--" in args else len(args)
    if flag not in args[:end]:
        return False
    del args[args.index(flag)]
    return True
