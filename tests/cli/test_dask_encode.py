"""Encoding on a Dask ``LocalCluster`` (``subtok encode --scheduler``,
``subtok.dask.encode`` / ``encode_bag``) writes, for every model kind, the
bytes ``subtok encode`` writes for each file; a worker killed in the middle
of a file changes nothing; bad requests are one-line errors that leave no
output behind."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import CORPORA_DIR, INTEROP_DIR, MODELS_DIR, ROOT, run_subtok

SPM = MODELS_DIR / "test_model.model"
#: (model, options of subtok encode) for each kind of model subtok encode reads.
KINDS = {
    "sentencepiece": (SPM, ["--output_format", "id", "--extra_options", "bos:eos"]),
    "tokenizer.json": (INTEROP_DIR / "bert_base_uncased.tokenizer.json", ["--output_format", "piece"]),
    "tiktoken": (INTEROP_DIR / "cl100k_base.tiktoken", ["--output_format", "id"]),
    "vocab.txt": (INTEROP_DIR / "bert_base_cased.vocab.txt", ["--output_format", "id"]),
    "vocab.json": (None, ["--output_format", "piece"]),  # see gpt2_files
}


@pytest.fixture(scope="module")
def gpt2_files(tmp_path_factory) -> Path:
    """GPT-2's vocab.json and merges.txt cut to the bytes and the first 2000
    merges (ids 256 + rank), so loading them is quick: the merges.txt is
    shipped along with the vocab.json."""
    import json
    folder = tmp_path_factory.mktemp("gpt2")
    source = INTEROP_DIR / "gpt2"
    vocab = json.loads((source / "vocab.json").read_text(encoding="utf-8"))
    merges = (source / "merges.txt").read_text(encoding="utf-8").split("\n")
    (folder / "vocab.json").write_text(
        json.dumps({token: i for token, i in vocab.items() if i < 256 + 2000}), encoding="utf-8")
    (folder / "merges.txt").write_text("\n".join(merges[:1 + 2000]) + "\n", encoding="utf-8")
    return folder / "vocab.json"


def _as_kwargs(flags: list[str]) -> dict:
    return {flags[i][2:]: flags[i + 1] for i in range(0, len(flags), 2)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[str]:
    """Small slices of three corpora; the last one ends without a newline."""
    folder = tmp_path_factory.mktemp("corpus")
    paths = []
    for name, size in (("en", 12000), ("ja", 9000), ("ru", 7001)):
        path = folder / ("%s.txt" % name)
        path.write_bytes((CORPORA_DIR / path.name).read_bytes()[:size])
        paths.append(str(path))
    return paths


def expected_outputs(model: Path, flags: list[str], paths: list[str]) -> list[bytes]:
    """What ``subtok encode`` writes for each file: one run of the command
    (in this process) over all of them, lines being encoded independently,
    cut at each file's line count."""
    from subtok.cli.app import main
    with tempfile.TemporaryDirectory() as folder:
        output = os.path.join(folder, "expected")
        main(["encode", "--model", str(model), *flags, "--output", output, *paths])
        lines = Path(output).read_bytes().split(b"\n")
    out = []
    for path in paths:
        data = Path(path).read_bytes()
        count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        out.append(b"".join(line + b"\n" for line in lines[:count]))
        lines = lines[count:]
    assert lines == [b""]
    return out


@pytest.mark.parametrize("kind", list(KINDS))
def test_api_writes_what_subtok_encode_writes(dask_client, corpus, gpt2_files, tmp_path, kind):
    from subtok import dask as subtok_dask
    model, flags = KINDS[kind]
    model = model or gpt2_files
    output_dir = tmp_path / "new" / "out"
    outputs = subtok_dask.encode(corpus, str(output_dir), dask_client, str(model),
                                 **_as_kwargs(flags))
    suffix = "." + _as_kwargs(flags)["output_format"]
    assert outputs == [str(output_dir / (Path(p).name + suffix)) for p in corpus]
    assert [Path(o).read_bytes() for o in outputs] == expected_outputs(model, flags, corpus)
    assert sorted(os.listdir(output_dir)) == sorted(Path(o).name for o in outputs)


