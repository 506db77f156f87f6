"""What the ``tokenizer.json`` registries of the stage packages share: find
a component's class from its ``type`` and build it, with errors that name
the file and the component's place in it.

Each stage package has a ``hf`` module holding its table (JSON ``type`` ->
class) and a ``Sequence`` of its own; every class has
``from_json(spec, where)``. An unknown ``type`` is an error naming it,
never a silent fallback.
"""

from __future__ import annotations

from typing import Any

from subtok.errors import ModelFileError


def build(spec: Any, table: dict[str, type], stage: str, where: str) -> Any:
    """The component ``spec`` describes; ``where`` names the place in the
    file ("tokenizer.json: normalizer.normalizers[0]")."""
    if not isinstance(spec, dict):
        raise ModelFileError("%s: a %s must be a JSON object, not %s."
                             % (where, stage, type(spec).__name__))
    kind = spec.get("type")
    if not isinstance(kind, str):
        raise ModelFileError("%s: the %s has no \"type\"." % (where, stage))
    cls = table.get(kind)
    if cls is None:
        raise ModelFileError("%s: unknown %s type %r (known: %s)."
                             % (where, stage, kind, ", ".join(sorted(table))))
    return cls.from_json(spec, "%s (%s)" % (where, kind))


def build_list(spec: dict, key: str, table: dict[str, type], stage: str, where: str) -> list:
    """The components of a Sequence's list field ``key``; ``where`` is the
    Sequence's own place, as :func:`build` gave it ("...: normalizer
    (Sequence)")."""
    items = spec.get(key)
    if not isinstance(items, list):
        raise ModelFileError("%s: field %r must be a list." % (where, key))
    path = where.rsplit(" (", 1)[0]  # the place without the type
    return [build(item, table, stage, "%s.%s[%d]" % (path, key, i)) for i, item in enumerate(items)]
