"""Fuzz targets for the loaders of other libraries' files (issue 20, item 5).

Each target mutates a real file of ``shared/data/interop`` and loads the
copy with the reference library and with subtok:

* ``tokenizer-json``: a ``tokenizer.json`` (``tokenizers.Tokenizer``
  against ``subtok.formats.load_any``, the CLI's loader);
* ``tiktoken``: ``cl100k_base.tiktoken`` (tiktoken's ``load_tiktoken_bpe``
  and ``Encoding`` with cl100k_base's definition against
  ``subtok.formats.tiktoken.load_tiktoken``);
* ``vocab-txt``: BERT's ``vocab.txt`` (``tokenizers.BertWordPieceTokenizer``
  against ``bert_wordpiece_json``);
* ``gpt2-files``: GPT-2's ``vocab.json`` + ``merges.txt``
  (``tokenizers.ByteLevelBPETokenizer`` against ``byte_level_bpe_json``).

The property: the reference refuses the file <=> subtok refuses it with a
SubtokError (which the CLI prints as one line); where both load, identical
ids, tokens, offsets and decoded text on probe texts, or both refusing the
same text; never another exception and never a hang. A few refusals are
subtok's on purpose where the reference silently drops data (a token
listed twice, a special id that a rank has): those are counted as
``stricter``, by their message (:data:`STRICTER`), not as failures.

``scripts/fuzz_models.py --target NAME`` runs these; the mutations here
are written from the file formats, not from subtok's readers.
"""

from __future__ import annotations

import base64
import json
import math
import os
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from fuzz_models import DATA, HOSTILE, Hang, Outcome

INTEROP = DATA / "interop"

#: subtok's refusals that are stricter than the reference on purpose (the
#: reference keeps one of two entries and loses the other, decodes an id
#: shared by two tokens as either, wraps an id over 32 bits, drops
#: characters of a token, makes encodings whose ids and tokens differ in
#: length, or reads a charsmap that fails sentencepiece's own check
#: unchecked): message parts.
STRICTER = {
    "vocab-txt": ("is already on line",),
    "tiktoken": ("is listed twice", "which a token of the file has",
                 "is not base64 (characters other", "is not a decimal number"),
    "tokenizer-json": ("share id", "which special_tokens lacks", 'needs "ids" and "tokens" of one length',
                       "precompiled_charsmap is invalid", "Trie data size", "must be null terminated"),
    "gpt2-files": ("share id", "must be at most 4294967295"),
}


#: Differences known and not fixed yet (docs/hardening.md), counted apart
#: as ``known-gap``: tokenizers >= 0.20 reads a normalizer, pre-tokenizer,
#: post-processor or decoder whose "type" is missing or not a known name
#: as the first of its stage's untagged (legacy) forms that fits its
#: fields; subtok refuses it (models do follow the untagged order).
KNOWN_GAPS = {"tokenizer-json": ('has no "type"', "unknown normalizer type", "unknown pre-tokenizer type",
                                 "unknown post-processor type", "unknown decoder type")}
#: tokenizers' refusals that subtok does not share, on purpose
#: (docs/tokenizer-json.md, "Legacy Metaspace"): counted as ``lenient``.
LENIENT = {"tokenizer-json": ("add_prefix_space does not match declared prepend_scheme",)}


def legacy_metaspace(files: dict[str, bytes]) -> bool:
    """Whether a tokenizer.json has a Metaspace with ``add_prefix_space:
    false`` and no ``prepend_scheme``, which subtok reads as "never" and
    tokenizers 0.23.3 refuses (docs/tokenizer-json.md)."""
    try:
        stack = [json.loads(files.get("tokenizer.json", b"{}"))]
    except ValueError:
        return False
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if (node.get("type") == "Metaspace" and node.get("add_prefix_space") is False
                    and "prepend_scheme" not in node):
                return True
            stack.extend(value for value in node.values() if isinstance(value, (dict, list)))
        elif isinstance(node, list) and len(node) < BIG:
            stack.extend(node)
    return False


