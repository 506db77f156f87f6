"""Shared fixtures: where the real data lives, and the oracle.

The data (real SentencePiece models and corpora made by others) is not part
of the repository; it is expected at ``../shared/data`` next to the checkout.
Tests that need it are skipped, with that reason, where it is absent --
unless ``SUBTOK_REQUIRE_DATA=1`` (as CI sets it): then a missing folder
fails the run before any test starts.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
MODELS_DIR = DATA / "models"
CORPORA_DIR = DATA / "corpora"

needs_data = pytest.mark.skipif(
    not MODELS_DIR.is_dir(), reason="shared data not found at %s" % DATA)
needs_corpora = pytest.mark.skipif(
    not CORPORA_DIR.is_dir(), reason="shared corpora not found at %s" % CORPORA_DIR)


INTEROP_DIR = DATA / "interop"


def pytest_sessionstart(session) -> None:
    """With SUBTOK_REQUIRE_DATA=1, a missing data folder is an error, not
    a reason to skip most of the oracle tests."""
    if os.environ.get("SUBTOK_REQUIRE_DATA") == "1":
        missing = [str(p) for p in (MODELS_DIR, CORPORA_DIR, INTEROP_DIR) if not p.is_dir()]
        if missing:
            raise pytest.UsageError("SUBTOK_REQUIRE_DATA=1 but the shared data is missing: %s"
                                    % ", ".join(missing))


def model_paths() -> list[Path]:
    return sorted(MODELS_DIR.glob("*.model")) if MODELS_DIR.is_dir() else []


def corpus_paths() -> list[Path]:
    return sorted(CORPORA_DIR.glob("*.txt")) if CORPORA_DIR.is_dir() else []


def model_id(path: Path) -> str:
    return path.stem


def sample_lines(path: Path, count: int, seed: int = 0) -> list[bytes]:
    """``count`` lines of a corpus, chosen at random (seeded), raw bytes."""
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    rng = random.Random("%s:%d" % (path.name, seed))
    return rng.sample(lines, min(count, len(lines)))


# Lines meant to break things: whitespace, control characters, invalid
# UTF-8, compatibility forms, combining marks, emoji sequences, very long.
HOSTILE_LINES: list[bytes] = [s if isinstance(s, bytes) else s.encode("utf-8") for s in [
    "", " ", "   ", "\t", "\r", "  a  b  ", "\t x \r", "a\tb\tc", "trailing   ",
    "   leading", "a \u3000 b\u3000", "x\u00a0y\u2009z\u200bw", "line\u2028sep\u2029par",
    "\u0001\u0002\u0007\u001b[0m\u007f\u0085", "\ufeffbom at start", "cr at end\r",
    b"a\xffb", b"a\xe2\x96b", b"\xed\xa0\x80surrogate", b"\xc0\x80overlong", b"\xf4\x90\x80\x80big",
    b"\x80\x81\x82", b"\xe3\x81", "\ufffd replacement",
    "\u2581", "a\u2581", "\u2581\u2581x\u2581 \u2581", "  \u2581 x",
    "\uff21\uff22\u3000\uff43 \ufb01", "\uff8a\uff9f\uff71 \uff76\uff9e", "\u2460\u2474\u3392\u337f",
    "e\u0301 A\u0301 n\u0303 \u1100\u1161\u11a8 \u0915\u093c\u093f",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f44d\U0001f3fd \U0001f1ef\U0001f1f5",
    "Hello \U0001f600 world  123 4567", "12,345.67 3.14159 0x1F",
    "<s> </s> <unk> <pad> [INST] hi [/INST] <|image|> [CLS] x [SEP] [MASK]",
    "\u2581xxmaj xxbos xxunk \u2581xxup", "<0x41> <0xFF>",
    "-" * 200, "\u2026" * 50, "=" * 77 + " " + "_" * 33, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3067\u3059\u3002\u3000\u5168\u89d2\u30b9\u30da\u30fc\u30b9",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0401\u0436",
    "\uc548\ub155\ud558\uc138\uc694 \uc138\uacc4",
    "MiXeD CaSe \u00c9COLE stra\u00dfe \u0130stanbul \u03a3\u03bf\u03c6\u03af\u03b1",
    "tab\tand\u000bvertical\u000cform",
    ("The quick brown fox jumps over the lazy dog. " * 120).strip(),
    "-" * 3000 + " end",
]]


def special_lines(model_path: Path) -> list[bytes]:
    """A line made of the model's own control and user-defined piece strings."""
    from subtok.formats.sentencepiece import load_model
    from subtok.vocab import PieceType
    data = load_model(model_path)
    specials = [p for p, t in zip(data.pieces, data.types)
                if t in (PieceType.CONTROL, PieceType.USER_DEFINED, PieceType.UNKNOWN)
                and "\n" not in p][:40]
    joined = " ".join(specials)
    glued = "x".join(specials)
    return [joined.encode("utf-8"), glued.encode("utf-8")]


def run_subtok(*args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run the real command line (``python -m subtok``)."""
    proc = subprocess.run([sys.executable, "-m", "subtok", *args], input=input,
                          capture_output=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError("subtok %s failed (%d): %s" % (" ".join(args), proc.returncode,
                                                            proc.stderr.decode(errors="replace")))
    return proc


@pytest.fixture(scope="session")
def spm():
    """The oracle: sentencepiece 0.2.3."""
    import sentencepiece
    assert sentencepiece.__version__ == "0.2.3", sentencepiece.__version__
    return sentencepiece


@pytest.fixture(scope="module")
def dask_client():
    """A ``distributed.LocalCluster`` of 2 worker processes (the optional
    extra subtok[dask]) and its client, one per test module."""
    from subtok.dask import connected
    with connected("local:2") as client:
        yield client
