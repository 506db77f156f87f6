"""Progress bars on stderr: training's phases and messages (:class:`Progress`),
and the bytes of input files read by the line tools.

Bars show only when stderr is a terminal; tqdm is imported only then. A
byte bar over input files shows only when every input is a file, so that
its total (and with it the ETA) is known.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


def input_size(paths: list[str]) -> int | None:
    """Total bytes of ``paths``; None for stdin (no paths, or "-")."""
    if not paths or "-" in paths:
        return None
    try:
        return sum(os.path.getsize(path) for path in paths)
    except OSError:
        return None


def blocks_with_progress(blocks: Iterable[bytes], paths: list[str], desc: str) -> Iterator[bytes]:
    """``blocks`` unchanged, counted on a bar while stderr is a terminal."""
    total = input_size(paths)
    if total is None or not sys.stderr.isatty():
        yield from blocks
        return
    from tqdm import tqdm
    with tqdm(total=total, desc=desc, unit="B", unit_scale=True, file=sys.stderr,
              leave=False, dynamic_ncols=True) as bar:
        for block in blocks:
            bar.update(len(block) + 1)  # the newline the block's end stands for
            yield block


class Progress:
    """Progress bars (tqdm on stderr), warnings and the summary of one run.

    ``enabled=None`` shows bars only when stderr is a terminal. Bars carry
    a total (and so an ETA) wherever it is known; a phase of unknown
    length shows a live clock (:meth:`phase`). Warnings and the summary are
    printed unless ``minloglevel >= 2``, through tqdm's writer while bars
    are shown, so that a bar is redrawn below the message instead of being
    cut by it.
    """

    def __init__(self, enabled: bool | None = False, minloglevel: int = 0) -> None:
        if enabled is None:
            enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.enabled = enabled
        self.minloglevel = minloglevel

    def bar(self, iterable: Iterable | None = None, *, total: int | None = None,
            desc: str = "", unit: str = "it", unit_scale: bool = False,
            bar_format: str | None = None):
        """``tqdm(iterable)`` when enabled, else a no-op stand-in."""
        if not self.enabled:
            return _NoBar(iterable)
        from tqdm import tqdm
        return tqdm(iterable, total=total, desc=desc, unit=unit, unit_scale=unit_scale,
                    file=sys.stderr, leave=False, dynamic_ncols=True, bar_format=bar_format)

    @contextmanager
    def phase(self, desc: str):
        """A bar for a step that reports nothing while it runs: it shows
        the time spent, redrawn twice a second by a helper thread."""
        if not self.enabled:
            yield
            return
        bar = self.bar(desc=desc, bar_format="{desc}: {elapsed}")
        done = threading.Event()

        def tick() -> None:
            while not done.wait(0.5):
                bar.refresh()

        ticker = threading.Thread(target=tick, name="subtok-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
            bar.close()

    def warning(self, message: str) -> None:
        self.say("subtok: warning: %s" % message)

    def say(self, line: str) -> None:
        """Print one line on stderr (unless quiet), keeping bars intact."""
        if self.minloglevel >= 2:
            return
        if self.enabled:
            from tqdm import tqdm
            tqdm.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)


class _NoBar:
    def __init__(self, iterable) -> None:
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None
