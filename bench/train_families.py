"""Benchmark: WordPiece and byte-level BPE training against Hugging Face tokenizers (not a test).

Three parts, each printed as a table (the figures go to docs/performance.md):

* parity - ``--wordpiece_criterion=frequency`` against
  ``BertWordPieceTokenizer.train`` (vocab 8000 on the first 6 MB of
  gutenberg_en.txt, vocab 4000 on de+fr+ru; lowercase on and off), run twice
  on the tokenizers side to show how much its own ids vary, and compared
  exactly given the order in which a run numbered the ``##c`` forms;
  ``--ties=tokenizers`` against ``ByteLevelBPETokenizer.train`` on all of
  gutenberg_en.txt (vocab 8000 and 32000): same vocabulary, same merges?
* quality - on held-out lines (the last 10% of each corpus; trained on the
  rest): tokens per word of likelihood WordPiece against tokenizers'
  WordPiece at vocab 8000/16000/32000 (en = gutenberg, de, ru, ja =
  ja + wagahaiwa_nekodearu, zh); bytes per token of byte-level BPE (subtok,
  tokenizers) at 8000/32000 and of cl100k_base on gutenberg;
* speed - wall time and peak memory (the process tree's Pss, see
  bench/_measure.py) of ``subtok train`` and of tokenizers, both on
  ``--threads`` cores (RAYON_NUM_THREADS for tokenizers), on all of
  gutenberg_en.txt at vocab 32000.

    python bench/train_families.py [--parts speed,parity,quality|byte_quality] [--threads 2]
                                   [--english_bytes N] [--vocab_sizes 8000,16000,32000]
                                   [--byte_vocab_sizes 8000,32000]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import measured

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CORPORA = DATA / "corpora"
GUTENBERG = CORPORA / "gutenberg_en.txt"
CL100K = DATA / "interop" / "cl100k_base.tiktoken"

#: tokenizers' trainers, run in a child process:
#: KIND FILES(,) PREFIX VOCAB LOWERCASE [LIMIT_ALPHABET].
HF_CODE = """
import json, sys
from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer
kind, files, prefix, vocab_size, lowercase = sys.argv[1:6]
extra = {"limit_alphabet": int(sys.argv[6])} if len(sys.argv) > 6 else {}
if kind == "wordpiece":
    tok = BertWordPieceTokenizer(lowercase=lowercase == "1")
else:
    tok = ByteLevelBPETokenizer()
