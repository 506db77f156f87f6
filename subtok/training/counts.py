"""Mergeable unit counts: what ``subtok count`` writes, ``subtok count
--merge`` sums and ``subtok train --input_format tsv`` trains from.

A count file holds the distinct *training units* of a corpus (the
normalized words, or whole sentences, that the trainer of the given options
works on, :func:`count_units`) with their weighted counts. Training keeps
only these units, so counts taken anywhere (on several machines, on a Dask
cluster, :mod:`subtok.dask`) and summed give the model that training on the
whole text gives.

Format (UTF-8, one record a line)::

    #subtok-counts v1 {"units": "words-prefix", ..., "sentences": 12, "nonempty": 12}
    <unit><TAB><count>
    ...

The header's JSON records every option that shapes the units (unit kind,
normalization rules and their digest, whitespace flags,
``max_sentence_length``, the pretokenization delimiter, the meta pieces,
which normalization turns into boundaries) plus two totals that add up
when files are merged (``sentences`` read, ``nonempty`` after
normalization; the trainers' empty-corpus checks need them). In a unit,
backslash, TAB, LF and CR are written ``\\\\``, ``\\t``, ``\\n``, ``\\r``.
Records are sorted by the escaped unit's UTF-8 bytes, each unit once
(``LC_ALL=C sort`` order), so that files merge in one streaming pass.

Bounded memory: :class:`SpillTable` keeps the distinct units of the pass
in a dict and, when its estimated size passes ``max_memory``, writes them
sorted to a temporary "run" file and starts again; the runs are merged
with the last table at the end. The temporary directory is removed
whatever happens (success, error, KeyboardInterrupt).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import BinaryIO

from subtok.errors import InputError, OutputError, TrainerError
from subtok.normalizers.charsmap import decode_charsmap
from subtok.symbols import SPACE_SYMBOL
from subtok.training import TOKENIZER_FILE_TYPES
from subtok.progress import Progress
from subtok.training.corpus import (Corpus, build_meta, check_vocab_fits, checked_alphabet,
                                    normalize_workers, unit_count_chunks)
from subtok.training.followers import FollowedStitch, mask_followed
from subtok.training.reading import INT64_MAX, read_sentences
from subtok.training.units import mask_units, weighted_chars
from subtok.training.families import (counting_workers, input_size, pretoken_count_chunks,
                                      pretoken_counter)
from subtok.training.spec import TrainerOptions

MAGIC = b"#subtok-counts v1 "
#: Header fields that are totals (summed by a merge), not options.
TOTALS = ("sentences", "nonempty")
#: Header fields of unigram counts that let a merge join files in order:
#: the first character counted and the last word with its count (whose
#: follower, the end of the text, becomes NUL + the next file's "first").
EDGES = ("first", "last")
#: Default of ``--max_memory``: the count table's budget before it spills.
DEFAULT_MAX_MEMORY = 1 << 30
#: Estimated bytes of one table entry besides its UTF-8 bytes (the bytes
#: object, its dict slot and its count), and per byte of the unit.
ENTRY_BYTES = 120
CHAR_BYTES = 1
#: What counting holds besides its table, set aside from ``--max_memory``:
#: a chunk's counts arriving in the parent (the chunk's Counter and its
#: escaped copy), and each forked normalizing worker (its chunk's lines,
#: their normalized text and counts, and the pickle sending them back).
#: Measured on gutenberg_en with BPE options and on the 2 GB corpus of
#: bench/scale.py, where each worker peaked a little above 32 MB and the
#: parent above its share (docs/performance.md, "Counting at scale"),
#: rounded up with a margin.
CHUNK_RESERVE = 80 << 20
WORKER_RESERVE = 40 << 20
#: Run files merged at once; past this many the runs are merged into one
#: first (keeps the number of open files bounded).
MAX_RUNS = 64
#: Bytes of output buffered between writes.
WRITE_BUFFER = 1 << 20

_ESCAPE = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_UNESCAPE = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
_ESCAPED = re.compile(r"\\(.?)", re.S)
#: A written unit: escapes only as above, plus "\\>" between a unigram
#: word and its follower (see :func:`escape_followed`).
_VALID = re.compile(rb"(?:[^\\]|\\[\\tnr>])*\Z", re.S)
_FOLLOWED = re.compile(rb"((?:[^\\]|\\[\\tnr])*)\\>(.*)\Z", re.S)
_NEEDS_ESCAPE = re.compile("[\\\\\t\n\r]")
_COUNT = re.compile(rb"[0-9]+\Z")


# ----------------------------------------------------------------------------
# units and the header


def count_units(options: TrainerOptions) -> tuple:
    """The units the trainer of ``options`` trains on, as
    :func:`subtok.training.corpus.training_units` spells them.

    BPE: its whitespace-split words (or sentences); unigram: the words of
    ``SplitSentencesByWhitespace`` with its flags (or the sentences), each
    with its follower (the next character, NUL + the first character of
    the next sentence, or nothing at the end), which its seed search needs
    (:func:`subtok.training.followers.count_followed`); WORD and CHAR: the
    plain words (CHAR only needs the characters, which any units give).
    """
    kind = options.model_type_name
    if kind == "unigram":
        return ("followed", options.treat_whitespace_as_suffix,
                options.allow_whitespace_only_pieces, options.split_by_whitespace)
    if kind == "bpe":
        if not options.split_by_whitespace:
            return ("sentences",)
        return ("words", options.treat_whitespace_as_suffix, options.allow_whitespace_only_pieces)
    return ("words", False, False)


def units_name(units: tuple) -> str:
    """``sentences``, ``words-prefix``, ``words-suffix-wsruns``,
    ``followed-words-prefix``, ``followed-sentences``, ..."""
    if units[0] == "followed":
        _, suffix, ws_only, split_ws = units
        inner = ("words", suffix, ws_only) if split_ws else ("sentences",)
        return "followed-" + units_name(inner)
    if units[0] == "sentences":
        return "sentences"
    _, suffix, ws_only = units
    return "words-%s%s" % ("suffix" if suffix else "prefix", "-wsruns" if ws_only else "")


@functools.lru_cache(maxsize=4)
def rules_digest(blob: bytes) -> str:
    """SHA-256 of a charsmap's rules (sorted, as JSON): what the header
    records of the normalization. Decoding every rule of a built-in table
    is slow, and a process counting several ranges or files asks again
    for the same blob: each is decoded once per process. (hashlib is
    imported here: loading it is a part of ``subtok train``'s start-up
    that training from text does not need.)"""
    import hashlib
    rules = decode_charsmap(blob) if blob else {}
    return hashlib.sha256(json.dumps(sorted(rules.items())).encode("utf-8", "surrogatepass")).hexdigest()


def shape(options: TrainerOptions, units: tuple, meta: list[tuple[int, str, int]]) -> dict:
    """The header fields that decide what the units are (no totals)."""
    name, blob = options.charsmap()
    return {
        "units": units_name(units),
        "normalization": name,
        "normalization_sha256": rules_digest(blob),
        "add_dummy_prefix": options.add_dummy_prefix,
        "remove_extra_whitespaces": options.remove_extra_whitespaces,
        "treat_whitespace_as_suffix": options.treat_whitespace_as_suffix,
        "max_sentence_length": options.max_sentence_length,
        "pretokenization_delimiter": options.pretokenization_delimiter,
        "meta_pieces": sorted({piece for _, piece, _ in meta if piece}),
    }


def header_line(fields: dict) -> bytes:
    """The first line of a count file (ends with "\\n")."""
    text = json.dumps(fields, ensure_ascii=True, sort_keys=False)
    return MAGIC + text.encode("ascii") + b"\n"


def parse_header(line: bytes, name: str) -> dict:
    """The header fields of a count file's first line; errors name ``name``."""
    if not line.startswith(MAGIC):
        raise InputError("%s:1: not a subtok count file (the first line must start with %r)."
                         % (name, MAGIC.decode().strip()))
    try:
        fields = json.loads(line[len(MAGIC):])
    except ValueError as exc:
        raise InputError("%s:1: the count file's header is not valid JSON (%s)." % (name, exc)) from None
    missing = [key for key in ("units",) + TOTALS if key not in fields]
    if not isinstance(fields, dict) or missing:
        raise InputError("%s:1: the count file's header lacks %s." % (name, ", ".join(missing)))
    for key in TOTALS:
        if not isinstance(fields[key], int) or not 0 <= fields[key] <= INT64_MAX:
            raise InputError("%s:1: the header's %s must be a count (0 to %d)." % (name, key, INT64_MAX))
    first, last = fields.get("first"), fields.get("last")
    if not (first is None or isinstance(first, str) and len(first) == 1) or not (
            last is None or isinstance(last, list) and len(last) == 2 and isinstance(last[0], str)
            and isinstance(last[1], int) and 1 <= last[1] <= INT64_MAX):
        raise InputError("%s:1: the header's first/last are not a character and a [word, count]."
                         % name)
    return fields


