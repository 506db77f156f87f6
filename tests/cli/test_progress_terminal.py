"""Progress as a person sees it: the CLI run with stderr on a pseudo-terminal.

Bars appear only on a terminal, so these tests give the command one (a
pty of 120 columns) and read back what it drew: bars with totals (a
percentage, which tqdm shows only when it knows the total), a warning
printed mid-bar that stays whole on its own line, and exactly one summary
line on success.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

import pytest

from conftest import CORPORA_DIR as CORPORA, INTEROP_DIR as INTEROP, MODELS_DIR as MODELS, ROOT

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_terminal(args: list[str]) -> tuple[int, list[str]]:
    """Run ``python -m subtok ARGS`` with stderr on a pty; its exit code and
    the screen's text cut into the pieces tqdm draws (at ``\\r`` and ``\\n``)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "subtok", *args], cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    code = proc.wait()
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    return code, [piece.strip() for piece in re.split(r"[\r\n]", text) if piece.strip()]


def test_training_bars_have_totals_warnings_stay_whole_and_one_summary(tmp_path):
    corpus = CORPORA / "botchan.txt"
    assert corpus.is_file(), "shared data missing: %s" % corpus
    code, screen = run_on_terminal([
        "train", "--input", str(corpus), "--model_prefix", str(tmp_path / "m"),
        "--vocab_size", "600", "--model_type", "unigram", "--max_sentence_length", "70"])
    assert code == 0, screen
    assert any(re.match(r"reading:\s+\d+%\|", line) for line in screen), screen
    assert any(re.match(r"unigram seeds: \d\d:\d\d", line) for line in screen), screen
    assert any(re.match(r"unigram EM:\s+\d+%\|", line) for line in screen), screen
    lines = corpus.read_bytes().split(b"\n")
    number, length = next((n, len(line)) for n, line in enumerate(lines, 1) if len(line) > 70)
    warnings = [line for line in screen if "warning" in line]
    assert warnings == ["subtok: warning: %s:%d: found a line longer than "
                        "--max_sentence_length=70 bytes (%d); such lines are skipped."
                        % (corpus, number, length)]
    summaries = [line for line in screen if line.startswith("wrote ")]
    assert len(summaries) == 1, screen
    assert re.fullmatch(r"wrote %s and %s: 600 pieces, unigram, \d+\.\d s"
                        % (re.escape(str(tmp_path / "m.model")),
                           re.escape(str(tmp_path / "m.vocab"))), summaries[0])


def test_quiet_training_prints_nothing(tmp_path):
    code, screen = run_on_terminal([
        "train", "--input", str(CORPORA / "botchan.txt"), "--model_prefix",
        str(tmp_path / "m"), "--vocab_size", "300", "--model_type", "bpe", "--quiet",
        "--no-progress"])
    assert code == 0
    assert screen == []


def test_bpe_merges_bar_has_a_total(tmp_path):
    code, screen = run_on_terminal([
        "train", "--input", str(CORPORA / "botchan.txt"), "--model_prefix",
        str(tmp_path / "m"), "--vocab_size", "300", "--model_type", "bpe"])
    assert code == 0
    assert any(re.match(r"bpe merges:\s+\d+%\|", line) for line in screen), screen
    assert sum(line.startswith("wrote ") for line in screen) == 1


@pytest.mark.parametrize("model", [MODELS / "test_model.model",
                                   INTEROP / "gpt2.tokenizer.json",
                                   INTEROP / "cl100k_base.tiktoken"], ids=lambda p: p.suffix)
def test_encode_shows_a_byte_bar_on_a_terminal(tmp_path, model):
    """Every kind of model file encodes with the bar (SentencePiece,
    tokenizer.json, a tiktoken rank file)."""
    assert model.is_file(), "shared data missing: %s" % model
    code, screen = run_on_terminal([
        "encode", "--model", str(model), "--output",
        str(tmp_path / "out.txt"), str(CORPORA / "botchan.txt")])
    assert code == 0
    assert any(re.match(r"encoding:\s+\d+%\|.*/27\dk", line) for line in screen), screen
    assert (tmp_path / "out.txt").stat().st_size > 0


def test_encode_draws_no_bar_off_a_terminal(tmp_path):
    result = subprocess.run([sys.executable, "-m", "subtok", "encode", "--model",
                             str(MODELS / "test_model.model"), str(CORPORA / "en.txt")],
                            cwd=ROOT, capture_output=True, check=True)
    assert result.stderr == b""
