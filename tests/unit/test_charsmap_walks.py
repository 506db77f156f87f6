"""The stored trigger walks of the built-in rule tables
(subtok/normalizers/rules/walks.json) are what walking each table now
gives; a blob that is not a built-in table is walked at load. The
built-in tables pass the double-array check that loading them skips."""

from __future__ import annotations

import pytest

import struct

from subtok.normalizers.charsmap import CharsMap, builtin_table, check_double_array, known_walk, split_blob
from subtok.normalizers.charsmap_builder import BUILTIN_RULE_NAMES, builtin_charsmap

TABLES = [name for name in BUILTIN_RULE_NAMES if builtin_charsmap(name)]


@pytest.mark.parametrize("name", TABLES)
def test_stored_walk_equals_a_fresh_walk(name):
    """Out of date after a table changed: run scripts/build_charsmap_walks.py."""
    blob = builtin_charsmap(name)
    assert known_walk(blob) is not None, "no stored walk for %s" % name
    fresh = CharsMap(blob, stored_walk=False)
    stored = CharsMap(blob)
    assert stored.walk_record() == fresh.walk_record()
    assert stored.lone_space_chars() == fresh.lone_space_chars()
    text = "".join(sorted(fresh.trigger_chars)) + " ｱｲｳ ①② Ａｂｃ"
    assert [stored.longest_match(text, pos) for pos in range(len(text))] == \
        [fresh.longest_match(text, pos) for pos in range(len(text))]


def test_other_blobs_are_walked():
    """A table that differs from the built-in one by a single rule has no
    stored walk."""
    from subtok.normalizers.charsmap_builder import compile_charsmap, decompile_charsmap
    rules = decompile_charsmap(builtin_charsmap("nmt_nfkc"))
    rules["x"] = "y"
    blob = compile_charsmap(rules)
    assert known_walk(blob) is None
    assert "x" in CharsMap(blob).trigger_chars


@pytest.mark.parametrize("name", TABLES)
def test_builtin_tables_pass_the_check_their_load_skips(name):
    """split_blob does not check a built-in table's double array (darts-clone's
    validate); this test is that check, for every shipped table."""
    blob = builtin_charsmap(name)
    assert builtin_table(blob) == name
    (trie_size,) = struct.unpack_from("<I", blob, 0)
    units, strings = split_blob(blob)
    assert check_double_array(blob[4:4 + trie_size], units, len(strings))


def test_a_blob_of_a_builtin_size_with_other_bytes_is_no_builtin_table():
    """Told apart by content, not by size: one byte changed in the string
    block (still NUL-terminated) makes a blob of the same size that is
    checked and walked at load."""
    blob = bytearray(builtin_charsmap("nmt_nfkc"))
    blob[-2] = 0x41 if blob[-2] != 0x41 else 0x42
    assert builtin_table(bytes(blob)) is None
    assert known_walk(bytes(blob)) is None
