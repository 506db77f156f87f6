"""The stored trigger walks of the built-in rule tables
(subtok/normalizers/rules/walks.json) are what walking each table now
gives; a blob that is not a built-in table is walked at load."""

from __future__ import annotations

import pytest

from subtok.normalizers.charsmap import CharsMap, known_walk
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
