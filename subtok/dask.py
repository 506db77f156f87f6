"""Counting and encoding on a Dask cluster (the optional extra ``subtok[dask]``).

``subtok count --scheduler local:N`` starts a ``distributed.LocalCluster``
of N single-threaded worker processes; ``--scheduler tcp://HOST:PORT``
uses a running scheduler. Each input file, or each byte range of about
``--chunk_size`` bytes of a larger file
(:class:`subtok.training.reading.FileRange`: the lines that start in it),
is one task: a worker counts it with the options given (as
:func:`subtok.training.counts.count` does, in bounded memory, spilling on
the worker's own temporary disk). The partial count files are merged on
the workers, a few at a time, in a tree that keeps them in corpus order
(:func:`merge_tree`; the merge joins unigram counts across parts), and
only the merged file comes back to the client, so the result is
byte-identical to counting on one machine. A worker lost mid-task is the
scheduler's to handle (it runs the task again elsewhere); each task keeps
its files in one directory named after the job, under the temporary
directory, and the client removes what a killed task left there at the
end. :func:`count_bag` does the
same for a ``dask.bag`` of lines, one task per partition, merged in
partition order.

Encoding (``subtok encode --scheduler ... --output_dir D``, :func:`encode`,
:func:`encode_bag`): the model file (with a GPT-2 vocab.json's merges.txt,
and a ``--vocabulary`` file) travels as bytes in one task of the graph, so
workers need not see the client's model path, and if the worker holding
it dies the scheduler simply computes it again. Each worker writes the
files into a temporary directory of its own, loads them with the loader
``subtok encode`` uses and builds the same line encoder
(:func:`subtok.lines.encoders.line_encoder`), once per worker thread and
model. One task per input file: the worker streams the file through the
encoder as ``subtok encode`` does into a staging directory
``D/.subtok-encode-*`` (atomically, :mod:`subtok.atomic`); when every task
has succeeded, the client renames the finished files into ``D`` together
(:func:`subtok.atomic.move_into_place`), so ``D`` never shows a partial
file, and a failed job changes nothing in it. The staging directory, with
whatever a killed worker left there, is removed at the end either way. A
worker lost mid-task is the scheduler's to handle: it runs the task again
elsewhere (up to ``distributed.scheduler.allowed-failures`` times, then the
job fails with a one-line error); ``retries`` reruns a task that raised.
Inputs and ``D`` must be at the same paths on the client and the workers
(a shared file system).

Nothing here is imported by ``import subtok`` or by any other command;
without dask and distributed installed, asking for a scheduler is a
one-line error saying what to install.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import importlib
import logging
import os
import pickle
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from subtok.atomic import move_into_place
from subtok.errors import InputError, ModelFileError, OutputError, SubtokError, TrainerError
from subtok.training import counts
from subtok.training.reading import FileRange, byte_ranges

INSTALL_HINT = "pip install 'subtok[dask]' (dask and distributed)"
#: Seconds to wait for a tcp:// scheduler before giving up.
CONNECT_TIMEOUT = 10
#: Default of ``--chunk_size``: a file larger than this is counted in byte
#: ranges of about this size, one task each (large enough that a task's
#: start-up and its count file are small beside its counting).
DEFAULT_CHUNK_SIZE = 128 << 20
#: Count files merged by one task of the merge tree.
MERGE_FAN_IN = 4


def _extra(name: str):
    """The module ``name`` of the extra (``dask`` or ``distributed``), or the
    one-line error saying what to install."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise SubtokError("--scheduler needs Dask, which is not installed: %s." % INSTALL_HINT) from None


