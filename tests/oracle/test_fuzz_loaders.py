"""Fuzzing the loaders of tokenizer.json, tiktoken rank files, BERT's
vocab.txt and GPT-2's vocab.json + merges.txt (issue 20, item 5), a few
hundred seeded cases per run: the mutations of scripts/fuzz_interop.py on
the real files of ../shared/data/interop (cut to their first ids, so that a
case loads in well under a second; ``scripts/fuzz_models.py --target``
also fuzzes the whole files).

The property, with tokenizers 0.23.3 and tiktoken 0.14 as oracles: the
reference refuses the file <=> subtok refuses it with a SubtokError (or
refuses it on purpose, more strictly: fuzz_interop.STRICTER); where both
load, identical ids, tokens, offsets and decoded text; never another
exception. Every failure found is listed, not only the first.
"""

from __future__ import annotations

import random
import sys

import pytest

from conftest import DATA, ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import fuzz_interop  # noqa: E402
import fuzz_models  # noqa: E402

#: Cases per target in one run (seeded: the same cases every run).
CASES = {"tokenizer-json": 140, "tiktoken": 100, "vocab-txt": 30, "gpt2-files": 80}


@pytest.fixture(scope="module")
def corpus_lines() -> list[bytes]:
    assert (DATA / "interop").is_dir(), "shared data not found at %s" % DATA  # fail, never skip
    return fuzz_models.corpus_sample(random.Random(20), 100)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutated_files_load_and_encode_like_the_reference(corpus_lines, name):
    target = fuzz_interop.TARGETS[name]
    sources = target.load_sources(corpus_lines)
    small = [source for source in sources if not source.whole] or sources
    kinds, failures = {}, []
    for case in range(CASES[name]):
        rng = random.Random("%s:%d" % (name, case))
        source = rng.choice(small)
        files, what, hints = target.mutate(source, rng)
        outcome = target.compare(files, target.probe_texts(source, hints, rng, 16))
        kinds[outcome.kind] = kinds.get(outcome.kind, 0) + 1
        if outcome.kind not in fuzz_models.AGREED:
            failures.append((case, source.path.name, what, outcome.kind, outcome.detail[:300]))
    assert not failures, "\n".join(map(repr, failures))
    # Both outcomes that matter happen: the cases are not all refused.
    assert kinds.get("both-load", 0) >= CASES[name] // 5 and kinds.get("both-refuse", 0) > 0, kinds
