"""Write subtok/normalizers/rules/walks.json: the trigger walk of each
built-in rule table (:meth:`subtok.normalizers.charsmap.CharsMap.walk_record`),
keyed by the SHA-256 of the table's blob, so that loading a built-in table
(``subtok train`` with a built-in rule name, or a model that carries one)
reads the walk instead of doing it.

Run after changing a table in rules/*.bin:

    python scripts/build_charsmap_walks.py

tests/unit/test_charsmap_walks.py fails while the file is out of date.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from subtok.normalizers import charsmap  # noqa: E402
from subtok.normalizers.charsmap_builder import BUILTIN_RULE_NAMES, builtin_charsmap  # noqa: E402


def fresh_walks() -> dict:
    """Every built-in table walked now (the stored walks not read)."""
    walks = {}
    for name in BUILTIN_RULE_NAMES:
        blob = builtin_charsmap(name)
        if blob:
            walks[hashlib.sha256(blob).hexdigest()] = dict(
                name=name, **charsmap.CharsMap(blob, stored_walk=False).walk_record())
    return walks


def main() -> None:
    path = ROOT / "subtok" / "normalizers" / "rules" / charsmap.WALKS_FILE
    path.write_text(json.dumps(fresh_walks(), ensure_ascii=False, sort_keys=True) + "\n",
                    encoding="utf-8")
    print("wrote", path)


if __name__ == "__main__":
    main()