def client_for(scheduler: str):
    """A ``distributed.Client`` for ``local:N`` or a scheduler address.
    The caller closes it (and, for ``local:N``, its cluster):
    :func:`connected` does both."""
    distributed = _extra("distributed")
    if scheduler.startswith("local:"):
        text = scheduler[len("local:"):]
        if not text.isdigit() or int(text) < 1:
            raise SubtokError("--scheduler=%s: expected local:N with N >= 1 worker processes."
                              % scheduler)
        # A task's SubtokError comes back to the client, which prints it as
        # one line; the workers would also log it, with a traceback. The
        # scheduler's HTTP server takes a free port: with dashboard_address
        # None it still tries 8787 and warns when another cluster has it.
        cluster = distributed.LocalCluster(n_workers=int(text), threads_per_worker=1,
                                           processes=True, dashboard_address=":0",
                                           silence_logs=logging.CRITICAL)
        return distributed.Client(cluster)
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SubtokError("--scheduler=%s: cannot reach the Dask scheduler: %s."
                          % (scheduler, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from None


@contextlib.contextmanager
def connected(scheduler: str) -> Iterator[Any]:
    """A client for ``scheduler`` (see :func:`client_for`), closed on
    leaving, with the ``LocalCluster`` it started for ``local:N``."""
    client = client_for(scheduler)
    try:
        yield client
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and scheduler.startswith("local:"):
            cluster.close()


def file_size(path: str) -> int:
    """One task: the size of ``path`` as a worker sees it (the client may not
    see the workers' files)."""
    try:
        return os.path.getsize(path)
    except OSError as exc:
        raise TrainerError("%s: cannot open input file: %s." % (path, exc.strerror or exc)) from None


def count_range(piece: FileRange, options: dict[str, Any], max_memory: int | str,
                tmp_dir: str | None, job: str = "") -> bytes:
    """One task: the count file of the lines that start in a byte range of a
    file (a whole small file is one range), as bytes."""
    return _count_bytes(piece, options, max_memory, tmp_dir, job)


def count_lines(lines, options: dict[str, Any], max_memory: int | str,
                tmp_dir: str | None, job: str = "") -> bytes:
    """One partition of a bag of lines: its count file (run on a worker)."""
    return _count_bytes(list(lines), options, max_memory, tmp_dir, job)


def _count_bytes(lines, options: dict[str, Any], max_memory: int | str,
                 tmp_dir: str | None, job: str) -> bytes:
    """The count file of ``lines`` (see :func:`subtok.training.counts.count`),
    as bytes, counted in this process (the worker's one thread). Its
    spilled runs go in the task's own directory, so that a killed task
    leaves one directory of the job's and nothing else."""
    with _task_directory(tmp_dir, job) as directory:
        output = os.path.join(directory, "part.tsv")
        counts.count(output, lines=lines, max_memory=max_memory, tmp_dir=directory,
                     **dict(options, num_threads=1))
        with open(output, "rb") as handle:
            return handle.read()


def merge_counts(*blobs: bytes, tmp_dir: str | None = None, job: str = "") -> bytes:
    """One task of the merge tree: count files (bytes) merged in the order
    given, as :func:`subtok.training.counts.merge` merges files (which joins
    unigram counts of consecutive parts), as bytes."""
    with _task_directory(tmp_dir, job) as directory:
        parts = []
        for number, blob in enumerate(blobs):
            part = os.path.join(directory, "part-%06d.tsv" % number)
            with open(part, "wb") as handle:
                handle.write(blob)
            parts.append(part)
        output = os.path.join(directory, "merged.tsv")
        counts.merge(parts, output)
        with open(output, "rb") as handle:
            return handle.read()


def _task_prefix(job: str) -> str:
    return "subtok-dask-%s-" % job if job else "subtok-dask-"


def _task_directory(tmp_dir: str | None, job: str):
    """A task's temporary directory, removed when it ends, named after its
    job (see :func:`_job`)."""
    return tempfile.TemporaryDirectory(prefix=_task_prefix(job), dir=tmp_dir)


@contextlib.contextmanager
def _job(tmp_dir: str | None) -> Iterator[str]:
    """A name for one counting job; on leaving, the directories its tasks
    left in ``tmp_dir`` are removed. A task removes its own directory when
    it ends, but a worker killed mid-task (SIGKILL, out of memory) cannot,
    and the scheduler runs the task again elsewhere: what the killed one
    left would stay for good. The client sees them where the workers'
    ``tmp_dir`` is its own (a local cluster, a shared ``--tmp_dir``)."""
    job = secrets.token_hex(8)
    try:
        yield job
    finally:
        pattern = os.path.join(glob.escape(tmp_dir or tempfile.gettempdir()), _task_prefix(job) + "*")
        for leftover in glob.glob(pattern):
            shutil.rmtree(leftover, ignore_errors=True)


def merge_tree(parts: list, tmp_dir: str | None = None, fan_in: int = MERGE_FAN_IN,
               job: str = ""):
    """A ``dask.delayed`` count file: ``parts`` (delayed count files, in
    corpus order) merged ``fan_in`` at a time, level by level, each merge a
    task on a worker, so no one process ever holds all the parts. Neighbours
    are merged with neighbours and left stays left: unigram counts join the
    end of one part to the start of the next, so the order matters (a
    merge of other groupings of the same order gives the same bytes)."""
    delayed = _extra("dask").delayed
    if not parts:
        raise ValueError("no count files to merge")
    if fan_in < 2:
        raise ValueError("fan_in must be >= 2")
    merge = delayed(merge_counts, pure=False)
    level = list(parts)
    while len(level) > 1:
        level = [group[0] if len(group) == 1 else merge(*group, tmp_dir=tmp_dir, job=job)
                 for group in (level[i:i + fan_in] for i in range(0, len(level), fan_in))]
    return level[0]


def chunk_bytes(chunk_size: int | str) -> int:
    """``--chunk_size`` (bytes, or a size such as 128M) in bytes."""
    if isinstance(chunk_size, int) and not isinstance(chunk_size, bool):
        if chunk_size < 1:
            raise SubtokError("--chunk_size=%d: must be at least 1 byte." % chunk_size)
        return chunk_size
    try:
        return counts.parse_size(chunk_size)
    except SubtokError:
        raise SubtokError("--chunk_size=%s: expected a size such as 64M or 1G." % chunk_size) from None


def count_bag(bag, output: str, *, max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
              tmp_dir: str | None = None, **options: Any) -> dict:
    """Count a ``dask.bag`` of lines (str or bytes, one sentence each) into
    ``output``, its partitions merged in order, in a tree (on the scheduler
    that is current, e.g. a ``distributed.Client``'s)."""
    counts.counting_options(**options)
    count = _extra("dask").delayed(count_lines, pure=False)
    with _job(tmp_dir) as job:
        parts = [count(partition, options, max_memory, tmp_dir, job)
                 for partition in bag.to_delayed()]
        blob = merge_tree(parts, tmp_dir, job=job).compute()
    return _write(blob, output)


def _write(blob: bytes, output: str) -> dict:
    """The merged count file written to ``output`` (atomically); its header."""
    from subtok.atomic import atomic_writer
    with atomic_writer(output) as out:
        out.write(blob)
    return counts.parse_header(blob.split(b"\n", 1)[0], output)


def count(paths: list[str], output: str, client, *, chunk_size: int | str = DEFAULT_CHUNK_SIZE,
          max_memory: int | str = counts.DEFAULT_MAX_MEMORY, tmp_dir: str | None = None,
          fan_in: int = MERGE_FAN_IN, **options: Any) -> dict:
    """Count ``paths`` on the cluster of ``client`` into ``output``; return
    the header. Files over ``chunk_size`` bytes are counted in ranges of
    about that size, one task each; the parts are merged ``fan_in`` at a
    time on the workers (:func:`merge_tree`) and only the merged file comes
    back. ``options``: spm_train options, as for
    :func:`subtok.training.counts.count`."""
    if not paths:
        raise TrainerError("--input is required: give one or more files.")
    counts.counting_options(input=list(paths), **options)  # bad options fail here, not on a worker
    chunk = chunk_bytes(chunk_size)
    sizes = client.gather(client.map(file_size, paths, pure=False))
    count = _extra("dask").delayed(count_range, pure=False)
    with _job(tmp_dir) as job:
        parts = [count(piece, options, max_memory, tmp_dir, job)
                 for path, size in zip(paths, sizes) for piece in byte_ranges(path, size, chunk)]
        blob = client.compute(merge_tree(parts, tmp_dir, fan_in, job)).result()
    return _write(blob, output)


def count_on_cluster(output: str, *, scheduler: str, chunk_size: int | str = DEFAULT_CHUNK_SIZE,
                     max_memory: int | str = counts.DEFAULT_MAX_MEMORY,
                     tmp_dir: str | None = None, **options: Any) -> dict:
    """``subtok count --scheduler``: connect (or start a local cluster),
    count, and close what was opened."""
    paths = list(options.pop("input"))
    if "-" in paths:
        raise SubtokError("--scheduler cannot count stdin (-): give files the workers can read.")
    options.pop("model_prefix", None)
    chunk_bytes(chunk_size)  # bad sizes fail before a cluster is started
    if isinstance(max_memory, str):
        counts.parse_size(max_memory)
    counts.counting_options(input=paths, **options)
    with connected(scheduler) as client:
        return count(paths, output, client, chunk_size=chunk_size, max_memory=max_memory,
                     tmp_dir=tmp_dir, **options)


# -- encoding -------------------------------------------------------------

def ship_model(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """What a worker builds the encoder from: the model file's bytes (and
    the merges.txt a GPT-2 vocab.json needs, and a ``vocabulary`` file's),
    the other options, and a key naming the lot."""
    from subtok.formats import gpt2_merges_path, model_kind
    options = dict(options)
    files = {"model": _file_bytes(model)}
    if model_kind(model) == "vocab.json":
        files["merges"] = _file_bytes(gpt2_merges_path(model))
    vocabulary = options.pop("vocabulary", None)
    if vocabulary:
        files["vocabulary"] = _file_bytes(vocabulary)
    key = hashlib.sha256(pickle.dumps((sorted(files.items()), sorted(options.items())))).hexdigest()
    return {"key": key, "files": files, "options": options}


def _file_bytes(path) -> tuple[str, bytes]:
    try:
        with open(path, "rb") as handle:
            return os.path.basename(path), handle.read()
    except OSError as exc:
        raise ModelFileError("%s: cannot read the model file: %s."
                             % (path, exc.strerror or exc)) from None


#: Per worker thread: (key, encoder) of the model last built, whose caches
#: then serve every file of the job that this thread encodes.
_BUILT = threading.local()


def worker_encoder(shipped: dict[str, Any]):
    """The line encoder of a shipped model (see :func:`ship_model`), built
    by the loader ``subtok encode`` uses, from the files written out under
    their own names (a vocab.json with its merges.txt beside it)."""
    from subtok.lines.encoders import line_encoder  # encoding's modules: only when encoding
    built = getattr(_BUILT, "encoder", None)
    if built is not None and built[0] == shipped["key"]:
        return built[1]
    files = shipped["files"]
    with tempfile.TemporaryDirectory(prefix="subtok-dask-") as directory:
        paths = {}
        for role, (name, data) in files.items():
            folder = os.path.join(directory, "vocabulary" if role == "vocabulary" else "model")
            os.makedirs(folder, exist_ok=True)
            paths[role] = os.path.join(folder, "merges.txt" if role == "merges" else name)
            with open(paths[role], "wb") as handle:
                handle.write(data)
        encoder = line_encoder(paths["model"], vocabulary=paths.get("vocabulary"),
                               **shipped["options"])
    _BUILT.encoder = (shipped["key"], encoder)
    return encoder


def encode_file(path: str, staged: str, shipped: dict[str, Any]) -> str:
    """One task: ``path`` encoded into ``staged``, as ``subtok encode
    --input path --output staged`` writes it (run on a worker)."""
    from subtok.lines.batch import map_blocks
    from subtok.lines.streams import read_blocks, write_blocks
    encoder = worker_encoder(shipped)
    try:
        write_blocks(map_blocks(encoder, read_blocks([path]), 1), staged)
    except SubtokError as exc:
        message = str(exc)
        if not message.startswith(path):  # "line N: ...": say of which file
            raise type(exc)("%s: %s" % (path, message)) from None
        raise
    return staged


def expand_inputs(patterns: list[str]) -> list[str]:
    """The files of ``--input`` values: a glob matches files (sorted; its
    directories are skipped), a name without wildcards is taken as it is;
    a glob that matches no file is an error."""
    paths = []
    for pattern in patterns:
        if pattern == "-":
            raise InputError("--scheduler cannot encode stdin (-): give files the workers "
                             "can read.")
        if not glob.has_magic(pattern):
            paths.append(pattern)
            continue
        found = sorted(p for p in glob.glob(pattern, recursive=True) if not os.path.isdir(p))
        if not found:
            raise InputError("%s: no input file matches." % pattern)
        paths.extend(found)
    if not paths:
        raise InputError("no input files: give --input FILE or GLOB.")
    return paths


def output_paths(paths: list[str], output_dir: str, suffix: str) -> list[str]:
    """``output_dir``/<input's file name><suffix> for each input; two inputs
    of one file name, or an output that would replace an input, are
    errors."""
    outputs = []
    seen: dict[str, str] = {}
    inputs = {os.path.realpath(p) for p in paths}
    for path in paths:
        name = os.path.basename(path) + suffix
        if name in seen:
            raise InputError("%s and %s: both would be written to %s (inputs of one "
                             "--output_dir need distinct file names)."
                             % (seen[name], path, os.path.join(output_dir, name)))
        seen[name] = path
        output = os.path.join(output_dir, name)
        if os.path.realpath(output) in inputs:
            raise InputError("%s: the output would replace an input (give another --output_dir "
                             "or --output_suffix)." % output)
        outputs.append(output)
    return outputs


def _checked(model: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options with the output format's default, checked (a bad model or
    option fails here, on the client, not on every worker)."""
    from subtok.lines.encoders import PROTO_FORMATS, line_encoder
    options = dict(options)
    options.setdefault("output_format", "piece")
    if options.get("generate_vocabulary") or options["output_format"] in PROTO_FORMATS:
        raise SubtokError("encoding on Dask writes encoded lines: --generate_vocabulary and "
                          "the proto formats are not available with it.")
    line_encoder(model, **options)
    return options


def _plan(paths: list[str], output_dir: str, model: str, suffix: str | None,
          options: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Everything checked before a task runs or ``output_dir`` is made:
    the model and options (by building the encoder here), the inputs, the
    output names. Returns (outputs, shipped model)."""
    from subtok.lines.streams import check_readable
    options = _checked(model, options)
    check_readable(paths)
    if suffix is None:
        suffix = "." + options["output_format"]
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise OutputError("%s: cannot write outputs there: not a directory." % output_dir)
    return output_paths(paths, output_dir, suffix), ship_model(model, options)


def encode(paths: list[str], output_dir: str, client, model: str, *, suffix: str | None = None,
           retries: int = 1, **options: Any) -> list[str]:
    """Encode each of ``paths`` on the cluster of ``client`` into
    ``output_dir`` (made if missing) as ``subtok encode --model model``
    with ``options`` (its flags: output_format, extra_options, ...) would;
    return the output paths. Outputs are named after the inputs' file
    names plus ``suffix`` (default: "." + the output format); all appear
    together when every file is done, or none do."""
    outputs, shipped = _plan(list(paths), output_dir, model, suffix, options)
    return _run_encode(client, list(paths), outputs, output_dir, shipped, retries)


def _run_encode(client, paths: list[str], outputs: list[str], output_dir: str,
                shipped: dict[str, Any], retries: int) -> list[str]:
    made = not os.path.isdir(output_dir)
    try:
        os.makedirs(output_dir, exist_ok=True)
        # Absolute paths: a remote worker's working directory is not ours.
        staging = os.path.abspath(tempfile.mkdtemp(prefix=".subtok-encode-", dir=output_dir))
    except OSError as exc:
        raise OutputError("%s: cannot make the output directory: %s."
                          % (output_dir, exc.strerror or exc)) from None
    futures: list = []
    model = None
    done = False
    try:
        staged = [os.path.join(staging, os.path.basename(output)) for output in outputs]
        # A task, not scattered data: if its worker dies it is computed again.
        # The model is in the graph once, by design: Dask's warning about a
        # large graph (a tokenizer.json can pass its 10 MB) would only be
        # noise on the command's stderr.
        with _extra("dask").config.set({"distributed.admin.large-graph-warning-threshold": "4GB"}):
            model = client.submit(_same, shipped, pure=False)
        futures = client.map(encode_file, [os.path.abspath(p) for p in paths], staged,
                             shipped=model, retries=retries, pure=False)
        path_of = {future.key: path for future, path in zip(futures, paths)}
        distributed = _extra("distributed")
        for future in distributed.as_completed(futures):  # the first failure ends the job
            try:
                future.result()
            except distributed.KilledWorker:
                raise SubtokError("%s: the workers encoding it kept dying; nothing was written "
                                  "to %s." % (path_of[future.key], output_dir)) from None
        move_into_place(list(zip(staged, outputs)))
        done = True
        return outputs
    finally:
        pending = [f for f in futures + [model] if f is not None]
        if pending:
            client.cancel(pending)
        shutil.rmtree(staging, ignore_errors=True)
        if made and not done:  # a failed job leaves no trace, not even D
            with contextlib.suppress(OSError):
                os.rmdir(output_dir)


def _same(value):
    return value


def encode_on_cluster(model: str, inputs: list[str], output_dir: str, *, scheduler: str,
                      suffix: str | None = None, retries: int = 1, **options: Any) -> list[str]:
    """``subtok encode --scheduler``: expand the inputs, check everything,
    connect (or start a local cluster), encode, and close what was opened."""
    paths = expand_inputs(inputs)
    outputs, shipped = _plan(paths, output_dir, model, suffix, options)
    with connected(scheduler) as client:
        return _run_encode(client, paths, outputs, output_dir, shipped, retries)


def encode_lines(lines, shipped: dict[str, Any]) -> list:
    """One partition of a bag of lines: each line's output (run on a
    worker), str for str lines, bytes for bytes; numbered from 1 within
    the partition (what seeded sampling draws from)."""
    lines = list(lines)
    if not lines:
        return []
    as_text = isinstance(lines[0], str)
    raw = []
    for number, line in enumerate(lines, 1):
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogateescape")
        if line.endswith(b"\n"):  # dask.bag.read_text keeps each line's end
            line = line[:-1]
        if b"\n" in line:
            raise InputError("bag line %d of a partition holds a newline: give one line per "
                             "element." % number)
        raw.append(line)
    encoder = worker_encoder(shipped)
    if shipped["options"]["output_format"].startswith("nbest"):
        out = encoder.lines(raw)  # several output lines per input line
    else:
        out = encoder.block(b"\n".join(raw))[:-1].split(b"\n")
    return [o.decode("utf-8", "surrogateescape") for o in out] if as_text else out


def encode_bag(bag, model: str, **options: Any):
    """A ``dask.bag`` of lines (str or bytes, one sentence each; a final
    newline is dropped) encoded as ``subtok encode --model model`` with
    ``options`` encodes them: a bag of the same partitions holding each
    line's output line (for nbest formats, its hypotheses joined by
    newlines), str for str lines, bytes for bytes."""
    options = _checked(model, options)
    shipped = _extra("dask").delayed(ship_model(model, options), pure=True)
    return bag.map_partitions(encode_lines, shipped)


__all__ = ["count", "count_bag", "count_on_cluster", "client_for", "connected", "count_lines",
           "encode", "encode_bag", "encode_on_cluster", "encode_file", "encode_lines",
           "ship_model", "worker_encoder", "expand_inputs", "output_paths",
           "count_range", "merge_counts", "merge_tree", "file_size", "chunk_bytes", "INSTALL_HINT",
           "DEFAULT_CHUNK_SIZE", "MERGE_FAN_IN"]