@dataclass
class InteropSource:
    """A real file (or pair of files) and what probe texts are made from."""

    path: Path
    files: dict[str, bytes] = field(repr=False)  # name in the case dir -> content
    lines: list[bytes] = field(default_factory=list, repr=False)
    words: list[str] = field(default_factory=list, repr=False)  # tokens worth probing
    whole: bool = True  # False: cut to its first SMALL ids


# ----------------------------------------------------------------- JSON mutations

ODD_VALUES = [None, True, False, 0, -1, 1, 1.5, 2 ** 32, 2 ** 64, "", "x", "\u2581", [], {},
              math.nan, math.inf]
ODD_TEXT = ["", " ", "(", "[", "\\", "*", "\u2581", "##", "<unk>", "[UNK]", "\ud800", "\u0120",
            "a b", "\x00"]
TYPE_NAMES = ["BPE", "WordPiece", "WordLevel", "Unigram", "Sequence", "NFC", "NFKC", "Lowercase",
              "BertNormalizer", "Precompiled", "Replace", "Prepend", "Strip", "StripAccents",
              "ByteLevel", "Metaspace", "Whitespace", "WhitespaceSplit", "Split", "Punctuation",
              "Digits", "BertPreTokenizer", "TemplateProcessing", "RobertaProcessing",
              "BertProcessing", "ByteFallback", "Fuse", "CTC", "Nope", "bpe"]
BIG = 64  # a container longer than this is a vocabulary or merges: only a few entries visited


def json_slots(data, rng: random.Random, limit: int = 4000) -> list[tuple[object, object]]:
    """(container, key) for the values of a JSON tree; of long containers
    (vocabularies, merges) only a few random entries."""
    slots = []
    stack = [data]
    while stack and len(slots) < limit:
        node = stack.pop()
        if isinstance(node, dict):
            keys = list(node)
        elif isinstance(node, list):
            keys = list(range(len(node)))
        else:
            continue
        if len(keys) > BIG:
            keys = rng.sample(keys, 6)
        for key in keys:
            slots.append((node, key))
            stack.append(node[key])
    return slots


def change_value(value, rng: random.Random, words: list[str]):
    """Another value where ``value`` was: of another type, or a near one."""
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(ODD_VALUES)
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return rng.choice([value + 1, value - 1, -value, value * 1000, 0, 2 ** 31, 2 ** 63,
                           -(2 ** 63) - 1, float(value) + 0.5])
    if isinstance(value, str):
        if rng.random() < 0.3 and words:
            return rng.choice(words)
        cut = rng.randrange(len(value) + 1)
        return value[:cut] + rng.choice(ODD_TEXT) + value[cut + rng.choice((0, 0, 1)):]
    if isinstance(value, list):
        if value and rng.random() < 0.5:
            return value[:-1] if rng.random() < 0.5 else value + [value[rng.randrange(len(value))]]
        return value[::-1]
    return rng.choice(ODD_VALUES)


def mutate_json(data, rng: random.Random, words: list[str]) -> str:
    """Change, drop or retype a few values of ``data`` (in place)."""
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 4))):
        slots = json_slots(data, rng)
        if not slots:
            break
        node, key = rng.choice(slots)
        roll = rng.random()
        if roll < 0.2:
            del node[key]
            done.append("drop %r" % (key,))
        elif key == "type" and roll < 0.6:
            node[key] = rng.choice(TYPE_NAMES)
            done.append("type %r" % node[key])
        else:
            node[key] = change_value(node[key], rng, words)
            done.append("%r=%r" % (key, str(node[key])[:30]))
    return " ".join(done)


def mutate_vocab_entries(vocab: dict, rng: random.Random) -> str:
    """An id shared, out of range or negative; a token renamed or gone."""
    tokens = list(vocab)
    token = rng.choice(tokens)
    roll = rng.randrange(5)
    if roll == 0:
        vocab[token] = vocab[rng.choice(tokens)]
        return "id shared %r" % token
    if roll == 1:
        vocab[token] = rng.choice([len(vocab), len(vocab) + 1000, 2 ** 32, -1])
        return "id %r -> %r" % (token, vocab[token])
    if roll == 2:
        vocab[token + rng.choice(ODD_TEXT)] = vocab.pop(token)
        return "renamed %r" % token
    del vocab[token]
    return "dropped %r" % token


