"""The command line as a sentencepiece user meets it (issue 21).

* every flag of spm_encode, spm_decode, spm_export_vocab, spm_normalize
  and spm_train 0.2.3 is accepted under its own name; deprecated ones warn
  once and are ignored, unsupported ones are refused with the reason;
* the top-level help lists each command once, and bare ``subtok`` prints it;
* SIGTERM and SIGHUP leave no temporary file, then the process dies by
  that signal (returncode -15 / -1 here, 143 / 129 in a shell), as
  spm_encode does on an uncaught signal; SIGINT exits 130.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from sentencepiece import sentencepiece_model_pb2

from conftest import DATA, ROOT


MODEL = DATA / "models" / "test_model.model"
CORPUS = DATA / "corpora" / "botchan.txt"


def subtok(*args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "subtok", *map(str, args)], cwd=ROOT,
                          input=stdin, capture_output=True)


def test_the_data_is_there():
    assert MODEL.is_file() and CORPUS.is_file(), "shared data missing under %s" % DATA


def test_spm_encode_flags_under_their_names(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\u2581the\t5\n", encoding="utf-8")
    done = subtok("encode", "--model=%s" % MODEL, "--output_format=sample_id", "--input=%s" % CORPUS,
                  "--output=%s" % (tmp_path / "out"), "--extra_options=bos:eos",
                  "--nbest_size=5", "--alpha=0.3", "--random_seed=3",
                  "--vocabulary=%s" % vocab, "--vocabulary_threshold=1",
                  "--generate_vocabulary=false", "--minloglevel=1")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").stat().st_size > 0


def test_spm_decode_flags_and_proto_output():
    ids = subtok("encode", "--model", MODEL, "--output_format=id", stdin=b"hello world\n").stdout
    done = subtok("decode", "--model=%s" % MODEL, "--input_format=id", "--output_format=string",
                  "--extra_options=reverse", "--minloglevel=1", stdin=ids)
    import sentencepiece
    reversed_ids = [int(i) for i in ids.split()][::-1]  # --extra_options=reverse
    expected = sentencepiece.SentencePieceProcessor(model_file=str(MODEL)).decode(reversed_ids)
    assert done.returncode == 0 and done.stdout == expected.encode() + b"\n", done
    proto = subtok("decode", "--model=%s" % MODEL, "--input_format=id",
                   "--output_format=proto", stdin=ids)
    assert proto.returncode == 0 and proto.stdout == b""  # spm_decode prints nothing
    bad = subtok("decode", "--model=%s" % MODEL, "--input_format=id",
                 "--output_format=proto", stdin=b"99999999\n")
    assert bad.returncode != 0 and b"out of range" in bad.stderr


def test_spm_export_vocab_flags():
    done = subtok("export-vocab", "--model=%s" % MODEL, "--output_format=syms", "--minloglevel=1")
    assert done.returncode == 0 and done.stdout.startswith(b"<unk>\t0\n")
    spelled = subtok("export_vocab", "--model=%s" % MODEL)
    assert spelled.returncode == 0


def test_spm_normalize_flags(tmp_path):
    done = subtok("normalize", "--model=%s" % MODEL, "--use_internal_normalization=false",
                  "--remove_extra_whitespaces=true", "--decompile=false",
                  "--input=%s" % CORPUS, "--output=%s" % (tmp_path / "n"), "--minloglevel=1")
    assert done.returncode == 0, done.stderr


def test_every_trainer_spec_field_is_a_train_flag():
    """All TrainerSpec / NormalizerSpec fields of 0.2.3's model proto, and
    spm_train's own flags, are in ``subtok train --help``."""
    shown = subtok("train", "--help").stdout.decode()
    fields = [f.name for f in sentencepiece_model_pb2.TrainerSpec.DESCRIPTOR.fields]
    fields += ["add_dummy_prefix", "remove_extra_whitespaces", "normalization_rule_tsv",
               "normalization_rule_name", "denormalization_rule_tsv", "control_symbols_file",
               "user_defined_symbols_file", "required_chars_file", "random_seed",
               "use_sparse_pruning"]
    missing = [name for name in fields if "--%s" % name.replace("_", "-") not in shown]
    assert missing == []


@pytest.mark.parametrize("flag", ["--mining_sentence_size=100", "--training_sentence_size=100",
                                  "--accept_language=en", "--self_test_sample_size=3",
                                  "--enable_differential_privacy=true",
                                  "--train_extremely_large_corpus=true"])
def test_deprecated_train_flags_warn_once(tmp_path, flag):
    done = subtok("train", "--input=%s" % CORPUS, "--model_prefix=%s" % (tmp_path / "m"),
                  "--vocab_size=200", "--model_type=bpe", flag)
    assert done.returncode == 0, done.stderr
    name = flag[2:].split("=")[0]
    warnings = [line for line in done.stderr.decode().splitlines() if "warning" in line]
    assert len(warnings) == 1 and "--%s is ignored" % name in warnings[0], warnings


@pytest.mark.parametrize("flag, reason", [
    ("--use_sparse_pruning", "sparse unigram pruning is not implemented"),
    ("--auto_character_coverage=true", "automatic coverage search"),
])
def test_unsupported_train_flags_are_refused_with_the_reason(tmp_path, flag, reason):
    done = subtok("train", "--input=%s" % CORPUS, "--model_prefix=%s" % (tmp_path / "m"), flag)
    assert done.returncode == 1
    assert done.stderr.decode().count("\n") == 1 and reason in done.stderr.decode()
    assert not (tmp_path / "m.model").exists()


def test_switched_off_unsupported_flags_are_fine(tmp_path):
    done = subtok("train", "--input=%s" % CORPUS, "--model_prefix=%s" % (tmp_path / "m"),
                  "--vocab_size=200", "--model_type=bpe", "--use_sparse_pruning=false",
                  "--auto_character_coverage=false", "--quiet")
    assert done.returncode == 0 and done.stderr == b""


def test_top_level_help_lists_each_command_once():
    shown = subtok("--help").stdout.decode()
    commands = re.findall(r"^  (\S+)\s", shown.split("Commands:")[1], re.M)
    assert commands == ["convert", "count", "decode", "encode", "export-vocab", "normalize", "train"]


def test_bare_subtok_prints_the_help():
    done = subtok()
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout == subtok("--help").stdout


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, -signal.SIGTERM),
                                          (signal.SIGHUP, -signal.SIGHUP),
                                          (signal.SIGINT, 130)])
@pytest.mark.parametrize("threads", [1, 2])
def test_signals_leave_no_temporary_file(tmp_path, signum, code, threads):
    big = DATA / "corpora" / "gutenberg_en.txt"
    out = tmp_path / "out" / "encoded.txt"
    out.parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "subtok", "encode", "--model", str(MODEL),
                             "--output", str(out), "--num_threads", str(threads), str(big)],
                            cwd=ROOT, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not any(p.name.startswith(".encoded.txt.") for p in out.parent.iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, "never started writing"
        time.sleep(0.05)
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert list(out.parent.iterdir()) == []
    assert b"Traceback" not in err


def test_train_num_threads_help_says_what_the_default_means():
    """spm_train's default of 16 is kept, but a bare ``[default: 16]``
    read as 16 processes on any machine; the help says they are capped."""
    shown = " ".join(subtok("train", "--help").stdout.decode().split())
    assert "[default: 16, as spm_train; at most one per core is used]" in shown
    num_threads = shown.split("--num_threads")[1].split("--num-sub-iterations")[0]
    assert "[default: 16]" not in num_threads