def shape_of(fields: dict) -> dict:
    """The header fields without the totals and edges."""
    return {key: value for key, value in fields.items() if key not in TOTALS + EDGES}


def differences(mine: dict, theirs: dict, prefix: str = "") -> list[str]:
    """The option names on which two shapes differ; inside JSON objects of
    one type (the families' tokenizer.json components) as dotted paths,
    e.g. ``normalizer.lowercase``. Only ``units`` when the shapes are of
    different families (their fields differ: the rest follows)."""
    if not prefix and mine.get("units") != theirs.get("units") and set(mine) != set(theirs):
        return ["units"]
    out = []
    for key in sorted(set(mine) | set(theirs)):
        a, b = mine.get(key), theirs.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict) and a.get("type") == b.get("type"):
            out.extend(differences(a, b, prefix + key + "."))
        else:
            out.append(prefix + key)
    return out


def _at(fields: dict, path: str):
    """The value at a dotted path of :func:`differences` (None if absent)."""
    for key in path.split("."):
        if not isinstance(fields, dict):
            return None
        fields = fields.get(key)
    return fields


def as_read(fields: dict) -> dict:
    """Header fields as a count file gives them back (JSON: tuples become
    lists), so that expected and read headers compare equal."""
    return json.loads(json.dumps(fields))


