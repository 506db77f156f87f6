"""How often the exported normalizer of a model with an NFKC charsmap
normalizes differently from sentencepiece, with the NFC recipe of
subtok/formats/hf_export.py and with the charsmap as a lone Precompiled
step: on every key of the charsmap, and on seeded random strings of
letters, compatibility characters and combining marks in any order.

    python scripts/export_charsmap_fuzz.py [--model NAME] [--strings N]

Prints the counts docs/export.md gives. Whitespace rules are not part of
the comparison (both sides use the charsmap alone).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from subtok.formats.hf_export import sentencepiece_to_json  # noqa: E402
from subtok.formats.sentencepiece import load_model  # noqa: E402
from subtok.normalizers.charsmap import decode_charsmap, load_rules  # noqa: E402
from subtok.normalizers.sentencepiece import Normalizer  # noqa: E402

MODELS = ROOT.parent / "shared" / "data" / "models"
MARKS = [chr(c) for c in range(0x300, 0x370)] + ["\u3099", "\u309a", "\uff9e", "\uff9f"]
LETTERS = list("aeiouAEOnczs") + ["\u3042", "\u30ab", "\uff76", "\uff8a", "\u1100", "\u1161",
                                  "\u11a8", "\uac00", "\u3131", "\u03b1", "\u0418"]


def main() -> None:
    import tokenizers
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="atmt_en_fr_bpe16k")
    parser.add_argument("--strings", type=int, default=30000)
    args = parser.parse_args()
    data = load_model(MODELS / (args.model + ".model"))
    blob = data.normalizer.precompiled_charsmap
    steps = sentencepiece_to_json(data, warn=lambda m: None)["normalizer"]["normalizers"]
    at = next(i for i, step in enumerate(steps) if step["type"] == "Precompiled")
    recipe = tokenizers.normalizers.Sequence([_normalizer(step) for step in steps[:at + 4]])
    alone = tokenizers.normalizers.Precompiled(blob)
    sentencepiece = Normalizer(load_rules(blob), add_dummy_prefix=False,
                               remove_extra_whitespaces=False, escape_whitespaces=False).normalize
    rules = decode_charsmap(blob)
    keys = [key for key in rules if len(key) > 1]
    rng = random.Random(3)
    pool = LETTERS + rng.sample(sorted(k for k in rules if len(k) == 1), 40) + MARKS
    strings = ["".join(rng.choice(pool) for _ in range(rng.randint(1, 6)))
               for _ in range(args.strings)]
    for name, texts in (("charsmap keys", keys), ("random strings", strings)):
        expected = [sentencepiece(text) for text in texts]
        print("%s: %d, differ with the recipe %d, with Precompiled alone %d" % (
            name, len(texts),
            sum(recipe.normalize_str(t) != e for t, e in zip(texts, expected)),
            sum(alone.normalize_str(t) != e for t, e in zip(texts, expected))))


def _normalizer(step: dict):
    """The tokenizers object of one exported normalizer step."""
    import base64

    from tokenizers import Regex, normalizers
    if step["type"] == "NFC":
        return normalizers.NFC()
    if step["type"] == "Precompiled":
        return normalizers.Precompiled(base64.b64decode(step["precompiled_charsmap"]))
    pattern = step["pattern"]
    return normalizers.Replace(Regex(pattern["Regex"]) if "Regex" in pattern else pattern["String"],
                               step["content"])


if __name__ == "__main__":
    main()
