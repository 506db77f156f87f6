"""The package's structure: what the layout promises, checked.

* no import cycles among subtok's modules (module-level imports);
* no module imports another module's private (``_name``) names;
* data and stage modules never import the processor or the CLI (no
  uphill imports), and no library module imports the CLI, even inside a
  function;
* encoding, from ``import subtok`` to a whole ``subtok encode`` run,
  loads no training module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "subtok"
#: Packages below the processor and the CLI: they never import those.
LOWER = ("subtok.formats", "subtok.normalizers", "subtok.pretokenizers", "subtok.models",
         "subtok.postprocessors", "subtok.decoders", "subtok.training", "subtok.vocab",
         "subtok.errors", "subtok.symbols", "subtok.float32", "subtok.flags", "subtok.atomic",
         "subtok.parallel", "subtok.regularization")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if "_proto" not in p.parts}


def top_level_imports(path: Path, known: set[str]) -> list[tuple[str, str | None]]:
    """(module, imported name or None) of each import run at import time
    (not inside functions, nor under ``if TYPE_CHECKING``)."""
    found = []
    tree = ast.parse(path.read_text(), str(path))
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) else []:
            if isinstance(sub, ast.Import):
                found.extend((alias.name, None) for alias in sub.names)
            elif isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
                for alias in sub.names:
                    child = "%s.%s" % (sub.module, alias.name)
                    found.append((child, None) if child in known else (sub.module, alias.name))
    return [(m, n) for m, n in found if m == "subtok" or m.startswith("subtok.")]


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: {m for m, _ in top_level_imports(path, known) if m in known and m != name}
            for name, path in mods.items()}


def test_no_import_cycles():
    graph = import_graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    # A package's __init__ re-exporting from its own submodules is not a
    # cycle: the submodule importing the package runs the __init__ first.
    real = [c for c in cycles if not all(a.startswith(b + ".") or b.startswith(a + ".")
                                          for a, b in zip(c, c[1:]))]
    assert real == []


def test_no_private_names_imported_across_modules():
    mods = modules()
    known = set(mods)
    offenders = [(name, module, imported)
                 for name, path in mods.items()
                 for module, imported in top_level_imports(path, known)
                 if imported is not None and imported.startswith("_") and module != name
                 and imported != "__version__"]
    assert offenders == []


def test_lower_layers_never_import_the_processor_or_the_cli():
    graph = import_graph()
    uphill = [(name, target) for name, targets in graph.items()
              if name.startswith(LOWER) for target in targets
              if target == "subtok.processor" or target.startswith("subtok.cli")]
    assert uphill == []


def test_only_the_cli_imports_the_cli():
    """The library (``subtok.dask`` included, whose imports are inside its
    functions) never reaches into ``subtok.cli``; only ``python -m subtok``
    starts it."""
    reaching = []
    for name, path in modules().items():
        if name.startswith("subtok.cli") or name == "subtok.__main__":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
            else:
                continue
            reaching += [(name, t) for t in targets if t == "subtok.cli" or t.startswith("subtok.cli.")]
    assert reaching == []


TRAINING = "[m for m in sys.modules if m.startswith('subtok.training') or m.endswith('.trainer')]"


def test_import_subtok_loads_no_training_code():
    code = "import sys, subtok; print(%s)" % TRAINING
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_subtok_tokenizer_is_the_tokenizer_json_class_imported_on_first_use():
    """``from subtok import Tokenizer`` gives the tokenizer.json class;
    ``import subtok`` alone does not import it (nor its pipeline)."""
    code = ("import sys, subtok\n"
            "before = sorted(m for m in sys.modules if m.startswith('subtok.'))\n"
            "from subtok import Tokenizer\n"
            "import subtok.tokenizer\n"
            "print(Tokenizer is subtok.tokenizer.Tokenizer is subtok.Tokenizer, "
            "'Tokenizer' in subtok.__all__, 'subtok.tokenizer' in before, "
            "any(m.endswith('.hf') for m in before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "False", "False"]


def tiny_model_and_text(tmp_path: Path) -> tuple[Path, Path]:
    """A three-piece model and two lines for it to encode."""
    from tiny_models import META, N, S, make
    model = tmp_path / "m.model"
    model.write_bytes(make(META + [(S, -1.0, N), ("a", -2.0, N), ("b", -2.0, N)]))
    text = tmp_path / "in.txt"
    text.write_text("a b ab\nba\n")
    return model, text


@pytest.mark.parametrize("output_format", ["id", "sample_piece"])
def test_an_encode_through_the_cli_loads_no_training_code(tmp_path, output_format):
    """A whole ``subtok encode`` (flags, model, the worker-ready line
    encoder), run in a fresh interpreter."""
    model, text = tiny_model_and_text(tmp_path)
    code = ("import sys\nfrom subtok.cli.app import main\n"
            "main(['encode', '--model', sys.argv[1], '--output_format', sys.argv[2], "
            "'--output', sys.argv[3], sys.argv[4]])\n"
            "print(%s)" % TRAINING)
    out = subprocess.run([sys.executable, "-c", code, str(model), output_format,
                          str(tmp_path / "out.txt"), str(text)],
                         capture_output=True, text=True, check=True)
    assert (tmp_path / "out.txt").read_text().count("\n") == 2
    assert out.stdout.strip() == "[]"


DASK = "[m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]"


def test_the_base_install_never_imports_dask(tmp_path):
    """``import subtok``, a ``subtok count`` and a ``subtok encode`` without
    --scheduler load neither dask nor distributed (the optional extra
    subtok[dask])."""
    model, text = tiny_model_and_text(tmp_path)
    code = ("import sys\nimport subtok\nfrom subtok.cli.app import main\n"
            "for args in (['count', '--input', sys.argv[1], '--output', sys.argv[2]],\n"
            "             ['encode', '--model', sys.argv[3], '--input', sys.argv[1],\n"
            "              '--output', sys.argv[4]]):\n"
            "    try:\n        main(args)\n"
            "    except SystemExit:\n        pass\n"
            "print(%s)" % DASK)
    out = subprocess.run([sys.executable, "-c", code, str(text), str(tmp_path / "c.tsv"),
                          str(model), str(tmp_path / "e.txt")],
                         capture_output=True, text=True, check=True)
    assert (tmp_path / "c.tsv").exists()
    assert (tmp_path / "e.txt").read_text().count("\n") == 2
    assert out.stdout.strip() == "[]"


#: What ``subtok train`` needs only once it forks, writes a model or shows a
#: progress bar: its start-up up to the first read of the corpus loads none
#: of these (docs/performance.md, "Start-up").
NOT_AT_TRAIN_START = ("multiprocessing", "pickle", "traceback", "hashlib", "tqdm", "regex",
                      "google.protobuf", "subtok.formats.sentencepiece", "subtok.models",
                      "subtok.atomic", "importlib.resources")


def test_train_start_up_loads_only_what_reading_the_corpus_needs(tmp_path):
    """A ``subtok train`` stopped as its corpus is opened for reading (the
    error of an empty corpus: nothing is read)."""
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code = ("import sys\n"
            "before = set(sys.modules)  # (this environment's site may load some)\n"
            "import subtok.training.reading as reading\n"
            "def stop(*_):\n"
            "    print(sorted(m for m in set(sys.modules) - before if m.startswith(%r)))\n"
            "    sys.exit(0)\n"
            "reading._open_input = stop\n"
            "from subtok.cli.app import main\n"
            "main(['train', '--input', sys.argv[1], '--model_prefix', sys.argv[2],\n"
            "      '--model_type', 'bpe', '--minloglevel', '2'])\n" % (NOT_AT_TRAIN_START,))
    out = subprocess.run([sys.executable, "-c", code, str(empty), str(tmp_path / "m")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
