"""What the exported charsmap recipe costs tokenizers: load time of the
tokenizer.json and encode time, against the same export with the charsmap
as a lone ``Precompiled`` step (the export before issue 17 item 5).

    python bench/export_normalizer.py [--model NAME] [--lines N] [CORPUS ...]

Both tokenizers are timed in turns in one process (the best of several
rounds), so the ratio holds under a loaded machine better than either
time; the load average is printed with them. tokenizers runs on one
thread (``RAYON_NUM_THREADS=1`` is set here) so that both use the same.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from subtok.formats.hf_export import sentencepiece_to_json  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def _plain(exported: dict) -> dict:
    """The export with only the Precompiled step of the charsmap recipe."""
    plain = json.loads(json.dumps(exported))
    steps = plain["normalizer"]["normalizers"]
    at = next(i for i, step in enumerate(steps) if step["type"] == "Precompiled")
    plain["normalizer"]["normalizers"] = [steps[at]] + steps[at + 4:]
    assert [s["type"] for s in exported["normalizer"]["normalizers"][:at]] == \
        ["NFC", "Replace", "Replace"], "not the NFC recipe"
    return plain


def _best(function, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    import tokenizers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="atmt_en_fr_bpe16k")
    parser.add_argument("--lines", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("corpora", nargs="*", default=["en.txt", "ja.txt", "ko.txt", "hi.txt"])
    args = parser.parse_args()
    exported = sentencepiece_to_json(DATA / "models" / (args.model + ".model"), warn=lambda m: None)
    texts = {"recipe": json.dumps(exported), "plain": json.dumps(_plain(exported))}
    print("model %s, load average %s" % (args.model, " ".join("%.1f" % x for x in os.getloadavg())))
    load = {k: _best(lambda k=k: tokenizers.Tokenizer.from_str(texts[k]), args.rounds + 2)
            for k in texts}
    print("load: plain %.3f s, recipe %.3f s, ratio %.2f" % (load["plain"], load["recipe"],
                                                            load["recipe"] / load["plain"]))
    loaded = {k: tokenizers.Tokenizer.from_str(v) for k, v in texts.items()}
    for corpus in args.corpora:
        raw = (DATA / "corpora" / corpus).read_bytes().decode("utf-8", "replace")
        lines = raw.split("\n")[:args.lines]
        took = {k: _best(lambda k=k: [loaded[k].encode(line) for line in lines], args.rounds)
                for k in loaded}
        print("%s (%d lines): plain %.3f s, recipe %.3f s, ratio %.2f"
              % (corpus, len(lines), took["plain"], took["recipe"], took["recipe"] / took["plain"]))
    print("load average %s" % " ".join("%.1f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