def mutate_merges(merges: list, rng: random.Random, tokens: list[str]) -> str:
    """A merge dropped, repeated, moved, of unknown tokens, or of three."""
    if not merges:
        return "no merges"
    i = rng.randrange(len(merges))
    roll = rng.randrange(6)
    if roll == 0:
        del merges[i]
    elif roll == 1:
        merges.append(merges[i])
    elif roll == 2:
        j = rng.randrange(len(merges))
        merges[i], merges[j] = merges[j], merges[i]
    elif roll == 3:
        pair = [rng.choice(tokens), rng.choice(tokens)]
        merges.insert(i, " ".join(pair) if isinstance(merges[i], str) else pair)
    elif roll == 4:
        merges[i] = (merges[i] + " x") if isinstance(merges[i], str) else merges[i] + ["x"]
    else:
        merges[i] = " ".join(merges[i]) if isinstance(merges[i], list) else merges[i].split(" ")
    return "merge %d form %d" % (i, roll)


def mutate_added_tokens(added: list, rng: random.Random) -> str:
    """An added token repeated, given another id, or with flags flipped."""
    if not added:
        return "no added tokens"
    token = rng.choice(added)
    roll = rng.randrange(4)
    if roll == 0:
        added.append(dict(token))
    elif roll == 1:
        token["id"] = rng.choice([token["id"] + 1, 0, 10 ** 6, added[0]["id"]])
    elif roll == 2:
        for flag in ("single_word", "lstrip", "rstrip", "normalized", "special"):
            if rng.random() < 0.4:
                token[flag] = not token.get(flag)
    else:
        token["content"] = rng.choice(["", " ", token["content"][:-1], token["content"] + " x"])
    return "added form %d %r" % (roll, token.get("content"))


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 1, 3))):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


# ----------------------------------------------------------------- targets

def _json_text(data) -> bytes:
    """JSON as tokenizers writes it (non-ASCII kept); NaN written as NaN."""
    return json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogatepass")


def mutate_tokenizer_json(source: InteropSource, rng: random.Random):
    raw = source.files["tokenizer.json"]
    roll = rng.random()
    if roll < 0.08:
        return {"tokenizer.json": flip_bits(raw, rng)}, "bit flips", []
    if roll < 0.12:
        return {"tokenizer.json": raw[:rng.randrange(len(raw))]}, "truncated", []
    data = json.loads(raw)
    model = data.get("model") or {}
    if roll < 0.3 and isinstance(model.get("vocab"), dict):
        what = mutate_vocab_entries(model["vocab"], rng)
    elif roll < 0.4 and model.get("merges"):
        what = mutate_merges(model["merges"], rng, list(model.get("vocab") or ["a"]))
    elif roll < 0.5:
        what = mutate_added_tokens(data.get("added_tokens") or [], rng)
    else:
        where = rng.choice(["normalizer", "pre_tokenizer", "post_processor", "decoder", "model",
                            "added_tokens", None])
        target = data if where is None or not isinstance(data.get(where), (dict, list)) else data[where]
        what = "%s: %s" % (where, mutate_json(target, rng, source.words))
    return {"tokenizer.json": _json_text(data)}, what, []


