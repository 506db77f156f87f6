"""Atomic file output: a file is replaced whole or not at all.

Output goes to a temporary file beside the target and is renamed into
place only when everything succeeded, so a failure never leaves a
half-written file behind. Used by model saving, training and the CLI.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from subtok.errors import OutputError


def _default_mode() -> int:
    """The permissions a newly created file would get (0666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """Write to a temporary file beside ``path``; rename it into place on success.

    On any failure the temporary file is removed and an OSError becomes an
    :class:`OutputError` naming ``path``.
    """
    target = Path(path)
    try:
        handle, tmp = tempfile.mkstemp(prefix=".%s." % target.name, dir=str(target.parent))
    except OSError as exc:
        raise OutputError("%s: cannot write output file: %s." % (path, exc.strerror or exc)) from None
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.chmod(tmp, _default_mode())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError("%s: cannot write output file: %s." % (path, exc.strerror or exc)) from None
        raise


def atomic_write_all(files: list[tuple[str | os.PathLike, bytes]]) -> None:
    """Write several files as one: every file appears, or none changes.

    All contents go to temporary files first; they are renamed into place
    only once every one is written. If a rename fails, the files already
    renamed by this call are removed again (their old contents cannot come
    back, but no mix of old and new files is left).
    """
    staged: list[tuple[str, Path]] = []
    target = None
    try:
        for path, data in files:
            target = Path(path)
            handle, tmp = tempfile.mkstemp(prefix=".%s." % target.name, dir=str(target.parent))
            staged.append((tmp, target))
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(tmp, _default_mode())
    except BaseException as exc:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError("%s: cannot write output file: %s." % (target, exc.strerror or exc)) from None
        raise
    _publish(staged)


def _publish(staged: list[tuple[str, Path]]) -> None:
    """Rename staged temporary files onto their targets, all or none."""
    done: list[Path] = []
    try:
        for tmp, target in staged:
            os.replace(tmp, target)
            done.append(target)
    except OSError as exc:
        for target in done:
            with contextlib.suppress(OSError):
                target.unlink()
        for tmp, _ in staged[len(done):]:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise OutputError("%s: cannot write output file: %s."
                          % (staged[len(done)][1], exc.strerror or exc)) from None
