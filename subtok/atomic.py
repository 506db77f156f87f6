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
