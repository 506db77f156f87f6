"""Benchmark: ``subtok encode`` with a tokenizer.json vs Hugging Face
``tokenizers`` 0.23.3 (not a test).

On ../shared/data/corpora/gutenberg_en.txt (35 MB), for each tokenizer
(bert_base_uncased, gpt2, llama2_chat by default):

  * tokenizers, one core: ``Tokenizer.encode`` line by line in this
    process, and ``encode_batch`` over all lines in a subprocess with
    RAYON_NUM_THREADS=1;
  * tokenizers, two cores: ``encode_batch`` with RAYON_NUM_THREADS=2;
  * ``subtok encode --output_format id`` (the real CLI, output to a file),
    with 1 and with 2 worker processes;

and the load time of olmo2's ~100k-token tokenizer.json (subtok's
``Tokenizer.from_file`` and tokenizers', best of 3 fresh processes).
tokenizers is given decoded lines in memory and writes nothing; subtok
reads the file, encodes and writes ids as text. The machine's load average
is printed before and after: on a shared machine the figures move with it.

    python bench/hf.py [--lines N] [--tokenizers bert_base_uncased,gpt2,llama2_chat]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import read_corpus, timed

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CORPUS = DATA / "corpora" / "gutenberg_en.txt"
INTEROP = DATA / "interop"
DEFAULT = ["bert_base_uncased", "gpt2", "llama2_chat"]
LOAD_FILE = INTEROP / "olmo2_dolma2_cl100k.tokenizer.json"

_BATCH = """
import sys, time, tokenizers
tok = tokenizers.Tokenizer.from_file(sys.argv[1])
lines = open(sys.argv[2], "rb").read().decode("utf-8", "replace").split("\\n")
if lines and lines[-1] == "":
    lines.pop()
start, cpu = time.perf_counter(), time.process_time()
tok.encode_batch(lines)
print(time.perf_counter() - start, time.process_time() - cpu)
"""

_LOAD = """
import sys, time
start = time.perf_counter()
if sys.argv[2] == "subtok":
    from subtok.tokenizer import Tokenizer
    Tokenizer.from_file(sys.argv[1])
else:
    import tokenizers
    tokenizers.Tokenizer.from_file(sys.argv[1])
print(time.perf_counter() - start)
"""


def loop_time(path: Path, lines: list[str]) -> tuple[float, float]:
    """(wall, cpu) of tokenizers' ``encode``, line by line, in this process."""
    import tokenizers
    tok = tokenizers.Tokenizer.from_file(str(path))
    start, cpu = time.perf_counter(), time.process_time()
    for line in lines:
        tok.encode(line)
    return time.perf_counter() - start, time.process_time() - cpu


def batch_time(path: Path, corpus: Path, threads: int) -> tuple[float, float]:
    """(wall, cpu) of tokenizers' ``encode_batch`` on ``threads`` threads
    (encoding only)."""
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="true")
    out = subprocess.run([sys.executable, "-c", _BATCH, str(path), str(corpus)], env=env,
                         check=True, capture_output=True, text=True).stdout
    wall, cpu = map(float, out.split())
    return wall, cpu


def subtok_time(path: Path, corpus: Path, threads: int) -> tuple[float, float]:
    """(wall, cpu of its process tree) of the real CLI, its input and model
    read once before. On a loaded machine the CPU times compare better."""
    corpus.read_bytes()
    path.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        cpu = _children_cpu()
        wall = timed([sys.executable, "-m", "subtok", "encode", "--model", str(path),
                      "--output_format=id", "--num_threads", str(threads), "--output",
                      str(Path(tmp) / "out.txt"), str(corpus)], "subtok encode")
        return wall, _children_cpu() - cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _shown(times: tuple[float, float]) -> str:
    return "%6.2fs (cpu %5.2fs)" % times


def load_time(path: Path, which: str) -> float:
    """Best of 3 fresh processes: import and load."""
    runs = [float(subprocess.run([sys.executable, "-c", _LOAD, str(path), which], check=True,
                                 capture_output=True, text=True, cwd=ROOT).stdout)
            for _ in range(3)]
    return min(runs)


def byte_compile() -> None:
    """As ``pip install`` leaves the package (see bench/encode.py)."""
    code = ("import compileall, os, subtok; "
            "compileall.compile_dir(os.path.dirname(subtok.__file__), quiet=1)")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=0, help="only the first N lines (0 = all)")
    parser.add_argument("--tokenizers", default=",".join(DEFAULT))
    args = parser.parse_args()
    os.chdir(ROOT)  # ``python -m subtok`` runs this checkout, wherever the bench was started
    corpus, raw = read_corpus(CORPUS, args.lines)
    lines = [line.decode("utf-8", "replace") for line in raw]
    print("corpus: %s (%d lines, %.1f MB); load average %s"
          % (CORPUS.name, len(raw), sum(map(len, raw)) / 1e6, os.getloadavg()), flush=True)
    byte_compile()
    for name in args.tokenizers.split(","):
        path = INTEROP / ("%s.tokenizer.json" % name)
        loop = loop_time(path, lines)
        batch1 = batch_time(path, corpus, 1)
        one = subtok_time(path, corpus, 1)
        batch2 = batch_time(path, corpus, 2)
        two = subtok_time(path, corpus, 2)
        print("%-18s 1 core: subtok %s | tokenizers loop %s (%.2fx) batch %s (%.2fx)"
              " || 2 cores: subtok %s | tokenizers batch %s (%.2fx)   [target <= 1.0x]"
              % (name, _shown(one), _shown(loop), one[0] / loop[0], _shown(batch1),
                 one[0] / batch1[0], _shown(two), _shown(batch2), two[0] / batch2[0]), flush=True)
        print("%-18s cpu ratios: 1 core vs loop %.2fx, vs batch %.2fx"
              % (name, one[1] / loop[1], one[1] / batch1[1]), flush=True)
    ours, theirs = load_time(LOAD_FILE, "subtok"), load_time(LOAD_FILE, "tokenizers")
    print("load %s: subtok %.3fs, tokenizers %.3fs   [target <= 0.5s]" % (LOAD_FILE.name, ours, theirs))
    print("load average after: %s" % (os.getloadavg(),))
    if corpus != CORPUS:
        os.unlink(corpus)


if __name__ == "__main__":
    main()
