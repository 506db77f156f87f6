"""Exported tokenizer.json vs sentencepiece: run both, sort each difference
into the class that explains it. Shared by tests/test_hf_export.py and
scripts/export_mismatch_table.py (which writes the table of docs/export.md),
so the documented counts and the tested ones come from the same code.

A line's encodings differ for a documented reason when (checked in order):

* ``graphemes``: tokenizers' normalizer output differs from sentencepiece's
  normalization (subtok's normalizer, which equals sentencepiece's, without
  the user-defined matcher): the Precompiled charsmap applied per grapheme,
  or for an NFKC charsmap (exported between NFC steps) marks out of
  canonical order and the like (docs/export.md);
* ``user_defined``: sentencepiece's normalization with its user-defined
  matcher differs from the one without it (a raw user-defined piece);
* ``unknown_runs``: a word model, and merging runs of unknown ids in
  tokenizers' output gives sentencepiece's;
* ``control_text``: the normalized text holds the string of a control,
  unknown, byte or unused piece, and tokenizers' output has such a piece;
* ``float32_ties``: a unigram model, and both segmentations score the same
  to 1e-4 (tokenizers' is at least as good in float64).

Anything else is ``unexplained``.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from _interop import HOSTILE_TEXT, corpus_sample
from conftest import MODELS_DIR, corpus_paths
from subtok.formats.hf_export import sentencepiece_to_json
from subtok.formats.sentencepiece import load_model
from subtok.normalizers.charsmap import load_rules
from subtok.normalizers.sentencepiece import Normalizer
from subtok.vocab import PieceType

#: Lines per corpus in the sample (plus every hostile line).
PER_CORPUS = 100
CLASSES = ("graphemes", "user_defined", "unknown_runs", "control_text", "float32_ties")


def sample_texts() -> list[str]:
    """The seeded sample both sides encode (valid text: no lone surrogates)."""
    texts = corpus_sample(PER_CORPUS, seed=11) + HOSTILE_TEXT
    return [t.encode("utf-8", "replace").decode("utf-8") for t in texts]


def corpus_texts() -> list[str]:
    """Every line of every corpus, as :func:`sample_texts` reads them."""
    texts = []
    for path in corpus_paths():
        lines = path.read_bytes().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        texts += [line.decode("utf-8", "replace") for line in lines]
    return texts


def model_files() -> list[Path]:
    paths = sorted(MODELS_DIR.glob("*.model"))
    assert len(paths) >= 18, "shared models missing at %s" % MODELS_DIR
    return paths


class Checker:
    """One model: its export loaded in tokenizers, sentencepiece, and the
    facts the classes need."""

    def __init__(self, path: Path) -> None:
        import sentencepiece
        import tokenizers
        self.data = load_model(path)
        self.warnings: list[str] = []
        self.json = sentencepiece_to_json(self.data, warn=self.warnings.append)
        self.hf = tokenizers.Tokenizer.from_str(json.dumps(self.json))
        self.sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
        spec = self.data.normalizer
        rules = load_rules(spec.precompiled_charsmap)
        options = dict(add_dummy_prefix=spec.add_dummy_prefix,
                       remove_extra_whitespaces=spec.remove_extra_whitespaces,
                       escape_whitespaces=spec.escape_whitespaces)
        user = self.data.vocabulary().user_defined()
        self.plain = Normalizer(rules, **options).normalize
        self.with_user = Normalizer(rules, **options, user_defined_symbols=user).normalize
        kinds = (PieceType.CONTROL, PieceType.UNKNOWN, PieceType.BYTE, PieceType.UNUSED)
        self.special = {i for i, t in enumerate(self.data.types) if t in kinds}
        self.special_strings = [self.data.pieces[i] for i in self.special]
        self.scores = {i: s for i, (_, s) in enumerate(self.json["model"].get("vocab", []))} \
            if self.data.model_type == "unigram" else {}

    def classify(self, text: str, got: list[int], expected: list[int]) -> str:
        plain = self.plain(text)
        if self.hf.normalizer is not None and self.hf.normalizer.normalize_str(text) != plain:
            return "graphemes"
        if self.with_user(text) != plain:
            return "user_defined"
        unk = self.data.vocabulary().unk_index
        if self.data.model_type == "word" and _fuse(got, unk) == expected:
            return "unknown_runs"
        holds_special = any(s in plain for s in self.special_strings)
        emits_special = bool(self.special.intersection(got) - {unk}) or (
            unk in got and self.data.pieces[unk] in plain)
        if holds_special and emits_special:
            return "control_text"
        if self.data.model_type == "unigram" and abs(self._score(got) - self._score(expected)) < 1e-4:
            return "float32_ties"
        return "unexplained"

    def _score(self, ids: list[int]) -> float:
        lowest = min(s for s, t in zip(self.data.scores, self.data.types) if t == PieceType.NORMAL)
        return sum(lowest - 10 if i == self.data.vocabulary().unk_index else self.scores[i]
                   for i in ids)

    def run(self, texts: list[str],
            decode: bool = True) -> tuple[Counter, list[tuple[str, str]], list[str]]:
        """(mismatches per class, the unexplained ones, decode mismatches;
        none looked for unless ``decode``)."""
        counts: Counter = Counter()
        unexplained = []
        bad_decodes = []
        encodings = self.hf.encode_batch(texts, add_special_tokens=False)
        for text, encoding in zip(texts, encodings):
            expected = self.sp.encode(text)
            if encoding.ids != expected:
                kind = self.classify(text, encoding.ids, expected)
                counts[kind] += 1
                if kind == "unexplained":
                    unexplained.append((text, "%s != %s" % (encoding.tokens, expected)))
            if decode and \
                    self.hf.decode(expected, skip_special_tokens=False) != self.sp.decode(expected):
                bad_decodes.append(text)
        return counts, unexplained, bad_decodes


def _fuse(ids: list[int], unk: int) -> list[int]:
    """``ids`` with each run of unknown ids made one."""
    out: list[int] = []
    for i in ids:
        if not (i == unk and out and out[-1] == unk):
            out.append(i)
    return out


def table(results: dict[str, Counter], lines: int) -> str:
    """The markdown table of docs/export.md."""
    head = "| model | lines | " + " | ".join(CLASSES) + " | unexplained |"
    rows = [head, "|" + "---|" * (len(CLASSES) + 3)]
    for name, counts in results.items():
        rows.append("| %s | %d | %s | %d |" % (name, lines, " | ".join(str(counts[c]) for c in CLASSES),
                                              counts["unexplained"]))
    return "\n".join(rows) + "\n"


def parse_table(markdown: str, lines: int) -> dict[str, dict[str, int]]:
    """The counts docs/export.md states, per model and class, for a
    sample of ``lines`` lines."""
    out = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == len(CLASSES) + 3 and cells[1] == str(lines):
            out[cells[0]] = dict(zip(CLASSES + ("unexplained",), map(int, cells[2:])))
    return out
