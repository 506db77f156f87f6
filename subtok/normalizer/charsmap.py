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

import struct

from ..errors import NormalizerError

_LEAF_LABEL_MASK = 0x800000FF


def _offset(unit: int) -> int:
    """Offset to the children of a unit (bit 9 selects an extra ``<< 8``)."""
    return (unit >> 10) << ((unit & 0x200) >> 6)


def _has_leaf(unit: int) -> bool:
    return bool((unit >> 8) & 1)


def split_blob(blob: bytes) -> tuple[tuple[int, ...], bytes]:
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
    units = struct.unpack_from("<%dI" % (trie_size // 4), blob, 4)
    return units, blob[4 + trie_size:]


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
    children: dict[int, list[tuple[int, int]]] = {}
    for index, unit in enumerate(units):
        label = unit & _LEAF_LABEL_MASK
        if 0 < label < 256:
            children.setdefault(index ^ label, []).append((label, index))
    raw: dict[bytes, bytes] = {}
    targets: dict[int, bytes] = {}  # leaf unit -> target (targets repeat)
    stack = [(0, b"")]
    pop, push = stack.pop, stack.append
    no_children: tuple = ()
    while stack:
        node, prefix = pop()
        unit = units[node]
        base = node ^ ((unit >> 10) << ((unit & 0x200) >> 6))
        for label, child in children.get(base, no_children):
            key = prefix + _BYTES[label]
            unit = units[child]
            if unit & 0x100:  # has a leaf: this key is a rule
                leaf = child ^ ((unit >> 10) << ((unit & 0x200) >> 6))
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