# ----------------------------------------------------------------------------
# records


def escape(unit: str) -> bytes:
    """A unit as it is written in a count file (UTF-8, escaped)."""
    if _NEEDS_ESCAPE.search(unit):
        unit = unit.translate(_ESCAPE)
    return unit.encode("utf-8", "surrogateescape")


def escape_followed(word: str, follower: str) -> bytes:
    """A unigram (word, follower) record's unit: both escaped, "\\>" between."""
    return escape(word) + b"\\>" + escape(follower)


def unescape_followed(text: bytes, name: str) -> tuple[str, str]:
    """The (word, follower) of a :func:`escape_followed` unit."""
    match = _FOLLOWED.match(text)
    if not match:
        raise InputError("%s: %r is not a word\\>follower record (count files of unigram "
                         "options have only those)." % (name, text.decode("utf-8", "replace")))
    return unescape(match.group(1), name), unescape(match.group(2), name)


def unescape(text: bytes, name: str = "<counts>", number: int = 0) -> str:
    """The unit of a written record; a bad escape is an error at ``name:number``."""
    unit = text.decode("utf-8", "surrogateescape")
    if "\\" not in unit:
        return unit

    def one(match) -> str:
        found = _UNESCAPE.get(match.group(1))
        if found is None:
            raise InputError("%s:%d: bad escape %r in a unit (only \\\\, \\t, \\n and \\r)."
                             % (name, number, match.group(0)))
        return found

    return _ESCAPED.sub(one, unit)


