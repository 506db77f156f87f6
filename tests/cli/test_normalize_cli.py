"""``subtok normalize`` equals spm_normalize as sentencepiece defines it.

spm_normalize (``spm_normalize_main.cc``) normalizes each input line with
the NormalizerSpec of ``--model`` / ``--normalization_rule_tsv`` /
``--normalization_rule_name``, with the dummy prefix off, whitespace not
escaped and ``--remove_extra_whitespaces`` (default on); the oracle is
sentencepiece 0.2.3's ``SentencePieceNormalizer`` with those three flags.
Checked: every corpus under every built-in rule, every shared model's
charsmap, ``--decompile`` against the oracle's ``Decompile()`` written as
``Builder::SaveCharsMap`` writes it, and the command itself. A missing
data folder fails these tests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sentencepiece

from subtok.cli.normalize import decompiled_tsv, normalize_block, normalizer_spec
from subtok.formats.sentencepiece import load_model
from subtok.normalizers.sentencepiece import Normalizer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
CORPORA = sorted((DATA / "corpora").glob("*.txt"))
MODELS = sorted((DATA / "models").glob("*.model"))
RULES = ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"]


def distinct_charsmaps() -> list[Path]:
    """One model per distinct NormalizerSpec (models share their tables):
    every shared model's charsmap and flags, each checked once."""
    seen: dict[tuple, Path] = {}
    for path in MODELS:
        spec = load_model(path).normalizer
        seen.setdefault((spec.precompiled_charsmap, spec.add_dummy_prefix,
                         spec.remove_extra_whitespaces, spec.escape_whitespaces), path)
    return sorted(seen.values())


CHARSMAP_MODELS = distinct_charsmaps()


def test_the_data_is_there():
    assert len(CORPORA) >= 15 and len(MODELS) >= 18, "shared data missing under %s" % DATA


def corpus_lines(path: Path) -> list[bytes]:
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def oracle_output(normalizer, lines: list[bytes]) -> bytes:
    return b"".join(normalizer.normalize(line) + b"\n" for line in lines)


def ours_output(spec, lines: list[bytes]) -> bytes:
    return normalize_block(Normalizer.from_spec(spec), b"\n".join(lines))


def mixed_lines() -> list[bytes]:
    """200 lines of every corpus (for the per-model checks)."""
    return [line for path in CORPORA for line in corpus_lines(path)[:200]]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("corpus", CORPORA, ids=lambda p: p.stem)
def test_every_corpus_under_every_rule(corpus, rule):
    lines = corpus_lines(corpus)
    oracle = sentencepiece.SentencePieceNormalizer(
        rule_name=rule, add_dummy_prefix=False, escape_whitespaces=False,
        remove_extra_whitespaces=True)
    assert ours_output(normalizer_spec(rule_name=rule), lines) == oracle_output(oracle, lines)


@pytest.mark.parametrize("model", CHARSMAP_MODELS, ids=lambda p: p.stem)
def test_every_models_charsmap(model):
    lines = mixed_lines()
    for remove in (True, False):
        oracle = sentencepiece.SentencePieceNormalizer(
            model_file=str(model), add_dummy_prefix=False, escape_whitespaces=False,
            remove_extra_whitespaces=remove)
        spec = normalizer_spec(model=str(model), remove_extra_whitespaces=remove)
        assert ours_output(spec, lines) == oracle_output(oracle, lines), (model.stem, remove)
    # --use_internal_normalization: the model's spec as it is.
    internal = sentencepiece.SentencePieceNormalizer(model_file=str(model))
    assert (ours_output(normalizer_spec(model=str(model), use_internal=True), lines)
            == oracle_output(internal, lines))


def save_chars_map(pairs) -> str:
    """``Builder::SaveCharsMap``'s text for the oracle's decompiled pairs."""
    out = []
    for source, target in pairs:
        line = "%s\t%s\t# %s => %s" % (" ".join("%X" % ord(c) for c in source),
                                        " ".join("%X" % ord(c) for c in target), source, target)
        for char in "\b\v\f\n\r":
            line = line.replace(char, " ")
        out.append(line + "\n")
    return "".join(out)


@pytest.mark.parametrize("model", CHARSMAP_MODELS, ids=lambda p: p.stem)
def test_decompile_every_models_charsmap(model):
    blob = load_model(model).normalizer.precompiled_charsmap
    if not blob:  # no rules: both refuse
        with pytest.raises(RuntimeError):
            sentencepiece.SentencePieceNormalizer(model_file=str(model)).decompile()
        with pytest.raises(RuntimeError):
            decompiled_tsv(blob)
        return
    pairs = sentencepiece.SentencePieceNormalizer(model_file=str(model)).decompile()
    assert decompiled_tsv(blob) == save_chars_map(pairs)


def run(*args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "subtok", "normalize", *args], cwd=ROOT,
                          input=stdin, capture_output=True)


def test_the_command_with_files_stdin_and_output(tmp_path):
    corpus = DATA / "corpora" / "de.txt"
    model = DATA / "models" / "albert_base_v2_spiece.model"
    oracle = sentencepiece.SentencePieceNormalizer(
        model_file=str(model), add_dummy_prefix=False, escape_whitespaces=False,
        remove_extra_whitespaces=True)
    expected = oracle_output(oracle, corpus_lines(corpus))
    assert run("--model", str(model), str(corpus)).stdout == expected
    assert run("--model=%s" % model, "--input=%s" % corpus).stdout == expected
    assert run("--model", str(model), stdin=corpus.read_bytes()).stdout == expected
    out = tmp_path / "out.txt"
    done = run("--model", str(model), "--output", str(out), str(corpus))
    assert done.returncode == 0 and done.stdout == b"" and out.read_bytes() == expected


def test_the_command_rule_tsv_and_flags(tmp_path):
    rules = tmp_path / "rules.tsv"
    rules.write_text("41\t61\n42 43\t78 79\n", encoding="utf-8")
    text = "  ABC  A B \n"
    oracle = sentencepiece.SentencePieceNormalizer(
        rule_tsv=str(rules), add_dummy_prefix=False, escape_whitespaces=False,
        remove_extra_whitespaces=False)
    done = run("--normalization_rule_tsv", str(rules), "--remove_extra_whitespaces=false",
               stdin=text.encode())
    assert done.stdout == oracle.normalize(text[:-1]).encode() + b"\n"
    internal = run("--normalization_rule_name=nfkc", "--use_internal_normalization",
                   stdin=b"  x  y\n")
    assert internal.stdout.decode() == sentencepiece.SentencePieceNormalizer(
        rule_name="nfkc").normalize("  x  y") + "\n"


def test_the_command_decompiles(tmp_path):
    done = run("--normalization_rule_name=nmt_nfkc", "--decompile")
    assert done.returncode == 0
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "1\t\t# \x01 => "
    assert any(line.startswith("FF21\t41\t# ") for line in lines)


def test_the_command_errors_are_one_line():
    for args in ([], ["--normalization_rule_name=nope"], ["--model=/nonexistent.model"],
                 ["--normalization_rule_name=identity", "--decompile"],
                 ["--normalization_rule_name=nfkc", "/nonexistent.txt"]):
        done = run(*args)
        assert done.returncode != 0, args
        assert done.stdout == b""
        assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr, (args, done.stderr)
