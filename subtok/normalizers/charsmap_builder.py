"""Build SentencePiece ``precompiled_charsmap`` blobs (the training side).

A charsmap blob is::

    u32 LE  trie_size            byte size of the double array (k * 1024)
    u32 LE  units[trie_size/4]   darts-clone compatible double-array units
    bytes   strings              NUL-terminated UTF-8 targets, back to back

Keys of the trie are the UTF-8 bytes of the source strings; the value stored
for a key is the byte offset of its target inside ``strings``.

Unit layout (32 bits), as read by darts-clone::

    bits 0-7   label (the key byte that leads to this unit)
    bit  8     has_leaf: the key that ends here has a value
    bit  9     offset is stored shifted right by 8 (for offsets >= 2**21)
    bits 10-31 offset: XOR distance from this unit to its children's base
    value unit: value | 0x80000000 (the MSB keeps it from matching any byte)

A node's children sit at ``base ^ label``; the value of a key ending at a node
is the unit at ``base ^ 0`` == ``base``.  We first build a minimal DAWG of the
sorted keys (identical sub-tries, values included, are merged, which makes the
Hangul/compatibility-jamo part of the NFKC tables small) and then lay it out
in the double array, reusing one base for every unit that points at a shared
state.  Bases are never shared between different states, base 0 is reserved
for the root, and every unused unit gets a label that no existing base can
reach, so a lookup can only ever follow real edges.
"""

from __future__ import annotations

import struct
from os import PathLike
from typing import Iterable

from subtok.normalizers.charsmap import decode_charsmap, read_table

__all__ = [
    "BUILTIN_RULE_NAMES",
    "MAX_PREFIX_MATCHES",
    "builtin_charsmap",
    "compile_charsmap",
    "decompile_charsmap",
    "load_rule_tsv",
    "normalize_with_rules",
]

#: sentencepiece's normalizer looks at no more than this many prefix matches.
MAX_PREFIX_MATCHES = 32

#: Names accepted by :func:`builtin_charsmap` ("identity" is the empty blob).
BUILTIN_RULE_NAMES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")

_BLOCK = 256                  # units per block; arrays grow block by block
_ACTIVE_BLOCKS = 16           # blocks searched for free slots (as darts-clone)
_MAX_OFFSET = 1 << 29         # offsets must stay below this
_SHORT_OFFSET_LIMIT = 1 << 21  # below: stored as is; above: must be k * 256
_LEAF_BIT = 1 << 8
_EXT_BIT = 1 << 9
_VALUE_BIT = 1 << 31


# --------------------------------------------------------------------------
# unit helpers


def _offset_is_encodable(offset: int) -> bool:
    if offset >= _MAX_OFFSET:
        return False
    return offset < _SHORT_OFFSET_LIMIT or (offset & 0xFF) == 0


def _encode_offset(offset: int) -> int:
    """Offset bits of a unit (bits 9-31) for the XOR distance ``offset``."""
    if offset < _SHORT_OFFSET_LIMIT:
        return offset << 10
    if offset >= _MAX_OFFSET or offset & 0xFF:
        raise ValueError("offset %d cannot be stored in a unit" % offset)
    return ((offset >> 8) << 10) | _EXT_BIT


def _decode_offset(unit: int) -> int:
    return (unit >> 10) << ((unit & _EXT_BIT) >> 6)


# --------------------------------------------------------------------------
# DAWG of the sorted keys


def _build_dawg(items: list[tuple[bytes, int]]) -> tuple[list, int]:
    """Minimal acyclic automaton of ``items`` (sorted, unique, non-empty keys).

    Returns ``(states, root)``; a state is ``(value_or_None, ((label, state),
    ...))`` with labels ascending.  Equal states are stored once.
    """
    states: list = []
    registry: dict = {}

    def freeze(value, children) -> int:
        sig = (value, tuple(children))
        sid = registry.get(sig)
        if sid is None:
            sid = registry[sig] = len(states)
            states.append(sig)
        return sid

    # path[d] = [value, frozen children] of the node reached by key[:d]
    path: list[list] = [[None, []]]
    prev = b""
    for key, value in items:
        common = 0
        limit = min(len(prev), len(key))
        while common < limit and prev[common] == key[common]:
            common += 1
        # close the nodes of the previous key below the common prefix
        for depth in range(len(prev), common, -1):
            node = path.pop()
            path[-1][1].append((prev[depth - 1], freeze(node[0], node[1])))
        for _ in range(common, len(key)):
            path.append([None, []])
        path[-1][0] = value
        prev = key
    for depth in range(len(prev), 0, -1):
        node = path.pop()
        path[-1][1].append((prev[depth - 1], freeze(node[0], node[1])))
    root = path.pop()
    return states, freeze(root[0], root[1])