tok.train(files.split(","), vocab_size=int(vocab_size), show_progress=False, **extra)
tok._tokenizer.save(prefix + ".json")
"""


def load() -> str:
    return " ".join("%.2f" % x for x in os.getloadavg())


def run_hf(kind: str, files: list[Path], prefix: Path, vocab_size: int, lowercase: bool = True,
           threads: int = 2, limit_alphabet: int | None = None) -> tuple[float, float]:
    # env(1) execs Python in the same process: the measured tree is the same.
    cmd = ["env", "RAYON_NUM_THREADS=%d" % threads, sys.executable, "-c", HF_CODE, kind,
           ",".join(map(str, files)), str(prefix), str(vocab_size), "1" if lowercase else "0"]
    if limit_alphabet is not None:
        cmd.append(str(limit_alphabet))
    return measured(cmd, "tokenizers " + kind)


def run_subtok(files: list[Path], prefix: Path, model_type: str, vocab_size: int, threads: int,
               *flags: str) -> tuple[float, float]:
    # (the checkout this script belongs to, whatever the current directory)
    cmd = ["env", "PYTHONPATH=%s" % ROOT, sys.executable, "-m", "subtok", "train",
           "--input", ",".join(map(str, files)),
           "--model_prefix", str(prefix), "--model_type", model_type,
           "--vocab_size", str(vocab_size), "--num_threads", str(threads), "--quiet", *flags]
    return measured(cmd, "subtok train " + model_type)


def json_vocab(path: Path) -> list[str]:
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]


def head(path: Path, size: int, out: Path) -> Path:
    data = path.read_bytes()[:size]
    out.write_bytes(data[:data.rindex(b"\n") + 1])
    return out


def split_held_out(paths: list[Path], tmp: Path, name: str) -> tuple[Path, list[str]]:
    """(file with the first 90% of the lines of every path, the last 10%)."""
    train, held = [], []
    for path in paths:
        lines = path.read_bytes().decode("utf-8").split("\n")
        if lines[-1] == "":
            lines.pop()
        cut = len(lines) - len(lines) // 10
        train += lines[:cut]
        held += lines[cut:]
    out = tmp / (name + ".train.txt")
    out.write_text("".join(line + "\n" for line in train), encoding="utf-8")
    return out, held


# ----------------------------------------------------------------------------
# parity


def wordpiece_parity(tmp: Path, threads: int) -> None:
    sys.path.insert(0, str(ROOT))
    from subtok.models.wordpiece.bert_words import WordCounter
    from subtok.models.wordpiece.trainer import (DEFAULT_SPECIAL_TOKENS, bert_normalizer, count_words,
                                                 frequency_vocab)
    from subtok.progress import Progress
    from subtok.training.spec import TrainerOptions
    cases = [("gutenberg 6 MB", [head(GUTENBERG, 6_000_000, tmp / "g6.txt")], 8000),
             ("de+fr+ru", [CORPORA / n for n in ("de.txt", "fr.txt", "ru.txt")], 4000)]
    print("\n## WordPiece, --wordpiece_criterion=frequency vs BertWordPieceTokenizer.train")
    print("| corpus | vocab | lowercase | tokenizers run 1 vs run 2 | subtok (own ## order) vs run 1 "
          "| subtok given run 1's ## order | given run 2's |")
    print("|---|---:|---|---|---|---|---|")
    for name, files, vocab_size in cases:
        for lowercase in (True, False):
            runs = []
            for k in (1, 2):
                run_hf("wordpiece", files, tmp / ("hf%d" % k), vocab_size, lowercase, threads)
                runs.append(json_vocab(tmp / ("hf%d.json" % k)))
            run_subtok(files, tmp / "st", "wordpiece", vocab_size, threads,
                       "--wordpiece_criterion=frequency", "--lowercase=%s" % lowercase)
            ours = (tmp / "st.txt").read_text(encoding="utf-8").split("\n")[:-1]
            opts = TrainerOptions.from_kwargs(input=[str(f) for f in files], model_type="wordpiece",
                                              vocab_size=vocab_size, lowercase=lowercase,
                                              num_threads=threads)
            words = count_words(opts, Progress(False), None, WordCounter(bert_normalizer(opts)))
            exact = []
            for run in runs:
                order = [t for t in run if t.startswith("##") and len(t) == 3]
                tokens, _ = frequency_vocab(words, opts, list(DEFAULT_SPECIAL_TOKENS),
                                            continuation_order=order)
                exact.append("identical" if tokens == run else "DIFFERENT")
            print("| %s | %d | %s | %s | %s | %s | %s |" % (
                name, vocab_size, lowercase, compare(runs[0], runs[1]), compare(runs[0], ours),
                exact[0], exact[1]), flush=True)


def compare(a: list[str], b: list[str]) -> str:
    if a == b:
        return "identical"
    ids = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
    return "%d ids differ, %d tokens not shared" % (ids, len(set(a) ^ set(b)))


def bytelevel_parity(tmp: Path, threads: int, vocab_sizes: list[int]) -> None:
    print("\n## byte-level BPE, --ties=tokenizers vs ByteLevelBPETokenizer.train (all of "
          "gutenberg_en.txt, %.1f MB)" % (GUTENBERG.stat().st_size / 1e6))
    print("| vocab | vocabulary (ids) | merges (order) | tokenizers | subtok |")
    print("|---:|---|---|---|---|")
    for vocab_size in vocab_sizes:
        hf_time, hf_mem = run_hf("bpe", [GUTENBERG], tmp / "hfb", vocab_size, threads=threads)
        st_time, st_mem = run_subtok([GUTENBERG], tmp / "stb", "byte_bpe", vocab_size, threads,
                                     "--ties=tokenizers")
        ref = json.loads((tmp / "hfb.json").read_text(encoding="utf-8"))["model"]
        ours = json.loads((tmp / "stb.json").read_text(encoding="utf-8"))["model"]
        print("| %d | %s | %s | %.1f s, %.0f MB | %.1f s, %.0f MB |" % (
            vocab_size, "identical" if ref["vocab"] == ours["vocab"] else "DIFFERENT",
            "identical (%d)" % len(ref["merges"]) if ref["merges"] == ours["merges"] else "DIFFERENT",
            hf_time, hf_mem, st_time, st_mem), flush=True)


# ----------------------------------------------------------------------------
# quality


def wordpiece_quality(tmp: Path, threads: int, vocab_sizes: list[int], english_bytes: int) -> None:
    from tokenizers import Tokenizer
    english = [GUTENBERG] if not english_bytes else [head(GUTENBERG, english_bytes, tmp / "en.txt")]
    japanese = [CORPORA / "ja.txt", CORPORA / "wagahaiwa_nekodearu.txt"]
    # (corpus, files, limit_alphabet: None = the default 1000, which leaves
    # many CJK characters out; 100000 keeps them all)
    corpora = [("en (gutenberg)", english, None), ("de", [CORPORA / "de.txt"], None),
               ("ru", [CORPORA / "ru.txt"], None), ("ja (ja + wagahaiwa)", japanese, None),
               ("ja, all characters", japanese, 100000), ("zh", [CORPORA / "zh.txt"], None),
               ("zh, all characters", [CORPORA / "zh.txt"], 100000)]
    print("\n## WordPiece quality: tokens per word on held-out lines (last 10%), "
          "likelihood (subtok) vs frequency (tokenizers)")
    print("| corpus | vocab asked | tokenizers: size, tokens/word, [UNK] % | subtok likelihood: size, "
          "tokens/word, [UNK] % |")
    print("|---|---:|---|---|")
    for name, files, limit in corpora:
        train, held = split_held_out(files, tmp, "wpq")
        for vocab_size in vocab_sizes:
            run_hf("wordpiece", [train], tmp / "hfq", vocab_size, True, threads, limit)
            run_subtok([train], tmp / "stq", "wordpiece", vocab_size, threads,
                       *(["--limit_alphabet=%d" % limit] if limit else []))
            cells = []
            for prefix in ("hfq", "stq"):
                tok = Tokenizer.from_file(str(tmp / (prefix + ".json")))
                cells.append(wordpiece_figures(tok, held))
            print("| %s | %d | %s | %s |" % (name, vocab_size, cells[0], cells[1]), flush=True)


def wordpiece_figures(tok, lines: list[str]) -> str:
    words = tokens = unknown = 0
    unk = tok.token_to_id("[UNK]")
    for encoding, line in zip(tok.encode_batch(lines, add_special_tokens=False), lines):
        words += len(tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(line)))
        tokens += len(encoding.ids)
        unknown += encoding.ids.count(unk)
    return "%d, %.3f, %.2f" % (tok.get_vocab_size(), tokens / words, 100.0 * unknown / tokens)


def bytelevel_quality(tmp: Path, threads: int, vocab_sizes: list[int]) -> None:
    from tokenizers import Tokenizer
    train, held = split_held_out([GUTENBERG], tmp, "blq")
    held = [line + "\n" for line in held]
    size = sum(len(line.encode("utf-8")) for line in held)
    print("\n## byte-level BPE quality: bytes per token on held-out gutenberg lines (last 10%%, "
          "%.1f MB)" % (size / 1e6))
    print("| tokenizer | vocab | bytes/token |")
    print("|---|---:|---:|")
    for vocab_size in vocab_sizes:
        run_hf("bpe", [train], tmp / "hfbq", vocab_size, threads=threads)
        hf = Tokenizer.from_file(str(tmp / "hfbq.json"))
        count = sum(len(e.ids) for e in hf.encode_batch(held))
        print("| tokenizers ByteLevelBPETokenizer | %d | %.3f |" % (vocab_size, size / count))
        run_subtok([train], tmp / "stbq", "byte_bpe", vocab_size, threads)
        enc = tiktoken_from(tmp / "stbq.tiktoken", "gpt2")
        count = sum(map(len, enc.encode_ordinary_batch(held)))
        print("| subtok byte_bpe (gpt2 pattern) | %d | %.3f |" % (vocab_size, size / count), flush=True)
    enc = tiktoken_from(CL100K, "cl100k")
    count = sum(map(len, enc.encode_ordinary_batch(held)))
    print("| cl100k_base | %d | %.3f |" % (enc.n_vocab, size / count))


def real_tiktoken():
    """The tiktoken package: this folder's own bench/tiktoken.py (first on
    sys.path when this script runs) would shadow it."""
    here = Path(__file__).resolve().parent
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    try:
        import tiktoken
    finally:
        sys.path[:] = saved
    return tiktoken


def tiktoken_from(path: Path, pattern: str):
    tiktoken = real_tiktoken()
    sys.path.insert(0, str(ROOT))
    from subtok.pretokenizers.tiktoken_patterns import pattern_for
    ranks = {}
    for line in path.read_bytes().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(name=path.stem, pat_str=pattern_for(pattern),
                             mergeable_ranks=ranks, special_tokens={})


# ----------------------------------------------------------------------------
# speed


def speed(tmp: Path, threads: int) -> None:
    print("\n## speed and peak memory: all of gutenberg_en.txt (%.1f MB), vocab 32000, %d cores"
          % (GUTENBERG.stat().st_size / 1e6, threads))
    print("| trainer | tokenizers | subtok | time ratio (target <= 3) | memory ratio (target <= 1) "
          "| load before/after |")
    print("|---|---|---|---:|---:|---|")
    runs = [("byte-level BPE", "bpe", "byte_bpe", []),
            ("WordPiece, frequency", "wordpiece", "wordpiece", ["--wordpiece_criterion=frequency"]),
            ("WordPiece, likelihood", "wordpiece", "wordpiece", ["--wordpiece_criterion=likelihood"])]
    baseline = {}
    for name, hf_kind, model_type, flags in runs:
        before = load()
        if hf_kind not in baseline:
            baseline[hf_kind] = run_hf(hf_kind, [GUTENBERG], tmp / "hfs", 32000, True, threads)
        hf_time, hf_mem = baseline[hf_kind]
        st_time, st_mem = run_subtok([GUTENBERG], tmp / "sts", model_type, 32000, threads, *flags)
        print("| %s | %.1f s, %.0f MB | %.1f s, %.0f MB | %.2f | %.2f | %s / %s |" % (
            name, hf_time, hf_mem, st_time, st_mem, st_time / hf_time, st_mem / hf_mem,
            before, load()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="parity,quality,speed")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--english_bytes", type=int, default=0,
                        help="train the English quality runs on the first N bytes (0 = all)")
    parser.add_argument("--vocab_sizes", default="8000,16000,32000")
    parser.add_argument("--byte_vocab_sizes", default="8000,32000",
                        help="vocabularies of the byte-level BPE quality runs")
    args = parser.parse_args()
    if not GUTENBERG.exists():
        sys.exit("bench: %s not found" % GUTENBERG)
    parts = args.parts.split(",")
    sizes = [int(v) for v in args.vocab_sizes.split(",")]
    print("load %s; subtok at %s (%s)" % (load(), ROOT, subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
        text=True).stdout.strip()))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # Speed first: the parts after it load tokenizers and subtok into
        # this process, and a child forked from a large process starts with
        # its pages (ru_maxrss would count them).
        if "speed" in parts:
            speed(tmp, args.threads)
        if "parity" in parts:
            wordpiece_parity(tmp, args.threads)
            bytelevel_parity(tmp, args.threads, [8000, 32000])
        if "quality" in parts:
            wordpiece_quality(tmp, args.threads, sizes, args.english_bytes)
        if "quality" in parts or "byte_quality" in parts:
            bytelevel_quality(tmp, args.threads, [int(v) for v in args.byte_vocab_sizes.split(",")])


if __name__ == "__main__":
    main()
