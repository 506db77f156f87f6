"""Read SentencePiece's ``precompiled_charsmap`` blob into a plain mapping.

The blob is a darts-clone double-array trie over UTF-8 keys followed by the
NUL-terminated replacement strings::

    u32 LE  trie_size             number of bytes of the double array
    u32 LE  units[trie_size / 4]  darts-clone units
    bytes   strings               NUL-terminated UTF-8 targets, back to back

We walk the whole trie once at load time and keep a ``dict`` from source
string to target string. Longest-match normalization over a dict is exact
(every key is a whole UTF-8 character sequence) and lets the hot path use
Python's C-level dict and string operations instead of stepping a trie byte
by byte.
"""

from __future__ import annotations

import array
import struct
import sys
from collections.abc import Sequence

from subtok.errors import NormalizerError

_LEAF_LABEL_MASK = 0x800000FF


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


def split_blob(blob: bytes) -> tuple[Sequence[int], bytes]:
    """Validate the blob's framing and return (trie units, string block).

    The checks and their order follow what sentencepiece 0.2.3 reports for
    broken blobs, so that a user sees the same diagnosis from both tools.
    """
    if len(blob) <= 4:
        raise NormalizerError("Blob for normalization rule is broken.")
    (trie_size,) = struct.unpack_from("<I", blob, 0)
    if trie_size >= len(blob) - 4:
        raise NormalizerError("Trie data size exceeds the input blob size.")
    if trie_size % 1024 != 0:
        raise NormalizerError("Trie data size is not divisible by 1024.")
    if blob[-1] != 0:
        raise NormalizerError("normalized block must be null terminated.")
    units = array.array("I")
    if units.itemsize == 4:
        # One machine word per unit, no Python int object each: a model's
        # units then take a quarter of a megabyte, not a few megabytes, and
        # worker processes reading them dirty no shared pages.
        units.frombytes(blob[4:4 + trie_size])
        if sys.byteorder == "big":
            units.byteswap()
        return units, blob[4 + trie_size:]
    return struct.unpack_from("<%dI" % (trie_size // 4), blob, 4), blob[4 + trie_size:]


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

    Decoding every rule of a 225k-rule charsmap into a dict costs about
    0.3 s per model load; encoding only ever looks rules up next to the few
    characters a rule can touch. So at load time we only find those
    *trigger* characters (one walk over the trie's nodes, each visited
    once: darts-clone shares suffixes, so the trie is a small DAG), and
    look rules up on demand by walking the units byte by byte.
    """

    def __init__(self, blob: bytes) -> None:
        self.units, self.strings = split_blob(blob)
        self._targets: dict[int, str] = {}
        #: (character, node) of each one-character key whose target is " ".
        self._to_space: list[tuple[str, int]] = []
        self.trigger_chars, self.inner_chars = self._find_triggers(_index_children(self.units))

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
        found_rule = False
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
                        if len(data) < 4:
                            stack.append((child ^ _offset(unit), data))
                        continue
                    if unit & 0x100:  # a leaf: a key ends here
                        found_rule = True
                        if not start:  # from the root, only whole keys count
                            first[data] = child
                    if start:
                        inner_bytes.add(data)
                    if child not in seen:  # children are units: the walk ends
                        seen.add(child)
                        pending.append(child)
        if not found_rule:
            raise NormalizerError("precompiled_charsmap is invalid.")
        try:
            inner = {data.decode("utf-8") for data in inner_bytes}
            firsts = [(data.decode("utf-8"), node) for data, node in first.items()]
        except UnicodeDecodeError:
            raise NormalizerError("precompiled_charsmap is invalid.") from None
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
        """(target, characters consumed) of the longest rule at ``pos``."""
        end = pos
        limit = min(len(text), pos + 32)
        while end < limit and not "\ud800" <= text[end] <= "\udfff":
            end += 1
        data = text[pos:end].encode("utf-8")
        units = self.units
        count = len(units)
        node = 0
        best = None
        for i, byte in enumerate(data):
            node ^= _offset(units[node]) ^ byte
            if node >= count or (units[node] & _LEAF_LABEL_MASK) != byte:
                break
            unit = units[node]
            if unit & 0x100:
                best = (node ^ _offset(unit), i + 1)
        if best is None:
            return None
        leaf, length = best
        target = self._targets.get(leaf)
        if target is None:
            target = self._targets[leaf] = _target(units, leaf, self.strings).decode("utf-8")
        return target, len(data[:length].decode("utf-8"))


class DictRules:
    """The same interface over a plain ``{source: target}`` dict."""

    def __init__(self, rules: dict[str, str]) -> None:
        self.rules = rules
        self.max_length = max(map(len, rules), default=0)
        triggers: set[str] = set()
        for key in rules:
            triggers.update(key if len(key) == 1 else key[1:])
        self.trigger_chars = frozenset(triggers)
        self.inner_chars = frozenset(char for key in rules for char in key[1:])

    def lone_space_chars(self) -> frozenset[str]:
        """See :meth:`CharsMap.lone_space_chars`."""
        if any(" " in key for key in self.rules):
            return frozenset()
        starts_longer = {key[0] for key in self.rules if len(key) > 1}
        return frozenset(key for key, target in self.rules.items()
                         if len(key) == 1 and target == " " and key not in starts_longer
                         and key not in self.inner_chars)

    def longest_match(self, text: str, pos: int) -> tuple[str, int] | None:
        rules = self.rules
        for length in range(min(self.max_length, len(text) - pos), 0, -1):
            target = rules.get(text[pos:pos + length])
            if target is not None:
                return target, length
        return None


def load_rules(blob: bytes) -> CharsMap | DictRules:
    """Rules for a Normalizer from a stored charsmap (empty: no rules)."""
    return CharsMap(blob) if blob else DictRules({})
