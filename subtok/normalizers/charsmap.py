"""Read SentencePiece's ``precompiled_charsmap`` blob and look its rules up.

The blob is a darts-clone double-array trie over UTF-8 keys followed by the
NUL-terminated replacement strings::

    u32 LE  trie_size             number of bytes of the double array
    u32 LE  units[trie_size / 4]  darts-clone units
    bytes   strings               NUL-terminated UTF-8 targets, back to back

Rules are looked up on demand, by walking the double array
(:class:`CharsMap`); at load we only find the characters a rule can
touch, and for the built-in tables even that walk is read from
``rules/walks.json`` (:func:`known_walk`), and their double array, checked
when the tables were built, is not checked again (:func:`split_blob`). A
charsmap of hand-made rules can also be held as a plain mapping
(:class:`DictRules`).
"""

from __future__ import annotations

import array
import functools
import json
import os
import struct
import sys
from collections.abc import Sequence
from itertools import compress

from subtok.errors import NormalizerError

_LEAF_LABEL_MASK = 0x800000FF
#: Bit 31 of a unit: set in leaf units, which hold a value, not a label.
_LEAF = 0x80000000
#: sentencepiece's Normalizer::kMaxTrieResultsSize: of the keys matching
#: at a position, only the first (shortest) this many are looked at.
MAX_MATCHES = 32


def _offset(unit: int) -> int:
    """Offset to the children of a unit (bit 9 selects an extra ``<< 8``)."""
    return (unit >> 10) << ((unit & 0x200) >> 6)


def _index_children(units) -> dict[int, list[tuple[int, int]]]:
    """base -> [(label, unit index)]: darts-clone stores no child lists (the
    child of a node by byte ``b`` is the unit at ``base ^ b`` labelled
    ``b``), so every unit is indexed by the base it claims to hang from."""
    children: dict[int, list[tuple[int, int]]] = {}
    for index, unit in enumerate(units):
        label = unit & _LEAF_LABEL_MASK
        if 0 < label < 256:
            children.setdefault(index ^ label, []).append((label, index))
    return children


def char_ranges(chars) -> list[tuple[int, int]]:
    """The code points of ``chars`` as sorted runs ``(first, last)`` of
    consecutive code points."""
    points = sorted(set(map(ord, chars)))
    starts = [b for a, b in zip([-2] + points, points) if b != a + 1]
    ends = [a for a, b in zip(points, points[1:] + [-2]) if b != a + 1]
    return list(zip(starts, ends))


