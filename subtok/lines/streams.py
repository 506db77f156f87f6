"""Line input and atomic output for the command-line tools.

Lines are what lies between ``\\n`` bytes, exactly as spm_encode reads them
(``std::getline``): a ``\\r`` or a BOM stays in the text, and a last line
without a newline still counts. Output to a file goes through
:func:`subtok.atomic.atomic_writer`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import BinaryIO

from subtok.atomic import atomic_writer
from subtok.errors import InputError, OutputError


def read_lines(paths: list[str]) -> Iterator[bytes]:
    """Yield raw lines (without the ``\\n``) from files, or stdin if none."""
    return _from_inputs(paths, _lines_of)


def _from_inputs(paths: list[str], read) -> Iterator[bytes]:
    """``read(handle, name)`` over each input in turn ("-" or none: stdin)."""
    for path in paths or ["-"]:
        if path == "-":
            yield from read(sys.stdin.buffer, "<stdin>")
            continue
        try:
            handle = open(path, "rb")
        except OSError as exc:
            raise InputError("%s: cannot open input file: %s." % (path, exc.strerror or exc)) from None
        with handle:
            yield from read(handle, path)


def _lines_of(handle: BinaryIO, name: str) -> Iterator[bytes]:
    try:
        for line in handle:
            yield line[:-1] if line.endswith(b"\n") else line
    except OSError as exc:
        raise InputError("%s: cannot read input: %s." % (name, exc.strerror or exc)) from None


#: Bytes asked of the input at a time by :func:`read_blocks`. Small
#: enough that worker processes share what they learn soon: a part first
#: met in two workers' blocks at once is segmented by both
#: (docs/performance.md).
BLOCK_SIZE = 1 << 16


def read_blocks(paths: list[str], size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """Yield the input as blocks of whole lines, each block being its lines
    joined by ``\\n`` (no final newline), so ``block.split(b"\\n")`` gives
    exactly the lines :func:`read_lines` would.

    Per block instead of per line: the encoders decode, encode and ship
    a block at once. Each read takes what is available (``read1``), so a
    pipe that delivers a line at a time still gets its answer at once.
    """
    return _from_inputs(paths, lambda handle, name: _blocks_of(handle, name, size))


def _blocks_of(handle: BinaryIO, name: str, size: int) -> Iterator[bytes]:
    # Chunks of a line not yet ended wait in a list and are searched only
    # once each, so a line of any length costs linear time.
    pending: list[bytes] = []
    try:
        while True:
            chunk = handle.read1(size)
            if not chunk:
                break
            cut = chunk.rfind(b"\n")
            if cut < 0:
                pending.append(chunk)
                continue
            pending.append(chunk[:cut])
            yield b"".join(pending)
            pending = [chunk[cut + 1:]]
    except OSError as exc:
        raise InputError("%s: cannot read input: %s." % (name, exc.strerror or exc)) from None
    rest = b"".join(pending)
    if rest:
        yield rest


def check_readable(paths: list[str]) -> None:
    """Fail early, before any output is produced, if an input is missing."""
    for path in paths:
        if path != "-" and not os.access(path, os.R_OK):
            reason = "no such file" if not os.path.exists(path) else "permission denied"
            if os.path.isdir(path):
                reason = "is a directory"
            raise InputError("%s: cannot open input file: %s." % (path, reason))
        if path != "-" and os.path.isdir(path):
            raise InputError("%s: cannot open input file: is a directory." % path)


@contextlib.contextmanager
def open_output(path: str | None) -> Iterator[BinaryIO]:
    """A binary stream to ``path`` (see :mod:`subtok.atomic`) or to stdout
    when ``path`` is None."""
    if path is None or path == "-":
        out = _Stdout(sys.stdout.buffer)
        yield out  # type: ignore[misc]
        out.flush()
        return
    with atomic_writer(path) as out:
        yield out


class _Stdout:
    """stdout whose write errors (a full disk, say) are OutputErrors; a
    closed pipe stays a BrokenPipeError, which ends the command quietly."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream

    def write(self, data: bytes) -> int:
        try:
            return self.stream.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError("<stdout>: cannot write output: %s." % (exc.strerror or exc)) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError("<stdout>: cannot write output: %s." % (exc.strerror or exc)) from None


def input_paths(input_option: tuple[str, ...], files: tuple[str, ...]) -> list[str]:
    """The inputs of ``--input`` (comma-separated, repeated) and the
    positional files, checked readable before any output is made."""
    paths = [p for value in input_option for p in value.split(",") if p] + list(files)
    check_readable(paths)
    return paths


def write_blocks(blocks, output: str | None) -> None:
    """Write output blocks; to stdout, each as soon as it is ready."""
    with open_output(output) as out:
        for block in blocks:
            out.write(block)
            if output is None or output == "-":
                out.flush()


def write_lines(outputs, output: str | None) -> None:
    """Write each output (bytes) as a line."""
    with open_output(output) as out:
        write = out.write
        for line in outputs:
            write(line)
            write(b"\n")