def mutate_rank_file(source: InteropSource, rng: random.Random):
    raw = source.files["ranks.tiktoken"]
    lines = raw.split(b"\n")
    roll = rng.randrange(10)
    i = rng.randrange(len(lines) - 1)
    hints = []
    if roll == 0:
        return {"ranks.tiktoken": flip_bits(raw, rng)}, "bit flips", []
    if roll == 1:
        return {"ranks.tiktoken": raw[:rng.randrange(len(raw))]}, "truncated", []
    token, rank = lines[i].split(b" ")
    hints.append(base64.b64decode(token).decode("utf-8", "replace"))
    if roll == 2:
        del lines[i]
        what = "line %d dropped" % i
    elif roll == 3:
        lines.insert(rng.randrange(len(lines)), lines[i])
        what = "line %d repeated" % i
    elif roll == 4:
        rank = rng.choice([lines[rng.randrange(len(lines) - 1)].split(b" ")[1], b"-1", b"+7", b"1_0",
                           b"%d" % 2 ** 32, b"%d" % 2 ** 64, b"100257", b"0x10", b"", b"1.0", b"\xd9\xa3"])
        lines[i] = token + b" " + rank
        what = "line %d rank %r" % (i, rank)
    elif roll == 5:
        cut = rng.randrange(len(token) + 1)
        token = token[:cut] + rng.choice([b"!", b"=", b"==", b"-", b"_", b" ", b"\xff", b""]) + token[cut:]
        lines[i] = token + b" " + rank
        what = "line %d token %r" % (i, token)
    elif roll == 6:
        lines[i] = token + rng.choice([b"\t", b"  ", b"\x0b", b"\x0c", b"\x1f", b"\xc2\xa0"]) + rank + \
            rng.choice([b"", b" ", b"\r", b"\t", b" x"])
        what = "line %d blanks %r" % (i, lines[i])
    elif roll == 7:
        separator = rng.choice([b"\r\n", b"\r", b"\n\n"])
        return {"ranks.tiktoken": separator.join(lines)}, "lines end %r" % separator, []
    elif roll == 8:  # a single byte with no rank: encoding it fails in both
        lines[i] = base64.b64encode(bytes([rng.randrange(256)])) + b" " + rank
        what = "line %d a single byte" % i
    else:
        new = base64.b64encode(rng.choice(source.words).encode() + b"!")
        lines.insert(len(lines) - 1, new + b" %d" % rng.choice([len(lines) - 1, 100256, 100257, 200000]))
        what = "line appended"
    return {"ranks.tiktoken": b"\n".join(lines)}, what, hints


def mutate_vocab_txt(source: InteropSource, rng: random.Random):
    raw = source.files["vocab.txt"]
    lines = raw.split(b"\n")
    roll = rng.randrange(8)
    i = rng.randrange(len(lines))
    if roll == 0:
        return {"vocab.txt": flip_bits(raw, rng)}, "bit flips", []
    if roll == 1:
        return {"vocab.txt": raw[:rng.randrange(len(raw))]}, "truncated", []
    if roll == 2:
        del lines[i]
    elif roll == 3:
        lines.insert(rng.randrange(len(lines)), lines[i])
    elif roll == 4:
        lines[i] += rng.choice([b" ", b"\t", b"\r", b"\xc2\xa0", b"\xe3\x80\x80", b"\xff", b" x"])
    elif roll == 5:
        lines.insert(i, rng.choice([b"", b" ", b"\r", b"[UNK]", b"##", b"\xef\xbb\xbf"]))
    elif roll == 6:  # a special token gone
        name = rng.choice([b"[UNK]", b"[SEP]", b"[CLS]", b"[PAD]", b"[MASK]"])
        lines = [line for line in lines if line != name]
        return {"vocab.txt": b"\n".join(lines)}, "no %r" % name, []
    else:
        return {"vocab.txt": b"\r\n".join(lines)}, "CRLF", []
    return {"vocab.txt": b"\n".join(lines)}, "line %d form %d" % (i, roll), [
        lines[min(i, len(lines) - 1)].decode("utf-8", "replace").lstrip("#")]


def mutate_gpt2_files(source: InteropSource, rng: random.Random):
    vocab, merges = source.files["vocab.json"], source.files["merges.txt"]
    roll = rng.randrange(6)
    if roll == 0:
        return dict(source.files, **{"vocab.json": flip_bits(vocab, rng)}), "vocab bit flips", []
    if roll == 1:
        return dict(source.files, **{"merges.txt": flip_bits(merges, rng)}), "merges bit flips", []
    if roll == 2:
        data = json.loads(vocab)
        what = mutate_vocab_entries(data, rng)
        return dict(source.files, **{"vocab.json": _json_text(data)}), what, []
    lines = merges.split(b"\n")
    if roll == 3:
        text = [line.decode() for line in lines[1:-1]]
        what = mutate_merges(text, rng, list(source.words))
        text = [" ".join(line) if isinstance(line, list) else line for line in text]
        lines = lines[:1] + [line.encode("utf-8", "surrogatepass") for line in text] + lines[-1:]
    elif roll == 4:
        i = rng.randrange(len(lines))
        lines[i] = rng.choice([b"#version: 0.3", b"", b"\r", lines[i] + b"\r", lines[i].replace(b" ", b"  "),
                               lines[i].replace(b" ", b"\t"), b" "])
        what = "merges line %d %r" % (i, lines[i])
    else:
        return dict(source.files, **{"merges.txt": merges[:rng.randrange(len(merges))]}), "merges cut", []
    return dict(source.files, **{"merges.txt": b"\n".join(lines)}), what, []


