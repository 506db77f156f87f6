"""Shared by the interop tests (tiktoken, vocab.txt, GPT-2 files, export):
where the real files are, the oracles built offline, and hostile text.

The data is required: a test that uses it fails (never skips) when
``../shared/data`` is missing, so a missing checkout cannot pass as green.
"""

from __future__ import annotations

import random
from pathlib import Path

from conftest import CORPORA_DIR, DATA, HOSTILE_LINES, corpus_paths, sample_lines

INTEROP = DATA / "interop"
CL100K_FILE = INTEROP / "cl100k_base.tiktoken"

# Written here from tiktoken_ext/openai_public.py, not taken from subtok:
# the oracle must not share a mistake with the code under test.
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
                  r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
CL100K_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


def require(path: Path) -> Path:
    """``path``, which must exist: the test fails, naming it, if not."""
    assert path.exists(), "shared test data missing: %s" % path
    return path


def read_ranks_plainly(path: Path) -> dict[bytes, int]:
    """A rank file read the way tiktoken/load.py reads it."""
    import base64
    ranks = {}
    for line in require(path).read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def tiktoken_cl100k():
    """tiktoken's own cl100k_base, built from the local rank file."""
    import tiktoken
    return tiktoken.Encoding("cl100k_base", pat_str=CL100K_PATTERN,
                             mergeable_ranks=read_ranks_plainly(CL100K_FILE),
                             special_tokens=CL100K_SPECIALS)


def corpus_sample(per_corpus: int, seed: int = 0) -> list[str]:
    """A seeded sample of lines of every corpus, as text."""
    assert require(CORPORA_DIR).is_dir()
    paths = corpus_paths()
    assert len(paths) >= 10, paths
    return [line.decode("utf-8", "surrogateescape")
            for path in paths for line in sample_lines(path, per_corpus, seed)]


def long_lines(seed: int = 0) -> list[str]:
    """100 KB lines: one chunk that is a single run, and mixed runs."""
    rng = random.Random(seed)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(100_000))
    words = " ".join("".join(rng.choice("etaoinshrdlu") for _ in range(rng.randint(1, 12)))
                     for _ in range(15_000))
    return ["-" * 100_000, "a" * 100_000, letters, "1" * 100_000, " " * 100_000,
            "\u00e9" * 50_000, "\U0001f600" * 25_000, words[:100_000]]


#: Text meant to break tokenizers: control characters, lone surrogates,
#: combining marks, emoji ZWJ sequences, special-token spellings, ...
HOSTILE_TEXT: list[str] = [line.decode("utf-8", "surrogateescape") for line in HOSTILE_LINES] + [
    "<|endoftext|>", "a<|endoftext|>b", "<|endoftext|><|endoftext|>", "<|endofprompt|> x <|fim_prefix|>",
    "<|endoftext", "<|endoftext|", "text <|endoftext|> and <|im_start|>",
    "lone \ud800 high", "lone \udfff low", "pair \ud83d\ude00 made", "\udc80\udcff escaped bytes",
    "e\u0301\u0301\u0301 a\u0308 \u0915\u094d\u0937 \u1100\u1161",
    "\U0001f469\u200d\U0001f4bb \U0001f3f3\ufe0f\u200d\U0001f308 \U0001f1fa\U0001f1f8\U0001f1e6",
    "don't I'LL we've THEY'RE 'S 's", "x\r\ny\r\n", "\r\n\r\n", "\n\n", " \n x \n",
    "a\tb  c   d\u00a0e\u3000f", "   ", "1234567890 12345 3.14159", "\u0000\u0001 nul",
    "\x1c\x1d\x1e\x1f separators", "trailing space ", " leading space", "\u2028\u2029",
]


def tiktoken_sample() -> list[str]:
    """The text the tiktoken tests encode: corpus lines, hostile text and
    100 KB lines."""
    return corpus_sample(200) + HOSTILE_TEXT + long_lines()
