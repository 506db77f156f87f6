"""Write subtok/normalizers/rules/walks.json: the trigger walk of each
built-in rule table (:meth:`subtok.normalizers.charsmap.CharsMap.walk_record`)
and the size of its blob, keyed by the table's name, so that loading a
built-in table (``subtok train`` with a built-in rule name, or a model that
carries one, told by :func:`subtok.normalizers.charsmap.builtin_table`)
reads the walk instead of doing it.

Run after changing a table in rules/*.bin:

    python scripts/build_charsmap_walks.py

tests/unit/test_charsmap_walks.py fails while the file is out of date.
"""

from __future__ import annotations

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
            walks[name] = dict(size=len(blob),
                               **charsmap.CharsMap(blob, stored_walk=False).walk_record())
    return walks


def main() -> None:
    path = Path(charsmap.RULES_DIR) / charsmap.WALKS_FILE
    path.write_text(json.dumps(fresh_walks(), ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    print("wrote", path)


if __name__ == "__main__":
    main()
