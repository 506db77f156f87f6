"""Output that loses nothing and replaces nothing that is not a file.

Where an output path leads decides how it is written (:func:`resolve`):

* a regular file, or nothing yet: to a temporary file beside it, renamed
  into place only when everything succeeded, so a failure never leaves a
  half-written file behind; a replaced file keeps its permissions (and,
  for root, its owner), and a file we could not write to is not replaced;
* a symbolic link: the same, on the file the link leads to; the link stays;
* a device, a FIFO or a socket, or a link through ``/proc`` (such as
  ``/dev/stdout``): written through as it is, never replaced or removed;
* a directory: an error.

Files published together (a model and its vocabulary) are renamed under
one lock (``flock`` on their directory), so two runs writing the same
names can never leave one run's file beside the other's, and if a rename
fails the files it already replaced are put back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from subtok.errors import OutputError

#: Symbolic links followed before giving up, as the kernel does (ELOOP).
MAX_LINKS = 40


def _default_mode() -> int:
    """The permissions a newly created file would get (0666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@dataclass
class Target:
    """Where an output path leads (see the module docstring)."""

    #: The path to write: the file a link leads to, or the path itself.
    path: str
    #: True for what is written through and never replaced.
    direct: bool = False
    #: For a file being replaced, its status (permissions, owner).
    existing: os.stat_result | None = None
    #: For a direct target, whether to append (a regular file reached
    #: through /proc: a shell opened it, maybe for appending).
    append: bool = False


def resolve(path: str | os.PathLike) -> Target:
    """Decide how ``path`` is written; errors name ``path``."""
    name = os.fspath(path)
    try:
        status = os.stat(name)
    except FileNotFoundError:
        status = None
    except OSError as exc:
        raise _error(name, exc) from None
    if status is not None and stat.S_ISDIR(status.st_mode):
        raise OutputError("%s: cannot write output file: it is a directory." % name)
    if status is not None and not stat.S_ISREG(status.st_mode):
        return Target(name, direct=True)
    real = _final_link_target(name)
    if real is None:
        return Target(name, direct=True, append=status is not None)
    if status is not None and not os.access(real, os.W_OK):
        raise OutputError("%s: cannot write output file: permission denied." % name)
    return Target(real, existing=status)


def _final_link_target(name: str) -> str | None:
    """The path the symbolic links at ``name`` lead to (``name`` itself if
    it is no link), or None if they pass through ``/proc``, whose links
    (``/dev/stdout``, ``/dev/fd/1``) stand for open files, not paths."""
    current = name
    for _ in range(MAX_LINKS):
        directory = os.path.realpath(os.path.dirname(current) or ".")
        if directory == "/proc" or directory.startswith("/proc/"):
            return None
        try:
            link = os.readlink(current)
        except OSError:  # not a link, or nothing there yet: this is the file
            return current
        current = os.path.join(directory, link)
    raise OutputError("%s: cannot write output file: too many levels of symbolic links." % name)


def _error(name: str, exc: OSError) -> OutputError:
    return OutputError("%s: cannot write output file: %s." % (name, exc.strerror or exc))


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` with (see the module docstring).

    On any failure a temporary file is removed and an OSError becomes an
    :class:`OutputError` naming ``path``.
    """
    with atomic_writers(path) as (out,):
        yield out


@contextlib.contextmanager
def atomic_writers(*paths: str | os.PathLike) -> Iterator[list[BinaryIO]]:
    """Several outputs written together: each one goes to its temporary
    file, and only when all succeeded are they renamed into place, in the
    order given, under one lock (see :func:`publish`)."""
    names = [os.fspath(p) for p in paths]
    targets = [resolve(name) for name in names]
    files: list[BinaryIO] = []
    temps: list[str | None] = []
    current = names[0]
    try:
        for name, target in zip(names, targets):
            current = name
            with _signals_held():
                temp, handle = _open(target)
                temps.append(temp)
                files.append(handle)
        yield files
        for name, handle in zip(names, files):
            current = name
            handle.close()
        publish([(temp, target) for temp, target in zip(temps, targets) if temp is not None])
    except BaseException as exc:
        for handle in files:
            with contextlib.suppress(OSError):
                handle.close()
        for temp in temps:
            if temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise _error(current, exc) from None
        raise


#: Signals the CLI turns into an unwinding exception (and Ctrl-C).
_HELD = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT")
              if hasattr(signal, name))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold the signals that unwind the CLI while a temporary file is
    created and recorded: one arriving between ``mkstemp`` and the record
    would unwind past a file nobody knows to remove. Held signals arrive
    as soon as the file is recorded."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _open(target: Target) -> tuple[str | None, BinaryIO]:
    """(temporary path or None, handle) for one target."""
    if target.direct:
        flags = os.O_WRONLY | (os.O_APPEND if target.append else 0)
        return None, os.fdopen(os.open(target.path, flags), "wb")
    directory, name = os.path.split(target.path)
    handle, temp = tempfile.mkstemp(prefix=".%s." % name, dir=directory or ".")
    try:
        _copy_status(temp, target.existing)
    except BaseException:
        os.close(handle)
        os.unlink(temp)
        raise
    return temp, os.fdopen(handle, "wb")


def _copy_status(temp: str, existing: os.stat_result | None) -> None:
    """Give the temporary file the permissions (and, for root, the owner)
    of the file it replaces, or those of a new file."""
    if existing is None:
        os.chmod(temp, _default_mode())
        return
    os.chmod(temp, stat.S_IMODE(existing.st_mode) & 0o777)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        with contextlib.suppress(OSError):
            os.chown(temp, existing.st_uid, existing.st_gid)


def publish(renames: list[tuple[str, Target]]) -> None:
    """Rename each temporary file over its target, in order, holding an
    exclusive lock on every directory involved; if a rename fails, the
    targets already replaced get their old files back (kept meanwhile as
    hard links, where the file system has them), and those that did not
    exist before are removed again."""
    directories = sorted({os.path.dirname(target.path) or "." for _, target in renames})
    with contextlib.ExitStack() as locks:
        for directory in directories:
            locks.enter_context(_locked(directory))
        backups = [_backup(target.path) for _, target in renames]
        done = 0
        try:
            for temp, target in renames:
                os.replace(temp, target.path)
                done += 1
        except BaseException:
            for (_, target), backup in list(zip(renames, backups))[:done]:
                with contextlib.suppress(OSError):
                    if backup is not None:
                        os.replace(backup, target.path)
                    elif target.existing is None:  # it was new: all or none
                        os.unlink(target.path)
            raise
        finally:
            for backup in backups:
                if backup is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(backup)


def move_into_place(moves: list[tuple[str, str]]) -> None:
    """Publish files finished elsewhere on the same file system, given as
    ``(finished file, output path)`` pairs, all together as
    :func:`atomic_writers` publishes its temporary files: each output path
    is resolved as in :func:`resolve` (a replaced file's permissions are
    kept) and the renames happen under one lock, all or none. An output
    path that is a device, a FIFO or a socket is refused: a finished file
    cannot be renamed over one."""
    renames = []
    for finished, path in moves:
        target = resolve(path)
        if target.direct:
            raise OutputError("%s: cannot write output file: not a regular file." % path)
        try:
            _copy_status(finished, target.existing)
        except OSError as exc:
            raise _error(path, exc) from None
        renames.append((finished, target))
    try:
        publish(renames)
    except OSError as exc:
        raise _error(moves[0][1] if len(moves) == 1 else os.path.dirname(moves[0][1]) or ".",
                     exc) from None


def _backup(path: str) -> str | None:
    """A hard link to the file at ``path`` under a temporary name, or None
    (no file there, or no hard links here)."""
    if not os.path.exists(path):
        return None
    directory, name = os.path.split(path)
    for _ in range(10):
        backup = os.path.join(directory or ".", ".%s.old.%s" % (name, os.urandom(6).hex()))
        try:
            os.link(path, backup)
            return backup
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


@contextlib.contextmanager
def _locked(directory: str) -> Iterator[None]:
    """An exclusive ``flock`` on ``directory`` (none where the system has
    no ``fcntl``, or cannot lock a directory)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock
