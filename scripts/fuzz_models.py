#!/usr/bin/env python3
"""Fuzz the model loader and encode/decode against sentencepiece 0.2.3.

Each case mutates a real model from shared/data/models (bit flips,
truncation, pieces retyped, renamed, emptied or cut inside a character,
NaN/inf/huge scores, broken or bit-flipped charsmaps, odd special pieces,
flags flipped, a denormalizer added, ...), then loads it with
sentencepiece and with subtok and checks:

* sentencepiece refuses it  <=>  subtok refuses it with a ModelFileError;
* where both load: identical ids for every probe text (the library call
  and the CLI's line path), identical pieces and normalized text where
  sentencepiece's Python wrapper can return them, and identical decodes;
* subtok never raises anything else, and never takes longer than
  ``--timeout`` seconds of CPU time on one case (a hang).

Probe texts aim at what the mutation touched: the keys of charsmap rules
whose unit or target changed, the mutated pieces, plus corpus lines,
hostile lines and the model's own special pieces.

    python scripts/fuzz_models.py --cases 10000 --seed 1
    python scripts/fuzz_models.py --atheris -- -runs=2000   # coverage-guided

Every failing case is written to ``--out`` (default /tmp/subtok-fuzz) as
``<n>.model`` with ``<n>.txt`` saying what differed; turn each into a
regression test (tests/cli/test_hardening.py keeps them).

``--target tokenizer-json|tiktoken|vocab-txt|gpt2-files`` fuzzes the
loaders of the other formats instead, against tokenizers and tiktoken
(the mutations and checks are in fuzz_interop.py):

    python scripts/fuzz_models.py --target tiktoken --cases 1000 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import math
import random
import signal
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT.parent / "shared" / "data"

# Run as a script, this module is __main__; fuzz_interop imports it by name
# and must get this same module (one Hang class, which the alarm raises).
sys.modules.setdefault("fuzz_models", sys.modules[__name__])

# The piece types of ModelProto.SentencePiece.Type.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

HOSTILE = [b"", b" ", b"  a  b  ", b"\t x \r", b"a\xffb", b"a\xe2\x96b", b"\xed\xa0\x80x",
           b"\xc0\x80", b"\xf4\x90\x80\x80", b"\x80\x81", b"\xe3\x81", "\u2581".encode(),
           "a\u2581 \u2581\u2581b".encode(), "\uff21\uff22\u3000\uff43 \ufb01".encode(),
           "e\u0301 \U0001f468\u200d\U0001f469 \u00a0\u200b".encode(),
           "<s> </s> <unk> <pad> <0x41> [CLS]".encode(), b"x" * 300,
           "\u65e5\u672c\u8a9e\u3067\u3059\u3002".encode(), "Hello wor\u0308ld 12345".encode()]


@dataclass
class Source:
    """A real model, parsed once, with what probe texts are made from."""

    path: Path
    data: bytes = field(repr=False)
    proto: object = field(repr=False)
    rules: dict[bytes, int] = field(default_factory=dict, repr=False)  # charsmap key -> leaf value
    node_keys: dict[int, list[bytes]] = field(default_factory=dict, repr=False)
    lines: list[bytes] = field(default_factory=list, repr=False)


def load_sources(pattern: str, corpus_lines: list[bytes], names: list[str] | None = None) -> list[Source]:
    """The models matching ``pattern`` (or named in ``names``), parsed."""
    from subtok._proto import sentencepiece_model_raw_pb2 as pb
    sources = []
    paths = sorted((DATA / "models").glob(pattern))
    if names is not None:
        paths = [DATA / "models" / (name + ".model") for name in names]
    for path in paths:
        data = path.read_bytes()
        source = Source(path, data, pb.ModelProto.FromString(data), lines=corpus_lines)
        blob = source.proto.normalizer_spec.precompiled_charsmap
        if blob:
            source.rules, source.node_keys = charsmap_rules(blob)
        sources.append(source)
    if not sources:
        sys.exit("no models match %s in %s" % (pattern, DATA / "models"))
    return sources


def charsmap_rules(blob: bytes, limit: int = 400_000) -> tuple[dict[bytes, int], dict[int, list[bytes]]]:
    """Every (key -> leaf value) of a charsmap, and for each unit a few
    keys whose path goes through it (written here, not taken from
    subtok, so that the fuzzer does not share subtok's mistakes)."""
    size = struct.unpack_from("<I", blob)[0]
    units = struct.unpack_from("<%dI" % (size // 4), blob, 4)
    children: dict[int, list[tuple[int, int]]] = {}
    for index, unit in enumerate(units):
        label = unit & 0x800000FF
        if 0 < label < 256:
            children.setdefault(index ^ label, []).append((label, index))

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & 0x200) >> 6)

    rules: dict[bytes, int] = {}
    node_keys: dict[int, list[bytes]] = {}
    stack = [(0, b"", ())]
    while stack and len(rules) < limit:
        node, key, path = stack.pop()
        for label, child in children.get(node ^ offset(units[node]), ()):
            longer = key + bytes([label])
            if len(longer) > 24:
                continue
            through = path + (child,)
            if units[child] & 0x100:
                rules[longer] = units[child ^ offset(units[child])] & 0x7FFFFFFF
                for unit in through:
                    found = node_keys.setdefault(unit, [])
                    if len(found) < 3:
                        found.append(longer)
            stack.append((child, longer, through))
    return rules, node_keys


# ----------------------------------------------------------------- mutations

def mutate(source: Source, rng: random.Random) -> tuple[bytes, str, list[bytes]]:
    """A mutated copy of ``source``: (model bytes, what was done, probe
    texts aimed at it)."""
    kind = rng.choice(MUTATIONS)
    proto = type(source.proto)()
    proto.CopyFrom(source.proto)
    hints: list[bytes] = []
    what = kind.__name__
    result = kind(source, proto, rng, hints)
    if isinstance(result, bytes):  # a mutation of the serialized file
        return result, what, hints
    return proto.SerializeToString(), "%s %s" % (what, result or ""), hints


def flip_file_bits(source, proto, rng, hints):
    data = bytearray(source.data)
    for _ in range(rng.choice((1, 1, 2, 4, 16))):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def truncate_file(source, proto, rng, hints):
    return source.data[:rng.randrange(len(source.data))]


def _piece_index(proto, rng, types=None) -> int:
    candidates = [i for i, p in enumerate(proto.pieces) if types is None or p.type in types]
    return rng.choice(candidates) if candidates else rng.randrange(len(proto.pieces))


def _hint_piece(piece: bytes, hints: list[bytes]) -> None:
    text = piece.decode("utf-8", "replace").replace("\u2581", " ")
    hints.extend([piece, text.encode(), ("x" + text + " " + text + "y").encode()])


def flip_piece_bits(source, proto, rng, hints):
    i = _piece_index(proto, rng)
    piece = bytearray(proto.pieces[i].piece)
    if piece:
        piece[rng.randrange(len(piece))] ^= 1 << rng.randrange(8)
    _hint_piece(proto.pieces[i].piece, hints)
    proto.pieces[i].piece = bytes(piece)
    _hint_piece(bytes(piece), hints)
    return "piece %d -> %r" % (i, bytes(piece))


def cut_piece(source, proto, rng, hints):
    """Cut a piece short, often inside a character (bytes that are not UTF-8)."""
    i = _piece_index(proto, rng)
    piece = proto.pieces[i].piece
    cut = piece[:rng.randrange(len(piece))] if len(piece) > 1 else piece
    if rng.random() < 0.5:
        cut = piece + rng.choice([b"\xe2", b"\xe2\x96", b"\x81", b"\xff", b"\xc3"])
    _hint_piece(piece, hints)
    proto.pieces[i].piece = cut
    return "piece %d -> %r" % (i, cut)


def odd_piece(source, proto, rng, hints):
    i = _piece_index(proto, rng)
    odd = rng.choice([b"", b"\0", b"a\0b", b"\xff\xfe", b"x" * 8000, b"x" * 7999,
                      proto.pieces[rng.randrange(len(proto.pieces))].piece,
                      b"\xe2\x96\x81\xe2\x96", "\u2581\u2581".encode()])
    _hint_piece(proto.pieces[i].piece, hints)
    proto.pieces[i].piece = odd
    return "piece %d -> %r" % (i, odd[:20])


def retype_pieces(source, proto, rng, hints):
    changes = []
    for _ in range(rng.choice((1, 1, 3, 20))):
        i = _piece_index(proto, rng)
        kind = rng.choice([NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE])
        proto.pieces[i].type = kind
        _hint_piece(proto.pieces[i].piece, hints)
        changes.append("%d:%d" % (i, kind))
    return " ".join(changes)


def user_defined_cut(source, proto, rng, hints):
    """A USER_DEFINED piece that ends (or starts) inside a character."""
    i = _piece_index(proto, rng, (NORMAL,))
    piece = proto.pieces[i].piece
    raw = piece.decode("utf-8", "surrogateescape").replace("\u2581", " ").encode()
    cut = rng.choice([piece[:-1] or piece, piece[1:] or piece, raw[:-1] or raw,
                      b"a\xe2", b"\xe2\x96", b"\x96\x81", b"\xe3\x81", b"\x81"])
    proto.pieces[i].piece = cut
    proto.pieces[i].type = USER_DEFINED
    hints.extend([piece, raw, b"a " + raw + b" \xe3\x81\x81 a\xe2\x96\x81"])
    return "piece %d -> user %r" % (i, cut)


def odd_scores(source, proto, rng, hints):
    changes = []
    for _ in range(rng.choice((1, 2, 10, 100))):
        i = _piece_index(proto, rng)
        value = rng.choice([math.nan, -math.nan, math.inf, -math.inf, 3.4e38, -3.4e38, 0.0, -0.0,
                            1e-45, 1e5, -1e5, 1e30, proto.pieces[i].score * -1])
        if rng.random() < 0.3:  # a bit flip of the float32
            bits = struct.unpack("<I", struct.pack("<f", proto.pieces[i].score))[0]
            value = struct.unpack("<f", struct.pack("<I", bits ^ (1 << rng.randrange(32))))[0]
        proto.pieces[i].score = value
        _hint_piece(proto.pieces[i].piece, hints)
        changes.append("%d:%r" % (i, value))
    return " ".join(changes[:5])


def _charsmap(proto) -> bytes:
    return proto.normalizer_spec.precompiled_charsmap


def _keys_near(source: Source, units: list[int], rng) -> list[bytes]:
    keys = []
    for unit in units:
        for near in (unit, unit ^ 1, unit ^ 0x80, unit ^ rng.randrange(256)):
            keys.extend(source.node_keys.get(near, ()))
    return keys


def _hint_keys(keys: list[bytes], hints: list[bytes]) -> None:
    keys = keys[:12]
    hints.extend(keys)
    if keys:
        hints.append(b" ".join(keys))
        hints.append(b"a" + b"b".join(keys) + b"c")


def flip_charsmap_trie(source, proto, rng, hints):
    blob = bytearray(_charsmap(proto))
    if not blob:
        return odd_scores(source, proto, rng, hints)
    size = struct.unpack_from("<I", blob)[0]
    flipped = []
    for _ in range(rng.choice((1, 1, 2, 8))):
        unit = rng.randrange(max(1, size // 4))
        bit = rng.choice((rng.randrange(32), 8, 9, 31, rng.randrange(8), 10 + rng.randrange(10)))
        pos = 4 + 4 * unit + bit // 8
        if pos < len(blob):
            blob[pos] ^= 1 << (bit % 8)
        flipped.append(unit)
    proto.normalizer_spec.precompiled_charsmap = bytes(blob)
    _hint_keys(_keys_near(source, flipped, rng), hints)
    return "units %s" % flipped


def flip_charsmap_strings(source, proto, rng, hints):
    blob = bytearray(_charsmap(proto))
    if not blob:
        return odd_scores(source, proto, rng, hints)
    size = struct.unpack_from("<I", blob)[0]
    start = 4 + size
    where = []
    for _ in range(rng.choice((1, 1, 3))):
        pos = rng.randrange(start, len(blob))
        blob[pos] ^= 1 << rng.randrange(8)
        where.append(pos - start)
    proto.normalizer_spec.precompiled_charsmap = bytes(blob)
    keys = []
    for offset in where:
        keys.extend(key for key, value in source.rules.items() if value <= offset < value + 40)
    rng.shuffle(keys)
    _hint_keys(keys, hints)
    return "strings at %s" % where


def break_charsmap(source, proto, rng, hints):
    blob = _charsmap(proto) or b"\0" * 2048
    size = struct.unpack_from("<I", blob)[0] if len(blob) >= 4 else 0
    choice = rng.randrange(7)
    if choice == 0:
        header = rng.choice([0, 4, 1023, 1024, size + 1024, max(0, size - 1024), 2 ** 31])
        blob = struct.pack("<I", header) + blob[4:]
    elif choice == 1:
        blob = blob[:rng.randrange(len(blob))]
    elif choice == 2:
        blob = blob[:-1] + b"x"
    elif choice == 3:  # a block of units zeroed
        at = 4 + 1024 * rng.randrange(max(1, size // 1024))
        blob = blob[:at] + b"\0" * 1024 + blob[at + 1024:]
    elif choice == 4:  # a root with no children at all
        blob = struct.pack("<I", 1024) + struct.pack("<I", 1 << 10) + b"\0" * 1020 + b"\0"
    elif choice == 5:
        blob = blob[:4 + size] + b"\0"  # no targets left
    else:
        blob = b"\x01\x02\x03"
    proto.normalizer_spec.precompiled_charsmap = blob
    hints.extend(rng.sample(list(source.rules), min(8, len(source.rules))))
    return "charsmap form %d" % choice


def odd_specials(source, proto, rng, hints):
    spec = proto.trainer_spec
    pieces = [p.piece for p in proto.pieces]
    name = rng.choice(["unk_piece", "bos_piece", "eos_piece", "pad_piece", "unk_surface"])
    value = rng.choice(pieces + [b"", b"\xff", b"<unk>", b"\xe2\x96"])
    setattr(spec, name, value)
    if rng.random() < 0.3:
        setattr(spec, rng.choice(["unk_id", "bos_id", "eos_id", "pad_id"]),
                rng.choice([-1, 0, 2 ** 31 - 1, -(2 ** 31), len(pieces), len(pieces) - 1]))
    return "%s=%r" % (name, value[:20])


def flip_flags(source, proto, rng, hints):
    spec, norm = proto.trainer_spec, proto.normalizer_spec
    choice = rng.randrange(6)
    if choice == 0:
        spec.byte_fallback = not spec.byte_fallback
    elif choice == 1:
        spec.model_type = rng.choice([1, 2, 3, 4])
    elif choice == 2:
        spec.treat_whitespace_as_suffix = not spec.treat_whitespace_as_suffix
    elif choice == 3:
        for key in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
            setattr(norm, key, rng.random() < 0.5)
    elif choice == 4:
        proto.denormalizer_spec.precompiled_charsmap = rng.choice(
            [norm.precompiled_charsmap, norm.precompiled_charsmap[:-7], b""])
        proto.denormalizer_spec.add_dummy_prefix = False
    else:
        norm.precompiled_charsmap = b""
    hints.append(b"  Hello   W\xc3\xb6rld  \xe2\x96\x81 ")
    return "flags %d" % choice


def odd_byte_pieces(source, proto, rng, hints):
    bytes_at = [i for i, p in enumerate(proto.pieces) if p.type == BYTE]
    if not bytes_at:
        i = _piece_index(proto, rng)
        proto.pieces[i].type = BYTE
        proto.pieces[i].piece = rng.choice([b"<0x41>", b"<0x4G>", b"x"])
        return "byte piece added at %d" % i
    i = rng.choice(bytes_at)
    proto.pieces[i].piece = rng.choice([b"<0x0a>", b"<0xZZ>", b"<0x100>", b"<0x 1>", b"A",
                                        b"<0x%02X>" % rng.randrange(256)])
    hints.append(b"\x0a\x41 \xc3\xa9 \xf0\x9f\x98\x80")
    return "byte piece %d -> %r" % (i, proto.pieces[i].piece)


def drop_pieces(source, proto, rng, hints):
    keep = [p for p in proto.pieces]
    for _ in range(rng.choice((1, 1, 5))):
        if keep:
            del keep[rng.randrange(len(keep))]
    del proto.pieces[:]
    proto.pieces.extend(keep)
    return "%d pieces" % len(keep)


def unknown_fields(source, proto, rng, hints):
    """Field 4 (self_test_data, reserved in 0.2.3) and fields no schema has."""
    extra = rng.choice([b"\x22\x03abc", b"\x20\x07", b"\xd0\x0f\x01", b"\x22\x02\xff\xff"])
    return proto.SerializeToString() + extra


MUTATIONS = [flip_file_bits, truncate_file, flip_piece_bits, cut_piece, odd_piece, retype_pieces,
             user_defined_cut, odd_scores, flip_charsmap_trie, flip_charsmap_trie,
             flip_charsmap_strings, flip_charsmap_strings, break_charsmap, odd_specials,
             flip_flags, odd_byte_pieces, drop_pieces, unknown_fields]


# ----------------------------------------------------------------- checking

class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


@dataclass
class Outcome:
    """What one case came to."""

    kind: str  # both-load, both-refuse, only-spm-loads, only-subtok-loads, crash, hang, differs
    detail: str = ""


def probe_texts(source: Source, hints: list[bytes], rng: random.Random, count: int) -> list[bytes]:
    texts = list(hints)
    texts += rng.sample(HOSTILE, 4)
    texts += rng.sample(source.lines, min(4, len(source.lines)))
    specials = [p.piece for p in source.proto.pieces if p.type in (CONTROL, USER_DEFINED)][:30]
    if specials:
        texts.append(b" ".join(specials))
    if source.rules:
        keys = rng.sample(list(source.rules), min(6, len(source.rules)))
        texts.append(b" ".join(keys))
    return texts[:count]


def compare(blob: bytes, texts: list[bytes]) -> Outcome:
    """Load ``blob`` with both and compare; never raises (but Hang)."""
    import sentencepiece as spm
    from subtok import ModelFileError, SentencePieceProcessor
    try:
        theirs = spm.SentencePieceProcessor(model_proto=blob)
    except Exception as exc:  # sentencepiece refuses with RuntimeError (or others)
        theirs, refusal = None, str(exc)
    try:
        ours = SentencePieceProcessor(model_proto=blob)
    except ModelFileError as exc:
        ours = None
        if theirs is not None:
            return Outcome("only-spm-loads", str(exc))
        return Outcome("both-refuse", "%s | %s" % (refusal, exc))
    except Hang:
        raise
    except Exception as exc:  # anything else is a crash
        return Outcome("crash", "load: %s: %s" % (type(exc).__name__, exc))
    if theirs is None:
        return Outcome("only-subtok-loads", refusal)
    try:
        return _compare_encodings(theirs, ours, texts)
    except Hang:
        raise
    except Exception as exc:
        import traceback
        return Outcome("crash", "encode: %s: %s\n%s" % (type(exc).__name__, exc,
                                                       traceback.format_exc(limit=-4)))


def _compare_encodings(theirs, ours, texts: list[bytes]) -> Outcome:
    from subtok.lines.fastpath.lines import LineCache  # the CLI's line path
    for text in texts:
        expected = theirs.encode(text)
        got = ours.encode(text)
        if got != expected:
            return Outcome("differs", "encode %r: spm %s subtok %s" % (text[:80], expected[:20], got[:20]))
        line = text.split(b"\n")[0]
        ids = LineCache(ours).encode_line(line.decode("utf-8", "surrogateescape"), True)
        if ids != " ".join(map(str, theirs.encode(line))):
            return Outcome("differs", "encode_line %r" % line[:80])
        for what, mine, spms in (
                ("pieces", lambda: ours.encode(text, out_type=str),
                 lambda: theirs.encode(text, out_type=str)),
                ("normalize", lambda: ours.normalize(text), lambda: theirs.normalize(text)),
                ("decode", lambda: ours.decode(expected), lambda: theirs.decode(expected))):
            try:
                want = spms()
            except UnicodeDecodeError:  # its wrapper cannot return bytes that are not text
                continue
            have = mine()
            if _as_bytes(have) != _as_bytes(want):
                return Outcome("differs", "%s %r: spm %r subtok %r" % (what, text[:60], want, have))
    return Outcome("both-load")


def _as_bytes(value):
    """Results as bytes (sentencepiece returns bytes for bytes input)."""
    if isinstance(value, list):
        return [_as_bytes(item) for item in value]
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value


# ----------------------------------------------------------------- driver

def corpus_sample(rng: random.Random, count: int = 400) -> list[bytes]:
    lines = []
    for path in sorted((DATA / "corpora").glob("*.txt")):
        if path.stat().st_size > 5_000_000:
            continue
        found = path.read_bytes().split(b"\n")
        lines.extend(rng.sample(found, min(count // 10, len(found))))
    return [line for line in lines if line]


class ModelTarget:
    """The model loader and encode/decode against sentencepiece (the
    interface the targets of fuzz_interop.py share)."""

    name = "models"

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def load_sources(self, lines: list[bytes]) -> list[Source]:
        return load_sources(self.pattern, lines)

    mutate = staticmethod(mutate)
    probe_texts = staticmethod(probe_texts)
    compare = staticmethod(compare)


def target_named(name: str, models: str):
    """The target ``--target`` names."""
    if name == "models":
        return ModelTarget(models)
    from fuzz_interop import TARGETS
    return TARGETS[name]


#: Outcomes that are no failure: both agree, or they differ on purpose
#: (fuzz_interop.STRICTER, LENIENT). A known gap (fuzz_interop.KNOWN_GAPS)
#: is counted apart and not saved.
AGREED = ("both-load", "both-refuse", "stricter", "lenient", "known-gap")
KINDS = ["both-load", "both-refuse", "stricter", "lenient", "known-gap", "only-spm-loads",
         "only-reference-loads", "only-subtok-loads", "crash", "hang", "differs"]


def save_case(stem: Path, blob) -> None:
    """A failing case's file(s): ``<stem>.model``, or one per file name."""
    if isinstance(blob, bytes):
        stem.with_suffix(".model").write_bytes(blob)
        return
    for name, data in blob.items():
        Path("%s.%s" % (stem, name)).write_bytes(data)


stopping = []


def _stop(signum, frame):
    """Finish the case under way, then print the summary."""
    stopping.append(signum)


def run(args) -> int:
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    rng = random.Random(args.seed)
    target = target_named(args.target, args.models)
    sources = target.load_sources(corpus_sample(random.Random(args.seed)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    counts: collections.Counter = collections.Counter()
    mutations: collections.Counter = collections.Counter()
    failures = 0
    started = time.monotonic()
    # A hang is --timeout seconds of this process's CPU time, not of the
    # clock: on a loaded machine a slow case is no hang.
    signal.signal(signal.SIGPROF, _alarm)
    last = args.first - 1
    for case in range(args.cases):
        source = rng.choice(sources)
        if case < args.first or (args.only and case not in args.only):  # resuming, or rerunning some
            continue
        if stopping:  # SIGINT or SIGTERM: the summary of the cases run so far
            break
        case_rng = random.Random("%d:%d" % (args.seed, case))
        try:
            blob, what, hints = target.mutate(source, case_rng)
            texts = target.probe_texts(source, hints, case_rng, args.texts)
        except Exception as exc:  # a bug of this script: counted apart, the run goes on
            counts["fuzzer-error"] += 1
            print("case %d: fuzzer error %s: %s" % (case, type(exc).__name__, exc), flush=True)
            continue
        signal.setitimer(signal.ITIMER_PROF, args.timeout)
        try:
            outcome = target.compare(blob, texts)
        except Hang:
            outcome = Outcome("hang", "over %d s of CPU time" % args.timeout)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        last = case
        counts[outcome.kind] += 1
        mutations[what.split()[0]] += 1
        if outcome.kind not in AGREED:
            failures += 1
            stem = out / ("%s-%d-%d" % (target.name, args.seed, case))
            save_case(stem, blob)
            stem.with_suffix(".txt").write_text("%s\n%s: %s\n%s\ntexts: %r\n" % (
                source.path.name, outcome.kind, what, outcome.detail, texts), errors="replace")
            print("case %d (%s, %s): %s %s" % (case, source.path.name, what, outcome.kind,
                                                outcome.detail[:300]), flush=True)
        if args.progress and (case + 1) % args.progress == 0:  # counts since --first
            print("... %d cases, %s, %.0f s" % (case + 1, dict(counts), time.monotonic() - started),
                  flush=True)
    elapsed = time.monotonic() - started
    print("target %s, seed %d: cases %s in %.0f s: %s" % (
        target.name, args.seed, ",".join(map(str, sorted(args.only))) if args.only
        else "%d..%d" % (args.first, last), elapsed,
        ", ".join("%s %d" % (kind, counts[kind]) for kind in KINDS)))
    print("mutations: %s" % dict(sorted(mutations.items())))
    if counts["fuzzer-error"]:
        print("errors of this script (not of subtok): %d" % counts["fuzzer-error"])
    return 1 if failures or counts["fuzzer-error"] else 0


def run_atheris(args, rest: list[str]) -> int:
    """Coverage-guided: libFuzzer picks which mutated models to keep
    mutating by the subtok code they reach. The fuzz input is a seed for
    :func:`mutate` (and the source model), so every input is a structured
    mutation of a real model, not random bytes."""
    import atheris
    with atheris.instrument_imports(include=["subtok"]):
        __import__("subtok.processor")  # instrumented as it is imported
    sources = load_sources(args.models, corpus_sample(random.Random(args.seed)))

    def one_input(data: bytes) -> None:
        rng = random.Random(data)
        source = sources[int.from_bytes(data[:2] or b"\0", "little") % len(sources)]
        blob, what, hints = mutate(source, rng)
        outcome = compare(blob, probe_texts(source, hints, rng, args.texts))
        if outcome.kind not in ("both-load", "both-refuse"):
            path = Path(args.out) / ("atheris-%s.model" % hex(hash(data) & 0xFFFFFFFF))
            path.write_bytes(blob)
            raise AssertionError("%s (%s): %s %s" % (source.path.name, what, outcome.kind,
                                                     outcome.detail[:300]))

    Path(args.out).mkdir(parents=True, exist_ok=True)
    atheris.Setup([sys.argv[0]] + rest, one_input)
    atheris.Fuzz()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--first", type=int, default=0,
                        help="start at this case (to resume a run: same seed, same cases)")
    parser.add_argument("--only", type=lambda text: {int(n) for n in text.split(",")}, default=None,
                        help="run only these cases (comma-separated numbers below --cases)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", default="models",
                        choices=["models", "tokenizer-json", "tiktoken", "vocab-txt", "gpt2-files"],
                        help="what to mutate (fuzz_interop.py holds all but models)")
    parser.add_argument("--models", default="*.model", help="glob in shared/data/models")
    parser.add_argument("--texts", type=int, default=24, help="probe texts per case")
    parser.add_argument("--timeout", type=int, default=60,
                        help="seconds of CPU time before a case is a hang")
    parser.add_argument("--out", default="/tmp/subtok-fuzz", help="where failing cases go")
    parser.add_argument("--progress", type=int, default=0, help="print counts every N cases")
    parser.add_argument("--atheris", action="store_true", help="coverage-guided (atheris)")
    args, rest = parser.parse_known_args()
    if args.atheris:
        return run_atheris(args, [a for a in rest if a != "--"])
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