def read_records(handle: BinaryIO, name: str, first_line: int = 2) -> Iterator[tuple[bytes, int]]:
    """(escaped unit, count) of every record after the header, checked:
    two TAB-separated fields, a count from 1 to 2**63-1, units strictly
    ascending."""
    previous = None
    for number, line in enumerate(handle, first_line):
        if line.endswith(b"\n"):
            line = line[:-1]
        unit, tab, text = line.rpartition(b"\t")
        if not tab or b"\t" in unit:
            raise InputError("%s:%d: expected unit<TAB>count." % (name, number))
        if not _COUNT.match(text):
            raise InputError("%s:%d: the count %r is not a whole number."
                             % (name, number, text.decode("utf-8", "replace")))
        count = int(text)
        if not 1 <= count <= INT64_MAX:
            raise InputError("%s:%d: the count %d is out of range (1 to %d, 64 bits)."
                             % (name, number, count, INT64_MAX))
        if previous is not None and unit <= previous:
            raise InputError("%s:%d: units are not in strictly ascending (LC_ALL=C sort) order."
                             % (name, number))
        if b"\\" in unit and not _VALID.match(unit):
            raise InputError("%s:%d: bad escape in a unit (only \\\\, \\t, \\n, \\r and "
                             "the \\> of unigram records)." % (name, number))
        previous = unit
        yield unit, count


def sum_sorted(streams: list[Iterable[tuple[bytes, int]]], where: str) -> Iterator[tuple[bytes, int]]:
    """Merge sorted (unit, count) streams, summing the counts of equal units."""
    merged = heapq.merge(*streams, key=itemgetter(0))
    for unit, group in itertools.groupby(merged, key=itemgetter(0)):
        total = sum(count for _, count in group)
        if not total:  # a record that a join moved away entirely
            continue
        if total > INT64_MAX:
            raise TrainerError("%s: the count of %r adds up to %d, over %d (64 bits)."
                               % (where, unit.decode("utf-8", "replace"), total, INT64_MAX))
        yield unit, total


def write_records(out: BinaryIO, records: Iterable[tuple[bytes, int]]) -> None:
    """``unit<TAB>count`` lines, buffered."""
    buffer: list[bytes] = []
    size = 0
    for unit, count in records:
        line = b"%s\t%d\n" % (unit, count)
        buffer.append(line)
        size += len(line)
        if size >= WRITE_BUFFER:
            out.write(b"".join(buffer))
            buffer, size = [], 0
    out.write(b"".join(buffer))


# ----------------------------------------------------------------------------
# the table that spills


