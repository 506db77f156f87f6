"""Benchmark: loading model files in a fresh process (not a test).

For each file (by default every tokenizer.json in ../shared/data/interop
and the cl100k_base rank file), a new Python process imports subtok from
``--source`` and loads the file with ``subtok.formats.load_any`` (what
``subtok encode --model`` does), then reports:

  * wall: from just before the parent starts the process to the moment
    the loaded model is ready to encode (interpreter start-up, imports,
    reading, parsing, checks and building included; exit not included);
  * cpu: the process's user + system time up to that moment.

Both are the best of ``--runs`` processes. ``--compare DIR`` runs another
tree's ``subtok`` alternately with the same files, so both see the same
load. ``--instructions`` counts instructions of one whole process per file
with valgrind (independent of the machine's load; start-up and exit
included). The source trees are byte-compiled first, as ``pip install``
leaves a package. The load average is printed before and after.

    python bench/load.py [--source DIR] [--compare DIR] [--runs 5]
                         [--instructions] [FILE ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _measure import instruction_count

ROOT = Path(__file__).resolve().parents[1]
INTEROP = ROOT.parent / "shared" / "data" / "interop"

_LOAD = """
import sys, time, resource
sys.path.insert(0, sys.argv[1])
from subtok.formats import load_any
assert load_any.__module__ == "subtok.formats" and sys.modules["subtok"].__file__.startswith(sys.argv[1])
load_any(sys.argv[2])
ready = time.time()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(ready, usage.ru_utime + usage.ru_stime)
"""


def default_files() -> list[Path]:
    return sorted(INTEROP.glob("*.tokenizer.json")) + [INTEROP / "cl100k_base.tiktoken"]


def byte_compile(source: str) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(source) / "subtok")],
                   check=True, stdout=subprocess.DEVNULL)


def one_load(source: str, path: Path) -> tuple[float, float]:
    """(wall to ready, cpu to ready) of one fresh process."""
    start = time.time()
    out = subprocess.run([sys.executable, "-c", _LOAD, source, str(path)], check=True,
                         capture_output=True, text=True, cwd="/").stdout
    ready, cpu = map(float, out.split())
    return ready - start, cpu


def instructions(source: str, path: Path) -> int:
    return instruction_count(["-c", _LOAD, source, str(path)], cwd="/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--source", default=str(ROOT))
    parser.add_argument("--compare", default=None, help="another tree holding subtok/")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    files = args.files or default_files()
    trees = [str(Path(tree).resolve()) for tree in [args.source, args.compare] if tree]
    for tree in trees:
        byte_compile(tree)
    if args.instructions and shutil.which("valgrind") is None:
        sys.exit("bench: valgrind is not installed")
    print("load average before: %s" % (os.getloadavg(),), flush=True)
    for path in files:
        # Alternate the trees run by run: a change of load hits both.
        best = {tree: [float("inf"), float("inf")] for tree in trees}
        for _ in range(args.runs):
            for tree in trees:
                wall, cpu = one_load(tree, path)
                best[tree][0] = min(best[tree][0], wall)
                best[tree][1] = min(best[tree][1], cpu)
        shown = "   ".join("%s: wall %.3fs cpu %.3fs" % (Path(tree).name, *best[tree])
                           for tree in trees)
        if args.instructions:
            shown += "   instructions " + " / ".join(
                "%.3f G" % (instructions(tree, path) / 1e9) for tree in trees)
        print("%-40s %s" % (path.name, shown), flush=True)
    print("load average after: %s" % (os.getloadavg(),))


if __name__ == "__main__":
    main()