def test_cli_with_a_glob_writes_what_subtok_encode_writes(dask_client, corpus, tmp_path):
    model, flags = KINDS["sentencepiece"]
    pattern = str(Path(corpus[0]).parent / "*.txt")
    run_subtok("encode", "--model", str(model), *flags, "--input", pattern,
               "--output_dir", str(tmp_path / "d"), "--output_suffix", "",
               "--scheduler", dask_client.scheduler.address)
    ours = [(tmp_path / "d" / Path(p).name).read_bytes() for p in corpus]
    assert ours == expected_outputs(model, flags, corpus)
    assert sorted(os.listdir(tmp_path / "d")) == sorted(Path(p).name for p in corpus)


@pytest.mark.parametrize("output_format", ["piece", "nbest_id"])
def test_bag_of_lines_gives_each_lines_output(dask_client, corpus, output_format):
    import dask.bag
    from subtok import dask as subtok_dask
    lines = Path(corpus[0]).read_text(encoding="utf-8").split("\n")[:-1][:60]
    bag = dask.bag.from_sequence([line + "\n" for line in lines], npartitions=3)
    ours = subtok_dask.encode_bag(bag, str(SPM), output_format=output_format,
                                  nbest_size=3).compute()
    flags = ["--output_format", output_format, "--nbest_size", "3"]
    whole = run_subtok("encode", "--model", str(SPM), *flags,
                       input="".join(line + "\n" for line in lines).encode("utf-8")).stdout
    if output_format == "piece":
        assert ours == whole.decode("utf-8").split("\n")[:-1]
    else:  # three hypotheses per line, in line order
        assert "\n".join(ours) + "\n" == whole.decode("utf-8")
        assert len(ours) == len(lines)


def _pids_holding(client, prefix: str) -> list[int]:
    """Worker processes with a file open whose path starts with ``prefix``."""
    found = []
    for pid in client.run(os.getpid).values():
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith(prefix):
                    found.append(pid)
            except OSError:
                pass
    return found


def _gone(pid: int) -> bool:
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs to hold a worker mid-file")
def test_a_worker_killed_mid_file_changes_nothing(dask_client, corpus, tmp_path):
    """One input is a FIFO, so its task blocks after opening its output
    (in the staging directory) and before reading a line; the worker
    process running it is killed (SIGKILL), and only then is the text fed
    to whichever worker runs the task again. The outputs are those of
    ``subtok encode`` and the output directory holds nothing else."""
    from subtok import dask as subtok_dask
    model, flags = KINDS["sentencepiece"]
    text = (CORPORA_DIR / "fr.txt").read_bytes()[:20000]
    regular = tmp_path / "plain" / "stream.txt"
    regular.parent.mkdir()
    regular.write_bytes(text)
    fifo = tmp_path / "stream.txt"
    os.mkfifo(fifo)
    output_dir = tmp_path / "out"
    done: dict = {}

    def run():
        try:
            done["outputs"] = subtok_dask.encode(corpus + [str(fifo)], str(output_dir),
                                                 dask_client, str(model), **_as_kwargs(flags))
        except BaseException as exc:  # reported by the main thread
            done["error"] = exc

    job = threading.Thread(target=run)
    job.start()
    try:
        deadline = time.monotonic() + 60
        staged = []
        while not staged and time.monotonic() < deadline:
            staged = glob.glob(str(output_dir / ".subtok-encode-*" / ".stream.txt.id.*"))
            time.sleep(0.02)
        assert staged, done
        # Nothing but the hidden staging directory is visible meanwhile.
        assert [name.startswith(".subtok-encode-") for name in os.listdir(output_dir)] == [True]
        victims = _pids_holding(dask_client, staged[0])
        assert len(victims) == 1
        os.kill(victims[0], signal.SIGKILL)
        while not _gone(victims[0]) and time.monotonic() < deadline:
            time.sleep(0.02)
        # Feed the FIFO to the task's second run once it opens it.
        while time.monotonic() < deadline:
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:  # ENXIO: no reader yet
                time.sleep(0.05)
        os.set_blocking(writer, True)
        with os.fdopen(writer, "wb") as handle:
            handle.write(text)
    finally:
        job.join(120)
    assert "error" not in done, done.get("error")
    expected = expected_outputs(model, flags, corpus + [str(regular)])
    assert [Path(o).read_bytes() for o in done["outputs"]] == expected
    assert sorted(os.listdir(output_dir)) == sorted(Path(o).name for o in done["outputs"])