@functools.lru_cache(maxsize=4)  # a model's blob: checked at parse, read again by the processor
def split_blob(blob: bytes) -> tuple[Sequence[int], bytes]:
    """Validate the blob and return (trie units, string block).

    The checks, their order and their messages are sentencepiece 0.2.3's
    (``Normalizer::DecodePrecompiledCharsMap``, then the double array's
    ``validate`` in ``Normalizer::Init``), so that a blob is refused here
    exactly when sentencepiece refuses it, and the whole trie is known
    sound before any text is normalized with it. The double array of a
    built-in table (:func:`builtin_table`) is not checked again: the check
    would be most of the table's load time (docs/performance.md), and
    tests/unit/test_charsmap_walks.py checks every shipped table.
    """
    if len(blob) <= 4:
        raise NormalizerError("Blob for normalization rule is broken.")
    (trie_size,) = struct.unpack_from("<I", blob, 0)
    if trie_size >= len(blob) - 4:
        raise NormalizerError("Trie data size exceeds the input blob size.")
    if trie_size < 1024 or trie_size % 1024 != 0:
        raise NormalizerError("Trie data size is not divisible by 1024.")
    if blob[-1] != 0:
        raise NormalizerError("normalized block must be null terminated.")
    trie = blob[4:4 + trie_size]
    strings = blob[4 + trie_size:]
    units = array.array("I")
    if units.itemsize == 4:
        # One machine word per unit, no Python int object each: a model's
        # units then take a quarter of a megabyte, not a few megabytes, and
        # worker processes reading them dirty no shared pages.
        units.frombytes(trie)
        if sys.byteorder == "big":
            units.byteswap()
    else:
        units = struct.unpack_from("<%dI" % (trie_size // 4), trie)  # type: ignore[assignment]
    if builtin_table(blob) is None and not check_double_array(trie, units, len(strings)):
        raise NormalizerError("precompiled_charsmap is invalid.")
    return units, strings


def check_double_array(trie: bytes, units: Sequence[int], value_limit: int) -> bool:
    """darts-clone's ``DoubleArrayImpl::validate(value_limit)``: every unit
    that is no leaf leads to children inside the array, the leaf of each
    node that has one is a leaf unit, and every leaf's value (an offset
    into the string block) is below ``value_limit``. ``trie`` holds the
    little-endian units, ``units`` the same as integers.

    Every unit is checked, so in one pass over the array, but without a
    Python step per unit: the units are the 32-bit lanes of one big
    integer (``trie`` read little-endian), and the shifts, masks and one
    subtraction below act on all lanes at once. No lane carries into or
    borrows from its neighbour (each value stays below 2**31 and the
    subtraction keeps a guard bit). Equal to the plain loop over units
    that tests/cli/test_hardening.py keeps as a reference.
    """
    size = len(units)
    root = units[0]
    root_offset = _offset(root)
    if root & _LEAF_LABEL_MASK or root & 0x100 or not root_offset or (root_offset | 0xFF) >= size:
        return False
    if max(units) >= _LEAF + value_limit:  # the largest unit is the largest leaf value
        return False
    whole = int.from_bytes(trie, "little")
    ones = int.from_bytes(b"\x01\0\0\0" * size, "little")  # bit 0 of every lane
    inner = ones ^ ((whole >> 31) & ones)  # lanes that are no leaf (label <= 0xFF)
    shifted = ((whole >> 9) & ones) * 0xFFFFFFFF  # lanes whose offset is << 8
    raw = (whole >> 10) & (ones * 0x3FFFFF)
    offsets = (raw & (shifted ^ (ones * 0xFFFFFFFF))) | ((raw << 8) & shifted)
    indexes = array.array("I", range(size))
    if sys.byteorder == "big":
        indexes.byteswap()
    children = int.from_bytes(indexes.tobytes(), "little") ^ offsets
    # (child | 0xFF) < size, size being a multiple of 256: child >> 8 < size >> 8.
    guard = ones << 31
    blocks = (children >> 8) & (ones * 0xFFFFFF)
    if ((blocks | guard) - ones * (size >> 8)) & guard & (inner << 31):
        return False
    has_leaf = ((whole >> 8) & inner).to_bytes(4 * size, "little")[::4]
    if not any(has_leaf):
        return True
    targets = array.array("I", children.to_bytes(4 * size, "little"))
    if sys.byteorder == "big":
        targets.byteswap()
    return min(map(units.__getitem__, compress(targets, has_leaf))) >= _LEAF


_BYTES = [bytes((b,)) for b in range(256)]


def _target(units, leaf: int, strings: bytes) -> bytes:
    """The NUL-terminated target string a leaf unit points to."""
    if leaf >= len(units):
        raise NormalizerError("precompiled_charsmap is invalid.")
    start = units[leaf] & 0x7FFFFFFF
    end = strings.find(b"\0", start)
    if start >= len(strings) or end < 0:
        raise NormalizerError("precompiled_charsmap is invalid.")
    return strings[start:end]


def decode_charsmap(blob: bytes) -> dict[str, str]:
    """Return every (source -> target) rule stored in a charsmap blob.

    An empty blob means "no character mapping" and yields an empty dict.
    """
    if not blob:
        return {}
    units, strings = split_blob(blob)
    n_units = len(units)
    if n_units == 0:
        raise NormalizerError("precompiled_charsmap is invalid.")
    # darts-clone stores no child lists: the child of ``node`` by byte ``b``
    # is the unit at ``base(node) ^ b`` whose label is ``b``. Instead of
    # probing 255 labels per node, index every unit by the base it claims
    # to hang from, then walk down from the root.
    children = _index_children(units)
    raw: dict[bytes, bytes] = {}
    targets: dict[int, bytes] = {}  # leaf unit -> target (targets repeat)
    stack = [(0, b"")]
    pop, push = stack.pop, stack.append
    no_children: tuple = ()
    while stack:
        node, prefix = pop()
        unit = units[node]
        base = node ^ _offset(unit)
        for label, child in children.get(base, no_children):
            key = prefix + _BYTES[label]
            unit = units[child]
            if unit & 0x100:  # has a leaf: this key is a rule
                leaf = child ^ _offset(unit)
                target = targets.get(leaf)
                if target is None:
                    target = targets[leaf] = _target(units, leaf, strings)
                raw[key] = target
            if len(key) < 64:
                push((child, key))
            else:
                raise NormalizerError("precompiled_charsmap is invalid.")
    if not raw:
        raise NormalizerError("precompiled_charsmap is invalid.")
    try:
        decoded = {leaf: v.decode("utf-8") for leaf, v in targets.items()}
        by_value = {v: decoded[leaf] for leaf, v in targets.items()}
        return {k.decode("utf-8"): by_value[v] for k, v in raw.items()}
    except UnicodeDecodeError as exc:
        raise NormalizerError(
            "precompiled_charsmap holds a rule that is not valid UTF-8."
        ) from exc


def _char_length(lead: int) -> int:
    """UTF-8 length of a character from its lead byte (as OneCharLen)."""
    if lead < 0xC0:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


#: _char_length of every byte.
_LENGTH_OF_LEAD = [_char_length(lead) for lead in range(256)]


class CharsMap:
    """Longest-match rule lookups directly on the stored double array.

    Decoding every rule of a large charsmap into a dict is slow at load
    (docs/performance.md); encoding only ever looks rules up next to the few
    characters a rule can touch. So at load time we only find those
    *trigger* characters (one walk over the trie's nodes, each visited
    once: darts-clone shares suffixes, so the trie is a small DAG), and
    look rules up on demand by walking the units byte by byte.
    """

    def __init__(self, blob: bytes, stored_walk: bool = True) -> None:
        """``stored_walk=False``: walk the trie even for a built-in table
        (what the walks file is built and checked with)."""
        self.units, self.strings = split_blob(blob)
        self._targets: dict[int, str] = {}
        #: (character, node) of each one-character key whose target is " ".
        self._to_space: list[tuple[str, int]] = []
        #: True when every key is whole UTF-8 characters and every target
        #: UTF-8 text, as in every charsmap any builder makes. A blob that
        #: passes sentencepiece's checks may still break that (a corrupt
        #: or hostile model); it then only works on bytes
        #: (:meth:`match_bytes`), as sentencepiece does.
        self.regular = True
        known = known_walk(blob) if stored_walk else None
        if known is not None:  # a built-in table: its walk was done when it was built
            (self.trigger_chars, self.trigger_ranges, self.inner_chars, self._to_space,
             self.regular) = known
            return
        self.trigger_chars, self.inner_chars = self._find_triggers(_index_children(self.units))
        #: :attr:`trigger_chars` as :func:`char_ranges` (what a normalizer's screen is made of).
        #: A trie that is not :attr:`regular` may hold keys that are no
        #: character; its normalizer works on bytes and has no screen.
        self.trigger_ranges = char_ranges(self.trigger_chars) if self.regular else []
        if self.regular:
            self.regular = _targets_are_text(self.units, self.strings)

    def walk_record(self) -> dict:
        """What :meth:`_find_triggers` found, as stored for the built-in
        tables (``rules/walks.json``, written by
        ``scripts/build_charsmap_walks.py``; :func:`known_walk` reads it)."""
        return {"trigger_chars": "".join(sorted(self.trigger_chars)),
                "trigger_ranges": [list(run) for run in self.trigger_ranges],
                "inner_chars": "".join(sorted(self.inner_chars)),
                "to_space": [[char, node] for char, node in self._to_space],
                "regular": self.regular}

    def _find_triggers(self, children: dict) -> tuple[frozenset[str], frozenset[str]]:
        """Characters that are a whole rule key, or a non-first character of
        one: a rule can only start at such a character or right before it.
        Also returns the second kind alone (see :meth:`lone_space_chars`).
        ``children`` is the child index of the units (only needed here).

        From each node that a whole character leads to (the root first),
        every character leading out of it is spelled byte by byte. Nodes
        that share their children (darts-clone shares suffixes: 25k nodes,
        15k child blocks in nmt_nfkc) are expanded once, in one loop.
        Characters are kept as UTF-8 and decoded once each at the end
        (27k decodes became 5k per nmt_nfkc load).
        """
        units = self.units
        length_of = _LENGTH_OF_LEAD
        first: dict[bytes, int] = {}  # a whole key from the root -> its node
        inner_bytes: set[bytes] = set()  # characters past a key's first, as UTF-8
        seen: set[int] = {0}
        expanded: set[int] = set()  # child blocks, by base, from nodes past the root
        pending = [0]
        while pending:
            start = pending.pop()
            base = start ^ _offset(units[start])
            if start:
                if base in expanded:
                    continue
                expanded.add(base)
            stack = [(base, b"")]
            while stack:
                block, partial = stack.pop()
                for label, child in children.get(block, ()):
                    data = partial + _BYTES[label]
                    unit = units[child]
                    if len(data) < length_of[data[0]]:  # inside a character
                        if unit & 0x100:  # a key ends inside a character
                            self.regular = False
                        if len(data) < 4:
                            stack.append((child ^ _offset(unit), data))
                        continue
                    if unit & 0x100:  # a leaf: a key ends here
                        if not start:  # from the root, only whole keys count
                            first[data] = child
                    if start:
                        inner_bytes.add(data)
                    if child not in seen:  # children are units: the walk ends
                        seen.add(child)
                        pending.append(child)
        try:
            inner = {data.decode("utf-8") for data in inner_bytes}
            firsts = [(data.decode("utf-8"), node) for data, node in first.items()]
        except UnicodeDecodeError:  # a key holds bytes that are no character
            self.regular = False
            inner = {data.decode("utf-8", "surrogateescape") for data in inner_bytes}
            firsts = [(data.decode("utf-8", "surrogateescape"), node) for data, node in first.items()]
        for char, node in firsts:
            value = node ^ _offset(units[node])  # checked where looked up
            at = units[value] & 0x7FFFFFFF if value < len(units) else -2
            if self.strings[at:at + 2] == b" \0":
                self._to_space.append((char, node))
        return frozenset(char for char, _ in firsts) | inner, frozenset(inner)

    def lone_space_chars(self) -> frozenset[str]:
        """Characters that the rules turn into one space and that take part
        in no other rule: no longer key starts with one, and none is a
        non-first character of a key. Empty if a key starts with or holds a
        space, which could then match where such a character stood."""
        if " " in self.inner_chars or self._node(b" ") is not None:
            return frozenset()
        return frozenset(char for char, node in self._to_space
                         if char not in self.inner_chars and not self._has_children(node))

    def _node(self, data: bytes) -> int | None:
        """The node that ``data`` leads to from the root, if any."""
        units = self.units
        node = 0
        for byte in data:
            node ^= _offset(units[node]) ^ byte
            if node >= len(units) or (units[node] & _LEAF_LABEL_MASK) != byte:
                return None
        return node

    def _has_children(self, node: int) -> bool:
        """True if some byte leads on from ``node`` (its leaf aside)."""
        units = self.units
        base = node ^ _offset(units[node])
        return any(base ^ byte < len(units) and (units[base ^ byte] & _LEAF_LABEL_MASK) == byte
                   for byte in range(1, 256))

    def longest_match(self, text: str, pos: int) -> tuple[str, int] | None:
        """(target, characters consumed) of the longest rule at ``pos``
        (of the first MAX_MATCHES that match, as sentencepiece looks no
        further). Only for a regular charsmap: its keys are characters, so
        the walk stops before a lone surrogate (an undecodable byte).

        Keys are a few characters long: a window of 32 characters is
        walked first, and a longer one only if the walk reached its end.
        """
        window = 32
        while True:
            end = pos
            limit = min(len(text), pos + window)
            while end < limit and not "\ud800" <= text[end] <= "\udfff":
                end += 1
            data = text[pos:end].encode("utf-8")
            found, open_end = self._walk(data, 0)
            if not open_end or end < limit or limit == len(text):
                break
            window *= 8
        if found is None:
            return None
        leaf, length = found
        target = self._targets.get(leaf)
        if target is None:
            target = self._targets[leaf] = _target(self.units, leaf, self.strings).decode("utf-8")
        return target, len(data[:length].decode("utf-8"))

    def match_bytes(self, data: bytes, pos: int) -> tuple[bytes, int] | None:
        """(target, bytes consumed) of the longest rule at byte ``pos`` of
        ``data``, of the first MAX_MATCHES that match: sentencepiece's
        lookup (``Normalizer::NormalizePrefix``) for any blob that passed
        :func:`split_blob`, whatever bytes its keys and targets hold."""
        found, _ = self._walk(data, pos)
        if found is None:
            return None
        leaf, length = found
        return _target(self.units, leaf, self.strings), length

    def _walk(self, data: bytes, start: int) -> tuple[tuple[int, int] | None, bool]:
        """Follow ``data[start:]`` down the trie (darts-clone's
        ``commonPrefixSearch``): ((leaf unit, length) of the last of the
        first MAX_MATCHES keys met, or None; whether the walk ran to the
        end of ``data``, where a longer key could have gone on)."""
        units = self.units
        count = len(units)
        node = 0
        best = None
        matches = 0
        for i in range(start, len(data)):
            byte = data[i]
            node ^= _offset(units[node]) ^ byte
            if node >= count or (units[node] & _LEAF_LABEL_MASK) != byte:
                return best, False
            unit = units[node]
            if unit & 0x100:
                best = (node ^ _offset(unit), i + 1 - start)
                matches += 1
                if matches == MAX_MATCHES:
                    return best, False
        return best, True


def _targets_are_text(units, strings: bytes) -> bool:
    """True if every leaf unit points at a target that is UTF-8 text:
    the whole string block decodes and no leaf points into the middle of
    a character. Some leaf may be unreachable; a blob is then taken for
    irregular when it need not be, which costs speed, never exactness."""
    try:
        strings.decode("utf-8")
    except UnicodeDecodeError:
        return False
    starts = bytes(map(strings.__getitem__, {unit - _LEAF for unit in filter(_LEAF.__le__, units)}))
    return not starts.translate(None, _NOT_CONTINUATION)


#: Every byte that is not a UTF-8 continuation byte (0x80..0xBF).
_NOT_CONTINUATION = bytes(range(0x80)) + bytes(range(0xC0, 0x100))


class DictRules:
    """The same interface over a plain ``{source: target}`` dict."""

    def __init__(self, rules: dict[str, str]) -> None:
        self.rules = rules
        self.max_length = max(map(len, rules), default=0)
        triggers: set[str] = set()
        for key in rules:
            triggers.update(key if len(key) == 1 else key[1:])
        self.trigger_chars = frozenset(triggers)
        self.trigger_ranges = char_ranges(triggers)
        self.inner_chars = frozenset(char for key in rules for char in key[1:])
        #: Keys are characters (a dict is only made from text).
        self.regular = True
        self._byte_rules: dict[bytes, bytes] | None = None

    def lone_space_chars(self) -> frozenset[str]:
        """See :meth:`CharsMap.lone_space_chars`."""
        if any(" " in key for key in self.rules):
            return frozenset()
        starts_longer = {key[0] for key in self.rules if len(key) > 1}
        return frozenset(key for key, target in self.rules.items()
                         if len(key) == 1 and target == " " and key not in starts_longer
                         and key not in self.inner_chars)

    def match_bytes(self, data: bytes, pos: int) -> tuple[bytes, int] | None:
        """See :meth:`CharsMap.match_bytes`."""
        if self._byte_rules is None:
            self._byte_rules = {key.encode("utf-8", "surrogateescape"):
                                value.encode("utf-8", "surrogateescape")
                                for key, value in self.rules.items()}
        rules = self._byte_rules
        found = None
        matches = 0
        for end in range(pos + 1, min(len(data), pos + 4 * self.max_length) + 1):
            target = rules.get(data[pos:end])
            if target is not None:
                found = (target, end - pos)
                matches += 1
                if matches == MAX_MATCHES:
                    break
        return found

    def longest_match(self, text: str, pos: int) -> tuple[str, int] | None:
        rules = self.rules
        for length in range(min(self.max_length, len(text) - pos), 0, -1):
            target = rules.get(text[pos:pos + length])
            if target is not None:
                return target, length
        return None


#: The directory of the built-in tables (``<name>.bin``) and their walks.
RULES_DIR = os.path.join(os.path.dirname(__file__), "rules")
#: File of the walks of the built-in tables, beside their blobs.
WALKS_FILE = "walks.json"


@functools.lru_cache(maxsize=None)
def read_table(name: str) -> bytes:
    """The blob of the built-in table ``name`` (``rules/<name>.bin``), read
    once per process. A plain file read: no import at first load
    (importlib.resources is not frozen, and a process may by then have
    dropped the rights to read the interpreter's library)."""
    with open(os.path.join(RULES_DIR, name + ".bin"), "rb") as handle:
        return handle.read()


@functools.lru_cache(maxsize=1)
def _known_walks() -> dict:
    """Table name -> its stored walk and blob size (see
    :meth:`CharsMap.walk_record`); the characters are stored as one string
    each, which JSON reads far faster than a list of one-character strings."""
    try:
        with open(os.path.join(RULES_DIR, WALKS_FILE), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:  # not built yet (scripts/build_charsmap_walks.py): walk every table
        return {}
    return json.loads(text)


def builtin_table(blob: bytes) -> str | None:
    """The name of the built-in table that ``blob`` is byte for byte, or
    None. Models trained with a built-in rule name carry its blob
    unchanged. Told by size, then by comparing the bytes with the shipped
    table: no hash, so no hashlib (OpenSSL) to load at start-up."""
    if len(blob) < 4096:  # the built-in tables are far larger
        return None
    for name, record in _known_walks().items():
        if record.get("size") == len(blob) and read_table(name) == blob:
            return name
    return None


def known_walk(blob: bytes) -> tuple[frozenset[str], list, frozenset[str], list, bool] | None:
    """The result of :meth:`CharsMap._find_triggers` (with its
    :func:`char_ranges`, and of the target check) for a blob that is one of the built-in tables
    (:func:`builtin_table`); None for any other blob, which is walked at
    load. The walk is most of the start-up of ``subtok train`` and of
    loading such a model; tests/unit/test_charsmap_walks.py checks the
    stored walks against fresh ones."""
    name = builtin_table(blob)
    if name is None:
        return None
    record = _known_walks()[name]
    return (frozenset(record["trigger_chars"]), [tuple(run) for run in record["trigger_ranges"]],
            frozenset(record["inner_chars"]), [(char, node) for char, node in record["to_space"]],
            record["regular"])


@functools.lru_cache(maxsize=4)
def load_rules(blob: bytes) -> CharsMap | DictRules:
    """Rules for a Normalizer from a stored charsmap (empty: no rules).

    Kept for the last few blobs: a CharsMap is read-only (its memo of
    targets aside), and loading it is most of a model's load time, which
    a process loading one model more than once (or models that share a
    built-in charsmap) then pays once.
    """
    return CharsMap(blob) if blob else DictRules({})
