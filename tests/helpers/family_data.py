"""Helpers of the WordPiece and byte-level BPE training tests: the shared
corpora (a missing corpus fails the test, it is never skipped) and the
check of a command-line error."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import CORPORA_DIR, run_subtok


def corpus(name: str) -> Path:
    path = CORPORA_DIR / name
    assert path.is_file(), "shared data missing: %s" % path
    return path


def head(name: str, size: int, tmp_path: Path) -> Path:
    """The first whole lines of a corpus, about ``size`` bytes, in a file."""
    data = corpus(name).read_bytes()[:size]
    out = tmp_path / ("%s.%d" % (name, size))
    out.write_bytes(data[:data.rindex(b"\n") + 1])
    return out


def all_corpora() -> list[Path]:
    """Every shared corpus but the 35 MB benchmark one."""
    paths = sorted(CORPORA_DIR.glob("*.txt"))
    assert paths, "shared corpora missing at %s" % CORPORA_DIR
    return [p for p in paths if p.name != "gutenberg_en.txt"]


def assert_train_error(model_type: str, args: list[str], message: str, tmp_path: Path) -> None:
    """``subtok train`` of fr.txt (vocab 500) with ``args`` fails with one
    line naming ``message`` and leaves the output folder empty."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    base = ["--input", str(corpus("fr.txt")), "--model_prefix", str(out / "m"),
            "--model_type=%s" % model_type, "--vocab_size=500"]
    result = run_subtok("train", *base, *args, check=False)
    err = result.stderr.decode()
    assert result.returncode != 0 and "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("subtok: error: "), err
    assert message in err
    assert os.listdir(out) == [] and result.stdout == b""