def test_a_file_failing_on_a_worker_changes_nothing(dask_client, tmp_path):
    """A tiktoken rank file without the byte "z": the second input fails on
    its worker (line 2). The error names the file and the line; the output
    directory keeps its old file as it was and gets nothing else; a
    directory the job made is gone again."""
    import base64
    from subtok import dask as subtok_dask
    from subtok.errors import SubtokError
    ranks = tmp_path / "tiny.tiktoken"
    ranks.write_bytes(b"".join(base64.b64encode(bytes([c])) + b" %d\n" % i
                               for i, c in enumerate(b"ab \n")))
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_bytes(b"ab ba\n")
    bad.write_bytes(b"ab ba\nab z\n")
    kept = tmp_path / "d" / "good.txt.id"
    kept.parent.mkdir()
    kept.write_bytes(b"old\n")
    for output_dir in (tmp_path / "d", tmp_path / "new"):
        with pytest.raises(SubtokError, match=r"^%s: line 2: the byte b'z' has no rank"
                           % str(bad).replace(".", r"\.")):
            subtok_dask.encode([str(good), str(bad)], str(output_dir), dask_client, str(ranks),
                               pattern="gpt2", output_format="id", retries=0)
    assert os.listdir(tmp_path / "d") == ["good.txt.id"] and kept.read_bytes() == b"old\n"
    assert not (tmp_path / "new").exists()


def _one_line_error(proc, *needles):
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


def test_unreachable_scheduler(corpus, tmp_path):
    """The whole command, with the connection timeout cut from 10 s to 1 s."""
    code = ("import sys\nimport subtok.dask\nsubtok.dask.CONNECT_TIMEOUT = 1\n"
            "from subtok.cli.app import main\nmain(sys.argv[1:])\n")
    proc = subprocess.run([sys.executable, "-c", code, "encode", "--model", str(SPM),
                           "--input", corpus[0], "--output_dir", str(tmp_path / "d"),
                           "--scheduler", "tcp://127.0.0.1:1"], cwd=ROOT, capture_output=True)
    _one_line_error(proc, "cannot reach the Dask scheduler")
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("case", ["no match", "bad model", "same names", "no output_dir",
                                  "stdin", "proto"])
def test_bad_requests_are_one_line_errors(corpus, tmp_path, case):
    """Each is refused before a cluster is started (local:2 would take
    seconds), and nothing is made."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "en.txt").write_text("x\n")
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"\x0a\x05not a model")
    model, inputs, extra, needle = {
        "no match": (SPM, str(tmp_path / "*.none"), [], "no input file matches"),
        "bad model": (bad, corpus[0], [], "bad.model"),
        "same names": (SPM, "%s,%s" % (corpus[0], other / "en.txt"), [], "distinct file names"),
        "no output_dir": (SPM, corpus[0], ["--output", str(tmp_path / "o")], "--output_dir"),
        "stdin": (SPM, "-", [], "stdin"),
        "proto": (SPM, corpus[0], ["--output_format", "proto"], "proto formats"),
    }[case]
    args = ["--output_dir", str(tmp_path / "d")] if case != "no output_dir" else []
    proc = run_subtok("encode", "--model", str(model), "--input", inputs, *args, *extra,
                      "--scheduler", "local:2", check=False)
    err = proc.stderr.decode()
    assert proc.returncode in (1, 2) and "Traceback" not in err, err
    assert needle in err, err
    if proc.returncode == 1:
        _one_line_error(proc)
    assert not (tmp_path / "d").exists() and not (tmp_path / "o").exists()


def test_help_lists_the_cluster_options():
    out = run_subtok("encode", "--help").stdout.decode()
    for flag in ("--scheduler", "--input", "--output_dir", "--output_suffix"):
        assert flag in out
