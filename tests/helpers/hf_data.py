"""Shared by the tokenizer.json tests: the real files, sample lines, the
oracle (tokenizers 0.23.3).

The tests must fail, not skip, when ``../shared/data`` is missing: the
file list then holds one path that does not exist, and reading it fails.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

from conftest import CORPORA_DIR, DATA, HOSTILE_LINES

INTEROP_DIR = DATA / "interop"
MISSING = INTEROP_DIR / "missing: ../shared/data/interop not found"
LINES_PER_CORPUS = 300


def tokenizer_files() -> list[Path]:
    """Every tokenizer.json of the shared data (a missing one if none)."""
    found = sorted(INTEROP_DIR.glob("*.json")) if INTEROP_DIR.is_dir() else []
    return found or [MISSING]


def file_id(path: Path) -> str:
    return path.name.replace(".tokenizer.json", "")


def corpus_lines(count: int = LINES_PER_CORPUS, seed: int = 17) -> list[str]:
    """``count`` lines of every corpus, chosen with a fixed seed, decoded as
    the CLI decodes them."""
    corpora = sorted(CORPORA_DIR.glob("*.txt")) if CORPORA_DIR.is_dir() else []
    assert corpora, "no corpora at %s" % CORPORA_DIR
    out = []
    for corpus in corpora:
        lines = [line for line in corpus.read_bytes().split(b"\n") if line]
        rng = random.Random("%s:%d" % (corpus.name, seed))
        out += [line.decode("utf-8", "replace") for line in rng.sample(lines, min(count, len(lines)))]
    return out


#: Lines meant to break things, beyond conftest's (which hold invalid
#: UTF-8, shown here as the CLI decodes it).
EXTRA_HOSTILE = [
    "", " ", "  two  spaces  ", "\ttab\tseparated\t", "trailing ", " leading",
    "\\ud800 \\udfff lone surrogates, escaped", "\u2581", "\u2581\u2581 \u2581x \u2581",
    "e\u0301 e\u0301\u0323 \u1e69 \u0418\u0301 \u0130 \u03a3\u0391\u03a3 \u03c3\u03a3.",
    "\u1100\u1161\u11a8 \uac00\u11a8 \u3131\u314f",
    "\U0001f469\u200d\U0001f4bb \U0001f3f3\ufe0f\u200d\U0001f308 \U0001f970 \u2e50 \ue001",
    "\uff28\uff45\uff4c\uff4c\uff4f\u3000\uff11\uff12\uff13",
    "\x00nul\x00 \x1f\x7f \u200b\u200d \ufeff",
    "x\r\ny\r", "a" * 300, "ab " * 400,
    ("A 100 KB line of prose, with punctuation; numbers 12,345.67 and \u00e9t\u00e9. " * 1400)[:100_000],
]


def special_strings(path: Path) -> list[str]:
    """Lines that spell the file's added and post-processor tokens, alone,
    glued, and with spaces around."""
    data = json.loads(path.read_text(encoding="utf-8"))
    names = [t["content"] for t in data.get("added_tokens") or []][:60]
    processor = data.get("post_processor") or {}
    names += list((processor.get("special_tokens") or {}).keys())
    if not names:
        return []
    return [" ".join(names), "x".join(names), "  " + "  ".join(names[:10]) + "  ",
            "".join(names[:10]), "a%sb %s" % (names[0], names[-1])]


def hostile_lines(path: Path) -> list[str]:
    return ([line.decode("utf-8", "replace") for line in HOSTILE_LINES] + EXTRA_HOSTILE
            + special_strings(path))


@functools.lru_cache(maxsize=None)
def oracle(path: Path):
    """``tokenizers.Tokenizer`` for a file (the test-only oracle), loaded
    once per test session."""
    import tokenizers
    assert tokenizers.__version__ == "0.23.3", tokenizers.__version__
    return tokenizers.Tokenizer.from_file(str(path))


@functools.lru_cache(maxsize=None)
def ours(path: Path):
    """subtok's Tokenizer for a file, loaded once per test session (its
    word caches warm up across tests; no test changes it)."""
    from subtok.tokenizer import Tokenizer
    return Tokenizer.from_file(path)