# --------------------------------------------------------------------------
# double-array layout


class _DoubleArray:
    def __init__(self) -> None:
        self.units: list[int] = []
        self.fixed = bytearray()      # unit position is taken
        self.used_base = bytearray()  # position already serves as a base
        # unfixed positions of the active blocks, ascending (dict as an
        # ordered set: O(1) removal, iteration in insertion order)
        self.free: dict[int, None] = {}
        self.first_active = 0         # first position of the active window
        self._grow()
        self.fixed[0] = 1             # the root unit
        self.used_base[0] = 1         # base 0 would make unit 0 reachable
        del self.free[0]

    def _grow(self) -> None:
        start = len(self.units)
        self.units.extend([0] * _BLOCK)
        self.fixed.extend(bytes(_BLOCK))
        self.used_base.extend(bytes(_BLOCK))
        self.free.update(dict.fromkeys(range(start, start + _BLOCK)))
        # forget blocks that fell out of the window; their holes stay empty
        while len(self.units) - self.first_active > _ACTIVE_BLOCKS * _BLOCK:
            self.first_active += _BLOCK
        stale = []
        for p in self.free:
            if p >= self.first_active:
                break
            stale.append(p)
        for p in stale:
            del self.free[p]

    def find_base(self, pos: int, labels: list[int]) -> int:
        """A base for children ``labels`` of the unit at ``pos``."""
        fixed, used_base = self.fixed, self.used_base
        first, rest = labels[0], labels[1:]
        for free_pos in self.free:
            base = free_pos ^ first
            if used_base[base] or not _offset_is_encodable(pos ^ base):
                continue
            for label in rest:
                if fixed[base ^ label]:
                    break
            else:
                return base
        # a fresh block; keeping the low byte of pos makes pos ^ base a
        # multiple of 256, which is always encodable (bit-9 form if large)
        base = len(self.units) | (pos & 0xFF)
        self._grow()
        return base

    def fix(self, base: int, labels: list[int]) -> None:
        self.used_base[base] = 1
        for label in labels:
            p = base ^ label
            self.fixed[p] = 1
            self.free.pop(p, None)

    def seal(self) -> list[int]:
        """Give every unused unit a label that no used base can reach."""
        units, fixed, used_base = self.units, self.fixed, self.used_base
        for start in range(0, len(units), _BLOCK):
            end = start + _BLOCK
            if all(fixed[start:end]):
                continue
            unused_base = next(
                (p for p in range(start, end) if not used_base[p]), None)
            if unused_base is None:  # cannot happen: a block has <= 255 bases
                raise AssertionError("no unused base in block")
            for p in range(start, end):
                if not fixed[p]:
                    units[p] = p ^ unused_base  # label only, no leaf/offset
        return units


def _layout(states: list, root: int) -> list[int]:
    da = _DoubleArray()
    units = da.units
    base_of: dict[int, int] = {}

    # explicit stack of (unit position, state) still to be arranged
    todo = [(0, root)]
    while todo:
        pos, sid = todo.pop()
        base = base_of.get(sid)
        if base is not None and _offset_is_encodable(pos ^ base):
            units[pos] |= _encode_offset(pos ^ base)
            continue
        value, children = states[sid]
        labels = ([0] if value is not None else []) + [c for c, _ in children]
        base = da.find_base(pos, labels)
        units = da.units  # may have been extended
        da.fix(base, labels)
        base_of[sid] = base
        units[pos] |= _encode_offset(pos ^ base)
        if value is not None:
            units[base] = value | _VALUE_BIT
        for label, child in children:
            cpos = base ^ label
            cvalue = states[child][0]
            units[cpos] = label | (_LEAF_BIT if cvalue is not None else 0)
        for label, child in reversed(children):
            todo.append((base ^ label, child))
    return da.seal()


# --------------------------------------------------------------------------
# public API


def _check_prefix_depth(keys: list[bytes]) -> None:
    """Raise if a key has >= MAX_PREFIX_MATCHES prefixes that are keys.

    The key itself counts, as in darts-clone's commonPrefixSearch.
    """
    chain: list[bytes] = []  # keys that are prefixes of the current key
    for key in keys:  # sorted, so prefixes come first
        while chain and not key.startswith(chain[-1]):
            chain.pop()
        chain.append(key)
        if len(chain) >= MAX_PREFIX_MATCHES:
            raise ValueError(
                "charsmap key %r has %d prefixes that are keys (itself "
                "included); sentencepiece examines at most %d"
                % (key.decode("utf-8"), len(chain), MAX_PREFIX_MATCHES - 1))