def parse_size(text: str) -> int:
    """``512M``, ``2G``, ``100k``, ``1000000`` (bytes) -> bytes."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)[iI]?[bB]?\s*", str(text))
    if not match:
        raise TrainerError("--max_memory=%s: expected a size such as 512M or 2G." % text)
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[match.group(2).lower()]
    size = int(float(match.group(1)) * scale)
    if size < 1:
        raise TrainerError("--max_memory=%s: must be at least 1 byte." % text)
    return size


class SpillTable:
    """Distinct units with counts, spilled to sorted run files past a budget.

    Use as a context manager: the temporary directory (under ``tmp_dir``,
    default the system's) is removed on leaving, however it is left.
    """

    def __init__(self, max_memory: int = DEFAULT_MAX_MEMORY, tmp_dir: str | None = None,
                 reserve: int = 0) -> None:
        #: The table's own budget: what ``max_memory`` leaves after
        #: ``reserve`` (the rest of the process), but never below an eighth
        #: of it, so that a budget too small to honour still counts, spilling
        #: often (:func:`count` warns).
        self.limit = max(max_memory - reserve, max_memory // 8)
        #: Whether ``reserve`` left the table less than that eighth.
        self.starved = max_memory - reserve < max_memory // 8
        self.tmp_dir = tmp_dir
        self.table: dict[bytes, int] = {}  # written unit (escaped) -> count
        self.used = 0
        self.runs: list[str] = []
        self.directory: str | None = None
        self.spills = 0

    def __enter__(self) -> "SpillTable":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Remove the run files and their directory."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
        self.runs = []

    def add(self, counts: dict[bytes, int]) -> None:
        """Add a chunk's counts (keys: written units, :func:`escape`); spill
        when the table is over budget."""
        table = self.table
        get = table.get
        grown = 0
        for unit, count in counts.items():
            old = get(unit)
            if old is None:
                table[unit] = count
                grown += ENTRY_BYTES + CHAR_BYTES * len(unit)
            else:
                table[unit] = old + count
        self.used += grown
        if self.used > self.limit:
            self.spill()

    def take_sorted(self) -> Iterator[tuple[bytes, int]]:
        """The in-memory table's records in order, the table emptied.

        Only the keys are sorted: sorting the items would build a tuple per
        unit besides the table, about half its size again, at the very
        moment the table is at its budget."""
        table, self.table, self.used = self.table, {}, 0
        keys = sorted(table)
        return zip(keys, map(table.__getitem__, keys))

    def spill(self) -> None:
        """Write the table as a sorted run file and empty it."""
        if not self.table:
            return
        self._write_run(self.take_sorted())
        self.spills += 1
        if len(self.runs) >= MAX_RUNS:
            runs, self.runs = self.runs, []
            self._write_run(sum_sorted([_run_records(path) for path in runs], "the spilled counts"))
            for path in runs:
                os.unlink(path)

    def _write_run(self, records: Iterable[tuple[bytes, int]]) -> None:
        if self.directory is None:
            try:
                self.directory = tempfile.mkdtemp(prefix="subtok-count-", dir=self.tmp_dir)
            except OSError as exc:
                raise OutputError("%s: cannot create a directory for spilled counts: %s "
                                  "(--tmp_dir)." % (self.tmp_dir or tempfile.gettempdir(),
                                                    exc.strerror or exc)) from None
        path = os.path.join(self.directory, "run-%06d.tsv" % (self.spills + len(self.runs)))
        try:
            with open(path, "wb") as out:
                write_records(out, records)
        except OSError as exc:
            raise OutputError("%s: cannot spill counts: %s (set --tmp_dir to a disk with room, "
                              "or raise --max_memory)." % (path, exc.strerror or exc)) from None
        self.runs.append(path)

    def records(self) -> Iterator[tuple[bytes, int]]:
        """Every unit once, sorted, with its total count."""
        streams: list[Iterable[tuple[bytes, int]]] = [_run_records(path) for path in self.runs]
        streams.append(self.take_sorted())
        return sum_sorted(streams, "the counts")


def resident_bytes() -> int:
    """This process's resident size now (0 where /proc cannot say)."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def counting_reserve(workers: int) -> int:
    """The part of ``--max_memory`` that is not the count table: the
    process as it stands, a chunk in flight, and the ``workers`` forked to
    normalize (later, from a parent this size; one worker is the process
    itself)."""
    return resident_bytes() + CHUNK_RESERVE + (WORKER_RESERVE * workers if workers > 1 else 0)


def _run_records(path: str) -> Iterator[tuple[bytes, int]]:
    """The records of a run file (written by us: not checked again)."""
    with open(path, "rb") as handle:
        for line in handle:
            unit, _, count = line[:-1].rpartition(b"\t")
            yield unit, int(count)


# ----------------------------------------------------------------------------
# counting a corpus


def counting_options(**kwargs) -> TrainerOptions:
    """Options for counting: spm_train's, with the vocabulary size out of
    the way (meta-piece ids must fit in it; nothing is trained)."""
    options = TrainerOptions.from_kwargs(**kwargs).load_files()
    options = options.replace(vocab_size=max(options.vocab_size, 1 << 30))
    options.validate()
    if options.input_sentence_size > 0:
        raise TrainerError("--input_sentence_size=%d: counting reads every sentence; sample the "
                           "input before counting." % options.input_sentence_size)
    return options


def count_corpus(options: TrainerOptions, table: SpillTable,
                 progress: Progress | None = None, lines: Iterable | None = None) -> dict:
    """Count ``options.input`` (or ``lines``, str or bytes) into ``table``;
    return the header fields."""
    progress = progress or Progress(False, options.minloglevel)
    if options.model_type_name in TOKENIZER_FILE_TYPES:
        return _count_family(options, table, progress, lines)
    units = count_units(options)
    meta = build_meta(options)
    size = _input_bytes(options)
    fields = shape(options, units, meta)
    sentences = nonempty = 0
    stream = read_sentences(options, progress, lines)
    stitch = _Stitch() if units[0] == "followed" else None
    for chunk_size, chunk_units, chunk_nonempty in unit_count_chunks(stream, options, meta, units, size):
        sentences += chunk_size
        nonempty += chunk_nonempty
        if stitch is not None:
            table.add(stitch.chunk(*chunk_units))
        else:
            table.add({escape(unit): count for unit, count in chunk_units.items()})
    if stitch is not None:
        table.add(stitch.end())
        fields.update(stitch.edges())
    fields.update(sentences=sentences, nonempty=nonempty)
    return fields


def _count_family(options: TrainerOptions, table: SpillTable, progress: Progress,
                  lines: Iterable | None) -> dict:
    """:func:`count_corpus` for WordPiece and byte-level BPE: the words or
    chunks of their own counting, chunk by chunk (the reading, chunks and
    workers of training, :func:`subtok.training.families.pretoken_count_chunks`).
    Both totals are the lines read (these families skip only empty lines)."""
    count_chunk, counter = pretoken_counter(options)
    fields = as_read(counter.shape)
    sentences = 0
    for size, part in pretoken_count_chunks(options, progress, lines, count_chunk, counter):
        sentences += size
        table.add({escape(unit): n for unit, n in part.items()})
    fields.update(sentences=sentences, nonempty=sentences)
    return fields


class _Stitch(FollowedStitch):
    """:class:`~subtok.training.followers.FollowedStitch` giving escaped units,
    and the header's edges."""

    def edges(self) -> dict:
        """The header's ``first`` and ``last`` (see :data:`EDGES`)."""
        last = None if self.pending is None else [self.pending, self.count]
        return {"first": self.first, "last": last}

    def chunk(self, counts: Counter, first: str | None, last: str | None,
              last_count: int) -> dict[bytes, int]:
        counts = super().chunk(counts, first, last, last_count)
        return {escape_followed(word, follower): n for (word, follower), n in counts.items()}

    def end(self) -> dict[bytes, int]:
        return {escape_followed(word, follower): n for (word, follower), n in super().end().items()}


def _input_bytes(options: TrainerOptions) -> int:
    """Bytes of the input files (standard input counts none)."""
    return sum(os.path.getsize(p) for p in options.input if p != "-" and os.path.isfile(p))


def write_count_file(output: str, fields: dict, records: Iterable[tuple[bytes, int]]) -> None:
    """Header and records, published atomically."""
    from subtok.atomic import atomic_writer
    with atomic_writer(output) as out:
        out.write(header_line(fields))
        write_records(out, records)


def count(output: str, *, max_memory: int | str = DEFAULT_MAX_MEMORY, tmp_dir: str | None = None,
          progress: Progress | None = None, lines: Iterable | None = None, **kwargs) -> dict:
    """``subtok count``: count the training units of ``input`` (or of
    ``lines``; spm_train options in ``kwargs``) into the count file
    ``output``; return its header."""
    options = counting_options(**kwargs)
    limit = parse_size(max_memory) if isinstance(max_memory, str) else max_memory
    progress = progress or Progress(False, options.minloglevel)
    # The workers the pass will fork, by the rule of the pass that forks them.
    if options.model_type_name in TOKENIZER_FILE_TYPES:
        workers = counting_workers(options, input_size(options, lines))
    else:
        workers = normalize_workers(options, _input_bytes(options))
    reserve = counting_reserve(workers)
    with SpillTable(limit, tmp_dir, reserve) as table:
        if table.starved and limit >= 1 << 20:
            progress.warning("--max_memory=%s is less than counting needs besides its table (about "
                             "%d MB with %d normalizing worker(s)); the table spills every %d KB."
                             % (max_memory, reserve >> 20, workers, table.limit >> 10))
        fields = count_corpus(options, table, progress, lines)
        write_count_file(output, fields, table.records())
    return fields


# ----------------------------------------------------------------------------
# reading and merging count files


class CountFiles:
    """Several count files opened together, their headers checked to agree."""

    def __init__(self, paths: list[str]) -> None:
        if not paths:
            raise InputError("no count file given.")
        self.paths = paths
        self.handles: list[BinaryIO] = []
        self.fields: dict | None = None
        #: unigram counts: (written unit, count change) that join the files
        #: in the order given (see :data:`EDGES`).
        self.joins: Counter = Counter()
        try:
            for path in paths:
                self._open(path)
        except BaseException:
            self.close()
            raise

    def _open(self, path: str) -> None:
        try:
            handle = open(path, "rb")
        except OSError as exc:
            raise InputError("%s: cannot open count file: %s." % (path, exc.strerror or exc)) from None
        self.handles.append(handle)
        fields = parse_header(handle.readline(), path)
        if self.fields is None:
            self.fields = dict(fields)
            return
        changed = differences(shape_of(self.fields), shape_of(fields))
        if changed:
            raise InputError("%s: counted with other options than %s (%s differ); count both "
                             "with the same options." % (path, self.paths[0], ", ".join(changed)))
        for key in TOTALS:
            self.fields[key] += fields[key]
            if self.fields[key] > INT64_MAX:
                raise InputError("%s: the header's %s add up to over %d (64 bits)."
                                 % (path, key, INT64_MAX))
        self._join(fields)

    def _join(self, fields: dict) -> None:
        """Unigram counts of text that goes on in ``fields``' file: the last
        word counted so far is followed by NUL + that file's first character."""
        if fields.get("first") is None:
            return
        last = self.fields.get("last")
        if last is not None:
            word, count = last
            self.joins[escape_followed(word, "")] -= count
            self.joins[escape_followed(word, "\x00" + fields["first"])] += count
        if self.fields.get("first") is None:
            self.fields["first"] = fields["first"]
        self.fields["last"] = fields["last"]

    def records(self) -> Iterator[tuple[bytes, int]]:
        """Every unit once, sorted, counts summed."""
        streams: list = [read_records(handle, path) for handle, path in zip(self.handles, self.paths)]
        streams.append(sorted(self.joins.items()))
        return sum_sorted(streams, ", ".join(self.paths))

    def close(self) -> None:
        for handle in self.handles:
            handle.close()
        self.handles = []

    def __enter__(self) -> "CountFiles":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def merge(paths: list[str], output: str) -> dict:
    """``subtok count --merge``: sum count files into ``output``."""
    with CountFiles(paths) as files:
        write_count_file(output, files.fields, files.records())
        return files.fields


# ----------------------------------------------------------------------------
# training from counts


def is_count_input(options: TrainerOptions) -> bool:
    """True when ``--input_format=tsv`` names subtok count files (told by the
    first line; sentencepiece's own ``sentence<TAB>freq`` files have none).
    A count file read as text would train on its header: an error."""
    if not options.input or "-" in options.input or not os.path.isfile(options.input[0]):
        return False  # (a pipe must not lose its first bytes to this look)
    try:
        with open(options.input[0], "rb") as handle:
            found = handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False
    if found and options.input_format != "tsv":
        raise TrainerError("%s is a subtok count file: train from it with --input_format=tsv."
                           % options.input[0])
    return found


def _refuse_sampling(options: TrainerOptions) -> str:
    """Count files cannot be sampled by sentence: a one-line error if
    ``--input_sentence_size`` asks for it. Returns the files' names, for
    messages."""
    where = ", ".join(options.input)
    if options.input_sentence_size > 0:
        raise TrainerError("--input_sentence_size=%d cannot sample count files (%s); sample "
                           "the text before counting." % (options.input_sentence_size, where))
    return where


def load_counted_corpus(options: TrainerOptions, progress: Progress | None = None) -> Corpus:
    """The :class:`~subtok.training.corpus.Corpus` of count files, as
    :func:`subtok.training.corpus.load_corpus` would make it from the text
    they count: characters counted from the units, the same alphabet, the
    units masked. Unigram gets its (word, follower) counts
    (``Corpus.followed``) instead of sentences."""
    where = _refuse_sampling(options)
    meta = build_meta(options)
    followed: dict[tuple[str, str], int] | None = None
    with CountFiles(list(options.input)) as files:
        _check_sp_shape(options, meta, files.fields, where)
        fields = files.fields
        units: Counter = Counter()
        if fields["units"].startswith("followed-"):
            followed = {}
            for unit, total in files.records():
                word, follower = unescape_followed(unit, where)
                followed[(word, follower)] = total
                units[word] += total
        else:
            for unit, total in files.records():
                units[unescape(unit, where, 0)] = total
    if not fields["sentences"]:
        raise TrainerError("the corpus is empty: %s counts no usable sentence." % where)
    if not (fields["nonempty"] or fields["sentences"] > 1):
        raise TrainerError("the corpus is empty after normalization (%s)." % where)
    counts = weighted_chars(units, units.values())
    alphabet = checked_alphabet(options, counts, where)
    kind = options.model_type_name
    if kind in ("bpe", "word") and fields["units"].startswith("words") and \
            SPACE_SYMBOL in counts and SPACE_SYMBOL not in alphabet:
        raise TrainerError("%s: \u2581 falls outside the alphabet (--character_coverage), so the "
                           "trainer would work on whole sentences, which word counts cannot give; "
                           "count with --split_by_whitespace=false, or raise --character_coverage."
                           % where)
    check_vocab_fits(options, alphabet, meta)
    unit_list = None
    if kind in ("bpe", "word"):
        unit_list = mask_units(units, alphabet, counts)
    del units
    if followed is not None:
        followed = mask_followed(followed, alphabet, counts)
    return Corpus(sentences=[], alphabet=alphabet,
                  meta=[(piece, kind) for _, piece, kind in meta],
                  meta_ids=[i for i, _, _ in meta], units=unit_list, followed=followed)


def load_counted_pretokens(options: TrainerOptions, expected: dict) -> Counter:
    """The units of count files for WordPiece or byte-level BPE training
    (its words or chunks with their counts, as
    :func:`subtok.training.families.count_pretokens` counts them from
    text); ``expected``: the header fields the training's counter makes
    (its ``shape``)."""
    where = _refuse_sampling(options)
    units: Counter = Counter()
    with CountFiles(list(options.input)) as files:
        _check_shape(as_read(expected), files.fields, where)
        for unit, total in files.records():
            units[unescape(unit, where, 0)] = total
    if not units:
        raise TrainerError("the corpus is empty: no text in %s." % where)
    return units


def _check_sp_shape(options: TrainerOptions, meta: list, fields: dict, where: str) -> None:
    """The count files must count what this training would: same options
    (any unit kind will do for CHAR, which needs only the characters)."""
    expected = shape(options, count_units(options), meta)
    if options.model_type_name == "char" and set(shape_of(fields)) == set(expected):
        expected["units"] = fields["units"]  # (not the families' units: their fields differ)
    _check_shape(expected, fields, where)


def _shown(value, limit: int = 60) -> str:
    """A header value in an error message (a long pattern cut short)."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _check_shape(expected: dict, fields: dict, where: str) -> None:
    """A one-line error naming every option on which the files' header
    differs from ``expected``."""
    found = shape_of(fields)
    changed = differences(expected, found)
    if changed:
        detail = "; ".join("%s: counted %s, training %s" % (key, _shown(_at(found, key)),
                                                             _shown(_at(expected, key)))
                           for key in changed)
        raise TrainerError("%s: counted with other options than this training uses (%s); count "
                           "again with the training's options." % (where, detail))


__all__ = ["count", "merge", "count_units", "count_corpus", "counting_options", "SpillTable",
           "CountFiles", "is_count_input", "load_counted_corpus", "load_counted_pretokens",
           "parse_size", "escape",
           "unescape", "read_records", "sum_sorted", "write_count_file", "DEFAULT_MAX_MEMORY"]