# ----------------------------------------------------------------- loading both

_CASE_DIR = None


def case_dir() -> Path:
    """One directory per fuzzing process, reused for every case."""
    global _CASE_DIR
    if _CASE_DIR is None:
        _CASE_DIR = Path(tempfile.mkdtemp(prefix="subtok-fuzz-case-"))
    return _CASE_DIR


def _write(files: dict[str, bytes]) -> dict[str, str]:
    paths = {}
    for name, data in files.items():
        path = case_dir() / name
        path.write_bytes(data)
        paths[name] = str(path)
    return paths


def _attempt(load):
    """(object, None) or (None, BaseException): the references raise
    pyo3's PanicException, which is no Exception."""
    try:
        return load(), None
    except (Hang, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001  (a reference's panic is a refusal)
        return None, exc


def cl100k_definition() -> dict:
    """cl100k_base's pattern and special tokens, from tiktoken's own
    definition (its rank file read from nowhere)."""
    import tiktoken_ext.openai_public as public
    saved = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: {}
    try:
        return public.cl100k_base()
    finally:
        public.load_tiktoken_bpe = saved


def load_reference(target: str, paths: dict[str, str]):
    import tokenizers
    if target == "tokenizer-json":
        return tokenizers.Tokenizer.from_file(paths["tokenizer.json"])
    if target == "vocab-txt":
        return tokenizers.BertWordPieceTokenizer(paths["vocab.txt"], lowercase=False)
    if target == "gpt2-files":
        return tokenizers.ByteLevelBPETokenizer(paths["vocab.json"], paths["merges.txt"])
    import tiktoken
    import tiktoken.load
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # the file itself, never a cached copy of its path
    definition = cl100k_definition()
    return tiktoken.Encoding("fuzz", pat_str=definition["pat_str"],
                             mergeable_ranks=tiktoken.load.load_tiktoken_bpe(paths["ranks.tiktoken"]),
                             special_tokens=definition["special_tokens"])


def load_subtok(target: str, paths: dict[str, str]):
    from subtok.tokenizer import Tokenizer
    if target == "tokenizer-json":
        from subtok.formats import load_any
        return load_any(paths["tokenizer.json"])
    if target == "vocab-txt":
        from subtok.formats.bert_vocab import bert_wordpiece_json
        return Tokenizer.from_str(json.dumps(bert_wordpiece_json(paths["vocab.txt"], lowercase=False)))
    if target == "gpt2-files":
        from subtok.formats.gpt2_files import byte_level_bpe_json
        return Tokenizer.from_str(json.dumps(byte_level_bpe_json(paths["vocab.json"], paths["merges.txt"])))
    from subtok.formats.tiktoken import load_tiktoken
    return load_tiktoken(paths["ranks.tiktoken"], pattern="cl100k", special_tokens="cl100k_base")


def compare_loaded(target: str, files: dict[str, bytes], texts: list[str]) -> Outcome:
    """Load the case with both; compare; never raises (but Hang)."""
    from subtok.errors import SubtokError
    paths = _write(files)
    theirs, refusal = _attempt(lambda: load_reference(target, paths))
    ours, error = _attempt(lambda: load_subtok(target, paths))
    if error is not None and not isinstance(error, SubtokError):
        return Outcome("crash", "load: %s: %s" % (type(error).__name__, error))
    if ours is None and theirs is None:
        return Outcome("both-refuse", "%s | %s" % (str(refusal)[:200], error))
    if ours is None:
        if any(part in str(error) for part in STRICTER[target]):
            return Outcome("stricter", str(error))
        if any(part in str(error) for part in KNOWN_GAPS.get(target, ())):
            return Outcome("known-gap", str(error))
        return Outcome("only-reference-loads", str(error))
    if theirs is None:
        if any(part in str(refusal) for part in LENIENT.get(target, ())) or legacy_metaspace(files):
            return Outcome("lenient", str(refusal))
        return Outcome("only-subtok-loads", "%s: %s" % (type(refusal).__name__, refusal))
    try:
        if target == "tiktoken":
            return _compare_tiktoken(theirs, ours, texts)
        return _compare_tokenizers(theirs, ours, texts)
    except (Hang, KeyboardInterrupt):
        raise
    except Exception as exc:  # anything else is a crash of the comparison's subtok side
        import traceback
        return Outcome("crash", "encode: %s: %s\n%s" % (type(exc).__name__, exc,
                                                       traceback.format_exc(limit=-4)))


def _both(mine, theirs) -> tuple[object, object, str | None]:
    """Both results, or the reason they cannot be compared: subtok must
    fail (with a SubtokError) exactly where the reference fails."""
    from subtok.errors import SubtokError
    expected, failed = _attempt(theirs)
    try:
        got = mine()
    except SubtokError as exc:
        return None, None, None if failed is not None else "subtok fails: %s" % exc
    if failed is not None:
        return None, None, "only the reference fails: %s: %s" % (type(failed).__name__, failed)
    return got, expected, None


def _compare_tokenizers(theirs, ours, texts: list[str]) -> Outcome:
    for text in texts:
        got, expected, problem = _both(lambda: ours.encode(text), lambda: theirs.encode(text))
        if problem:
            return Outcome("differs", "encode %r: %s" % (text[:60], problem))
        if got is None:
            continue
        for what in ("ids", "tokens", "offsets"):
            if list(getattr(got, what)) != list(getattr(expected, what)):
                return Outcome("differs", "%s %r: tokenizers %r subtok %r" % (
                    what, text[:60], getattr(expected, what)[:12], getattr(got, what)[:12]))
        if ours.encode_fast(text).ids != expected.ids:
            return Outcome("differs", "encode_fast %r" % text[:60])
        got, decoded, problem = _both(lambda: ours.decode(expected.ids),
                                      lambda: theirs.decode(expected.ids))
        if problem or got != decoded:
            return Outcome("differs", "decode %r: %s %r %r" % (text[:60], problem, decoded, got))
    return Outcome("both-load")


def _compare_tiktoken(theirs, ours, texts: list[str]) -> Outcome:
    for text in texts:
        for what in ("encode_ordinary", "encode"):
            kwargs = {"allowed_special": "all"} if what == "encode" else {}
            got, expected, problem = _both(lambda: getattr(ours, what)(text, **kwargs),
                                           lambda: getattr(theirs, what)(text, **kwargs))
            if problem or got != expected:
                return Outcome("differs", "%s %r: %s %r %r" % (what, text[:60], problem,
                                                                (expected or [])[:12], (got or [])[:12]))
            if got is None:
                continue
            got, decoded, problem = _both(lambda: ours.decode_bytes(expected),
                                          lambda: theirs.decode_bytes(expected))
            if problem or got != decoded:
                return Outcome("differs", "decode %r: %s" % (text[:60], problem))
    return Outcome("both-load")


# ----------------------------------------------------------------- the targets

@dataclass
class Target:
    """What the driver in fuzz_models.py needs of a target."""

    name: str
    load_sources: object  # (corpus lines) -> list[InteropSource]
    mutate: object  # (source, rng) -> (files, what, hints)

    def compare(self, files: dict[str, bytes], texts: list[str]) -> Outcome:
        return compare_loaded(self.name, files, texts)

    def probe_texts(self, source: InteropSource, hints: list[str], rng: random.Random,
                    count: int) -> list[str]:
        """Hints, corpus lines, hostile lines and the file's own tokens,
        as valid text (the references take nothing else)."""
        texts = list(hints)
        texts += [line.decode("utf-8", "replace") for line in rng.sample(HOSTILE, 4)]
        texts += [line.decode("utf-8", "replace") for line in
                  rng.sample(source.lines, min(6, len(source.lines)))]
        if source.words:
            words = rng.sample(source.words, min(8, len(source.words)))
            texts += [" ".join(words), "".join(words)]
        return [text.encode("utf-8", "replace").decode("utf-8") for text in texts][:count]


#: Files are fuzzed whole one time in FULL_EVERY, else cut to their first
#: SMALL ids (a BPE keeps the merges among those): loading a 100,000-token
#: file takes seconds, and what is fuzzed is mostly the file's structure.
FULL_EVERY = 8
SMALL = 3000


def _variants(path: Path, files: dict[str, bytes], small: dict[str, bytes], lines, words):
    """The small copy FULL_EVERY - 1 times, the real file once."""
    return [InteropSource(path, small, lines, words, whole=False)] * (FULL_EVERY - 1) + \
        [InteropSource(path, files, lines, words)]


def small_model(model: dict, limit: int = SMALL) -> dict:
    """A tokenizer.json model keeping its first ``limit`` ids (and the
    merges of the tokens kept)."""
    vocab = model.get("vocab")
    if isinstance(vocab, list):  # Unigram: [piece, score] by id
        return dict(model, vocab=vocab[:limit])
    if not isinstance(vocab, dict):
        return model
    kept = {token: token_id for token, token_id in vocab.items() if token_id < limit}
    small = dict(model, vocab=kept)
    if "merges" in model:
        pairs = [merge.split(" ", 1) if isinstance(merge, str) else merge for merge in model["merges"]]
        small["merges"] = [merge for merge, pair in zip(model["merges"], pairs)
                           if pair[0] in kept and pair[1] in kept and pair[0] + pair[1] in kept]
    return small


def _tokenizer_json_sources(lines):
    sources = []
    for path in sorted(INTEROP.glob("*.tokenizer.json")):
        data = path.read_bytes()
        parsed = json.loads(data)
        words = [token["content"] for token in parsed.get("added_tokens") or []][:20]
        vocab = (parsed.get("model") or {}).get("vocab") or {}
        keys = list(vocab) if isinstance(vocab, dict) else [entry[0] for entry in vocab]
        words += random.Random(path.name).sample(keys[:SMALL], min(30, len(keys)))
        small = _json_text(dict(parsed, model=small_model(parsed["model"])))
        sources += _variants(path, {"tokenizer.json": data}, {"tokenizer.json": small}, lines, words)
    return sources


def _rank_file_sources(lines):
    path = INTEROP / "cl100k_base.tiktoken"
    data = path.read_bytes()
    small = b"".join(line + b"\n" for line in data.split(b"\n")[:SMALL])
    return _variants(path, {"ranks.tiktoken": data}, {"ranks.tiktoken": small}, lines,
                     ["hello", " world", "\u00e9t\u00e9", "<|endoftext|>", "1234", "\U0001f600"])


def _vocab_txt_sources(lines):
    path = INTEROP / "bert_base_cased.vocab.txt"
    data = path.read_bytes()
    words = random.Random(1).sample(data.decode().split("\n"), 30)
    return [InteropSource(path, {"vocab.txt": data}, lines, [w.lstrip("#") for w in words])]


def _gpt2_sources(lines):
    folder = INTEROP / "gpt2"
    vocab, merges = (folder / "vocab.json").read_bytes(), (folder / "merges.txt").read_bytes()
    model = small_model({"vocab": json.loads(vocab), "merges": merges.decode().split("\n")[1:-1]})
    small = {"vocab.json": _json_text(model["vocab"]),
             "merges.txt": "\n".join(["#version: 0.2"] + model["merges"] + [""]).encode()}
    words = random.Random(2).sample(list(model["vocab"]), 30)
    return _variants(folder, {"vocab.json": vocab, "merges.txt": merges}, small, lines, words)


TARGETS = {
    "tokenizer-json": Target("tokenizer-json", _tokenizer_json_sources, mutate_tokenizer_json),
    "tiktoken": Target("tiktoken", _rank_file_sources, mutate_rank_file),
    "vocab-txt": Target("vocab-txt", _vocab_txt_sources, mutate_vocab_txt),
    "gpt2-files": Target("gpt2-files", _gpt2_sources, mutate_gpt2_files),
}