def _utf8(text: str, what: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError("charsmap %s must be str, got %r" % (what, text))
    if "\0" in text:
        raise ValueError("charsmap %s %r contains U+0000" % (what, text))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("charsmap %s %r is not valid Unicode: %s"
                         % (what, text, exc)) from None


def compile_charsmap(rules: dict[str, str]) -> bytes:
    """Compile ``{source: target}`` rules into a precompiled_charsmap blob.

    Targets may be empty (deletion).  An empty dict gives ``b""`` (the
    identity normalizer).  Raises ValueError for empty keys, U+0000 or lone
    surrogates, and when a key has 32 or more prefixes that are keys.
    """
    if not rules:
        return b""
    encoded: list[tuple[bytes, bytes]] = []
    for src, trg in rules.items():
        k = _utf8(src, "source")
        if not k:
            raise ValueError("charsmap source must not be empty")
        encoded.append((k, _utf8(trg, "target")))
    encoded.sort()
    _check_prefix_depth([k for k, _ in encoded])

    # string block: distinct targets sorted by code points (== UTF-8 order)
    offsets: dict[bytes, int] = {}
    block = bytearray()
    for trg in sorted({t for _, t in encoded}):
        offsets[trg] = len(block)
        block += trg + b"\0"
    if len(block) >= 1 << 31:
        raise ValueError("charsmap targets too large")

    states, root = _build_dawg([(k, offsets[t]) for k, t in encoded])
    units = _layout(states, root)
    trie = struct.pack("<%dI" % len(units), *units)
    return struct.pack("<I", len(trie)) + trie + bytes(block)


def decompile_charsmap(blob: bytes) -> dict[str, str]:
    """All rules of a precompiled_charsmap blob (``b""`` gives ``{}``).

    The runtime reader does the work; a broken blob raises ValueError.
    """
    return decode_charsmap(blob)


def normalize_with_rules(rules: dict[str, str], text: str,
                         max_len: int | None = None) -> str:
    """Apply ``rules`` by longest match at each position (no whitespace logic).

    This is the character-mapping step of sentencepiece's normalizer on valid
    text; useful as a reference in tests.  ``max_len`` (longest key, in code
    points) is computed from ``rules`` when not given; pass it when calling
    this many times with a big table.
    """
    if not rules:
        return text
    maxlen = max(map(len, rules)) if max_len is None else max_len
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        for length in range(min(maxlen, n - i), 0, -1):
            trg = rules.get(text[i:i + length])
            if trg is not None:
                out.append(trg)
                i += length
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# --------------------------------------------------------------------------
# rule TSV files


def _parse_codepoints(field: str, where: str) -> str:
    chars = []
    for tok in field.split():
        hexpart = tok[2:] if tok[:2] in ("U+", "u+") else tok
        try:
            if not hexpart or not all(c in "0123456789abcdefABCDEF"
                                      for c in hexpart):
                raise ValueError
            cp = int(hexpart, 16)
            if cp > 0x10FFFF:
                raise ValueError
        except ValueError:
            raise ValueError("%s: bad code point %r" % (where, tok)) from None
        if cp == 0 or 0xD800 <= cp <= 0xDFFF:
            raise ValueError("%s: code point %r is not allowed" % (where, tok))
        chars.append(chr(cp))
    return "".join(chars)


def load_rule_tsv(path: str | PathLike) -> dict[str, str]:
    """Read a normalization rule TSV (``SRC<TAB>TRG[<TAB>comment]`` lines).

    SRC and TRG are space-separated hex code points, each optionally written
    ``U+XXXX``.  A line with only SRC (no tab) deletes the source.  Later
    lines override earlier ones; blank lines and lines starting with ``#``
    are skipped.  Errors raise ValueError naming the file and line number.
    """
    rules: dict[str, str] = {}
    with open(path, "r", encoding="utf-8") as fh:
        lines: Iterable[str] = fh.read().splitlines()
    for lineno, line in enumerate(lines, 1):
        where = "%s:%d" % (path, lineno)
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        src = _parse_codepoints(fields[0], where)
        if not src:
            raise ValueError("%s: empty source" % where)
        trg = _parse_codepoints(fields[1], where) if len(fields) > 1 else ""
        rules[src] = trg
    return rules


# --------------------------------------------------------------------------
# built-in tables


def builtin_charsmap(name: str) -> bytes:
    """The blob of a built-in rule set (see :data:`BUILTIN_RULE_NAMES`)."""
    if name == "identity":
        return b""
    if name not in BUILTIN_RULE_NAMES:
        raise ValueError(
            "unknown normalization rule name %r; valid names: %s"
            % (name, ", ".join(BUILTIN_RULE_NAMES)))
    return read_table(name)
